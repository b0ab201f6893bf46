package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
)

// TestStreamTailMatchesFile drives a store through random bus writes — messages that expire
// while the clock moves, resends (replayed, or storing anew over an expired original), publishes
// and task events taking seqs of the same streams, expiry sweeps with a `now` ahead of the
// store's clock — and after every write compares ReadStream (answered from the tail when it can)
// with the same read from the file, for every stream, after its last seven seqs and a few
// others, page sizes 1, 3 and 500.
func TestStreamTailMatchesFile(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			st, err := Open(filepath.Join(t.TempDir(), DefaultFileName), Options{Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			rng := rand.New(rand.NewPCG(seed, 7))
			streams := []store.StreamKey{
				store.OrgStream("org_a", "org:org_a/vault:v1/general"),
				store.OrgStream("org_a", "org:org_a/vault:v1/ops"),
				store.SwarmStream("swarm-1"),
			}
			var gids []string // stored messages (for proposals)
			served := 0       // reads the tail answered
			for step := range 200 {
				k := streams[rng.IntN(len(streams))]
				t0 := clock()
				switch op := rng.IntN(20); {
				case op < 12: // a message; sometimes a resend of an earlier client_msg_id
					cmid := fmt.Sprintf("m%d", step)
					if step > 0 && rng.IntN(4) == 0 {
						cmid = fmt.Sprintf("m%d", rng.IntN(step))
					}
					var expires time.Time
					if rng.IntN(3) > 0 {
						expires = t0.Add(time.Duration(1+rng.IntN(4)) * time.Second)
					}
					m, _, err := st.AppendMessage(ctx, store.MessageWrite{Stream: k, SenderOrg: "org_a", SenderInstance: "i1",
						ClientMsgID: cmid, Type: "finding", ServerTime: t0, ExpiresAt: expires, Data: fmt.Appendf(nil, `{"step":%d}`, step)})
					if err != nil {
						t.Fatal(err)
					}
					gids = append(gids, m.GID)
				case op < 14 && k.Network == store.NetworkOrg:
					_, _, err := st.AppendPublish(ctx, store.PublishWrite{Stream: k, SenderOrg: "org_a", SenderInstance: "i1",
						ClientMsgID: fmt.Sprintf("p%d", step), ServerTime: t0, ExpiresAt: t0.Add(time.Duration(rng.IntN(3)) * time.Second),
						Data: fmt.Appendf(nil, `{"publish":%d}`, step)})
					if err != nil {
						t.Fatal(err)
					}
				case op < 16 && len(gids) > 0 && k.Network == store.NetworkOrg:
					_, _, err := st.ProposeTask(ctx, store.TaskProposalWrite{Stream: k, Vault: "v1", QuestionGID: gids[rng.IntN(len(gids))],
						CreatedAt: t0, Data: fmt.Appendf(nil, `{"task":%d}`, step)})
					if err != nil && !isRefusal(err) {
						t.Fatal(err)
					}
				case op < 17:
					if _, err := st.ExpireMessages(ctx, t0.Add(time.Duration(rng.IntN(3))*time.Second), 1+rng.IntN(4)); err != nil {
						t.Fatal(err)
					}
				default:
					mu.Lock()
					now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
					mu.Unlock()
				}
				for _, k := range streams {
					last, err := st.StreamLastSeq(ctx, k)
					if err != nil {
						t.Fatal(err)
					}
					// The cursors a follower reads after (the last few seqs), and a few others.
					cursors := []int64{0, rng.Int64N(last + 1), rng.Int64N(last + 1)}
					for after := max(last-6, 0); after <= last; after++ {
						cursors = append(cursors, after)
					}
					for _, after := range cursors {
						for _, limit := range []int{1, 3, 500} {
							q := store.ReadQuery{After: after, Limit: limit, MaxBytes: []int{0, 1, 40}[rng.IntN(3)]}
							got, err := st.ReadStream(ctx, k, q)
							if err != nil {
								t.Fatal(err)
							}
							if _, ok := st.tail.read(k, q, clock().UnixNano()); ok {
								served++
							}
							want, err := st.readStreamFile(ctx, k, q)
							if err != nil {
								t.Fatal(err)
							}
							if len(got) == 0 && len(want) == 0 {
								continue
							}
							if !reflect.DeepEqual(got, want) {
								t.Fatalf("step %d, %s after %d limit %d:\ntail %s\nfile %s", step, k.Name, after, limit, entries(got), entries(want))
							}
						}
					}
				}
			}
			if served == 0 {
				t.Fatal("the tail answered no read")
			}
			t.Logf("the tail answered %d reads", served)
		})
	}
}

func entries(es []store.StreamEntry) string {
	s := ""
	for _, e := range es {
		switch {
		case e.Message != nil:
			s += fmt.Sprintf("[%d msg %s %s]", e.Seq, e.Message.ClientMsgID, e.Message.ExpiresAt)
		case e.Publish != nil:
			s += fmt.Sprintf("[%d pub]", e.Seq)
		case e.Task != nil:
			s += fmt.Sprintf("[%d task]", e.Seq)
		}
	}
	return s
}

// TestStreamTailBudget: the tail keeps at most tailEntries messages of a stream and its byte
// budget in all, dropping the streams written least recently; a stream whose older messages
// were trimmed sends reads before them to the file.
func TestStreamTailBudget(t *testing.T) {
	const budget = 64 << 10
	tail := newStreamTail(budget)
	data := make([]byte, 1000)
	k := func(i int) store.StreamKey { return store.OrgStream("o", fmt.Sprint("org:o/vault:v/c", i)) }
	for i := range 200 {
		for seq := int64(1); seq <= 10; seq++ {
			tail.add(store.StoredMessage{MessageWrite: store.MessageWrite{Stream: k(i), Data: data}, Seq: seq})
		}
		if b, _ := tail.size(); b > budget {
			t.Fatalf("after stream %d: %d bytes, budget %d", i, b, budget)
		}
	}
	if _, ok := tail.read(k(0), store.ReadQuery{Limit: 10}, 0); ok {
		t.Error("the least recently written stream is still cached")
	}
	if got, ok := tail.read(k(199), store.ReadQuery{Limit: 10}, 0); !ok || len(got) != 10 {
		t.Errorf("the last stream: %d entries, cached %v", len(got), ok)
	}
	long := newStreamTail(1 << 40)
	for seq := int64(1); seq <= tailEntries+1; seq++ {
		long.add(store.StoredMessage{MessageWrite: store.MessageWrite{Stream: k(0)}, Seq: seq})
	}
	if _, ok := long.read(k(0), store.ReadQuery{After: 0, Limit: 1}, 0); ok {
		t.Error("a read before the trimmed messages was answered from the tail")
	}
	got, ok := long.read(k(0), store.ReadQuery{After: tailEntries, Limit: 5}, 0)
	if !ok || len(got) != 1 || got[0].Seq != tailEntries+1 {
		t.Errorf("the newest message: %v %v", got, ok)
	}
	// A gap (a seq the tail never saw) restarts the stream after it.
	long.add(store.StoredMessage{MessageWrite: store.MessageWrite{Stream: k(0)}, Seq: tailEntries + 3})
	if _, ok := long.read(k(0), store.ReadQuery{After: tailEntries, Limit: 5}, 0); ok {
		t.Error("a read across a gap was answered from the tail")
	}
}
