package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
)

// This file renders the results of dispatch-tools.md §8.9. Texts the table pins are exact;
// the others follow its SHOULD (one line naming the changed object and its reference) and the
// write advice of §9.4 is rendered as extra `Advice:` lines.

// clause is the subscribe clause of a write result (§8.9), "" when the owner is unknown or the
// host reports the session already subscribed.
func (c *Client) clause(s sub) string {
	if s.label == "" || (c.subscribed != nil && c.subscribed(s.topic)) {
		return ""
	}
	return " (not subscribed to " + s.label + "; envoy_subscribe " + s.topic + " for every event on it)"
}

// withClause appends the subscribe clause to the first line of text.
func withClause(c *Client, text string, s sub) string {
	cl := c.clause(s)
	if cl == "" {
		return text
	}
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		return text[:i] + cl + text[i:]
	}
	return text + cl
}

// toJSON converts an API value to the jsonvalue model through its wire encoding (known members
// only); nil when it cannot be encoded.
func toJSON(v any) any {
	data, err := dispatch.Encode(v)
	if err != nil {
		return nil
	}
	out, err := jsonvalue.Parse(data, "details")
	if err != nil {
		return nil
	}
	return out
}

// writeResult is a write's result: text with the subscribe clause and advice lines, details
// `{<name>: <value>}`.
func writeResult(c *Client, text string, s sub, advice *dispatch.WriteAdvice, name string, v any) *Result {
	lines := []string{withClause(c, text, s)}
	lines = append(lines, adviceLines(advice, s.label)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf(name, toJSON(v))}
}

// adviceLines renders WriteAdvice (§9.4) as `Advice:` lines: the issue still in triage; three or
// more (six or more: stronger) writes since the last human interaction; the session's own open
// asks; a spec without decision blocks; unparsed `:::ask{…}` openers.
func adviceLines(a *dispatch.WriteAdvice, owner string) []string {
	if a == nil {
		return nil
	}
	var out []string
	if a.IssueStatus == dispatch.StatusTriage {
		name := owner
		if name == "" {
			name = "the issue"
		}
		out = append(out, "Advice: "+name+" is still in triage; move it to a working status when you start on it.")
	}
	if n := a.SessionWritesSinceHuman; n != nil {
		switch {
		case *n >= 6:
			out = append(out, "Advice: "+strconv.FormatInt(*n, 10)+" writes since the last human interaction; stop and check in with a human before writing more.")
		case *n >= 3:
			out = append(out, "Advice: "+strconv.FormatInt(*n, 10)+" writes since the last human interaction; consider checking in with a human.")
		}
	}
	if len(a.YourOpenAsks) > 0 {
		entries := make([]string, len(a.YourOpenAsks))
		for i, q := range a.YourOpenAsks {
			entries[i] = idHead(q.ID) + " " + questionHead(q.Question)
		}
		out = append(out, "Advice: your open asks: "+strings.Join(entries, "; "))
	}
	if a.DecisionBlocks != nil && *a.DecisionBlocks == 0 {
		out = append(out, "Advice: the spec has no decision blocks yet.")
	}
	if u := a.UnparsedOpeners; u != nil && u.Count > 0 {
		line := "Advice: " + strconv.FormatInt(u.Count, 10) + " :::ask{…} openers were not parsed"
		if len(u.Examples) > 0 {
			line += " (e.g. " + strings.Join(u.Examples, ", ") + ")"
		}
		out = append(out, line+"; fix their syntax so they become asks.")
	}
	return out
}

// idHead is the first 8 characters of an id.
func idHead(id string) string {
	n := 0
	for i := range id {
		if n == 8 {
			return id[:i]
		}
		n++
	}
	return id
}

// questionHead is a question's first line cut to 60 characters (UTF-16 code units) plus `…`.
func questionHead(q string) string {
	line, _, more := strings.Cut(q, "\n")
	cut, whole := cutUTF16(line, 60)
	if !whole {
		return cut + "…"
	}
	if more && strings.TrimSpace(line) == "" {
		return questionHead(strings.TrimLeft(q, "\n"))
	}
	return cut
}

