package relay_test

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/relay"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// POST /v1/notifications stores valid envelopes with a store sequence and answers a repeat of a
// key that names its event with the original's seq; a key that does not name its event never
// deduplicates; the same key on another topic is another message id (envelope.md §4.3); dedupe
// is per org.
func TestNotifyPublishDedupe(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	pr := "notifications.github.acme.widgets.pr.42"
	cases := []struct {
		name  string
		token string
		body  []byte
		want  relay.PublishResult
	}{
		{"first", tokA1, env(pr, envelope.SourceGithub, "d-7", "github.d-7"), relay.PublishResult{Seq: 1}},
		{"repeat names its event", tokA1, env(pr, envelope.SourceGithub, "d-7", "github.d-7"), relay.PublishResult{Duplicate: true, Seq: 1}},
		{"same instance other token", tokA2, env(pr, envelope.SourceGithub, "d-7", "github.d-7"), relay.PublishResult{Duplicate: true, Seq: 1}},
		{"same key other topic", tokA1, env(pr+".mention", envelope.SourceGithub, "d-7", "github.d-7"), relay.PublishResult{Seq: 2}},
		{"key not naming its event", tokA1, env("notifications.agent.ses_1", envelope.SourceAgent, "x", "k-1"), relay.PublishResult{Seq: 3}},
		{"again not naming its event", tokA1, env("notifications.agent.ses_1", envelope.SourceAgent, "x", "k-1"), relay.PublishResult{Seq: 4}},
		{"minted key names its event", tokA1, env("notifications.agent.ses_1", envelope.SourceAgent, "y", "publish.5d41402abc4b2a76b9719d911017c592"), relay.PublishResult{Seq: 5}},
		{"minted key repeat", tokA1, env("notifications.agent.ses_1", envelope.SourceAgent, "z", "publish.5d41402abc4b2a76b9719d911017c592"), relay.PublishResult{Duplicate: true, Seq: 5}},
		{"other org is not a duplicate", tokG1, env(pr, envelope.SourceGithub, "d-7", "github.d-7"), relay.PublishResult{Seq: 6}},
		{"dispatch always names its event", tokG1, env("notifications.dispatch.issue.DSP-1.ask.opened", envelope.SourceDispatch, "m", "m:1"), relay.PublishResult{Seq: 7}},
		{"dispatch repeat", tokG1, env("notifications.dispatch.issue.DSP-1.ask.opened", envelope.SourceDispatch, "m2", "m:1"), relay.PublishResult{Duplicate: true, Seq: 7}},
	}
	for _, c := range cases {
		if got := h.publishOK(c.token, c.body); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The duplicate window is exactly 72 h of the relay's clock.
func TestNotifyDedupeWindow(t *testing.T) {
	clk := newFakeClock()
	h := newClockHarness(t, clk)
	body := env("notifications.slack.T1.C1.message", envelope.SourceSlack, "Ev1", "slack.Ev1")
	if got := h.publishOK("", body); got != (relay.PublishResult{Seq: 1}) {
		t.Fatalf("first: %+v", got)
	}
	clk.Advance(envelope.DeliveryDuplicateWindow - time.Millisecond)
	if got := h.publishOK("", body); got != (relay.PublishResult{Duplicate: true, Seq: 1}) {
		t.Fatalf("inside the window: %+v", got)
	}
	clk.Advance(time.Millisecond)
	if got := h.publishOK("", body); got != (relay.PublishResult{Seq: 2}) {
		t.Fatalf("after the window: %+v", got)
	}
}

// Refusals list every problem (envelope.md §2.4 order, then the relay's subject and dedupe-key
// checks); the bodies are pinned in testdata/notify_refusals.golden.
func TestNotifyRefusals(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	valid := string(env("notifications.agent.ses_1", envelope.SourceAgent, "x", "k"))
	cases := []struct {
		name, token, ctype, body string
	}{
		{"empty object", tokA1, "application/json", `{}`},
		{"null", tokA1, "application/json", `null`},
		{"not an object", tokA1, "application/json", `[1]`},
		{"duplicate member", tokA1, "application/json", `{"topic":"a","topic":"b"}`},
		{"bad source and blank reply", tokA1, "application/json", strings.Replace(valid, `"source":"agent"`, `"source":"bogus","in_reply_to":" "`, 1)},
		{"wire empty strings", tokA1, "application/json", strings.Replace(valid, `"source":"agent"`, `"source":"agent","urgency":"","sender":{"session_id":""}`, 1)},
		{"issued_at fraction", tokA1, "application/json", strings.Replace(valid, `1760000000000`, `1.5`, 1)},
		{"topic not under notifications", tokA1, "application/json", strings.Replace(valid, `notifications.agent.ses_1`, `agentstream.ses_1.frames`, 1)},
		{"topic with wildcard", tokA1, "application/json", strings.Replace(valid, `notifications.agent.ses_1`, `notifications.agent.*`, 1)},
		{"topic with empty token", tokA1, "application/json", strings.Replace(valid, `notifications.agent.ses_1`, `notifications..x`, 1)},
		{"forward dedupe key", tokA1, "application/json", strings.Replace(valid, `"dedupe_key":"k"`, `"dedupe_key":"envoy.role.forward.publish.5d41402abc4b2a76b9719d911017c592"`, 1)},
		{"several relay problems", tokA1, "application/json", strings.Replace(strings.Replace(valid, `notifications.agent.ses_1`, `other.x`, 1), `"dedupe_key":"k"`, `"dedupe_key":"envoy.role.forward.k"`, 1)},
		{"wrong media type", tokA1, "text/plain", valid},
		{"no rights", tokNo, "application/json", valid},
		{"no token", "", "application/json", valid},
	}
	var out bytes.Buffer
	for _, c := range cases {
		code, _, body := h.do("POST", "/v1/notifications", c.token, map[string]string{"Content-Type": c.ctype}, []byte(c.body))
		fmt.Fprintf(&out, "== %s\n%d %s", c.name, code, body)
	}
	golden(t, "notify_refusals.golden", out.Bytes())
	// Nothing refused was stored.
	if got := h.publishOK(tokA1, []byte(valid)); got.Seq != 1 {
		t.Fatalf("after refusals: %+v", got)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Frames of a notification stream: `id:` is the store sequence and `data:` the envelope.
func frameTopic(t *testing.T, f relay.SSEFrame) string {
	t.Helper()
	e, ps := envelope.Decode(f.Data)
	if len(ps) > 0 {
		t.Fatalf("frame %q: %v", f.Data, ps.Err())
	}
	return e.Topic + "#" + e.SourceEventID
}

// collectUntil reads envelope frames until the one whose source_event_id is marker.
func collectUntil(t *testing.T, s *sseStream, marker string) []string {
	t.Helper()
	var got []string
	for {
		f := s.next()
		item := f.ID + " " + frameTopic(t, f)
		got = append(got, item)
		if strings.HasSuffix(item, "#"+marker) {
			return got
		}
		if len(got) > 1000 {
			t.Fatal("no marker")
		}
	}
}

func query(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	return q.Encode()
}

// A stream delivers exactly the envelopes matching any of its patterns (`*` one token, `>` one
// or more), in store order, each once even when several patterns match it.
func TestNotifyStreamWildcards(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name     string
		patterns []string
		want     []string
	}{
		{"star and exact", []string{"notifications.github.*.widgets.>", "notifications.agent.ses_1"}, []string{
			"1 notifications.github.acme.widgets.pr.42#a", "3 notifications.agent.ses_1#c",
			"6 notifications.github.acme.widgets.pr.42.mention#f", "7 notifications.agent.ses_1#end"}},
		{"overlapping patterns", []string{"notifications.>", "notifications.github.>", "notifications.github.acme.widgets.pr.42", "notifications.*.acme.>"}, []string{
			"1 notifications.github.acme.widgets.pr.42#a", "2 notifications.github.acme.gadgets.pr.1#b",
			"3 notifications.agent.ses_1#c", "4 notifications.agent.ses_2#d", "5 notifications.github.acme.widgets#e",
			"6 notifications.github.acme.widgets.pr.42.mention#f", "7 notifications.agent.ses_1#end"}},
		{"greater needs a token", []string{"notifications.github.acme.widgets.>", "notifications.agent.*"}, []string{
			"1 notifications.github.acme.widgets.pr.42#a", "3 notifications.agent.ses_1#c", "4 notifications.agent.ses_2#d",
			"6 notifications.github.acme.widgets.pr.42.mention#f", "7 notifications.agent.ses_1#end"}},
		{"single token star", []string{"notifications.github.acme.*.pr.*", "notifications.agent.ses_1"}, []string{
			"1 notifications.github.acme.widgets.pr.42#a", "2 notifications.github.acme.gadgets.pr.1#b",
			"3 notifications.agent.ses_1#c", "7 notifications.agent.ses_1#end"}},
	}
	var streams []*sseStream
	for _, c := range cases {
		var kv []string
		for _, p := range c.patterns {
			kv = append(kv, "subject", p)
		}
		streams = append(streams, h.openStream("", query(kv...), ""))
	}
	for _, p := range []struct{ topic, id string }{
		{"notifications.github.acme.widgets.pr.42", "a"}, {"notifications.github.acme.gadgets.pr.1", "b"},
		{"notifications.agent.ses_1", "c"}, {"notifications.agent.ses_2", "d"},
		{"notifications.github.acme.widgets", "e"}, {"notifications.github.acme.widgets.pr.42.mention", "f"},
		{"notifications.agent.ses_1", "end"},
	} {
		h.publishOK("", env(p.topic, envelope.SourceGithub, p.id, "github."+p.id))
	}
	for i, c := range cases {
		got := collectUntil(t, streams[i], "end")
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s (live):\n got %q\nwant %q", c.name, got, c.want)
		}
		// The same selection replayed from the store.
		var kv []string
		for _, p := range c.patterns {
			kv = append(kv, "subject", p)
		}
		again := collectUntil(t, h.openStream("", query(kv...), ""), "end")
		if strings.Join(again, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s (replay):\n got %q\nwant %q", c.name, again, c.want)
		}
	}
}

// With `session`, an envelope whose dedupe_key that session already got is skipped, across
// topics and across connections of the session; without it, every stored copy is delivered.
func TestNotifySessionDedupe(t *testing.T) {
	h := newHarness(t)
	s1 := h.openStream("", query("subject", "notifications.slack.>", "session", "ses_A"), "")
	plain := h.openStream("", query("subject", "notifications.slack.>"), "")
	// A Slack thread reply goes to the channel topic and the thread topic with one key.
	h.publishOK("", env("notifications.slack.T1.C1.message", envelope.SourceSlack, "Ev1", "slack.Ev1"))
	h.publishOK("", env("notifications.slack.T1.C1.thread.1234567890_123456.message", envelope.SourceSlack, "Ev1", "slack.Ev1"))
	h.publishOK("", env("notifications.slack.T1.C1.message", envelope.SourceSlack, "end", "slack.end"))
	if got, want := collectUntil(t, s1, "end"), []string{"1 notifications.slack.T1.C1.message#Ev1", "3 notifications.slack.T1.C1.message#end"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("session stream: %q, want %q", got, want)
	}
	if got := collectUntil(t, plain, "end"); len(got) != 3 {
		t.Errorf("plain stream: %q", got)
	}
	// A second connection of the same session replaying from the start skips every key the
	// session got. (Two connections of one session open at once share one delivery per key, so
	// the first is closed first.)
	s1.cancel()
	plain.cancel()
	h.waitSubscribers(0)
	again := h.openStream("", query("subject", "notifications.slack.>", "session", "ses_A"), "")
	h.publishOK("", env("notifications.slack.T1.C1.message", envelope.SourceSlack, "end2", "slack.end2"))
	if got, want := collectUntil(t, again, "end2"), []string{"4 notifications.slack.T1.C1.message#end2"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("second connection: %q, want %q", got, want)
	}
	// Another session is not affected.
	other := h.openStream("", query("subject", "notifications.slack.>", "session", "ses_B"), "")
	h.publishOK("", env("notifications.slack.T1.C1.message", envelope.SourceSlack, "end3", "slack.end3"))
	if got := collectUntil(t, other, "end3"); len(got) != 4 { // Ev1 once
		t.Errorf("other session: %q", got)
	}
}

// Last-Event-ID resumes after that store sequence; without it the stream starts at the
// retention's start; envelopes older than the 72 h retention are never replayed.
func TestNotifyResume(t *testing.T) {
	clk := newFakeClock()
	h := newClockHarness(t, clk)
	for i := 1; i <= 5; i++ {
		h.publishOK("", env("notifications.agent.ses_1", envelope.SourceAgent, "e"+strconv.Itoa(i), "k"))
	}
	q := query("subject", "notifications.agent.>")
	h.publishOK("", env("notifications.agent.ses_1", envelope.SourceAgent, "m1", "k"))
	if got := collectUntil(t, h.openStream("", q, "3"), "m1"); strings.Join(got, "|") != "4 notifications.agent.ses_1#e4|5 notifications.agent.ses_1#e5|6 notifications.agent.ses_1#m1" {
		t.Errorf("resume after 3: %q", got)
	}
	if got := collectUntil(t, h.openStream("", q, ""), "m1"); len(got) != 6 || !strings.HasPrefix(got[0], "1 ") {
		t.Errorf("from the start: %q", got)
	}
	clk.Advance(envelope.DeliveryDuplicateWindow - time.Second)
	h.publishOK("", env("notifications.agent.ses_1", envelope.SourceAgent, "young", "k"))
	clk.Advance(2 * time.Second)
	h.publishOK("", env("notifications.agent.ses_1", envelope.SourceAgent, "m2", "k"))
	if got := collectUntil(t, h.openStream("", q, "0"), "m2"); strings.Join(got, "|") != "7 notifications.agent.ses_1#young|8 notifications.agent.ses_1#m2" {
		t.Errorf("beyond retention: %q", got)
	}
	// The sweeper deletes them; a resume still continues from its id.
	if err := h.server.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := collectUntil(t, h.openStream("", q, "2"), "m2"); strings.Join(got, "|") != "7 notifications.agent.ses_1#young|8 notifications.agent.ses_1#m2" {
		t.Errorf("after sweep: %q", got)
	}
}

// Orgs never see each other's envelopes, and a role lane is relayed live, never stored.
func TestNotifyOrgsAndRoleLane(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	acme := h.openStream(tokA1, query("subject", "notifications.>"), "")
	globex := h.openStream(tokG1, query("subject", "notifications.>"), "")
	h.publishOK(tokA1, env("notifications.agent.ses_1", envelope.SourceAgent, "secret", "k"))
	if got := h.publishOK(tokA1, env("notifications.role.reviewer", envelope.SourceAgent, "role", "k")); got != (relay.PublishResult{}) {
		t.Fatalf("role lane answer: %+v", got)
	}
	h.publishOK(tokA1, env("notifications.agent.ses_1", envelope.SourceAgent, "end", "k"))
	h.publishOK(tokG1, env("notifications.agent.ses_1", envelope.SourceAgent, "end", "k"))
	// The live role-lane frame has no place in store order: when the stream finds it and a
	// store notification pending together, either may be written first.
	got := collectUntil(t, acme, "end")
	if !slices.Contains(got, " notifications.role.reviewer#role") {
		got = append(got, collectUntil(t, acme, "role")...)
	}
	stored := slices.DeleteFunc(slices.Clone(got), func(f string) bool { return f == " notifications.role.reviewer#role" })
	if len(got) != 3 || strings.Join(stored, "|") != "1 notifications.agent.ses_1#secret|2 notifications.agent.ses_1#end" {
		t.Errorf("acme: %q", got)
	}
	if got := collectUntil(t, globex, "end"); strings.Join(got, "|") != "3 notifications.agent.ses_1#end" {
		t.Errorf("globex: %q", got)
	}
	// The role-lane envelope was not stored.
	if got := collectUntil(t, h.openStream(tokA1, query("subject", "notifications.>"), ""), "end"); len(got) != 2 {
		t.Errorf("replay: %q", got)
	}
}

// Only topics in ENVOY_NOTIFICATIONS's subject list are stored (envelope.md §5.1, relay.md
// §5.1.4): every other topic — a role lane and its exception twin, a fan-out exception, any
// other notifications.* subject — answers seq 0, reaches the subscribers connected now and is
// never replayed.
func TestNotifyStoresOnlyStreamSubjects(t *testing.T) {
	h := newHarness(t)
	live := h.openStream("", query("subject", "notifications.>"), "")
	cases := []struct {
		topic  string
		stored bool
	}{
		{"notifications.agent.ses_1", true},
		{"notifications.envoy.exceptions.notifications.agent.ses_1", true},
		{"notifications.github.acme.widgets.pr.1", true},
		{"notifications.role.reviewer", false},
		{"notifications.envoy.exceptions.notifications.role.reviewer", false},
		{"notifications.envoy.exceptions.notifications.github.acme.widgets.pr.1", false},
		{"notifications.foo.bar", false},
		{"notifications.envoy.other", false},
	}
	var wantLive, wantStored []string
	var seq int64
	for i, c := range cases {
		id := fmt.Sprintf("e%d", i)
		got := h.publishOK("", env(c.topic, envelope.SourceAgent, id, "k"+id))
		if c.stored {
			seq++
			if got.Seq != seq || got.Duplicate {
				t.Fatalf("%s: %+v, want seq %d", c.topic, got, seq)
			}
			wantStored = append(wantStored, fmt.Sprintf("%d %s#%s", seq, c.topic, id))
			wantLive = append(wantLive, fmt.Sprintf("%d %s#%s", seq, c.topic, id))
		} else {
			if got != (relay.PublishResult{}) {
				t.Fatalf("%s: %+v, want seq 0", c.topic, got)
			}
			// A repeat is relayed again: there is no store to remember it.
			if again := h.publishOK("", env(c.topic, envelope.SourceAgent, id, "k"+id)); again != (relay.PublishResult{}) {
				t.Fatalf("%s repeated: %+v", c.topic, again)
			}
			wantLive = append(wantLive, " "+c.topic+"#"+id, " "+c.topic+"#"+id)
		}
	}
	h.publishOK("", env("notifications.agent.ses_1", envelope.SourceAgent, "end", "kend"))
	// Live frames have no place in store order; compare as sets.
	got := collectUntil(t, live, "end")
	for len(got) < len(wantLive)+1 {
		f := live.next()
		got = append(got, f.ID+" "+frameTopic(t, f))
	}
	slices.Sort(got)
	want := append(slices.Clone(wantLive), fmt.Sprintf("%d notifications.agent.ses_1#end", seq+1))
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("live:\n got %q\nwant %q", got, want)
	}
	replay := collectUntil(t, h.openStream("", query("subject", "notifications.>"), ""), "end")
	if strings.Join(replay[:len(replay)-1], "|") != strings.Join(wantStored, "|") {
		t.Errorf("replay: %q, want %q", replay, wantStored)
	}
}

// Stream request checks.
func TestNotifyStreamQueryRefusals(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	cases := []struct {
		name, token, query, lastID string
		status                     int
		field, message             string
	}{
		{"no subject", tokA1, "", "", 400, "subject", "At least one subject pattern is required."},
		{"greater not last", tokA1, query("subject", "notifications.>.x"), "", 400, "subject", "subject '>' must be the last token"},
		{"partial wildcard", tokA1, query("subject", "notifications.a*"), "", 400, "subject", "subject wildcard must be a whole token"},
		{"empty token", tokA1, query("subject", "notifications..x"), "", 400, "subject", "subject has an empty token"},
		{"blank session", tokA1, query("subject", "notifications.>", "session", " "), "", 400, "session", "session must not be empty"},
		{"unknown parameter", tokA1, query("subject", "notifications.>", "after", "3"), "", 400, "after", `Unknown query parameter "after".`},
		{"bad last event id", tokA1, query("subject", "notifications.>"), "x", 400, "Last-Event-ID", `Last-Event-ID must be a non-negative integer, got "x".`},
		{"no rights", tokNo, query("subject", "notifications.>"), "", 403, "rights", "The token does not grant the right notify.subscribe."},
	}
	for _, c := range cases {
		hdr := map[string]string{}
		if c.lastID != "" {
			hdr["Last-Event-ID"] = c.lastID
		}
		code, _, body := h.do("GET", "/v1/notifications/stream?"+c.query, c.token, hdr, nil)
		e := errorBody(t, code, body)
		if code != c.status || e.Field != c.field || e.Message != c.message {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
}
