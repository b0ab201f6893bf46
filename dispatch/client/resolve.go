package client

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
)

// This file holds the owner, id and document resolution of dispatch-tools.md §8.5 (and the
// external-reference resolution of §8.3).

// owner is the addressing of a validated call (§5.1): an issue (native key or external
// reference), or a project, with the document it names, if any.
type owner struct {
	issue, project, artifact string
	// version is the ref's `@v<N>` (0 when none).
	version int64
	ref     dispatch.Ref
	hasRef  bool
	// doc is true when a document is addressed (artifact, a document ref, a project).
	doc bool
}

func (o owner) document() bool { return o.doc }

// owner derives the addressing from the validated arguments. For dispatch_ask the ref is
// context: issue or project own the ask, otherwise the ref's issue or project document does
// (§8.3). For the other tools a ref supplies the owner when neither issue nor project is given,
// and the document (slug, version) when it names one of the same owner.
func (x *call) owner() owner {
	var o owner
	o.issue, _ = x.str("issue")
	o.project, _ = x.str("project")
	artifact, hasArtifact := x.str("artifact")
	o.artifact = artifact
	if s, ok := x.str("ref"); ok {
		o.ref, o.hasRef = dispatch.ParseRef(s)
	}
	explicit := x.args.Has("issue") || x.args.Has("project")
	if x.tool == dispatch.ToolAsk {
		if !explicit && o.hasRef {
			if o.ref.Key != "" {
				o.issue = o.ref.Key
			} else {
				o.project, o.artifact = o.ref.Project, o.ref.Slug
			}
		}
		o.doc = o.artifact != "" || o.project != ""
		return o
	}
	if !explicit && o.hasRef {
		if o.ref.Key != "" {
			o.issue = o.ref.Key
		} else {
			o.project = o.ref.Project
		}
	}
	sameOwner := o.hasRef && ((o.ref.Key != "" && o.issue != "" && (o.ref.Key == o.issue || !dispatch.IsIssueKey(o.issue))) ||
		(o.ref.Project != "" && o.ref.Project == o.project))
	if sameOwner {
		switch o.ref.Kind {
		case dispatch.RefIssueDocument, dispatch.RefProjectDocument, dispatch.RefDocumentAsk, dispatch.RefDocumentComment:
			if !hasArtifact {
				o.artifact = o.ref.Slug
			}
			o.version = o.ref.Version
			o.doc = true
		case dispatch.RefIssueSpec:
			o.doc = true
		}
	}
	o.doc = o.doc || hasArtifact || o.project != ""
	return o
}

// issueKey returns the native key of an issue argument: a native key as is, an external
// reference resolved with `GET /api/v1/issues/resolve` (cached, §8.3).
func (c *Client) issueKey(ctx context.Context, issue string) (string, error) {
	if dispatch.IsIssueKey(issue) {
		return issue, nil
	}
	return c.ResolveIssueRef(ctx, issue)
}

// document is a resolved document (§8.5).
type document struct {
	art dispatch.Artifact
	// key is the issue of an issue document; project the project of a project document.
	key, project string
	// details is the issue read during resolution (issue documents).
	details *dispatch.IssueDetails
}

// ref is the document's `dispatch://` reference.
func (d *document) ref() string {
	if d.key != "" {
		return "dispatch://" + d.key + "/artifact/" + d.art.Slug
	}
	return "dispatch://" + d.project + "/artifact/" + d.art.Slug
}

// sub is the subscription a write on the document is published on (§8.9): the issue for an
// issue document, the project document otherwise.
func (d *document) sub() sub {
	if d.key != "" {
		return issueSub(d.key)
	}
	return docSub(d.project, d.art.Slug)
}

// resolveDocument finds the addressed document (§8.5): issue without artifact → the issue's
// primary document; issue + artifact → its documents matched by id, then slug, then name;
// project + artifact → `GET /api/v1/projects/{p}/artifacts/{slug}`, falling back to the
// unlinked listing matched by id, slug, then name. A miss names the owner and its documents.
func (c *Client) resolveDocument(ctx context.Context, o owner) (*document, error) {
	if o.issue != "" {
		key, err := c.issueKey(ctx, o.issue)
		if err != nil {
			return nil, err
		}
		read, err := c.GetIssue(ctx, key)
		if err != nil {
			return nil, err
		}
		d := &document{key: key, details: &read.Issue}
		arts := read.Issue.Artifacts
		if o.artifact == "" {
			for _, a := range arts {
				if a.Primary {
					d.art = a
					return d, nil
				}
			}
			return nil, noDocument("spec", key, arts)
		}
		if a, ok := matchArtifact(arts, o.artifact); ok {
			d.art = a
			return d, nil
		}
		return nil, noDocument(o.artifact, key, arts)
	}
	// An empty artifact names no slug to look up (the request would read the listing's path);
	// only the listing can answer it, with a miss.
	if o.artifact != "" {
		art, err := c.ProjectArtifact(ctx, o.project, o.artifact)
		if err == nil {
			return &document{art: *art, project: o.project}, nil
		}
		if _, refused := err.(*DispatchServiceError); !refused {
			return nil, err
		}
	}
	list, err := c.UnlinkedProjectArtifacts(ctx, o.project)
	if err != nil {
		return nil, err
	}
	if a, ok := matchArtifact(list, o.artifact); ok {
		return &document{art: a, project: o.project}, nil
	}
	return nil, noDocument(o.artifact, o.project, list)
}

