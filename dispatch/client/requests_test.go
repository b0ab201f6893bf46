package client_test

import (
	"context"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/dispatch/client"
)

// TestEndpoints pins the request every endpoint method builds (dispatch-tools.md §8.1, §8.6):
// method, escaped path, raw query (order of §8.6, RFC 3986 percent-encoding, absent arguments
// omitted), the exact JSON body (member order = API type field order, actor on every write),
// and the headers.
func TestEndpoints(t *testing.T) {
	ctx := context.Background()
	u1 := "01234567-0000-4000-8000-000000000001"
	tests := []struct {
		name             string
		call             func(*client.Client) error
		answer           answer
		method, path     string
		query            string
		body             string // "" = no body
		wantContentType  string
		skipBodyEquality bool
	}{
		{"CreateIssue", func(c *client.Client) error {
			_, err := c.CreateIssue(ctx, dispatch.CreateIssueInput{Project: "DSP", Title: "x", Priority: dispatch.Some(dispatch.IssuePriority(0)),
				Components: &dispatch.IssueComponentsInput{Mode: dispatch.ComponentsNone, Reason: "meta"}})
			return err
		}, jsonAnswer(201, `{"key":"DSP-2"}`), "POST", "/api/v1/issues", "",
			`{"project":"DSP","title":"x","priority":0,"components":{"mode":"none","reason":"meta"},"actor":` + testActor + `}`, "application/json", false},
		{"GetIssue", func(c *client.Client) error { _, err := c.GetIssue(ctx, "DSP-1"); return err },
			jsonAnswer(200, `{"key":"DSP-1"}`), "GET", "/api/v1/issues/DSP-1", "", "", "", false},
		{"UpdateIssue tri-state", func(c *client.Client) error {
			_, err := c.UpdateIssue(ctx, "DSP-1", dispatch.UpdateIssueInput{Labels: dispatch.Some([]string{}), Route: dispatch.Null[string](),
				Parent: dispatch.Null[string](), ExternalLinks: dispatch.Some([]dispatch.ExternalLink{{URL: "https://a.test", Kind: "pr"}, {URL: "https://b.test"}})})
			return err
		}, jsonAnswer(200, `{"issue":{"key":"DSP-1"}}`), "PATCH", "/api/v1/issues/DSP-1", "",
			`{"labels":[],"route":null,"external_links":[{"url":"https://a.test","kind":"pr"},{"url":"https://b.test"}],"parent":null,"actor":` + testActor + `}`, "application/json", false},
		{"ResolveIssueRef canonical and encoded", func(c *client.Client) error {
			key, err := c.ResolveIssueRef(ctx, " Acme/Widgets#12 ")
			if err == nil && key != "DSP-12" {
				t.Errorf("key %q", key)
			}
			return err
		}, jsonAnswer(200, `{"key":"DSP-12"}`), "GET", "/api/v1/issues/resolve", "ref=acme%2Fwidgets%2312", "", "", false},
		{"IssueEvents", func(c *client.Client) error { _, err := c.IssueEvents(ctx, "DSP-1", 2, 10); return err },
			jsonAnswer(200, `{"events":[]}`), "GET", "/api/v1/issues/DSP-1/events", "after=2&limit=10", "", "", false},
		{"IssueReferences", func(c *client.Client) error { _, err := c.IssueReferences(ctx, "DSP-1"); return err },
			jsonAnswer(200, `{"node":{"kind":"issue","id":"DSP-1"},"edges":[]}`), "GET", "/api/v1/issues/DSP-1/references", "", "", "", false},
		{"ListIssues all filters", func(c *client.Client) error {
			_, err := c.ListIssues(ctx, client.IssueQuery{Project: "DSP", Status: "todo", Parent: "DSP-1", Label: "a b", UpdatedSince: "2026-01-01T00:00:00+01:00", Limit: 10})
			return err
		}, jsonAnswer(200, `{"issues":[],"total":0,"limit":10,"offset":0}`), "GET", "/api/v1/issues",
			"project=DSP&status=todo&parent=DSP-1&label=a%20b&updated_since=2026-01-01T00%3A00%3A00%2B01%3A00&limit=10", "", "", false},
		{"ListIssues absent filters omitted", func(c *client.Client) error {
			_, err := c.ListIssues(ctx, client.IssueQuery{Project: "DSP"})
			return err
		}, jsonAnswer(200, `{"issues":[],"total":0,"limit":50,"offset":0}`), "GET", "/api/v1/issues", "project=DSP", "", "", false},
		{"IssueComments", func(c *client.Client) error { _, err := c.IssueComments(ctx, "DSP-1"); return err },
			jsonAnswer(200, `[]`), "GET", "/api/v1/issues/DSP-1/comments", "", "", "", false},
		{"CreateMessage", func(c *client.Client) error {
			_, _, err := c.CreateMessage(ctx, "DSP-1", dispatch.CreateMessageInput{Body: "b", InReplyTo: u1})
			return err
		}, jsonAnswer(201, `{"id":"m"}`), "POST", "/api/v1/issues/DSP-1/messages", "",
			`{"body":"b","in_reply_to":"` + u1 + `","actor":` + testActor + `}`, "application/json", false},
		{"GetIssueMessage", func(c *client.Client) error { _, err := c.GetIssueMessage(ctx, "DSP-1", u1); return err },
			jsonAnswer(200, `{"message":{"id":"m"},"replies":[]}`), "GET", "/api/v1/issues/DSP-1/messages/" + u1, "", "", "", false},
		{"CreateIssueAsk", func(c *client.Client) error {
			multiple := true
			_, _, err := c.CreateIssueAsk(ctx, "DSP-1", dispatch.CreateAskInput{Question: "Q", Options: []dispatch.AskOption{{Label: "Yes"}}, Multiple: &multiple, Urgency: dispatch.UrgencyHigh})
			return err
		}, jsonAnswer(201, `{"id":"a"}`), "POST", "/api/v1/issues/DSP-1/asks", "",
			`{"question":"Q","options":[{"label":"Yes"}],"multiple":true,"urgency":"high","actor":` + testActor + `}`, "application/json", false},
		{"CreateArtifactAsk", func(c *client.Client) error {
			occ := int64(0)
			_, _, err := c.CreateArtifactAsk(ctx, u1, dispatch.CreateAskInput{Question: "Q", Anchor: &dispatch.AnchorInput{Artifact: "spec", Quote: "q", Occurrence: &occ}})
			return err
		}, jsonAnswer(201, `{"ask":{"id":"a"}}`), "POST", "/api/v1/artifacts/" + u1 + "/asks", "",
			`{"question":"Q","anchor":{"artifact":"spec","quote":"q","occurrence":0},"actor":` + testActor + `}`, "application/json", false},
		{"EditAsk options cleared", func(c *client.Client) error {
			_, err := c.EditAsk(ctx, u1, dispatch.EditAskInput{Options: []dispatch.AskOption{}})
			return err
		}, jsonAnswer(200, `{"id":"a"}`), "PATCH", "/api/v1/asks/" + u1, "", `{"options":[],"actor":` + testActor + `}`, "application/json", false},
		{"ResolveAsk", func(c *client.Client) error {
			_, err := c.ResolveAsk(ctx, u1, dispatch.ResolveAskInput{Kind: dispatch.ResolutionResolved, Reason: "r"})
			return err
		}, jsonAnswer(200, `{"id":"a"}`), "POST", "/api/v1/asks/" + u1 + "/resolve", "", `{"kind":"resolved","reason":"r","actor":` + testActor + `}`, "application/json", false},
		{"GetAsk", func(c *client.Client) error { _, err := c.GetAsk(ctx, u1); return err },
			jsonAnswer(200, `{"ask":{"id":"a"},"replies":[],"edits":[],"followers":[]}`), "GET", "/api/v1/asks/" + u1, "", "", "", false},
		{"FollowAsk", func(c *client.Client) error { return c.FollowAsk(ctx, u1, "ses 1") },
			answer{status: 204}, "PUT", "/api/v1/asks/" + u1 + "/followers/ses%201", "", `{"actor":` + testActor + `}`, "application/json", false},
		{"UnfollowAsk", func(c *client.Client) error { return c.UnfollowAsk(ctx, u1, "ses_1") },
			jsonAnswer(200, `{}`), "DELETE", "/api/v1/asks/" + u1 + "/followers/ses_1", "", `{"actor":` + testActor + `}`, "application/json", false},
		{"OpenAsks by session", func(c *client.Client) error { _, err := c.OpenAsks(ctx, "ses_1", ""); return err },
			jsonAnswer(200, `{"asks":[]}`), "GET", "/api/v1/asks/open", "author_session=ses_1", "", "", false},
		{"OpenAsks by project", func(c *client.Client) error { _, err := c.OpenAsks(ctx, "ses_1", "CORE"); return err },
			jsonAnswer(200, `{"asks":[]}`), "GET", "/api/v1/asks/open", "project=CORE", "", "", false},
		{"CreateIssueComment", func(c *client.Client) error {
			_, _, err := c.CreateIssueComment(ctx, "DSP-1", dispatch.CreateCommentInput{Body: new("b"), AskID: u1, Turn: dispatch.TurnAgent})
			return err
		}, jsonAnswer(201, `{"id":"c","ask_waiting_on":"agent"}`), "POST", "/api/v1/issues/DSP-1/comments", "",
			`{"body":"b","ask_id":"` + u1 + `","turn":"agent","actor":` + testActor + `}`, "application/json", false},
		{"CreateArtifactComment suggestion", func(c *client.Client) error {
			_, _, err := c.CreateArtifactComment(ctx, u1, dispatch.CreateCommentInput{Anchor: &dispatch.AnchorInput{Artifact: u1, Quote: "a"}, Suggestion: &dispatch.SuggestionInput{ReplaceWith: "b"}})
			return err
		}, jsonAnswer(201, `{"id":"c"}`), "POST", "/api/v1/artifacts/" + u1 + "/comments", "",
			`{"anchor":{"artifact":"` + u1 + `","quote":"a"},"suggestion":{"replace_with":"b"},"actor":` + testActor + `}`, "application/json", false},
		{"ResolveComment", func(c *client.Client) error { _, err := c.ResolveComment(ctx, u1); return err },
			jsonAnswer(200, `{"id":"c"}`), "POST", "/api/v1/comments/" + u1 + "/resolve", "", `{"actor":` + testActor + `}`, "application/json", false},
		{"GetComment", func(c *client.Client) error { _, err := c.GetComment(ctx, u1); return err },
			jsonAnswer(200, `{"comment":{"id":"c"},"replies":[]}`), "GET", "/api/v1/comments/" + u1, "", "", "", false},
		{"ProjectArtifact escapes the slug", func(c *client.Client) error { _, err := c.ProjectArtifact(ctx, "CORE", "road map/ü"); return err },
			jsonAnswer(200, `{"id":"x"}`), "GET", "/api/v1/projects/CORE/artifacts/road%20map%2F%C3%BC", "", "", "", false},
		{"UnlinkedProjectArtifacts", func(c *client.Client) error { _, err := c.UnlinkedProjectArtifacts(ctx, "CORE"); return err },
			jsonAnswer(200, `[]`), "GET", "/api/v1/projects/CORE/artifacts", "unlinked=true", "", "", false},
		{"ArtifactBlocks", func(c *client.Client) error { _, err := c.ArtifactBlocks(ctx, u1); return err },
			jsonAnswer(200, `{"blocks":[]}`), "GET", "/api/v1/artifacts/" + u1 + "/blocks", "", "", "", false},
		{"ArtifactComments", func(c *client.Client) error { _, err := c.ArtifactComments(ctx, u1); return err },
			jsonAnswer(200, `[]`), "GET", "/api/v1/artifacts/" + u1 + "/comments", "", "", "", false},
		{"EditArtifact empty ops", func(c *client.Client) error {
			_, err := c.EditArtifact(ctx, u1, dispatch.EditArtifactInput{Precondition: &dispatch.EditPrecondition{Document: "t"}})
			return err
		}, jsonAnswer(200, `{"applied":0,"version":null}`), "POST", "/api/v1/artifacts/" + u1 + "/edits", "",
			`{"ops":[],"precondition":{"document":"t"},"actor":` + testActor + `}`, "application/json", false},
		{"ArtifactText", func(c *client.Client) error { _, err := c.ArtifactText(ctx, u1); return err },
			jsonAnswer(200, `{"markdown":"m","version":1}`), "GET", "/api/v1/artifacts/" + u1 + "/text", "", "", "", false},
		{"ArtifactVersion", func(c *client.Client) error { _, err := c.ArtifactVersion(ctx, u1, 3); return err },
			jsonAnswer(200, `{"number":3,"markdown":"m"}`), "GET", "/api/v1/artifacts/" + u1 + "/versions/3", "", "", "", false},
		{"RequestApproval 201", func(c *client.Client) error {
			r, err := c.RequestApproval(ctx, u1)
			if err == nil && !r.Requested {
				t.Error("201 is requested")
			}
			return err
		}, jsonAnswer(201, `{"ask":null,"artifact_id":"a","version":1,"approval":null}`), "POST", "/api/v1/artifacts/" + u1 + "/approval-requests", "",
			`{"actor":` + testActor + `}`, "application/json", false},
		{"RequestApproval 200", func(c *client.Client) error {
			r, err := c.RequestApproval(ctx, u1)
			if err == nil && r.Requested {
				t.Error("200 is not requested")
			}
			return err
		}, jsonAnswer(200, `{"ask":null,"artifact_id":"a","version":1,"approval":null}`), "POST", "/api/v1/artifacts/" + u1 + "/approval-requests", "",
			`{"actor":` + testActor + `}`, "application/json", false},
		{"UploadInline issue", func(c *client.Client) error {
			_, err := c.UploadInline(ctx, "DSP-1", "", client.InlineArtifactInput{Name: "n.md", Content: "<b>&"})
			return err
		}, jsonAnswer(201, `{"artifact":{"id":"a"},"version":{"number":1}}`), "POST", "/api/v1/issues/DSP-1/artifacts", "",
			`{"name":"n.md","content":"<b>&","actor":` + testActor + `}`, "application/json", false},
		{"UploadInline project", func(c *client.Client) error {
			_, err := c.UploadInline(ctx, "", "CORE", client.InlineArtifactInput{Name: "n.md", Content: "c", Summary: "s"})
			return err
		}, jsonAnswer(201, `{"artifact":{"id":"a"},"version":{"number":1}}`), "POST", "/api/v1/projects/CORE/artifacts", "",
			`{"name":"n.md","content":"c","summary":"s","actor":` + testActor + `}`, "application/json", false},
		{"UploadFile", func(c *client.Client) error {
			_, err := c.UploadFile(ctx, "", "CORE", client.ArtifactFile{Name: "d.md", Summary: "s", Filename: "d.md", Content: []byte("# D\n")})
			return err
		}, jsonAnswer(201, `{"artifact":{"id":"a"},"version":{"number":1}}`), "POST", "/api/v1/projects/CORE/artifacts", "",
			"", "multipart/form-data", true},
		{"SyncArchitecture", func(c *client.Client) error { _, err := c.SyncArchitecture(ctx, "CORE"); return err },
			jsonAnswer(200, `{"project":"CORE"}`), "POST", "/api/v1/projects/CORE/architecture-source/sync", "", `{"actor":` + testActor + `}`, "application/json", false},
		{"ArchitectureTree", func(c *client.Client) error { _, err := c.ArchitectureTree(ctx, "CORE"); return err },
			jsonAnswer(200, `{"components":[]}`), "GET", "/api/v1/projects/CORE/architecture", "", "", "", false},
		{"ListUsers", func(c *client.Client) error { _, err := c.ListUsers(ctx); return err },
			jsonAnswer(200, `{"users":[{"login":"ana"}]}`), "GET", "/api/v1/users", "", "", "", false},
		{"Search", func(c *client.Client) error { _, err := c.Search(ctx, "\"a b\" -c", "", 0); return err },
			jsonAnswer(200, `{"results":[],"took_ms":1}`), "GET", "/api/v1/search", "q=%22a%20b%22%20-c", "", "", false},
		{"Search all", func(c *client.Client) error { _, err := c.Search(ctx, "ab", "DSP", 5); return err },
			jsonAnswer(200, `{"results":[],"took_ms":1}`), "GET", "/api/v1/search", "q=ab&project=DSP&limit=5", "", "", false},
		{"ReferencesTo", func(c *client.Client) error { _, err := c.ReferencesTo(ctx, "dispatch://DSP-1"); return err },
			jsonAnswer(200, `{"edges":[]}`), "GET", "/api/v1/references", "to=dispatch%3A%2F%2FDSP-1", "", "", false},
		{"ReferencesFrom", func(c *client.Client) error {
			_, err := c.ReferencesFrom(ctx, "dispatch://CORE/artifact/x@v2")
			return err
		},
			jsonAnswer(200, `{"edges":[]}`), "GET", "/api/v1/references", "from=dispatch%3A%2F%2FCORE%2Fartifact%2Fx%40v2", "", "", false},
		{"Agents", func(c *client.Client) error { _, err := c.Agents(ctx); return err },
			jsonAnswer(200, `[]`), "GET", "/api/v1/agents", "", "", "", false},
		{"Whoami", func(c *client.Client) error { _, err := c.Whoami(ctx); return err },
			jsonAnswer(200, `{"kind":"agent","owner":null}`), "GET", "/api/v1/whoami", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, tt.answer)
			if err := tt.call(newClient(f)); err != nil {
				t.Fatalf("call: %v", err)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			r := reqs[0]
			if r.method != tt.method || r.path != tt.path || r.rawQuery != tt.query {
				t.Errorf("request %s %s?%s, want %s %s?%s", r.method, r.path, r.rawQuery, tt.method, tt.path, tt.query)
			}
			if r.header.Get("Authorization") != "Bearer tok_test" || r.header.Get("Accept") != "application/json" {
				t.Errorf("headers %v", r.header)
			}
			ct, _, _ := mime.ParseMediaType(r.header.Get("Content-Type"))
			if ct != tt.wantContentType {
				t.Errorf("Content-Type %q, want %q", r.header.Get("Content-Type"), tt.wantContentType)
			}
			if !tt.skipBodyEquality && string(r.body) != tt.body {
				t.Errorf("body\n got %s\nwant %s", r.body, tt.body)
			}
		})
	}
}

