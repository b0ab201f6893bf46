// Package events implements AgentDock's run-event protocol, version 1 (spec: events.md).
//
// It provides the 9-member event envelope and its 14 lifecycle event types, content parts, tool
// call/result/error records, interrupts, usage and limit info; strict decoding and validation
// with the spec's exact messages ([ParseEvent], [CloneEvent], [ValidateEventInput],
// [CloneEventInput], [CloneContentParts]); the deterministic, pure reducer that folds an event
// stream into a UI-safe snapshot ([Reduce], [ReduceAll], [ReducerState]); and the raw JSON
// Schema subset used for tool parameters at the model boundary ([ValidateToolParameters],
// [ValidateToolInput]).
//
// The strict JSON layer lives in package jsonvalue; the functions of events.md §3 are
// re-exported here under the spec's names ([ParseJSON], [CloneJSONValue], [Canonicalize], …).
//
// Errors are typed: *[JSONValidationError] for strict-JSON faults, *[ValidationError] for other
// contract faults and *[ReduceError] for reducer refusals. Error() returns the spec's message
// exactly.
package events

import (
	"github.com/agentwire/agentwire/jsonvalue"
)

// ProtocolVersion is AGENT_EVENT_PROTOCOL_VERSION, carried by every event.
const ProtocolVersion = 1

// MaxJSONDepth is the maximum container nesting depth (events.md §3.3).
const MaxJSONDepth = jsonvalue.MaxDepth

// Object is the ordered JSON object of the strict JSON layer.
type Object = jsonvalue.Object

// JSONValidationError is a strict-JSON fault (events.md §3.8).
type JSONValidationError = jsonvalue.JSONValidationError

// ValidationError is an event, content, record, usage, limit, interrupt, tool-definition,
// tool-schema or tool-input fault (events.md §3.8).
type ValidationError struct{ Message string }

func (e *ValidationError) Error() string { return e.Message }

// ReduceError is a reducer refusal (events.md §8.3 steps 3–10 and §8.4).
type ReduceError struct{ Message string }

func (e *ReduceError) Error() string { return e.Message }

// EventType is the `type` member of an event (events.md §4.3).
type EventType string

// The 14 event types of protocol 1, in the spec's order.
const (
	EventRunStarted        EventType = "run.started"
	EventMessageStarted    EventType = "message.started"
	EventMessagePartDelta  EventType = "message.part.delta"
	EventMessageCompleted  EventType = "message.completed"
	EventToolCalled        EventType = "tool.called"
	EventToolProgress      EventType = "tool.progress"
	EventToolCompleted     EventType = "tool.completed"
	EventToolFailed        EventType = "tool.failed"
	EventInterruptRequired EventType = "interrupt.required"
	EventInterruptResolved EventType = "interrupt.resolved"
	EventUsageUpdated      EventType = "usage.updated"
	EventRunCompleted      EventType = "run.completed"
	EventRunFailed         EventType = "run.failed"
	EventRunCancelled      EventType = "run.cancelled"
)

// EventTypes lists the 14 types in the spec's order.
var EventTypes = []EventType{
	EventRunStarted, EventMessageStarted, EventMessagePartDelta, EventMessageCompleted,
	EventToolCalled, EventToolProgress, EventToolCompleted, EventToolFailed,
	EventInterruptRequired, EventInterruptResolved, EventUsageUpdated,
	EventRunCompleted, EventRunFailed, EventRunCancelled,
}

// IsTerminal reports whether t ends a run (run.completed, run.failed, run.cancelled).
func (t EventType) IsTerminal() bool {
	return t == EventRunCompleted || t == EventRunFailed || t == EventRunCancelled
}

// Event is one validated protocol-1 event. It is immutable and only produced by [ParseEvent]
// and [CloneEvent]; it retains every member of the validated object, unknown payload members
// included. The zero Event is invalid: [Reduce] refuses it with
// `Agent event must be a JSON object.`
//
// An Event holds the event's encoding (what MarshalJSON writes) and, as views of it, the
// envelope and the members the reducer needs; the typed [Event.Payload] and [Event.Value] are
// decoded from the encoding when asked for. An Event is a value: copying it is cheap and
// shares the immutable encoding.
type Event struct {
	text            string // the encoding of the validated event; "" only for the zero Event
	eventID         string
	runID           string
	sessionID       string
	phaseID         string
	timestamp       string
	logicalSequence int64
	sequence        int64
	typ             EventType
	fingerprint     [32]byte // SHA-256 of the canonical form of the event

	// What the type rule of the reducer reads (events.md §8.4), as views of text:
	//   key: messageId (message.*), toolCallId (tool.progress, and of the record in
	//        tool.called/completed/failed), interruptId (interrupt.*), finishReason
	//        (run.completed), code (run.failed), reason (run.cancelled, when hasKey);
	//   raw: the encoding of part (message.part.delta), content (message.completed,
	//        tool.progress), the record (tool.*), interrupt, decisions, usage (usage.updated,
	//        run.completed when present; "" when absent);
	//   limit: the encoding of limit (run.*; "" when absent).
	key    string
	raw    string
	limit  string
	role   Role
	hasKey bool
}

// Valid reports whether e was produced by ParseEvent/CloneEvent (false for the zero Event).
func (e Event) Valid() bool { return e.text != "" }

// EventID is the `eventId` member.
func (e Event) EventID() string { return e.eventID }

// RunID is the `runId` member.
func (e Event) RunID() string { return e.runID }

// SessionID is the `sessionId` member.
func (e Event) SessionID() string { return e.sessionID }

