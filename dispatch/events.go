package dispatch

import (
	"math"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/go-json-experiment/json/jsontext"
)

// This file holds the Dispatch events of dispatch-tools.md §9.10: the event types, their
// payload types and the inbound parsing rules for bus frames, which are untrusted.

// EventType is a DispatchEvent `type`.
type EventType string

// The event types of §9.10.
const (
	EventProjectCreated              EventType = "project.created"
	EventProjectUpdated              EventType = "project.updated"
	EventRepoProjectUpdated          EventType = "settings.repo_project.updated"
	EventArchitectureSourceUpdated   EventType = "settings.architecture_source.updated"
	EventArchitectureSynced          EventType = "architecture.synced"
	EventArchitectureSyncFailed      EventType = "architecture.sync_failed"
	EventUserStateUpdated            EventType = "user_state.updated"
	EventUserAgentStateUpdated       EventType = "user_agent_state.updated"
	EventIssueCreated                EventType = "issue.created"
	EventIssueUpdated                EventType = "issue.updated"
	EventIssueClosed                 EventType = "issue.closed"
	EventIssueClaimed                EventType = "issue.claimed"
	EventIssueReleased               EventType = "issue.released"
	EventArtifactCreated             EventType = "artifact.created"
	EventArtifactVersion             EventType = "artifact.version"
	EventArtifactApproved            EventType = "artifact.approved"
	EventArtifactChangesRequested    EventType = "artifact.changes_requested"
	EventAskOpened                   EventType = "ask.opened"
	EventAskAnchorRefreshed          EventType = "ask.anchor_refreshed"
	EventAskAnswered                 EventType = "ask.answered"
	EventAskHandedBack               EventType = "ask.handed_back"
	EventAskEdited                   EventType = "ask.edited"
	EventAskResolved                 EventType = "ask.resolved"
	EventAskFollowerAdded            EventType = "ask.follower_added"
	EventAskFollowerRemoved          EventType = "ask.follower_removed"
	EventBlockRepaired               EventType = "block.repaired"
	EventBlockInvalid                EventType = "block.invalid"
	EventCommentCreated              EventType = "comment.created"
	EventCommentAnchorRefreshed      EventType = "comment.anchor_refreshed"
	EventCommentAnswered             EventType = "comment.answered"
	EventCommentResolved             EventType = "comment.resolved"
	EventCommentReopened             EventType = "comment.reopened"
	EventCommentEdited               EventType = "comment.edited"
	EventSuggestionAccepted          EventType = "suggestion.accepted"
	EventSuggestionRejected          EventType = "suggestion.rejected"
	EventCommentDelivery             EventType = "comment.delivery"
	EventMessageCreated              EventType = "message.created"
	EventMessageAnswered             EventType = "message.answered"
	EventMessageDelivery             EventType = "message.delivery"
	EventMessageAccepted             EventType = "message.accepted"
	EventChildStatus                 EventType = "child.status"
	EventChildAdded                  EventType = "child.added"
	EventChildRemoved                EventType = "child.removed"
	EventSubscriptionRemoveRequested EventType = "subscription.remove_requested"
	EventSubscriptionRemoved         EventType = "subscription.removed"
)

// askPayloadEvents carry an Ask payload (§9.10); ask.edited has its own rule.
var askPayloadEvents = map[EventType]bool{
	EventAskOpened: true, EventAskAnchorRefreshed: true, EventAskAnswered: true,
	EventAskHandedBack: true, EventAskResolved: true,
}

// commentPayloadEvents carry a Comment payload.
var commentPayloadEvents = map[EventType]bool{
	EventCommentCreated: true, EventCommentAnchorRefreshed: true, EventCommentAnswered: true,
	EventCommentResolved: true, EventCommentReopened: true, EventCommentEdited: true,
	EventSuggestionAccepted: true, EventSuggestionRejected: true,
}

