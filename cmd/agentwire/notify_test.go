package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/envelope"
)

func cliEnvelope(topic, id, key string) string {
	return string(envelope.Envelope{EventID: "5d41402abc4b2a76b9719d911017c59" + id[len(id)-1:], Source: envelope.SourceGithub,
		SourceEventID: id, Topic: topic, DedupeKey: key, IssuedAt: 1760000000000,
		PayloadSummary: "event " + id, TraceID: "0af7651916cd43dd"}.AppendJSON(nil))
}

func TestNotifyPublishAndStream(t *testing.T) {
	url, _, _ := startServe(t, serveOpts(filepath.Join(t.TempDir(), "data")))
	in := strings.Join([]string{
		cliEnvelope("notifications.github.acme.widgets.pr.42", "d-1", "github.d-1"),
		"",
		cliEnvelope("notifications.github.acme.widgets.pr.42", "d-1", "github.d-1"), // duplicate
		`{"topic":"notifications.x"}`,
		cliEnvelope("notifications.github.acme.gadgets.pr.7", "d-2", "github.d-2"),
		cliEnvelope("notifications.agent.ses_1", "d-3", "github.d-3"),
		cliEnvelope("other.topic", "d-4", "github.d-4"),
	}, "\n") + "\n"
	code, out, errs := runCLI(t, in, "notify", "publish", "--url", url)
	want := `{"duplicate":false,"seq":1}
{"duplicate":true,"seq":1}
line 4: event_id is required
line 4: source is required
line 4: source_event_id is required
line 4: dedupe_key is required
line 4: issued_at must be set
line 4: payload_summary is required
line 4: trace_id is required
{"duplicate":false,"seq":2}
{"duplicate":false,"seq":3}
line 7: topic must be a subject under notifications.
`
	if code != 1 || errs != "" || out != want {
		t.Fatalf("publish: exit %d err %q out\n%s", code, errs, out)
	}

	code, out, errs = runCLI(t, "", "notify", "stream", "--url", url, "--subject", "notifications.github.*.widgets.>",
		"--subject", "notifications.agent.>", "--subject", "notifications.github.>", "--count", "3", "--ids")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || errs != "" || len(lines) != 3 || !strings.HasPrefix(lines[0], "1 {") || !strings.HasPrefix(lines[1], "2 {") ||
		!strings.HasPrefix(lines[2], "3 {") || !strings.Contains(lines[2], `"topic":"notifications.agent.ses_1"`) {
		t.Fatalf("stream: exit %d err %q out\n%s", code, errs, out)
	}
	// Resume after 2; the envelope lines pass `envelope validate`.
	code, out, _ = runCLI(t, "", "notify", "stream", "--url", url, "--subject", "notifications.>", "--last-event-id", "2", "--count", "1")
	if code != 0 || !strings.Contains(out, `"source_event_id":"d-3"`) {
		t.Fatalf("resume: %d %q", code, out)
	}
	if code, vout, _ := runCLI(t, out, "envelope", "validate"); code != 0 || vout != "" {
		t.Fatalf("validate streamed envelope: %d %q", code, vout)
	}
	// A session skips a dedupe key it already got: the mention copy of d-1 (seq 4) is never
	// printed for session S, on the first connection or the next.
	_, _, _ = runCLI(t, cliEnvelope("notifications.github.acme.widgets.pr.42.mention", "d-1", "github.d-1")+"\n", "notify", "publish", "--url", url)
	code, out, _ = runCLI(t, "", "notify", "stream", "--url", url, "--subject", "notifications.github.>", "--session", "S", "--count", "2", "--ids")
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], "2 ") {
		t.Fatalf("session: %d %q", code, out)
	}
	_, _, _ = runCLI(t, cliEnvelope("notifications.github.acme.widgets.pr.43", "d-5", "github.d-5")+"\n", "notify", "publish", "--url", url)
	code, out, _ = runCLI(t, "", "notify", "stream", "--url", url, "--subject", "notifications.github.>", "--session", "S", "--count", "1", "--ids")
	if code != 0 || !strings.HasPrefix(out, "5 ") {
		t.Fatalf("session again: %d %q", code, out)
	}
}

func TestNotifyCLIUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"no subject", []string{"notify", "stream"}},
		{"bad subject", []string{"notify", "stream", "--subject", "notifications.>.x"}},
		{"bad last id", []string{"notify", "stream", "--subject", "notifications.>", "--last-event-id", "x"}},
		{"missing file", []string{"notify", "publish", "/nonexistent/file"}},
		{"two files", []string{"notify", "publish", "a", "b"}},
		{"bare group", []string{"notify"}},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, "", c.args...)
		if code != 2 || !strings.HasPrefix(errs, "agentwire: ") {
			t.Errorf("%s: exit %d err %q", c.name, code, errs)
		}
	}
}
