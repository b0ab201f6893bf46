package client

import (
	"context"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
)

// This file holds dispatch_read (dispatch-tools.md §8.6, §8.9): an issue, its log or children,
// a document, or a targeted ask, comment or message, each render ending with the reference
// graph sections `Referenced by:` and `Links:`.

// recentEvents is how many of an issue's latest events a read shows.
const recentEvents = 10

func (c *Client) read(ctx context.Context, x *call) (*Result, error) {
	o := x.owner()
	if o.hasRef {
		refText, _ := x.str("ref")
		switch o.ref.Kind {
		case dispatch.RefIssueAsk, dispatch.RefDocumentAsk:
			return c.readAsk(ctx, x.tool, refText, o.ref)
		case dispatch.RefIssueComment, dispatch.RefDocumentComment:
			return c.readComment(ctx, refText, o.ref)
		case dispatch.RefIssueMessage:
			return c.readMessage(ctx, o.ref)
		case dispatch.RefIssueLog:
			return c.readLog(ctx, o.ref.Key)
		case dispatch.RefIssueChildren:
			return c.readChildren(ctx, o.ref.Key)
		}
	}
	if o.document() {
		doc, err := c.resolveDocument(ctx, o)
		if err != nil {
			return nil, err
		}
		return c.readDocument(ctx, doc)
	}
	key, err := c.issueKey(ctx, o.issue)
	if err != nil {
		return nil, err
	}
	return c.readIssue(ctx, key)
}

// graphSections reads `GET /api/v1/references?to=<ref>` and `?from=<ref>` and renders the
// `Referenced by:` and `Links:` sections; a graph the server cannot serve gives one
// `- unavailable` row. fallback, when set, supplies the incoming edges if the `to` read fails.
func (c *Client) graphSections(ctx context.Context, ref string, fallback *dispatch.GraphReferences) []string {
	lines := []string{"Referenced by:"}
	to, err := c.ReferencesTo(ctx, ref)
	switch {
	case err == nil:
		lines = append(lines, edgeRows(to.Edges, dispatch.DirectionIn)...)
	case fallback != nil:
		lines = append(lines, edgeRows(fallback.Edges, dispatch.DirectionIn)...)
	default:
		lines = append(lines, "- unavailable")
	}
	lines = append(lines, "Links:")
	from, err := c.ReferencesFrom(ctx, ref)
	if err != nil {
		return append(lines, "- unavailable")
	}
	return append(lines, edgeRows(from.Edges, dispatch.DirectionOut)...)
}

// edgeRows renders edges of one direction as `- <edge kind> <node kind> <dispatch:// ref>
// (<excerpt> · <created_at>)`, or `- none`. Edges without a direction are kept.
func edgeRows(edges []dispatch.GraphEdge, dir dispatch.GraphEdgeDirection) []string {
	var rows []string
	for _, e := range edges {
		if e.Direction != "" && e.Direction != dir {
			continue
		}
		target := e.Node.Ref
		if target == "" {
			target = e.Node.ID
		}
		paren := e.CreatedAt
		if e.Excerpt != nil && strings.TrimSpace(e.Excerpt.Text) != "" {
			ex, whole := cutUTF16(oneLine(e.Excerpt.Text), 80)
			if !whole {
				ex += "…"
			}
			paren = ex + " · " + e.CreatedAt
		}
		rows = append(rows, "- "+string(e.Kind)+" "+string(e.Node.Kind)+" "+target+" ("+paren+")")
	}
	if len(rows) == 0 {
		return []string{"- none"}
	}
	return rows
}

