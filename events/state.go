package events

import (
	"slices"

	"github.com/agentwire/agentwire/jsonvalue"
)

// RunStatus is the reducer state's `status` member (events.md §8.1).
type RunStatus string

// The six run statuses; completed, failed and cancelled are terminal.
const (
	StatusIdle      RunStatus = "idle"
	StatusRunning   RunStatus = "running"
	StatusWaiting   RunStatus = "waiting"
	StatusCompleted RunStatus = "completed"
	StatusFailed    RunStatus = "failed"
	StatusCancelled RunStatus = "cancelled"
)

// IsTerminal reports whether s is completed, failed or cancelled: no further event applies
// (events.md §8.3 step 4).
func (s RunStatus) IsTerminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// statusOf returns the constant of a valid status.
func statusOf(s string) RunStatus {
	for _, c := range [...]RunStatus{StatusIdle, StatusRunning, StatusWaiting, StatusCompleted, StatusFailed, StatusCancelled} {
		if string(c) == s {
			return c
		}
	}
	return StatusIdle
}

func validStatus(s string) bool {
	switch RunStatus(s) {
	case StatusIdle, StatusRunning, StatusWaiting, StatusCompleted, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// ReducerState is the reducer snapshot of events.md §8.1. It is an immutable value: [Reduce]
// returns new states and never changes the one it is given, accessors return copies, and a
// state may be shared by any number of goroutines. The zero value is the initial state (the
// same as [NewReducerState]).
//
// Internally the lists are persistent vectors and keyed lookups go through an index shared by
// the states derived from one root, so a step costs amortised O(size of the event) (§8.5) and
// applying an event to an older state (a fork) leaves every other state intact.
type ReducerState struct {
	st *state
}

// NewReducerState returns the initial state (events.md §8.1): status `idle`, every list empty,
// every optional member null, both sequences 0.
func NewReducerState() ReducerState { return ReducerState{} }

// optString is a string-or-null member.
type optString struct {
	s  string
	ok bool
}

func someString(s string) optString { return optString{s: s, ok: true} }

// stateMessage is one entry of `messages`: {messageId, role, content}. Each content part is
// held as its encoding (a view of the event that carried it).
type stateMessage struct {
	id      string
	role    Role
	content vec[string]
}

// keyedRecord is a stored tool call, result or error: the encoding of the validated record
// (unknown members included) under its toolCallId. Tool calls also keep the SHA-256 of the
// record's canonical form so that the `tool.called` reuse comparison costs O(record size)
// (§8.5).
type keyedRecord struct {
	id  string
	raw string
	fp  [32]byte
}

// stateProgress is one entry of `toolProgress`: {toolCallId, content}; content is the encoding
// of the validated array of the latest tool.progress event.
type stateProgress struct {
	id      string
	content string
}

// eventEntry is one applied event: its ID (the `eventIds` entry) and the SHA-256 its
// fingerprint (the `eventFingerprints` value) spells in hex.
type eventEntry struct {
	id string
	fp [32]byte
}

// resolution is `interruptResolution`: {interruptId, decisions}, decisions as the encoding of
// the array.
type resolution struct {
	interruptID string
	decisions   string
}

// state holds one snapshot. Every field is immutable once the state is published; the vectors
// and the meta and tools records are shared with the states it was derived from and copied
// only when an event changes them, so a typical step allocates one small state.
type state struct {
	index  *keyIndex // shared key → position hints; nil only for the initial state
	meta   *stateMeta
	status RunStatus

	lastSequence        float64
	lastLogicalSequence float64

	events   vec[eventEntry]
	messages vec[*stateMessage]
	// hot is the current version of messages[hotIdx] (hotIdx ≥ 0): a run of deltas on one
	// message updates hot instead of rewriting the vector entry on every event. The vector
	// entry at hotIdx may be older; its ID is the same.
	hot    stateMessage
	hotIdx int
	tools  *stateTools
	// arena holds the strings the state took from events (persistent.go), shared along the
	// chain of states like the vectors' tails.
	arena arena
}

// stateMeta holds the members that change rarely.
type stateMeta struct {
	protocolVersion    float64
	hasProtocolVersion bool
	runID, sessionID   optString
	lastPhaseID        optString

	// interrupt, usage and limit are the encodings of the values; "" stands for null.
	interrupt   string
	interruptID string // the pending interrupt's interruptId
	resolution  *resolution
	usage       string
	limit       string

	finishReason, errorCode, cancellationReason optString
}

// stateTools holds the four tool lists.
type stateTools struct {
	calls    vec[*keyedRecord]
	progress vec[*stateProgress]
	results  vec[*keyedRecord]
	errors   vec[*keyedRecord]
}

var initialState = &state{status: StatusIdle, meta: &stateMeta{}, tools: &stateTools{}, hotIdx: -1}

func (s ReducerState) get() *state {
	if s.st == nil {
		return initialState
	}
	return s.st
}

// messageAt returns the current version of messages[i].
func (st *state) messageAt(i int) *stateMessage {
	if i == st.hotIdx {
		return &st.hot
	}
	return st.messages.Get(i)
}

// eachMessage calls fn for the current version of every message, in order.
func (st *state) eachMessage(fn func(i int, m *stateMessage)) {
	st.messages.All(func(i int, m *stateMessage) bool {
		if i == st.hotIdx {
			m = &st.hot
		}
		fn(i, m)
		return true
	})
}

func (st *state) findMessage(id string) int {
	// IDs are unique in messages, so the hot message's ID answers without the index.
	if st.hotIdx >= 0 && st.hot.id == id {
		return st.hotIdx
	}
	return find(st.index, kindMessage, id, keyHash(id), st.messages, messageKey)
}

func messageKey(m *stateMessage) string   { return m.id }
func recordKey(r *keyedRecord) string     { return r.id }
func progressKey(p *stateProgress) string { return p.id }
func eventKey(e eventEntry) string        { return e.id }

// ---- accessors ----

// Status is the `status` member.
func (s ReducerState) Status() RunStatus { return s.get().status }

// IsTerminal reports whether the status is completed, failed or cancelled.
func (s ReducerState) IsTerminal() bool { return s.get().status.IsTerminal() }

// ProtocolVersion is the `protocolVersion` member; ok is false while it is null.
func (s ReducerState) ProtocolVersion() (v int64, ok bool) {
	m := s.get().meta
	return int64(m.protocolVersion), m.hasProtocolVersion
}

// RunID is the `runId` member; ok is false while it is null.
func (s ReducerState) RunID() (string, bool) { o := s.get().meta.runID; return o.s, o.ok }

// SessionID is the `sessionId` member; ok is false while it is null.
func (s ReducerState) SessionID() (string, bool) { o := s.get().meta.sessionID; return o.s, o.ok }

// LastPhaseID is the `lastPhaseId` member; ok is false while it is null.
func (s ReducerState) LastPhaseID() (string, bool) { o := s.get().meta.lastPhaseID; return o.s, o.ok }

// LastSequence is the `lastSequence` member (0 initially). It is a float64 because a decoded
// state may carry any JSON number there; states built by Reduce hold safe integers.
func (s ReducerState) LastSequence() float64 { return s.get().lastSequence }

// LastLogicalSequence is the `lastLogicalSequence` member (0 initially); see LastSequence.
func (s ReducerState) LastLogicalSequence() float64 { return s.get().lastLogicalSequence }

// FinishReason is the `finishReason` member; ok is false while it is null.
func (s ReducerState) FinishReason() (string, bool) { o := s.get().meta.finishReason; return o.s, o.ok }

// ErrorCode is the `errorCode` member (run.failed's code); ok is false while it is null.
func (s ReducerState) ErrorCode() (string, bool) { o := s.get().meta.errorCode; return o.s, o.ok }

// CancellationReason is the `cancellationReason` member; ok is false while it is null.
func (s ReducerState) CancellationReason() (string, bool) {
	o := s.get().meta.cancellationReason
	return o.s, o.ok
}

// EventCount is the number of applied events (the length of `eventIds`).
func (s ReducerState) EventCount() int { return s.get().events.Len() }

// EventIDs returns a copy of `eventIds`: every applied event ID, in order.
func (s ReducerState) EventIDs() []string {
	ev := s.get().events
	out := make([]string, 0, ev.Len())
	ev.All(func(_ int, e eventEntry) bool { out = append(out, e.id); return true })
	return out
}

// Fingerprint returns the `eventFingerprints` entry of eventID (`sha256:` + 64 hex digits) and
// whether that event was applied.
func (s ReducerState) Fingerprint(eventID string) (string, bool) {
	st := s.get()
	if i := find(st.index, kindEvent, eventID, keyHash(eventID), st.events, eventKey); i >= 0 {
		fp := st.events.Get(i).fp
		return string(appendFingerprint(make([]byte, 0, fingerprintLen), &fp)), true
	}
	return "", false
}

// StateMessage is a copy of one `messages` entry.
type StateMessage struct {
	MessageID string
	Role      Role
	Content   []ContentPart // deep copies of the stored parts
}

// MessageCount is the number of `messages` entries.
func (s ReducerState) MessageCount() int { return s.get().messages.Len() }

// Messages returns copies of the `messages` entries in first-seen order.
func (s ReducerState) Messages() []StateMessage {
	st := s.get()
	out := make([]StateMessage, 0, st.messages.Len())
	st.eachMessage(func(_ int, m *stateMessage) { out = append(out, m.snapshot()) })
	return out
}

// Message returns a copy of the entry of messageID, if present.
func (s ReducerState) Message(messageID string) (StateMessage, bool) {
	st := s.get()
	i := st.findMessage(messageID)
	if i < 0 {
		return StateMessage{}, false
	}
	return st.messageAt(i).snapshot(), true
}

func (m *stateMessage) snapshot() StateMessage {
	parts := make([]ContentPart, 0, m.content.Len())
	m.content.All(func(_ int, p string) bool { parts = append(parts, partCopy(p)); return true })
	return StateMessage{MessageID: m.id, Role: m.role, Content: parts}
}

// decodeObject decodes the encoding of an object held by the state into a fresh *Object.
func decodeObject(raw string) *Object { return decodeRaw(raw).(*Object) }

func stringMember(o *Object, name string) string {
	v, _ := o.Get(name)
	s, _ := v.(string)
	return s
}

func partCopy(raw string) ContentPart {
	p := decodeObject(raw)
	return ContentPart{Type: stringMember(p, "type"), Raw: p}
}

func partsCopy(arr string) []ContentPart {
	elems := decodeRaw(arr).([]any)
	out := make([]ContentPart, len(elems))
	for i, v := range elems {
		p := v.(*Object)
		out[i] = ContentPart{Type: stringMember(p, "type"), Raw: p}
	}
	return out
}

// ToolCalls returns copies of the `toolCalls` records in first-seen order.
func (s ReducerState) ToolCalls() []ToolCallRecord {
	v := s.get().tools.calls
	out := make([]ToolCallRecord, 0, v.Len())
	v.All(func(_ int, r *keyedRecord) bool { out = append(out, toolCallCopy(r.raw)); return true })
	return out
}

func toolCallCopy(raw string) ToolCallRecord {
	c := decodeObject(raw)
	in, _ := c.Get("input")
	obj, _ := in.(*Object)
	return ToolCallRecord{ToolCallID: stringMember(c, "toolCallId"), Name: stringMember(c, "name"), Input: obj, Raw: c}
}

// ToolProgressEntry is a copy of one `toolProgress` entry.
type ToolProgressEntry struct {
	ToolCallID string
	Content    []ContentPart
}

// ToolProgress returns copies of the `toolProgress` entries in first-seen order.
func (s ReducerState) ToolProgress() []ToolProgressEntry {
	v := s.get().tools.progress
	out := make([]ToolProgressEntry, 0, v.Len())
	v.All(func(_ int, p *stateProgress) bool {
		out = append(out, ToolProgressEntry{ToolCallID: p.id, Content: partsCopy(p.content)})
		return true
	})
	return out
}

// ToolResults returns copies of the `toolResults` records in first-seen order.
func (s ReducerState) ToolResults() []ToolResultRecord {
	v := s.get().tools.results
	out := make([]ToolResultRecord, 0, v.Len())
	v.All(func(_ int, r *keyedRecord) bool {
		out = append(out, toolResultCopy(r))
		return true
	})
	return out
}

// ToolErrors returns copies of the `toolErrors` records in first-seen order.
func (s ReducerState) ToolErrors() []ToolErrorRecord {
	v := s.get().tools.errors
	out := make([]ToolErrorRecord, 0, v.Len())
	v.All(func(_ int, r *keyedRecord) bool {
		out = append(out, toolErrorCopy(r))
		return true
	})
	return out
}

func toolResultCopy(r *keyedRecord) ToolResultRecord {
	c := decodeObject(r.raw)
	in, _ := c.Get("input")
	obj, _ := in.(*Object)
	output, _ := c.Get("output")
	rec := ToolResultRecord{ToolCallID: r.id, Name: stringMember(c, "name"), Input: obj, Output: output, Raw: c}
	if b, ok := c.Get("isError"); ok {
		bb := b.(bool)
		rec.IsError = &bb
	}
	return rec
}

func toolErrorCopy(r *keyedRecord) ToolErrorRecord {
	c := decodeObject(r.raw)
	in, _ := c.Get("input")
	obj, _ := in.(*Object)
	rec := ToolErrorRecord{ToolCallID: r.id, Name: stringMember(c, "name"), Input: obj, Error: stringMember(c, "error"), Raw: c}
	if code, ok := c.Get("code"); ok {
		cs := code.(string)
		rec.Code = &cs
	}
	return rec
}

// Interrupt returns a copy of the pending `interrupt`, if any.
func (s ReducerState) Interrupt() (Interrupt, bool) {
	m := s.get().meta
	if m.interrupt == "" {
		return Interrupt{}, false
	}
	c := decodeObject(m.interrupt)
	return Interrupt{Kind: stringMember(c, "kind"), InterruptID: stringMember(c, "interruptId"), Prompt: stringMember(c, "prompt"), Raw: c}, true
}

// InterruptResolution is a copy of the `interruptResolution` member.
type InterruptResolution struct {
	InterruptID string
	Decisions   []any
}

// InterruptResolution returns a copy of `interruptResolution`, if not null.
func (s ReducerState) InterruptResolution() (InterruptResolution, bool) {
	m := s.get().meta
	if m.resolution == nil {
		return InterruptResolution{}, false
	}
	return InterruptResolution{InterruptID: m.resolution.interruptID, Decisions: decodeRaw(m.resolution.decisions).([]any)}, true
}

// Usage returns a copy of `usage`, if not null.
func (s ReducerState) Usage() (Usage, bool) {
	m := s.get().meta
	if m.usage == "" {
		return Usage{}, false
	}
	return Usage{Raw: decodeObject(m.usage)}, true
}

// Limit returns a copy of `limit`, if not null.
func (s ReducerState) Limit() (LimitInfo, bool) {
	m := s.get().meta
	if m.limit == "" {
		return LimitInfo{}, false
	}
	c := decodeObject(m.limit)
	return LimitInfo{Kind: stringMember(c, "kind"), Raw: c}, true
}

// ---- serialisation ----

// MarshalJSON writes the state as events.md §8.1 specifies: the 21 members, always present, in
// the table's order; `eventFingerprints` follows `eventIds` order; numbers in the ECMAScript
// form; no HTML escaping.
func (s ReducerState) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// AppendJSON appends MarshalJSON's output to dst.
func (s ReducerState) AppendJSON(dst []byte) []byte {
	st := s.get()
	meta := st.meta
	// One growth of dst up front instead of doubling it (and copying what is written) about
	// log₂(size) times on the way: a long run's snapshot is tens of megabytes.
	b := slices.Grow(dst, st.sizeHint())
	b = append(b, `{"protocolVersion":`...)
	if meta.hasProtocolVersion {
		b = jsonvalue.AppendNumber(b, meta.protocolVersion)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"runId":`...)
	b = appendOpt(b, meta.runID)
	b = append(b, `,"sessionId":`...)
	b = appendOpt(b, meta.sessionID)
	b = append(b, `,"status":`...)
	b = jsonvalue.AppendQuote(b, string(st.status))

	b = append(b, `,"messages":[`...)
	st.eachMessage(func(i int, m *stateMessage) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"messageId":`...)
		b = jsonvalue.AppendQuote(b, m.id)
		b = append(b, `,"role":`...)
		b = jsonvalue.AppendQuote(b, string(m.role))
		b = append(b, `,"content":[`...)
		m.content.All(func(j int, p string) bool {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, p...)
			return true
		})
		b = append(b, "]}"...)
	})
	b = append(b, `],"toolCalls":`...)
	b = appendRecords(b, st.tools.calls)
	b = append(b, `,"toolProgress":[`...)
	st.tools.progress.All(func(i int, p *stateProgress) bool {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"toolCallId":`...)
		b = jsonvalue.AppendQuote(b, p.id)
		b = append(b, `,"content":`...)
		b = append(b, p.content...)
		b = append(b, '}')
		return true
	})
	b = append(b, `],"toolResults":`...)
	b = appendRecords(b, st.tools.results)
	b = append(b, `,"toolErrors":`...)
	b = appendRecords(b, st.tools.errors)
	b = append(b, `,"interrupt":`...)
	b = appendRaw(b, meta.interrupt)
	b = append(b, `,"interruptResolution":`...)
	if meta.resolution == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"interruptId":`...)
		b = jsonvalue.AppendQuote(b, meta.resolution.interruptID)
		b = append(b, `,"decisions":`...)
		b = append(b, meta.resolution.decisions...)
		b = append(b, '}')
	}
	b = append(b, `,"usage":`...)
	b = appendRaw(b, meta.usage)
	b = append(b, `,"limit":`...)
	b = appendRaw(b, meta.limit)
	b = append(b, `,"finishReason":`...)
	b = appendOpt(b, meta.finishReason)
	b = append(b, `,"errorCode":`...)
	b = appendOpt(b, meta.errorCode)
	b = append(b, `,"cancellationReason":`...)
	b = appendOpt(b, meta.cancellationReason)
	b = append(b, `,"lastSequence":`...)
	b = jsonvalue.AppendNumber(b, st.lastSequence)
	b = append(b, `,"lastLogicalSequence":`...)
	b = jsonvalue.AppendNumber(b, st.lastLogicalSequence)
	b = append(b, `,"lastPhaseId":`...)
	b = appendOpt(b, meta.lastPhaseID)
	b = append(b, `,"eventIds":[`...)
	// The event IDs are read once (they lie all over the heap, in the events that carried
	// them); eventFingerprints copies their quoted form back from eventIds.
	quoted := make([]int, st.events.Len()+1)
	quoted[0] = len(b)
	st.events.All(func(i int, e eventEntry) bool {
		b = jsonvalue.AppendQuote(b, e.id)
		quoted[i+1] = len(b)
		if i+1 < len(quoted)-1 {
			b = append(b, ',')
		}
		return true
	})
	b = append(b, `],"eventFingerprints":{`...)
	st.events.All(func(i int, e eventEntry) bool {
		if i > 0 {
			b = append(b, ',')
		}
		from, to := quoted[i], quoted[i+1]
		if i > 0 {
			from++ // the comma
		}
		b = append(b, b[from:to]...)
		b = append(b, ':', '"')
		b = appendFingerprint(b, &e.fp)
		b = append(b, '"')
		return true
	})
	return append(b, "}}"...)
}