// plainSnippet renders a search snippet as plain text (§8.9): the server's `<mark>` highlights
// removed and white space collapsed. Other text, entities included, is the server's.
func plainSnippet(s string) string {
	if strings.Contains(s, "mark>") {
		s = markTags.Replace(s)
	}
	return oneLine(s)
}

var markTags = strings.NewReplacer("<mark>", "", "</mark>", "")

// absolute renders an href the server returned relative as an absolute URL against
// DISPATCH_URL (§8.9): a path is appended to the base URL without its trailing slash, as API
// paths are (§8.1), so a server behind a base path keeps it; a scheme-relative href takes the
// base URL's scheme; an absolute URL is kept as returned.
func (c *Client) absolute(href string) string {
	if href == "" {
		return ""
	}
	if u, err := url.Parse(href); err == nil && u.IsAbs() {
		return href
	}
	switch {
	case strings.HasPrefix(href, "//"):
		if u, err := url.Parse(c.base); err == nil && u.Scheme != "" {
			return u.Scheme + ":" + href
		}
		return href
	case strings.HasPrefix(href, "/"):
		return c.base + href
	}
	return c.base + "/" + href
}

// oneLine collapses white space runs to one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ---- dispatch_issue ----

// createdResult is `Created <KEY>: <title>` with the subscribe clause (§8.9).
func createdResult(c *Client, w *IssueWrite, extra []string) *Result {
	s := issueSub(w.Issue.Key)
	lines := []string{withClause(c, "Created "+w.Issue.Key+": "+w.Issue.Title, s)}
	lines = append(lines, adviceLines(w.Advice, s.label)...)
	lines = append(lines, extra...)
	details := jsonvalue.ObjectOf("created", true, "key", w.Issue.Key, "issue", toJSON(w.Issue))
	return &Result{Text: strings.Join(lines, "\n"), Details: details}
}

// duplicateResult is the not-created result of a `409 POSSIBLE_DUPLICATE` answer (§8.9): each
// candidate as `<KEY> [<status>] <title> → <href>` and the suggestion to retry with
// `force: true`.
func duplicateResult(c *Client, in dispatch.CreateIssueInput, se *DispatchServiceError) *Result {
	cands := se.DuplicateCandidates()
	lines := []string{"Not created: Dispatch found " + plural(len(cands), "possible duplicate", "possible duplicates") +
		" of " + jsonvalue.Quote(in.Title) + " in " + in.Project + "."}
	for _, d := range cands {
		lines = append(lines, "- "+d.Key+" ["+string(d.Status)+"] "+d.Title+" → "+c.absolute(d.Href))
	}
	lines = append(lines, "If none of these is the same issue, call dispatch_issue again with force: true.")
	if cands == nil {
		cands = []dispatch.DuplicateCandidate{}
	}
	details := jsonvalue.ObjectOf("created", false, "code", se.Code, "candidates", toJSON(cands))
	return &Result{Text: strings.Join(lines, "\n"), Details: details}
}

// ---- dispatch_issue_update ----

