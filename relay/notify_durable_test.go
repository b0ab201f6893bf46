package relay_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/envelope"
)

// collectAll reads envelope frames until every marker (a source_event_id) was seen and returns
// them sorted: live role-lane frames have no fixed place among stored ones.
func collectAll(t *testing.T, s *sseStream, markers ...string) []string {
	t.Helper()
	var got []string
	for seen := 0; seen < len(markers); {
		f := s.next()
		item := f.ID + " " + frameTopic(t, f)
		got = append(got, item)
		for _, m := range markers {
			if strings.HasSuffix(item, "#"+m) {
				seen++
			}
		}
		if len(got) > 1000 {
			t.Fatal("markers missing")
		}
	}
	slices.Sort(got)
	return got
}

// Session dedupe across a restart: the dedupe keys a session got before the relay restarted
// (stored envelopes and role-lane envelopes alike) are skipped by the session's next stream on
// the new relay, whatever topic carries them; another session gets everything; the sweeper
// forgets the keys after the 72 h window.
func TestNotifySessionDedupeAcrossRestart(t *testing.T) {
	clk := newFakeClock()
	h := newClockHarness(t, clk)
	q := query("subject", "notifications.slack.>", "subject", "notifications.role.>", "session", "ses_A")
	s1 := h.openStream("", q, "")
	h.publishOK("", env("notifications.slack.T1.C1.message", envelope.SourceSlack, "Ev1", "slack.Ev1"))
	h.publishOK("", env("notifications.role.reviewer", envelope.SourceAgent, "R1", "role.R1"))
	h.publishOK("", env("notifications.slack.T1.C1.message", envelope.SourceSlack, "end", "slack.end"))
	got := collectAll(t, s1, "Ev1", "R1", "end")
	if want := []string{" notifications.role.reviewer#R1", "1 notifications.slack.T1.C1.message#Ev1", "2 notifications.slack.T1.C1.message#end"}; !slices.Equal(got, want) {
		t.Fatalf("before the restart: %q, want %q", got, want)
	}
	// The stream's handler has returned, so every flush it made is recorded.
	s1.cancel()
	h.waitSubscribers(0)
	if d, err := h.store.SessionDeliveries(t.Context(), "local", "ses_A", []string{"slack.Ev1", "role.R1", "slack.end"}, time.Time{}); err != nil ||
		len(d) != 3 || d["slack.Ev1"].Seq != 1 || d["role.R1"].Seq != 0 || d["slack.end"].Seq != 2 {
		t.Fatalf("stored session keys: %+v, %v", d, err)
	}

	h = h.restart(clk)
	clk.Advance(time.Hour)
	s2 := h.openStream("", q, "")                                                          // replays from the start of the retention
	other := h.openStream("", query("subject", "notifications.>", "session", "ses_B"), "") // another session
	// The thread copy of Ev1 (same key, another topic: stored anew) and R1 again are skipped.
	h.publishOK("", env("notifications.slack.T1.C1.thread.1.message", envelope.SourceSlack, "Ev1", "slack.Ev1"))
	h.publishOK("", env("notifications.role.reviewer", envelope.SourceAgent, "R1", "role.R1"))
	h.publishOK("", env("notifications.role.reviewer", envelope.SourceAgent, "R2", "role.R2"))
	h.publishOK("", env("notifications.slack.T1.C1.message", envelope.SourceSlack, "end2", "slack.end2"))
	got = collectAll(t, s2, "R2", "end2")
	if want := []string{" notifications.role.reviewer#R2", "4 notifications.slack.T1.C1.message#end2"}; !slices.Equal(got, want) {
		t.Fatalf("after the restart: %q, want %q", got, want)
	}
	got = collectAll(t, other, "R1", "R2", "end2")
	if want := []string{" notifications.role.reviewer#R1", " notifications.role.reviewer#R2", "1 notifications.slack.T1.C1.message#Ev1",
		"2 notifications.slack.T1.C1.message#end", "4 notifications.slack.T1.C1.message#end2"}; !slices.Equal(got, want) {
		t.Fatalf("another session: %q, want %q", got, want)
	}
	s2.cancel()
	other.cancel()
	h.waitSubscribers(0)

	// 72 hours after they were delivered the keys are forgotten (and their envelopes are past
	// the retention too): a new copy of Ev1 reaches the session again.
	clk.Advance(envelope.DeliveryDuplicateWindow + time.Second)
	if err := h.server.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d, err := h.store.SessionDeliveries(t.Context(), "local", "ses_A", []string{"slack.Ev1", "role.R1", "slack.end", "role.R2", "slack.end2"}, time.Time{}); err != nil || len(d) != 0 {
		t.Fatalf("session keys after the sweep: %+v, %v", d, err)
	}
	s3 := h.openStream("", q, "")
	h.publishOK("", env("notifications.slack.T1.C1.message", envelope.SourceSlack, "Ev1", "slack.Ev1"))
	if got := collectUntil(t, s3, "Ev1"); !slices.Equal(got, []string{"5 notifications.slack.T1.C1.message#Ev1"}) {
		t.Fatalf("after the window: %q", got)
	}
}
