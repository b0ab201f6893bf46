package dispatch

import (
	"regexp"
	"slices"
	"time"
)

// This file defines every shared constant of dispatch-tools.md §1 exactly once. Each value is
// spelled in one constant declaration and each list once, as an unexported array of those
// constants; the exported functions return fresh copies so no caller can alter a list. Tools,
// API types and any client refer to these names and never spell a value again.

// IssueStatus is one of ISSUE_STATUSES (`Issue.status`, `dispatch_issue_update.status`,
// `dispatch_issues.status`).
type IssueStatus string

// ISSUE_STATUSES, in lifecycle order; mirrors the server's status list exactly.
const (
	StatusTriage      IssueStatus = "triage"
	StatusIcebox      IssueStatus = "icebox"
	StatusBacklog     IssueStatus = "backlog"
	StatusTodo        IssueStatus = "todo"
	StatusInProgress  IssueStatus = "in_progress"
	StatusTesting     IssueStatus = "testing"
	StatusNeedsReview IssueStatus = "needs_review"
	StatusRetro       IssueStatus = "retro"
	StatusDone        IssueStatus = "done"
)

var issueStatuses = [...]IssueStatus{StatusTriage, StatusIcebox, StatusBacklog, StatusTodo,
	StatusInProgress, StatusTesting, StatusNeedsReview, StatusRetro, StatusDone}

// IssueStatuses returns ISSUE_STATUSES in lifecycle order.
func IssueStatuses() []IssueStatus { return slices.Clone(issueStatuses[:]) }

// Valid reports whether s is one of ISSUE_STATUSES.
func (s IssueStatus) Valid() bool { return slices.Contains(issueStatuses[:], s) }

// AskUrgency is one of ASK_URGENCIES (`dispatch_ask.urgency`, `Ask.urgency`).
type AskUrgency string

// ASK_URGENCIES, in ascending urgency.
const (
	UrgencyLow      AskUrgency = "low"
	UrgencyMed      AskUrgency = "med"
	UrgencyHigh     AskUrgency = "high"
	UrgencyBlocking AskUrgency = "blocking"
)

var askUrgencies = [...]AskUrgency{UrgencyLow, UrgencyMed, UrgencyHigh, UrgencyBlocking}

// AskUrgencies returns ASK_URGENCIES in ascending urgency.
func AskUrgencies() []AskUrgency { return slices.Clone(askUrgencies[:]) }

// Valid reports whether u is one of ASK_URGENCIES.
func (u AskUrgency) Valid() bool { return slices.Contains(askUrgencies[:], u) }

// AskQuestionMax is ASK_QUESTION_MAX: the maximum length (UTF-16 code units) of an ask question.
const AskQuestionMax = 800

// DocEditOp is one of DOC_EDIT_OPS (`dispatch_doc_edit.ops[].op`, `EditOp.op`).
type DocEditOp string

// DOC_EDIT_OPS.
const (
	OpReplace      DocEditOp = "replace"
	OpDelete       DocEditOp = "delete"
	OpInsert       DocEditOp = "insert"
	OpRetype       DocEditOp = "retype"
	OpMove         DocEditOp = "move"
	OpDeleteRow    DocEditOp = "delete_row"
	OpDeleteColumn DocEditOp = "delete_column"
)

var docEditOps = [...]DocEditOp{OpReplace, OpDelete, OpInsert, OpRetype, OpMove, OpDeleteRow, OpDeleteColumn}

// DocEditOps returns DOC_EDIT_OPS.
func DocEditOps() []DocEditOp { return slices.Clone(docEditOps[:]) }

// Valid reports whether op is one of DOC_EDIT_OPS.
func (op DocEditOp) Valid() bool { return slices.Contains(docEditOps[:], op) }

// SpecSection is one of SPEC_SECTIONS, the spec-writing section order named by the
// `dispatch_issue.spec` argument and the `dispatch_doc_edit` descriptions.
type SpecSection string

// SPEC_SECTIONS, in spec-writing order.
const (
	SectionSummary      SpecSection = "Summary"
	SectionNewSince     SpecSection = "New since we talked"
	SectionAcceptance   SpecSection = "Acceptance"
	SectionRequirements SpecSection = "Requirements"
	SectionDesign       SpecSection = "Design"
	SectionErrors       SpecSection = "Errors"
	SectionTesting      SpecSection = "Testing"
	SectionRejected     SpecSection = "Rejected"
)

var specSections = [...]SpecSection{SectionSummary, SectionNewSince, SectionAcceptance,
	SectionRequirements, SectionDesign, SectionErrors, SectionTesting, SectionRejected}