// readIssue renders an issue: `GET /api/v1/issues/{key}`, its last 10 events, its references,
// the agents list when a session route holds it, then the graph sections.
func (c *Client) readIssue(ctx context.Context, key string) (*Result, error) {
	read, err := c.GetIssue(ctx, key)
	if err != nil {
		return nil, err
	}
	is := &read.Issue
	after := is.LastSeq - recentEvents
	if after < 0 {
		after = 0
	}
	events, eventsErr := c.IssueEvents(ctx, key, after, recentEvents)
	issueRefs, refsErr := c.IssueReferences(ctx, key)
	if refsErr != nil {
		issueRefs = nil
	}
	route := deref(is.Route)
	routeState := ""
	if session, ok := strings.CutPrefix(route, "session:"); ok {
		agents, err := c.Agents(ctx)
		switch {
		case err != nil:
			routeState = "holder unknown (" + errCode(err) + ")"
		case agentListed(agents, session):
			routeState = "held by a live session"
		default:
			routeState = "no live holder"
		}
	}
	lines := []string{is.Key + " [" + string(is.Status) + "] " + is.Title}
	meta := "Project " + is.Project
	if is.Priority != nil {
		meta += "; priority P" + strconv.FormatInt(int64(*is.Priority), 10)
	}
	if is.Assignee != nil {
		meta += "; assignee " + *is.Assignee
	} else {
		meta += "; unassigned"
	}
	if len(is.Labels) > 0 {
		meta += "; labels " + strings.Join(is.Labels, ", ")
	}
	lines = append(lines, meta)
	if is.Parent != nil {
		lines = append(lines, "Parent: "+*is.Parent)
	}
	if route != "" {
		line := "Route: " + route
		if routeState != "" {
			line += " (" + routeState + ")"
		}
		lines = append(lines, line)
	}
	if len(is.ExternalLinks) > 0 {
		links := make([]string, len(is.ExternalLinks))
		for i, l := range is.ExternalLinks {
			links[i] = l.URL
			if l.Kind != "" {
				links[i] += " (" + l.Kind + ")"
			}
		}
		lines = append(lines, "External links: "+strings.Join(links, ", "))
	}
	lines = append(lines, componentsLine(is.Components))
	lines = append(lines, "Documents:")
	if len(is.Artifacts) == 0 {
		lines = append(lines, "- none")
	}
	for _, a := range is.Artifacts {
		row := "- " + a.Slug + " " + jsonvalue.Quote(a.Name) + " dispatch://" + is.Key + "/artifact/" + a.Slug
		if n := len(a.Versions); n > 0 {
			row += " v" + strconv.FormatInt(a.Versions[n-1].Number, 10)
		}
		if a.Primary {
			row += " (primary)"
		}
		lines = append(lines, row)
	}
	lines = append(lines, "Open asks:")
	if len(is.OpenAsks) == 0 {
		lines = append(lines, "- none")
	}
	for _, a := range is.OpenAsks {
		row := "- dispatch://" + is.Key + "/ask/" + a.ID + " [" + string(a.Urgency) + "] " + questionHead(a.Question)
		if a.WaitingOn != "" {
			row += " · waiting on " + string(a.WaitingOn)
		}
		lines = append(lines, row)
	}
	if len(is.Children) > 0 {
		lines = append(lines, "Children:")
		for _, ch := range is.Children {
			lines = append(lines, childRow(ch))
		}
	}
	lines = append(lines, "Recent events:")
	switch {
	case eventsErr != nil:
		lines = append(lines, "- unavailable ("+errCode(eventsErr)+")")
	case len(events) == 0:
		lines = append(lines, "- none")
	default:
		lines = append(lines, eventRows(events)...)
	}
	lines = append(lines, c.graphSections(ctx, "dispatch://"+is.Key, issueRefs)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("ref", "dispatch://"+is.Key, "issue", toJSON(read.Issue))}, nil
}

// agentListed reports whether an agents answer lists the session (a row whose `session_id` or
// `id` is it), in a bare array or under `agents`.
func agentListed(v any, session string) bool {
	if o, ok := v.(*jsonvalue.Object); ok {
		v, _ = o.Get("agents")
	}
	list, _ := v.([]any)
	for _, item := range list {
		row, ok := item.(*jsonvalue.Object)
		if !ok {
			continue
		}
		for _, k := range []string{"session_id", "id"} {
			if s, _ := row.Get(k); s == session {
				return true
			}
		}
	}
	return false
}

