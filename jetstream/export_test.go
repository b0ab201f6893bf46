package jetstream

import (
	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/store"
)

// RunBatchMsgs is the message set one AppendRun of events with snapshot publishes (chunks,
// checkpoint chunks, head), for the raw baseline of BenchmarkIngest.
func RunBatchMsgs(org, run string, events []store.Event, snapshot []byte, chunk int) []*nats.Msg {
	msgs := chunkEvents(runSubject(org, run), events, chunk)
	if snapshot != nil {
		msgs = append(msgs, chunkSnapshot(snapSubject(org, run), snapshot, events[len(events)-1].LogicalSequence, chunk)...)
	}
	hm := nats.NewMsg(headSubject(org, run))
	hm.Data = []byte(`{"status":"running","created":1735689600000000000,"updated":1735689600000000000,"count":100,"last":100,"snapSeq":100,"snapN":1}`)
	return append(msgs, hm)
}