// SpecSections returns SPEC_SECTIONS in order.
func SpecSections() []SpecSection { return slices.Clone(specSections[:]) }

// IssueComponentsMode is one of ISSUE_COMPONENTS_MODES (`components.mode`).
type IssueComponentsMode string

// ISSUE_COMPONENTS_MODES.
const (
	ComponentsInherit  IssueComponentsMode = "inherit"
	ComponentsExplicit IssueComponentsMode = "explicit"
	ComponentsNone     IssueComponentsMode = "none"
)

var issueComponentsModes = [...]IssueComponentsMode{ComponentsInherit, ComponentsExplicit, ComponentsNone}

// IssueComponentsModes returns ISSUE_COMPONENTS_MODES.
func IssueComponentsModes() []IssueComponentsMode { return slices.Clone(issueComponentsModes[:]) }

// Valid reports whether m is one of ISSUE_COMPONENTS_MODES.
func (m IssueComponentsMode) Valid() bool { return slices.Contains(issueComponentsModes[:], m) }

// DeliveryCapability is one of DELIVERY_CAPABILITIES (MessageDeliveryMode): a delivery mode a
// session advertises to the Envoy listener.
type DeliveryCapability string

// MessageDeliveryMode is the same closed list as [DeliveryCapability] (§9.3).
type MessageDeliveryMode = DeliveryCapability

// DELIVERY_CAPABILITIES: the one closed list of delivery modes. A new mode is added here before
// any server, adapter or UI accepts it.
const (
	DeliveryAside DeliveryCapability = "aside"
	DeliveryBtw   DeliveryCapability = "btw"
	DeliverySteer DeliveryCapability = "steer"
)

var deliveryCapabilities = [...]DeliveryCapability{DeliveryAside, DeliveryBtw, DeliverySteer}

// DeliveryCapabilities returns DELIVERY_CAPABILITIES.
func DeliveryCapabilities() []DeliveryCapability { return slices.Clone(deliveryCapabilities[:]) }

// Valid reports whether d is one of DELIVERY_CAPABILITIES.
func (d DeliveryCapability) Valid() bool { return slices.Contains(deliveryCapabilities[:], d) }

// AskTurn is one of ASK_TURNS: whose move an open ask awaits (`Ask.waiting_on`, `Comment.turn`).
type AskTurn string

// ASK_TURNS.
const (
	TurnHuman AskTurn = "human"
	TurnAgent AskTurn = "agent"
)

var askTurns = [...]AskTurn{TurnHuman, TurnAgent}

// AskTurns returns ASK_TURNS in the order `human`, `agent`. (The `dispatch_comment.turn` enum
// lists the same two constants in the order `agent`, `human`, §6.8.)
func AskTurns() []AskTurn { return slices.Clone(askTurns[:]) }

// Valid reports whether t is one of ASK_TURNS.
func (t AskTurn) Valid() bool { return slices.Contains(askTurns[:], t) }

// AskKind is an ask's `kind`. Clients create only questions; approvals are server-created.
// Inbound values outside the list are tolerated (§9.1).
type AskKind string

// The ask kinds.
const (
	AskKindQuestion AskKind = "question"
	AskKindApproval AskKind = "approval"
)

var askKinds = [...]AskKind{AskKindQuestion, AskKindApproval}

// AskKinds returns the ask kinds.
func AskKinds() []AskKind { return slices.Clone(askKinds[:]) }

// AskResolutionKind is how an ask was closed without an answer (`dispatch_resolve_ask.kind`,
// `AskResolution.kind`).
type AskResolutionKind string

// The ask resolution kinds.
const (
	ResolutionRetracted AskResolutionKind = "retracted"
	ResolutionResolved  AskResolutionKind = "resolved"
)

var askResolutionKinds = [...]AskResolutionKind{ResolutionRetracted, ResolutionResolved}

// AskResolutionKinds returns the ask resolution kinds.
func AskResolutionKinds() []AskResolutionKind { return slices.Clone(askResolutionKinds[:]) }

// FollowAction is `dispatch_follow.action`.
type FollowAction string

// The follow actions.
const (
	ActionFollow   FollowAction = "follow"
	ActionUnfollow FollowAction = "unfollow"
)

var followActions = [...]FollowAction{ActionFollow, ActionUnfollow}

// FollowActions returns the follow actions.
func FollowActions() []FollowAction { return slices.Clone(followActions[:]) }

// GraphEdgeKind is the kind of a reference-graph edge (`GraphEdge.kind`).
type GraphEdgeKind string