// PhaseID is the `phaseId` member.
func (e Event) PhaseID() string { return e.phaseID }

// Timestamp is the `timestamp` member (format not validated).
func (e Event) Timestamp() string { return e.timestamp }

// LogicalSequence is the `logicalSequence` member.
func (e Event) LogicalSequence() int64 { return e.logicalSequence }

// Sequence is the `sequence` member.
func (e Event) Sequence() int64 { return e.sequence }

// ProtocolVersion is the `protocolVersion` member (always 1 for a valid event).
func (e Event) ProtocolVersion() int { return ProtocolVersion }

// Type is the `type` member.
func (e Event) Type() EventType { return e.typ }

// Payload is the typed payload; its concrete type is named after the event type (RunStarted,
// MessagePartDelta, …), nil for the zero Event. The records, parts and other JSON values in it
// are decoded from the event on each call (fresh values the caller may keep); types without
// such members (RunStarted, MessageStarted) cost no decoding.
func (e Event) Payload() Payload {
	if e.text == "" {
		return nil
	}
	return e.decodePayload()
}

// Fingerprint is the event fingerprint of events.md §3.7: `sha256:` and 64 lowercase hex digits
// over the RFC 8785 form of the whole validated event ("" for the zero Event).
func (e Event) Fingerprint() string {
	if e.text == "" {
		return ""
	}
	return string(appendFingerprint(make([]byte, 0, fingerprintLen), &e.fingerprint))
}

// Value returns a deep copy of the validated event object (member order kept).
func (e Event) Value() *Object {
	if e.text == "" {
		return nil
	}
	return decodeRaw(e.text).(*Object)
}

// MarshalJSON encodes the event with every member in document order.
func (e Event) MarshalJSON() ([]byte, error) {
	if e.text == "" {
		return nil, &JSONValidationError{Path: "Agent event", Message: "Agent event must be a JSON object."}
	}
	return []byte(e.text), nil
}

// AppendJSON appends the event's encoding to dst (`null` for the zero Event).
func (e Event) AppendJSON(dst []byte) []byte {
	if e.text == "" {
		return append(dst, "null"...)
	}
	return append(dst, e.text...)
}

// Payload is the typed payload of one event type. Record and part values inside a payload are
// the validated clones held by the event (unknown members included): callers must treat them
// as read-only.
type Payload interface{ isPayload() }

// Role is a message role: `user`, `assistant` or `tool`.
type Role string

// Roles of events.md §4.3.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ContentPart is one validated content part (events.md §6). Raw holds every member.
type ContentPart struct {
	Type string
	Raw  *Object
}

// ToolCallRecord is a validated tool call (events.md §7.1). Raw holds every member.
type ToolCallRecord struct {
	ToolCallID string
	Name       string
	Input      *Object
	Raw        *Object
}

// ToolResultRecord is a validated tool result (events.md §7.1). Raw holds every member.
type ToolResultRecord struct {
	ToolCallID string
	Name       string
	Input      *Object
	Output     any
	IsError    *bool
	Raw        *Object
}

// ToolErrorRecord is a validated tool error (events.md §7.1). Raw holds every member.
type ToolErrorRecord struct {
	ToolCallID string
	Name       string
	Input      *Object
	Error      string
	Code       *string
	Raw        *Object
}

// Interrupt is a validated AgentInterrupt (events.md §7.2). Raw holds every member.
type Interrupt struct {
	Kind        string
	InterruptID string
	Prompt      string
	Raw         *Object
}

// Usage is a validated AgentUsage (events.md §7.3). Raw holds every member.
type Usage struct{ Raw *Object }

// LimitInfo is a validated AgentLimitInfo (events.md §7.4). Raw holds every member.
type LimitInfo struct {
	Kind string
	Raw  *Object
}

// The typed payloads, one per event type.
type (
	RunStarted     struct{}
	MessageStarted struct {
		MessageID string
		Role      Role
	}
	MessagePartDelta struct {
		MessageID string
		Part      ContentPart
	}
	MessageCompleted struct {
		MessageID  string
		Role       Role
		Content    []ContentPart
		RawContent []any // the validated `content` array
	}
	ToolCalled   struct{ ToolCall ToolCallRecord }
	ToolProgress struct {
		ToolCallID string
		Content    []ContentPart
		RawContent []any
	}
	ToolCompleted     struct{ Result ToolResultRecord }
	ToolFailed        struct{ Error ToolErrorRecord }
	InterruptRequired struct{ Interrupt Interrupt }
	InterruptResolved struct {
		InterruptID string
		Decisions   []any
	}
	UsageUpdated struct{ Usage Usage }
	RunCompleted struct {
		FinishReason string
		Content      []ContentPart
		RawContent   []any
		Usage        *Usage     // nil when absent
		Limit        *LimitInfo // nil when absent
	}
	RunFailed struct {
		Code    string
		Message string
		Limit   *LimitInfo
	}
	RunCancelled struct {
		Reason *string // nil when absent
		Limit  *LimitInfo
	}
)

func (RunStarted) isPayload()        {}
func (MessageStarted) isPayload()    {}
func (MessagePartDelta) isPayload()  {}
func (MessageCompleted) isPayload()  {}
func (ToolCalled) isPayload()        {}
func (ToolProgress) isPayload()      {}
func (ToolCompleted) isPayload()     {}
func (ToolFailed) isPayload()        {}
func (InterruptRequired) isPayload() {}
func (InterruptResolved) isPayload() {}
func (UsageUpdated) isPayload()      {}
func (RunCompleted) isPayload()      {}
func (RunFailed) isPayload()         {}
func (RunCancelled) isPayload()      {}