// IssueTopic is the subject an issue's events are published on: notifications.dispatch.issue.<KEY>.<type>.
func IssueTopic(key string, t EventType) string {
	return "notifications.dispatch.issue." + key + "." + string(t)
}

// DocumentTopic is the subject a project document's events are published on:
// notifications.dispatch.document.<PROJECT>.<slug>.<type>.
func DocumentTopic(project, slug string, t EventType) string {
	return "notifications.dispatch.document." + project + "." + slug + "." + string(t)
}

// EventError is an inbound event refused by the parsing rules of §9.10.
type EventError struct{ Message string }

func (e *EventError) Error() string { return e.Message }

func eventErr(format string) error { return &EventError{Message: "dispatch event: " + format} }

// Event is an inbound DispatchEvent: the typed envelope and, in Raw, the frame as received with
// every unknown member kept.
type Event struct {
	DispatchEvent
	Raw *jsonvalue.Object
}

// ParseEvent parses an untrusted bus frame (§9.10): strict JSON, then the envelope rule — only
// `issue_key` (string or null), `type` (string), `actor` (an object with a string `kind` and an
// optional string `id`) and `payload` (an object) are required; other members are taken when
// they have their documented type and kept in Raw in any case — and the payload rules of the
// event's type ([ValidateEventPayload]).
func ParseEvent(data []byte) (*Event, error) {
	o, err := jsonvalue.ParseObject(data, "event")
	if err != nil {
		return nil, err
	}
	var e Event
	e.Raw = o
	ik, ok := o.Get("issue_key")
	switch x := ik.(type) {
	case string:
		e.IssueKey = &x
	case nil:
		if !ok {
			return nil, eventErr("issue_key is required")
		}
	default:
		return nil, eventErr("issue_key must be a string or null")
	}
	t, _ := o.Get("type")
	typ, ok := t.(string)
	if !ok {
		return nil, eventErr("type must be a string")
	}
	e.Type = typ
	av, _ := o.Get("actor")
	actor, ok := av.(*jsonvalue.Object)
	if !ok {
		return nil, eventErr("actor must be an object")
	}
	kind, ok := stringMember(actor, "kind")
	if !ok {
		return nil, eventErr("actor.kind must be a string")
	}
	e.Actor.Kind = ActorKind(kind)
	if v, has := actor.Get("id"); has {
		id, isStr := v.(string)
		if !isStr {
			return nil, eventErr("actor.id must be a string")
		}
		e.Actor.ID = id
	}
	if err := decodeValue(actor, &e.Actor); err != nil {
		// A frame whose actor carries mistyped optional members keeps kind and id only.
		e.Actor = Actor{Kind: ActorKind(kind), ID: e.Actor.ID}
	}
	pv, _ := o.Get("payload")
	payload, ok := pv.(*jsonvalue.Object)
	if !ok {
		return nil, eventErr("payload must be an object")
	}
	e.Payload = jsontext.Value(jsonvalue.AppendEncoded(nil, payload))
	if n, ok := intMember(o, "id"); ok {
		e.ID = n
	}
	if n, ok := intMember(o, "seq"); ok {
		e.Seq = n
	}
	if b, ok := o.Get("notify"); ok {
		e.Notify, _ = b.(bool)
	}
	e.CreatedAt, _ = stringMember(o, "created_at")
	e.Project, _ = stringMember(o, "project")
	if v, ok := o.Get("artifact_id"); ok {
		switch x := v.(type) {
		case string:
			e.ArtifactID = Some(x)
		case nil:
			e.ArtifactID = Null[string]()
		}
	}
	if err := ValidateEventPayload(EventType(typ), payload); err != nil {
		return nil, err
	}
	return &e, nil
}

