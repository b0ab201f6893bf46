package dispatch_test

import (
	"testing"

	"github.com/agentwire/agentwire/dispatch"
)

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := dispatch.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUpdateIssueInputTriState is §8.7 / §9.1: absent members are omitted, null is sent for
// clearing, `[]` clears labels (conformance case 65's body shape).
func TestUpdateIssueInputTriState(t *testing.T) {
	actor := &dispatch.Actor{Kind: dispatch.ActorSession, ID: "ses_1", Origin: &dispatch.ActorOrigin{Host: "h"}}
	cases := []struct {
		in   dispatch.UpdateIssueInput
		want string
	}{
		{dispatch.UpdateIssueInput{Parent: dispatch.Null[string](), Actor: actor},
			`{"parent":null,"actor":{"kind":"session","id":"ses_1","origin":{"host":"h"}}}`},
		{dispatch.UpdateIssueInput{Labels: dispatch.Some([]string{})}, `{"labels":[]}`},
		{dispatch.UpdateIssueInput{Labels: dispatch.Some[[]string](nil)}, `{"labels":[]}`},
		{dispatch.UpdateIssueInput{Route: dispatch.Some("role:dev"), Status: dispatch.Some(dispatch.StatusTodo)}, `{"status":"todo","route":"role:dev"}`},
		{dispatch.UpdateIssueInput{Components: dispatch.Null[dispatch.IssueComponentsInput]()}, `{"components":null}`},
		{dispatch.UpdateIssueInput{ExternalLinks: dispatch.Some([]dispatch.ExternalLink{{URL: "https://a.test", Kind: "pr"}, {URL: "https://b.test"}})},
			`{"external_links":[{"url":"https://a.test","kind":"pr"},{"url":"https://b.test"}]}`},
		{dispatch.UpdateIssueInput{}, `{}`},
	}
	for _, c := range cases {
		if got := encode(t, c.in); got != c.want {
			t.Errorf("got %s want %s", got, c.want)
		}
	}
	var u dispatch.UpdateIssueInput
	if err := dispatch.Decode([]byte(`{"parent":null,"route":"r","future":1}`), &u); err != nil {
		t.Fatal(err)
	}
	if !u.Parent.IsNull() || u.Assignee.Present() {
		t.Error("tri-state decode")
	}
	if r, ok := u.Route.Get(); !ok || r != "r" {
		t.Error("route")
	}
}