// TestUploadFileParts pins the multipart form of an artifact upload: name, summary, actor (JSON
// text), file.
func TestUploadFileParts(t *testing.T) {
	f := newFakeServer(t, jsonAnswer(201, `{"artifact":{"id":"a"},"version":{"number":1}}`))
	c := newClient(f)
	if _, err := c.UploadFile(context.Background(), "DSP-1", "", client.ArtifactFile{Name: "d.md", Summary: "s", Filename: `we"ird.png`, Content: []byte{0, 1, 2}}); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	_, params, _ := mime.ParseMediaType(r.header.Get("Content-Type"))
	mr := multipart.NewReader(strings.NewReader(string(r.body)), params["boundary"])
	want := []struct{ name, filename, value, ct string }{
		{"name", "", "d.md", ""}, {"summary", "", "s", ""}, {"actor", "", testActor, ""}, {"file", `we"ird.png`, "\x00\x01\x02", "image/png"},
	}
	for _, w := range want {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(p)
		if p.FormName() != w.name || p.FileName() != w.filename || string(data) != w.value {
			t.Errorf("part %q %q = %q, want %q %q %q", p.FormName(), p.FileName(), data, w.name, w.filename, w.value)
		}
		if w.ct != "" && p.Header.Get("Content-Type") != w.ct {
			t.Errorf("part %s Content-Type %q", w.name, p.Header.Get("Content-Type"))
		}
	}
	if _, err := mr.NextPart(); err == nil {
		t.Error("extra part")
	}
}

