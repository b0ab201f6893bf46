package client

import (
	"context"
	"strings"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	ts "github.com/agentwire/agentwire/toolspec"
)

// This file holds the executor pipeline of dispatch-tools.md §8.2 and the per-tool requests of
// §8.6; resolve.go holds the id and document resolution of §8.5 and results.go the texts of §8.9.

// Result is a successful call (§8.9): the text the model reads and a JSON object of details.
// No result carries a subscription topic member; ask-opening results set details.follows.ask.
type Result struct {
	// Text is what the model reads (§8.9): the first line names the change, write results end
	// it with the subscribe clause, advice follows as extra lines.
	Text string
	// Details is the machine-readable side: the decoded answer under a descriptive name and,
	// for an opened ask, `follows.ask`.
	Details *jsonvalue.Object
}

// Call executes one Dispatch tool call. args is a value of the jsonvalue model (an empty
// object for an absent payload; Go nil is JSON null and is refused). The call fails with
// [dispatch.ErrDisabled] when the configuration is incomplete, with a *toolspec.ToolInputError
// when validation finds any problem (no request is then sent), and otherwise with the mapped
// error of the first failing request (§8.8) or a [*CallError].
func (c *Client) Call(ctx context.Context, tool string, args any) (*Result, error) {
	if err := dispatch.CheckConfig(c.rawURL, c.token); err != nil {
		return nil, err
	}
	spec, ok := dispatch.Lookup(tool)
	if !ok {
		return nil, &CallError{Message: "unknown Dispatch tool " + jsonvalue.Quote(tool)}
	}
	o, problems := dispatch.ValidateCall(spec, args, c.hostContext())
	if len(problems) > 0 {
		return nil, &ts.ToolInputError{Tool: tool, Problems: problems, Spec: spec}
	}
	x := &call{c: c, tool: tool, args: o}
	return runners[tool](ctx, x)
}

// CallJSON is [Client.Call] with the arguments as JSON text, parsed by the strict JSON layer; an
// empty or white-space-only text is an absent payload (`{}`). A text the strict layer refuses
// fails the call with that error.
func (c *Client) CallJSON(ctx context.Context, tool string, args []byte) (*Result, error) {
	if err := dispatch.CheckConfig(c.rawURL, c.token); err != nil {
		return nil, err
	}
	var v any = jsonvalue.NewObject(0)
	if strings.TrimSpace(string(args)) != "" {
		var err error
		if v, err = jsonvalue.Parse(args, "arguments"); err != nil {
			return nil, err
		}
	}
	return c.Call(ctx, tool, v)
}

// call is one validated tool call being executed.
type call struct {
	c    *Client
	tool string
	args *jsonvalue.Object
}

var runners map[string]func(context.Context, *call) (*Result, error)

func init() {
	runners = map[string]func(context.Context, *call) (*Result, error){
		dispatch.ToolIssue:            runIssue,
		dispatch.ToolIssueUpdate:      runIssueUpdate,
		dispatch.ToolAsk:              runAsk,
		dispatch.ToolEditAsk:          runEditAsk,
		dispatch.ToolResolveAsk:       runResolveAsk,
		dispatch.ToolResolveComment:   runResolveComment,
		dispatch.ToolFollow:           runFollow,
		dispatch.ToolComment:          runComment,
		dispatch.ToolSuggest:          runSuggest,
		dispatch.ToolMessage:          runMessage,
		dispatch.ToolDocEdit:          runDocEdit,
		dispatch.ToolDocRead:          runDocRead,
		dispatch.ToolRequestApproval:  runRequestApproval,
		dispatch.ToolArtifact:         runArtifact,
		dispatch.ToolRead:             runRead,
		dispatch.ToolSearch:           runSearch,
		dispatch.ToolIssues:           runIssues,
		dispatch.ToolArchitectureSync: runArchitectureSync,
		dispatch.ToolOpenAsks:         runOpenAsks,
		dispatch.ToolWhoami:           runWhoami,
	}
}

// ---- argument access (the normalized arguments of a validated call) ----

func (x *call) str(key string) (string, bool) {
	v, ok := x.args.Get(key)
	s, isStr := v.(string)
	return s, ok && isStr
}