// componentsLine renders an issue's effective components (§9.4).
func componentsLine(ic dispatch.IssueComponents) string {
	var s string
	switch {
	case ic.Mode == dispatch.ComponentsNone:
		s = "Components: none (" + deref(ic.Reason) + ")"
	case ic.Mode == dispatch.ComponentsExplicit:
		s = "Components: explicit [" + strings.Join(ic.IDs, ", ") + "]"
	case ic.InheritedFrom != nil:
		s = "Components: inherited from " + *ic.InheritedFrom + " [" + strings.Join(ic.IDs, ", ") + "]"
	default:
		s = "Components: unassigned"
	}
	if ic.Mode == dispatch.ComponentsNone && ic.InheritedFrom != nil {
		s += " inherited from " + *ic.InheritedFrom
	}
	if len(ic.Unknown) > 0 {
		s += "; retired [" + strings.Join(ic.Unknown, ", ") + "]"
	}
	return s
}

func childRow(ch dispatch.IssueChild) string {
	return "- " + ch.Key + " [" + string(ch.Status) + "] " + ch.Title + " (" + strconv.FormatInt(ch.SubtreeDone, 10) +
		"/" + strconv.FormatInt(ch.SubtreeTotal, 10) + " done)"
}

func eventRows(events []dispatch.DispatchEvent) []string {
	rows := make([]string, len(events))
	for i, e := range events {
		rows[i] = "- #" + strconv.FormatInt(e.Seq, 10) + " " + e.Type + " by " + actorText(e.Actor) + " at " + e.CreatedAt
	}
	return rows
}

// readLog renders `dispatch://KEY/log`: the issue's last events.
func (c *Client) readLog(ctx context.Context, key string) (*Result, error) {
	read, err := c.GetIssue(ctx, key)
	if err != nil {
		return nil, err
	}
	after := read.Issue.LastSeq - recentEvents
	if after < 0 {
		after = 0
	}
	events, err := c.IssueEvents(ctx, key, after, recentEvents)
	if err != nil {
		return nil, err
	}
	lines := []string{"Log of " + key + " [" + string(read.Issue.Status) + "] " + read.Issue.Title + " (last " + plural(len(events), "event", "events") + "):"}
	if len(events) == 0 {
		lines = append(lines, "- none")
	}
	lines = append(lines, eventRows(events)...)
	lines = append(lines, c.graphSections(ctx, "dispatch://"+key, nil)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("ref", "dispatch://"+key+"/log", "events", toJSON(events))}, nil
}

// readChildren renders `dispatch://KEY/children`.
func (c *Client) readChildren(ctx context.Context, key string) (*Result, error) {
	read, err := c.GetIssue(ctx, key)
	if err != nil {
		return nil, err
	}
	is := &read.Issue
	lines := []string{"Children of " + key + " [" + string(is.Status) + "] " + is.Title + ":"}
	if len(is.Children) == 0 {
		lines = append(lines, "- none")
	}
	for _, ch := range is.Children {
		lines = append(lines, childRow(ch))
	}
	lines = append(lines, c.graphSections(ctx, "dispatch://"+key, nil)...)
	children := is.Children
	if children == nil {
		children = []dispatch.IssueChild{}
	}
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("ref", "dispatch://"+key+"/children", "children", toJSON(children))}, nil
}

// readDocument renders a document: its name, reference, kind, versions and approval.
func (c *Client) readDocument(ctx context.Context, doc *document) (*Result, error) {
	a := &doc.art
	ref := doc.ref()
	head := a.Name + " (" + ref + ") " + string(a.Kind)
	if n := len(a.Versions); n > 0 {
		head += ", version " + strconv.FormatInt(a.Versions[n-1].Number, 10)
	}
	if a.Primary {
		head += ", primary"
	}
	owner := doc.key
	if owner == "" {
		owner = doc.project
	}
	lines := []string{head, "Owner: " + owner}
	if len(a.Versions) > 0 {
		lines = append(lines, "Versions:")
		start := len(a.Versions) - 5
		if start < 0 {
			start = 0
		}
		for i := len(a.Versions) - 1; i >= start; i-- {
			v := a.Versions[i]
			row := "- v" + strconv.FormatInt(v.Number, 10)
			if s := deref(v.Summary); s != "" {
				row += " " + jsonvalue.Quote(s)
			}
			if len(v.Authors) > 0 {
				names := make([]string, len(v.Authors))
				for j, au := range v.Authors {
					names[j] = actorText(au)
				}
				row += " by " + strings.Join(names, ", ")
			}
			lines = append(lines, row+" at "+v.CreatedAt)
		}
	}
	lines = append(lines, approvalLine(a.Approval))
	lines = append(lines, c.graphSections(ctx, ref, nil)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("ref", ref, "artifact", toJSON(doc.art))}, nil
}

