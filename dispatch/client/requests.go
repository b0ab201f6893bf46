package client

import (
	"bytes"
	"context"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/go-json-experiment/json/jsontext"
)

// This file holds the typed Dispatch endpoints the executor uses (dispatch-tools.md §8.6) and
// the other endpoints the client exposes (`GET /api/v1/projects/{key}/architecture`,
// `GET /api/v1/users`, `GET /api/v1/issues/resolve`). Every write method sets the body's actor
// to the session actor of §8.1.

// actorBody is the body of the writes that carry only the actor (`{actor}`).
type actorBody struct {
	Actor *dispatch.Actor `json:"actor"`
}

// ApprovalRequestResponse is the answer of `POST /api/v1/artifacts/{id}/approval-requests`:
// `{ask: Ask|null, artifact_id, version, approval}` (§8.6).
type ApprovalRequestResponse struct {
	Ask        *dispatch.Ask              `json:"ask"`
	ArtifactID string                     `json:"artifact_id"`
	Version    int64                      `json:"version"`
	Approval   *dispatch.ArtifactApproval `json:"approval"`
	// Requested is true for `201` (an approval ask was opened) and false for `200` (no change
	// or already approved). It is not a wire member.
	Requested bool `json:"-"`
}

// InlineArtifactInput is the JSON body of an inline `dispatch_artifact` upload:
// `{name, content, summary?, actor}`.
type InlineArtifactInput struct {
	Name    string          `json:"name"`
	Content string          `json:"content"`
	Summary string          `json:"summary,omitzero"`
	Actor   *dispatch.Actor `json:"actor,omitzero"`
}

// ArtifactFile is a file upload of `dispatch_artifact`, sent as multipart fields `name`,
// `summary` (when given), `actor` (JSON text) and `file`.
type ArtifactFile struct {
	Name, Summary string
	// Filename is the file part's filename; Content its bytes (at most
	// [dispatch.ArtifactUploadMax]).
	Filename string
	Content  []byte
}

// IssueWrite is the answer of an issue create or update: the issue and the optional write
// advice (§9.4).
type IssueWrite struct {
	Issue  dispatch.Issue
	Advice *dispatch.WriteAdvice
	// Raw is the answer's JSON text.
	Raw []byte
}

// ---- helpers ----

// answerShape is how a 2xx answer body holds the expected value.
type answerShape uint8

const (
	// shapeObject: the body is the value, a JSON object.
	shapeObject answerShape = iota
	// shapeArray: the body is the value, a JSON array.
	shapeArray
	// shapeWrapped: the body is the value (an object) or `{<member>: value, …}`.
	shapeWrapped
	// shapeList: the body is the array, or an object holding it under member.
	shapeList
)

// decodeAnswer decodes a 2xx answer into v according to its shape; a body that is not the
// expected JSON is a gateway error (§8.8). It never panics on any body.
func (c *Client) decodeAnswer(a *answer, shape answerShape, member string, v any) error {
	body := a.body
	want := byte('{')
	switch shape {
	case shapeArray:
		want = '['
	case shapeWrapped:
		body = unwrap(body, member)
	case shapeList:
		want = '['
		if firstByte(body) == '{' {
			body = unwrap(body, member)
		}
	}
	if firstByte(body) != want || dispatch.Decode(body, v) != nil {
		return c.gateway(a)
	}
	return nil
}

