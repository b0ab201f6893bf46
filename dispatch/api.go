package dispatch

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// This file holds the Dispatch API types of dispatch-tools.md §9. Conventions (§9.1):
//
//   - member names are the wire names, in the spec's order;
//   - `T|null` is a pointer without omitzero (encoded as null when nil);
//   - `name?: T` is a field tagged omitzero (a nil pointer or nil slice is left out);
//   - `name?: T|null` and write members whose absent and null differ are [Opt] tagged omitzero;
//   - arrays are slices and encode as `[]` when empty (the encoder never writes a nil slice as
//     null);
//   - integers are int64, timestamps RFC 3339 strings, ids strings;
//   - members whose shape the spec leaves open are kept as raw JSON ([jsontext.Value]).
//
// Decode with [Decode] (or json.Unmarshal from github.com/go-json-experiment/json): unknown
// members are ignored and enumerated fields accept any string.

// Decode decodes a Dispatch API value: unknown members are ignored, duplicate names refused.
func Decode(data []byte, v any) error { return json.Unmarshal(data, v) }

// Encode encodes a Dispatch API value: only known members, in field order, no HTML escaping,
// empty arrays as `[]`.
func Encode(v any) ([]byte, error) { return json.Marshal(v) }

// ---- §9.2 Actors and identity ----

// ActorOrigin is where a session actor runs (`actor.origin`); every member is optional.
type ActorOrigin struct {
	Host         string `json:"host,omitzero"`
	Machine      string `json:"machine,omitzero"`
	Cwd          string `json:"cwd,omitzero"`
	Tmux         string `json:"tmux,omitzero"`
	Pane         string `json:"pane,omitzero"`
	SessionTitle string `json:"session_title,omitzero"`
}

// Actor is who wrote something: `{kind:"user", id}`, `{kind:"session", id, origin?, owner?}`
// or `{kind:"system", id}`. Owner is the GitHub login when a personal agent token authenticated
// the request (rendered `(for <owner>)` and persisted with the actor).
type Actor struct {
	Kind   ActorKind    `json:"kind"`
	ID     string       `json:"id"`
	Origin *ActorOrigin `json:"origin,omitzero"`
	Owner  string       `json:"owner,omitzero"`
}

// WhoamiResponse is `GET /api/v1/whoami`: `{kind:"user", login}` (display-cased) or
// `{kind:"agent", owner: string|null}` (lowercase owner; null under the shared token).
type WhoamiResponse struct {
	Kind  WhoamiKind
	Login string
	Owner *string
}

type whoamiUser struct {
	Kind  WhoamiKind `json:"kind"`
	Login string     `json:"login"`
}

type whoamiAgent struct {
	Kind  WhoamiKind `json:"kind"`
	Owner *string    `json:"owner"`
}

type whoamiWire struct {
	Kind  WhoamiKind `json:"kind"`
	Login string     `json:"login"`
	Owner *string    `json:"owner"`
}

// MarshalJSON emits only the members of the response's kind.
func (w WhoamiResponse) MarshalJSON() ([]byte, error) {
	if w.Kind == WhoamiAgent {
		return json.Marshal(whoamiAgent{Kind: w.Kind, Owner: w.Owner})
	}
	return json.Marshal(whoamiUser{Kind: w.Kind, Login: w.Login})
}

// UnmarshalJSON decodes either form.
func (w *WhoamiResponse) UnmarshalJSON(b []byte) error {
	var x whoamiWire
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*w = WhoamiResponse(x)
	return nil
}

// DispatchUser is one row of `GET /api/v1/users` (the sign-in allowlist).
type DispatchUser struct {
	Login string `json:"login"`
}

// ListUsersResponse is `GET /api/v1/users`.
type ListUsersResponse struct {
	Users []DispatchUser `json:"users"`
}

// Project is a Dispatch project (`project.created` / `project.updated` payloads).
type Project struct {
	Key       string `json:"key"`
	Name      string `json:"name"`
	OpenAsks  *int64 `json:"open_asks,omitzero"`
	CreatedAt string `json:"created_at"`
}

// ---- §9.4 Issues ----

// ExternalLink is one of an issue's external links (`{url, kind?}`).
type ExternalLink struct {
	URL  string `json:"url"`
	Kind string `json:"kind,omitzero"`
}

// IssueClaim is the server-side claim of an issue (`{actor, at}`); no tool of this suite
// writes it.
type IssueClaim struct {
	Actor Actor  `json:"actor"`
	At    string `json:"at"`
}

// IssueComponents is an issue's effective architecture attachment, resolved on read up the
// parent chain.
type IssueComponents struct {
	Mode          IssueComponentsMode `json:"mode"`
	IDs           []string            `json:"ids"`
	Unknown       []string            `json:"unknown"`
	Reason        *string             `json:"reason"`
	InheritedFrom *string             `json:"inherited_from"`
}

// IssueComponentsInput is the components argument and write member (`{mode, ids?, reason?}`).
type IssueComponentsInput struct {
	Mode   IssueComponentsMode `json:"mode"`
	IDs    []string            `json:"ids,omitzero"`
	Reason string              `json:"reason,omitzero"`
}

