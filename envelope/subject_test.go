package envelope

import (
	"strings"
	"testing"
)

// TestSubjectHelpers covers every example of envelope.md §3.3–§3.5 and §7 cases 21–32.
func TestSubjectHelpers(t *testing.T) {
	tests := []struct{ name, got, want string }{
		// §3.5 table examples, in table order.
		{"agent", AgentSubject("ses_123"), "notifications.agent.ses_123"},
		{"role", RoleSubject("reviewer"), "notifications.role.reviewer"},
		{"github", GithubSubject("acme", ".github", "mention"), "notifications.github.acme._github.mention"},
		{"github-resource", GithubResourceSubject("acme", "widgets", "pr", "42"), "notifications.github.acme.widgets.pr.42"},
		{"github-push tag", GithubPushSubject("acme", "widgets", "tag", "v1.0.0"), "notifications.github.acme.widgets.push.tag.v1_0_0"},
		{"github-workflow", GithubWorkflowSubject("acme", "widgets", "ci.yml", "completed"), "notifications.github.acme.widgets.workflow.ci_yml.completed"},
		{"slack", SlackSubject("T01234567", "C0A0DHVU8HE", "message"), "notifications.slack.T01234567.C0A0DHVU8HE.message"},
		{"slack-thread", SlackThreadSubject("T01234567", "C0A0DHVU8HE", "1234567890.123456", "message"), "notifications.slack.T01234567.C0A0DHVU8HE.thread.1234567890_123456.message"},
		{"ghostwispr", GhostWisprSubject("20260326041405", "session.ended"), "notifications.ghostwispr.20260326041405.session.ended"},
		{"whatsapp", WhatsappSubject("15551234567", "5551234567@s.whatsapp.net", "message"), "notifications.whatsapp.15551234567.5551234567@s.whatsapp.net.message"},
		{"dispatch-issue", DispatchIssueSubject("DSP-1", "ask.opened"), "notifications.dispatch.issue.DSP-1.ask.opened"},
		{"dispatch-document", DispatchDocumentSubject("DSP", "roadmap", "comment.created"), "notifications.dispatch.document.DSP.roadmap.comment.created"},
		{"legion-controller-notice", LegionControllerNoticeSubject("legion"), "notifications.legion.legion.controller"},
		{"exception", ExceptionSubject("notifications.agent.ses_1"), "notifications.envoy.exceptions.notifications.agent.ses_1"},
		{"agent-stream-frames", AgentStreamFramesSubject("ses_1"), "agentstream.ses_1.frames"},
		{"agent-stream-control", AgentStreamControlSubject("ses_1"), "agentstream.ses_1.control"},
		// §3.5 notes.
		{"push branch keeps slash", GithubPushSubject("acme", "widgets", "branch", "feat/foo"), "notifications.github.acme.widgets.push.branch.feat/foo"},
		{"push release branch", GithubPushSubject("acme", "widgets", "branch", "release/1.2"), "notifications.github.acme.widgets.push.branch.release/1_2"},
		{"kind spans tokens", GithubSubject("acme", "widgets", "pr.42.comment"), "notifications.github.acme.widgets.pr.42.comment"},
		{"thread starts with channel prefix", SlackThreadSubject("T1", "C1", "1.2", "mention")[:len(SlackSubject("T1", "C1", ""))], SlackSubject("T1", "C1", "")},
		// §7 cases 21–31.
		{"case 21", GithubSubject("acme", ".github", "pr.7"), "notifications.github.acme._github.pr.7"},
		{"case 22", GithubSubject("my org", "widgets", "mention"), "notifications.github.my_org.widgets.mention"},
		{"case 23", GithubResourceSubject("acme", "widgets", "issue", "9"), "notifications.github.acme.widgets.issue.9"},
		{"case 24", GithubPushSubject("acme", "widgets", "branch", "feat/foo"), "notifications.github.acme.widgets.push.branch.feat/foo"},
		{"case 25", GithubWorkflowSubject("acme", "widgets", "ci.yaml", "requested"), "notifications.github.acme.widgets.workflow.ci_yaml.requested"},
		{"case 26", SlackThreadSubject("T01234567", "C0A0DHVU8HE", "1234567890.123456", "mention"), "notifications.slack.T01234567.C0A0DHVU8HE.thread.1234567890_123456.mention"},
		{"case 27", WhatsappSubject("15551234567", "5551234567@s.whatsapp.net", "message"), "notifications.whatsapp.15551234567.5551234567@s.whatsapp.net.message"},
		{"case 28", DispatchIssueSubject("DSP-1", "ask.opened"), "notifications.dispatch.issue.DSP-1.ask.opened"},
		{"case 29", LegionControllerNoticeSubject("legion"), "notifications.legion.legion.controller"},
		{"case 30 control", AgentStreamControlSubject("ses_1"), "agentstream.ses_1.control"},
		{"case 30 agent", AgentSubject("ses_123"), "notifications.agent.ses_123"},
		{"case 31", ExceptionSubject("notifications.role.reviewer"), "notifications.envoy.exceptions.notifications.role.reviewer"},
		// Unsanitized parameters stay verbatim.
		{"owner sanitized, kind verbatim", GithubSubject("a*b", "c>d", "x y"), "notifications.github.a_b.c_d.x y"},
		{"workflow action verbatim", GithubWorkflowSubject("o", "r", "f", "in_progress"), "notifications.github.o.r.workflow.f.in_progress"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestSanitizeSubjectSegment covers §3.3 and §7 cases 32 and 48.
func TestSanitizeSubjectSegment(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ci.yml", "ci_yml"},
		{"v1.0.0", "v1_0_0"},
		{"main", "main"},
		{"", ""},
		{"feat/foo", "feat/foo"},
		{"a b\t*>.c", "a_b____c"},
		{"\r\n", "__"},
		{"a.b", "a_b"},
		{"-@:/é\u00a0\v\f", "-@:/é\u00a0\v\f"}, // only the seven characters change
		{"..", "__"},
	}
	for _, tt := range tests {
		if got := SanitizeSubjectSegment(tt.in); got != tt.want {
			t.Errorf("SanitizeSubjectSegment(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if SubjectSegmentReplaced != ". \t\r\n*>" || len(SubjectSegmentReplaced) != 7 {
		t.Fatalf("SubjectSegmentReplaced = %q", SubjectSegmentReplaced)
	}
	want := []string{".", " ", "\t", "\r", "\n", "*", ">"}
	for i, c := range SubjectSegmentReplaced {
		if string(c) != want[i] {
			t.Fatalf("SubjectSegmentReplaced[%d] = %q", i, c)
		}
	}
}

func TestPrefixes(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{AgentTopicPrefix, "notifications.agent."},
		{RoleTopicPrefix, "notifications.role."},
		{GhostWisprTopicPrefix, "notifications.ghostwispr."},
		{DispatchTopicPrefix, "notifications.dispatch."},
		{DispatchIssueTopicPrefix, "notifications.dispatch.issue."},
		{DispatchDocumentTopicPrefix, "notifications.dispatch.document."},
		{LegionNoticeTopicPrefix, "notifications.legion."},
		{ExceptionTopicPrefix, "notifications.envoy.exceptions."},
		{AgentStreamSubjectPrefix, "agentstream."},
	} {
		if tt.got != tt.want {
			t.Errorf("prefix %q, want %q", tt.got, tt.want)
		}
	}
	if AgentStreamProtocol != 1 {
		t.Errorf("AgentStreamProtocol = %d", AgentStreamProtocol)
	}
}

func TestSubjectHelperTable(t *testing.T) {
	kinds := []string{"agent", "role", "github", "github-resource", "github-push", "github-workflow", "slack",
		"slack-thread", "ghostwispr", "whatsapp", "dispatch-issue", "dispatch-document", "legion-controller-notice",
		"exception", "agent-stream-frames", "agent-stream-control", "sanitize-segment"}
	hs := SubjectHelpers()
	if len(hs) != len(kinds) {
		t.Fatalf("%d helpers", len(hs))
	}
	for i, h := range hs {
		if h.Kind != kinds[i] {
			t.Errorf("helper %d kind %q, want %q", i, h.Kind, kinds[i])
		}
		args := make([]string, len(h.Params))
		for j := range args {
			args[j] = "p" + h.Params[j]
		}
		if out := h.Build(args...); out == "" {
			t.Errorf("%s built nothing", h.Kind)
		}
	}
	h, ok := LookupSubjectHelper("github-push")
	if !ok || h.Build("acme", "widgets", "branch", "feat/foo") != "notifications.github.acme.widgets.push.branch.feat/foo" {
		t.Fatal("LookupSubjectHelper(github-push)")
	}
	if _, ok := LookupSubjectHelper("nope"); ok {
		t.Fatal("unknown kind found")
	}
}

// TestSubjectValidity covers every §3.2 message and §7 cases 35–36.
func TestSubjectValidity(t *testing.T) {
	long := strings.Repeat("a", MaxSubjectBytes)
	tests := []struct {
		s         string
		publish   string // "" = valid
		subscribe string
	}{
		{"notifications.agent.ses_1", "", ""},
		{"", "subject must not be empty", "subject must not be empty"},
		{long, "", ""},
		{long + "a", "subject is longer than 4032 bytes", "subject is longer than 4032 bytes"},
		{long + " ..*", "subject is longer than 4032 bytes", "subject is longer than 4032 bytes"},
		{".a", "subject has an empty token", "subject has an empty token"},
		{"a.", "subject has an empty token", "subject has an empty token"},
		{"notifications..x", "subject has an empty token", "subject has an empty token"},
		{".", "subject has an empty token", "subject has an empty token"},
		{"a b..c", "subject has an empty token", "subject has an empty token"},
		{"a b", "subject must not contain whitespace", "subject must not contain whitespace"},
		{"a\tb", "subject must not contain whitespace", "subject must not contain whitespace"},
		{"a\rb", "subject must not contain whitespace", "subject must not contain whitespace"},
		{"a\nb", "subject must not contain whitespace", "subject must not contain whitespace"},
		{"a\u00a0b", "", ""}, // only space, tab, CR and LF count
		{"notifications.agent.*", "subject must not contain wildcards", ""},
		{"notifications.>", "subject must not contain wildcards", ""},
		{"*", "subject must not contain wildcards", ""},
		{">", "subject must not contain wildcards", ""},
		{"a*.b", "subject must not contain wildcards", "subject wildcard must be a whole token"},
		{"a.b>", "subject must not contain wildcards", "subject wildcard must be a whole token"},
		{"a.*>", "subject must not contain wildcards", "subject wildcard must be a whole token"},
		{"notifications.>.x", "subject must not contain wildcards", "subject '>' must be the last token"},
		{">.>", "subject must not contain wildcards", "subject '>' must be the last token"},
		{"a.>.b*", "subject must not contain wildcards", "subject wildcard must be a whole token"}, // rule 6 before rule 7
		{"*.*.>", "subject must not contain wildcards", ""},
	}
	str := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	for _, tt := range tests {
		name := tt.s
		if len(name) > 40 {
			name = name[len(name)-10:]
		}
		if got := str(ValidPublishSubject(tt.s)); got != tt.publish {
			t.Errorf("ValidPublishSubject(%q) = %q, want %q", name, got, tt.publish)
		}
		if got := str(ValidSubscribeSubject(tt.s)); got != tt.subscribe {
			t.Errorf("ValidSubscribeSubject(%q) = %q, want %q", name, got, tt.subscribe)
		}
	}
}

// TestMatchSubject covers §3.1 and §7 cases 33–34.
func TestMatchSubject(t *testing.T) {
	tests := []struct {
		pattern, subject string
		want             bool
	}{
		{"notifications.github.acme.widgets.>", "notifications.github.acme.widgets.pr.42", true},
		{"notifications.github.acme.widgets.>", "notifications.github.acme.widgets", false},
		{"notifications.slack.T1.*.message", "notifications.slack.T1.C1.thread.1_2.message", false},
		{"notifications.slack.T1.*.message", "notifications.slack.T1.C1.message", true},
		{"notifications.>", "notifications", false},
		{"notifications.>", "notifications.a", true},
		{">", "a", true},
		{">", "a.b.c", true},
		{"*", "a", true},
		{"*", "a.b", false},
		{"*.*", "a.b", true},
		{"a.*", "a", false},
		{"a", "a", true},
		{"a", "a.b", false},
		{"a.b", "a", false},
		{"a*", "ab", false},
		{"a*", "a*", true},
		{"a.>.c", "a.b.c", false}, // '>' not last is a literal token
		{"a.>.c", "a.>.c", true},
		{"a.*.>", "a.b.c", true},
		{"a.*.>", "a.b", false},
		{"notifications.envoy.exceptions.notifications.agent.>", "notifications.envoy.exceptions.notifications.agent.ses_1", true},
		{"notifications.agent.>", "notifications.agentx.y", false},
		{"Notifications.>", "notifications.a", false},
		{"", "", true},
	}
	for _, tt := range tests {
		if got := MatchSubject(tt.pattern, tt.subject); got != tt.want {
			t.Errorf("MatchSubject(%q, %q) = %v, want %v", tt.pattern, tt.subject, got, tt.want)
		}
		if got := matchReference(tt.pattern, tt.subject); got != tt.want {
			t.Errorf("reference(%q, %q) = %v, want %v", tt.pattern, tt.subject, got, tt.want)
		}
	}
}
