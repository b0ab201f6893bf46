package jetstream_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// benchEvent is the event of sqlite's BenchmarkIngest: a text delta of about 400 bytes.
func benchEvent(run string, seq int64) store.Event {
	id := fmt.Sprintf("%s:%d", run, seq)
	return store.Event{
		LogicalSequence: seq,
		EventID:         id,
		Type:            "message.part.delta",
		Data: fmt.Appendf(nil, `{"type":"message.part.delta","messageId":"msg-1","part":{"type":"text","text":"The quick brown fox jumps over the lazy dog, again and again."},"protocolVersion":1,"eventId":%q,"runId":%q,"sessionId":"session-1","phaseId":"8707a01d-6329-483f-87df-1bd4a477b564","logicalSequence":%d,"sequence":%d,"timestamp":"2025-01-01T00:00:00.000Z"}`,
			id, run, seq, seq),
	}
}

var benchSnapshot = []byte(`{"status":"running","pad":"` + strings.Repeat("x", 1000) + `"}`)

// BenchmarkIngest measures durable ingest through AppendRun on SQLite (group commit, WAL,
// synchronous=FULL) and on the embedded single-node JetStream (sync_interval always, atomic
// batches merged by group commit), and the raw baseline (rawIngest), back to back per
// configuration so that the shared machine's noise hits them alike: batches of 1, 100 and 1000 events with a 1 KiB checkpoint, 1 and 8 writers
// each on its own run. events/s = batches × batch size / elapsed; compare medians over -count.
func BenchmarkIngest(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		for _, writers := range []int{1, 8} {
			for _, kind := range []string{"sqlite", "jetstream", "raw"} {
				b.Run(fmt.Sprintf("batch=%d/writers=%d/%s", batch, writers, kind), func(b *testing.B) {
					if kind == "raw" {
						rawIngest(b, batch, writers)
						return
					}
					var s store.Store
					var err error
					if kind == "sqlite" {
						s, err = sqlite.Open(filepath.Join(b.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
					} else {
						s, err = jetstream.OpenEmbedded(b.TempDir(), jetstream.EmbeddedOptions{})
					}
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { s.Close() })
					ingest(b, s, batch, writers)
				})
			}
		}
	}
}

// rawIngest is the baseline of the jetstream store: the same messages AppendRun publishes
// (event chunks, the checkpoint, a head), published by plain atomic batches with no guard on
// the same embedded server and stream configuration, so that the store's own cost shows as a
// ratio.
func rawIngest(b *testing.B, batch, writers int) {
	ns, err := jetstream.StartServer(b.TempDir(), jetstream.EmbeddedOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := njs.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{
		Name: jetstream.RunsStream, Subjects: []string{"agentwire.runs.>", "agentwire.runsnap.>", "agentwire.runhead.>"},
		Storage: njs.FileStorage, AllowAtomicPublish: true, AllowRollup: true, Duplicates: 2 * time.Minute,
	}); err != nil {
		b.Fatal(err)
	}
	last := make([]int64, writers)
	evs := make([][]store.Event, writers)
	runs := make([]string, writers)
	for w := range writers {
		evs[w], runs[w] = make([]store.Event, batch), fmt.Sprintf("run-%d", w)
	}
	storetest.RunParallel(b, writers, batch, func(w int) error {
		run := runs[w]
		for i := range evs[w] {
			evs[w][i] = benchEvent(run, last[w]+1+int64(i))
		}
		msgs := jetstream.RunBatchMsgs("bench", run, evs[w], benchSnapshot, 1<<20-16<<10)
		if _, err := jetstreamext.PublishMsgBatch(ctx, js, msgs, jetstreamext.BatchFlowControl{AckFirst: false, AckTimeout: 10 * time.Second}); err != nil {
			return err
		}
		last[w] += int64(batch)
		return nil
	})
}

func ingest(b *testing.B, s store.Store, batch, writers int) {
	ctx := context.Background()
	last := make([]int64, writers)
	events := make([][]store.Event, writers)
	runs := make([]string, writers)
	for w := range writers {
		events[w], runs[w] = make([]store.Event, batch), fmt.Sprintf("run-%d", w)
	}
	storetest.RunParallel(b, writers, batch, func(w int) error {
		run := runs[w]
		evs := events[w]
		for i := range evs {
			evs[i] = benchEvent(run, last[w]+1+int64(i))
		}
		if _, err := s.AppendRun(ctx, "bench", run, store.AppendRequest{
			ExpectedLastLogicalSequence: last[w], Events: evs, Snapshot: benchSnapshot, Status: "running",
		}); err != nil {
			return err
		}
		last[w] += int64(batch)
		return nil
	})
}
