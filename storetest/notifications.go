package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
)

// RunNotifications runs the notification-lane suite ([store.NotificationStore]) as subtests of
// t: one gap-free store sequence shared by every org, org-scoped reads and dedupe, the dedupe
// window at its boundary, cursor paging with a subject filter and the examined-cursor contract,
// retention and the sweeper, stored times that never go back, concurrent publishers (including
// racing duplicates), reopen, change notification and Close; and the dedupe keys delivered to a
// stream session (first delivery kept within the window, lookups by key, expiry, reopen).
func RunNotifications(t *testing.T, open Opener) {
	h := &harness{open: open}
	for _, c := range []struct {
		name string
		f    func(*testing.T, *harness)
	}{
		{"AppendAndRead", testEnvAppendAndRead},
		{"InvalidArguments", testEnvInvalidArguments},
		{"Dedupe", testEnvDedupe},
		{"SequenceAndOrgs", testEnvSequenceAndOrgs},
		{"ReadQuery", testEnvReadQuery},
		{"Expiry", testEnvExpiry},
		{"StoredAtNeverGoesBack", testEnvClock},
		{"Concurrent", testEnvConcurrent},
		{"OpaqueBytes", testEnvOpaqueBytes},
		{"Reopen", testEnvReopen},
		{"SessionDeliveries", testEnvSessionDeliveries},
		{"Subscribe", testEnvSubscribe},
		{"CanceledContext", testEnvCanceledContext},
		{"Closed", testEnvClosed},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, h) })
	}
}

// ServerClock is implemented by a backend whose envelope dedupe window is kept by its server on
// the server's own clock (JetStream: the duplicate window of ENVOY_NOTIFICATIONS, relay.md
// §5.1.4): the window argument and explicit stored times do not move it, and a deleted envelope
// keeps deduplicating until its window ends. The cases that need a settable clock (a zero
// window, a repeat exactly one window later, an expired envelope that no longer deduplicates)
// run only on backends that do not implement it.
type ServerClock interface{ DedupeWindowOnServerClock() }

// settableClock reports whether s dedupes envelopes on the times its caller passes.
func settableClock(s store.Store) bool {
	_, server := s.(ServerClock)
	return !server
}

// Window is the notification dedupe window of the suite: envelope.md §4.5
// DeliveryDuplicateWindow (72 h).
const Window = 72 * time.Hour

// T0 is the suite's publish-time origin; envelope times are explicit, so no test depends on the
// wall clock.
var T0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// Envelope returns the write the suite stores: Data names its subject, message id and a
// distinguishing note, so a misplaced envelope shows in a failure.
func Envelope(subject, messageID string, at time.Time, note string) store.EnvelopeWrite {
	return store.EnvelopeWrite{
		Subject:   subject,
		MessageID: messageID,
		StoredAt:  at,
		Data:      fmt.Appendf(nil, `{"topic":%q,"message_id":%q,"note":%q}`, subject, messageID, note),
	}
}

func publish(t *testing.T, s store.Store, org string, e store.EnvelopeWrite, wantDuplicate bool) store.StoredEnvelope {
	t.Helper()
	got, dup, err := s.AppendEnvelope(context.Background(), org, e, Window)
	if err != nil {
		t.Fatalf("AppendEnvelope(%s, %s, %q): %v", org, e.Subject, e.MessageID, err)
	}
	if dup != wantDuplicate {
		t.Fatalf("AppendEnvelope(%s, %s, %q): duplicate %v, want %v", org, e.Subject, e.MessageID, dup, wantDuplicate)
	}
	return got
}

func sameEnvelopes(t *testing.T, what string, got, want []store.StoredEnvelope) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d envelopes %v, want %d %v", what, len(got), envSeqs(got), len(want), envSeqs(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Seq != w.Seq || g.Subject != w.Subject || g.MessageID != w.MessageID || !g.StoredAt.Equal(w.StoredAt) || !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("%s: envelope %d:\n got %d %s %q %v %s\nwant %d %s %q %v %s", what, i,
				g.Seq, g.Subject, g.MessageID, g.StoredAt, g.Data, w.Seq, w.Subject, w.MessageID, w.StoredAt, w.Data)
		}
	}
}

