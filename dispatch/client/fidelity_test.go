package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/dispatch/client"
)

// The executor's fidelity to dispatch-tools.md §8.8, §8.9, §9 AnchorInput and the
// dispatch_suggest row of §8.6: each test scripts the Dispatch answers, then pins every request
// the call sends (method, path, query, exact JSON body) and the exact result or error text.

const (
	fidU1     = "01234567-0000-4000-8000-000000000001"
	fidC2     = "01234567-0000-4000-8000-000000000002"
	fidSpec   = "a0000000-0000-4000-8000-000000000001"
	fidDesign = "a0000000-0000-4000-8000-000000000002"
	fidRoad   = "b0000000-0000-4000-8000-000000000001"
	fidClause = " (not subscribed to DSP-1; envoy_subscribe notifications.dispatch.issue.DSP-1.> for every event on it)"
)

// fidIssue is GET /api/v1/issues/DSP-1: a primary document "spec" (name "Spec") and "design".
const fidIssue = `{"issue":{"key":"DSP-1","project":"DSP","title":"Native workspace","status":"todo","external_links":[{"url":"https://old.test","kind":"pr"}],` +
	`"components":{"mode":"inherit","ids":[],"unknown":[],"reason":null,"inherited_from":null},"last_seq":3,` +
	`"artifacts":[{"id":"` + fidSpec + `","slug":"spec","name":"Spec","primary":true,"versions":[]},` +
	`{"id":"` + fidDesign + `","slug":"design","name":"design.md","primary":false,"versions":[]}],"open_asks":[],"children":[]},"events":[]}`

// fidAsk is a created ask on DSP-1.
const fidAsk = `{"id":"` + fidU1 + `","issue_key":"DSP-1","question":"Q","options":[],"multiple":false,"urgency":"med","anchor":null,"state":"open","opened_event_id":4}`

// fidRequest is one expected request: "METHOD /path?query" and its exact body ("" = none).
type fidRequest struct{ line, body string }

// fidCase is one scripted call.
type fidCase struct {
	name     string
	url      string // appended to the fake server's URL (a base path)
	tool     string
	args     string
	answers  []answer
	requests []fidRequest
	text     string // the exact result text; with err set, the exact error text
	err      bool
	code     string // the Dispatch code of an error ("" = none)
}

func runFidelity(t *testing.T, tests []fidCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, tt.answers...)
			c := client.New(client.Config{URL: f.URL + tt.url, Token: "tok_test", Host: testHost})
			base := strings.TrimRight(f.URL+tt.url, "/")
			want := strings.ReplaceAll(tt.text, "{base}", base)
			res, err := c.CallJSON(context.Background(), tt.tool, []byte(tt.args))
			switch {
			case tt.err && err == nil:
				t.Errorf("no error; text %q", res.Text)
			case tt.err && err.Error() != want:
				t.Errorf("error\n got %q\nwant %q", err.Error(), want)
			case tt.err && client.ErrorCode(err) != tt.code:
				t.Errorf("code %q, want %q", client.ErrorCode(err), tt.code)
			case !tt.err && err != nil:
				t.Errorf("error %v", err)
			case !tt.err && res.Text != want:
				t.Errorf("text\n got %q\nwant %q", res.Text, want)
			}
			got := f.requests()
			if len(got) != len(tt.requests) {
				t.Errorf("%d requests, want %d", len(got), len(tt.requests))
			}
			for i := 0; i < len(got) && i < len(tt.requests); i++ {
				line := got[i].method + " " + got[i].path
				if got[i].rawQuery != "" {
					line += "?" + got[i].rawQuery
				}
				if line != tt.requests[i].line {
					t.Errorf("request %d: %s, want %s", i, line, tt.requests[i].line)
				}
				if string(got[i].body) != tt.requests[i].body {
					t.Errorf("request %d body\n got %s\nwant %s", i, got[i].body, tt.requests[i].body)
				}
			}
		})
	}
}