// targetRef is the reference of an ask, comment or message addressed by ref with its full id.
func targetRef(r dispatch.Ref, kind, id string) string {
	if r.Key != "" {
		return "dispatch://" + r.Key + "/" + kind + "/" + id
	}
	s := "dispatch://" + r.Project + "/artifact/" + r.Slug
	if r.Version != 0 {
		s += "@v" + strconv.FormatInt(r.Version, 10)
	}
	return s + "/" + kind + "/" + id
}

// position renders where an ask or comment sits in its document: `Position: block <i> of <n>
// (<type> <id>)`, or `Position: unavailable (<code>)` when the blocks listing fails.
func (c *Client) position(ctx context.Context, artifactID string, blockID *string, anchor *dispatch.Anchor) string {
	if artifactID == "" {
		return "Position: issue thread (not in a document)"
	}
	blocks, err := c.ArtifactBlocks(ctx, artifactID)
	if err != nil {
		return "Position: unavailable (" + errCode(err) + ")"
	}
	if blockID != nil {
		for i, b := range blocks {
			if b.ID == *blockID {
				return "Position: block " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(blocks)) + " (" + b.Type + " " + b.ID + ")"
			}
		}
	}
	if anchor != nil && anchor.Orphaned {
		return "Position: orphaned (the quoted text is gone)"
	}
	return "Position: not pinned to a block"
}

// readAsk renders an ask (`GET /api/v1/asks/{id}`).
func (c *Client) readAsk(ctx context.Context, tool, refText string, r dispatch.Ref) (*Result, error) {
	id, err := c.resolveAskID(ctx, tool, refText)
	if err != nil {
		return nil, err
	}
	read, err := c.GetAsk(ctx, id)
	if err != nil {
		return nil, err
	}
	a := &read.Ask
	ref := targetRef(r, "ask", id)
	lines := []string{"Ask " + id + " [" + string(a.State) + "] (" + ref + ") by " + actorText(a.Author) + " at " + a.CreatedAt,
		"Question: " + a.Question}
	if len(a.Options) > 0 {
		labels := make([]string, len(a.Options))
		for i, o := range a.Options {
			labels[i] = o.Label
		}
		line := "Options: " + strings.Join(labels, " | ")
		if a.Multiple {
			line += " (several may be chosen)"
		}
		lines = append(lines, line)
	}
	line := "Urgency: " + string(a.Urgency)
	if a.WaitingOn != "" {
		line += "; waiting on " + string(a.WaitingOn)
	}
	lines = append(lines, line)
	if ans := a.Answer; ans != nil {
		line := "Answer: " + strings.Join(ans.Selected, ", ")
		if ans.Text != nil && *ans.Text != "" {
			line += " " + jsonvalue.Quote(*ans.Text)
		}
		lines = append(lines, line+" by "+ans.User+" at "+ans.At)
	}
	if res := a.Resolution; res != nil {
		lines = append(lines, "Resolution: "+string(res.Kind)+" by "+actorText(res.Actor)+" at "+res.At+": "+res.Reason)
	}
	artifactID, _ := a.ArtifactID.Get()
	var blockID *string
	if b, ok := a.BlockID.Get(); ok {
		blockID = &b
	}
	if a.Anchor != nil {
		if artifactID == "" {
			artifactID = a.Anchor.ArtifactID
		}
		if blockID == nil {
			blockID = a.Anchor.BlockID
		}
	}
	lines = append(lines, c.position(ctx, artifactID, blockID, a.Anchor))
	lines = append(lines, replyRows(read.Replies)...)
	if len(read.Followers) > 0 {
		ids := make([]string, len(read.Followers))
		for i, f := range read.Followers {
			ids[i] = f.SessionID
		}
		lines = append(lines, "Followers: "+strings.Join(ids, ", "))
	}
	lines = append(lines, c.graphSections(ctx, ref, nil)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("ref", ref, "ask", toJSON(read))}, nil
}