// The graph edge kinds.
const (
	EdgeMentions   GraphEdgeKind = "mentions"
	EdgeChildOf    GraphEdgeKind = "child_of"
	EdgeAttachedTo GraphEdgeKind = "attached_to"
	EdgeAnchoredTo GraphEdgeKind = "anchored_to"
	EdgeOwnedBy    GraphEdgeKind = "owned_by"
	EdgeRepliesTo  GraphEdgeKind = "replies_to"
	EdgeFollowedBy GraphEdgeKind = "followed_by"
	EdgePartOf     GraphEdgeKind = "part_of"
	EdgeDependsOn  GraphEdgeKind = "depends_on"
	EdgeAffects    GraphEdgeKind = "affects"
)

var graphEdgeKinds = [...]GraphEdgeKind{EdgeMentions, EdgeChildOf, EdgeAttachedTo, EdgeAnchoredTo,
	EdgeOwnedBy, EdgeRepliesTo, EdgeFollowedBy, EdgePartOf, EdgeDependsOn, EdgeAffects}

// GraphEdgeKinds returns the graph edge kinds.
func GraphEdgeKinds() []GraphEdgeKind { return slices.Clone(graphEdgeKinds[:]) }

// SearchResultKind is the kind of a search hit (`SearchResult.kind`).
type SearchResultKind string

// The search result kinds.
const (
	ResultIssue    SearchResultKind = "issue"
	ResultDocument SearchResultKind = "document"
	ResultComment  SearchResultKind = "comment"
	ResultAsk      SearchResultKind = "ask"
	ResultMessage  SearchResultKind = "message"
)

var searchResultKinds = [...]SearchResultKind{ResultIssue, ResultDocument, ResultComment, ResultAsk, ResultMessage}

// SearchResultKinds returns the search result kinds.
func SearchResultKinds() []SearchResultKind { return slices.Clone(searchResultKinds[:]) }

// IssuePriority is `0|1|2|3`: 0 = P0 (highest) … 3 = P3 (lowest).
type IssuePriority int64

// The bounds of IssuePriority (`dispatch_issue.priority`).
const (
	PriorityHighest IssuePriority = 0
	PriorityLowest  IssuePriority = 3
)

// Numeric and pattern limits of §1.
const (
	// DispatchBodyMax is DISPATCH_BODY_MAX: the maximum length of comment, suggestion and
	// message bodies.
	DispatchBodyMax = 2000
	// ProjectKeyPattern is PROJECT_KEY_PATTERN.
	ProjectKeyPattern = `^[A-Z][A-Z0-9]{1,9}$`
	// MaxIssuePageLimit is MAX_ISSUE_PAGE_LIMIT (`dispatch_issues.limit` maximum).
	MaxIssuePageLimit = 250
	// DefaultIssuePageLimit is DEFAULT_ISSUE_PAGE_LIMIT (`dispatch_issues.limit` default).
	DefaultIssuePageLimit = 50
	// SearchLimitMin, SearchLimitMax and SearchLimitDefault bound `dispatch_search.limit`.
	SearchLimitMin     = 1
	SearchLimitMax     = 50
	SearchLimitDefault = 20
	// SearchQueryMin is the minimum length of `dispatch_search.query`.
	SearchQueryMin = 2
	// AskOptionsMax is the maximum number of ask options.
	AskOptionsMax = 8
	// IssueLabelsMax is the maximum number of issue labels; each label is IssueLabelMinLen to
	// IssueLabelMaxLen long.
	IssueLabelsMax   = 20
	IssueLabelMinLen = 1
	IssueLabelMaxLen = 40
	// ComponentIDsMin and ComponentIDsMax bound `components.ids`; each id is at least
	// ComponentIDMinLen long.
	ComponentIDsMin   = 1
	ComponentIDsMax   = 50
	ComponentIDMinLen = 1
	// ArtifactUploadMax is the largest artifact upload in bytes (25 MiB), `dispatch_artifact`.
	ArtifactUploadMax = 26214400
	// MaxBroadcastRecipients is MAX_BROADCAST_RECIPIENTS, a server limit (types only).
	MaxBroadcastRecipients = 100
	// DeliveryDuplicateWindowMS is DELIVERY_DUPLICATE_WINDOW_MS (72 h).
	DeliveryDuplicateWindowMS = 259200000
	// ReceiptTimeoutCause is RECEIPT_TIMEOUT_CAUSE.
	ReceiptTimeoutCause = "The listener didn't answer within the send window; the message may already have been delivered."
	// RequestDeadline is the deadline of every HTTP request to Dispatch (§8.1).
	RequestDeadline = 60 * time.Second
)

