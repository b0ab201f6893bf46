package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
)

// VaultOther is a second vault of the suite's org (hive.md §1.6 form).
const (
	VaultOther   = "00000000000000000000000000000001"
	ChannelOther = "org:acme/vault:00000000000000000000000000000001/other"
)

// ann builds the announcement of agent on channel by (org, instance); the vault is the one of
// the suite's channels.
func ann(org, instance, agent, channel string) store.Announcement {
	vault := Vault
	if channel == ChannelOther {
		vault = VaultOther
	}
	return store.Announcement{Org: org, Instance: instance, Agent: agent, Channel: channel, Vault: vault}
}

func record(t *testing.T, s store.Store, at time.Time, anns ...store.Announcement) {
	t.Helper()
	if err := s.RecordAnnouncements(context.Background(), anns, at); err != nil {
		t.Fatalf("RecordAnnouncements(%v at %v): %v", anns, at, err)
	}
}

func announced(t *testing.T, s store.Store, org, vault, agent string, since time.Time) []string {
	t.Helper()
	got, err := s.AnnouncedInstances(context.Background(), org, vault, agent, since)
	if err != nil {
		t.Fatalf("AnnouncedInstances(%s, %s, %s, %v): %v", org, vault, agent, since, err)
	}
	return got
}

// annKey is what the suite compares of an announcement read back.
func annKey(a store.Announcement) string {
	return fmt.Sprintf("%s/%s %s@%s(%s) %s dropped=%v", a.Org, a.Instance, a.Agent, a.Channel, a.Vault, a.LastSeen.UTC().Format(time.RFC3339Nano), a.Dropped)
}

func announcementsOf(t *testing.T, s store.Store, org, instance string, since time.Time) []string {
	t.Helper()
	got, err := s.Announcements(context.Background(), org, instance, since)
	if err != nil {
		t.Fatalf("Announcements(%s, %s, %v): %v", org, instance, since, err)
	}
	out := make([]string, len(got))
	for i, a := range got {
		out[i] = annKey(a)
	}
	return out
}

// seen is ann with LastSeen set, as a read returns it.
func seen(a store.Announcement, at time.Time) string {
	a.LastSeen = at
	return annKey(a)
}