// TestAskAnchorResolvesDocument: an ask's anchor sends the resolved document id (§9
// AnchorInput), looking the document up when only the anchor names it.
func TestAskAnchorResolvesDocument(t *testing.T) {
	opened := "Opened ask " + fidU1 + " (dispatch://DSP-1/ask/" + fidU1 + "); this session follows it and receives its answer and replies" + fidClause
	roadmap := `{"id":"` + fidRoad + `","issue_key":null,"project":"CORE","slug":"roadmap","name":"Roadmap","primary":false,"versions":[]}`
	docAsk := `{"id":"` + fidU1 + `","issue_key":null,"question":"Q","options":[],"urgency":"med","anchor":null,"state":"open","opened_event_id":4}`
	runFidelity(t, []fidCase{
		{name: "issue owner, only the anchor names the document", tool: dispatch.ToolAsk,
			args:    `{"issue":"DSP-1","question":"Q","anchor":{"artifact":"spec","quote":"old wording"}}`,
			answers: []answer{jsonAnswer(200, fidIssue), jsonAnswer(201, fidAsk)},
			requests: []fidRequest{{"GET /api/v1/issues/DSP-1", ""},
				{"POST /api/v1/issues/DSP-1/asks", `{"question":"Q","anchor":{"artifact":"` + fidSpec + `","quote":"old wording"},"actor":` + testActor + `}`}},
			text: opened},
		{name: "issue document owner, the anchor names another document by name", tool: dispatch.ToolAsk,
			args:    `{"issue":"DSP-1","artifact":"design","question":"Q","anchor":{"artifact":"Spec","quote":"q","occurrence":1}}`,
			answers: []answer{jsonAnswer(200, fidIssue), jsonAnswer(201, fidAsk)},
			requests: []fidRequest{{"GET /api/v1/issues/DSP-1", ""},
				{"POST /api/v1/artifacts/" + fidDesign + "/asks", `{"question":"Q","anchor":{"artifact":"` + fidSpec + `","quote":"q","occurrence":1},"actor":` + testActor + `}`}},
			text: opened},
		{name: "project document owner named by ref, anchor on it", tool: dispatch.ToolAsk,
			args:    `{"ref":"dispatch://CORE/artifact/roadmap","question":"Q","anchor":{"artifact":"roadmap","quote":"Q3 goals","occurrence":0}}`,
			answers: []answer{jsonAnswer(200, roadmap), jsonAnswer(201, docAsk)},
			requests: []fidRequest{{"GET /api/v1/projects/CORE/artifacts/roadmap", ""},
				{"POST /api/v1/artifacts/" + fidRoad + "/asks", `{"question":"Q\n\nRef: dispatch://CORE/artifact/roadmap","anchor":{"artifact":"` + fidRoad + `","quote":"Q3 goals","occurrence":0},"actor":` + testActor + `}`}},
			text: "Opened ask " + fidU1 + " (dispatch://CORE/artifact/roadmap/ask/" + fidU1 + "); this session follows it and receives its answer and replies" +
				" (not subscribed to CORE/roadmap; envoy_subscribe notifications.dispatch.document.CORE.roadmap.> for every event on it)"},
		{name: "the anchor names no document of the owner", tool: dispatch.ToolAsk,
			args:     `{"issue":"DSP-1","question":"Q","anchor":{"artifact":"plan","quote":"q"}}`,
			answers:  []answer{jsonAnswer(200, fidIssue)},
			requests: []fidRequest{{"GET /api/v1/issues/DSP-1", ""}},
			text:     `no document "plan" on DSP-1; documents: spec, design`, err: true},
	})
}