func (x *call) int(key string) (int64, bool) {
	v, ok := x.args.Get(key)
	f, isNum := v.(float64)
	return int64(f), ok && isNum
}

func (x *call) boolean(key string) (bool, bool) {
	v, ok := x.args.Get(key)
	b, isBool := v.(bool)
	return b, ok && isBool
}

// decode decodes a present argument into v (a Dispatch API type) through its compact JSON.
func (x *call) decode(key string, v any) bool {
	val, ok := x.args.Get(key)
	if !ok {
		return false
	}
	data, err := jsonvalue.Marshal(val)
	return err == nil && dispatch.Decode(data, v) == nil
}

func (x *call) strings(key string) ([]string, bool) {
	var out []string
	if !x.decode(key, &out) {
		return nil, false
	}
	if out == nil {
		out = []string{}
	}
	return out, true
}

// ---- per-tool execution (§8.6) ----

func runIssue(ctx context.Context, x *call) (*Result, error) {
	in := dispatch.CreateIssueInput{}
	in.Project, _ = x.str("project")
	in.Title, _ = x.str("title")
	in.Parent, _ = x.str("parent")
	in.External, _ = x.str("external")
	in.Spec, _ = x.str("spec")
	in.Force, _ = x.boolean("force")
	in.Labels, _ = x.strings("labels")
	if p, ok := x.int("priority"); ok {
		in.Priority = dispatch.Some(dispatch.IssuePriority(p))
	}
	in.Assignee, _ = x.str("assignee")
	var comps dispatch.IssueComponentsInput
	componentsGiven := x.decode("components", &comps)
	if componentsGiven {
		in.Components = &comps
	}
	w, err := x.c.CreateIssue(ctx, in)
	if err != nil {
		if se, ok := err.(*DispatchServiceError); ok && se.Code == dispatch.CodePossibleDuplicate {
			return duplicateResult(x.c, in, se), nil
		}
		return nil, err
	}
	var advice []string
	if !componentsGiven && unattached(w.Issue.Components) {
		project := w.Issue.Project
		if project == "" {
			project = in.Project
		}
		// Advice only: a failure never fails the call (§8.6).
		if src, err := x.c.ArchitectureSource(ctx, project); err == nil && src != nil {
			advice = append(advice, "Components: none attached; "+project+" imports its architecture from "+
				src.Repo+"@"+src.Branch+", so attach the issue's components with dispatch_issue_update.")
		}
	}
	return createdResult(x.c, w, advice), nil
}

// unattached reports an issue left without components: it inherits from no ancestor.
func unattached(ic dispatch.IssueComponents) bool {
	return (ic.Mode == dispatch.ComponentsInherit || ic.Mode == "") && ic.InheritedFrom == nil && len(ic.IDs) == 0
}

func runIssueUpdate(ctx context.Context, x *call) (*Result, error) {
	issue, _ := x.str("issue")
	key, err := x.c.issueKey(ctx, issue)
	if err != nil {
		return nil, err
	}
	before, err := x.c.GetIssue(ctx, key)
	if err != nil {
		return nil, err
	}
	in, change := x.updateInput(before)
	w, err := x.c.UpdateIssue(ctx, key, in)
	if err != nil {
		return nil, err
	}
	return updatedResult(x.c, key, w, change), nil
}

// updateChange is what an issue update changed, for the result text (§8.9).
type updateChange struct {
	fromStatus dispatch.IssueStatus
	linkArgs   []string // trimmed argument URLs without duplicates
	added      []string // URLs not already linked
	linkTotal  int
	hasLinks   bool
	labels     []string
	hasLabels  bool
	components *dispatch.IssueComponentsInput
	status     string
	title      string
	route      string
	parent     string
	hasStatus  bool
	hasTitle   bool
	hasRoute   bool
	hasParent  bool
}