func envSeqs(es []store.StoredEnvelope) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

// readAllEnvelopes pages through the org's envelopes with the given query (limit and filter)
// until More is false, checking the page contract on the way.
func readAllEnvelopes(t *testing.T, s store.Store, org string, q store.EnvelopeQuery) []store.StoredEnvelope {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 1 << 20
	}
	var out []store.StoredEnvelope
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("ReadEnvelopes paging does not end")
		}
		p, err := s.ReadEnvelopes(context.Background(), org, q)
		if err != nil {
			t.Fatalf("ReadEnvelopes(%s, after %d): %v", org, q.After, err)
		}
		if len(p.Envelopes) > q.Limit || p.Next < q.After || (len(p.Envelopes) > 0 && p.Envelopes[len(p.Envelopes)-1].Seq > p.Next) {
			t.Fatalf("ReadEnvelopes(after %d, limit %d): %d envelopes, next %d", q.After, q.Limit, len(p.Envelopes), p.Next)
		}
		for _, e := range p.Envelopes {
			if e.Seq <= q.After {
				t.Fatalf("ReadEnvelopes(after %d) returned %d", q.After, e.Seq)
			}
		}
		out = append(out, p.Envelopes...)
		if !p.More {
			return out
		}
		if p.Next == q.After {
			t.Fatalf("ReadEnvelopes(after %d): More without progress", q.After)
		}
		q.After = p.Next
	}
}

func testEnvAppendAndRead(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	var want []store.StoredEnvelope
	for i := range 5 {
		e := Envelope(fmt.Sprintf("notifications.github.acme.widgets.pr.%d", i), fmt.Sprintf("github.d-%d:topic", i), T0.Add(time.Duration(i)*time.Second), "")
		got := publish(t, s, "org-a", e, false)
		if got.Seq != int64(i+1) || !got.StoredAt.Equal(e.StoredAt) || got.Subject != e.Subject || got.MessageID != e.MessageID || !bytes.Equal(got.Data, e.Data) {
			t.Fatalf("envelope %d stored as %+v", i, got)
		}
		want = append(want, got)
	}
	sameEnvelopes(t, "read back", readAllEnvelopes(t, s, "org-a", store.EnvelopeQuery{}), want)
	if n, err := s.LastEnvelopeSeq(context.Background(), "org-a"); err != nil || n != 5 {
		t.Fatalf("LastEnvelopeSeq = %d, %v; want 5", n, err)
	}
	// An empty page at the end: Next stays, More is false.
	p, err := s.ReadEnvelopes(context.Background(), "org-a", store.EnvelopeQuery{After: 5, Limit: 10})
	if err != nil || len(p.Envelopes) != 0 || p.Next != 5 || p.More {
		t.Fatalf("read at the end = %+v, %v", p, err)
	}
}