// anchorArtifact resolves the document a quote anchor names (its id, slug or name, §8.5) to
// the document id the server takes (§9 AnchorInput), on the ask's owner: the issue key of an
// issue-owned ask (doc nil; the issue's documents are read), or the owner of its document (the
// issue's documents already read, or the project's). A miss names the owner and its documents.
func (c *Client) anchorArtifact(ctx context.Context, key string, doc *document, name string) (string, error) {
	switch {
	case doc != nil && doc.details != nil:
		if a, ok := matchArtifact(doc.details.Artifacts, name); ok {
			return a.ID, nil
		}
		return "", noDocument(name, doc.key, doc.details.Artifacts)
	case doc != nil:
		if _, ok := matchArtifact([]dispatch.Artifact{doc.art}, name); ok {
			return doc.art.ID, nil
		}
		other, err := c.resolveDocument(ctx, owner{project: doc.project, artifact: name, doc: true})
		if err != nil {
			return "", err
		}
		return other.art.ID, nil
	}
	read, err := c.GetIssue(ctx, key)
	if err != nil {
		return "", err
	}
	if a, ok := matchArtifact(read.Issue.Artifacts, name); ok {
		return a.ID, nil
	}
	return "", noDocument(name, key, read.Issue.Artifacts)
}

// matchArtifact matches a document by id, then slug, then name.
func matchArtifact(arts []dispatch.Artifact, name string) (dispatch.Artifact, bool) {
	if name == "" {
		return dispatch.Artifact{}, false
	}
	for _, field := range []func(dispatch.Artifact) string{
		func(a dispatch.Artifact) string { return a.ID },
		func(a dispatch.Artifact) string { return a.Slug },
		func(a dispatch.Artifact) string { return a.Name },
	} {
		for _, a := range arts {
			if field(a) == name {
				return a, true
			}
		}
	}
	return dispatch.Artifact{}, false
}

// noDocument is the document miss of §8.5: `no document "<artifact>" on <owner>; documents:
// <slug>, …` (or `none`).
func noDocument(artifact, owner string, arts []dispatch.Artifact) error {
	slugs := make([]string, 0, len(arts))
	for _, a := range arts {
		slugs = append(slugs, a.Slug)
	}
	list := "none"
	if len(slugs) > 0 {
		list = strings.Join(slugs, ", ")
	}
	return &CallError{Message: "no document " + jsonvalue.Quote(artifact) + " on " + owner + "; documents: " + list}
}

// resolveAskID resolves the ask argument of dispatch_edit_ask, dispatch_resolve_ask and the ask
// reads of dispatch_read (§8.5): a uuid as is; a prefix, bare or inside a ref, matched against
// this session's open asks; any other bare value refused with the session's open asks listed.
func (c *Client) resolveAskID(ctx context.Context, tool, value string) (string, error) {
	id := value
	bare := true
	if r, isRef := dispatch.ParseRef(value); isRef {
		id, bare = r.ID, false
	}
	if dispatch.IsUUID(id) {
		return strings.ToLower(id), nil
	}
	session := c.host.SessionID
	if session == "" {
		return "", errNoSession(tool)
	}
	open, err := c.OpenAsks(ctx, session, "")
	if err != nil {
		return "", err
	}
	if dispatch.IsUUIDPrefix(id) || !bare {
		prefix := strings.ToLower(id)
		var matches []string
		for _, a := range open.Asks {
			if strings.HasPrefix(strings.ToLower(a.ID), prefix) {
				matches = append(matches, a.ID)
			}
		}
		switch len(matches) {
		case 0:
			return "", &CallError{Message: "ask id " + id + " matches none of your open asks; use the full id"}
		case 1:
			return strings.ToLower(matches[0]), nil
		}
		return "", &CallError{Message: "ask id " + id + " matches " + strconv.Itoa(len(matches)) + " of your open asks; use the full id"}
	}
	if len(open.Asks) == 0 {
		return "", &CallError{Message: "ask ids are uuids (a prefix of at least 8 hex characters works); you have no open asks"}
	}
	entries := make([]string, len(open.Asks))
	for i, a := range open.Asks {
		entries[i] = idHead(a.ID) + " — " + questionHead(a.Question)
	}
	return "", &CallError{Message: "ask ids are uuids (a prefix of at least 8 hex characters works); your open asks: " + strings.Join(entries, "; ")}
}