// TestUploadTooLarge: a file over 25 MiB is refused before sending (§8.6).
func TestUploadTooLarge(t *testing.T) {
	f := newFakeServer(t)
	c := newClient(f)
	_, err := c.UploadFile(context.Background(), "DSP-1", "", client.ArtifactFile{Name: "big", Filename: "big.bin", Content: make([]byte, dispatch.ArtifactUploadMax+1)})
	want := "big.bin is 26214401 bytes; an upload is at most 26214400 bytes (25 MiB)"
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %s", err, want)
	}
	if len(f.requests()) != 0 {
		t.Fatal("a request was sent")
	}
}

// TestResolveIssueRefCached: each external resolution is cached for the client's lifetime, keyed
// by the canonical form (§8.3).
func TestResolveIssueRefCached(t *testing.T) {
	f := newFakeServer(t, jsonAnswer(200, `{"key":"DSP-12"}`))
	c := newClient(f)
	for _, ref := range []string{"acme/widgets#12", "Acme/Widgets#12", " ACME/widgets#12"} {
		if key, err := c.ResolveIssueRef(context.Background(), ref); err != nil || key != "DSP-12" {
			t.Fatalf("%s: %q %v", ref, key, err)
		}
	}
	if n := len(f.requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

// TestArchitectureSourceAbsent: `200 null` and `404 SOURCE_NOT_FOUND` mean no source; other
// failures are errors.
func TestArchitectureSourceAbsent(t *testing.T) {
	for _, tt := range []struct {
		name    string
		answer  answer
		wantErr string
	}{
		{"null", jsonAnswer(200, " null\n"), ""},
		{"not found", jsonAnswer(404, `{"error":"none","code":"SOURCE_NOT_FOUND"}`), ""},
		{"other 404", jsonAnswer(404, `{"error":"no project","code":"NOT_FOUND"}`), "NOT_FOUND: no project"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(newFakeServer(t, tt.answer))
			src, err := c.ArchitectureSource(context.Background(), "DSP")
			if tt.wantErr == "" && (err != nil || src != nil) {
				t.Fatalf("%v %v", src, err)
			}
			if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("err %v, want %s", err, tt.wantErr)
			}
		})
	}
}