func testEnvInvalidArguments(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	good := Envelope("notifications.agent.s1", "", T0, "")
	with := func(f func(*store.EnvelopeWrite)) store.EnvelopeWrite {
		e := good
		f(&e)
		return e
	}
	for _, c := range []struct {
		name   string
		org    string
		e      store.EnvelopeWrite
		window time.Duration
	}{
		{"empty org", "", good, Window},
		{"empty subject", "o", with(func(e *store.EnvelopeWrite) { e.Subject = "" }), Window},
		// Only ENVOY_NOTIFICATIONS's subjects are stored (relay.md §5.1.4, envelope.md §5.1).
		{"role lane", "o", with(func(e *store.EnvelopeWrite) { e.Subject = "notifications.role.reviewer" }), Window},
		{"role lane exception", "o", with(func(e *store.EnvelopeWrite) { e.Subject = "notifications.envoy.exceptions.notifications.role.reviewer" }), Window},
		{"fan-out exception", "o", with(func(e *store.EnvelopeWrite) {
			e.Subject = "notifications.envoy.exceptions.notifications.github.acme.pr"
		}), Window},
		{"other notifications subject", "o", with(func(e *store.EnvelopeWrite) { e.Subject = "notifications.foo.bar" }), Window},
		{"outside notifications", "o", with(func(e *store.EnvelopeWrite) { e.Subject = "agentstream.s.frames" }), Window},
		{"zero time", "o", with(func(e *store.EnvelopeWrite) { e.StoredAt = time.Time{} }), Window},
		{"no data", "o", with(func(e *store.EnvelopeWrite) { e.Data = nil }), Window},
		{"negative window", "o", good, -time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := s.AppendEnvelope(ctx, c.org, c.e, c.window); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("AppendEnvelope: %v, want ErrInvalid", err)
			}
		})
	}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"read empty org", func() error { _, err := s.ReadEnvelopes(ctx, "", store.EnvelopeQuery{Limit: 1}); return err }},
		{"read negative after", func() error {
			_, err := s.ReadEnvelopes(ctx, "o", store.EnvelopeQuery{After: -1, Limit: 1})
			return err
		}},
		{"read zero limit", func() error { _, err := s.ReadEnvelopes(ctx, "o", store.EnvelopeQuery{}); return err }},
		{"last seq empty org", func() error { _, err := s.LastEnvelopeSeq(ctx, ""); return err }},
		{"expire zero cutoff", func() error { _, err := s.ExpireEnvelopes(ctx, time.Time{}, 1); return err }},
		{"expire zero limit", func() error { _, err := s.ExpireEnvelopes(ctx, T0, 0); return err }},
		{"session record empty session", func() error {
			return s.RecordSessionDeliveries(ctx, "o", "", []store.SessionDelivery{{DedupeKey: "k"}}, T0, Window)
		}},
		{"session record empty key", func() error {
			return s.RecordSessionDeliveries(ctx, "o", "s", []store.SessionDelivery{{DedupeKey: ""}}, T0, Window)
		}},
		{"session record invalid UTF-8 key", func() error {
			return s.RecordSessionDeliveries(ctx, "o", "s", []store.SessionDelivery{{DedupeKey: "a\xffb"}}, T0, Window)
		}},
		{"session record negative seq", func() error {
			return s.RecordSessionDeliveries(ctx, "o", "s", []store.SessionDelivery{{DedupeKey: "k", Seq: -1}}, T0, Window)
		}},
		{"session record zero time", func() error {
			return s.RecordSessionDeliveries(ctx, "o", "s", []store.SessionDelivery{{DedupeKey: "k"}}, time.Time{}, Window)
		}},
		{"session record negative window", func() error {
			return s.RecordSessionDeliveries(ctx, "o", "s", []store.SessionDelivery{{DedupeKey: "k"}}, T0, -time.Second)
		}},
		{"session lookup empty org", func() error { _, err := s.SessionDeliveries(ctx, "", "s", []string{"k"}, T0); return err }},
		{"session lookup empty key", func() error { _, err := s.SessionDeliveries(ctx, "o", "s", []string{""}, T0); return err }},
		{"session expire zero limit", func() error { _, err := s.ExpireSessionDeliveries(ctx, T0, 0); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("%v, want ErrInvalid", err)
			}
		})
	}
	if n, err := s.LastEnvelopeSeq(ctx, "o"); err != nil || n != 0 {
		t.Fatalf("invalid appends stored something: %d, %v", n, err)
	}
}