// ProjectKeyRE is PROJECT_KEY_PATTERN compiled.
var ProjectKeyRE = regexp.MustCompile(ProjectKeyPattern)

// ArtifactReviewState is the review state an approval ask records (§9.3).
type ArtifactReviewState string

// The artifact review states.
const (
	ReviewApproved         ArtifactReviewState = "approved"
	ReviewChangesRequested ArtifactReviewState = "changes_requested"
)

// ArchitectureTreeAttachment tells how an issue row is attached to a component (§9.5).
type ArchitectureTreeAttachment string

// The architecture tree attachments.
const (
	AttachedDirect    ArchitectureTreeAttachment = "direct"
	AttachedInherited ArchitectureTreeAttachment = "inherited"
	AttachedContained ArchitectureTreeAttachment = "contained"
)

// ActorKind is `Actor.kind`.
type ActorKind string

// The actor kinds (§9.2).
const (
	ActorUser    ActorKind = "user"
	ActorSession ActorKind = "session"
	ActorSystem  ActorKind = "system"
)

// AskState is `Ask.state`.
type AskState string

// The ask states (§9.7).
const (
	AskOpen     AskState = "open"
	AskAnswered AskState = "answered"
	AskResolved AskState = "resolved"
)

// ArtifactKind is `Artifact.kind`.
type ArtifactKind string

// The artifact kinds (§9.6).
const (
	ArtifactDoc   ArtifactKind = "doc"
	ArtifactImage ArtifactKind = "image"
	ArtifactFile  ArtifactKind = "file"
)

// ArtifactApprovalState is `ArtifactApproval.state`.
type ArtifactApprovalState string

// The artifact approval states (§9.6).
const (
	ApprovalDraft            ArtifactApprovalState = "draft"
	ApprovalAwaiting         ArtifactApprovalState = "awaiting"
	ApprovalApproved         ArtifactApprovalState = "approved"
	ApprovalStale            ArtifactApprovalState = "stale"
	ApprovalChangesRequested ArtifactApprovalState = "changes_requested"
)

// DeliveryState is the state of a comment or message delivery attempt.
type DeliveryState string

// The delivery states (§9.8).
const (
	DeliveryPending DeliveryState = "pending"
	DeliverySent    DeliveryState = "sent"
	DeliveryFailed  DeliveryState = "failed"
)

// GraphNodeKind is `GraphNode.kind`.
type GraphNodeKind string

// The graph node kinds (§9.9).
const (
	NodeIssue     GraphNodeKind = "issue"
	NodeArtifact  GraphNodeKind = "artifact"
	NodeAsk       GraphNodeKind = "ask"
	NodeComment   GraphNodeKind = "comment"
	NodeMessage   GraphNodeKind = "message"
	NodeSession   GraphNodeKind = "session"
	NodeComponent GraphNodeKind = "component"
)

// GraphEdgeDirection is `GraphEdge.direction`: `in` points at the queried node.
type GraphEdgeDirection string

// The graph edge directions.
const (
	DirectionIn  GraphEdgeDirection = "in"
	DirectionOut GraphEdgeDirection = "out"
)

// PreconditionScope is `EditPreconditionMismatch.scope`.
type PreconditionScope string

// The precondition scopes (§9.6).
const (
	ScopeDocument PreconditionScope = "document"
	ScopeBlock    PreconditionScope = "block"
)

// WhoamiKind is `WhoamiResponse.kind`.
type WhoamiKind string

// The whoami kinds (§9.2).
const (
	WhoamiUser  WhoamiKind = "user"
	WhoamiAgent WhoamiKind = "agent"
)

// SearchOwnerKind is `SearchOwner.kind`.
type SearchOwnerKind string

// The search owner kinds (§9.9).
const (
	OwnerIssue    SearchOwnerKind = "issue"
	OwnerDocument SearchOwnerKind = "document"
)

// ClaimReason is the `reason` of `issue.claimed` and `issue.released` payloads (§9.10).
type ClaimReason string

// The claim reasons.
const (
	ClaimClaimed  ClaimReason = "claimed"
	ClaimTakeover ClaimReason = "takeover"
	ClaimForced   ClaimReason = "forced"
	ClaimReleased ClaimReason = "released"
	ClaimClosed   ClaimReason = "closed"
)

// AcceptedAsUserTurn is the only `accepted_as` value of a message delivery (§9.8).
const AcceptedAsUserTurn = "user_turn"

// enumStrings converts a list of string constants for the enum builder.
func enumStrings[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}