// ValidateEventPayload applies the payload rules of §9.10 for an event type:
//   - Ask payloads other than ask.edited carry a positive integer opened_event_id and carry
//     neither previous nor edited_by;
//   - ask.edited carries multiple, urgency, previous (question, options, multiple, urgency) and
//     edited_by;
//   - ask options arrive as an array;
//   - every delivery mode (message.delivery and comment.delivery `delivery`, comment `mentions`
//     and comment or message `deliveries`) is one of DELIVERY_CAPABILITIES.
func ValidateEventPayload(t EventType, p *jsonvalue.Object) error {
	switch {
	case askPayloadEvents[t]:
		if v, ok := p.Get("opened_event_id"); !ok || !positiveInteger(v) {
			return eventErr(string(t) + " payload.opened_event_id must be a positive integer")
		}
		if p.Has("previous") || p.Has("edited_by") {
			return eventErr(string(t) + " payload must not carry previous or edited_by")
		}
		return askOptions(t, p, "payload.options")
	case t == EventAskEdited:
		if v, _ := p.Get("multiple"); !isBoolValue(v) {
			return eventErr("ask.edited payload.multiple must be a boolean")
		}
		if _, ok := stringMember(p, "urgency"); !ok {
			return eventErr("ask.edited payload.urgency must be a string")
		}
		pv, _ := p.Get("previous")
		prev, ok := pv.(*jsonvalue.Object)
		if !ok {
			return eventErr("ask.edited payload.previous must be an object")
		}
		if _, ok := stringMember(prev, "question"); !ok {
			return eventErr("ask.edited payload.previous.question must be a string")
		}
		if v, _ := prev.Get("options"); !isArrayValue(v) {
			return eventErr("ask.edited payload.previous.options must be an array")
		}
		if v, _ := prev.Get("multiple"); !isBoolValue(v) {
			return eventErr("ask.edited payload.previous.multiple must be a boolean")
		}
		if _, ok := stringMember(prev, "urgency"); !ok {
			return eventErr("ask.edited payload.previous.urgency must be a string")
		}
		if eb, _ := p.Get("edited_by"); !isObjectValue(eb) {
			return eventErr("ask.edited payload.edited_by must be an object")
		}
		return askOptions(t, p, "payload.options")
	case t == EventMessageDelivery || t == EventCommentDelivery:
		return deliveryMode(t, p, "delivery", "payload.delivery", true)
	case commentPayloadEvents[t]:
		if err := deliveryList(t, p, "mentions"); err != nil {
			return err
		}
		return deliveryList(t, p, "deliveries")
	case t == EventMessageCreated || t == EventMessageAnswered:
		return deliveryList(t, p, "deliveries")
	}
	return nil
}

func askOptions(t EventType, p *jsonvalue.Object, path string) error {
	if v, ok := p.Get("options"); ok {
		if _, isArr := v.([]any); !isArr {
			return eventErr(string(t) + " " + path + " must be an array")
		}
	}
	return nil
}

// deliveryMode checks one delivery member against DELIVERY_CAPABILITIES.
func deliveryMode(t EventType, o *jsonvalue.Object, key, path string, required bool) error {
	v, ok := o.Get(key)
	if !ok && !required {
		return nil
	}
	s, isStr := v.(string)
	if !isStr || !DeliveryCapability(s).Valid() {
		return eventErr(string(t) + " " + path + " must be one of " +
			strings.Join(enumStrings(deliveryCapabilities[:]), "|") + "; got " + string(jsonvalue.AppendEncoded(nil, v)))
	}
	return nil
}

// deliveryList checks the delivery of every entry of an optional array member.
func deliveryList(t EventType, p *jsonvalue.Object, key string) error {
	v, ok := p.Get(key)
	if !ok {
		return nil
	}
	list, isArr := v.([]any)
	if !isArr {
		return eventErr(string(t) + " payload." + key + " must be an array")
	}
	for i, e := range list {
		entry, isObj := e.(*jsonvalue.Object)
		if !isObj {
			return eventErr(string(t) + " payload." + key + "." + itoa(i) + " must be an object")
		}
		if err := deliveryMode(t, entry, "delivery", "payload."+key+"."+itoa(i)+".delivery", true); err != nil {
			return err
		}
	}
	return nil
}