func testEnvDedupe(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	const topic = "notifications.github.acme.widgets.pr.42"
	e1 := publish(t, s, "org-a", Envelope(topic, "k1", T0, "first"), false)
	steps := []struct {
		name     string
		org      string
		e        store.EnvelopeWrite
		window   time.Duration
		dup      bool
		original *store.StoredEnvelope // the duplicate's answer
		seq      int64                 // the new envelope's seq
		clock    bool                  // needs a settable clock
	}{
		{"repeat inside the window", "org-a", Envelope(topic, "k1", T0.Add(Window-time.Nanosecond), "again"), Window, true, &e1, 0, false},
		{"another message id", "org-a", Envelope(topic, "k2", T0.Add(time.Hour), ""), Window, false, nil, 2, false},
		{"no message id never deduplicates", "org-a", Envelope(topic, "", T0.Add(time.Hour), "first"), Window, false, nil, 3, false},
		{"no message id, again", "org-a", Envelope(topic, "", T0.Add(time.Hour), "first"), Window, false, nil, 4, false},
		{"same id in another org", "org-b", Envelope(topic, "k1", T0.Add(time.Hour), "b"), Window, false, nil, 5, false},
		{"same id, another subject in the data", "org-a", Envelope("notifications.github.acme.other", "k1", T0.Add(2*time.Hour), "x"), Window, true, &e1, 0, false},
		{"zero window", "org-a", Envelope(topic, "k2", T0.Add(2*time.Hour), "zero"), 0, false, nil, 6, true},
		{"exactly one window later", "org-a", Envelope(topic, "k1", T0.Add(Window), "later"), Window, false, nil, 7, true},
	}
	var stored []store.StoredEnvelope
	stored = append(stored, e1)
	var k1Later store.StoredEnvelope
	for _, c := range steps {
		if c.clock && !settableClock(s) {
			continue
		}
		got, dup, err := s.AppendEnvelope(context.Background(), c.org, c.e, c.window)
		if err != nil || dup != c.dup {
			t.Fatalf("%s: duplicate %v, %v; want %v", c.name, dup, err, c.dup)
		}
		if c.dup {
			sameEnvelopes(t, c.name, []store.StoredEnvelope{got}, []store.StoredEnvelope{*c.original})
			continue
		}
		if got.Seq != c.seq {
			t.Fatalf("%s: seq %d, want %d", c.name, got.Seq, c.seq)
		}
		if c.org == "org-a" {
			stored = append(stored, got)
		}
		if c.e.MessageID == "k1" && c.org == "org-a" {
			k1Later = got
		}
	}
	// The window runs from the latest stored envelope of the id.
	if settableClock(s) {
		got := publish(t, s, "org-a", Envelope(topic, "k1", T0.Add(Window+time.Hour), "x"), true)
		sameEnvelopes(t, "repeat of the re-stored id", []store.StoredEnvelope{got}, []store.StoredEnvelope{k1Later})
	}
	sameEnvelopes(t, "nothing deduplicated was stored", readAllEnvelopes(t, s, "org-a", store.EnvelopeQuery{}), stored)
}

// testEnvSequenceAndOrgs: one store sequence for every org, gap-free; each org reads only its
// own envelopes, in increasing order.
func testEnvSequenceAndOrgs(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	byOrg := map[string][]store.StoredEnvelope{}
	orgs := []string{"org-a", "org-b", "org-a", "org-a", "org-b"}
	for i := range 40 {
		org := orgs[i%len(orgs)]
		e := publish(t, s, org, Envelope("notifications.agent.s", fmt.Sprintf("%s:%d", org, i), T0.Add(time.Duration(i)*time.Minute), org), false)
		if e.Seq != int64(i+1) {
			t.Fatalf("envelope %d: seq %d, want %d (one gap-free store sequence)", i, e.Seq, i+1)
		}
		byOrg[org] = append(byOrg[org], e)
	}
	for org, want := range byOrg {
		got := readAllEnvelopes(t, s, org, store.EnvelopeQuery{Limit: 3})
		sameEnvelopes(t, org, got, want)
		for _, e := range got {
			if !bytes.Contains(e.Data, []byte(`"note":"`+org+`"`)) {
				t.Fatalf("%s read another org's envelope %s", org, e.Data)
			}
		}
		if n, err := s.LastEnvelopeSeq(ctx, org); err != nil || n != want[len(want)-1].Seq {
			t.Fatalf("LastEnvelopeSeq(%s) = %d, %v", org, n, err)
		}
	}
	if got := readAllEnvelopes(t, s, "org-c", store.EnvelopeQuery{}); len(got) != 0 {
		t.Fatalf("org-c reads %d envelopes", len(got))
	}
	if n, err := s.LastEnvelopeSeq(ctx, "org-c"); err != nil || n != 0 {
		t.Fatalf("LastEnvelopeSeq(org-c) = %d, %v", n, err)
	}
	// Reading org-b after an org-a cursor value still returns org-b's later envelopes only.
	got := readAllEnvelopes(t, s, "org-b", store.EnvelopeQuery{After: 20})
	var want []store.StoredEnvelope
	for _, e := range byOrg["org-b"] {
		if e.Seq > 20 {
			want = append(want, e)
		}
	}
	sameEnvelopes(t, "org-b after 20", got, want)
}

