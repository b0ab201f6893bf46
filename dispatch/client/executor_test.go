package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/toolspec"
)

// TestCallRefusals: calls refused before any request (§8.2 steps 1–3).
func TestCallRefusals(t *testing.T) {
	ctx := context.Background()
	f := newFakeServer(t)
	c := newClient(f)
	tests := []struct {
		name, tool, args, want string
		input                  bool
	}{
		{"unknown tool", "dispatch_claim", `{}`, `unknown Dispatch tool "dispatch_claim"`, false},
		{"malformed JSON", dispatch.ToolWhoami, `{"a":1,"a":2}`, "", false},
		{"null payload", dispatch.ToolWhoami, `null`, "arguments must be an object, not null", true},
		{"strict tool", dispatch.ToolWhoami, `{"verbose":true}`, "unknown field \"verbose\"; allowed: none", true},
		{"owner problem", dispatch.ToolMessage, `{"body":"b"}`, "issue is required; supply issue or set LEGION_ISSUE", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.CallJSON(ctx, tt.tool, []byte(tt.args))
			if err == nil {
				t.Fatal("no error")
			}
			var ie *toolspec.ToolInputError
			if tt.input != errors.As(err, &ie) {
				t.Fatalf("%T %v", err, err)
			}
			if tt.input && (ie.Spec == nil || ie.Tool != tt.tool) {
				t.Fatalf("refusal without its spec: %+v", ie)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%v", err)
			}
		})
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// TestCallAbsentPayload: an empty text is an absent payload ({}), which whoami accepts.
func TestCallAbsentPayload(t *testing.T) {
	f := newFakeServer(t, jsonAnswer(200, `{"kind":"agent","owner":null}`))
	res, err := newClient(f).CallJSON(context.Background(), dispatch.ToolWhoami, []byte("  "))
	if err != nil || !strings.HasPrefix(res.Text, "Session ses_1 runs under the shared token") {
		t.Fatalf("%v %v", res, err)
	}
	// And a Go value of the jsonvalue model.
	res, err = newClient(f).Call(context.Background(), dispatch.ToolWhoami, jsonvalue.NewObject(0))
	if err != nil || res.Details == nil {
		t.Fatalf("%v %v", res, err)
	}
}

// TestCallStopsAtFirstFailure: a failing request ends the call; later requests are not sent.
func TestCallStopsAtFirstFailure(t *testing.T) {
	f := newFakeServer(t, jsonAnswer(404, `{"error":"no issue DSP-1","code":"NOT_FOUND"}`))
	_, err := newClient(f).CallJSON(context.Background(), dispatch.ToolIssueUpdate, []byte(`{"issue":"DSP-1","title":"T"}`))
	if err == nil || err.Error() != "NOT_FOUND: no issue DSP-1" {
		t.Fatalf("%v", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

// TestEveryTool runs each of the twenty tools once against the fake server and pins its request
// lines (§8.6) and the start of its result text (§8.9). conformance/tools/http.json holds the
// exhaustive cases; this table keeps the package's own tests covering every tool.
func TestEveryTool(t *testing.T) {
	const u1 = "01234567-0000-4000-8000-000000000001"
	issue := `{"issue":{"key":"DSP-1","project":"DSP","title":"T","status":"todo","last_seq":3,"components":{"mode":"inherit","ids":[],"unknown":[],"reason":null,"inherited_from":null},` +
		`"artifacts":[{"id":"art-1","slug":"spec","name":"Spec","primary":true,"versions":[{"number":2}]}],"open_asks":[],"children":[]},"events":[]}`
	graph := `{"node":{"kind":"issue","id":"x"},"edges":[]}`
	ask := `{"id":"` + u1 + `","issue_key":"DSP-1","question":"Q","state":"open"}`
	open := `{"asks":[{"id":"` + u1 + `","question":"Q","urgency":"med","waiting_on":"human","age_seconds":5,"owner":{"issue":{"key":"DSP-1","title":"T"}}}],"waiting_on_human":1}`
	ok := func(body string) answer { return jsonAnswer(200, body) }
	tests := []struct {
		tool, args string
		answers    []answer
		requests   []string
		text       string
	}{
		{dispatch.ToolIssue, `{"project":"DSP","title":"T","components":{"mode":"explicit","ids":["a"]}}`,
			[]answer{jsonAnswer(201, `{"key":"DSP-2","title":"T","components":{"mode":"explicit","ids":["a"]}}`)},
			[]string{"POST /api/v1/issues"}, "Created DSP-2: T (not subscribed to DSP-2;"},
		{dispatch.ToolIssueUpdate, `{"issue":"DSP-1","status":"testing"}`, []answer{ok(issue), ok(`{"key":"DSP-1"}`)},
			[]string{"GET /api/v1/issues/DSP-1", "PATCH /api/v1/issues/DSP-1"}, "DSP-1: status todo -> testing"},
		{dispatch.ToolAsk, `{"issue":"DSP-1","question":"Q"}`, []answer{jsonAnswer(201, ask)},
			[]string{"POST /api/v1/issues/DSP-1/asks"}, "Opened ask " + u1 + " (dispatch://DSP-1/ask/" + u1 + ")"},
		{dispatch.ToolEditAsk, `{"ask":"` + u1 + `","urgency":"high"}`, []answer{ok(ask)},
			[]string{"PATCH /api/v1/asks/" + u1}, "Edited ask " + u1 + " (dispatch://DSP-1/ask/" + u1 + ")"},
		{dispatch.ToolResolveAsk, `{"ask":"01234567","kind":"resolved","reason":"done"}`, []answer{ok(open), ok(ask)},
			[]string{"GET /api/v1/asks/open?author_session=ses_1", "POST /api/v1/asks/" + u1 + "/resolve"}, "Resolved ask " + u1 + ": done"},
		{dispatch.ToolResolveComment, `{"comment":"` + u1 + `"}`, []answer{ok(`{"id":"` + u1 + `","issue_key":"DSP-1"}`)},
			[]string{"POST /api/v1/comments/" + u1 + "/resolve"}, "Resolved comment " + u1 + " on DSP-1"},
		{dispatch.ToolFollow, `{"ask":"` + u1 + `","action":"follow"}`, []answer{ok(`{"ask":` + ask + `}`), {status: 204}},
			[]string{"GET /api/v1/asks/" + u1, "PUT /api/v1/asks/" + u1 + "/followers/ses_1"}, "Following ask " + u1},
		{dispatch.ToolComment, `{"issue":"DSP-1","body":"b"}`, []answer{jsonAnswer(201, `{"id":"c1"}`)},
			[]string{"POST /api/v1/issues/DSP-1/comments"}, "Commented on DSP-1 (comment c1)"},
		{dispatch.ToolSuggest, `{"issue":"DSP-1","artifact":"spec","quote":"a","replace_with":"b"}`, []answer{ok(issue), jsonAnswer(201, `{"id":"c2"}`)},
			[]string{"GET /api/v1/issues/DSP-1", "POST /api/v1/artifacts/art-1/comments"}, "Suggested a replacement on DSP-1 (comment c2)"},
		{dispatch.ToolMessage, `{"issue":"DSP-1","body":"b"}`, []answer{jsonAnswer(201, `{"id":"m1"}`)},
			[]string{"POST /api/v1/issues/DSP-1/messages"}, "Posted message m1 (dispatch://DSP-1/message/m1)"},
		{dispatch.ToolDocEdit, `{"issue":"DSP-1","artifact":"Spec","ops":[{"op":"insert","markdown":"x","after":"end"}]}`,
			[]answer{ok(issue), ok(`{"applied":1,"version":{"number":3},"token":"tk"}`)},
			[]string{"GET /api/v1/issues/DSP-1", "POST /api/v1/artifacts/art-1/edits"}, "Applied 1 ops (version 3)"},
		{dispatch.ToolDocRead, `{"issue":"DSP-1","version":1}`, []answer{ok(issue), ok(`{"number":1,"markdown":"# v1"}`), ok(`[]`)},
			[]string{"GET /api/v1/issues/DSP-1", "GET /api/v1/artifacts/art-1/versions/1", "GET /api/v1/artifacts/art-1/blocks"}, "# v1\nVersion: 1\nOpen anchored asks/comments: 0 asks, 0 comments\nApproval: none requested"},
		{dispatch.ToolRequestApproval, `{"issue":"DSP-1"}`, []answer{ok(issue), ok(`{"ask":null,"artifact_id":"art-1","version":2,"approval":null}`)},
			[]string{"GET /api/v1/issues/DSP-1", "POST /api/v1/artifacts/art-1/approval-requests"}, "Approval of Spec at version 2 unchanged (no change)"},
		{dispatch.ToolArtifact, `{"issue":"DSP-1","name":"n.md","content":"x"}`, []answer{jsonAnswer(201, `{"artifact":{"slug":"n","name":"n.md"},"version":{"number":1}}`)},
			[]string{"POST /api/v1/issues/DSP-1/artifacts"}, "Uploaded n.md as version 1 (artifact slug n; dispatch://DSP-1/artifact/n)"},
		{dispatch.ToolRead, `{"issue":"DSP-1"}`, []answer{ok(issue), ok(`[]`), ok(graph), ok(graph), ok(graph)},
			[]string{"GET /api/v1/issues/DSP-1", "GET /api/v1/issues/DSP-1/events?after=0&limit=10", "GET /api/v1/issues/DSP-1/references",
				"GET /api/v1/references?to=dispatch%3A%2F%2FDSP-1", "GET /api/v1/references?from=dispatch%3A%2F%2FDSP-1"}, "DSP-1 [todo] T\n"},
		{dispatch.ToolSearch, `{"query":"ab"}`, []answer{ok(`{"results":[],"took_ms":0}`)},
			[]string{"GET /api/v1/search?q=ab"}, `No results for "ab"`},
		{dispatch.ToolIssues, `{"project":"DSP"}`, []answer{ok(`{"issues":[{"key":"DSP-1","title":"T","status":"todo","priority":null,"open_asks":0}],"total":1,"limit":50,"offset":0}`)},
			[]string{"GET /api/v1/issues?project=DSP"}, "DSP-1 [todo] T"},
		{dispatch.ToolArchitectureSync, `{"project":"CORE"}`, []answer{ok(`{"project":"CORE","repo":"r","branch":"b","last_commit":"c","last_sync_at":"t","last_error":null}`)},
			[]string{"POST /api/v1/projects/CORE/architecture-source/sync"}, "Synced CORE architecture from r@b: commit c (t)."},
		{dispatch.ToolOpenAsks, `{}`, []answer{ok(open)},
			[]string{"GET /api/v1/asks/open?author_session=ses_1"}, "1 open ask by this session (1 waiting on a human, 0 waiting on an agent)\n- " + u1},
		{dispatch.ToolWhoami, ``, []answer{ok(`{"kind":"agent","owner":"octocat"}`)},
			[]string{"GET /api/v1/whoami"}, "Session ses_1 acts for octocat: "},
	}
	if len(tests) != len(dispatch.Names()) {
		t.Fatalf("%d rows for %d tools", len(tests), len(dispatch.Names()))
	}
	for i, tt := range tests {
		if dispatch.Names()[i] != tt.tool {
			t.Fatalf("row %d is %s, suite has %s", i, tt.tool, dispatch.Names()[i])
		}
		t.Run(tt.tool, func(t *testing.T) {
			f := newFakeServer(t, tt.answers...)
			res, err := newClient(f).CallJSON(context.Background(), tt.tool, []byte(tt.args))
			if err != nil {
				t.Fatalf("%v", err)
			}
			if !strings.HasPrefix(res.Text, tt.text) {
				t.Errorf("text %q, want prefix %q", res.Text, tt.text)
			}
			var lines []string
			for _, r := range f.requests() {
				line := r.method + " " + r.path
				if r.rawQuery != "" {
					line += "?" + r.rawQuery
				}
				lines = append(lines, line)
			}
			if strings.Join(lines, "\n") != strings.Join(tt.requests, "\n") {
				t.Errorf("requests\n got %q\nwant %q", lines, tt.requests)
			}
		})
	}
}