func itoa(i int) string { return string(jsonvalue.AppendNumber(nil, float64(i))) }

func stringMember(o *jsonvalue.Object, key string) (string, bool) {
	v, _ := o.Get(key)
	s, ok := v.(string)
	return s, ok
}

func intMember(o *jsonvalue.Object, key string) (int64, bool) {
	v, _ := o.Get(key)
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > jsonvalue.MaxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

func positiveInteger(v any) bool {
	f, ok := v.(float64)
	return ok && f >= 1 && f == math.Trunc(f) && f <= jsonvalue.MaxSafeInteger
}

func isBoolValue(v any) bool { _, ok := v.(bool); return ok }

func isArrayValue(v any) bool { _, ok := v.([]any); return ok }

func isObjectValue(v any) bool { o, ok := v.(*jsonvalue.Object); return ok && o != nil }

func decodeValue(v any, out any) error { return Decode(jsonvalue.AppendEncoded(nil, v), out) }

// DecodePayload decodes the event's payload into the type of §9.10 for its event type (for
// example *AskEventPayload for ask.opened, *ChildEventPayload for child.added). An event type
// this package does not know is returned as the raw payload (jsontext.Value).
func (e *Event) DecodePayload() (any, error) {
	var out any
	t := EventType(e.Type)
	switch {
	case t == EventProjectCreated || t == EventProjectUpdated:
		out = new(Project)
	case t == EventRepoProjectUpdated:
		out = new(RepoProjectSettingPayload)
	case t == EventArchitectureSourceUpdated:
		out = new(ArchitectureSourceSettingPayload)
	case t == EventArchitectureSynced:
		out = new(ArchitectureSyncedPayload)
	case t == EventArchitectureSyncFailed:
		out = new(ArchitectureSyncFailedPayload)
	case t == EventUserStateUpdated:
		out = new(UserStatePayload)
	case t == EventUserAgentStateUpdated:
		out = new(UserAgentStatePayload)
	case t == EventIssueCreated || t == EventIssueUpdated || t == EventIssueClosed:
		out = new(IssueEventPayload)
	case t == EventIssueClaimed || t == EventIssueReleased:
		out = new(IssueClaimEventPayload)
	case t == EventArtifactCreated:
		out = new(ArtifactCreatedPayload)
	case t == EventArtifactVersion:
		out = new(ArtifactVersionPayload)
	case t == EventArtifactApproved || t == EventArtifactChangesRequested:
		out = new(ArtifactReviewPayload)
	case askPayloadEvents[t] || t == EventAskEdited:
		out = new(AskEventPayload)
	case t == EventAskFollowerAdded || t == EventAskFollowerRemoved:
		out = new(AskFollowerEventPayload)
	case t == EventBlockRepaired || t == EventBlockInvalid:
		out = new(BlockEventPayload)
	case commentPayloadEvents[t]:
		out = new(CommentEventPayload)
	case t == EventCommentDelivery:
		out = new(CommentDeliveryEventPayload)
	case t == EventMessageCreated || t == EventMessageAnswered:
		out = new(MessageEventPayload)
	case t == EventMessageDelivery:
		out = new(MessageDeliveryEventPayload)
	case t == EventMessageAccepted:
		out = new(MessageAcceptedPayload)
	case t == EventChildStatus:
		out = new(ChildStatusPayload)
	case t == EventChildAdded || t == EventChildRemoved:
		out = new(ChildEventPayload)
	case t == EventSubscriptionRemoveRequested:
		out = new(SubscriptionRemoveRequestedPayload)
	case t == EventSubscriptionRemoved:
		out = new(SubscriptionRemovedPayload)
	default:
		return e.Payload, nil
	}
	if err := Decode(e.Payload, out); err != nil {
		return nil, &EventError{Message: "dispatch event: " + e.Type + " payload: " + err.Error()}
	}
	return out, nil
}

// RepoProjectMapping is a repository-to-project mapping.
type RepoProjectMapping struct {
	Repo      string `json:"repo"`
	Project   string `json:"project"`
	CreatedBy Actor  `json:"created_by"`
	CreatedAt string `json:"created_at"`
}

// RepoProjectSettingPayload is the settings.repo_project.updated payload.
type RepoProjectSettingPayload struct {
	Mapping RepoProjectMapping `json:"mapping"`
	Deleted bool               `json:"deleted"`
}

// ArchitectureSourceSettingPayload is the settings.architecture_source.updated payload.
type ArchitectureSourceSettingPayload struct {
	Source  ArchitectureSource `json:"source"`
	Deleted bool               `json:"deleted"`
}

// ArchitectureSyncedPayload is the architecture.synced payload.
type ArchitectureSyncedPayload struct {
	Commit     string `json:"commit"`
	Components int64  `json:"components"`
}

// ArchitectureSyncFailedPayload is the architecture.sync_failed payload (the previous model
// stays up).
type ArchitectureSyncFailedPayload struct {
	Error string `json:"error"`
}

// UserState is UserStatePayload.state; its members' shapes are the server's and kept raw.
type UserState struct {
	Pinned      jsontext.Value `json:"pinned"`
	LastReadSeq jsontext.Value `json:"last_read_seq"`
	Dismissed   jsontext.Value `json:"dismissed"`
}

// UserStatePayload is the user_state.updated payload.
type UserStatePayload struct {
	Login string    `json:"login"`
	State UserState `json:"state"`
}

// UserAgentStatePayload is the user_agent_state.updated payload.
type UserAgentStatePayload struct {
	Login     string `json:"login"`
	SessionID string `json:"session_id"`
}

// IssueEventPayload is the issue.created, issue.updated and issue.closed payload: an Issue
// (labels and priority kept, priority 0 and null alike) with the optional reference-change
// markers.
type IssueEventPayload struct {
	Issue
	ReferencesChanged          jsontext.Value `json:"references_changed,omitzero"`
	ReferencesChangedTruncated *bool          `json:"references_changed_truncated,omitzero"`
}

// IssueClaimEventPayload is the issue.claimed and issue.released payload.
type IssueClaimEventPayload struct {
	Key           string          `json:"key"`
	Status        IssueStatus     `json:"status"`
	Claim         *IssueClaim     `json:"claim"`
	PreviousClaim Opt[IssueClaim] `json:"previous_claim,omitzero"`
	Reason        ClaimReason     `json:"reason"`
}

// ArtifactCreatedPayload is the artifact.created payload.
type ArtifactCreatedPayload struct {
	Artifact Artifact `json:"artifact"`
}

// ArtifactVersionPayload is the artifact.version payload.
type ArtifactVersionPayload struct {
	ArtifactID string         `json:"artifact_id"`
	Name       string         `json:"name"`
	Version    Version        `json:"version"`
	Diff       jsontext.Value `json:"diff,omitzero"`
}

// ArtifactReviewPayload is the artifact.approved and artifact.changes_requested payload.
type ArtifactReviewPayload struct {
	ArtifactID string  `json:"artifact_id"`
	Name       string  `json:"name"`
	Version    int64   `json:"version"`
	Actor      Actor   `json:"actor"`
	Reason     *string `json:"reason"`
	AskID      *string `json:"ask_id"`
}

// AskEventPayload is the payload of the ask events: an Ask, plus previous and edited_by on
// ask.edited.
type AskEventPayload struct {
	Ask
	Previous *AskPrevious `json:"previous,omitzero"`
	EditedBy *Actor       `json:"edited_by,omitzero"`
}

// AskFollowerEventPayload is the ask.follower_added and ask.follower_removed payload.
type AskFollowerEventPayload struct {
	AskID     string `json:"ask_id"`
	SessionID string `json:"session_id"`
	By        Actor  `json:"by"`
}

// BlockEventPayload is the block.repaired payload (server-owned attributes restored) and the
// block.invalid payload (a malformed browser-authored ask block; Reason set).
type BlockEventPayload struct {
	BlockID     string `json:"block_id"`
	Version     int64  `json:"version"`
	Reason      string `json:"reason,omitzero"`
	DisturbedBy Actor  `json:"disturbed_by"`
}

// CommentEventPayload is the payload of the comment and suggestion events.
type CommentEventPayload struct {
	Comment
	ArtifactName string   `json:"artifact_name"`
	ProjectKey   string   `json:"project_key,omitzero"`
	ArtifactSlug string   `json:"artifact_slug,omitzero"`
	AskQuestion  string   `json:"ask_question,omitzero"`
	AskState     AskState `json:"ask_state,omitzero"`
	AskWaitingOn AskTurn  `json:"ask_waiting_on,omitzero"`
}

// CommentDeliveryEventPayload is the comment.delivery payload.
type CommentDeliveryEventPayload struct {
	CommentID string             `json:"comment_id"`
	AskID     Opt[string]        `json:"ask_id,omitzero"`
	Target    string             `json:"target"`
	Attempt   int64              `json:"attempt"`
	Delivery  DeliveryCapability `json:"delivery"`
	SessionID *string            `json:"session_id"`
	State     DeliveryState      `json:"state"`
	Duplicate *bool              `json:"duplicate,omitzero"`
	Error     Opt[string]        `json:"error,omitzero"`
	ReplyID   *string            `json:"reply_id"`
}

// MessageEventPayload is the message.created and message.answered payload; ReplyBody is the
// first 160 characters of the replied-to message's body.
type MessageEventPayload struct {
	Message
	ReplyBody    string `json:"reply_body,omitzero"`
	ThreadTarget string `json:"thread_target,omitzero"`
}

// MessageDeliveryEventPayload is the message.delivery payload.
type MessageDeliveryEventPayload struct {
	MessageID string             `json:"message_id"`
	Attempt   int64              `json:"attempt"`
	Delivery  DeliveryCapability `json:"delivery"`
	SessionID string             `json:"session_id"`
	Target    string             `json:"target,omitzero"`
	Title     string             `json:"title"`
	State     DeliveryState      `json:"state"`
	Duplicate *bool              `json:"duplicate,omitzero"`
	Error     string             `json:"error,omitzero"`
}

// MessageAcceptedPayload is the message.accepted payload.
type MessageAcceptedPayload struct {
	MessageID  string `json:"message_id"`
	Attempt    int64  `json:"attempt"`
	SessionID  string `json:"session_id"`
	AcceptedAs string `json:"accepted_as"`
	Target     string `json:"target"`
}

// ChildStatusPayload is the child.status payload.
type ChildStatusPayload struct {
	ChildKey string      `json:"child_key"`
	From     IssueStatus `json:"from"`
	To       IssueStatus `json:"to"`
}

// ChildEventPayload is the child.added and child.removed payload.
type ChildEventPayload struct {
	ChildKey string `json:"child_key"`
}

// SubscriptionRemoveRequestedPayload is the subscription.remove_requested payload: a pending
// command, not a completed removal.
type SubscriptionRemoveRequestedPayload struct {
	SessionID string   `json:"session_id"`
	By        Actor    `json:"by"`
	Topics    []string `json:"topics"`
	Pending   bool     `json:"pending"`
}

// SubscriptionRemovedPayload is the subscription.removed payload; RequestEventID names the
// subscription.remove_requested event it completes.
type SubscriptionRemovedPayload struct {
	SessionID      string   `json:"session_id"`
	By             Actor    `json:"by"`
	Topics         []string `json:"topics"`
	RequestEventID int64    `json:"request_event_id"`
}
