package client

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"DSP-1":                  "DSP-1",
		"a b":                    "a%20b",
		"acme/widgets#12":        "acme%2Fwidgets%2312",
		"dispatch://DSP-1":       "dispatch%3A%2F%2FDSP-1",
		"x@v2?y&z=1+2":           "x%40v2%3Fy%26z%3D1%2B2",
		"ü":                      "%C3%BC",
		"-._~":                   "-._~",
		"%":                      "%25",
		"2026-01-01T00:00:00Z":   "2026-01-01T00%3A00%3A00Z",
		"":                       "",
		"\x00\n":                 "%00%0A",
		"ABCXYZabcxyz0123456789": "ABCXYZabcxyz0123456789",
	} {
		if got := escape(in); got != want {
			t.Errorf("escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURL(t *testing.T) {
	for _, tt := range []struct{ base, want string }{
		{"https://d.test", "https://d.test/api/v1/search?q=a%20b&limit=5"},
		{"https://d.test/", "https://d.test/api/v1/search?q=a%20b&limit=5"},
		{" https://d.test/base// ", "https://d.test/base/api/v1/search?q=a%20b&limit=5"},
	} {
		c := New(Config{URL: tt.base, Token: "t"})
		if got := c.url(get(path("search"), param{"q", "a b"}, param{"limit", "5"})); got != tt.want {
			t.Errorf("%q: %s", tt.base, got)
		}
	}
}

func TestGitHubRemote(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{"[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/Acme/Widgets.git\n", "Acme/Widgets"},
		{"[remote \"origin\"]\n\turl = git@github.com:acme/widgets\n", "acme/widgets"},
		{"[remote \"origin\"]\n\turl = ssh://git@github.com/acme/widgets.git/\n", "acme/widgets"},
		{"[remote \"upstream\"]\n\turl = https://github.com/acme/up\n[remote \"origin\"]\n\turl=https://gitlab.com/acme/w\n", ""},
		{"[remote \"origin\"]\n\turl = https://github.com/acme\n", ""},
		{"[remote \"origin\"]\n\turl = https://github.com/acme/w/extra\n", ""},
		{"", ""},
	} {
		if got := githubRemote(tt.config); got != tt.want {
			t.Errorf("%q: %q want %q", tt.config, got, tt.want)
		}
	}
}

func TestActor(t *testing.T) {
	body, _ := dispatch.Encode(New(Config{}).Actor())
	if string(body) != `{"kind":"session","id":"unknown","origin":{"host":"unknown"}}` {
		t.Errorf("%s", body)
	}
	body, _ = dispatch.Encode(New(Config{Host: Host{SessionID: "s", Name: "h", Machine: "m", Cwd: "/c", Tmux: "t", Pane: "%1", SessionTitle: "st"}}).Actor())
	if string(body) != `{"kind":"session","id":"s","origin":{"host":"h","machine":"m","cwd":"/c","tmux":"t","pane":"%1","session_title":"st"}}` {
		t.Errorf("%s", body)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"DISPATCH_URL": "https://d.test", "DISPATCH_TOKEN": "tok", "LEGION_ISSUE": "DSP-3", "TMUX_PANE": "%4"}
	cfg := ConfigFromEnv(func(k string) string { return env[k] })
	if cfg.URL != "https://d.test" || cfg.Token != "tok" || cfg.Host.LegionIssue != "DSP-3" || cfg.Host.Pane != "%4" {
		t.Fatalf("%+v", cfg)
	}
}

// TestMergeExternalLinks pins §8.7: before-state links as returned (kind kept), then each new
// trimmed argument URL once, in argument order.
func TestMergeExternalLinks(t *testing.T) {
	before := []dispatch.ExternalLink{{URL: "https://a.test", Kind: "pr"}, {URL: " https://c.test "}}
	tests := []struct {
		name      string
		before    []dispatch.ExternalLink
		urls      []string
		links     []dispatch.ExternalLink
		added     []string
		arguments []string
	}{
		{"case 66", before[:1], []string{"https://a.test", "https://b.test"},
			[]dispatch.ExternalLink{{URL: "https://a.test", Kind: "pr"}, {URL: "https://b.test"}}, []string{"https://b.test"}, []string{"https://a.test", "https://b.test"}},
		{"trimmed on both sides, duplicates once", before, []string{" https://c.test", "https://d.test ", "https://d.test", "https://e.test"},
			[]dispatch.ExternalLink{before[0], before[1], {URL: "https://d.test"}, {URL: "https://e.test"}},
			[]string{"https://d.test", "https://e.test"}, []string{"https://c.test", "https://d.test", "https://e.test"}},
		{"nothing before", nil, []string{"https://x.test"}, []dispatch.ExternalLink{{URL: "https://x.test"}}, []string{"https://x.test"}, []string{"https://x.test"}},
		{"empty argument keeps the links", before, []string{}, before, nil, nil},
		{"case sensitive", before[:1], []string{"HTTPS://A.TEST"}, []dispatch.ExternalLink{before[0], {URL: "HTTPS://A.TEST"}}, []string{"HTTPS://A.TEST"}, []string{"HTTPS://A.TEST"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links, added, args := MergeExternalLinks(tt.before, tt.urls)
			if !slices.Equal(links, tt.links) || !slices.Equal(added, tt.added) || !slices.Equal(args, tt.arguments) {
				t.Errorf("got %v %v %v", links, added, args)
			}
			if links == nil {
				t.Error("links must encode as [] when empty")
			}
		})
	}
}

// TestOwner pins how the addressing arguments name an owner and a document.
func TestOwner(t *testing.T) {
	tests := []struct {
		tool, args string
		want       owner
	}{
		{dispatch.ToolDocRead, `{"issue":"DSP-1"}`, owner{issue: "DSP-1"}}, // the document tools resolve the primary document themselves
		{dispatch.ToolRead, `{"issue":"DSP-1"}`, owner{issue: "DSP-1"}},
		{dispatch.ToolRead, `{"issue":"DSP-1","artifact":"plan"}`, owner{issue: "DSP-1", artifact: "plan", doc: true}},
		{dispatch.ToolRead, `{"ref":"dispatch://DSP-1/artifact/plan@v2"}`, owner{issue: "DSP-1", artifact: "plan", version: 2, doc: true}},
		{dispatch.ToolRead, `{"ref":"dispatch://DSP-1/spec"}`, owner{issue: "DSP-1", doc: true}},
		{dispatch.ToolRead, `{"ref":"dispatch://CORE/artifact/roadmap/comment/abc"}`, owner{project: "CORE", artifact: "roadmap", doc: true}},
		{dispatch.ToolRead, `{"project":"CORE","artifact":"roadmap","ref":"dispatch://CORE/artifact/roadmap@v3"}`, owner{project: "CORE", artifact: "roadmap", version: 3, doc: true}},
		{dispatch.ToolDocEdit, `{"issue":"acme/w#1","ref":"dispatch://DSP-1/artifact/plan"}`, owner{issue: "acme/w#1", artifact: "plan", doc: true}},
		{dispatch.ToolAsk, `{"ref":"dispatch://DSP-1/artifact/plan"}`, owner{issue: "DSP-1"}},
		{dispatch.ToolAsk, `{"ref":"dispatch://CORE/artifact/roadmap"}`, owner{project: "CORE", artifact: "roadmap", doc: true}},
		{dispatch.ToolAsk, `{"issue":"DSP-2","ref":"dispatch://CORE/artifact/roadmap"}`, owner{issue: "DSP-2"}},
		{dispatch.ToolAsk, `{"issue":"DSP-2","artifact":"spec"}`, owner{issue: "DSP-2", artifact: "spec", doc: true}},
	}
	for _, tt := range tests {
		args, err := jsonvalue.ParseObject([]byte(tt.args), "a")
		if err != nil {
			t.Fatal(err)
		}
		got := (&call{tool: tt.tool, args: args}).owner()
		got.ref, got.hasRef = dispatch.Ref{}, false
		if got != tt.want {
			t.Errorf("%s %s: %+v want %+v", tt.tool, tt.args, got, tt.want)
		}
	}
}

func TestQuestionHead(t *testing.T) {
	for in, want := range map[string]string{
		"Ship this?":                  "Ship this?",
		"Ship this?\nDetails":         "Ship this?",
		"\n\nSecond line":             "Second line",
		strings.Repeat("x", 60):       strings.Repeat("x", 60),
		strings.Repeat("x", 61):       strings.Repeat("x", 60) + "…",
		strings.Repeat("x", 59) + "😀": strings.Repeat("x", 59) + "…",
		"":                            "",
	} {
		if got := questionHead(in); got != want {
			t.Errorf("%q: %q want %q", in, got, want)
		}
	}
}

func TestAge(t *testing.T) {
	for s, want := range map[int64]string{0: "0s", 59: "59s", 60: "1m", 3599: "59m", 3600: "1h", 86399: "23h", 86400: "1d", 1e6: "11d"} {
		if got := age(s); got != want {
			t.Errorf("%d: %s", s, got)
		}
	}
}

func TestAdviceLines(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	tests := []struct {
		name   string
		advice *dispatch.WriteAdvice
		want   []string
	}{
		{"none", nil, nil},
		{"quiet", &dispatch.WriteAdvice{SessionWritesSinceHuman: n(2), DecisionBlocks: n(1)}, nil},
		{"triage and three writes", &dispatch.WriteAdvice{IssueStatus: dispatch.StatusTriage, SessionWritesSinceHuman: n(3)}, []string{
			"Advice: DSP-1 is still in triage; move it to a working status when you start on it.",
			"Advice: 3 writes since the last human interaction; consider checking in with a human."}},
		{"six writes, open asks, no decisions, openers", &dispatch.WriteAdvice{SessionWritesSinceHuman: n(6),
			YourOpenAsks:    []dispatch.OpenAskBrief{{ID: "01234567-aaaa", Question: "Q1?\nmore"}, {ID: "89abcdef", Question: "Q2?"}},
			DecisionBlocks:  n(0),
			UnparsedOpeners: &dispatch.UnparsedOpeners{Count: 2, Examples: []string{":::ask{x", ":::ask{"}}}, []string{
			"Advice: 6 writes since the last human interaction; stop and check in with a human before writing more.",
			"Advice: your open asks: 01234567 Q1?; 89abcdef Q2?",
			"Advice: the spec has no decision blocks yet.",
			"Advice: 2 :::ask{…} openers were not parsed (e.g. :::ask{x, :::ask{); fix their syntax so they become asks."}},
	}
	for _, tt := range tests {
		if got := adviceLines(tt.advice, "DSP-1"); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestComponentsLine(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		ic   dispatch.IssueComponents
		want string
	}{
		{dispatch.IssueComponents{Mode: dispatch.ComponentsInherit}, "Components: unassigned"},
		{dispatch.IssueComponents{Mode: dispatch.ComponentsInherit, IDs: []string{"a"}, InheritedFrom: s("DSP-0")}, "Components: inherited from DSP-0 [a]"},
		{dispatch.IssueComponents{Mode: dispatch.ComponentsExplicit, IDs: []string{"a", "b"}, Unknown: []string{"old"}}, "Components: explicit [a, b]; retired [old]"},
		{dispatch.IssueComponents{Mode: dispatch.ComponentsNone, Reason: s("meta")}, "Components: none (meta)"},
		{dispatch.IssueComponents{Mode: dispatch.ComponentsNone, Reason: s("meta"), InheritedFrom: s("DSP-0")}, "Components: none (meta) inherited from DSP-0"},
	}
	for _, tt := range tests {
		if got := componentsLine(tt.ic); got != tt.want {
			t.Errorf("%+v: %q", tt.ic, got)
		}
	}
}

// TestSearchLine pins the two hit formats of §8.9 and the legacy issue mirror: plain-text
// snippets and absolute hrefs.
func TestSearchLine(t *testing.T) {
	c := New(Config{URL: "https://d.test/", Token: "t"})
	tests := []struct {
		r    dispatch.SearchResult
		want string
	}{
		{dispatch.SearchResult{Kind: dispatch.ResultAsk, Owner: dispatch.SearchOwner{Kind: dispatch.OwnerIssue, Key: "DSP-1", Title: "T", Status: "todo"},
			Snippet: "a\n <mark>b</mark>", Href: "/issues/DSP-1?ask=x"}, "DSP-1 [todo] T - ask: a b -> https://d.test/issues/DSP-1?ask=x"},
		{dispatch.SearchResult{Kind: dispatch.ResultComment, Owner: dispatch.SearchOwner{Kind: dispatch.OwnerIssue, Key: "DSP-1", Title: "T", Status: "todo"},
			Artifact: &dispatch.SearchArtifact{Slug: "spec", Name: "Spec"}, Snippet: "s", Href: "h"}, "DSP-1 [todo] T - comment Spec: s -> https://d.test/h"},
		{dispatch.SearchResult{Kind: dispatch.ResultDocument, Owner: dispatch.SearchOwner{Kind: dispatch.OwnerDocument, Project: "CORE", Slug: "roadmap", Name: "Roadmap"},
			Snippet: "s", Href: "https://d.test/docs/CORE/roadmap"}, "dispatch://CORE/artifact/roadmap [document] Roadmap - document: s -> https://d.test/docs/CORE/roadmap"},
		{dispatch.SearchResult{Kind: dispatch.ResultMessage, Issue: &dispatch.SearchIssue{Key: "DSP-2", Title: "U", Status: "done"},
			Snippet: "s", Href: "/issues/DSP-2/conversation"}, "DSP-2 [done] U - message: s -> https://d.test/issues/DSP-2/conversation"},
	}
	for _, tt := range tests {
		if got := searchLine(c, tt.r); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

// TestAbsolute: relative hrefs are rendered against DISPATCH_URL (§8.9), absolute ones kept.
func TestAbsolute(t *testing.T) {
	for _, tt := range []struct{ base, href, want string }{
		{"https://d.test", "/issues/DSP-1", "https://d.test/issues/DSP-1"},
		{"https://d.test/", "/issues/DSP-1?ask=x#y", "https://d.test/issues/DSP-1?ask=x#y"},
		{"https://d.test/dispatch//", "/issues/DSP-1", "https://d.test/dispatch/issues/DSP-1"},
		{"https://d.test/dispatch", "issues/DSP-1", "https://d.test/dispatch/issues/DSP-1"},
		{"https://d.test", "?ask=x", "https://d.test/?ask=x"},
		{"https://d.test", "//cdn.test/a", "https://cdn.test/a"},
		{"https://d.test", "http://other.test/a", "http://other.test/a"},
		{"https://d.test", "%zz", "https://d.test/%zz"},
		{"https://d.test", "", ""},
	} {
		if got := New(Config{URL: tt.base, Token: "t"}).absolute(tt.href); got != tt.want {
			t.Errorf("%q + %q = %q, want %q", tt.base, tt.href, got, tt.want)
		}
	}
}

func TestIssuesResult(t *testing.T) {
	p := func(v dispatch.IssuePriority) *dispatch.IssuePriority { return &v }
	page := &dispatch.IssueSummaryPage{Issues: []dispatch.IssueSummary{
		{Key: "DSP-1", Title: "A", Status: "todo", Priority: p(3), OpenAsks: 1, Route: dispatch.Some("session:s")},
		{Key: "DSP-2", Title: "B", Status: "done", Route: dispatch.Null[string]()},
	}, Total: 2, Limit: 50}
	if got := issuesResult("DSP", page).Text; got != "DSP-1 [todo] P3 A · 1 open asks · route session:s\nDSP-2 [done] B" {
		t.Errorf("%q", got)
	}
	page.Offset, page.Total = 50, 60
	if got := issuesResult("DSP", page).Text; !strings.HasPrefix(got, "showing 51-52 of 60\n") {
		t.Errorf("%q", got)
	}
	if got := issuesResult("DSP", &dispatch.IssueSummaryPage{}).Text; got != "No issues in DSP match" {
		t.Errorf("%q", got)
	}
}

func TestSyncResult(t *testing.T) {
	s := func(v string) *string { return &v }
	src := &dispatch.ArchitectureSource{Project: "CORE", Repo: "acme/core", Branch: "main", LastError: s("bad yaml")}
	if got := syncResult("CORE", src).Text; got != "Sync failed for CORE (acme/core@main): bad yaml\nNo previous model stays up: the project has no imported architecture yet." {
		t.Errorf("%q", got)
	}
}

func TestWhoamiResult(t *testing.T) {
	o := "octocat"
	tests := []struct {
		session string
		w       dispatch.WhoamiResponse
		text    string
		details string
	}{
		{"ses_1", dispatch.WhoamiResponse{Kind: dispatch.WhoamiAgent, Owner: &o},
			"Session ses_1 acts for octocat: Dispatch attributes its writes to octocat's agent token.", `{"session":"ses_1","owner":"octocat"}`},
		{"", dispatch.WhoamiResponse{Kind: dispatch.WhoamiAgent},
			"Session unknown runs under the shared token: Dispatch attributes its writes to the session alone.", `{"session":null,"owner":null}`},
		{"ses_1", dispatch.WhoamiResponse{Kind: dispatch.WhoamiUser, Login: "Ana"},
			"Signed in as Ana (a user token, not an agent session)", `{"session":"ses_1","owner":"Ana"}`},
	}
	for _, tt := range tests {
		r := whoamiResult(tt.session, &tt.w)
		d, _ := jsonvalue.Marshal(r.Details)
		if r.Text != tt.text || string(d) != tt.details {
			t.Errorf("%q %s", r.Text, d)
		}
	}
}

func TestEdgeRows(t *testing.T) {
	seq := int64(3)
	edges := []dispatch.GraphEdge{
		{Kind: dispatch.EdgeMentions, Direction: dispatch.DirectionIn, Node: dispatch.GraphNode{Kind: dispatch.NodeComment, ID: "c", Ref: "dispatch://DSP-2/comment/c"},
			Excerpt: &dispatch.GraphExcerpt{Text: strings.Repeat("w ", 50)}, CreatedAt: "t1", SourceSeq: &seq},
		{Kind: dispatch.EdgeFollowedBy, Direction: dispatch.DirectionIn, Node: dispatch.GraphNode{Kind: dispatch.NodeSession, ID: "ses_1"}, CreatedAt: "t2"},
		{Kind: dispatch.EdgeMentions, Direction: dispatch.DirectionOut, Node: dispatch.GraphNode{Kind: dispatch.NodeIssue, ID: "DSP-3", Ref: "dispatch://DSP-3"}, CreatedAt: "t3"},
	}
	want := []string{
		"- mentions comment dispatch://DSP-2/comment/c (" + strings.TrimSpace(strings.Repeat("w ", 40)) + " …" + " · t1)",
		"- followed_by session ses_1 (t2)",
	}
	if got := edgeRows(edges, dispatch.DirectionIn); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := edgeRows(nil, dispatch.DirectionOut); !slices.Equal(got, []string{"- none"}) {
		t.Errorf("%q", got)
	}
}

func TestWithClause(t *testing.T) {
	c := New(Config{Subscribed: func(topic string) bool { return topic == "notifications.dispatch.issue.DSP-9.>" }})
	if got := withClause(c, "A\nB", issueSub("DSP-1")); got != "A (not subscribed to DSP-1; envoy_subscribe notifications.dispatch.issue.DSP-1.> for every event on it)\nB" {
		t.Errorf("%q", got)
	}
	if got := withClause(c, "A", docSub("CORE", "roadmap")); got != "A (not subscribed to CORE/roadmap; envoy_subscribe notifications.dispatch.document.CORE.roadmap.> for every event on it)" {
		t.Errorf("%q", got)
	}
	if got := withClause(c, "A", issueSub("DSP-9")); got != "A" {
		t.Errorf("%q", got)
	}
	if got := withClause(c, "A", sub{}); got != "A" {
		t.Errorf("%q", got)
	}
}