func testEnvReadQuery(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	subjects := []string{"notifications.github.a.1", "notifications.slack.b", "notifications.github.a.2", "notifications.agent.s1"}
	var all []store.StoredEnvelope
	for i := range 30 {
		all = append(all, publish(t, s, "o", Envelope(subjects[i%len(subjects)], "", T0.Add(time.Duration(i)*time.Hour), fmt.Sprint(i)), false))
	}
	github := func(sub string) bool { return strings.HasPrefix(sub, "notifications.github.") }
	none := func(string) bool { return false }
	filter := func(keep func(string) bool) []store.StoredEnvelope {
		var out []store.StoredEnvelope
		for _, e := range all {
			if keep == nil || keep(e.Subject) {
				out = append(out, e)
			}
		}
		return out
	}
	for limit := 1; limit <= len(all)+1; limit++ {
		sameEnvelopes(t, fmt.Sprintf("all, limit %d", limit), readAllEnvelopes(t, s, "o", store.EnvelopeQuery{Limit: limit}), all)
		sameEnvelopes(t, fmt.Sprintf("github, limit %d", limit), readAllEnvelopes(t, s, "o", store.EnvelopeQuery{Limit: limit, Match: github}), filter(github))
		if got := readAllEnvelopes(t, s, "o", store.EnvelopeQuery{Limit: limit, Match: none}); len(got) != 0 {
			t.Fatalf("match nothing, limit %d: %d envelopes", limit, len(got))
		}
	}
	// A byte budget cuts pages short (More, Next before the cut) but never below one matching
	// envelope, and paging by it still yields everything.
	size := len(all[0].Data) // every envelope here is about this size
	for _, budget := range []int{1, size, 3*size + 1, 1 << 20} {
		sameEnvelopes(t, fmt.Sprintf("all, budget %d", budget), readAllEnvelopes(t, s, "o", store.EnvelopeQuery{Limit: 100, MaxBytes: budget}), all)
		sameEnvelopes(t, fmt.Sprintf("github, budget %d", budget), readAllEnvelopes(t, s, "o", store.EnvelopeQuery{Limit: 100, Match: github, MaxBytes: budget}), filter(github))
	}
	if p, err := s.ReadEnvelopes(context.Background(), "o", store.EnvelopeQuery{Limit: 100, Match: github, MaxBytes: 1}); err != nil ||
		len(p.Envelopes) != 1 || !p.More || p.Next >= filter(github)[1].Seq {
		t.Fatalf("budget 1: %d envelopes, next %d, more %v, %v", len(p.Envelopes), p.Next, p.More, err)
	}
	if _, err := s.ReadEnvelopes(context.Background(), "o", store.EnvelopeQuery{Limit: 1, MaxBytes: -1}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("negative budget: %v, want ErrInvalid", err)
	}
	// Next is the last examined envelope even when nothing matched, and More is exact.
	ctx := context.Background()
	for _, c := range []struct {
		after int64
		limit int
		next  int64
		more  bool
	}{
		{0, 3, 3, true},
		{27, 3, 30, false}, // exactly the rest
		{26, 3, 29, true},
		{29, 3, 30, false},
		{30, 3, 30, false},
		{100, 3, 100, false},
	} {
		p, err := s.ReadEnvelopes(ctx, "o", store.EnvelopeQuery{After: c.after, Limit: c.limit, Match: none})
		if err != nil || len(p.Envelopes) != 0 || p.Next != c.next || p.More != c.more {
			t.Fatalf("after %d limit %d: %+v, %v; want next %d more %v", c.after, c.limit, p, err, c.next, c.more)
		}
	}
	// Since leaves out older envelopes (retention before the sweep).
	since := T0.Add(20 * time.Hour)
	var recent []store.StoredEnvelope
	for _, e := range all {
		if !e.StoredAt.Before(since) {
			recent = append(recent, e)
		}
	}
	for _, limit := range []int{1, 4, 100} {
		sameEnvelopes(t, fmt.Sprintf("since, limit %d", limit), readAllEnvelopes(t, s, "o", store.EnvelopeQuery{Limit: limit, Since: since}), recent)
	}
	// One envelope matching several patterns is still one envelope (the caller's Match is an
	// any-of).
	patterns := []func(string) bool{github, func(s string) bool { return strings.HasSuffix(s, ".1") }}
	anyOf := func(sub string) bool {
		return slices.ContainsFunc(patterns, func(p func(string) bool) bool { return p(sub) })
	}
	sameEnvelopes(t, "overlapping patterns", readAllEnvelopes(t, s, "o", store.EnvelopeQuery{Limit: 7, Match: anyOf}), filter(anyOf))
}