// Issue is a native Dispatch issue (`issue.*` event payloads, the core of IssueDetails).
type Issue struct {
	Key               string          `json:"key"`
	Project           string          `json:"project"`
	Number            int64           `json:"number"`
	Title             string          `json:"title"`
	Status            IssueStatus     `json:"status"`
	Priority          *IssuePriority  `json:"priority"`
	Rank              string          `json:"rank"`
	Labels            []string        `json:"labels"`
	Parent            *string         `json:"parent"`
	Assignee          *string         `json:"assignee"`
	Claim             Opt[IssueClaim] `json:"claim,omitzero"`
	Components        IssueComponents `json:"components"`
	ExternalLinks     []ExternalLink  `json:"external_links"`
	Route             *string         `json:"route"`
	CreatedBy         *Actor          `json:"created_by"`
	CreatedAt         string          `json:"created_at"`
	UpdatedAt         string          `json:"updated_at"`
	ClosedAt          *string         `json:"closed_at"`
	PrimaryArtifactID string          `json:"primary_artifact_id"`
	LastSeq           int64           `json:"last_seq"`
}

// IssueSummary is one row of an issue list.
type IssueSummary struct {
	Key         string          `json:"key"`
	Title       string          `json:"title"`
	Status      IssueStatus     `json:"status"`
	Priority    *IssuePriority  `json:"priority"`
	Rank        string          `json:"rank"`
	Parent      *string         `json:"parent"`
	Assignee    *string         `json:"assignee"`
	Components  IssueComponents `json:"components"`
	UpdatedAt   string          `json:"updated_at"`
	LastSeq     int64           `json:"last_seq"`
	Labels      []string        `json:"labels,omitzero"`
	OpenAsks    int64           `json:"open_asks"`
	Claim       Opt[IssueClaim] `json:"claim,omitzero"`
	Route       Opt[string]     `json:"route,omitzero"`
	RouteStatus Opt[string]     `json:"route_status,omitzero"`
	RouteHolder jsontext.Value  `json:"route_holder,omitzero"`
}

// IssueSummaryPage is `GET /api/v1/issues` (`dispatch_issues`).
type IssueSummaryPage struct {
	Issues []IssueSummary `json:"issues"`
	Total  int64          `json:"total"`
	Limit  int64          `json:"limit"`
	Offset int64          `json:"offset"`
}

// IssueChild is one child row of an issue.
type IssueChild struct {
	Key           string         `json:"key"`
	Title         string         `json:"title"`
	Status        IssueStatus    `json:"status"`
	SubtreeDone   int64          `json:"subtree_done"`
	SubtreeTotal  int64          `json:"subtree_total"`
	ActiveAt      string         `json:"active_at"`
	ExternalLinks []ExternalLink `json:"external_links"`
}

// IssueDetails is an Issue with its documents, open asks and children.
type IssueDetails struct {
	Issue
	Artifacts         []Artifact   `json:"artifacts"`
	OpenAsks          []Ask        `json:"open_asks"`
	Children          []IssueChild `json:"children"`
	ReferencedByCount *int64       `json:"referenced_by_count,omitzero"`
}

// IssueRead is `GET /api/v1/issues/{key}`: `{issue, events}`. UnmarshalJSON also accepts a bare
// IssueDetails, as the client MUST (§9.4).
type IssueRead struct {
	Issue  IssueDetails    `json:"issue"`
	Events []DispatchEvent `json:"events"`
}

type issueReadWire IssueRead