// updateInput is the wire mapping of §8.7: status, title and components as given; labels as
// given (`[]` clears); external_links merged into the before-state's links by URL; route and
// parent as given with `""` sent as null; absent arguments omitted.
func (x *call) updateInput(before *dispatch.IssueRead) (dispatch.UpdateIssueInput, updateChange) {
	var in dispatch.UpdateIssueInput
	ch := updateChange{fromStatus: before.Issue.Status}
	if s, ok := x.str("status"); ok {
		in.Status = dispatch.Some(dispatch.IssueStatus(s))
		ch.status, ch.hasStatus = s, true
	}
	if s, ok := x.str("title"); ok {
		in.Title = dispatch.Some(s)
		ch.title, ch.hasTitle = s, true
	}
	if labels, ok := x.strings("labels"); ok {
		in.Labels = dispatch.Some(labels)
		ch.labels, ch.hasLabels = labels, true
	}
	if urls, ok := x.strings("external_links"); ok {
		links, added, args := MergeExternalLinks(before.Issue.ExternalLinks, urls)
		in.ExternalLinks = dispatch.Some(links)
		ch.hasLinks, ch.added, ch.linkArgs, ch.linkTotal = true, added, args, len(links)
	}
	if s, ok := x.str("route"); ok {
		in.Route = nullIfEmpty(s)
		ch.route, ch.hasRoute = s, true
	}
	if s, ok := x.str("parent"); ok {
		in.Parent = nullIfEmpty(s)
		ch.parent, ch.hasParent = s, true
	}
	var comps dispatch.IssueComponentsInput
	if x.decode("components", &comps) {
		in.Components = dispatch.Some(comps)
		ch.components = &comps
	}
	return in, ch
}

func nullIfEmpty(s string) dispatch.Opt[string] {
	if s == "" {
		return dispatch.Null[string]()
	}
	return dispatch.Some(s)
}

// MergeExternalLinks is the external_links mapping of §8.7: the before-state's links as returned
// (kind kept), followed by `{"url":<u>}` for each argument URL not already present (exact match
// after trimming), in argument order, without duplicates. It also returns the URLs it added and
// the trimmed argument URLs without duplicates.
func MergeExternalLinks(before []dispatch.ExternalLink, urls []string) (links []dispatch.ExternalLink, added, args []string) {
	links = make([]dispatch.ExternalLink, 0, len(before)+len(urls))
	links = append(links, before...)
	present := make(map[string]bool, len(before)+len(urls))
	for _, l := range before {
		present[strings.TrimSpace(l.URL)] = true
	}
	seen := map[string]bool{}
	for _, u := range urls {
		t := strings.TrimSpace(u)
		if !seen[t] {
			seen[t] = true
			args = append(args, t)
		}
		if present[t] {
			continue
		}
		present[t] = true
		links = append(links, dispatch.ExternalLink{URL: t})
		added = append(added, t)
	}
	return links, added, args
}

func runAsk(ctx context.Context, x *call) (*Result, error) {
	o := x.owner()
	in := dispatch.CreateAskInput{}
	question, _ := x.str("question")
	ref, _ := x.str("ref")
	in.Question = dispatch.ComposeQuestion(question, ref)
	if x.args.Has("options") {
		var opts []dispatch.AskOption
		x.decode("options", &opts)
		if opts == nil {
			opts = []dispatch.AskOption{}
		}
		in.Options = opts
	}
	if b, ok := x.boolean("multiple"); ok {
		in.Multiple = &b
	}
	if u, ok := x.str("urgency"); ok {
		in.Urgency = dispatch.AskUrgency(u)
	}
	var anchor dispatch.AnchorInput
	anchored := x.decode("anchor", &anchor)
	var ask *dispatch.Ask
	var advice *dispatch.WriteAdvice
	var target sub
	var doc *document
	var key string
	var err error
	if o.document() {
		if doc, err = x.c.resolveDocument(ctx, o); err != nil {
			return nil, err
		}
		target = doc.sub()
	} else {
		if key, err = x.c.issueKey(ctx, o.issue); err != nil {
			return nil, err
		}
		target = issueSub(key)
	}
	if anchored {
		// The anchor names its document as the model wrote it (id, slug or name); the server
		// takes the document id, as for comments and suggestions (§9 AnchorInput).
		if anchor.Artifact, err = x.c.anchorArtifact(ctx, key, doc, anchor.Artifact); err != nil {
			return nil, err
		}
		in.Anchor = &anchor
	}
	if doc != nil {
		ask, advice, err = x.c.CreateArtifactAsk(ctx, doc.art.ID, in)
	} else {
		ask, advice, err = x.c.CreateIssueAsk(ctx, key, in)
	}
	if err != nil {
		return nil, err
	}
	return askOpenedResult(x.c, ask, target, advice), nil
}