func testEnvExpiry(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	var all []store.StoredEnvelope
	for i := range 10 {
		org := []string{"org-a", "org-b"}[i%2]
		all = append(all, publish(t, s, org, Envelope("notifications.agent.s", fmt.Sprintf("k%d", i), T0.Add(time.Duration(i)*time.Hour), org), false))
	}
	expire := func(cutoff time.Time, limit, want int) {
		t.Helper()
		n, err := s.ExpireEnvelopes(ctx, cutoff, limit)
		if err != nil || n != want {
			t.Fatalf("ExpireEnvelopes(T0+%v, %d) = %d, %v; want %d", cutoff.Sub(T0), limit, n, err, want)
		}
	}
	expire(T0.Add(3*time.Hour), 100, 3) // T0, +1h, +2h: across orgs
	expire(T0.Add(5*time.Hour), 1, 1)   // +3h only: the limit
	expire(T0.Add(5*time.Hour), 100, 1) // +4h
	expire(T0.Add(5*time.Hour), 100, 0)
	var wantA []store.StoredEnvelope
	for _, e := range all[5:] {
		if e.Seq%2 == 1 {
			wantA = append(wantA, e)
		}
	}
	sameEnvelopes(t, "org-a after expiry", readAllEnvelopes(t, s, "org-a", store.EnvelopeQuery{}), wantA)
	// An expired envelope no longer deduplicates, and its sequence is not reused. On the
	// server's clock it deduplicates until its window ends; the repeat then takes a new id.
	repeat := Envelope("notifications.agent.s", "k0", T0.Add(10*time.Hour), "again")
	if !settableClock(s) {
		publish(t, s, "org-a", repeat, true)
		repeat.MessageID = "k0-again"
	}
	again := publish(t, s, "org-a", repeat, false)
	if again.Seq != 11 {
		t.Fatalf("after expiry seq %d, want 11", again.Seq)
	}
	publish(t, s, "org-a", Envelope("notifications.agent.s", "k6", T0.Add(10*time.Hour), "dup"), true)
	expire(T0.Add(100*time.Hour), 100, 6)
	if got := readAllEnvelopes(t, s, "org-a", store.EnvelopeQuery{}); len(got) != 0 {
		t.Fatalf("after expiring everything org-a reads %d", len(got))
	}
	if e := publish(t, s, "org-b", Envelope("notifications.agent.s", "", T0.Add(101*time.Hour), ""), false); e.Seq != 12 {
		t.Fatalf("with every envelope expired, the next seq is %d, want 12", e.Seq)
	}
}

// testEnvClock: a publish time before the last stored one is raised to it, so sequence order
// and time order agree; the dedupe window is measured on stored times.
func testEnvClock(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	late := publish(t, s, "o", Envelope("notifications.agent.s", "k1", T0.Add(10*time.Hour), ""), false)
	early := publish(t, s, "p", Envelope("notifications.agent.s", "k2", T0, ""), false) // another org: one clock
	if !early.StoredAt.Equal(late.StoredAt) {
		t.Fatalf("earlier publish stored at %v, want raised to %v", early.StoredAt, late.StoredAt)
	}
	got := readAllEnvelopes(t, s, "p", store.EnvelopeQuery{})
	if len(got) != 1 || !got[0].StoredAt.Equal(late.StoredAt) {
		t.Fatalf("read back %+v", got)
	}
	// T0 + 80 h is 70 h after the stored time of k2: a duplicate.
	publish(t, s, "p", Envelope("notifications.agent.s", "k2", T0.Add(80*time.Hour), ""), true)
	if n, err := s.ExpireEnvelopes(context.Background(), T0.Add(time.Hour), 10); err != nil || n != 0 {
		t.Fatalf("ExpireEnvelopes before the raised time: %d, %v", n, err)
	}
}