// resolveCommentID resolves the comment argument of dispatch_resolve_comment and the comment
// reads of dispatch_read (§8.5): a uuid as is; a prefix inside a ref matched against the owner's
// comments. It also returns the ref owner's subscription (zero for a bare uuid).
func (c *Client) resolveCommentID(ctx context.Context, value string) (string, sub, error) {
	if dispatch.IsUUID(value) {
		return strings.ToLower(value), sub{}, nil
	}
	r, _ := dispatch.ParseRef(value)
	target := issueSub(r.Key)
	if r.Key == "" {
		target = docSub(r.Project, r.Slug)
	}
	if dispatch.IsUUID(r.ID) {
		return strings.ToLower(r.ID), target, nil
	}
	var comments []dispatch.Comment
	var err error
	if r.Key != "" {
		comments, err = c.IssueComments(ctx, r.Key)
	} else {
		var doc *document
		if doc, err = c.resolveDocument(ctx, owner{project: r.Project, artifact: r.Slug, doc: true}); err == nil {
			target = doc.sub()
			comments, err = c.ArtifactComments(ctx, doc.art.ID)
		}
	}
	if err != nil {
		return "", target, err
	}
	prefix := strings.ToLower(r.ID)
	var matches []string
	for _, cm := range comments {
		if strings.HasPrefix(strings.ToLower(cm.ID), prefix) {
			matches = append(matches, cm.ID)
		}
	}
	switch len(matches) {
	case 0:
		return "", target, &CallError{Message: "comment id " + r.ID + " matches none of the comments on " + target.label + "; use the full id"}
	case 1:
		return strings.ToLower(matches[0]), target, nil
	}
	return "", target, &CallError{Message: "comment id " + r.ID + " matches " + strconv.Itoa(len(matches)) + " comments on " + target.label + "; use the full id"}
}

// replyToAskError is the refusal of a reply_to_ask that is not a full uuid (§8.5), listing the
// owner's open asks: the issue's, or the document's (this document's).
func (c *Client) replyToAskError(ctx context.Context, key string, doc *document) error {
	type brief struct{ id, question string }
	var asks []brief
	which := "this issue's"
	switch {
	case doc == nil:
		read, err := c.GetIssue(ctx, key)
		if err != nil {
			return err
		}
		for _, a := range read.Issue.OpenAsks {
			asks = append(asks, brief{a.ID, a.Question})
		}
	case doc.details != nil:
		which = "this document's"
		for _, a := range doc.details.OpenAsks {
			if askOnDocument(&a, doc.art.ID) {
				asks = append(asks, brief{a.ID, a.Question})
			}
		}
	default:
		which = "this document's"
		open, err := c.OpenAsks(ctx, "", doc.project)
		if err != nil {
			return err
		}
		for _, a := range open.Asks {
			if d := a.Owner.Document; d != nil && d.Slug == doc.art.Slug {
				asks = append(asks, brief{a.ID, a.Question})
			}
		}
	}
	list := "none"
	if len(asks) > 0 {
		entries := make([]string, len(asks))
		for i, a := range asks {
			entries[i] = idHead(a.id) + "… " + questionHead(a.question)
		}
		list = strings.Join(entries, ", ")
	}
	return &CallError{Message: "ask IDs are UUIDs; use the full ask ID; " + which + " open asks: " + list}
}

// askOnDocument reports whether an ask belongs to a document: its source document, its anchor's
// document or the document holding its ask block.
func askOnDocument(a *dispatch.Ask, artifactID string) bool {
	if id, ok := a.ArtifactID.Get(); ok && id == artifactID {
		return true
	}
	if a.Anchor != nil && a.Anchor.ArtifactID == artifactID {
		return true
	}
	return a.BlockArtifact != nil && a.BlockArtifact.ID == artifactID
}

// openAskBlockMessage is the refusal of an edit that would remove an open ask block (§8.6).
func openAskBlockMessage(i int, block string) string {
	return "ops." + strconv.Itoa(i) + " would remove the open ask block " + block + "; reword it with replace or relocate it with move"
}