// updatedResult is `<KEY>: ` and the changed fields in the order of §8.9 joined by `; `.
func updatedResult(c *Client, key string, w *IssueWrite, ch updateChange) *Result {
	var parts []string
	if ch.hasStatus {
		to := ch.status
		parts = append(parts, "status "+string(ch.fromStatus)+" -> "+to)
	}
	if ch.hasTitle {
		parts = append(parts, `title "`+ch.title+`"`)
	}
	if ch.hasLabels {
		if len(ch.labels) == 0 {
			parts = append(parts, "labels cleared")
		} else {
			parts = append(parts, "labels "+strings.Join(ch.labels, ", "))
		}
	}
	if ch.hasLinks {
		if len(ch.added) > 0 {
			parts = append(parts, "linked "+strings.Join(ch.added, ", ")+" ("+strconv.Itoa(ch.linkTotal)+" links)")
		} else {
			parts = append(parts, "already linked "+strings.Join(ch.linkArgs, ", "))
		}
	}
	if ch.hasRoute {
		if ch.route == "" {
			parts = append(parts, "route cleared")
		} else {
			parts = append(parts, "route "+ch.route)
		}
	}
	if ch.hasParent {
		if ch.parent == "" {
			parts = append(parts, "parent cleared")
		} else {
			parts = append(parts, "parent -> "+ch.parent)
		}
	}
	if ch.components != nil {
		switch ch.components.Mode {
		case dispatch.ComponentsExplicit:
			parts = append(parts, "components -> explicit ["+strings.Join(ch.components.IDs, ", ")+"]")
		case dispatch.ComponentsNone:
			parts = append(parts, "components -> none ("+ch.components.Reason+")")
		default:
			parts = append(parts, "components -> inherit")
		}
	}
	s := issueSub(key)
	lines := []string{withClause(c, key+": "+strings.Join(parts, "; "), s)}
	lines = append(lines, adviceLines(w.Advice, key)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("key", key, "issue", toJSON(w.Issue))}
}

// ---- asks ----

// askOpenedResult names the ask id and its reference and states that the session follows it;
// details.follows.ask is the ask id (§8.9).
func askOpenedResult(c *Client, ask *dispatch.Ask, s sub, advice *dispatch.WriteAdvice) *Result {
	if ask.IssueKey != nil && *ask.IssueKey != "" && s.key == "" {
		s = issueSub(*ask.IssueKey)
	}
	text := "Opened ask " + ask.ID + refSuffix(askRef(ask, s)) + "; this session follows it and receives its answer and replies"
	lines := []string{withClause(c, text, s)}
	lines = append(lines, adviceLines(advice, s.label)...)
	details := jsonvalue.ObjectOf("ask", toJSON(ask), "follows", jsonvalue.ObjectOf("ask", ask.ID))
	return &Result{Text: strings.Join(lines, "\n"), Details: details}
}

// ---- documents ----

// editResult is `Applied <N> ops[; retyped <k> blocks][; nothing changed] (version <n>|no new
// version)` and `Document token: <token>` (§8.9).
func editResult(c *Client, doc *document, ops []dispatch.EditOp, resp *dispatch.EditArtifactResponse) *Result {
	var b strings.Builder
	b.WriteString("Applied ")
	b.WriteString(strconv.FormatInt(resp.Applied, 10))
	b.WriteString(" ops")
	retyped := 0
	for _, op := range ops {
		if op.Op == dispatch.OpRetype {
			retyped++
		}
	}
	if retyped > 0 {
		b.WriteString("; retyped " + strconv.Itoa(retyped) + " blocks")
	}
	if resp.Changed != nil && !*resp.Changed {
		b.WriteString("; nothing changed")
	}
	if resp.Version != nil {
		b.WriteString(" (version " + strconv.FormatInt(resp.Version.Number, 10) + ")")
	} else {
		b.WriteString(" (no new version)")
	}
	s := doc.sub()
	lines := []string{withClause(c, b.String(), s)}
	if resp.Token != "" {
		lines = append(lines, "Document token: "+resp.Token)
	}
	if raw := resp.UnchangedOps; len(raw) > 0 && raw.Kind() == '[' && string(raw) != "[]" {
		lines = append(lines, "Operations that did nothing: "+compact(raw))
	}
	if raw := resp.LostOps; len(raw) > 0 && raw.Kind() == '[' && string(raw) != "[]" {
		lines = append(lines, "Operations a concurrent deletion undid: "+compact(raw))
	}
	lines = append(lines, adviceLines(resp.Advice, s.label)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("document", doc.ref(), "edit", toJSON(resp))}
}

func compact(raw []byte) string {
	v, err := jsonvalue.Parse(raw, "ops")
	if err != nil {
		return oneLine(string(raw))
	}
	out, _ := jsonvalue.Marshal(v)
	return string(out)
}

