package dispatch

import (
	"strings"

	ts "github.com/agentwire/agentwire/toolspec"
)

// The twenty tool names of dispatch-tools.md §6, in suite order.
const (
	ToolIssue            = "dispatch_issue"
	ToolIssueUpdate      = "dispatch_issue_update"
	ToolAsk              = "dispatch_ask"
	ToolEditAsk          = "dispatch_edit_ask"
	ToolResolveAsk       = "dispatch_resolve_ask"
	ToolResolveComment   = "dispatch_resolve_comment"
	ToolFollow           = "dispatch_follow"
	ToolComment          = "dispatch_comment"
	ToolSuggest          = "dispatch_suggest"
	ToolMessage          = "dispatch_message"
	ToolDocEdit          = "dispatch_doc_edit"
	ToolDocRead          = "dispatch_doc_read"
	ToolRequestApproval  = "dispatch_request_approval"
	ToolArtifact         = "dispatch_artifact"
	ToolRead             = "dispatch_read"
	ToolSearch           = "dispatch_search"
	ToolIssues           = "dispatch_issues"
	ToolArchitectureSync = "dispatch_architecture_sync"
	ToolOpenAsks         = "dispatch_open_asks"
	ToolWhoami           = "dispatch_whoami"
	artifactPhrase       = "artifact id, slug, or filename"
	quoteAnchorPhrase    = "quote anchor is pinned to its block"
)

// ---- argument descriptions shared by several tools (§2.5) ----

const (
	issueRuleText = "A native issue key such as DSP-1, or an external owner/repo#n reference; an " +
		"external reference resolves to (and if needed creates) its native issue in the project " +
		"configured for that repository, falling back to the server's default project."
	documentProjectText = "Project key such as CORE. Exactly one of issue and project is required; " +
		"a project key addresses an unlinked project document named by artifact."
	artifactText = "The document's " + artifactPhrase + ". With issue and no artifact, the issue's " +
		"primary document (slug spec) is meant."
	refText = "A dispatch:// reference naming the target: dispatch://KEY-1, dispatch://KEY-1/spec, " +
		"dispatch://KEY-1/artifact/<slug> or dispatch://PROJECT/artifact/<slug>."
	askIDText = "The ask: its uuid, a dispatch://…/ask/<id> reference, or a prefix of at least 8 hex " +
		"characters unique among this session's open asks."
)

func str() *ts.Node { return ts.String().Optional() }

// addressing returns the optional issue/project/artifact/ref arguments of §5.1 that a tool
// declares, in that order.
func addressing(issue, project, artifact, ref bool, refDesc string) []ts.Field {
	var fs []ts.Field
	if issue {
		fs = append(fs, ts.Key("issue", str().Describe(issueRuleText)))
	}
	if project {
		fs = append(fs, ts.Key("project", str().Describe(documentProjectText)))
	}
	if artifact {
		fs = append(fs, ts.Key("artifact", str().Describe(artifactText)))
	}
	if ref {
		if refDesc == "" {
			refDesc = refText
		}
		fs = append(fs, ts.Key("ref", str().Describe(refDesc)))
	}
	return fs
}