// TestReplyToClosedAsk: an ask reply's result states the turn the answer reports (§8.9); with
// `turn: null` (the ask is closed) the clause is left out.
func TestReplyToClosedAsk(t *testing.T) {
	reply := func(turn string) string {
		return `{"id":"` + fidC2 + `","issue_key":"DSP-1","body":"b","anchor":null,"reply_to":null,"ask_id":"` + fidU1 + `","turn":` + turn +
			`,"resolved":false,"mentions":[],"deliveries":[]}`
	}
	body := func(turn string) string {
		return `{"body":"Done.","ask_id":"` + fidU1 + `"` + turn + `,"actor":` + testActor + `}`
	}
	runFidelity(t, []fidCase{
		{name: "turn null", tool: dispatch.ToolComment,
			args:     `{"issue":"DSP-1","body":"Done.","reply_to_ask":"` + fidU1 + `"}`,
			answers:  []answer{jsonAnswer(201, reply("null"))},
			requests: []fidRequest{{"POST /api/v1/issues/DSP-1/comments", body("")}},
			text:     "Replied on ask " + fidU1 + " (comment " + fidC2 + ")" + fidClause},
		{name: "turn null after asking for the agent's turn", tool: dispatch.ToolComment,
			args:     `{"issue":"DSP-1","body":"Done.","reply_to_ask":"` + fidU1 + `","turn":"agent"}`,
			answers:  []answer{jsonAnswer(201, `{"comment":`+reply("null")+`}`)},
			requests: []fidRequest{{"POST /api/v1/issues/DSP-1/comments", body(`,"turn":"agent"`)}},
			text:     "Replied on ask " + fidU1 + " (comment " + fidC2 + ")" + fidClause},
		{name: "the answer's turn, not the requested one", tool: dispatch.ToolComment,
			args:     `{"issue":"DSP-1","body":"Done.","reply_to_ask":"` + fidU1 + `","turn":"agent"}`,
			answers:  []answer{jsonAnswer(201, reply(`"human"`))},
			requests: []fidRequest{{"POST /api/v1/issues/DSP-1/comments", body(`,"turn":"agent"`)}},
			text:     "Replied on ask " + fidU1 + " (comment " + fidC2 + "; ask now waiting on human)" + fidClause},
		{name: "turn agent", tool: dispatch.ToolComment,
			args:     `{"issue":"DSP-1","body":"Done.","reply_to_ask":"` + fidU1 + `","turn":"agent"}`,
			answers:  []answer{jsonAnswer(201, reply(`"agent"`))},
			requests: []fidRequest{{"POST /api/v1/issues/DSP-1/comments", body(`,"turn":"agent"`)}},
			text:     "Replied on ask " + fidU1 + " (comment " + fidC2 + "; ask now waiting on agent)" + fidClause},
	})
}

// TestLinksPatch500Clause: any status-500 answer to a PATCH that adds external_links gets the
// "may already be linked" clause, whatever its code (§8.8); other answers and other PATCHes
// do not.
func TestLinksPatch500Clause(t *testing.T) {
	const clause = "; one of these URLs may already be linked to another issue"
	links := `{"external_links":[{"url":"https://old.test","kind":"pr"},{"url":"https://a.test"}],"actor":` + testActor + `}`
	get := fidRequest{"GET /api/v1/issues/DSP-1", ""}
	runFidelity(t, []fidCase{
		{name: "500 INTERNAL", tool: dispatch.ToolIssueUpdate, args: `{"issue":"DSP-1","external_links":["https://a.test"]}`,
			answers:  []answer{jsonAnswer(200, fidIssue), jsonAnswer(500, `{"error":"boom","code":"INTERNAL"}`)},
			requests: []fidRequest{get, {"PATCH /api/v1/issues/DSP-1", links}},
			text:     "INTERNAL: boom" + clause, err: true, code: "INTERNAL"},
		{name: "500 without code or text", tool: dispatch.ToolIssueUpdate, args: `{"issue":"DSP-1","external_links":["https://a.test"]}`,
			answers:  []answer{jsonAnswer(200, fidIssue), jsonAnswer(500, `{}`)},
			requests: []fidRequest{get, {"PATCH /api/v1/issues/DSP-1", links}},
			text:     "HTTP_500: Dispatch answered HTTP 500" + clause, err: true, code: "HTTP_500"},
		{name: "409 EXTERNAL_LINK_TAKEN", tool: dispatch.ToolIssueUpdate, args: `{"issue":"DSP-1","external_links":["https://a.test"]}`,
			answers:  []answer{jsonAnswer(200, fidIssue), jsonAnswer(409, `{"error":"https://a.test is linked to DSP-9","code":"EXTERNAL_LINK_TAKEN"}`)},
			requests: []fidRequest{get, {"PATCH /api/v1/issues/DSP-1", links}},
			text:     "EXTERNAL_LINK_TAKEN: https://a.test is linked to DSP-9", err: true, code: "EXTERNAL_LINK_TAKEN"},
		{name: "500 INTERNAL on a PATCH without links", tool: dispatch.ToolIssueUpdate, args: `{"issue":"DSP-1","title":"T"}`,
			answers:  []answer{jsonAnswer(200, fidIssue), jsonAnswer(500, `{"error":"boom","code":"INTERNAL"}`)},
			requests: []fidRequest{get, {"PATCH /api/v1/issues/DSP-1", `{"title":"T","actor":` + testActor + `}`}},
			text:     "INTERNAL: boom", err: true, code: "INTERNAL"},
	})
}

