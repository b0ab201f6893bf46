package dispatch_test

import (
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
)

const u1 = "01234567-0000-4000-8000-000000000001"

// TestValidateCall replays the [X] conformance cases of dispatch-tools.md §10 (54–64) and
// further executor-validation cases of §8.2–§8.4.
func TestValidateCall(t *testing.T) {
	host := dispatch.HostContext{DispatchURL: "https://dispatch.test"}
	q790 := strings.Repeat("q", 790)
	cases := []struct {
		name  string
		tool  string
		args  string
		host  dispatch.HostContext
		want  []string
		final string // the arguments the executor uses, when accepted
	}{
		{"55 no owner", "dispatch_message", `{"body":"b"}`, host, []string{"issue is required; supply issue or set LEGION_ISSUE"}, ""},
		{"55 LEGION_ISSUE native", "dispatch_message", `{"body":"b"}`, dispatch.HostContext{LegionIssue: "DSP-7"}, nil, `{"body":"b","issue":"DSP-7"}`},
		{"55 LEGION_ISSUE bad", "dispatch_message", `{"body":"b"}`, dispatch.HostContext{LegionIssue: "abc"},
			[]string{"LEGION_ISSUE must be a native issue key (e.g. LEGION-3), an external owner/repo#n reference, or a bare positive issue number"}, ""},
		{"55 LEGION_ISSUE number without repo", "dispatch_message", `{"body":"b"}`, dispatch.HostContext{LegionIssue: "12"},
			[]string{"issue is required; LEGION_ISSUE needs a GitHub repository in cwd"}, ""},
		{"LEGION_ISSUE number with repo", "dispatch_message", `{"body":"b"}`, dispatch.HostContext{LegionIssue: "12", GitHubRepo: "Acme/Widgets"}, nil,
			`{"body":"b","issue":"acme/widgets#12"}`},
		{"LEGION_ISSUE external", "dispatch_doc_read", `{}`, dispatch.HostContext{LegionIssue: " Acme/Widgets#3 "}, nil, `{"issue":"acme/widgets#3"}`},
		{"a turn failure is not an owner restatement", "dispatch_comment", `{"body":"b","turn":"agent"}`, host,
			[]string{"issue is required; supply issue or set LEGION_ISSUE",
				"Exactly one of issue and project is required; with project, artifact names the document. turn requires reply_to_ask."}, ""},
		{"56 issue and project", "dispatch_doc_read", `{"issue":"DSP-1","project":"CORE","artifact":"a"}`, host,
			[]string{"exactly one of issue and project is required"}, ""},
		{"57 lowercase project", "dispatch_doc_read", `{"project":"core","artifact":"a"}`, host, []string{"project must be a project key such as CORE"}, ""},
		{"58 ask ref not dispatch", "dispatch_ask", `{"ref":"https://elsewhere.test/x","question":"Q"}`, host, []string{"ref must be a dispatch:// reference"}, ""},
		{"58 read DSP-0", "dispatch_read", `{"ref":"dispatch://DSP-0"}`, host,
			[]string{"ref must be a valid dispatch:// reference such as dispatch://KEY-1, dispatch://KEY-1/spec, dispatch://KEY-1/artifact/<slug>, or dispatch://PROJECT/artifact/<slug>"}, ""},
		{"59 project and ref differ", "dispatch_read", `{"project":"CORE","artifact":"roadmap","ref":"dispatch://CORE/artifact/other"}`, host,
			[]string{"project and ref must name the same document"}, ""},
		{"issue and ref differ", "dispatch_doc_read", `{"issue":"DSP-1","ref":"dispatch://DSP-2/spec"}`, host, []string{"issue and ref must name the same issue"}, ""},
		{"60 composed question", "dispatch_ask", `{"question":"` + q790 + `","ref":"dispatch://DSP-1/message/` + u1 + `"}`, host,
			[]string{"question plus ref is 58 characters over the 800-character limit (858/800); shorten the question or drop the ref"}, ""},
		{"question already holds the ref", "dispatch_ask", `{"question":"see dispatch://DSP-1 ` + q790[:700] + `","ref":"dispatch://DSP-1"}`, host, nil, ""},
		{"61 quote without artifact", "dispatch_comment", `{"issue":"DSP-1","body":"b","quote":"q"}`, host, []string{"artifact is required when quote is supplied"}, ""},
		{"quote with a document ref", "dispatch_comment", `{"ref":"dispatch://DSP-1/spec","body":"b","quote":"q"}`, host, nil, ""},
		{"61 reply_to both", "dispatch_comment", `{"issue":"DSP-1","body":"b","reply_to":"` + u1 + `","reply_to_ask":"` + u1 + `"}`, host,
			[]string{"reply_to and reply_to_ask cannot both be set"}, ""},
		{"62 in_reply_to", "dispatch_message", `{"issue":"DSP-1","body":"b","in_reply_to":"abc"}`, host,
			[]string{"in_reply_to must be a full message id (uuid) or a dispatch://KEY/message/<id> reference"}, ""},
		{"in_reply_to ref", "dispatch_message", `{"issue":"DSP-1","body":"b","in_reply_to":"dispatch://DSP-1/message/` + u1 + `"}`, host, nil, ""},
		{"63 resolve_ask comment ref", "dispatch_resolve_ask", `{"ask":"dispatch://DSP-1/comment/` + u1 + `","kind":"resolved","reason":"r"}`, host,
			[]string{"ask must be a bare ask id or a dispatch://.../ask/<id> reference"}, ""},
		{"ask ref short id", "dispatch_edit_ask", `{"ask":"dispatch://DSP-1/ask/0123","question":"Q"}`, host,
			[]string{"ask id 0123 must be a full uuid or a prefix of at least 8 hex characters"}, ""},
		{"ask ref prefix", "dispatch_edit_ask", `{"ask":"dispatch://CORE/artifact/roadmap@v2/ask/01234567-00","question":"Q"}`, host, nil, ""},
		{"63 resolve_comment abc", "dispatch_resolve_comment", `{"comment":"abc"}`, host,
			[]string{"comment must be a bare comment id or a dispatch://.../comment/<id> reference"}, ""},
		{"comment ref bad id", "dispatch_resolve_comment", `{"comment":"dispatch://CORE/artifact/roadmap/comment/xyz"}`, host,
			[]string{"comment id xyz must be a full uuid or a prefix of at least 8 hex characters"}, ""},
		{"63 follow prefix", "dispatch_follow", `{"ask":"01234567","action":"follow"}`, host,
			[]string{"ask must be a full ask id (uuid) or a dispatch://.../ask/<id> reference"}, ""},
		{"follow document ask ref", "dispatch_follow", `{"ask":"dispatch://CORE/artifact/roadmap@v3/ask/` + u1 + `","action":"follow"}`, host, nil, ""},
		{"doc_read version differs", "dispatch_doc_read", `{"ref":"dispatch://CORE/artifact/roadmap@v2","version":3}`, host,
			[]string{"version and ref must name the same version"}, ""},
		{"web link rewritten", "dispatch_read", `{"ref":"https://dispatch.test/issues/DSP-4/conversation?ask=` + u1 + `"}`, host, nil,
			`{"ref":"dispatch://DSP-4/ask/` + u1 + `"}`},
		{"owner problems first, then parse, then executor", "dispatch_comment",
			`{"issue":"nope","body":7,"quote":"q"}`, host,
			[]string{"issue must be a native issue key such as DSP-1 or an external owner/repo#n reference", "body must be a string, not 7", "artifact is required when quote is supplied"}, ""},
		{"64 Example A", "dispatch_message", `{"issue":"DSP-1"}`, host, []string{"body is required (string)"}, ""},
		{"non-owner tool unchanged", "dispatch_search", `{"query":"a"}`, host, []string{"query must be at least 2 characters"}, ""},
		{"undeclared project is the parse's P4 only", "dispatch_issue_update", `{"issue":"DSP-1","project":"CORE","status":"todo"}`, host,
			[]string{`unknown field "project"; allowed: issue, status, title, labels, external_links, route, parent, components`}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, ok := dispatch.Lookup(c.tool)
			if !ok {
				t.Fatal(c.tool)
			}
			args, err := jsonvalue.Parse([]byte(c.args), "arguments")
			if err != nil {
				t.Fatal(err)
			}
			out, problems := dispatch.ValidateCall(spec, args, c.host)
			got := problems.Lines()
			if len(got) == 0 {
				got = nil
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("problems:\n got %q\nwant %q", got, c.want)
			}
			if c.final != "" {
				b, _ := jsonvalue.Marshal(out)
				if string(b) != c.final {
					t.Errorf("arguments %s want %s", b, c.final)
				}
			}
		})
	}
}