func runEditAsk(ctx context.Context, x *call) (*Result, error) {
	value, _ := x.str("ask")
	id, err := x.c.resolveAskID(ctx, x.tool, value)
	if err != nil {
		return nil, err
	}
	in := dispatch.EditAskInput{}
	if q, ok := x.str("question"); ok {
		in.Question = &q
	}
	if x.args.Has("options") {
		var opts []dispatch.AskOption
		x.decode("options", &opts)
		if opts == nil {
			opts = []dispatch.AskOption{}
		}
		in.Options = opts
	}
	if b, ok := x.boolean("multiple"); ok {
		in.Multiple = &b
	}
	if u, ok := x.str("urgency"); ok {
		in.Urgency = dispatch.AskUrgency(u)
	}
	ask, err := x.c.EditAsk(ctx, id, in)
	if err != nil {
		return nil, err
	}
	target := askSub(ask, refOf(value))
	return writeResult(x.c, "Edited ask "+ask.ID+refSuffix(askRef(ask, target)), target, nil, "ask", ask), nil
}

func runResolveAsk(ctx context.Context, x *call) (*Result, error) {
	value, _ := x.str("ask")
	id, err := x.c.resolveAskID(ctx, x.tool, value)
	if err != nil {
		return nil, err
	}
	kind, _ := x.str("kind")
	reason, _ := x.str("reason")
	ask, err := x.c.ResolveAsk(ctx, id, dispatch.ResolveAskInput{Kind: dispatch.AskResolutionKind(kind), Reason: reason})
	if err != nil {
		return nil, err
	}
	verb := "Resolved"
	if kind == string(dispatch.ResolutionRetracted) {
		verb = "Retracted"
	}
	shown := ask.ID
	if shown == "" {
		shown = id
	}
	return writeResult(x.c, verb+" ask "+shown+": "+reason, askSub(ask, refOf(value)), nil, "ask", ask), nil
}

func runResolveComment(ctx context.Context, x *call) (*Result, error) {
	value, _ := x.str("comment")
	id, target, err := x.c.resolveCommentID(ctx, value)
	if err != nil {
		return nil, err
	}
	comment, err := x.c.ResolveComment(ctx, id)
	if err != nil {
		return nil, err
	}
	if comment.IssueKey != nil {
		target = issueSub(*comment.IssueKey)
	}
	shown := comment.ID
	if shown == "" {
		shown = id
	}
	text := "Resolved comment " + shown
	if target.label != "" {
		text += " on " + target.label
	}
	return writeResult(x.c, text, target, nil, "comment", comment), nil
}

func runFollow(ctx context.Context, x *call) (*Result, error) {
	session := x.c.host.SessionID
	if session == "" {
		return nil, errNoSession(x.tool)
	}
	value, _ := x.str("ask")
	action, _ := x.str("action")
	id := strings.ToLower(value)
	ref, isRef := dispatch.ParseRef(value)
	if isRef {
		id = strings.ToLower(ref.ID)
	}
	target := askSub(nil, refOf(value))
	details := jsonvalue.NewObject(2)
	if action == string(dispatch.ActionFollow) {
		read, err := x.c.GetAsk(ctx, id)
		if err != nil {
			return nil, err
		}
		target = askSub(&read.Ask, refOf(value))
		if err := x.c.FollowAsk(ctx, id, session); err != nil {
			return nil, err
		}
		details.Set("follows", jsonvalue.ObjectOf("ask", id))
		text := "Following ask " + id + refSuffix(askRef(&read.Ask, target)) +
			": its answer, edits, resolution and replies reach this session"
		return &Result{Text: withClause(x.c, text, target), Details: details}, nil
	}
	if err := x.c.UnfollowAsk(ctx, id, session); err != nil {
		return nil, err
	}
	details.Set("unfollowed", jsonvalue.ObjectOf("ask", id))
	return &Result{Text: withClause(x.c, "Unfollowed ask "+id+"; its answer and replies no longer reach this session", target), Details: details}, nil
}