// TestSuggestWithoutBody: dispatch_suggest sends `body` only when it is given (§8.6).
func TestSuggestWithoutBody(t *testing.T) {
	post := "POST /api/v1/artifacts/" + fidSpec + "/comments"
	anchor := `"anchor":{"artifact":"` + fidSpec + `","quote":"old wording"},"suggestion":{"replace_with":"new wording"},"actor":` + testActor
	text := "Suggested a replacement on DSP-1 (comment " + fidC2 + ")" + fidClause
	runFidelity(t, []fidCase{
		{name: "no body", tool: dispatch.ToolSuggest, args: `{"issue":"DSP-1","artifact":"spec","quote":"old wording","replace_with":"new wording"}`,
			answers:  []answer{jsonAnswer(200, fidIssue), jsonAnswer(201, `{"id":"`+fidC2+`"}`)},
			requests: []fidRequest{{"GET /api/v1/issues/DSP-1", ""}, {post, `{` + anchor + `}`}},
			text:     text},
		{name: "an empty body is sent", tool: dispatch.ToolSuggest, args: `{"issue":"DSP-1","artifact":"spec","quote":"old wording","replace_with":"new wording","body":""}`,
			answers:  []answer{jsonAnswer(200, fidIssue), jsonAnswer(201, `{"id":"`+fidC2+`"}`)},
			requests: []fidRequest{{"GET /api/v1/issues/DSP-1", ""}, {post, `{"body":"",` + anchor + `}`}},
			text:     text},
		{name: "a rationale", tool: dispatch.ToolSuggest, args: `{"issue":"DSP-1","artifact":"spec","quote":"old wording","replace_with":"new wording","body":"clearer"}`,
			answers:  []answer{jsonAnswer(200, fidIssue), jsonAnswer(201, `{"id":"`+fidC2+`"}`)},
			requests: []fidRequest{{"GET /api/v1/issues/DSP-1", ""}, {post, `{"body":"clearer",` + anchor + `}`}},
			text:     text},
		{name: "a comment always sends its body", tool: dispatch.ToolComment, args: `{"issue":"DSP-1","body":""}`,
			answers:  []answer{jsonAnswer(201, `{"id":"`+fidC2+`"}`)},
			requests: []fidRequest{{"POST /api/v1/issues/DSP-1/comments", `{"body":"","actor":` + testActor + `}`}},
			text:     "Commented on DSP-1 (comment " + fidC2 + ")" + fidClause},
	})
}

// TestSearchSnippetPlainText: a search hit's snippet is plain text: the server's `<mark>`
// highlights removed, white space collapsed (§8.9).
func TestSearchSnippetPlainText(t *testing.T) {
	hit := func(snippet string) string {
		return `{"results":[{"kind":"comment","owner":{"kind":"issue","key":"DSP-1","title":"Native workspace","status":"todo"},"id":"c1","snippet":` +
			snippet + `,"rank":1,"href":"https://d.test/issues/DSP-1"}],"took_ms":1}`
	}
	runFidelity(t, []fidCase{
		{name: "marks and line breaks", tool: dispatch.ToolSearch, args: `{"query":"parser"}`,
			answers:  []answer{jsonAnswer(200, hit(`"the <mark>parser</mark>\n  <mark>fails</mark> twice"`))},
			requests: []fidRequest{{"GET /api/v1/search?q=parser", ""}},
			text:     "DSP-1 [todo] Native workspace - comment: the parser fails twice -> https://d.test/issues/DSP-1"},
		{name: "a mark at the edge of a word", tool: dispatch.ToolSearch, args: `{"query":"pars"}`,
			answers:  []answer{jsonAnswer(200, hit(`"<mark>pars</mark>er &lt;b&gt; x < y"`))},
			requests: []fidRequest{{"GET /api/v1/search?q=pars", ""}},
			text:     "DSP-1 [todo] Native workspace - comment: parser &lt;b&gt; x < y -> https://d.test/issues/DSP-1"},
	})
}