// do sends r and decodes the 2xx answer into v (an object, or an array when wantArray); v nil
// accepts any answer.
func (c *Client) do(ctx context.Context, r *request, v any, wantArray bool) (*answer, error) {
	a, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if v != nil {
		shape := shapeObject
		if wantArray {
			shape = shapeArray
		}
		if err := c.decodeAnswer(a, shape, "", v); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// doWrapped decodes an object answer that is either the value itself or `{<member>: value, …}`.
func (c *Client) doWrapped(ctx context.Context, r *request, member string, v any) (*answer, error) {
	a, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	return a, c.decodeAnswer(a, shapeWrapped, member, v)
}

// doList decodes an answer that is an array, or an object holding the array under member.
func (c *Client) doList(ctx context.Context, r *request, member string, v any) (*answer, error) {
	a, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	return a, c.decodeAnswer(a, shapeList, member, v)
}

// unwrap returns the JSON of body's member when body is an object holding that member as an
// object or array, else body itself.
func unwrap(body []byte, member string) []byte {
	if firstByte(body) != '{' {
		return body
	}
	var probe map[string]jsontext.Value
	if dispatch.Decode(body, &probe) != nil {
		return body
	}
	if v, ok := probe[member]; ok && (v.Kind() == '{' || v.Kind() == '[') {
		return v
	}
	return body
}

// adviceOf returns the optional `advice` member of a write answer (§9.4 WriteAdvice).
func adviceOf(body []byte) *dispatch.WriteAdvice {
	var probe struct {
		Advice *dispatch.WriteAdvice `json:"advice"`
	}
	if firstByte(body) != '{' || dispatch.Decode(body, &probe) != nil {
		return nil
	}
	return probe.Advice
}

func get(p string, query ...param) *request {
	return &request{method: http.MethodGet, path: p, query: query}
}

// opt appends the parameter when its value is present (absent arguments are omitted, §8.1).
func opt(q []param, name, value string, present bool) []param {
	if present {
		q = append(q, param{name, value})
	}
	return q
}

// ---- issues ----

// CreateIssue is `POST /api/v1/issues` with a CreateIssueInput (`dispatch_issue`).
func (c *Client) CreateIssue(ctx context.Context, in dispatch.CreateIssueInput) (*IssueWrite, error) {
	in.Actor = c.Actor()
	r, err := jsonRequest(http.MethodPost, path("issues"), in)
	if err != nil {
		return nil, err
	}
	return c.issueWrite(ctx, r)
}

func (c *Client) issueWrite(ctx context.Context, r *request) (*IssueWrite, error) {
	var w IssueWrite
	a, err := c.doWrapped(ctx, r, "issue", &w.Issue)
	if err != nil {
		return nil, err
	}
	w.Advice, w.Raw = adviceOf(a.body), a.body
	return &w, nil
}

// GetIssue is `GET /api/v1/issues/{key}` (IssueRead; a bare IssueDetails is accepted, §9.4).
func (c *Client) GetIssue(ctx context.Context, key string) (*dispatch.IssueRead, error) {
	var out dispatch.IssueRead
	if _, err := c.do(ctx, get(path("issues", key)), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateIssue is `PATCH /api/v1/issues/{key}` with an UpdateIssueInput (§8.7): absent members
// are omitted, null ones sent as null.
func (c *Client) UpdateIssue(ctx context.Context, key string, in dispatch.UpdateIssueInput) (*IssueWrite, error) {
	in.Actor = c.Actor()
	r, err := jsonRequest(http.MethodPatch, path("issues", key), in)
	if err != nil {
		return nil, err
	}
	r.linksPatch = in.ExternalLinks.Present()
	return c.issueWrite(ctx, r)
}

// ResolveIssueRef is `GET /api/v1/issues/resolve?ref=<owner/repo#n>`: the native key of an
// external issue reference (§8.3). The reference is canonicalized first and each resolution is
// cached for the client's lifetime.
func (c *Client) ResolveIssueRef(ctx context.Context, ref string) (string, error) {
	canonical, ok := dispatch.CanonicalExternalRef(ref)
	if !ok {
		canonical = strings.TrimSpace(ref)
	}
	c.mu.Lock()
	key, cached := c.external[canonical]
	c.mu.Unlock()
	if cached {
		return key, nil
	}
	var out struct {
		Key string `json:"key"`
	}
	a, err := c.do(ctx, get(path("issues", "resolve"), param{"ref", canonical}), &out, false)
	if err != nil {
		return "", err
	}
	if out.Key == "" {
		return "", c.gateway(a)
	}
	c.mu.Lock()
	c.external[canonical] = out.Key
	c.mu.Unlock()
	return out.Key, nil
}

// IssueEvents is `GET /api/v1/issues/{key}/events?after=<seq>&limit=<n>`.
func (c *Client) IssueEvents(ctx context.Context, key string, after, limit int64) ([]dispatch.DispatchEvent, error) {
	var out []dispatch.DispatchEvent
	r := get(path("issues", key, "events"), param{"after", strconv.FormatInt(after, 10)}, param{"limit", strconv.FormatInt(limit, 10)})
	if _, err := c.doList(ctx, r, "events", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// IssueReferences is `GET /api/v1/issues/{key}/references`.
func (c *Client) IssueReferences(ctx context.Context, key string) (*dispatch.GraphReferences, error) {
	var out dispatch.GraphReferences
	if _, err := c.do(ctx, get(path("issues", key, "references")), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// IssueQuery is the filter of `GET /api/v1/issues` (`dispatch_issues`); empty strings and a
// zero Limit are absent.
type IssueQuery struct {
	Project, Status, Parent, Label, UpdatedSince string
	Limit                                        int64
}

// ListIssues is `GET /api/v1/issues?project=&status=&parent=&label=&updated_since=&limit=`. An
// answer that is not an IssueSummaryPage object is a malformed (gateway) answer.
func (c *Client) ListIssues(ctx context.Context, q IssueQuery) (*dispatch.IssueSummaryPage, error) {
	var ps []param
	ps = opt(ps, "project", q.Project, q.Project != "")
	ps = opt(ps, "status", q.Status, q.Status != "")
	ps = opt(ps, "parent", q.Parent, q.Parent != "")
	ps = opt(ps, "label", q.Label, q.Label != "")
	ps = opt(ps, "updated_since", q.UpdatedSince, q.UpdatedSince != "")
	ps = opt(ps, "limit", strconv.FormatInt(q.Limit, 10), q.Limit != 0)
	a, err := c.send(ctx, get(path("issues"), ps...))
	if err != nil {
		return nil, err
	}
	return c.decodeIssuePage(a)
}

// decodeIssuePage decodes an IssueSummaryPage answer: an object whose `issues` is an array, or
// a malformed (gateway) answer (§8.6).
func (c *Client) decodeIssuePage(a *answer) (*dispatch.IssueSummaryPage, error) {
	var probe struct {
		Issues jsontext.Value `json:"issues"`
	}
	if err := c.decodeAnswer(a, shapeObject, "", &probe); err != nil {
		return nil, err
	}
	var out dispatch.IssueSummaryPage
	if probe.Issues.Kind() != '[' || dispatch.Decode(a.body, &out) != nil {
		return nil, c.gateway(a)
	}
	return &out, nil
}

// IssueComments is `GET /api/v1/issues/{key}/comments`.
func (c *Client) IssueComments(ctx context.Context, key string) ([]dispatch.Comment, error) {
	var out []dispatch.Comment
	if _, err := c.doList(ctx, get(path("issues", key, "comments")), "comments", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateMessage is `POST /api/v1/issues/{key}/messages` (`{body, in_reply_to?, actor}`).
func (c *Client) CreateMessage(ctx context.Context, key string, in dispatch.CreateMessageInput) (*dispatch.Message, *dispatch.WriteAdvice, error) {
	in.Actor = c.Actor()
	r, err := jsonRequest(http.MethodPost, path("issues", key, "messages"), in)
	if err != nil {
		return nil, nil, err
	}
	var out dispatch.Message
	a, err := c.doWrapped(ctx, r, "message", &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, adviceOf(a.body), nil
}

// GetIssueMessage is `GET /api/v1/issues/{key}/messages/{id}`.
func (c *Client) GetIssueMessage(ctx context.Context, key, id string) (*dispatch.MessageRead, error) {
	var out dispatch.MessageRead
	if _, err := c.do(ctx, get(path("issues", key, "messages", id)), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// ---- asks ----

// CreateIssueAsk is `POST /api/v1/issues/{key}/asks` with a CreateAskInput.
func (c *Client) CreateIssueAsk(ctx context.Context, key string, in dispatch.CreateAskInput) (*dispatch.Ask, *dispatch.WriteAdvice, error) {
	return c.createAsk(ctx, path("issues", key, "asks"), in)
}

// CreateArtifactAsk is `POST /api/v1/artifacts/{id}/asks` with a CreateAskInput.
func (c *Client) CreateArtifactAsk(ctx context.Context, artifactID string, in dispatch.CreateAskInput) (*dispatch.Ask, *dispatch.WriteAdvice, error) {
	return c.createAsk(ctx, path("artifacts", artifactID, "asks"), in)
}

func (c *Client) createAsk(ctx context.Context, p string, in dispatch.CreateAskInput) (*dispatch.Ask, *dispatch.WriteAdvice, error) {
	in.Actor = c.Actor()
	r, err := jsonRequest(http.MethodPost, p, in)
	if err != nil {
		return nil, nil, err
	}
	return c.askWrite(ctx, r)
}

func (c *Client) askWrite(ctx context.Context, r *request) (*dispatch.Ask, *dispatch.WriteAdvice, error) {
	var out dispatch.Ask
	a, err := c.doWrapped(ctx, r, "ask", &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, adviceOf(a.body), nil
}

// EditAsk is `PATCH /api/v1/asks/{id}` with an EditAskInput.
func (c *Client) EditAsk(ctx context.Context, id string, in dispatch.EditAskInput) (*dispatch.Ask, error) {
	in.Actor = c.Actor()
	r, err := jsonRequest(http.MethodPatch, path("asks", id), in)
	if err != nil {
		return nil, err
	}
	ask, _, err := c.askWrite(ctx, r)
	return ask, err
}

// ResolveAsk is `POST /api/v1/asks/{id}/resolve` (`{kind, reason, actor}`).
func (c *Client) ResolveAsk(ctx context.Context, id string, in dispatch.ResolveAskInput) (*dispatch.Ask, error) {
	in.Actor = c.Actor()
	r, err := jsonRequest(http.MethodPost, path("asks", id, "resolve"), in)
	if err != nil {
		return nil, err
	}
	ask, _, err := c.askWrite(ctx, r)
	return ask, err
}

// GetAsk is `GET /api/v1/asks/{id}` (AskRead).
func (c *Client) GetAsk(ctx context.Context, id string) (*dispatch.AskRead, error) {
	var out dispatch.AskRead
	if _, err := c.do(ctx, get(path("asks", id)), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// FollowAsk is `PUT /api/v1/asks/{id}/followers/{session}` (`{actor}`).
func (c *Client) FollowAsk(ctx context.Context, id, session string) error {
	return c.followers(ctx, http.MethodPut, id, session)
}

// UnfollowAsk is `DELETE /api/v1/asks/{id}/followers/{session}` (`{actor}`).
func (c *Client) UnfollowAsk(ctx context.Context, id, session string) error {
	return c.followers(ctx, http.MethodDelete, id, session)
}

func (c *Client) followers(ctx context.Context, method, id, session string) error {
	r, err := jsonRequest(method, path("asks", id, "followers", session), actorBody{c.Actor()})
	if err != nil {
		return err
	}
	_, err = c.send(ctx, r)
	return err
}

// OpenAsks is `GET /api/v1/asks/open?author_session=<session>` (project empty) or
// `GET /api/v1/asks/open?project=<key>`.
func (c *Client) OpenAsks(ctx context.Context, session, project string) (*dispatch.OpenAsksResponse, error) {
	q := param{"author_session", session}
	if project != "" {
		q = param{"project", project}
	}
	var out dispatch.OpenAsksResponse
	if _, err := c.do(ctx, get(path("asks", "open"), q), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// ---- comments ----

// CreateIssueComment is `POST /api/v1/issues/{key}/comments` with a CreateCommentInput.
func (c *Client) CreateIssueComment(ctx context.Context, key string, in dispatch.CreateCommentInput) (*dispatch.CommentWriteResponse, *dispatch.WriteAdvice, error) {
	return c.createComment(ctx, path("issues", key, "comments"), in)
}

// CreateArtifactComment is `POST /api/v1/artifacts/{id}/comments` with a CreateCommentInput
// (comments, anchored comments and suggestions).
func (c *Client) CreateArtifactComment(ctx context.Context, artifactID string, in dispatch.CreateCommentInput) (*dispatch.CommentWriteResponse, *dispatch.WriteAdvice, error) {
	return c.createComment(ctx, path("artifacts", artifactID, "comments"), in)
}

func (c *Client) createComment(ctx context.Context, p string, in dispatch.CreateCommentInput) (*dispatch.CommentWriteResponse, *dispatch.WriteAdvice, error) {
	in.Actor = c.Actor()
	r, err := jsonRequest(http.MethodPost, p, in)
	if err != nil {
		return nil, nil, err
	}
	var out dispatch.CommentWriteResponse
	a, err := c.doWrapped(ctx, r, "comment", &out)
	if err != nil {
		return nil, nil, err
	}
	if out.AskWaitingOn == "" {
		// A wrapped answer may carry ask_waiting_on beside the comment.
		var probe struct {
			AskWaitingOn dispatch.AskTurn `json:"ask_waiting_on"`
		}
		if dispatch.Decode(a.body, &probe) == nil {
			out.AskWaitingOn = probe.AskWaitingOn
		}
	}
	return &out, adviceOf(a.body), nil
}

// ResolveComment is `POST /api/v1/comments/{id}/resolve` (`{actor}`).
func (c *Client) ResolveComment(ctx context.Context, id string) (*dispatch.Comment, error) {
	r, err := jsonRequest(http.MethodPost, path("comments", id, "resolve"), actorBody{c.Actor()})
	if err != nil {
		return nil, err
	}
	var out dispatch.Comment
	if _, err := c.doWrapped(ctx, r, "comment", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetComment is `GET /api/v1/comments/{id}` (CommentRead).
func (c *Client) GetComment(ctx context.Context, id string) (*dispatch.CommentRead, error) {
	var out dispatch.CommentRead
	if _, err := c.do(ctx, get(path("comments", id)), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// ---- documents ----

// ProjectArtifact is `GET /api/v1/projects/{p}/artifacts/{slug}`.
func (c *Client) ProjectArtifact(ctx context.Context, project, slug string) (*dispatch.Artifact, error) {
	var out dispatch.Artifact
	if _, err := c.doWrapped(ctx, get(path("projects", project, "artifacts", slug)), "artifact", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UnlinkedProjectArtifacts is `GET /api/v1/projects/{p}/artifacts?unlinked=true`.
func (c *Client) UnlinkedProjectArtifacts(ctx context.Context, project string) ([]dispatch.Artifact, error) {
	var out []dispatch.Artifact
	if _, err := c.doList(ctx, get(path("projects", project, "artifacts"), param{"unlinked", "true"}), "artifacts", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ArtifactBlocks is `GET /api/v1/artifacts/{uuid}/blocks` (block ids and tokens; the id is the
// artifact's uuid, never a slug).
func (c *Client) ArtifactBlocks(ctx context.Context, artifactID string) ([]dispatch.ArtifactBlock, error) {
	var out []dispatch.ArtifactBlock
	if _, err := c.doList(ctx, get(path("artifacts", artifactID, "blocks")), "blocks", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ArtifactComments is `GET /api/v1/artifacts/{id}/comments`.
func (c *Client) ArtifactComments(ctx context.Context, artifactID string) ([]dispatch.Comment, error) {
	var out []dispatch.Comment
	if _, err := c.doList(ctx, get(path("artifacts", artifactID, "comments")), "comments", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// EditArtifact is `POST /api/v1/artifacts/{id}/edits` (`{ops, summary?, precondition?, actor}`).
func (c *Client) EditArtifact(ctx context.Context, artifactID string, in dispatch.EditArtifactInput) (*dispatch.EditArtifactResponse, error) {
	in.Actor = c.Actor()
	if in.Ops == nil {
		in.Ops = []dispatch.EditOp{}
	}
	r, err := jsonRequest(http.MethodPost, path("artifacts", artifactID, "edits"), in)
	if err != nil {
		return nil, err
	}
	var out dispatch.EditArtifactResponse
	if _, err := c.do(ctx, r, &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// ArtifactText is `GET /api/v1/artifacts/{id}/text`: the live document with its token.
func (c *Client) ArtifactText(ctx context.Context, artifactID string) (*dispatch.ArtifactText, error) {
	var out dispatch.ArtifactText
	if _, err := c.do(ctx, get(path("artifacts", artifactID, "text")), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// ArtifactVersion is `GET /api/v1/artifacts/{id}/versions/{n}`: a named version's text.
func (c *Client) ArtifactVersion(ctx context.Context, artifactID string, n int64) (*dispatch.ArtifactVersionText, error) {
	var out dispatch.ArtifactVersionText
	if _, err := c.do(ctx, get(path("artifacts", artifactID, "versions", strconv.FormatInt(n, 10))), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// RequestApproval is `POST /api/v1/artifacts/{id}/approval-requests` (`{actor}`): `201` =
// requested, `200` = no change or already approved.
func (c *Client) RequestApproval(ctx context.Context, artifactID string) (*ApprovalRequestResponse, error) {
	r, err := jsonRequest(http.MethodPost, path("artifacts", artifactID, "approval-requests"), actorBody{c.Actor()})
	if err != nil {
		return nil, err
	}
	var out ApprovalRequestResponse
	a, err := c.do(ctx, r, &out, false)
	if err != nil {
		return nil, err
	}
	out.Requested = a.status == http.StatusCreated
	return &out, nil
}

// UploadInline is `POST /api/v1/issues/{key}/artifacts` (issue set) or
// `POST /api/v1/projects/{p}/artifacts` with the JSON body `{name, content, summary?, actor}`.
func (c *Client) UploadInline(ctx context.Context, issueKey, project string, in InlineArtifactInput) (*dispatch.ArtifactUploadResponse, error) {
	in.Actor = c.Actor()
	r, err := jsonRequest(http.MethodPost, artifactsPath(issueKey, project), in)
	if err != nil {
		return nil, err
	}
	return c.upload(ctx, r)
}

// UploadFile is the multipart form of the artifact upload: fields `name`, `summary` (when
// given), `actor` (the actor's JSON text) and `file`. A file over 25 MiB is refused before
// sending.
func (c *Client) UploadFile(ctx context.Context, issueKey, project string, f ArtifactFile) (*dispatch.ArtifactUploadResponse, error) {
	if len(f.Content) > dispatch.ArtifactUploadMax {
		return nil, uploadTooLarge(f.Filename, int64(len(f.Content)))
	}
	actor, err := dispatch.Encode(c.Actor())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("name", f.Name)
	if f.Summary != "" {
		_ = w.WriteField("summary", f.Summary)
	}
	_ = w.WriteField("actor", string(actor))
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+quoteEscaper.Replace(f.Filename)+`"`)
	ct := mime.TypeByExtension(filepath.Ext(f.Filename))
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	part, _ := w.CreatePart(h)
	_, _ = part.Write(f.Content)
	_ = w.Close()
	r := &request{method: http.MethodPost, path: artifactsPath(issueKey, project), body: buf.Bytes(), contentType: w.FormDataContentType()}
	return c.upload(ctx, r)
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

func uploadTooLarge(name string, size int64) error {
	return &CallError{Message: name + " is " + strconv.FormatInt(size, 10) + " bytes; an upload is at most " +
		strconv.Itoa(dispatch.ArtifactUploadMax) + " bytes (25 MiB)"}
}

func artifactsPath(issueKey, project string) string {
	if issueKey != "" {
		return path("issues", issueKey, "artifacts")
	}
	return path("projects", project, "artifacts")
}

func (c *Client) upload(ctx context.Context, r *request) (*dispatch.ArtifactUploadResponse, error) {
	var out dispatch.ArtifactUploadResponse
	if _, err := c.do(ctx, r, &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// ---- projects, search, graph, identity ----

// ArchitectureSource is `GET /api/v1/projects/{key}/architecture-source`: nil when the project
// has none (`200 null` or `404 SOURCE_NOT_FOUND`).
func (c *Client) ArchitectureSource(ctx context.Context, project string) (*dispatch.ArchitectureSource, error) {
	a, err := c.send(ctx, get(path("projects", project, "architecture-source")))
	if err != nil {
		if ErrorCode(err) == dispatch.CodeSourceNotFound {
			return nil, nil
		}
		return nil, err
	}
	if firstByte(a.body) == 'n' && strings.TrimSpace(string(a.body)) == "null" {
		return nil, nil
	}
	var out dispatch.ArchitectureSource
	if err := c.decodeAnswer(a, shapeObject, "", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SyncArchitecture is `POST /api/v1/projects/{key}/architecture-source/sync` (`{actor}`).
func (c *Client) SyncArchitecture(ctx context.Context, project string) (*dispatch.ArchitectureSource, error) {
	r, err := jsonRequest(http.MethodPost, path("projects", project, "architecture-source", "sync"), actorBody{c.Actor()})
	if err != nil {
		return nil, err
	}
	var out dispatch.ArchitectureSource
	if _, err := c.doWrapped(ctx, r, "source", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ArchitectureTree is `GET /api/v1/projects/{key}/architecture`.
func (c *Client) ArchitectureTree(ctx context.Context, project string) (*dispatch.ArchitectureTree, error) {
	var out dispatch.ArchitectureTree
	if _, err := c.do(ctx, get(path("projects", project, "architecture")), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListUsers is `GET /api/v1/users` (the sign-in allowlist).
func (c *Client) ListUsers(ctx context.Context) (*dispatch.ListUsersResponse, error) {
	var out dispatch.ListUsersResponse
	if _, err := c.do(ctx, get(path("users")), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// Search is `GET /api/v1/search?q=&project=&limit=`; an empty project and a zero limit are
// absent.
func (c *Client) Search(ctx context.Context, query, project string, limit int64) (*dispatch.SearchResponse, error) {
	ps := []param{{"q", query}}
	ps = opt(ps, "project", project, project != "")
	ps = opt(ps, "limit", strconv.FormatInt(limit, 10), limit != 0)
	var out dispatch.SearchResponse
	if _, err := c.do(ctx, get(path("search"), ps...), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReferencesTo is `GET /api/v1/references?to=<ref>`: the edges pointing at a node.
func (c *Client) ReferencesTo(ctx context.Context, ref string) (*dispatch.GraphReferences, error) {
	return c.references(ctx, param{"to", ref})
}

// ReferencesFrom is `GET /api/v1/references?from=<ref>`: the edges a node writes.
func (c *Client) ReferencesFrom(ctx context.Context, ref string) (*dispatch.GraphReferences, error) {
	return c.references(ctx, param{"from", ref})
}

func (c *Client) references(ctx context.Context, q param) (*dispatch.GraphReferences, error) {
	var out dispatch.GraphReferences
	if _, err := c.do(ctx, get(path("references"), q), &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// Agents is `GET /api/v1/agents`, returned as a strict JSON value (its shape is outside §9).
func (c *Client) Agents(ctx context.Context) (any, error) {
	a, err := c.send(ctx, get(path("agents")))
	if err != nil {
		return nil, err
	}
	v, perr := jsonvalue.Parse(a.body, "agents")
	if perr != nil {
		return nil, c.gateway(a)
	}
	return v, nil
}

// Whoami is `GET /api/v1/whoami`.
func (c *Client) Whoami(ctx context.Context) (*dispatch.WhoamiResponse, error) {
	var out dispatch.WhoamiResponse
	a, err := c.do(ctx, get(path("whoami")), &out, false)
	if err != nil {
		return nil, err
	}
	if out.Kind == "" {
		return nil, c.gateway(a)
	}
	return &out, nil
}