// TestDecodeLenient is §9.1: unknown members ignored, unknown enum strings tolerated, nullable
// members decoded, arrays encoded as [] when empty (conformance cases 73–74 for the types).
func TestDecodeLenient(t *testing.T) {
	var ask dispatch.Ask
	in := `{"id":"u","issue_key":null,"author":{"kind":"session","id":"s","owner":"octo","extra":true},"kind":"legacy_kind",` +
		`"question":"Q","options":[],"multiple":false,"urgency":"med","anchor":null,"state":"open","answer":null,` +
		`"opened_event_id":3,"created_at":"t","edited_at":null,"block_id":null,"new_member":{"x":1}}`
	if err := dispatch.Decode([]byte(in), &ask); err != nil {
		t.Fatal(err)
	}
	if ask.Kind != "legacy_kind" || ask.IssueKey != nil || !ask.BlockID.IsNull() || ask.ArtifactID.Present() || ask.Author.Owner != "octo" {
		t.Errorf("%+v", ask)
	}
	out := encode(t, ask)
	want := `{"id":"u","issue_key":null,"block_id":null,"author":{"kind":"session","id":"s","owner":"octo"},"kind":"legacy_kind",` +
		`"question":"Q","options":[],"multiple":false,"urgency":"med","anchor":null,"state":"open","answer":null,` +
		`"opened_event_id":3,"created_at":"t","edited_at":null}`
	if out != want {
		t.Errorf("re-encode:\n got %s\nwant %s", out, want)
	}

	var msg dispatch.Message
	if err := dispatch.Decode([]byte(`{"id":"m","issue_key":null,"author":{"kind":"user","id":"u"},"body":"b","deliveries":[],"created_at":"t"}`), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.IssueKey != nil || msg.Target.Present() {
		t.Error("message decode")
	}

	var c dispatch.Comment
	if got := encode(t, c); got != `{"id":"","issue_key":null,"author":{"kind":"","id":""},"body":"","anchor":null,"reply_to":null,"ask_id":null,"turn":null,"resolved":false,"resolved_by":null,"resolved_at":null,"edited_at":null,"suggestion":null,"created_at":"","mentions":[],"deliveries":[]}` {
		t.Errorf("empty arrays must encode as []: %s", got)
	}

	prio := dispatch.IssuePriority(0)
	var issue dispatch.Issue
	if err := dispatch.Decode([]byte(`{"key":"DSP-1","priority":0,"labels":["ui"]}`), &issue); err != nil || issue.Priority == nil || *issue.Priority != prio || issue.Labels[0] != "ui" {
		t.Errorf("priority 0 kept: %v %+v", err, issue)
	}
	if err := dispatch.Decode([]byte(`{"key":"DSP-1","priority":null}`), &issue); err != nil || issue.Priority != nil {
		t.Error("priority null")
	}

	var sr dispatch.SearchResult
	if err := dispatch.Decode([]byte(`{"kind":"issue","owner":{"kind":"issue","key":"DSP-1","title":"T","status":"todo"},"id":"x","snippet":"<mark>a</mark>","rank":0.5,"href":"/issues/DSP-1"}`), &sr); err != nil {
		t.Fatal(err)
	}
	if sr.Issue != nil || sr.Owner.Key != "DSP-1" {
		t.Error("search owner")
	}
	if got := encode(t, sr); got != `{"kind":"issue","owner":{"kind":"issue","key":"DSP-1","title":"T","status":"todo"},"id":"x","snippet":"<mark>a</mark>","rank":0.5,"href":"/issues/DSP-1"}` {
		t.Errorf("no HTML escaping, owner only: %s", got)
	}
}

func TestWhoamiAndIssueRead(t *testing.T) {
	owner := "octo"
	cases := []struct {
		in   dispatch.WhoamiResponse
		want string
	}{
		{dispatch.WhoamiResponse{Kind: dispatch.WhoamiUser, Login: "Octo"}, `{"kind":"user","login":"Octo"}`},
		{dispatch.WhoamiResponse{Kind: dispatch.WhoamiAgent, Owner: &owner}, `{"kind":"agent","owner":"octo"}`},
		{dispatch.WhoamiResponse{Kind: dispatch.WhoamiAgent}, `{"kind":"agent","owner":null}`},
	}
	for _, c := range cases {
		if got := encode(t, c.in); got != c.want {
			t.Errorf("got %s want %s", got, c.want)
		}
		var back dispatch.WhoamiResponse
		if err := dispatch.Decode([]byte(c.want), &back); err != nil || back.Kind != c.in.Kind {
			t.Errorf("decode %s: %v", c.want, err)
		}
	}
	for _, text := range []string{`{"issue":{"key":"DSP-1","open_asks":[]},"events":[]}`, `{"key":"DSP-1","open_asks":[]}`} {
		var r dispatch.IssueRead
		if err := dispatch.Decode([]byte(text), &r); err != nil || r.Issue.Key != "DSP-1" {
			t.Errorf("IssueRead %s: %v %+v", text, err, r)
		}
	}
}

func TestCreateInputs(t *testing.T) {
	occ := int64(0)
	cases := []struct {
		in   any
		want string
	}{
		{dispatch.CreateIssueInput{Project: "DSP", Title: "T", Priority: dispatch.Some(dispatch.IssuePriority(0))}, `{"project":"DSP","title":"T","priority":0}`},
		{dispatch.EditAskInput{Options: []dispatch.AskOption{}}, `{"options":[]}`},
		{dispatch.EditAskInput{}, `{}`},
		{dispatch.CreateCommentInput{Body: new("b"), AskID: "u", Turn: dispatch.TurnAgent, Anchor: &dispatch.AnchorInput{Artifact: "spec", Quote: "q", Occurrence: &occ}},
			`{"body":"b","anchor":{"artifact":"spec","quote":"q","occurrence":0},"ask_id":"u","turn":"agent"}`},
		{dispatch.CreateCommentInput{Suggestion: &dispatch.SuggestionInput{ReplaceWith: "w"}}, `{"suggestion":{"replace_with":"w"}}`},
		{dispatch.CreateCommentInput{Body: new("")}, `{"body":""}`},
		{dispatch.AnswerAskInput{Selected: nil}, `{"selected":[],"expected_edited_at":null}`},
		{dispatch.EditArtifactInput{Ops: []dispatch.EditOp{{Op: dispatch.OpDeleteRow, Index: &occ}}, Precondition: &dispatch.EditPrecondition{Document: "t"}},
			`{"ops":[{"op":"delete_row","index":0}],"precondition":{"document":"t"}}`},
	}
	for _, c := range cases {
		if got := encode(t, c.in); got != c.want {
			t.Errorf("got %s want %s", got, c.want)
		}
	}
}