// UnmarshalJSON accepts `{issue, events}` or a bare IssueDetails.
func (r *IssueRead) UnmarshalJSON(b []byte) error {
	var probe struct {
		Issue jsontext.Value `json:"issue"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if len(probe.Issue) > 0 && probe.Issue.Kind() == '{' {
		var w issueReadWire
		if err := json.Unmarshal(b, &w); err != nil {
			return err
		}
		*r = IssueRead(w)
		return nil
	}
	var d IssueDetails
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*r = IssueRead{Issue: d}
	return nil
}

// DuplicateCandidate is one candidate of a `409 POSSIBLE_DUPLICATE` answer.
type DuplicateCandidate struct {
	Key         string      `json:"key"`
	Title       string      `json:"title"`
	Status      IssueStatus `json:"status"`
	Snippet     string      `json:"snippet"`
	SharedTerms int64       `json:"shared_terms"`
	Href        string      `json:"href"`
}

// CreateIssueInput is the body of `POST /api/v1/issues` (`dispatch_issue`).
type CreateIssueInput struct {
	Project    string                `json:"project"`
	Title      string                `json:"title"`
	Parent     string                `json:"parent,omitzero"`
	External   string                `json:"external,omitzero"`
	Spec       string                `json:"spec,omitzero"`
	Force      bool                  `json:"force,omitzero"`
	Labels     []string              `json:"labels,omitzero"`
	Priority   Opt[IssuePriority]    `json:"priority,omitzero"`
	Assignee   string                `json:"assignee,omitzero"`
	Components *IssueComponentsInput `json:"components,omitzero"`
	Actor      *Actor                `json:"actor,omitzero"`
}

// RankInput is UpdateIssueInput.rank (`{before?, after?}`).
type RankInput struct {
	Before string `json:"before,omitzero"`
	After  string `json:"after,omitzero"`
}

// UpdateIssueInput is the body of `PATCH /api/v1/issues/{key}` (§8.7). Every member is
// tri-state: absent members are omitted, never sent as null; Route, Assignee and Parent send
// null to clear, Components null means inherit, Labels `[]` clears every label.
type UpdateIssueInput struct {
	Title         Opt[string]               `json:"title,omitzero"`
	Status        Opt[IssueStatus]          `json:"status,omitzero"`
	Rank          Opt[RankInput]            `json:"rank,omitzero"`
	Labels        Opt[[]string]             `json:"labels,omitzero"`
	Priority      Opt[IssuePriority]        `json:"priority,omitzero"`
	Route         Opt[string]               `json:"route,omitzero"`
	ExternalLinks Opt[[]ExternalLink]       `json:"external_links,omitzero"`
	Assignee      Opt[string]               `json:"assignee,omitzero"`
	Parent        Opt[string]               `json:"parent,omitzero"`
	Components    Opt[IssueComponentsInput] `json:"components,omitzero"`
	Actor         *Actor                    `json:"actor,omitzero"`
}

// OpenAskBrief is one entry of WriteAdvice.your_open_asks.
type OpenAskBrief struct {
	ID       string `json:"id"`
	Question string `json:"question"`
}

// UnparsedOpeners is WriteAdvice.unparsed_openers.
type UnparsedOpeners struct {
	Count    int64    `json:"count"`
	Examples []string `json:"examples"`
}

// WriteAdvice is the optional `advice` of a write answer.
type WriteAdvice struct {
	IssueStatus             IssueStatus      `json:"issue_status,omitzero"`
	SessionWritesSinceHuman *int64           `json:"session_writes_since_human,omitzero"`
	YourOpenAsks            []OpenAskBrief   `json:"your_open_asks,omitzero"`
	DecisionBlocks          *int64           `json:"decision_blocks,omitzero"`
	UnparsedOpeners         *UnparsedOpeners `json:"unparsed_openers,omitzero"`
}

// ---- §9.5 Architecture ----

// ArchitectureSource is a project's configured architecture repository.
type ArchitectureSource struct {
	Project    string  `json:"project"`
	Repo       string  `json:"repo"`
	Branch     string  `json:"branch"`
	Enabled    bool    `json:"enabled"`
	CreatedBy  Actor   `json:"created_by"`
	CreatedAt  string  `json:"created_at"`
	LastSyncAt *string `json:"last_sync_at"`
	LastCommit *string `json:"last_commit"`
	LastError  *string `json:"last_error"`
}

// ArchitectureTree is `GET /api/v1/projects/{key}/architecture`.
type ArchitectureTree struct {
	Source           ArchitectureTreeSource      `json:"source"`
	Totals           ArchitectureTreeTotals      `json:"totals"`
	Components       []ArchitectureTreeComponent `json:"components"`
	Unassigned       []ArchitectureTreeIssueRef  `json:"unassigned"`
	NotArchitectural []ArchitectureTreeNone      `json:"not_architectural"`
	RetiredLinks     []ArchitectureTreeRetired   `json:"retired_links"`
}

// ArchitectureTreeSource is ArchitectureTree.source.
type ArchitectureTreeSource struct {
	Repo       string  `json:"repo"`
	Branch     string  `json:"branch"`
	LastCommit *string `json:"last_commit"`
	LastSyncAt *string `json:"last_sync_at"`
	LastError  *string `json:"last_error"`
}

// ArchitectureTreeTotals is ArchitectureTree.totals.
type ArchitectureTreeTotals struct {
	IssuesDone            int64 `json:"issues_done"`
	IssuesTotal           int64 `json:"issues_total"`
	Unassigned            int64 `json:"unassigned"`
	NotArchitectural      int64 `json:"not_architectural"`
	ComponentsWithoutWork int64 `json:"components_without_work"`
	RetiredLinks          int64 `json:"retired_links"`
}

// ArchitectureTreeComponent is one component with its issue counts and rows.
type ArchitectureTreeComponent struct {
	ID        string                  `json:"id"`
	Title     string                  `json:"title"`
	Parent    *string                 `json:"parent"`
	DependsOn []string                `json:"depends_on"`
	Paths     []string                `json:"paths"`
	External  bool                    `json:"external"`
	Prose     string                  `json:"prose"`
	Done      int64                   `json:"done"`
	Total     int64                   `json:"total"`
	OwnDone   int64                   `json:"own_done"`
	OwnTotal  int64                   `json:"own_total"`
	Issues    []ArchitectureTreeIssue `json:"issues"`
}

// ArchitectureTreeIssue is one issue row of a component.
type ArchitectureTreeIssue struct {
	Key           string                     `json:"key"`
	Title         string                     `json:"title"`
	Status        IssueStatus                `json:"status"`
	Priority      *IssuePriority             `json:"priority"`
	Parent        *string                    `json:"parent"`
	ExternalLinks []ExternalLink             `json:"external_links"`
	UpdatedAt     string                     `json:"updated_at"`
	Attached      ArchitectureTreeAttachment `json:"attached"`
	Via           string                     `json:"via,omitzero"`
}

// ArchitectureTreeIssueRef is an issue named in the unassigned list.
type ArchitectureTreeIssueRef struct {
	Key    string      `json:"key"`
	Title  string      `json:"title"`
	Status IssueStatus `json:"status"`
}

// ArchitectureTreeNone is an issue recorded as not architectural.
type ArchitectureTreeNone struct {
	ArchitectureTreeIssueRef
	Reason        string  `json:"reason"`
	InheritedFrom *string `json:"inherited_from"`
}

// ArchitectureTreeRetired is an issue naming retired component ids.
type ArchitectureTreeRetired struct {
	ArchitectureTreeIssueRef
	IDs []string `json:"ids"`
}

// ---- §9.6 Documents and edits ----

// Artifact is an issue artifact or project document.
type Artifact struct {
	ID        string            `json:"id"`
	IssueKey  *string           `json:"issue_key"`
	Project   string            `json:"project"`
	RefKey    string            `json:"ref_key,omitzero"`
	Slug      string            `json:"slug"`
	Name      string            `json:"name"`
	Kind      ArtifactKind      `json:"kind"`
	Primary   bool              `json:"primary"`
	CreatedBy Actor             `json:"created_by"`
	CreatedAt string            `json:"created_at"`
	Versions  []Version         `json:"versions"`
	Approval  *ArtifactApproval `json:"approval,omitzero"`
}

// Version is one version of an artifact.
type Version struct {
	Number    int64   `json:"number"`
	Named     bool    `json:"named"`
	Summary   *string `json:"summary"`
	Authors   []Actor `json:"authors"`
	CreatedAt string  `json:"created_at"`
	Size      *int64  `json:"size,omitzero"`
	Mime      string  `json:"mime,omitzero"`
	SHA256    string  `json:"sha256,omitzero"`
}

// ArtifactApproval is a document's approval state.
type ArtifactApproval struct {
	State         ArtifactApprovalState `json:"state"`
	LatestVersion int64                 `json:"latest_version"`
	Version       *int64                `json:"version,omitzero"`
	By            *Actor                `json:"by,omitzero"`
	At            string                `json:"at,omitzero"`
	Reason        Opt[string]           `json:"reason,omitzero"`
	AskID         Opt[string]           `json:"ask_id,omitzero"`
	RequestedBy   *Actor                `json:"requested_by,omitzero"`
}

// ArtifactText is `GET /api/v1/artifacts/{id}/text` (live document with its token).
type ArtifactText struct {
	Markdown string `json:"markdown"`
	Version  *int64 `json:"version"`
	Token    string `json:"token,omitzero"`
}

// ArtifactVersionText is `GET /api/v1/artifacts/{id}/versions/{n}`: a Version with its markdown.
type ArtifactVersionText struct {
	Version
	Markdown string `json:"markdown"`
}

// ArtifactUploadResponse is the answer of an artifact upload.
type ArtifactUploadResponse struct {
	Artifact Artifact     `json:"artifact"`
	Version  Version      `json:"version"`
	Advice   *WriteAdvice `json:"advice,omitzero"`
}

// BlockReferences counts what references a block.
type BlockReferences struct {
	Comments int64 `json:"comments"`
	Asks     int64 `json:"asks"`
}

// ArtifactBlock is one row of `GET /api/v1/artifacts/{uuid}/blocks`.
type ArtifactBlock struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	From       int64           `json:"from"`
	To         int64           `json:"to"`
	Token      string          `json:"token,omitzero"`
	References BlockReferences `json:"references"`
}

// Anchor is a stored quote anchor; clients MUST preserve BlockID.
type Anchor struct {
	ArtifactID string  `json:"artifact_id"`
	BlockID    *string `json:"block_id"`
	MarkID     string  `json:"mark_id"`
	Version    int64   `json:"version"`
	Quote      string  `json:"quote"`
	Orphaned   bool    `json:"orphaned"`
}

// AnchorInput is `{artifact, quote, occurrence?}` or `{artifact, mark_id}`.
type AnchorInput struct {
	Artifact   string `json:"artifact"`
	Quote      string `json:"quote,omitzero"`
	Occurrence *int64 `json:"occurrence,omitzero"`
	MarkID     string `json:"mark_id,omitzero"`
}

// EditOp is one document edit operation (`dispatch_doc_edit.ops[]`).
type EditOp struct {
	Op         DocEditOp      `json:"op"`
	Find       *string        `json:"find,omitzero"`
	With       *string        `json:"with,omitzero"`
	Occurrence *int64         `json:"occurrence,omitzero"`
	Markdown   *string        `json:"markdown,omitzero"`
	After      *string        `json:"after,omitzero"`
	Before     *string        `json:"before,omitzero"`
	Block      *string        `json:"block,omitzero"`
	Index      *int64         `json:"index,omitzero"`
	Type       *string        `json:"type,omitzero"`
	Attributes jsontext.Value `json:"attributes,omitzero"`
}

// BlockToken is one block guard (`{id, token}`).
type BlockToken struct {
	ID    string `json:"id"`
	Token string `json:"token"`
}

// EditPrecondition is `{document}` or `{blocks}`.
type EditPrecondition struct {
	Document string       `json:"document,omitzero"`
	Blocks   []BlockToken `json:"blocks,omitzero"`
}

// EditArtifactInput is the body of `POST /api/v1/artifacts/{id}/edits`.
type EditArtifactInput struct {
	Ops          []EditOp          `json:"ops"`
	Summary      string            `json:"summary,omitzero"`
	Precondition *EditPrecondition `json:"precondition,omitzero"`
	Actor        *Actor            `json:"actor,omitzero"`
}

// EditArtifactResponse is the answer of a document edit.
type EditArtifactResponse struct {
	Applied      int64          `json:"applied"`
	Version      *Version       `json:"version"`
	Changed      *bool          `json:"changed,omitzero"`
	UnchangedOps jsontext.Value `json:"unchanged_ops,omitzero"`
	LostOps      jsontext.Value `json:"lost_ops,omitzero"`
	Token        string         `json:"token,omitzero"`
	Advice       *WriteAdvice   `json:"advice,omitzero"`
}

// EditPreconditionMismatch is one mismatch of a `PRECONDITION_FAILED` answer.
type EditPreconditionMismatch struct {
	Scope    PreconditionScope `json:"scope"`
	BlockID  string            `json:"block_id,omitzero"`
	Expected string            `json:"expected"`
	Current  *string           `json:"current"`
}

// EditPreconditionCurrent is the `current` tokens of a `PRECONDITION_FAILED` answer.
type EditPreconditionCurrent struct {
	Document string       `json:"document"`
	Blocks   []BlockToken `json:"blocks"`
}

// ---- §9.7 Asks ----

// AskOption is one answer option (`{label, description?}`).
type AskOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitzero"`
}

// AskAnswer is a human's answer.
type AskAnswer struct {
	User     string   `json:"user"`
	Selected []string `json:"selected"`
	Text     *string  `json:"text"`
	At       string   `json:"at"`
}

// AskResolution is how an ask was retracted or resolved.
type AskResolution struct {
	Kind   AskResolutionKind `json:"kind"`
	Reason string            `json:"reason"`
	Actor  Actor             `json:"actor"`
	At     string            `json:"at"`
}

// AnchorArtifact is Ask.anchor_artifact: the document named by the anchor.
type AnchorArtifact struct {
	Project string `json:"project"`
	Slug    string `json:"slug"`
	Name    string `json:"name"`
	Primary bool   `json:"primary"`
}

// BlockArtifact is Ask.block_artifact: the document containing the ask block.
type BlockArtifact struct {
	ID      string `json:"id"`
	Slug    string `json:"slug"`
	Primary bool   `json:"primary"`
}

// AskIssue is the issue of an inbox row (`Ask.issue`).
type AskIssue struct {
	Key      string  `json:"key"`
	Title    string  `json:"title"`
	Assignee *string `json:"assignee"`
}

// DocumentRef names a project document (`{project, slug, name}`).
type DocumentRef struct {
	Project string `json:"project"`
	Slug    string `json:"slug"`
	Name    string `json:"name"`
}

// LastReply is the newest reply of an ask (`{author, created_at}`).
type LastReply struct {
	Author    Actor  `json:"author"`
	CreatedAt string `json:"created_at"`
}

// AskApproval is Ask.approval on approval asks.
type AskApproval struct {
	ArtifactID       string `json:"artifact_id"`
	Name             string `json:"name"`
	Version          int64  `json:"version"`
	RequestedVersion int64  `json:"requested_version"`
}

// Ask is a durable decision (also the payload of ask events).
type Ask struct {
	ID                string          `json:"id"`
	IssueKey          *string         `json:"issue_key"`
	ArtifactID        Opt[string]     `json:"artifact_id,omitzero"`
	BlockID           Opt[string]     `json:"block_id,omitzero"`
	AnchorArtifact    *AnchorArtifact `json:"anchor_artifact,omitzero"`
	BlockArtifact     *BlockArtifact  `json:"block_artifact,omitzero"`
	Author            Actor           `json:"author"`
	Kind              AskKind         `json:"kind"`
	Question          string          `json:"question"`
	Options           []AskOption     `json:"options"`
	Multiple          bool            `json:"multiple"`
	Urgency           AskUrgency      `json:"urgency"`
	Anchor            *Anchor         `json:"anchor"`
	State             AskState        `json:"state"`
	Answer            *AskAnswer      `json:"answer"`
	Resolution        *AskResolution  `json:"resolution,omitzero"`
	OpenedEventID     int64           `json:"opened_event_id"`
	CreatedAt         string          `json:"created_at"`
	EditedAt          *string         `json:"edited_at"`
	WaitingOn         AskTurn         `json:"waiting_on,omitzero"`
	Issue             *AskIssue       `json:"issue,omitzero"`
	Document          *DocumentRef    `json:"document,omitzero"`
	LastReply         Opt[LastReply]  `json:"last_reply,omitzero"`
	ReferencedByCount *int64          `json:"referenced_by_count,omitzero"`
	Approval          *AskApproval    `json:"approval,omitzero"`
}

// AskPrevious is the wording an ask edit replaced.
type AskPrevious struct {
	Question string      `json:"question"`
	Options  []AskOption `json:"options"`
	Multiple bool        `json:"multiple"`
	Urgency  AskUrgency  `json:"urgency"`
}

// AskEdit is one edit of an ask.
type AskEdit struct {
	Previous AskPrevious `json:"previous"`
	EditedBy Actor       `json:"edited_by"`
	At       string      `json:"at"`
}

// AskFollower is a session an ask's answer and replies reach.
type AskFollower struct {
	SessionID string `json:"session_id"`
	Since     string `json:"since"`
}

// AskRead is `GET /api/v1/asks/{id}`.
type AskRead struct {
	Ask       Ask           `json:"ask"`
	Replies   []Comment     `json:"replies"`
	Edits     []AskEdit     `json:"edits"`
	Followers []AskFollower `json:"followers"`
}

// IssueRef names an issue (`{key, title}`).
type IssueRef struct {
	Key   string `json:"key"`
	Title string `json:"title"`
}

// OpenAskOwner is `{issue:{key,title}}` or `{document:{project,slug,name}}`.
type OpenAskOwner struct {
	Issue    *IssueRef    `json:"issue,omitzero"`
	Document *DocumentRef `json:"document,omitzero"`
}

// OpenAsk is one row of `GET /api/v1/asks/open`.
type OpenAsk struct {
	ID           string         `json:"id"`
	Ref          string         `json:"ref"`
	Question     string         `json:"question"`
	Kind         AskKind        `json:"kind"`
	Urgency      AskUrgency     `json:"urgency"`
	CreatedAt    string         `json:"created_at"`
	AgeSeconds   int64          `json:"age_seconds"`
	Priority     *IssuePriority `json:"priority"`
	Owner        OpenAskOwner   `json:"owner"`
	HumanReplied bool           `json:"human_replied"`
	LastReply    *LastReply     `json:"last_reply"`
	WaitingOn    AskTurn        `json:"waiting_on"`
}

// OpenAsksResponse is `GET /api/v1/asks/open` (`dispatch_open_asks`), oldest first.
type OpenAsksResponse struct {
	SessionID      string    `json:"session_id"`
	AsOf           string    `json:"as_of"`
	OpenedSince    bool      `json:"opened_since"`
	Count          int64     `json:"count"`
	WaitingOnHuman int64     `json:"waiting_on_human"`
	WaitingOnAgent int64     `json:"waiting_on_agent"`
	Asks           []OpenAsk `json:"asks"`
}

// CreateAskInput is the body of `POST …/asks`.
type CreateAskInput struct {
	Question string       `json:"question"`
	Options  []AskOption  `json:"options,omitzero"`
	Multiple *bool        `json:"multiple,omitzero"`
	Urgency  AskUrgency   `json:"urgency,omitzero"`
	Anchor   *AnchorInput `json:"anchor,omitzero"`
	Actor    *Actor       `json:"actor,omitzero"`
}

// EditAskInput is the body of `PATCH /api/v1/asks/{id}`. A nil Options is absent; an empty
// non-nil slice is sent as `[]` (it replaces the options).
type EditAskInput struct {
	Question *string     `json:"question,omitzero"`
	Options  []AskOption `json:"options,omitzero"`
	Multiple *bool       `json:"multiple,omitzero"`
	Urgency  AskUrgency  `json:"urgency,omitzero"`
	Actor    *Actor      `json:"actor,omitzero"`
}

// ResolveAskInput is the body of `POST /api/v1/asks/{id}/resolve`.
type ResolveAskInput struct {
	Kind   AskResolutionKind `json:"kind"`
	Reason string            `json:"reason"`
	Actor  *Actor            `json:"actor,omitzero"`
}

// AnswerAskInput is a human's answer; ExpectedEditedAt is required (null when the ask was
// never edited): the ask revision the human reviewed.
type AnswerAskInput struct {
	Selected         []string `json:"selected"`
	Text             string   `json:"text,omitzero"`
	ExpectedEditedAt *string  `json:"expected_edited_at"`
}

// ---- §9.8 Comments and messages ----

// Suggestion is Comment.suggestion (`{replace_with, accepted: bool|null}`).
type Suggestion struct {
	ReplaceWith string `json:"replace_with"`
	Accepted    *bool  `json:"accepted"`
}

// CommentMention is one mention of a comment.
type CommentMention struct {
	Target    string             `json:"target"`
	Delivery  DeliveryCapability `json:"delivery"`
	SessionID *string            `json:"session_id"`
}

// CommentDelivery is one delivery attempt of a comment mention.
type CommentDelivery struct {
	CommentID    string             `json:"comment_id"`
	Target       string             `json:"target"`
	Attempt      int64              `json:"attempt"`
	Delivery     DeliveryCapability `json:"delivery"`
	SessionID    *string            `json:"session_id"`
	EnvelopeID   *string            `json:"envelope_id"`
	Duplicate    *bool              `json:"duplicate,omitzero"`
	State        DeliveryState      `json:"state"`
	Error        *string            `json:"error"`
	ResolveError *string            `json:"resolve_error"`
	ReplyID      *string            `json:"reply_id"`
	CreatedAt    string             `json:"created_at"`
}

// Comment is a comment, suggestion or ask reply.
type Comment struct {
	ID         string            `json:"id"`
	IssueKey   *string           `json:"issue_key"`
	ArtifactID Opt[string]       `json:"artifact_id,omitzero"`
	Author     Actor             `json:"author"`
	Body       string            `json:"body"`
	Anchor     *Anchor           `json:"anchor"`
	ReplyTo    *string           `json:"reply_to"`
	AskID      *string           `json:"ask_id"`
	Turn       *AskTurn          `json:"turn"`
	Resolved   bool              `json:"resolved"`
	ResolvedBy *Actor            `json:"resolved_by"`
	ResolvedAt *string           `json:"resolved_at"`
	EditedAt   *string           `json:"edited_at"`
	Suggestion *Suggestion       `json:"suggestion"`
	CreatedAt  string            `json:"created_at"`
	Mentions   []CommentMention  `json:"mentions"`
	Deliveries []CommentDelivery `json:"deliveries"`
}

// CommentRead is `GET /api/v1/comments/{id}`.
type CommentRead struct {
	Comment Comment   `json:"comment"`
	Replies []Comment `json:"replies"`
}

// CommentWriteResponse is a written Comment with the ask's turn after a reply.
type CommentWriteResponse struct {
	Comment
	AskWaitingOn AskTurn `json:"ask_waiting_on,omitzero"`
}

// MentionTarget is one entry of CreateCommentInput.mentions.
type MentionTarget struct {
	Target string `json:"target"`
}

// SuggestionInput is CreateCommentInput.suggestion.
type SuggestionInput struct {
	ReplaceWith string `json:"replace_with"`
}

// CreateCommentInput is the body of `POST …/comments`. Turn is valid only with AskID
// (otherwise `400 TURN_REQUIRES_ASK`). Body is nil only for a suggestion given without a
// rationale, which sends no `body` member (§8.6); a comment always sends its body.
type CreateCommentInput struct {
	Body       *string            `json:"body,omitzero"`
	Anchor     *AnchorInput       `json:"anchor,omitzero"`
	ReplyTo    string             `json:"reply_to,omitzero"`
	AskID      string             `json:"ask_id,omitzero"`
	Mentions   []MentionTarget    `json:"mentions,omitzero"`
	Delivery   DeliveryCapability `json:"delivery,omitzero"`
	Turn       AskTurn            `json:"turn,omitzero"`
	Suggestion *SuggestionInput   `json:"suggestion,omitzero"`
	Actor      *Actor             `json:"actor,omitzero"`
}

// MessageDelivery is one delivery attempt of a message.
type MessageDelivery struct {
	MessageID   string             `json:"message_id"`
	Attempt     int64              `json:"attempt"`
	Delivery    DeliveryCapability `json:"delivery"`
	SessionID   string             `json:"session_id"`
	EnvelopeID  *string            `json:"envelope_id"`
	Duplicate   *bool              `json:"duplicate,omitzero"`
	State       DeliveryState      `json:"state"`
	Error       *string            `json:"error"`
	ReplyID     *string            `json:"reply_id"`
	CreatedAt   string             `json:"created_at"`
	RequestedBy Opt[Actor]         `json:"requested_by,omitzero"`
	AcceptedAs  Opt[string]        `json:"accepted_as,omitzero"`
	AcceptedAt  Opt[string]        `json:"accepted_at,omitzero"`
}

// Message is an issue or agent-card message (IssueKey null for agent-card messages).
type Message struct {
	ID          string            `json:"id"`
	IssueKey    *string           `json:"issue_key"`
	Author      Actor             `json:"author"`
	Body        string            `json:"body"`
	Target      Opt[string]       `json:"target,omitzero"`
	InReplyTo   Opt[string]       `json:"in_reply_to,omitzero"`
	BroadcastID Opt[string]       `json:"broadcast_id,omitzero"`
	Deliveries  []MessageDelivery `json:"deliveries"`
	CreatedAt   string            `json:"created_at"`
}

// MessageRead is a message with its replies; agent-card message lists are []MessageRead.
// Unread is a read-state marker decoded leniently (kept raw).
type MessageRead struct {
	Message Message        `json:"message"`
	Replies []Message      `json:"replies"`
	Unread  jsontext.Value `json:"unread,omitzero"`
}

// CreateMessageInput is the body of `POST /api/v1/issues/{key}/messages`.
type CreateMessageInput struct {
	Body      string             `json:"body"`
	InReplyTo string             `json:"in_reply_to,omitzero"`
	Target    string             `json:"target,omitzero"`
	Delivery  DeliveryCapability `json:"delivery,omitzero"`
	Urgency   AskUrgency         `json:"urgency,omitzero"`
	Actor     *Actor             `json:"actor,omitzero"`
}

// ---- §9.9 Search and reference graph ----

// SearchOwner is `{kind:"issue", key, title, status}` or
// `{kind:"document", project, slug, artifact_id, name}`; it is always present on a hit and
// clients render from it.
type SearchOwner struct {
	Kind       SearchOwnerKind `json:"kind"`
	Key        string          `json:"key,omitzero"`
	Title      string          `json:"title,omitzero"`
	Status     IssueStatus     `json:"status,omitzero"`
	Project    string          `json:"project,omitzero"`
	Slug       string          `json:"slug,omitzero"`
	ArtifactID string          `json:"artifact_id,omitzero"`
	Name       string          `json:"name,omitzero"`
}

// SearchIssue is the legacy SearchResult.issue mirror of an issue owner; do not rely on it.
type SearchIssue struct {
	Key    string      `json:"key"`
	Title  string      `json:"title"`
	Status IssueStatus `json:"status"`
}

// SearchArtifact is SearchResult.artifact.
type SearchArtifact struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
}