// TestCheckConfig is conformance case 54.
func TestCheckConfig(t *testing.T) {
	for _, c := range []struct{ url, token string }{{"https://d.test", ""}, {"", "tok"}, {" ", "tok"}} {
		if err := dispatch.CheckConfig(c.url, c.token); err == nil || err.Error() != "Dispatch is disabled; resolve both DISPATCH_URL and DISPATCH_TOKEN" {
			t.Errorf("%q %q: %v", c.url, c.token, err)
		}
	}
	if dispatch.CheckConfig("https://d.test", "tok") != nil {
		t.Error("configured")
	}
}

func TestParseRef(t *testing.T) {
	cases := []struct {
		ref  string
		ok   bool
		kind dispatch.RefKind
	}{
		{"dispatch://DSP-1", true, dispatch.RefIssue},
		{"dispatch://DSP-1/spec", true, dispatch.RefIssueSpec},
		{"dispatch://DSP-1/artifact/plan@v2", true, dispatch.RefIssueDocument},
		{"dispatch://CORE/artifact/roadmap", true, dispatch.RefProjectDocument},
		{"dispatch://DSP-1/log", true, dispatch.RefIssueLog},
		{"dispatch://DSP-1/children", true, dispatch.RefIssueChildren},
		{"dispatch://DSP-1/message/x", true, dispatch.RefIssueMessage},
		{"dispatch://CORE/artifact/r@v1/comment/c", true, dispatch.RefDocumentComment},
		{"dispatch://DSP-0", false, 0},
		{"dispatch://DSP-01", false, 0},
		{"dispatch://core/artifact/r", false, 0},
		{"dispatch://CORE", false, 0},
		{"dispatch://DSP-1/spec/x", false, 0},
		{"dispatch://CORE/artifact/r@v0", false, 0},
		{"dispatch://CORE/artifact/a b", false, 0},
		{"dispatch://DSP-1/ask/", false, 0},
		{"dispatch://DSP-1/artifact/r/ask/x", false, 0},
		{"https://DSP-1", false, 0},
	}
	for _, c := range cases {
		r, ok := dispatch.ParseRef(c.ref)
		if ok != c.ok || (ok && r.Kind != c.kind) {
			t.Errorf("%s: %v %+v", c.ref, ok, r)
		}
	}
	if !dispatch.IsUUIDPrefix("01234567-0") || dispatch.IsUUIDPrefix("0123456") || dispatch.IsUUIDPrefix("012345670") {
		t.Error("IsUUIDPrefix")
	}
	if got := dispatch.ComposeQuestion("Q", "dispatch://DSP-1"); got != "Q\n\nRef: dispatch://DSP-1" {
		t.Error(got)
	}
	if got := dispatch.RewriteWebRef("https://dispatch.test:443/issues/DSP-2", "https://dispatch.test"); got != "dispatch://DSP-2" {
		t.Error(got)
	}
	if got := dispatch.RewriteWebRef("http://dispatch.test/issues/DSP-2", "https://dispatch.test"); got != "http://dispatch.test/issues/DSP-2" {
		t.Error("scheme must match:", got)
	}
}
