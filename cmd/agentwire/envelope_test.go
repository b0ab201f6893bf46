package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runEnvelopeCLI(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const cliValidEnvelope = `{"event_id":"e1","source":"agent","source_event_id":"s1","topic":"notifications.agent.ses_1",` +
	`"dedupe_key":"publish.0123456789abcdef0123456789abcdef","issued_at":1760000000000,"payload_summary":"hi","trace_id":"t1"}`

func TestEnvelopeValidate(t *testing.T) {
	withKey := func(extra string) string { return strings.TrimSuffix(cliValidEnvelope, "}") + "," + extra + "}" }
	tests := []struct {
		name  string
		input string
		code  int
		want  string
	}{
		{"valid", cliValidEnvelope + "\n", 0, ""},
		{"empty input", "", 0, ""},
		{"blank lines skipped but counted", "\n  \t\n" + cliValidEnvelope + "\n\n" + withKey(`"in_reply_to":""`) + "\n", 1,
			"line 5: in_reply_to must not be empty\n"},
		{"every problem of every line", withKey(`"urgency":"","sender":{"session_id":""}`) + "\n" + `null` + "\n" + cliValidEnvelope, 1,
			"line 1: urgency must not be empty\nline 1: sender.session_id must not be empty\nline 1: sender.session_id is required\n" +
				"line 2: event_id is required\nline 2: source is required\nline 2: source_event_id is required\n" +
				"line 2: topic is required\nline 2: dedupe_key is required\nline 2: issued_at must be set\n" +
				"line 2: payload_summary is required\nline 2: trace_id is required\n"},
		{"case 14 order", `{"event_id":"e1","source":"bogus","source_event_id":"s1","topic":"","dedupe_key":"k","issued_at":1,` +
			`"payload_summary":"hi","trace_id":"t1","in_reply_to":" ","urgency":"x","sender":{"session_id":" "}}`, 1,
			"line 1: topic is required\nline 1: in_reply_to must not be empty\n" +
				"line 1: source must be one of: agent, human, envoy, github, slack, whatsapp, ghostwispr, dispatch\n" +
				"line 1: urgency must be one of: low, med, high, blocking\nline 1: sender.session_id is required\n"},
		{"trailing CR is white space", cliValidEnvelope + "\r\n", 0, ""},
		{"not JSON", "{\n", 1, "line 1: envelope is not valid JSON text at byte offset 1.\n"},
		{"array", "[]\n", 1, "line 1: envelope must be a JSON object or null\n"},
		{"duplicate member", withKey(`"in_reply_to":"","in_reply_to":"x"`), 1,
			"line 1: envelope contains duplicate member name \"in_reply_to\".\n"},
		{"type error", strings.Replace(cliValidEnvelope, "1760000000000", "1.0", 1), 1,
			"line 1: issued_at must be an integer in the int64 range\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, args := range [][]string{{"envelope", "validate"}, {"envelope", "validate", "-"}} {
				code, out, errs := runEnvelopeCLI(tt.input, args...)
				if code != tt.code || out != tt.want || errs != "" {
					t.Fatalf("%v: exit %d\nstdout %q\nstderr %q\nwant exit %d stdout %q", args, code, out, errs, tt.code, tt.want)
				}
			}
		})
	}
}

func TestEnvelopeValidateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.ndjson")
	// A line longer than 64 KiB is read whole.
	long := strings.TrimSuffix(cliValidEnvelope, "}") + `,"payload":"` + strings.Repeat("x", 200000) + `"}`
	if err := os.WriteFile(path, []byte(long+"\n"+`{"event_id":""}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runEnvelopeCLI("", "envelope", "validate", path)
	if code != 1 || !strings.HasPrefix(out, "line 2: event_id is required\n") || strings.Contains(out, "line 1:") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"envelope", "validate", filepath.Join(dir, "missing")},
		{"envelope", "validate", path, path},
		{"envelope"},
		{"envelope", "nope"},
		{"envelope", "validate", "--bogus"},
	} {
		code, out, errs := runEnvelopeCLI("", args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "agentwire: ") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, code, out, errs)
		}
	}
}

func TestSubjectCommand(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"agent", "ses_123"}, "notifications.agent.ses_123"},
		{[]string{"role", "reviewer"}, "notifications.role.reviewer"},
		{[]string{"github", "acme", ".github", "mention"}, "notifications.github.acme._github.mention"},
		{[]string{"github-resource", "acme", "widgets", "pr", "42"}, "notifications.github.acme.widgets.pr.42"},
		{[]string{"github-push", "acme", "widgets", "branch", "feat/foo"}, "notifications.github.acme.widgets.push.branch.feat/foo"},
		{[]string{"github-workflow", "acme", "widgets", "ci.yml", "completed"}, "notifications.github.acme.widgets.workflow.ci_yml.completed"},
		{[]string{"slack", "T01234567", "C0A0DHVU8HE", "message"}, "notifications.slack.T01234567.C0A0DHVU8HE.message"},
		{[]string{"slack-thread", "T01234567", "C0A0DHVU8HE", "1234567890.123456", "message"}, "notifications.slack.T01234567.C0A0DHVU8HE.thread.1234567890_123456.message"},
		{[]string{"ghostwispr", "20260326041405", "session.ended"}, "notifications.ghostwispr.20260326041405.session.ended"},
		{[]string{"whatsapp", "15551234567", "5551234567@s.whatsapp.net", "message"}, "notifications.whatsapp.15551234567.5551234567@s.whatsapp.net.message"},
		{[]string{"dispatch-issue", "DSP-1", "ask.opened"}, "notifications.dispatch.issue.DSP-1.ask.opened"},
		{[]string{"dispatch-document", "DSP", "roadmap", "comment.created"}, "notifications.dispatch.document.DSP.roadmap.comment.created"},
		{[]string{"legion-controller-notice", "legion"}, "notifications.legion.legion.controller"},
		{[]string{"exception", "notifications.agent.ses_1"}, "notifications.envoy.exceptions.notifications.agent.ses_1"},
		{[]string{"agent-stream-frames", "ses_1"}, "agentstream.ses_1.frames"},
		{[]string{"agent-stream-control", "ses_1"}, "agentstream.ses_1.control"},
		{[]string{"sanitize-segment", "a b\t*>.c"}, "a_b____c"},
		{[]string{"sanitize-segment", ""}, ""},
		{[]string{"sanitize-segment", "-x.y"}, "-x_y"},
		{[]string{"--", "sanitize-segment", "--help"}, "--help"},
	}
	for _, tt := range tests {
		code, out, errs := runEnvelopeCLI("", append([]string{"subject"}, tt.args...)...)
		if code != 0 || out != tt.want+"\n" || errs != "" {
			t.Errorf("subject %q: exit %d stdout %q stderr %q, want %q", tt.args, code, out, errs, tt.want)
		}
	}
	for _, args := range [][]string{
		{"subject"},
		{"subject", "nope", "x"},
		{"subject", "agent"},
		{"subject", "agent", "a", "b"},
		{"subject", "github-push", "acme", "widgets", "branch"},
		{"subject", "sanitize-segment"},
	} {
		code, out, errs := runEnvelopeCLI("", args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "agentwire: ") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, code, out, errs)
		}
	}
	code, out, _ := runEnvelopeCLI("", "subject", "--help")
	if code != 0 || !strings.Contains(out, "github-push OWNER REPO REFTYPE REFNAME") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}