// SearchResult is one search hit.
type SearchResult struct {
	Kind     SearchResultKind `json:"kind"`
	Owner    SearchOwner      `json:"owner"`
	Issue    *SearchIssue     `json:"issue,omitzero"`
	Artifact *SearchArtifact  `json:"artifact,omitzero"`
	ID       string           `json:"id"`
	Snippet  string           `json:"snippet"`
	Rank     float64          `json:"rank"`
	Href     string           `json:"href"`
}

// SearchResponse is `GET /api/v1/search`.
type SearchResponse struct {
	Results []SearchResult `json:"results"`
	TookMS  int64          `json:"took_ms"`
}

// GraphNode is one node of the reference graph.
type GraphNode struct {
	Kind     GraphNodeKind `json:"kind"`
	ID       string        `json:"id"`
	IssueKey string        `json:"issue_key,omitzero"`
	Project  string        `json:"project,omitzero"`
	Ref      string        `json:"ref,omitzero"`
}

// GraphExcerpt is the text around a mention.
type GraphExcerpt struct {
	BlockID string `json:"block_id,omitzero"`
	Text    string `json:"text"`
}

// GraphEdge is one edge of `GET /api/v1/references`.
type GraphEdge struct {
	Kind      GraphEdgeKind      `json:"kind"`
	Direction GraphEdgeDirection `json:"direction"`
	Node      GraphNode          `json:"node"`
	Excerpt   *GraphExcerpt      `json:"excerpt,omitzero"`
	CreatedAt string             `json:"created_at"`
	SourceSeq *int64             `json:"source_seq"`
}

