package storetest

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
)

func recordSession(t *testing.T, s store.Store, org, session string, at time.Time, ds ...store.SessionDelivery) {
	t.Helper()
	if err := s.RecordSessionDeliveries(context.Background(), org, session, ds, at, Window); err != nil {
		t.Fatalf("RecordSessionDeliveries(%s/%s, %v at %v): %v", org, session, ds, at, err)
	}
}

// delivered returns "key@seq@T0+offset" per recorded key, for comparisons.
func delivered(t *testing.T, s store.Store, org, session string, since time.Time, keys ...string) map[string]string {
	t.Helper()
	got, err := s.SessionDeliveries(context.Background(), org, session, keys, since)
	if err != nil {
		t.Fatalf("SessionDeliveries(%s/%s, %q, %v): %v", org, session, keys, since, err)
	}
	out := map[string]string{}
	for k, d := range got {
		if d.DedupeKey != k {
			t.Fatalf("SessionDeliveries: entry %q holds key %q", k, d.DedupeKey)
		}
		out[k] = fmt.Sprintf("%d@T0+%v", d.Seq, d.DeliveredAt.Sub(T0))
	}
	return out
}

// testEnvSessionDeliveries: the dedupe keys delivered to a session are kept per (org, session,
// key) with the first delivery's seq and time, a delivery older than the window is replaced by
// the next one, lookups answer only the keys asked for since a time, the sweeper deletes what
// is older than its cutoff, and everything survives a reopen.
func testEnvSessionDeliveries(t *testing.T, h *harness) {
	s, dir := h.fresh(t)
	ctx := context.Background()
	if got := delivered(t, s, "o", "ses_A", time.Time{}, "k1"); len(got) != 0 {
		t.Fatalf("nothing recorded: %v", got)
	}
	if err := s.RecordSessionDeliveries(ctx, "o", "ses_A", nil, T0, Window); err != nil {
		t.Fatalf("recording nothing: %v", err)
	}
	recordSession(t, s, "o", "ses_A", T0, store.SessionDelivery{DedupeKey: "k1", Seq: 1}, store.SessionDelivery{DedupeKey: "k2", Seq: 2})
	recordSession(t, s, "o", "ses_A", T0.Add(time.Hour), store.SessionDelivery{DedupeKey: "role.k3"}) // never stored: seq 0
	recordSession(t, s, "o", "ses_B", T0.Add(time.Hour), store.SessionDelivery{DedupeKey: "k1", Seq: 5})
	recordSession(t, s, "p", "ses_A", T0.Add(time.Hour), store.SessionDelivery{DedupeKey: "k2", Seq: 6})
	// A later delivery of a key within the window keeps the first.
	recordSession(t, s, "o", "ses_A", T0.Add(2*time.Hour), store.SessionDelivery{DedupeKey: "k1", Seq: 9})

	for _, c := range []struct {
		name, org, session string
		since              time.Time
		keys               []string
		want               map[string]string
	}{
		{"the keys asked for", "o", "ses_A", time.Time{}, []string{"k1", "k2", "role.k3", "k4"},
			map[string]string{"k1": "1@T0+0s", "k2": "2@T0+0s", "role.k3": "0@T0+1h0m0s"}},
		{"a subset", "o", "ses_A", time.Time{}, []string{"k2"}, map[string]string{"k2": "2@T0+0s"}},
		{"no keys", "o", "ses_A", time.Time{}, nil, map[string]string{}},
		{"repeated keys", "o", "ses_A", time.Time{}, []string{"k2", "k2"}, map[string]string{"k2": "2@T0+0s"}},
		{"since is inclusive", "o", "ses_A", T0.Add(time.Hour), []string{"k1", "k2", "role.k3"}, map[string]string{"role.k3": "0@T0+1h0m0s"}},
		{"another session", "o", "ses_B", time.Time{}, []string{"k1", "k2"}, map[string]string{"k1": "5@T0+1h0m0s"}},
		{"another org", "p", "ses_A", time.Time{}, []string{"k1", "k2"}, map[string]string{"k2": "6@T0+1h0m0s"}},
		{"unknown session", "o", "ses_C", time.Time{}, []string{"k1"}, map[string]string{}},
	} {
		if got := delivered(t, s, c.org, c.session, c.since, c.keys...); !maps.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Keys that JSON or SQL would treat specially come back as they went in.
	odd := []string{`quote"d`, `back\slash`, "ünï\u2028cødé", "comma,and'apostrophe", "[1]", "null"}
	for i, k := range odd {
		recordSession(t, s, "o", "ses_A", T0, store.SessionDelivery{DedupeKey: k, Seq: int64(100 + i)})
	}
	if got := delivered(t, s, "o", "ses_A", time.Time{}, odd...); len(got) != len(odd) {
		t.Fatalf("odd keys: %v", got)
	}
	// At the end of the window the next delivery counts as a first one.
	recordSession(t, s, "o", "ses_A", T0.Add(Window), store.SessionDelivery{DedupeKey: "k2", Seq: 20})
	recordSession(t, s, "o", "ses_A", T0.Add(Window-time.Second), store.SessionDelivery{DedupeKey: "role.k3", Seq: 21})
	if got, want := delivered(t, s, "o", "ses_A", time.Time{}, "k2", "role.k3"), map[string]string{"k2": "20@T0+72h0m0s", "role.k3": "0@T0+1h0m0s"}; !maps.Equal(got, want) {
		t.Fatalf("after the window: %v, want %v", got, want)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := h.open(t, dir)
	t.Cleanup(func() { _ = s2.Close() })
	if got, want := delivered(t, s2, "o", "ses_A", time.Time{}, "k1", "k2", "role.k3"), map[string]string{"k1": "1@T0+0s", "k2": "20@T0+72h0m0s", "role.k3": "0@T0+1h0m0s"}; !maps.Equal(got, want) {
		t.Fatalf("after reopen: %v, want %v", got, want)
	}
	// The sweeper: everything delivered before T0+1h goes (k1 and the odd keys of ses_A).
	n, err := s2.ExpireSessionDeliveries(ctx, T0.Add(time.Hour), 3)
	if err != nil || n != 3 {
		t.Fatalf("ExpireSessionDeliveries with limit 3: %d, %v", n, err)
	}
	n, err = s2.ExpireSessionDeliveries(ctx, T0.Add(time.Hour), 1000)
	if err != nil || n != len(odd)+1-3 {
		t.Fatalf("ExpireSessionDeliveries: %d, %v; want %d", n, err, len(odd)+1-3)
	}
	if got, want := delivered(t, s2, "o", "ses_A", time.Time{}, append([]string{"k1", "k2", "role.k3"}, odd...)...), map[string]string{"k2": "20@T0+72h0m0s", "role.k3": "0@T0+1h0m0s"}; !maps.Equal(got, want) {
		t.Fatalf("after expiry: %v, want %v", got, want)
	}
	if got := delivered(t, s2, "o", "ses_B", time.Time{}, "k1"); len(got) != 1 {
		t.Fatalf("expiry at the cutoff removed ses_B's key: %v", got)
	}
}