// checkAskBlocks refuses a batch whose delete or retype by block would remove an ask block whose
// ask is still open (§8.6). It reads the blocks listing only when such an op exists. An ask
// block is open when one of the issue's open asks names it (issue documents) or, for a project
// document (whose open asks carry no block ids), when the listing counts an ask on it.
func (c *Client) checkAskBlocks(ctx context.Context, doc *document, ops []dispatch.EditOp) error {
	need := false
	for _, op := range ops {
		if removesBlock(op) {
			need = true
			break
		}
	}
	if !need {
		return nil
	}
	blocks, err := c.ArtifactBlocks(ctx, doc.art.ID)
	if err != nil {
		return err
	}
	byID := make(map[string]dispatch.ArtifactBlock, len(blocks))
	for _, b := range blocks {
		byID[b.ID] = b
	}
	openBlocks := map[string]bool{}
	if doc.details != nil {
		for _, a := range doc.details.OpenAsks {
			if id, ok := a.BlockID.Get(); ok {
				openBlocks[id] = true
			}
		}
	}
	var lines []string
	for i, op := range ops {
		if !removesBlock(op) {
			continue
		}
		b, ok := byID[*op.Block]
		if !ok || b.Type != "ask" {
			continue
		}
		if openBlocks[b.ID] || (doc.details == nil && b.References.Asks > 0) {
			lines = append(lines, openAskBlockMessage(i, b.ID))
		}
	}
	if len(lines) > 0 {
		return &CallError{Message: strings.Join(lines, "\n")}
	}
	return nil
}

func removesBlock(op dispatch.EditOp) bool {
	return (op.Op == dispatch.OpDelete || op.Op == dispatch.OpRetype) && op.Block != nil
}

// readUpload reads a dispatch_artifact path, resolved against the host's working directory; a
// file over 25 MiB is refused before it is read.
func (c *Client) readUpload(p string) ([]byte, string, error) {
	full := p
	if !filepath.IsAbs(full) && c.host.Cwd != "" {
		full = filepath.Join(c.host.Cwd, full)
	}
	info, err := os.Stat(full)
	if err != nil {
		return nil, "", &CallError{Message: "cannot read " + p + ": " + pathErrorText(err)}
	}
	if info.IsDir() {
		return nil, "", &CallError{Message: "cannot read " + p + ": it is a directory"}
	}
	if info.Size() > dispatch.ArtifactUploadMax {
		return nil, "", uploadTooLarge(p, info.Size())
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return nil, "", &CallError{Message: "cannot read " + p + ": " + pathErrorText(err)}
	}
	if len(data) > dispatch.ArtifactUploadMax {
		return nil, "", uploadTooLarge(p, int64(len(data)))
	}
	return data, filepath.Base(full), nil
}

func pathErrorText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// ---- subscriptions (§8.9) ----

// sub is the owner a write is published on: its label and Envoy topic (zero when unknown).
type sub struct {
	label, topic string
	// key is the issue key (issue owners); project and slug name a project document.
	key, project, slug string
}

func issueSub(key string) sub {
	return sub{label: key, topic: dispatch.IssueTopic(key, ">"), key: key}
}

func docSub(project, slug string) sub {
	return sub{label: project + "/" + slug, topic: dispatch.DocumentTopic(project, slug, ">"), project: project, slug: slug}
}

// refOf parses a `dispatch://` argument value (nil when it is not one).
func refOf(value string) *dispatch.Ref {
	if r, ok := dispatch.ParseRef(value); ok {
		return &r
	}
	return nil
}

// askSub is the owner of an ask: its issue, its project document, or the reference it was
// addressed by.
func askSub(a *dispatch.Ask, r *dispatch.Ref) sub {
	if a != nil {
		if a.IssueKey != nil && *a.IssueKey != "" {
			return issueSub(*a.IssueKey)
		}
		if a.Document != nil {
			return docSub(a.Document.Project, a.Document.Slug)
		}
	}
	if r != nil {
		if r.Key != "" {
			return issueSub(r.Key)
		}
		return docSub(r.Project, r.Slug)
	}
	if a != nil && a.AnchorArtifact != nil && a.AnchorArtifact.Project != "" {
		return docSub(a.AnchorArtifact.Project, a.AnchorArtifact.Slug)
	}
	return sub{}
}

// askRef is the `dispatch://…/ask/<id>` reference of an ask on its owner ("" when unknown).
func askRef(a *dispatch.Ask, s sub) string {
	switch {
	case a == nil || a.ID == "":
		return ""
	case s.key != "":
		return "dispatch://" + s.key + "/ask/" + a.ID
	case s.project != "":
		return "dispatch://" + s.project + "/artifact/" + s.slug + "/ask/" + a.ID
	}
	return ""
}

func refSuffix(ref string) string {
	if ref == "" {
		return ""
	}
	return " (" + ref + ")"
}