// GraphReferences is `GET /api/v1/references`: edges newest first.
type GraphReferences struct {
	Node  GraphNode   `json:"node"`
	Edges []GraphEdge `json:"edges"`
}

// ---- §9.10 Events ----

// DispatchEvent is the event envelope; Payload is kept raw and decoded by Type.
type DispatchEvent struct {
	ID         int64          `json:"id"`
	IssueKey   *string        `json:"issue_key"`
	ArtifactID Opt[string]    `json:"artifact_id,omitzero"`
	Project    string         `json:"project,omitzero"`
	Seq        int64          `json:"seq"`
	Actor      Actor          `json:"actor"`
	Notify     bool           `json:"notify"`
	CreatedAt  string         `json:"created_at"`
	Type       string         `json:"type"`
	Payload    jsontext.Value `json:"payload"`
}

// ---- §9.11 Errors ----

// TargetCandidate is one candidate of an ambiguous edit target (`{from, to, context}`).
type TargetCandidate struct {
	From    int64  `json:"from"`
	To      int64  `json:"to"`
	Context string `json:"context"`
}

// ErrorBody is a Dispatch error answer: `{error?, code?, candidates?, current?, mismatches?}`.
// Candidates are DuplicateCandidate or TargetCandidate rows, kept raw.
type ErrorBody struct {
	Error      string                     `json:"error,omitzero"`
	Code       string                     `json:"code,omitzero"`
	Candidates jsontext.Value             `json:"candidates,omitzero"`
	Current    *EditPreconditionCurrent   `json:"current,omitzero"`
	Mismatches []EditPreconditionMismatch `json:"mismatches,omitzero"`
}