func runComment(ctx context.Context, x *call) (*Result, error) {
	o := x.owner()
	in := dispatch.CreateCommentInput{}
	body, _ := x.str("body")
	in.Body = &body
	in.ReplyTo, _ = x.str("reply_to")
	if dispatch.IsUUID(in.ReplyTo) {
		in.ReplyTo = strings.ToLower(in.ReplyTo)
	}
	replyToAsk, replying := x.str("reply_to_ask")
	if t, ok := x.str("turn"); ok {
		in.Turn = dispatch.AskTurn(t)
	}
	quote, quoted := x.str("quote")
	var target sub
	var doc *document
	var key string
	var err error
	if o.document() || quoted {
		if doc, err = x.c.resolveDocument(ctx, o); err != nil {
			return nil, err
		}
		target = doc.sub()
	} else {
		if key, err = x.c.issueKey(ctx, o.issue); err != nil {
			return nil, err
		}
		target = issueSub(key)
	}
	if replying {
		if !dispatch.IsUUID(replyToAsk) {
			return nil, x.c.replyToAskError(ctx, key, doc)
		}
		in.AskID = strings.ToLower(replyToAsk)
	}
	if quoted {
		anchor := &dispatch.AnchorInput{Artifact: doc.art.ID, Quote: quote}
		if n, ok := x.int("occurrence"); ok {
			anchor.Occurrence = &n
		}
		in.Anchor = anchor
	}
	var resp *dispatch.CommentWriteResponse
	var advice *dispatch.WriteAdvice
	if doc != nil {
		resp, advice, err = x.c.CreateArtifactComment(ctx, doc.art.ID, in)
	} else {
		resp, advice, err = x.c.CreateIssueComment(ctx, key, in)
	}
	if err != nil {
		return nil, err
	}
	var text string
	if replying {
		// Whose move the ask now awaits is the answer's turn; a closed ask records none
		// (`turn: null`), and the result then states none rather than guess one (§8.9).
		text = "Replied on ask " + in.AskID + " (comment " + resp.ID
		if resp.Turn != nil && *resp.Turn != "" {
			text += "; ask now waiting on " + string(*resp.Turn)
		}
		text += ")"
	} else {
		text = "Commented on " + target.label + " (comment " + resp.ID + ")"
	}
	return writeResult(x.c, text, target, advice, "comment", resp), nil
}

func runSuggest(ctx context.Context, x *call) (*Result, error) {
	doc, err := x.c.resolveDocument(ctx, x.owner())
	if err != nil {
		return nil, err
	}
	quote, _ := x.str("quote")
	with, _ := x.str("replace_with")
	in := dispatch.CreateCommentInput{Suggestion: &dispatch.SuggestionInput{ReplaceWith: with}}
	// The rationale is optional: without one the body member is left out, not sent as "" (§8.6).
	if body, ok := x.str("body"); ok {
		in.Body = &body
	}
	anchor := &dispatch.AnchorInput{Artifact: doc.art.ID, Quote: quote}
	if n, ok := x.int("occurrence"); ok {
		anchor.Occurrence = &n
	}
	in.Anchor = anchor
	resp, advice, err := x.c.CreateArtifactComment(ctx, doc.art.ID, in)
	if err != nil {
		return nil, err
	}
	target := doc.sub()
	return writeResult(x.c, "Suggested a replacement on "+target.label+" (comment "+resp.ID+")", target, advice, "comment", resp), nil
}

func runMessage(ctx context.Context, x *call) (*Result, error) {
	issue, _ := x.str("issue")
	key, err := x.c.issueKey(ctx, issue)
	if err != nil {
		return nil, err
	}
	in := dispatch.CreateMessageInput{}
	in.Body, _ = x.str("body")
	if v, ok := x.str("in_reply_to"); ok {
		if r, isRef := dispatch.ParseRef(v); isRef {
			v = r.ID
		}
		in.InReplyTo = strings.ToLower(v)
	}
	msg, advice, err := x.c.CreateMessage(ctx, key, in)
	if err != nil {
		return nil, err
	}
	text := "Posted message " + msg.ID + " (dispatch://" + key + "/message/" + msg.ID + ")"
	return writeResult(x.c, text, issueSub(key), advice, "message", msg), nil
}