// testEnvConcurrent: 8 publishers; unique envelopes are stored once each, racing duplicates of
// one message id store exactly one envelope and all get its sequence, and the sequence stays
// gap-free.
func testEnvConcurrent(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	const perWriter, shared = 20, 5
	var mu sync.Mutex
	uniq := map[int64]string{}      // seq → note
	sharedSeq := map[string]int64{} // shared id → seq
	stores := map[string]int{}      // shared id → times answered as new
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter + shared {
				var e store.EnvelopeWrite
				if i < perWriter {
					note := fmt.Sprintf("w%d-%d", w, i)
					e = Envelope("notifications.agent.s", "id-"+note, T0, note)
				} else {
					e = Envelope("notifications.agent.s", fmt.Sprintf("shared-%d", i), T0, "shared")
				}
				got, dup, err := s.AppendEnvelope(context.Background(), "o", e, Window)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if i < perWriter {
					if dup {
						errs <- fmt.Errorf("unique envelope %s answered duplicate", e.MessageID)
					}
					uniq[got.Seq] = string(e.Data)
				} else {
					if prev, ok := sharedSeq[e.MessageID]; ok && prev != got.Seq {
						errs <- fmt.Errorf("%s answered %d and %d", e.MessageID, prev, got.Seq)
					}
					sharedSeq[e.MessageID] = got.Seq
					if !dup {
						stores[e.MessageID]++
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for id, n := range stores {
		if n != 1 {
			t.Fatalf("%s stored %d times", id, n)
		}
	}
	got := readAllEnvelopes(t, s, "o", store.EnvelopeQuery{Limit: 50})
	if len(got) != writers*perWriter+shared {
		t.Fatalf("stored %d envelopes, want %d", len(got), writers*perWriter+shared)
	}
	for i, e := range got {
		if e.Seq != int64(i+1) {
			t.Fatalf("envelope %d has seq %d: gap or repeat", i, e.Seq)
		}
		if note, ok := uniq[e.Seq]; ok && note != string(e.Data) {
			t.Fatalf("seq %d acknowledged for %s, stores %s", e.Seq, note, e.Data)
		} else if !ok && sharedSeq[e.MessageID] != e.Seq {
			t.Fatalf("seq %d (%s) was never acknowledged", e.Seq, e.MessageID)
		}
	}
}

func testEnvOpaqueBytes(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	orgs := []string{"o", "o%", "o_", "O", "o'; DROP TABLE envelopes; --", "ö", "o\x00x"}
	for i, org := range orgs {
		e := Envelope("notifications.agent.%_*>.\"'ü", "id\x00%"+org, T0.Add(time.Duration(i)), org)
		e.Data = append([]byte{0, 0xff, '\n'}, e.Data...)
		got := publish(t, s, org, e, false)
		sameEnvelopes(t, "opaque "+org, readAllEnvelopes(t, s, org, store.EnvelopeQuery{}), []store.StoredEnvelope{got})
		publish(t, s, org, e, true)
	}
}

func testEnvReopen(t *testing.T, h *harness) {
	s, dir := h.fresh(t)
	var want []store.StoredEnvelope
	for i := range 5 {
		want = append(want, publish(t, s, "o", Envelope("notifications.agent.s", fmt.Sprintf("k%d", i), T0.Add(time.Duration(i)*time.Hour), ""), false))
	}
	publish(t, s, "p", Envelope("notifications.agent.s", "", T0.Add(5*time.Hour), ""), false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := h.open(t, dir)
	t.Cleanup(func() { _ = s2.Close() })
	sameEnvelopes(t, "after reopen", readAllEnvelopes(t, s2, "o", store.EnvelopeQuery{}), want)
	// Dedupe, the sequence and the stored clock survive.
	dup := publish(t, s2, "o", Envelope("notifications.agent.s", "k2", T0.Add(6*time.Hour), ""), true)
	sameEnvelopes(t, "duplicate after reopen", []store.StoredEnvelope{dup}, want[2:3])
	next := publish(t, s2, "o", Envelope("notifications.agent.s", "", T0, ""), false)
	if next.Seq != 7 || !next.StoredAt.Equal(T0.Add(5*time.Hour)) {
		t.Fatalf("after reopen: seq %d stored at T0+%v, want 7 at T0+5h", next.Seq, next.StoredAt.Sub(T0))
	}
}

func testEnvSubscribe(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	ch, cancel := s.SubscribeEnvelopes("o")
	defer cancel()
	other, cancelOther := s.SubscribeEnvelopes("p")
	defer cancelOther()
	publish(t, s, "o", Envelope("notifications.agent.s", "k", T0, ""), false)
	receive(t, ch, "first envelope")
	if n, err := s.LastEnvelopeSeq(ctx, "o"); err != nil || n != 1 {
		t.Fatalf("after the notification LastEnvelopeSeq = %d, %v", n, err)
	}
	publish(t, s, "p", Envelope("notifications.agent.s", "k", T0, ""), false)
	receive(t, other, "other org")
	// The live tail: wake, read from the cursor, wait; every envelope once.
	done := make(chan []store.StoredEnvelope, 1)
	go func() {
		var seen []store.StoredEnvelope
		cursor := int64(1)
		for len(seen) < 10 {
			if _, ok := <-ch; !ok {
				break
			}
			for {
				p, err := s.ReadEnvelopes(ctx, "o", store.EnvelopeQuery{After: cursor, Limit: 4})
				if err != nil {
					break
				}
				seen = append(seen, p.Envelopes...)
				cursor = p.Next
				if !p.More {
					break
				}
			}
		}
		done <- seen
	}()
	var want []store.StoredEnvelope
	for i := range 10 {
		want = append(want, publish(t, s, "o", Envelope("notifications.agent.s", "", T0, fmt.Sprint(i)), false))
	}
	select {
	case seen := <-done:
		sameEnvelopes(t, "live tail", seen, want)
	case <-time.After(wait):
		t.Fatal("live tail did not reach the last envelope")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.After(wait); ; {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("envelope subscription not closed by Close")
		}
	}
}

func testEnvCanceledContext(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.AppendEnvelope(ctx, "o", Envelope("notifications.agent.s", "k", T0, ""), Window); !errors.Is(err, context.Canceled) {
		t.Fatalf("AppendEnvelope with a canceled context: %v", err)
	}
	if e := publish(t, s, "o", Envelope("notifications.agent.s", "k", T0, ""), false); e.Seq != 1 {
		t.Fatalf("after a canceled publish seq %d", e.Seq)
	}
}

func testEnvClosed(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	publish(t, s, "o", Envelope("notifications.agent.s", "k", T0, ""), false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"AppendEnvelope": func() error {
			_, _, err := s.AppendEnvelope(ctx, "o", Envelope("notifications.agent.s", "", T0, ""), Window)
			return err
		},
		"ReadEnvelopes":   func() error { _, err := s.ReadEnvelopes(ctx, "o", store.EnvelopeQuery{Limit: 1}); return err },
		"LastEnvelopeSeq": func() error { _, err := s.LastEnvelopeSeq(ctx, "o"); return err },
		"ExpireEnvelopes": func() error { _, err := s.ExpireEnvelopes(ctx, T0, 1); return err },
		"RecordSessionDeliveries": func() error {
			return s.RecordSessionDeliveries(ctx, "o", "s", []store.SessionDelivery{{DedupeKey: "k"}}, T0, Window)
		},
		"SessionDeliveries":       func() error { _, err := s.SessionDeliveries(ctx, "o", "s", []string{"k"}, T0); return err },
		"ExpireSessionDeliveries": func() error { _, err := s.ExpireSessionDeliveries(ctx, T0, 1); return err },
	} {
		if err := call(); !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	ch, cancel := s.SubscribeEnvelopes("o")
	defer cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("SubscribeEnvelopes after Close delivered a value")
		}
	case <-time.After(wait):
		t.Fatal("SubscribeEnvelopes after Close: channel not closed")
	}
}