// The server error codes of §9.11; clients branch on the code, never on the HTTP status alone.
const (
	CodePossibleDuplicate          = "POSSIBLE_DUPLICATE"
	CodeParentInput                = "PARENT_INPUT"
	CodeExternalLinkTaken          = "EXTERNAL_LINK_TAKEN"
	CodeComponentsInput            = "COMPONENTS_INPUT"
	CodeInvalidStatus              = "INVALID_STATUS"
	CodeIssueClosed                = "ISSUE_CLOSED"
	CodeTurnRequiresAsk            = "TURN_REQUIRES_ASK"
	CodePreconditionFailed         = "PRECONDITION_FAILED"
	CodeInvalidPrecondition        = "INVALID_PRECONDITION"
	CodeInvalidOp                  = "INVALID_OP"
	CodeEditQueueFull              = "EDIT_QUEUE_FULL"
	CodeEditLostToConcurrentChange = "EDIT_LOST_TO_CONCURRENT_CHANGE"
	CodeInvalidAskBlock            = "INVALID_ASK_BLOCK"
	CodeDocServiceUnavailable      = "DOC_SERVICE_UNAVAILABLE"
	CodeDocumentUnloadable         = "DOCUMENT_UNLOADABLE"
	CodeDocSchema                  = "DOC_SCHEMA"
	CodeInternal                   = "INTERNAL"
	CodeSourceNotFound             = "SOURCE_NOT_FOUND"
	CodeInvalidQuery               = "INVALID_QUERY"
	CodeInvalidProject             = "INVALID_PROJECT"
	CodeInvalidLimit               = "INVALID_LIMIT"
	CodeCapExceeded                = "CAP_EXCEEDED"
	CodeBroadcastKeyReused         = "BROADCAST_KEY_REUSED"
	CodeIssueClaimed               = "ISSUE_CLAIMED"
	CodeClaimContended             = "CLAIM_CONTENDED"
	// CodeHTTPPrefix starts the fallback code `HTTP_<status>` used when an error body has no
	// code.
	CodeHTTPPrefix = "HTTP_"
)