// TestRelativeHrefsAbsolute: hrefs the server returns relative (search hits, duplicate
// candidates, open asks) are rendered absolute against DISPATCH_URL (§8.9).
func TestRelativeHrefsAbsolute(t *testing.T) {
	search := `{"results":[{"kind":"message","owner":{"kind":"issue","key":"DSP-2","title":"Other","status":"done"},"id":"m1","snippet":"parser done","rank":1,"href":"/issues/DSP-2/conversation"},` +
		`{"kind":"document","owner":{"kind":"document","project":"CORE","slug":"roadmap","artifact_id":"` + fidRoad + `","name":"Roadmap"},"id":"d1","snippet":"x","rank":0.5,"href":"https://elsewhere.test/docs/CORE/roadmap"}],"took_ms":1}`
	dup := `{"error":"possible duplicate","code":"POSSIBLE_DUPLICATE","candidates":[{"key":"DSP-9","title":"Native workspace shell","status":"todo","snippet":"s","shared_terms":2,"href":"/issues/DSP-9"}]}`
	open := `{"session_id":"ses_1","count":2,"waiting_on_human":1,"waiting_on_agent":1,"asks":[` +
		`{"id":"` + fidU1 + `","ref":"/issues/DSP-1?ask=` + fidU1 + `","question":"Ship this?","kind":"question","urgency":"med","age_seconds":90,"priority":null,"owner":{"issue":{"key":"DSP-1","title":"T"}},"human_replied":false,"last_reply":null,"waiting_on":"human"},` +
		`{"id":"` + fidC2 + `","ref":"/docs/CORE/roadmap?ask=` + fidC2 + `","question":"Q3?","kind":"question","urgency":"low","age_seconds":200000,"priority":null,"owner":{"document":{"project":"CORE","slug":"roadmap","name":"Roadmap"}},"human_replied":false,"last_reply":null,"waiting_on":"agent"}]}`
	openText := "2 open asks by this session (1 waiting on a human, 1 waiting on an agent)\n" +
		"- " + fidU1 + " dispatch://DSP-1/ask/" + fidU1 + " [med] Ship this? · waiting on human · 1m old -> {base}/issues/DSP-1?ask=" + fidU1 + "\n" +
		"- " + fidC2 + " dispatch://CORE/artifact/roadmap/ask/" + fidC2 + " [low] Q3? · waiting on agent · 2d old -> {base}/docs/CORE/roadmap?ask=" + fidC2
	runFidelity(t, []fidCase{
		{name: "search hits", tool: dispatch.ToolSearch, args: `{"query":"parser"}`,
			answers:  []answer{jsonAnswer(200, search)},
			requests: []fidRequest{{"GET /api/v1/search?q=parser", ""}},
			text: "DSP-2 [done] Other - message: parser done -> {base}/issues/DSP-2/conversation\n" +
				"dispatch://CORE/artifact/roadmap [document] Roadmap - document: x -> https://elsewhere.test/docs/CORE/roadmap"},
		{name: "search hits under a base path", url: "/dispatch/", tool: dispatch.ToolSearch, args: `{"query":"parser"}`,
			answers:  []answer{jsonAnswer(200, search)},
			requests: []fidRequest{{"GET /dispatch/api/v1/search?q=parser", ""}},
			text: "DSP-2 [done] Other - message: parser done -> {base}/issues/DSP-2/conversation\n" +
				"dispatch://CORE/artifact/roadmap [document] Roadmap - document: x -> https://elsewhere.test/docs/CORE/roadmap"},
		{name: "duplicate candidates", tool: dispatch.ToolIssue, args: `{"project":"DSP","title":"Native workspace"}`,
			answers:  []answer{jsonAnswer(409, dup)},
			requests: []fidRequest{{"POST /api/v1/issues", `{"project":"DSP","title":"Native workspace","actor":` + testActor + `}`}},
			text: "Not created: Dispatch found 1 possible duplicate of \"Native workspace\" in DSP.\n" +
				"- DSP-9 [todo] Native workspace shell → {base}/issues/DSP-9\n" +
				"If none of these is the same issue, call dispatch_issue again with force: true."},
		{name: "open asks", tool: dispatch.ToolOpenAsks, args: `{}`,
			answers:  []answer{jsonAnswer(200, open)},
			requests: []fidRequest{{"GET /api/v1/asks/open?author_session=ses_1", ""}},
			text:     openText},
	})
}