// sizeHint is about the length of the state's encoding (a little more, unless strings need
// escapes): a pass over the lists that reads lengths only.
func (st *state) sizeHint() int {
	const perEntry = 16 // quotes, commas, colons
	meta := st.meta
	n := 1024 + len(meta.interrupt) + len(meta.usage) + len(meta.limit) + len(meta.runID.s) +
		len(meta.sessionID.s) + len(meta.lastPhaseID.s) + len(meta.finishReason.s) +
		len(meta.errorCode.s) + len(meta.cancellationReason.s)
	if meta.resolution != nil {
		n += len(meta.resolution.interruptID) + len(meta.resolution.decisions)
	}
	st.eachMessage(func(_ int, m *stateMessage) {
		n += len(`{"messageId":,"role":,"content":[]}`) + perEntry + len(m.id) + len(m.role)
		m.content.All(func(_ int, p string) bool { n += len(p) + 1; return true })
	})
	records := func(_ int, r *keyedRecord) bool { n += len(r.raw) + 1; return true }
	st.tools.calls.All(records)
	st.tools.results.All(records)
	st.tools.errors.All(records)
	st.tools.progress.All(func(_ int, p *stateProgress) bool {
		n += len(`{"toolCallId":,"content":}`) + perEntry + len(p.id) + len(p.content)
		return true
	})
	st.events.All(func(_ int, e eventEntry) bool { n += 2*len(e.id) + fingerprintLen + perEntry; return true })
	return n
}