func replyRows(replies []dispatch.Comment) []string {
	if len(replies) == 0 {
		return []string{"Replies: none"}
	}
	rows := []string{"Replies:"}
	for _, r := range replies {
		body, whole := cutUTF16(oneLine(r.Body), 120)
		if !whole {
			body += "…"
		}
		rows = append(rows, "- "+actorText(r.Author)+" at "+r.CreatedAt+": "+body)
	}
	return rows
}

// readComment renders a comment (`GET /api/v1/comments/{id}`).
func (c *Client) readComment(ctx context.Context, refText string, r dispatch.Ref) (*Result, error) {
	id, _, err := c.resolveCommentID(ctx, refText)
	if err != nil {
		return nil, err
	}
	read, err := c.GetComment(ctx, id)
	if err != nil {
		return nil, err
	}
	cm := &read.Comment
	ref := targetRef(r, "comment", id)
	head := "Comment " + id + " (" + ref + ") by " + actorText(cm.Author) + " at " + cm.CreatedAt
	if cm.Resolved {
		head += "; resolved"
		if cm.ResolvedBy != nil {
			head += " by " + actorText(*cm.ResolvedBy)
		}
	}
	lines := []string{head, cm.Body}
	if cm.Anchor != nil {
		lines = append(lines, "Quote: "+jsonvalue.Quote(cm.Anchor.Quote))
	}
	if s := cm.Suggestion; s != nil {
		state := "pending"
		if s.Accepted != nil {
			state = "rejected"
			if *s.Accepted {
				state = "accepted"
			}
		}
		lines = append(lines, "Suggestion: replace with "+jsonvalue.Quote(s.ReplaceWith)+" ("+state+")")
	}
	artifactID, _ := cm.ArtifactID.Get()
	var blockID *string
	if cm.Anchor != nil {
		if artifactID == "" {
			artifactID = cm.Anchor.ArtifactID
		}
		blockID = cm.Anchor.BlockID
	}
	lines = append(lines, c.position(ctx, artifactID, blockID, cm.Anchor))
	lines = append(lines, replyRows(read.Replies)...)
	lines = append(lines, c.graphSections(ctx, ref, nil)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("ref", ref, "comment", toJSON(read))}, nil
}

// readMessage renders a message (`GET /api/v1/issues/{key}/messages/{id}`); the id MUST be a
// full uuid (§8.5).
func (c *Client) readMessage(ctx context.Context, r dispatch.Ref) (*Result, error) {
	if !dispatch.IsUUID(r.ID) {
		return nil, &CallError{Message: "message id " + r.ID + " must be a full uuid"}
	}
	id := strings.ToLower(r.ID)
	read, err := c.GetIssueMessage(ctx, r.Key, id)
	if err != nil {
		return nil, err
	}
	m := &read.Message
	ref := "dispatch://" + r.Key + "/message/" + id
	lines := []string{"Message " + id + " (" + ref + ") by " + actorText(m.Author) + " at " + m.CreatedAt, m.Body}
	if irt, ok := m.InReplyTo.Get(); ok && irt != "" {
		lines = append(lines, "In reply to: dispatch://"+r.Key+"/message/"+irt)
	}
	if len(read.Replies) == 0 {
		lines = append(lines, "Replies: none")
	} else {
		lines = append(lines, "Replies:")
		for _, rep := range read.Replies {
			body, whole := cutUTF16(oneLine(rep.Body), 120)
			if !whole {
				body += "…"
			}
			lines = append(lines, "- "+actorText(rep.Author)+" at "+rep.CreatedAt+": "+body)
		}
	}
	for _, d := range m.Deliveries {
		lines = append(lines, "Delivery: "+string(d.Delivery)+" to "+d.SessionID+" "+string(d.State)+" (attempt "+strconv.FormatInt(d.Attempt, 10)+")")
	}
	lines = append(lines, c.graphSections(ctx, ref, nil)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("ref", ref, "message", toJSON(read))}, nil
}
