package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

func pending(ch <-chan struct{}) bool {
	select {
	case _, ok := <-ch:
		return ok
	default:
		return false
	}
}

// TestLaneNotifyBeforeReturn: as for runs, a bus or notification write's subscribers hold a
// wake-up when the write returns; a write that changed nothing (a replay, a duplicate envelope,
// a repeated receipt) and another stream or org wake nobody.
func TestLaneNotifyBeforeReturn(t *testing.T) {
	s := openIn(t, t.TempDir())
	defer s.Close()
	ctx := context.Background()
	gen := store.OrgStream("o", storetest.ChannelGeneral)
	ch, c1 := s.SubscribeStream(gen)
	defer c1()
	ops, c2 := s.SubscribeStream(store.OrgStream("o", storetest.ChannelOps))
	defer c2()
	otherOrg, c3 := s.SubscribeStream(store.OrgStream("p", storetest.ChannelGeneral))
	defer c3()
	swarm, c4 := s.SubscribeStream(store.SwarmStream(storetest.ChannelGeneral))
	defer c4()
	envO, c5 := s.SubscribeEnvelopes("o")
	defer c5()
	envP, c6 := s.SubscribeEnvelopes("p")
	defer c6()
	if s.BusSubscribers() != 4 || s.EnvelopeSubscribers() != 2 || s.Subscribers() != 0 {
		t.Fatalf("subscribers: bus %d envelopes %d runs %d", s.BusSubscribers(), s.EnvelopeSubscribers(), s.Subscribers())
	}
	quiet := func(what string, chans ...<-chan struct{}) {
		t.Helper()
		for i, c := range chans {
			if pending(c) {
				t.Fatalf("%s: channel %d woken", what, i)
			}
		}
	}
	m, _, err := s.AppendMessage(ctx, storetest.Message(gen, "o", "i", "c1"))
	if err != nil {
		t.Fatal(err)
	}
	if !pending(ch) {
		t.Fatal("no wake-up pending when AppendMessage returned")
	}
	quiet("after a message", ops, otherOrg, swarm, envO, envP)
	if _, replayed, err := s.AppendMessage(ctx, storetest.Message(gen, "o", "i", "c1")); err != nil || !replayed {
		t.Fatal(replayed, err)
	}
	if _, err := s.AppendReceipt(ctx, gen, m.GID, "a", store.ReceiptRead, time.Now()); err != nil {
		t.Fatal(err)
	}
	quiet("after a replay and a receipt", ch, ops, otherOrg, swarm)
	if _, _, err := s.AppendEnvelope(ctx, "o", storetest.Envelope("notifications.agent.s", "k", storetest.T0, ""), storetest.Window); err != nil {
		t.Fatal(err)
	}
	if !pending(envO) {
		t.Fatal("no wake-up pending when AppendEnvelope returned")
	}
	quiet("after an envelope", envP, ch)
	if _, dup, err := s.AppendEnvelope(ctx, "o", storetest.Envelope("notifications.agent.s", "k", storetest.T0, ""), storetest.Window); err != nil || !dup {
		t.Fatal(dup, err)
	}
	quiet("after a duplicate envelope", envO, envP)
}

// TestExpiryUsesStoreClock: whether a bus message has expired is decided by Options.Now, so it
// disappears from every read the moment the clock passes its ExpiresAt, before any sweep.
func TestExpiryUsesStoreClock(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := base
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	set := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = base.Add(d)
	}
	s, err := sqlite.Open(filepath.Join(t.TempDir(), sqlite.DefaultFileName), sqlite.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	k := store.OrgStream("o", storetest.ChannelGeneral)
	w := storetest.Message(k, "o", "i", "q")
	w.Type, w.ServerTime, w.Deadline, w.ExpiresAt = "question", base, base.Add(time.Minute), base.Add(time.Hour)
	m, _, err := s.AppendMessage(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	scope := store.MessageScope{Org: "o"}
	set(59 * time.Minute)
	if _, err := s.GetMessage(ctx, scope, m.GID); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	if due, err := s.DueQuestions(ctx, base.Add(2*time.Minute), 10); err != nil || len(due) != 1 {
		t.Fatalf("due before expiry: %d, %v", len(due), err)
	}
	set(time.Hour) // ExpiresAt is not after now: gone
	if _, err := s.GetMessage(ctx, scope, m.GID); err != store.ErrNotFound {
		t.Fatalf("at expiry: %v", err)
	}
	if ms, err := s.ReadMessages(ctx, k, store.ReadQuery{Limit: 10}); err != nil || len(ms) != 0 {
		t.Fatalf("read at expiry: %d, %v", len(ms), err)
	}
	if due, err := s.DueQuestions(ctx, base.Add(2*time.Minute), 10); err != nil || len(due) != 0 {
		t.Fatalf("due at expiry: %d, %v", len(due), err)
	}
	if _, err := s.AppendReceipt(ctx, k, m.GID, "a", store.ReceiptRead, base); err != store.ErrNotFound {
		t.Fatalf("receipt at expiry: %v", err)
	}
	again, replayed, err := s.AppendMessage(ctx, w)
	if err != nil || replayed || again.Seq != 2 {
		t.Fatalf("resend at expiry: seq %d replayed %v, %v", again.Seq, replayed, err)
	}
}

// TestMintedGIDIsULID: a gid the store mints is a ULID (relay.md: "gid is a ULID"), and the
// gids minted for one stream increase with seq.
func TestMintedGIDIsULID(t *testing.T) {
	s := openIn(t, t.TempDir())
	defer s.Close()
	k := store.SwarmStream("sw")
	prev := ""
	for i := range 20 {
		m, _, err := s.AppendMessage(context.Background(), storetest.Message(k, "o", "i", string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		if len(m.GID) != 26 || strings.Trim(m.GID, "0123456789ABCDEFGHJKMNPQRSTVWXYZ") != "" || m.GID <= prev {
			t.Fatalf("gid %q after %q is not a later ULID", m.GID, prev)
		}
		prev = m.GID
	}
}