// testBusAnnouncements: announcements are keyed by (org, instance, agent, channel) and keep
// their latest time; AnnouncedInstances answers each instance of the org that announced the
// agent in the vault since a time, once and in order; Announcements lists an instance's pairs
// by agent then channel; the sweeper deletes what is older than its cutoff.
func testBusAnnouncements(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	t0 := time.Date(2026, 10, 20, 12, 0, 0, 0, time.UTC)
	h1, h2, h3 := t0.Add(time.Hour), t0.Add(2*time.Hour), t0.Add(3*time.Hour)

	if got := announced(t, s, "acme", Vault, "codex", time.Time{}); len(got) != 0 {
		t.Fatalf("nothing recorded: %v", got)
	}
	if err := s.RecordAnnouncements(ctx, nil, t0); err != nil {
		t.Fatalf("RecordAnnouncements of nothing: %v", err)
	}
	record(t, s, t0, ann("acme", "i2", "codex", ChannelGeneral), ann("acme", "i2", "codex", ChannelOps), ann("acme", "i2", "alpha", ChannelGeneral))
	record(t, s, h1, ann("acme", "i1", "codex", ChannelOps))
	record(t, s, h2, ann("acme", "i3", "codex", ChannelOther)) // another vault
	record(t, s, h2, ann("globex", "i9", "codex", ChannelGeneral))
	record(t, s, h3, ann("acme", "i4", "claude", ChannelGeneral))

	for _, c := range []struct {
		name              string
		org, vault, agent string
		since             time.Time
		want              []string
	}{
		{"every instance once, in order", "acme", Vault, "codex", time.Time{}, []string{"i1", "i2"}},
		{"since keeps the recent ones", "acme", Vault, "codex", h1, []string{"i1"}},
		{"since is inclusive", "acme", Vault, "codex", t0, []string{"i1", "i2"}},
		{"nothing that recent", "acme", Vault, "codex", h1.Add(time.Nanosecond), nil},
		{"another vault", "acme", VaultOther, "codex", time.Time{}, []string{"i3"}},
		{"another org", "globex", Vault, "codex", time.Time{}, []string{"i9"}},
		{"another agent", "acme", Vault, "claude", time.Time{}, []string{"i4"}},
		{"unknown agent", "acme", Vault, "nobody", time.Time{}, nil},
		{"unknown org", "initech", Vault, "codex", time.Time{}, nil},
	} {
		if got := announced(t, s, c.org, c.vault, c.agent, c.since); !slices.Equal(got, c.want) {
			t.Errorf("%s: AnnouncedInstances %v, want %v", c.name, got, c.want)
		}
	}

	// An instance's pairs, by agent then channel, with their times.
	want := []string{
		seen(ann("acme", "i2", "alpha", ChannelGeneral), t0),
		seen(ann("acme", "i2", "codex", ChannelGeneral), t0),
		seen(ann("acme", "i2", "codex", ChannelOps), t0),
	}
	if got := announcementsOf(t, s, "acme", "i2", time.Time{}); !slices.Equal(got, want) {
		t.Fatalf("Announcements:\n got %q\nwant %q", got, want)
	}
	// A later record moves a pair forward; an earlier one never moves it back.
	record(t, s, h3, ann("acme", "i2", "codex", ChannelOps))
	record(t, s, t0.Add(-time.Hour), ann("acme", "i2", "codex", ChannelOps), ann("acme", "i2", "alpha", ChannelGeneral))
	want = []string{seen(ann("acme", "i2", "codex", ChannelOps), h3)}
	if got := announcementsOf(t, s, "acme", "i2", h1); !slices.Equal(got, want) {
		t.Fatalf("Announcements since h1 after updates:\n got %q\nwant %q", got, want)
	}
	if got := announced(t, s, "acme", Vault, "codex", h2); !slices.Equal(got, []string{"i2"}) {
		t.Fatalf("after moving i2 forward: %v", got)
	}
	for _, k := range [][2]string{{"acme", "nobody"}, {"globex", "i2"}} {
		if got := announcementsOf(t, s, k[0], k[1], time.Time{}); len(got) != 0 {
			t.Fatalf("Announcements of %v: %q", k, got)
		}
	}

	// The sweeper: everything last seen before h2 goes (i2's general pairs at t0, i1 at h1).
	n, err := s.ExpireAnnouncements(ctx, h2, 1000)
	if err != nil || n != 3 {
		t.Fatalf("ExpireAnnouncements: %d, %v; want 3", n, err)
	}
	if got := announced(t, s, "acme", Vault, "codex", time.Time{}); !slices.Equal(got, []string{"i2"}) {
		t.Fatalf("after expiry: %v", got)
	}
	if got := announced(t, s, "globex", Vault, "codex", time.Time{}); !slices.Equal(got, []string{"i9"}) {
		t.Fatalf("after expiry, at the cutoff: %v", got)
	}
	// A limit bounds one call.
	n, err = s.ExpireAnnouncements(ctx, h3.Add(time.Hour), 2)
	if err != nil || n != 2 {
		t.Fatalf("ExpireAnnouncements with limit 2: %d, %v", n, err)
	}
	n, err = s.ExpireAnnouncements(ctx, h3.Add(time.Hour), 1000)
	if err != nil || n != 2 {
		t.Fatalf("ExpireAnnouncements of the rest: %d, %v", n, err)
	}
	if n, err := s.ExpireAnnouncements(ctx, h3.Add(time.Hour), 1000); err != nil || n != 0 {
		t.Fatalf("ExpireAnnouncements of nothing: %d, %v", n, err)
	}
}

func setAck(t *testing.T, s store.Store, org, instance string, k store.StreamKey, seq, want int64) {
	t.Helper()
	got, err := s.SetAck(context.Background(), org, instance, k, seq)
	if err != nil || got != want {
		t.Fatalf("SetAck(%s/%s, %+v, %d) = %d, %v; want %d", org, instance, k, seq, got, err, want)
	}
}

func acks(t *testing.T, s store.Store, org, instance string) map[store.StreamKey]int64 {
	t.Helper()
	got, err := s.Acks(context.Background(), org, instance)
	if err != nil {
		t.Fatalf("Acks(%s/%s): %v", org, instance, err)
	}
	return got
}