func runDocEdit(ctx context.Context, x *call) (*Result, error) {
	doc, err := x.c.resolveDocument(ctx, x.owner())
	if err != nil {
		return nil, err
	}
	var ops []dispatch.EditOp
	x.decode("ops", &ops)
	if ops == nil {
		ops = []dispatch.EditOp{}
	}
	if err := x.c.checkAskBlocks(ctx, doc, ops); err != nil {
		return nil, err
	}
	in := dispatch.EditArtifactInput{Ops: ops}
	in.Summary, _ = x.str("summary")
	var pre dispatch.EditPrecondition
	if x.decode("precondition", &pre) {
		in.Precondition = &pre
	}
	resp, err := x.c.EditArtifact(ctx, doc.art.ID, in)
	if err != nil {
		return nil, err
	}
	return editResult(x.c, doc, ops, resp), nil
}

func runDocRead(ctx context.Context, x *call) (*Result, error) {
	o := x.owner()
	doc, err := x.c.resolveDocument(ctx, o)
	if err != nil {
		return nil, err
	}
	version := o.version
	if v, ok := x.int("version"); ok {
		version = v
	}
	return x.c.docReadResult(ctx, doc, version)
}

func runRequestApproval(ctx context.Context, x *call) (*Result, error) {
	doc, err := x.c.resolveDocument(ctx, x.owner())
	if err != nil {
		return nil, err
	}
	resp, err := x.c.RequestApproval(ctx, doc.art.ID)
	if err != nil {
		return nil, err
	}
	return approvalResult(x.c, doc, resp), nil
}

func runArtifact(ctx context.Context, x *call) (*Result, error) {
	var key, project string
	if issue, ok := x.str("issue"); ok {
		var err error
		if key, err = x.c.issueKey(ctx, issue); err != nil {
			return nil, err
		}
	} else {
		project, _ = x.str("project")
	}
	name, _ := x.str("name")
	summary, _ := x.str("summary")
	var resp *dispatch.ArtifactUploadResponse
	var err error
	if p, ok := x.str("path"); ok {
		var content []byte
		var filename string
		if content, filename, err = x.c.readUpload(p); err != nil {
			return nil, err
		}
		resp, err = x.c.UploadFile(ctx, key, project, ArtifactFile{Name: name, Summary: summary, Filename: filename, Content: content})
	} else {
		content, _ := x.str("content")
		resp, err = x.c.UploadInline(ctx, key, project, InlineArtifactInput{Name: name, Content: content, Summary: summary})
	}
	if err != nil {
		return nil, err
	}
	return uploadResult(x.c, key, project, resp), nil
}

func runRead(ctx context.Context, x *call) (*Result, error) {
	return x.c.read(ctx, x)
}

func runSearch(ctx context.Context, x *call) (*Result, error) {
	query, _ := x.str("query")
	project, _ := x.str("project")
	limit, _ := x.int("limit")
	resp, err := x.c.Search(ctx, query, project, limit)
	if err != nil {
		return nil, err
	}
	return searchResult(x.c, query, resp), nil
}

func runIssues(ctx context.Context, x *call) (*Result, error) {
	var q IssueQuery
	q.Project, _ = x.str("project")
	q.Status, _ = x.str("status")
	q.Parent, _ = x.str("parent")
	q.Label, _ = x.str("label")
	q.UpdatedSince, _ = x.str("updated_since")
	q.Limit, _ = x.int("limit")
	page, err := x.c.ListIssues(ctx, q)
	if err != nil {
		return nil, err
	}
	return issuesResult(q.Project, page), nil
}

func runArchitectureSync(ctx context.Context, x *call) (*Result, error) {
	project, _ := x.str("project")
	src, err := x.c.SyncArchitecture(ctx, project)
	if err != nil {
		return nil, err
	}
	return syncResult(project, src), nil
}

func runOpenAsks(ctx context.Context, x *call) (*Result, error) {
	project, _ := x.str("project")
	session := x.c.host.SessionID
	if project == "" && session == "" {
		return nil, errNoSession(x.tool)
	}
	resp, err := x.c.OpenAsks(ctx, session, project)
	if err != nil {
		return nil, err
	}
	return openAsksResult(x.c, project, resp), nil
}

func runWhoami(ctx context.Context, x *call) (*Result, error) {
	who, err := x.c.Whoami(ctx)
	if err != nil {
		return nil, err
	}
	return whoamiResult(x.c.host.SessionID, who), nil
}