// TestWrappedAndListAnswers: write answers are accepted bare or wrapped in their type's name,
// list answers bare or under their plural name; anything else is a gateway error.
func TestWrappedAndListAnswers(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name, body string
		ok         bool
	}{
		{"bare", `{"id":"c1","body":"b","mentions":[],"deliveries":[]}`, true},
		{"wrapped", `{"comment":{"id":"c1","body":"b"},"advice":{}}`, true},
		{"array", `[]`, false},
		{"string", `"c1"`, false},
		{"duplicate member", `{"id":"c1","id":"c2"}`, false},
	} {
		t.Run("comment "+tt.name, func(t *testing.T) {
			c := newClient(newFakeServer(t, jsonAnswer(200, tt.body)))
			cm, err := c.ResolveComment(ctx, "x")
			if tt.ok != (err == nil) {
				t.Fatalf("err %v", err)
			}
			if tt.ok && cm.ID != "c1" {
				t.Fatalf("id %q", cm.ID)
			}
			if !tt.ok && client.ErrorCode(err) != "HTTP_200" {
				t.Fatalf("code %q", client.ErrorCode(err))
			}
		})
	}
	for _, tt := range []struct {
		name, body string
		n          int
		ok         bool
	}{
		{"bare", `[{"id":"a"},{"id":"b"}]`, 2, true},
		{"under blocks", `{"blocks":[{"id":"a"}]}`, 1, true},
		{"object without the list", `{"items":[]}`, 0, false},
		{"null", `null`, 0, false},
	} {
		t.Run("blocks "+tt.name, func(t *testing.T) {
			c := newClient(newFakeServer(t, jsonAnswer(200, tt.body)))
			bs, err := c.ArtifactBlocks(ctx, "x")
			if tt.ok != (err == nil) || len(bs) != tt.n {
				t.Fatalf("%d blocks, err %v", len(bs), err)
			}
		})
	}
}

// TestDisabledEndpoints: with a blank token no endpoint sends anything (§8.1).
func TestDisabledEndpoints(t *testing.T) {
	f := newFakeServer(t)
	c := client.New(client.Config{URL: f.URL, Token: "  "})
	if _, err := c.Whoami(context.Background()); err != dispatch.ErrDisabled {
		t.Fatalf("err %v", err)
	}
	if _, err := c.Call(context.Background(), dispatch.ToolWhoami, nil); err != dispatch.ErrDisabled {
		t.Fatalf("Call: %v", err)
	}
	if len(f.requests()) != 0 {
		t.Fatal("a request was sent")
	}
}
