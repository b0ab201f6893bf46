package jetstream_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// twoStores starts one single-node server on a loopback port and opens two store instances
// over two connections to it: two relays sharing one JetStream.
func twoStores(t *testing.T, o jetstream.Options) (*jetstream.Store, *jetstream.Store) {
	t.Helper()
	ns, err := jetstream.StartServer(t.TempDir(), jetstream.EmbeddedOptions{Listen: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	o.OwnEnvoyStream = true
	var out [2]*jetstream.Store
	for i := range out {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		s, err := jetstream.Open(nc, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(); nc.Close() })
		out[i] = s
	}
	return out[0], out[1]
}

// TestTwoInstancesOneRun: writers on two store instances race on one run with optimistic
// concurrency; every acknowledged event is stored once, gap-free, at the sequence it was
// acknowledged with, and both instances read the same run.
func TestTwoInstancesOneRun(t *testing.T) {
	a, b := twoStores(t, jetstream.Options{})
	ctx := context.Background()
	if _, err := a.AppendRun(ctx, "o", "r", store.AppendRequest{Events: storetest.Batch("r", 1), Snapshot: storetest.Snapshot(1, 1), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	const perWriter = 8
	var mu sync.Mutex
	acked := map[string]int64{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		s := []*jetstream.Store{a, b}[w%2]
		wg.Go(func() {
			for i := range perWriter {
				id := fmt.Sprintf("w%d-%d", w, i)
				for attempt := 0; ; attempt++ {
					if attempt > 10000 {
						errs <- fmt.Errorf("%s: no progress", id)
						return
					}
					_, info, err := s.GetRun(ctx, "o", "r")
					if err != nil {
						errs <- err
						return
					}
					next := info.LastLogicalSequence + 1
					// Every other batch carries a checkpoint, so guards also meet checkpoint heads.
					var snap []byte
					if next%2 == 0 {
						snap = storetest.Snapshot(next, info.EventCount+1)
					}
					_, err = s.AppendRun(ctx, "o", "r", store.AppendRequest{
						ExpectedLastLogicalSequence: info.LastLogicalSequence,
						Events:                      []store.Event{storetest.Event("r", next, id)},
						Snapshot:                    snap, Status: "running",
					})
					if errors.Is(err, store.ErrConflict) {
						continue
					}
					if err != nil {
						errs <- fmt.Errorf("%s: %w", id, err)
						return
					}
					mu.Lock()
					acked[id] = next
					mu.Unlock()
					break
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, s := range []*jetstream.Store{a, b} {
		got, err := s.ReadEvents(ctx, "o", "r", 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1+8*perWriter {
			t.Fatalf("stored %d events, want %d", len(got), 1+8*perWriter)
		}
		for i, e := range got {
			if e.LogicalSequence != int64(i+1) {
				t.Fatalf("event %d has sequence %d", i, e.LogicalSequence)
			}
			if i > 0 && acked[e.EventID] != e.LogicalSequence {
				t.Fatalf("%s stored at %d, acknowledged at %d", e.EventID, e.LogicalSequence, acked[e.EventID])
			}
		}
	}
}

// TestTwoInstancesOneChannel: senders on two instances share one channel and resend each
// other's client_msg_ids; every send is stored once, the replays answer the original from
// either instance, and the channel's seq has no gap.
func TestTwoInstancesOneChannel(t *testing.T) {
	a, b := twoStores(t, jetstream.Options{})
	ctx := context.Background()
	k := store.OrgStream("o", "general")
	var mu sync.Mutex
	answers := map[string]store.StoredMessage{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := range 10 {
				id := fmt.Sprintf("c%d-%d", w/2, i) // two writers, one on each instance, share ids
				s := []*jetstream.Store{a, b}[w%2]
				m, _, err := s.AppendMessage(ctx, storetest.Message(k, "o", "inst", id))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if prev, ok := answers[id]; ok && (prev.GID != m.GID || prev.Seq != m.Seq) {
					errs <- fmt.Errorf("%s answered %s/%d and %s/%d", id, prev.GID, prev.Seq, m.GID, m.Seq)
				}
				answers[id] = m
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, s := range []*jetstream.Store{a, b} {
		got, err := s.ReadMessages(ctx, k, store.ReadQuery{Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(answers) {
			t.Fatalf("stored %d messages for %d client_msg_ids", len(got), len(answers))
		}
		for i, m := range got {
			if m.Seq != int64(i+1) || answers[m.ClientMsgID].GID != m.GID {
				t.Fatalf("message %d: seq %d gid %s, answered %+v", i, m.Seq, m.GID, answers[m.ClientMsgID])
			}
		}
	}
}

// TestWakeUpsAcrossInstances: a commit through one instance wakes the subscribers of the other
// on each lane.
func TestWakeUpsAcrossInstances(t *testing.T) {
	a, b := twoStores(t, jetstream.Options{})
	ctx := context.Background()
	k := store.OrgStream("o", "general")
	runs, c1 := b.Subscribe("o", "r")
	defer c1()
	bus, c2 := b.SubscribeStream(k)
	defer c2()
	envs, c3 := b.SubscribeEnvelopes("o")
	defer c3()
	if _, err := a.AppendRun(ctx, "o", "r", store.AppendRequest{Events: storetest.Batch("r", 1), Snapshot: storetest.Snapshot(1, 1), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.AppendMessage(ctx, storetest.Message(k, "o", "i", "c1")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.AppendEnvelope(ctx, "o", storetest.Envelope("notifications.agent.s", "", storetest.T0, ""), storetest.Window); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]<-chan struct{}{"run": runs, "bus stream": bus, "envelopes": envs} {
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no wake-up from the other instance", name)
		}
	}
	if evs, err := b.ReadEvents(ctx, "o", "r", 0, 10); err != nil || len(evs) != 1 {
		t.Fatalf("read after the wake-up: %d events, %v", len(evs), err)
	}
	if n, err := b.LastEnvelopeSeq(ctx, "o"); err != nil || n != 1 {
		t.Fatalf("LastEnvelopeSeq after the wake-up: %d, %v", n, err)
	}
}

// TestChunking: with 1 KiB chunks, events larger than a chunk span several, small ones share
// one, and every cursor reads the same events back on the writing and on another instance.
func TestChunking(t *testing.T) {
	a, b := twoStores(t, jetstream.Options{ChunkBytes: 1024})
	ctx := context.Background()
	var all []store.Event
	var last int64
	for batch, sizes := range [][]int{{10, 20, 5000, 30}, {3000}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 900}, {1024, 1023, 2049}} {
		var evs []store.Event
		for i, n := range sizes {
			e := storetest.Event("r", last+1, fmt.Sprintf("b%d-%d", batch, i))
			e.Data = bytes.Repeat([]byte{byte('a' + i%26)}, n)
			evs = append(evs, e)
			last++
		}
		var snap []byte
		if batch%2 == 0 {
			snap = bytes.Repeat([]byte("s"), 2500+batch) // a checkpoint of several chunks
		}
		if _, err := a.AppendRun(ctx, "o", "r", store.AppendRequest{ExpectedLastLogicalSequence: last - int64(len(evs)), Events: evs, Snapshot: snap, Status: "running"}); err != nil {
			t.Fatalf("batch %d: %v", batch, err)
		}
		all = append(all, evs...)
	}
	for _, s := range []*jetstream.Store{a, b} {
		for after := int64(0); after <= last; after++ {
			for _, limit := range []int{1, 3, 1000} {
				got, err := s.ReadEvents(ctx, "o", "r", after, limit)
				if err != nil {
					t.Fatal(err)
				}
				want := all[after:min(int(after)+limit, len(all))]
				if len(got) != len(want) {
					t.Fatalf("after %d limit %d: %d events, want %d", after, limit, len(got), len(want))
				}
				for i := range got {
					if got[i].LogicalSequence != want[i].LogicalSequence || got[i].EventID != want[i].EventID || !bytes.Equal(got[i].Data, want[i].Data) {
						t.Fatalf("after %d: event %d differs", after, i)
					}
				}
			}
		}
		snap, info, err := s.GetRun(ctx, "o", "r")
		if err != nil || info.SnapshotSequence != 56 || !bytes.Equal(snap, bytes.Repeat([]byte("s"), 2502)) {
			t.Fatalf("GetRun: %d bytes at %d, %v", len(snap), info.SnapshotSequence, err)
		}
	}
	// A duplicate event ID of a multi-chunk event is refused by an instance that never saw it.
	e := storetest.Event("r", last+1, "b0-2")
	if _, err := b.AppendRun(ctx, "o", "r", store.AppendRequest{ExpectedLastLogicalSequence: last, Events: []store.Event{e}, Status: "running"}); !errors.Is(err, store.ErrDuplicateEventID) {
		t.Fatalf("duplicate ID of a split event: %v", err)
	}
}

// TestLongIDs: ids longer than 512 bytes are invalid arguments (relay.md §5.1.1).
func TestLongIDs(t *testing.T) {
	a, _ := twoStores(t, jetstream.Options{})
	ctx := context.Background()
	long := string(bytes.Repeat([]byte("x"), jetstream.MaxIDBytes+1))
	ok := string(bytes.Repeat([]byte("x"), jetstream.MaxIDBytes))
	if _, err := a.AppendRun(ctx, "o", long, store.AppendRequest{Events: storetest.Batch("r", 1), Snapshot: storetest.Snapshot(1, 1), Status: "running"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("long run id: %v", err)
	}
	if _, err := a.AppendRun(ctx, ok, ok, store.AppendRequest{Events: storetest.Batch("r", 1), Snapshot: storetest.Snapshot(1, 1), Status: "running"}); err != nil {
		t.Fatalf("512-byte ids: %v", err)
	}
	if _, _, err := a.AppendMessage(ctx, storetest.Message(store.OrgStream("o", long), "o", "i", "c")); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("long channel: %v", err)
	}
	if _, _, err := a.AppendEnvelope(ctx, long, storetest.Envelope("notifications.agent.s", "", storetest.T0, ""), storetest.Window); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("long org: %v", err)
	}
}