// docReadResult is the markdown, then `Document token: <token>` (live reads), the open anchored
// asks and comments (summed over the blocks listing) and the approval state (§8.9).
func (c *Client) docReadResult(ctx context.Context, doc *document, version int64) (*Result, error) {
	var lines []string
	details := jsonvalue.ObjectOf("document", doc.ref(), "artifact_id", doc.art.ID)
	if version > 0 {
		vt, err := c.ArtifactVersion(ctx, doc.art.ID, version)
		if err != nil {
			return nil, err
		}
		lines = append(lines, strings.TrimRight(vt.Markdown, "\n"), "Version: "+strconv.FormatInt(vt.Number, 10))
		details.Set("version", float64(vt.Number))
	} else {
		t, err := c.ArtifactText(ctx, doc.art.ID)
		if err != nil {
			return nil, err
		}
		lines = append(lines, strings.TrimRight(t.Markdown, "\n"))
		if t.Token != "" {
			lines = append(lines, "Document token: "+t.Token)
			details.Set("token", t.Token)
		}
		if t.Version != nil {
			details.Set("version", float64(*t.Version))
		}
	}
	blocks, err := c.ArtifactBlocks(ctx, doc.art.ID)
	if err != nil {
		lines = append(lines, "Open anchored asks/comments: unavailable ("+errCode(err)+")")
	} else {
		var asks, comments int64
		for _, b := range blocks {
			asks += b.References.Asks
			comments += b.References.Comments
		}
		lines = append(lines, "Open anchored asks/comments: "+plural(int(asks), "ask", "asks")+", "+plural(int(comments), "comment", "comments"))
	}
	lines = append(lines, approvalLine(doc.art.Approval))
	return &Result{Text: strings.Join(lines, "\n"), Details: details}, nil
}

// errCode is the code of a failed auxiliary read: the Dispatch code, or UNREACHABLE.
func errCode(err error) string {
	if code := ErrorCode(err); code != "" {
		return code
	}
	return "UNREACHABLE"
}

// approvalLine renders a document's approval state.
func approvalLine(a *dispatch.ArtifactApproval) string {
	if a == nil {
		return "Approval: none requested"
	}
	s := "Approval: " + string(a.State)
	if a.Version != nil {
		s += " at version " + strconv.FormatInt(*a.Version, 10)
	}
	if a.By != nil {
		s += " by " + actorText(*a.By)
	}
	if r, ok := a.Reason.Get(); ok && r != "" {
		s += ": " + r
	}
	return s + " (latest version " + strconv.FormatInt(a.LatestVersion, 10) + ")"
}

// approvalResult names the document, its version and whether an approval ask was opened (201)
// or nothing changed (200).
func approvalResult(c *Client, doc *document, resp *ApprovalRequestResponse) *Result {
	name := doc.art.Name
	version := strconv.FormatInt(resp.Version, 10)
	var text string
	details := jsonvalue.ObjectOf("requested", resp.Requested, "artifact_id", resp.ArtifactID, "version", float64(resp.Version))
	if resp.Requested && resp.Ask != nil {
		text = "Requested approval of " + name + " at version " + version + " (ask " + resp.Ask.ID + ")"
		details.Set("ask", toJSON(resp.Ask))
		details.Set("follows", jsonvalue.ObjectOf("ask", resp.Ask.ID))
	} else {
		state := "no change"
		if resp.Approval != nil {
			state = string(resp.Approval.State)
		}
		text = "Approval of " + name + " at version " + version + " unchanged (" + state + ")"
	}
	if resp.Approval != nil {
		details.Set("approval", toJSON(resp.Approval))
	}
	return &Result{Text: withClause(c, text, doc.sub()), Details: details}
}