// testBusAcks: an ack position per (instance, stream) that never goes down, is refused for a
// stream nobody wrote to and beyond the stream's last seq, and is read back per instance.
func testBusAcks(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	gen, ops, sw := store.OrgStream("acme", ChannelGeneral), store.OrgStream("acme", ChannelOps), store.SwarmStream("sw-1")
	for i := range 5 {
		send(t, s, Message(gen, "acme", "i1", fmt.Sprintf("g%d", i)))
	}
	for i := range 2 {
		send(t, s, Message(ops, "acme", "i1", fmt.Sprintf("o%d", i)))
		send(t, s, Message(sw, "globex", "i9", fmt.Sprintf("s%d", i)))
	}
	if got := acks(t, s, "acme", "i2"); len(got) != 0 {
		t.Fatalf("no ack yet: %v", got)
	}
	setAck(t, s, "acme", "i2", gen, 2, 2)
	setAck(t, s, "acme", "i2", gen, 4, 4)
	setAck(t, s, "acme", "i2", gen, 3, 4) // never down
	setAck(t, s, "acme", "i2", gen, 4, 4) // a repeat
	setAck(t, s, "acme", "i2", ops, 2, 2)
	setAck(t, s, "acme", "i2", sw, 1, 1)
	setAck(t, s, "acme", "i3", gen, 5, 5)
	setAck(t, s, "globex", "i2", sw, 2, 2) // the same instance name in another org

	// Refusals change nothing.
	if _, err := s.SetAck(ctx, "acme", "i2", gen, 6); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("ack beyond the last seq: %v, want ErrInvalid", err)
	}
	_, err := s.SetAck(ctx, "acme", "i2", store.OrgStream("acme", ChannelOther), 1)
	notFound(t, "ack of a stream nobody wrote to", err)
	_, err = s.SetAck(ctx, "globex", "i2", store.OrgStream("globex", ChannelGeneral), 1)
	notFound(t, "ack of the same channel text in another org", err)

	want := map[store.StreamKey]int64{gen: 4, ops: 2, sw: 1}
	if got := acks(t, s, "acme", "i2"); !maps.Equal(got, want) {
		t.Fatalf("Acks(acme/i2) = %v, want %v", got, want)
	}
	if got := acks(t, s, "acme", "i3"); !maps.Equal(got, map[store.StreamKey]int64{gen: 5}) {
		t.Fatalf("Acks(acme/i3) = %v", got)
	}
	if got := acks(t, s, "globex", "i2"); !maps.Equal(got, map[store.StreamKey]int64{sw: 2}) {
		t.Fatalf("Acks(globex/i2) = %v", got)
	}
	// Positions stay when the messages they name expire.
	if n, err := s.ExpireMessages(ctx, time.Now().Add(2*retention), 1000); err != nil || n != 9 {
		t.Fatalf("ExpireMessages: %d, %v", n, err)
	}
	if got := acks(t, s, "acme", "i2"); !maps.Equal(got, want) {
		t.Fatalf("Acks after expiry = %v, want %v", got, want)
	}
	setAck(t, s, "acme", "i2", gen, 5, 5)
}

// testBusStateReopen: announcements (with their dropped flag, which follows the latest write)
// and ack positions survive Close and Open.
func testBusStateReopen(t *testing.T, h *harness) {
	s, dir := h.fresh(t)
	gen := store.OrgStream("acme", ChannelGeneral)
	send(t, s, Message(gen, "acme", "i1", "c1"))
	send(t, s, Message(gen, "acme", "i1", "c2"))
	t0 := time.Date(2026, 10, 20, 12, 0, 0, 0, time.UTC)
	record(t, s, t0, ann("acme", "i1", "codex", ChannelGeneral), ann("acme", "i2", "codex", ChannelOps))
	setAck(t, s, "acme", "i1", gen, 2, 2)

	// Dropped (a later hello no longer announces the pair) follows the latest write; an older
	// write changes neither the time nor the flag; a dropped pair still counts for S7.
	dropped := ann("acme", "i3", "codex", ChannelGeneral)
	dropped.Dropped = true
	kept := dropped
	kept.Dropped = false
	record(t, s, t0, dropped)
	if got := announcementsOf(t, s, "acme", "i3", time.Time{}); !slices.Equal(got, []string{seen(dropped, t0)}) {
		t.Fatalf("dropped pair: %q", got)
	}
	record(t, s, t0.Add(time.Hour), kept)
	record(t, s, t0, dropped) // older: ignored
	if got := announcementsOf(t, s, "acme", "i3", time.Time{}); !slices.Equal(got, []string{seen(kept, t0.Add(time.Hour))}) {
		t.Fatalf("announced again, then an older drop: %q", got)
	}
	record(t, s, t0.Add(time.Hour), dropped) // the same time: the later write wins
	if got := announcementsOf(t, s, "acme", "i3", time.Time{}); !slices.Equal(got, []string{seen(dropped, t0.Add(time.Hour))}) {
		t.Fatalf("dropped again: %q", got)
	}
	if got := announced(t, s, "acme", Vault, "codex", t0); !slices.Equal(got, []string{"i1", "i2", "i3"}) {
		t.Fatalf("AnnouncedInstances with a dropped pair: %v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := h.open(t, dir)
	t.Cleanup(func() { _ = s2.Close() })
	if got := announced(t, s2, "acme", Vault, "codex", t0); !slices.Equal(got, []string{"i1", "i2", "i3"}) {
		t.Fatalf("AnnouncedInstances after reopen: %v", got)
	}
	if got := announcementsOf(t, s2, "acme", "i3", time.Time{}); !slices.Equal(got, []string{seen(dropped, t0.Add(time.Hour))}) {
		t.Fatalf("dropped pair after reopen: %q", got)
	}
	if got := announcementsOf(t, s2, "acme", "i1", time.Time{}); !slices.Equal(got, []string{seen(ann("acme", "i1", "codex", ChannelGeneral), t0)}) {
		t.Fatalf("Announcements after reopen: %q", got)
	}
	if got := acks(t, s2, "acme", "i1"); !maps.Equal(got, map[store.StreamKey]int64{gen: 2}) {
		t.Fatalf("Acks after reopen: %v", got)
	}
	setAck(t, s2, "acme", "i1", gen, 1, 2) // still never down
}