func shape(groups ...[]ts.Field) []ts.Field {
	var out []ts.Field
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func fields(fs ...ts.Field) []ts.Field { return fs }

// labelsNode is `array(string{min:1,max:40}, {max:20})`.
func labelsNode() *ts.Node {
	return ts.Array(ts.String().MinLen(IssueLabelMinLen).MaxLen(IssueLabelMaxLen)).MaxItems(IssueLabelsMax)
}

// componentsNode is the non-strict components object of §5.6.
func componentsNode() *ts.Node {
	return ts.Object(
		ts.Key("mode", ts.Enum(enumStrings(issueComponentsModes[:])...).Describe(
			"inherit: delete the issue's own attachment so it takes its nearest ancestor's again "+
				"(the default state); explicit: replace it with ids; none: record reason why the "+
				"issue is not architectural.")),
		ts.Key("ids", ts.Array(ts.String().MinLen(ComponentIDMinLen)).MinItems(ComponentIDsMin).
			MaxItems(ComponentIDsMax).Optional().Describe(
			"Bare component ids of the issue's project (not external), for explicit.")),
		ts.Key("reason", ts.String().MinLen(1).Optional().Describe(
			"Non-blank reason the issue is not architectural, for none.")),
	)
}

// optionNode is the non-strict ask option item of §5.7.
func optionNode() *ts.Node {
	return ts.Object(
		ts.Key("label", ts.String().Describe("Option label the human picks.")),
		ts.Key("description", str().Describe("Optional explanation shown with the option.")),
	)
}

// optionsNode is `array(option, {max:8})`.
func optionsNode(desc string) *ts.Node {
	return ts.Array(optionNode()).MaxItems(AskOptionsMax).Optional().Describe(desc)
}

// anchorNode is the non-strict quote anchor of §5.7.
func anchorNode() *ts.Node {
	return ts.Object(
		ts.Key("artifact", ts.String().Describe("The anchored document's "+artifactPhrase+".")),
		ts.Key("quote", ts.String().Describe("Exact document text to anchor on.")),
		ts.Key("occurrence", ts.Int().Min(0).Optional().Describe("Zero-based occurrence of quote.")),
	).Optional().Describe("Pins the ask to quoted document text; a new " + quoteAnchorPhrase +
		" (its lowest complete containing block), while a quote spanning top-level siblings stays unpinned.")
}

// opNode is the strict dispatch_doc_edit operation object of §6.11.
func opNode() *ts.Node {
	return ts.Object(
		ts.Key("op", ts.Enum(enumStrings(docEditOps[:])...).Describe(
			"replace needs find and with; delete needs find or block; insert needs markdown and "+
				"exactly one of after/before; move needs block and exactly one of after/before; "+
				"retype needs block and type; delete_row and delete_column need a table block and index.")),
		ts.Key("find", str().Describe("Target text as rendered (inline markdown tolerated; a leading \"# \" selects a heading).")),
		ts.Key("with", str().Describe("Replacement text (inline markdown).")),
		ts.Key("occurrence", ts.Int().Min(0).Optional().Describe("Zero-based occurrence of find.")),
		ts.Key("markdown", str().Describe("Markdown to insert.")),
		ts.Key("after", str().Describe("Anchor: a quote, start, end, heading:<title> or block:<id>.")),
		ts.Key("before", str().Describe("Anchor: a quote, start, end, heading:<title> or block:<id>.")),
		ts.Key("block", str().Describe("Stable block id (retype, delete, move, delete_row, delete_column).")),
		ts.Key("index", ts.Int().Min(0).Optional().Describe("Zero-based row or column index.")),
		ts.Key("type", str().Describe("Server-declared typed block name (retype).")),
		ts.Key("attributes", ts.Unknown().Optional().Describe("Client-owned typed attributes (retype).")),
	).Strict()
}

// preconditionNode is the dispatch_doc_edit stale-edit guard (§6.11).
func preconditionNode() *ts.Node {
	block := ts.Object(
		ts.Key("id", ts.String().MinLen(1).Describe("Block id from the blocks listing.")),
		ts.Key("token", ts.String().MinLen(1).Describe("The block's token from the blocks listing.")),
	)
	return ts.Object(
		ts.Key("document", ts.String().MinLen(1).Optional().Describe(
			"Whole-document token from dispatch_doc_read or a previous edit's result.")),
		ts.Key("blocks", ts.Array(block).MinItems(1).Optional().Describe(
			"Block guards; they must cover every content block the batch changes.")),
	).Optional().Describe("Stale-edit guard selecting exactly one of document or blocks; a stale " +
		"guard is refused with PRECONDITION_FAILED and nothing of the batch is applied. Insert and " +
		"move depend on document order and need the document token.")
}

func sectionList() string {
	return strings.Join(enumStrings(specSections[:]), ", ")
}

func defs() []ts.Definition {
	statusEnum := func() *ts.Node { return ts.Enum(enumStrings(issueStatuses[:])...) }
	urgencyEnum := func() *ts.Node { return ts.Enum(enumStrings(askUrgencies[:])...) }
	return []ts.Definition{
		{
			Name: ToolIssue,
			Description: "Create a native Dispatch issue in a project. Search first (dispatch_search) so " +
				"you do not file a duplicate: the server refuses a likely duplicate with 409 " +
				"POSSIBLE_DUPLICATE and lists the candidates unless force is true.",
			Arguments: fields(
				ts.Key("project", ts.String().Describe("Project key, e.g. DSP.")),
				ts.Key("title", ts.String().Describe("Issue title.")),
				ts.Key("parent", str().Describe("Parent issue key in the same project.")),
				ts.Key("external", str().Describe("External issue reference (owner/repo#n) to link.")),
				ts.Key("force", ts.Boolean().Optional().Describe("Create despite duplicate candidates.")),
				ts.Key("spec", str().Describe("Initial primary-document markdown; write its sections in "+
					"this order: "+sectionList()+".")),
				ts.Key("labels", labelsNode().Optional().Describe("Initial labels (at most 20, each 1 to 40 characters).")),
				ts.Key("priority", ts.Int().Min(float64(PriorityHighest)).Max(float64(PriorityLowest)).Optional().
					Describe("Coarse priority: 0 = P0 (highest) through 3 = P3 (lowest).")),
				ts.Key("assignee", str().Describe("GitHub login on the server's sign-in allowlist (the server "+
					"lowercases it). Absent: the caller's owner, else the parent's assignee, else unassigned.")),
				ts.Key("components", componentsNode().Optional().Describe(
					"The issue's own architecture attachment; absent, it inherits.")),
			),
			Example: `{"project":"DSP","title":"Native workspace"}`,
		},
		{
			Name: ToolIssueUpdate,
			Description: "Change an issue's status, title, labels, external links, route, parent or " +
				"component attachment; give at least one of them besides issue. Priority, rank and " +
				"assignee are not exposed (priority stays the human's). On a closed issue the server " +
				"accepts only components and a reopening status (any status but done); every other " +
				"field waits until the issue is reopened.",
			Arguments: fields(
				ts.Key("issue", ts.String().Describe(issueRuleText)),
				ts.Key("status", statusEnum().Optional().Describe("New status.")),
				ts.Key("title", ts.String().MinLen(1).Optional().Describe("New title.")),
				ts.Key("labels", labelsNode().Optional().Describe("Replaces every label; [] clears them.")),
				ts.Key("external_links", ts.Array(ts.String().MinLen(1)).Optional().Describe(
					"URLs merged into the issue's existing links by URL.")),
				ts.Key("route", str().Describe("role:<name> or session:<id>; \"\" clears the route.")),
				ts.Key("parent", str().Describe("Parent issue key in the same project; \"\" clears it.")),
				ts.Key("components", componentsNode().Optional().Describe(
					"The issue's own architecture attachment; allowed on a closed issue.")),
			),
			Validation: &ts.Validation{Check: IssueUpdateRule, Message: MsgIssueUpdate},
			Strict:     true,
			Example:    `{"issue":"DSP-1","status":"in_progress"}`,
		},
		{
			Name: ToolAsk,
			Description: "Open a durable decision for a human: a question with the options you choose, " +
				"on an issue or a project document. Every ask you create is a question. With anchor, " +
				"the " + quoteAnchorPhrase + " (its lowest complete containing block) so it " +
				"follows edits of the document.",
			Arguments: shape(
				addressing(true, true, true, true, "A dispatch:// reference to an issue, document, message "+
					"or ask that gives context. It is appended to the question as a \"Ref:\" line (unless "+
					"the question already contains it) and rendered as a link."),
				fields(
					ts.Key("question", ts.String().MaxLen(AskQuestionMax).Describe("The question (at most 800 characters).")),
					ts.Key("options", optionsNode("Answer options (at most 8).")),
					ts.Key("multiple", ts.Boolean().Optional().Describe("Several options may be chosen.")),
					ts.Key("urgency", urgencyEnum().Optional().Describe("How urgent the decision is.")),
					ts.Key("anchor", anchorNode()),
				),
			),
			Validation: &ts.Validation{Check: owner(true, false), Message: MsgOwner},
			Example:    `{"issue":"DSP-1","question":"Ship this?"}`,
		},
		{
			Name: ToolEditAsk,
			Description: "Reword an open ask you asked, while it is neither answered nor resolved; give " +
				"at least one field besides ask.",
			Arguments: fields(
				ts.Key("ask", ts.String().Describe(askIDText)),
				ts.Key("question", ts.String().MaxLen(AskQuestionMax).Optional().Describe("New question text.")),
				ts.Key("options", optionsNode("Replaces the options (at most 8).")),
				ts.Key("multiple", ts.Boolean().Optional().Describe("Several options may be chosen.")),
				ts.Key("urgency", urgencyEnum().Optional().Describe("New urgency.")),
			),
			Validation: &ts.Validation{Check: EditAskRule, Message: MsgEditAsk},
			Example:    `{"ask":"01234567-0000-4000-8000-000000000001","question":"Ship the revised plan?"}`,
		},
		{
			Name:        ToolResolveAsk,
			Description: "Retract or self-resolve an open ask without answering it, with a reason.",
			Arguments: fields(
				ts.Key("ask", ts.String().Describe(askIDText)),
				ts.Key("kind", ts.Enum(enumStrings(askResolutionKinds[:])...).Describe(
					"retracted: the question no longer applies; resolved: it was settled another way.")),
				ts.Key("reason", ts.String().MinLen(1).Describe("Why the ask is closed.")),
			),
			Example: `{"ask":"01234567-0000-4000-8000-000000000001","kind":"retracted","reason":"A newer question supersedes this one."}`,
		},
		{
			Name: ToolResolveComment,
			Description: "Resolve a comment thread. Any session may resolve a comment on an open owner; " +
				"only a human can reopen it.",
			Arguments: fields(
				ts.Key("comment", ts.String().Describe("A comment uuid, or dispatch://<KEY>/comment/<id> or "+
					"dispatch://<PROJECT>/artifact/<slug>/comment/<id>, whose id may be a prefix of at "+
					"least 8 characters unique on its owner.")),
			),
			Strict:  true,
			Example: `{"comment":"01234567-0000-4000-8000-000000000001"}`,
		},
		{
			Name: ToolFollow,
			Description: "Follow or unfollow an ask: a follower receives its answer, edits, resolution " +
				"and replies. To follow a whole issue, subscribe with Envoy to " +
				"notifications.dispatch.issue.<KEY>.> instead.",
			Arguments: fields(
				ts.Key("ask", ts.String().Describe("The full ask uuid, or dispatch://KEY/ask/<uuid> or "+
					"dispatch://PROJECT/artifact/<slug>/ask/<uuid>; no prefixes.")),
				ts.Key("action", ts.Enum(enumStrings(followActions[:])...).Describe("follow or unfollow.")),
			),
			Strict:  true,
			Example: `{"ask":"01234567-0000-4000-8000-000000000001","action":"follow"}`,
		},
		{
			Name: ToolComment,
			Description: "Leave review feedback on an issue or on a quoted passage of a document, or " +
				"reply to an ask. A comment's " + quoteAnchorPhrase + " (its lowest complete " +
				"containing block).",
			Arguments: shape(
				addressing(true, true, true, true, ""),
				fields(
					ts.Key("quote", str().Describe("Exact document text to anchor on; needs artifact or a document ref.")),
					ts.Key("occurrence", ts.Int().Min(0).Optional().Describe("Zero-based occurrence of quote.")),
					ts.Key("body", ts.String().MaxLen(DispatchBodyMax).Describe("The comment (at most 2000 characters).")),
					ts.Key("reply_to", str().Describe("Comment uuid whose thread this continues.")),
					ts.Key("reply_to_ask", str().Describe("Ask uuid this replies to; exclusive with reply_to.")),
					ts.Key("turn", ts.Enum(string(TurnAgent), string(TurnHuman)).Optional().Describe(
						"Only with reply_to_ask: agent keeps the ask waiting on the asker (a progress "+
							"note); human (the default) hands the turn to the human.")),
				),
			),
			Validation: &ts.Validation{Check: CommentRule, Message: MsgComment},
			Example:    `{"issue":"DSP-1","body":"Looks good."}`,
		},
		{
			Name:        ToolSuggest,
			Description: "Propose an exact replacement for quoted text of a document.",
			Arguments: shape(
				addressing(true, true, true, true, ""),
				fields(
					ts.Key("quote", ts.String().Describe("Exact text to replace.")),
					ts.Key("replace_with", ts.String().Describe("The replacement text.")),
					ts.Key("body", ts.String().MaxLen(DispatchBodyMax).Optional().Describe("Rationale (at most 2000 characters).")),
					ts.Key("occurrence", ts.Int().Min(0).Optional().Describe("Zero-based occurrence of quote.")),
				),
			),
			Validation: &ts.Validation{Check: owner(true, true), Message: MsgOwnerDocument},
			Example:    `{"issue":"DSP-1","artifact":"spec","quote":"old wording","replace_with":"new wording"}`,
		},
		{
			Name: ToolMessage,
			Description: "Post a note on an issue that humans must read now. Use in_reply_to to answer " +
				"an earlier message of the same issue.",
			Arguments: fields(
				ts.Key("issue", ts.String().Describe(issueRuleText)),
				ts.Key("body", ts.String().MaxLen(DispatchBodyMax).Describe("The message (at most 2000 characters).")),
				ts.Key("in_reply_to", str().Describe("A message uuid or dispatch://<KEY>/message/<id> this answers.")),
			),
			Example: `{"issue":"DSP-1","body":"Implementation started."}`,
		},
		{
			Name: ToolDocEdit,
			Description: "Apply deterministic edits to a live document, in order and atomically. A spec " +
				"keeps its sections in this order: " + sectionList() + ". Use precondition to guard " +
				"against stale edits: a document token from dispatch_doc_read or a previous edit, or " +
				"block tokens from the blocks listing. Tokens include inline marks, so a new anchored " +
				"ask or comment makes an older token stale.",
			Arguments: shape(
				addressing(true, true, true, true, ""),
				fields(
					ts.Key("ops", ts.Array(opNode()).Describe("Operations, applied in order and atomically.")),
					ts.Key("precondition", preconditionNode()),
					ts.Key("summary", str().Describe("Names the version this edit creates.")),
				),
			),
			Validation: &ts.Validation{Check: DocEditRule, Message: MsgDocEdit},
			Example:    `{"issue":"DSP-1","artifact":"spec","ops":[{"op":"delete_column","block":"table-123","index":1}],"precondition":{"blocks":[{"id":"table-123","token":"sha256:current-table-token"}]}}`,
		},
		{
			Name: ToolDocRead,
			Description: "Read a live document with its token, or a named version of it. issue alone " +
				"reads the issue's primary document.",
			Arguments: shape(
				addressing(true, true, true, false, ""),
				fields(ts.Key("version", ts.Int().Min(1).Optional().Describe("The named version to read."))),
				addressing(false, false, false, true, ""),
			),
			Validation: &ts.Validation{Check: owner(true, false), Message: MsgOwner},
			Example:    `{"issue":"DSP-1"}`,
		},
		{
			Name: ToolRequestApproval,
			Description: "Ask a human to approve a document at its current version. This is an " +
				"exception path, not a step for every issue: it opens an approval ask (Approve / " +
				"Request changes) in the human's Inbox; the answer arrives as artifact.approved or " +
				"artifact.changes_requested, and a later edit makes an approval stale. Idempotent " +
				"while a request is open.",
			Arguments:  addressing(true, true, true, false, ""),
			Validation: &ts.Validation{Check: owner(true, false), Message: MsgOwner},
			Example:    `{"issue":"DSP-1"}`,
		},
		{
			Name: ToolArtifact,
			Description: "Upload a local file or inline text as an issue artifact or a project " +
				"document; give exactly one of path and content.",
			Arguments: shape(
				fields(
					ts.Key("issue", str().Describe(issueRuleText)),
					ts.Key("project", str().Describe("Project key such as CORE for a project document. "+
						"Exactly one of issue and project is required.")),
				),
				fields(
					ts.Key("name", ts.String().Describe("Filename shown.")),
					ts.Key("path", str().Describe("Local file, resolved against the host's working directory (at most 25 MiB).")),
					ts.Key("content", str().Describe("Inline markdown.")),
					ts.Key("summary", str().Describe("Version summary.")),
				),
			),
			Validation: &ts.Validation{Check: ArtifactRule, Message: MsgArtifact},
			Example:    `{"issue":"DSP-1","name":"design.md","content":"# Design\n"}`,
		},
		{
			Name: ToolRead,
			Description: "Read a summary of an issue or a project document (named by its " + artifactPhrase +
				"), or a targeted ask, comment or message through ref. Every render ends with what " +
				"references the node and what it links to.",
			Arguments: addressing(true, true, true, true, "A dispatch:// reference: an issue, its spec, "+
				"log or children, a document, or an ask, comment or message."),
			Validation: &ts.Validation{Check: owner(true, false), Message: MsgOwner},
			Example:    `{"issue":"DSP-1"}`,
		},
		{
			Name: ToolSearch,
			Description: "Keyword search across issues, documents, comments, asks and messages; " +
				"supports quoted phrases, -term and OR.",
			Arguments: fields(
				ts.Key("query", ts.String().MinLen(SearchQueryMin).Describe("Search query (at least 2 characters).")),
				ts.Key("project", str().Describe("Restrict the search to a project key.")),
				ts.Key("limit", ts.Int().Min(SearchLimitMin).Max(SearchLimitMax).Optional().Describe("Hits to return, 1 to 50 (default 20).")),
			),
			Example: `{"query":"astrolabe"}`,
		},
		{
			Name:        ToolIssues,
			Description: "List a project's issues, for a roadmap or backlog pass.",
			Arguments: fields(
				ts.Key("project", ts.String().Describe("Project key.")),
				ts.Key("status", statusEnum().Optional().Describe("Only issues in this status.")),
				ts.Key("parent", str().Describe("Only children of this issue.")),
				ts.Key("label", str().Describe("Only issues carrying this label.")),
				ts.Key("updated_since", str().Describe("RFC 3339 timestamp; only issues updated since.")),
				ts.Key("limit", ts.Int().Min(1).Max(MaxIssuePageLimit).Optional().Describe("Page size, 1 to 250 (default 50).")),
			),
			Example: `{"project":"AGENTC"}`,
		},
		{
			Name:        ToolArchitectureSync,
			Description: "Import the project's architecture model from its configured repository now.",
			Arguments: fields(
				ts.Key("project", ts.String().Describe("Project key.")),
			),
			Strict:  true,
			Example: `{"project":"CORE"}`,
		},
		{
			Name: ToolOpenAsks,
			Description: "List active unanswered asks, oldest first: without project, this session's " +
				"own open asks; with a project, every open ask in that project.",
			Arguments: fields(
				ts.Key("project", str().Describe("Project key; lists every open ask in that project.")),
			),
			Strict:  true,
			Example: `{}`,
		},
		{
			Name:        ToolWhoami,
			Description: "Tell who Dispatch takes this session for. Takes no arguments.",
			Strict:      true,
			Example:     `{}`,
		},
	}
}

// Suite is the registry of the twenty Dispatch tools of §6, in suite order. Lookup by name is
// exact.
var Suite = mustSuite()

func mustSuite() *ts.Suite {
	ds := defs()
	specs := make([]*ts.Spec, len(ds))
	for i, d := range ds {
		specs[i] = ts.MustNew(d)
	}
	s, err := ts.NewSuite(specs...)
	if err != nil {
		panic(err)
	}
	return s
}

// Specs returns the twenty specs in suite order.
func Specs() []*ts.Spec { return Suite.Specs() }

// Names returns the twenty tool names in suite order.
func Names() []string { return Suite.Names() }

// Lookup returns the spec named exactly name.
func Lookup(name string) (*ts.Spec, bool) { return Suite.Lookup(name) }