// uploadResult is `Uploaded <name> as version <n> (artifact slug <slug>; <ref>)` with the
// subscribe clause (§8.9).
func uploadResult(c *Client, key, project string, resp *dispatch.ArtifactUploadResponse) *Result {
	a := resp.Artifact
	var ref string
	var s sub
	if key != "" {
		ref, s = "dispatch://"+key+"/artifact/"+a.Slug, issueSub(key)
	} else {
		ref, s = "dispatch://"+project+"/artifact/"+a.Slug, docSub(project, a.Slug)
	}
	text := "Uploaded " + a.Name + " as version " + strconv.FormatInt(resp.Version.Number, 10) + " (artifact slug " + a.Slug + "; " + ref + ")"
	lines := []string{withClause(c, text, s)}
	lines = append(lines, adviceLines(resp.Advice, s.label)...)
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("ref", ref, "artifact", toJSON(a), "version", toJSON(resp.Version))}
}

// ---- lists ----

// searchResult renders one line per hit (§8.9): `<KEY> [<status>] <title> - <kind>[ <artifact
// name>]: <snippet> -> <href>`, or for a project document owner `dispatch://<P>/artifact/<slug>
// [document] <name> - <kind>: <snippet> -> <href>`. Hits render from owner (§9.9).
func searchResult(c *Client, query string, resp *dispatch.SearchResponse) *Result {
	if len(resp.Results) == 0 {
		return &Result{Text: "No results for " + jsonvalue.Quote(query), Details: jsonvalue.ObjectOf("results", []any{})}
	}
	lines := make([]string, 0, len(resp.Results))
	for _, r := range resp.Results {
		lines = append(lines, searchLine(c, r))
	}
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("results", toJSON(resp.Results))}
}

func searchLine(c *Client, r dispatch.SearchResult) string {
	snippet := plainSnippet(r.Snippet)
	href := c.absolute(r.Href)
	o := r.Owner
	if o.Kind == dispatch.OwnerDocument {
		return "dispatch://" + o.Project + "/artifact/" + o.Slug + " [document] " + o.Name + " - " + string(r.Kind) + ": " + snippet + " -> " + href
	}
	key, status, title := o.Key, o.Status, o.Title
	if key == "" && r.Issue != nil {
		key, status, title = r.Issue.Key, r.Issue.Status, r.Issue.Title
	}
	line := key + " [" + string(status) + "] " + title + " - " + string(r.Kind)
	if r.Artifact != nil && r.Artifact.Name != "" {
		line += " " + r.Artifact.Name
	}
	return line + ": " + snippet + " -> " + href
}

// issuesResult renders one row per issue, `<KEY> [<status>] P<n> <title> · <N> open asks ·
// route <route>` (absent parts, a zero open-ask count included, left out), under a header
// `showing <a>-<b> of <total>` when the page is partial.
func issuesResult(project string, page *dispatch.IssueSummaryPage) *Result {
	var lines []string
	n := int64(len(page.Issues))
	if n == 0 {
		lines = append(lines, "No issues in "+project+" match")
	} else if n < page.Total {
		lines = append(lines, "showing "+strconv.FormatInt(page.Offset+1, 10)+"-"+strconv.FormatInt(page.Offset+n, 10)+" of "+strconv.FormatInt(page.Total, 10))
	}
	for _, s := range page.Issues {
		line := s.Key + " [" + string(s.Status) + "]"
		if s.Priority != nil {
			line += " P" + strconv.FormatInt(int64(*s.Priority), 10)
		}
		line += " " + s.Title
		if s.OpenAsks > 0 {
			line += " · " + strconv.FormatInt(s.OpenAsks, 10) + " open asks"
		}
		if r, ok := s.Route.Get(); ok && r != "" {
			line += " · route " + r
		}
		lines = append(lines, line)
	}
	details := jsonvalue.ObjectOf("total", float64(page.Total), "limit", float64(page.Limit), "offset", float64(page.Offset), "issues", toJSON(page.Issues))
	return &Result{Text: strings.Join(lines, "\n"), Details: details}
}