func appendOpt(b []byte, o optString) []byte {
	if !o.ok {
		return append(b, "null"...)
	}
	return jsonvalue.AppendQuote(b, o.s)
}

// appendRaw appends a held encoding, "" as null.
func appendRaw(b []byte, raw string) []byte {
	if raw == "" {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func appendRecords(b []byte, v vec[*keyedRecord]) []byte {
	b = append(b, '[')
	v.All(func(i int, r *keyedRecord) bool {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r.raw...)
		return true
	})
	return append(b, ']')
}

// MarshalIndent is MarshalJSON with one member or element per line, indented by indent (the
// CLI uses two spaces); empty arrays and objects stay `[]` and `{}`.
func (s ReducerState) MarshalIndent(indent string) ([]byte, error) {
	// The compact form is valid by construction; re-parsing it keeps one encoder for both forms.
	// A state nests up to MaxStateDepth levels, deeper than an event may.
	v, err := jsonvalue.ParseDeep(s.AppendJSON(nil), stateLabel, MaxStateDepth)
	if err != nil {
		return nil, err
	}
	return jsonvalue.AppendIndented(nil, v, indent, 0), nil
}

// Value returns the state as a fresh JSON object (§8.1 member order) that shares nothing with
// the state. It may nest up to MaxStateDepth levels, more than jsonvalue.Marshal or
// CloneJSONValue accept (MaxJSONDepth); encode it with jsonvalue.AppendEncoded.
func (s ReducerState) Value() (*Object, error) {
	v, err := jsonvalue.ParseDeep(s.AppendJSON(nil), stateLabel, MaxStateDepth)
	if err != nil {
		return nil, err
	}
	return v.(*Object), nil // AppendJSON writes an object
}
