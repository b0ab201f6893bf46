package jetstream_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// TestCacheBudgets writes well past the budgets of every in-memory structure (small budgets:
// 128 KiB of runs, 96 KiB of bus entries, 3 orgs of envelopes) on one store instance, then reads
// everything back through it and through a second instance with an empty cache: the
// accounting never exceeds a budget, entries were evicted, and every read, lookup and refusal is
// still exact (a run too large for its quarter of the budget checks its event IDs by scanning
// the stream; a run whose index was evicted is found by binary search).
func TestCacheBudgets(t *testing.T) {
	ns, err := jetstream.StartServer(t.TempDir(), jetstream.EmbeddedOptions{Listen: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	o := jetstream.Options{RunCacheBytes: 128 << 10, BusCacheBytes: 96 << 10, EnvelopeOrgs: 3, OwnEnvoyStream: true}
	open := func() *jetstream.Store {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		s, err := jetstream.Open(nc, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(); nc.Close() })
		return s
	}
	a, b := open(), open()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))

	// Runs: 40 runs of 200 events in batches of 40, and one of 6,000 events in batches of
	// 200, whose fingerprints alone (8,192 slots) exceed a quarter of the budget. Sequences go
	// by twos, so that a refused sequence can be a duplicate or out of order.
	runs := map[string][]store.Event{}
	write := func(run string, n, batch int) {
		var last int64
		for i := 0; i < n; i += batch {
			var evs []store.Event
			for j := range batch {
				evs = append(evs, storetest.Event(run, int64(2*(i+j+1)), fmt.Sprintf("%s-e%d", run, i+j)))
			}
			if _, err := a.AppendRun(ctx, "o", run, store.AppendRequest{
				ExpectedLastLogicalSequence: last, Events: evs, Snapshot: storetest.Snapshot(evs[len(evs)-1].LogicalSequence, int64(i+batch)), Status: "running",
			}); err != nil {
				t.Fatalf("%s at %d: %v", run, i, err)
			}
			last = evs[len(evs)-1].LogicalSequence
			runs[run] = append(runs[run], evs...)
		}
	}
	write("big", 6000, 200)
	for r := range 40 {
		write(fmt.Sprintf("run-%02d", r), 200, 40)
	}
	cs := a.CacheStats()
	if cs.RunPeak > cs.RunLimit || cs.Runs >= 41 {
		t.Fatalf("run cache after the writes: %+v (want the peak within the limit and evictions)", cs)
	}
	checkRuns := func(s *jetstream.Store) {
		t.Helper()
		for run, want := range runs {
			for range 3 {
				i := rng.IntN(len(want))
				after := want[i].LogicalSequence - int64(rng.IntN(2)) // on an event, or between two
				got, err := s.ReadEvents(ctx, "o", run, after, 17)
				if err != nil {
					t.Fatal(err)
				}
				j := i
				if want[i].LogicalSequence <= after {
					j++
				}
				exp := want[j:min(j+17, len(want))]
				if len(got) != len(exp) {
					t.Fatalf("%s after %d: %d events, want %d", run, after, len(got), len(exp))
				}
				for k := range got {
					if got[k].LogicalSequence != exp[k].LogicalSequence || got[k].EventID != exp[k].EventID || !bytes.Equal(got[k].Data, exp[k].Data) {
						t.Fatalf("%s after %d: event %d is %d/%s, want %d/%s", run, after, k, got[k].LogicalSequence, got[k].EventID, exp[k].LogicalSequence, exp[k].EventID)
					}
				}
			}
		}
	}
	checkRuns(a)
	checkRuns(b)
	// Refusals stay exact on runs whose sets were evicted or never fitted.
	for _, s := range []*jetstream.Store{a, b} {
		for _, run := range []string{"big", "run-00", "run-39"} {
			evs := runs[run]
			last := evs[len(evs)-1].LogicalSequence
			for _, c := range []struct {
				e    store.Event
				want error
			}{
				{storetest.Event(run, last+2, evs[3].EventID), store.ErrDuplicateEventID},
				{storetest.Event(run, evs[5].LogicalSequence, "fresh"), store.ErrDuplicateSequence},
				{storetest.Event(run, evs[5].LogicalSequence+1, "fresh"), store.ErrOutOfOrder},
			} {
				_, err := s.AppendRun(ctx, "o", run, store.AppendRequest{ExpectedLastLogicalSequence: last, Events: []store.Event{c.e}, Status: "running"})
				var ee *store.EventError
				if !errors.As(err, &ee) || !errors.Is(ee.Reason, c.want) {
					t.Fatalf("%s: appending %d/%s: %v, want %v", run, c.e.LogicalSequence, c.e.EventID, err, c.want)
				}
			}
		}
		if cs := s.CacheStats(); cs.RunPeak > cs.RunLimit {
			t.Fatalf("run cache: %+v", cs)
		}
	}

	// Bus: 30 channels of 40 messages (about 600 KiB of entries), written concurrently.
	type sent struct {
		k   store.StreamKey
		msg []store.StoredMessage
	}
	chans := make([]sent, 30)
	var wg sync.WaitGroup
	errs := make(chan error, len(chans))
	for c := range chans {
		k := store.OrgStream("o", fmt.Sprintf("chan-%02d", c))
		chans[c].k = k
		wg.Go(func() {
			for i := range 40 {
				w := storetest.Message(k, "o", "inst", fmt.Sprintf("c%d-%d", c, i))
				w.Data = append(w.Data, bytes.Repeat([]byte(" "), 300)...)
				m, replayed, err := a.AppendMessage(ctx, w)
				if err != nil || replayed {
					errs <- fmt.Errorf("%s: %v (replayed %v)", w.ClientMsgID, err, replayed)
					return
				}
				chans[c].msg = append(chans[c].msg, m)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if cs := a.CacheStats(); cs.BusPeak > cs.BusLimit || cs.BusPeak < cs.BusLimit/2 {
		t.Fatalf("bus cache after the writes: %+v", cs)
	}
	for _, s := range []*jetstream.Store{a, b} {
		for _, c := range chans {
			for range 3 {
				after := rng.IntN(len(c.msg) + 1)
				got, err := s.ReadMessages(ctx, c.k, store.ReadQuery{After: int64(after), Limit: 7})
				if err != nil {
					t.Fatal(err)
				}
				exp := c.msg[after:min(after+7, len(c.msg))]
				if len(got) != len(exp) {
					t.Fatalf("%s after %d: %d messages, want %d", c.k.Name, after, len(got), len(exp))
				}
				for i := range got {
					if got[i].GID != exp[i].GID || got[i].Seq != exp[i].Seq || !bytes.Equal(got[i].Data, exp[i].Data) {
						t.Fatalf("%s after %d: message %d is %s/%d, want %s/%d", c.k.Name, after, i, got[i].GID, got[i].Seq, exp[i].GID, exp[i].Seq)
					}
				}
			}
			m := c.msg[rng.IntN(len(c.msg))]
			if got, err := s.GetMessage(ctx, store.MessageScope{Org: "o"}, m.GID); err != nil || got.Seq != m.Seq {
				t.Fatalf("GetMessage(%s): %v %v", m.GID, got.Seq, err)
			}
			// A resend is answered with the original, cached or not.
			if got, replayed, err := s.AppendMessage(ctx, storetest.Message(c.k, "o", "inst", m.ClientMsgID)); err != nil || !replayed || got.GID != m.GID {
				t.Fatalf("resend of %s: %v %v %v", m.ClientMsgID, got.GID, replayed, err)
			}
			if n, err := s.StreamLastSeq(ctx, c.k); err != nil || n != 40 {
				t.Fatalf("StreamLastSeq(%s) = %d, %v", c.k.Name, n, err)
			}
		}
		if cs := s.CacheStats(); cs.BusPeak > cs.BusLimit {
			t.Fatalf("bus cache: %+v", cs)
		}
	}

	// Notifications: 8 orgs, 3 remembered.
	last := map[string]int64{}
	at := time.Now()
	for i := range 24 {
		org := fmt.Sprintf("org-%d", i%8)
		e, dup, err := a.AppendEnvelope(ctx, org, storetest.Envelope("notifications.agent.s1", fmt.Sprintf("id-%d", i), at, "n"), envelope.DeliveryDuplicateWindow)
		if err != nil || dup {
			t.Fatal(err, dup)
		}
		last[org] = e.Seq
	}
	for _, s := range []*jetstream.Store{a, b} {
		for org, want := range last {
			if got, err := s.LastEnvelopeSeq(ctx, org); err != nil || got != want {
				t.Fatalf("LastEnvelopeSeq(%s) = %d, %v; want %d", org, got, err, want)
			}
		}
		if cs := s.CacheStats(); cs.EnvelopeOrgs > cs.EnvelopeOrgsLimit {
			t.Fatalf("envelope orgs: %+v", cs)
		}
	}
}