// syncResult is `Synced <P> architecture from <repo>@<branch>: commit <sha> (<at>).` or `Sync
// failed for <P> (<repo>@<branch>): <error>` and a line saying whether a previous model stays
// up (§8.9).
func syncResult(project string, src *dispatch.ArchitectureSource) *Result {
	p := src.Project
	if p == "" {
		p = project
	}
	where := src.Repo + "@" + src.Branch
	var text string
	if src.LastError != nil {
		text = "Sync failed for " + p + " (" + where + "): " + *src.LastError + "\n"
		if src.LastCommit != nil {
			text += "The previous model (commit " + *src.LastCommit + ") stays up."
		} else {
			text += "No previous model stays up: the project has no imported architecture yet."
		}
	} else {
		text = "Synced " + p + " architecture from " + where + ": commit " + deref(src.LastCommit) + " (" + deref(src.LastSyncAt) + ")."
	}
	return &Result{Text: text, Details: jsonvalue.ObjectOf("source", toJSON(src))}
}

// openAsksResult lists the open asks oldest first with their references and deep links.
func openAsksResult(c *Client, project string, resp *dispatch.OpenAsksResponse) *Result {
	scope := "by this session"
	if project != "" {
		scope = "in " + project
	}
	var lines []string
	if len(resp.Asks) == 0 {
		lines = append(lines, "No open asks "+scope)
	} else {
		lines = append(lines, plural(len(resp.Asks), "open ask", "open asks")+" "+scope+" ("+
			strconv.FormatInt(resp.WaitingOnHuman, 10)+" waiting on a human, "+strconv.FormatInt(resp.WaitingOnAgent, 10)+" waiting on an agent)")
	}
	for _, a := range resp.Asks {
		ref := ""
		switch {
		case a.Owner.Issue != nil:
			ref = "dispatch://" + a.Owner.Issue.Key + "/ask/" + a.ID
		case a.Owner.Document != nil:
			ref = "dispatch://" + a.Owner.Document.Project + "/artifact/" + a.Owner.Document.Slug + "/ask/" + a.ID
		}
		line := "- " + a.ID
		if ref != "" {
			line += " " + ref
		}
		line += " [" + string(a.Urgency) + "] " + questionHead(a.Question) + " · waiting on " + string(a.WaitingOn) + " · " + age(a.AgeSeconds) + " old"
		if a.Ref != "" {
			line += " -> " + c.absolute(a.Ref)
		}
		lines = append(lines, line)
	}
	return &Result{Text: strings.Join(lines, "\n"), Details: jsonvalue.ObjectOf("open_asks", toJSON(resp))}
}

// age renders seconds as the largest whole unit (s, m, h, d).
func age(s int64) string {
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + "m"
	case s < 86400:
		return strconv.FormatInt(s/3600, 10) + "h"
	}
	return strconv.FormatInt(s/86400, 10) + "d"
}

// whoamiResult is `Session <id> acts for <owner>: …`, `Session <id> runs under the shared
// token: …` or the user login; details `{session, owner}` (§8.9).
func whoamiResult(session string, w *dispatch.WhoamiResponse) *Result {
	shown := session
	if shown == "" {
		shown = "unknown"
	}
	var sess any
	if session != "" {
		sess = session
	}
	var text string
	var owner any
	switch {
	case w.Kind == dispatch.WhoamiUser:
		text = "Signed in as " + w.Login + " (a user token, not an agent session)"
		owner = w.Login
	case w.Owner != nil:
		text = "Session " + shown + " acts for " + *w.Owner + ": Dispatch attributes its writes to " + *w.Owner + "'s agent token."
		owner = *w.Owner
	default:
		text = "Session " + shown + " runs under the shared token: Dispatch attributes its writes to the session alone."
	}
	return &Result{Text: text, Details: jsonvalue.ObjectOf("session", sess, "owner", owner)}
}

// ---- actors ----

// actorText renders an actor: a user's login, `session <id>` (with `(for <owner>)`), or
// `<kind> <id>`.
func actorText(a dispatch.Actor) string {
	switch a.Kind {
	case dispatch.ActorUser:
		return a.ID
	case dispatch.ActorSession:
		s := "session " + a.ID
		if a.Owner != "" {
			s += " (for " + a.Owner + ")"
		}
		return s
	}
	return string(a.Kind) + " " + a.ID
}
