package events

import (
	"crypto/sha256"
	"unsafe"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Reducer refusal messages (events.md §8.3 steps 3–10 and §8.4), exact.
const (
	msgIDReused          = "Agent event ID was reused for different event data."
	msgAfterTerminal     = "Agent event cannot be applied after the run is terminal."
	msgMustBeginStarted  = "Agent event stream must begin with run.started."
	msgRunIDMismatch     = "Agent event run ID does not match reducer state."
	msgProtocolMismatch  = "Agent event protocol version does not match reducer state."
	msgSessionMismatch   = "Agent event session ID does not match reducer state."
	msgLogicalSequence   = "Agent event logical sequence must increase monotonically."
	msgSequence          = "Agent event sequence must increase within a phase."
	msgRunStart          = "Run can only start from idle or waiting state."
	msgDeltaNoMessage    = "Message delta has no started message."
	msgToolCallReused    = "Tool call ID was reused for different tool data."
	msgProgressNoCall    = "Tool progress has no known tool call."
	msgResultNoCall      = "Tool result has no known tool call."
	msgErrorNoCall       = "Tool error has no known tool call."
	msgInterruptPending  = "An interrupt is already pending."
	msgInterruptMismatch = "Interrupt resolution does not match the pending interrupt."
	msgEventNotObject    = "Agent event must be a JSON object."
)

func refuse(msg string) error { return &ReduceError{Message: msg} }

// Reduce applies one validated event to s (events.md §8.3–§8.4) and returns the next state.
//
// It is pure and atomic: s is never changed, and on a refusal Reduce returns s itself with a
// *ReduceError (or, for the zero Event, a *JSONValidationError `Agent event must be a JSON
// object.`). An exact duplicate of an applied event (same eventId, same fingerprint) returns s
// and no error, in every status. Concurrent calls, on the same s or on related states, are
// safe. Along a chain of states each call costs amortised O(size of e) (§8.5).
func Reduce(s ReducerState, e Event) (ReducerState, error) {
	if !e.Valid() {
		return s, &JSONValidationError{Path: "Agent event", Message: msgEventNotObject}
	}
	cur := s.get()
	meta := cur.meta

	// 3. Duplicate check by canonical fingerprint.
	idHash := keyHash(e.eventID)
	if i := find(cur.index, kindEvent, e.eventID, idHash, cur.events, eventKey); i >= 0 {
		if cur.events.Get(i).fp == e.fingerprint {
			return s, nil
		}
		return s, refuse(msgIDReused)
	}
	// 4–10. Ordering and identity.
	switch {
	case cur.status.IsTerminal():
		return s, refuse(msgAfterTerminal)
	case cur.status == StatusIdle && e.typ != EventRunStarted:
		return s, refuse(msgMustBeginStarted)
	case meta.runID.ok && meta.runID.s != e.runID:
		return s, refuse(msgRunIDMismatch)
	case meta.hasProtocolVersion && meta.protocolVersion != ProtocolVersion:
		return s, refuse(msgProtocolMismatch)
	case meta.sessionID.ok && meta.sessionID.s != e.sessionID:
		return s, refuse(msgSessionMismatch)
	case float64(e.logicalSequence) <= cur.lastLogicalSequence:
		return s, refuse(msgLogicalSequence)
	case meta.lastPhaseID.ok && meta.lastPhaseID.s == e.phaseID && float64(e.sequence) <= cur.lastSequence:
		return s, refuse(msgSequence)
	}

	// 11–12. The type rule runs on a copy of the state; every check it makes is a lookup that
	// precedes its writes, and the only shared writes (vector slots, index hints) are invisible
	// to every other state, so a refusal leaves no trace.
	b := builder{st: new(state)}
	*b.st = *cur
	if b.st.index == nil {
		b.st.index = newKeyIndex()
	}
	if err := b.apply(cur, e); err != nil {
		return s, err
	}
	next := b.st
	if !meta.hasProtocolVersion || !meta.runID.ok || !meta.sessionID.ok || !meta.lastPhaseID.ok || meta.lastPhaseID.s != e.phaseID {
		// Equal IDs are kept; new ones are copied into the state.
		m := b.meta()
		m.protocolVersion, m.hasProtocolVersion = ProtocolVersion, true
		if !m.runID.ok {
			m.runID = someString(b.intern(e.runID))
		}
		if !m.sessionID.ok {
			m.sessionID = someString(b.intern(e.sessionID))
		}
		if !m.lastPhaseID.ok || m.lastPhaseID.s != e.phaseID {
			m.lastPhaseID = someString(b.intern(e.phaseID))
		}
	}
	next.lastSequence = float64(e.sequence)
	next.lastLogicalSequence = float64(e.logicalSequence)
	next.index.record(kindEvent, idHash, cur.events.Len())
	next.events = cur.events.Append(eventEntry{id: b.intern(e.eventID), fp: e.fingerprint})
	return ReducerState{st: next}, nil
}

// ReduceAll folds events from [NewReducerState]. On the first refusal it returns the initial
// state and that error, unwrapped: like AgentDock's fold it exposes no partial state (apply
// Reduce event by event to keep the last good state).
func ReduceAll(events []Event) (ReducerState, error) {
	s := NewReducerState()
	for _, e := range events {
		var err error
		if s, err = Reduce(s, e); err != nil {
			return NewReducerState(), err
		}
	}
	return s, nil
}

// builder is the next state under construction; meta and tools are copied on first write.
// Every string it stores comes from intern, after the checks of the rule that stores it: a
// refused event claims no arena bytes.
type builder struct {
	st                    *state
	metaOwned, toolsOwned bool
}

// intern copies s, a view of the event being applied, into the state's arena.
func (b *builder) intern(s string) string {
	var v string
	b.st.arena, v = b.st.arena.intern(s)
	return v
}

func (b *builder) meta() *stateMeta {
	if !b.metaOwned {
		m := *b.st.meta
		b.st.meta = &m
		b.metaOwned = true
	}
	return b.st.meta
}

func (b *builder) tools() *stateTools {
	if !b.toolsOwned {
		t := *b.st.tools
		b.st.tools = &t
		b.toolsOwned = true
	}
	return b.st.tools
}

// apply performs the type rule of e (events.md §8.4); cur is the state e is applied to.
func (b *builder) apply(cur *state, e Event) error {
	switch e.typ {
	case EventRunStarted:
		if cur.status != StatusIdle && cur.status != StatusWaiting {
			return refuse(msgRunStart)
		}
		b.st.status = StatusRunning
	case EventMessageStarted:
		b.upsertMessage(e.key, e.role, vec[string]{})
	case EventMessagePartDelta:
		return b.appendPart(e.key, e.raw)
	case EventMessageCompleted:
		b.upsertMessage(e.key, e.role, contentVec(b.intern(e.raw)))
	case EventToolCalled:
		return b.addToolCall(e.key, e.raw)
	case EventToolProgress:
		return b.upsertProgress(e.key, e.raw)
	case EventToolCompleted:
		return b.upsertOutcome(false, e.key, e.raw)
	case EventToolFailed:
		return b.upsertOutcome(true, e.key, e.raw)
	case EventInterruptRequired:
		return b.requireInterrupt(e.key, e.raw)
	case EventInterruptResolved:
		return b.resolveInterrupt(e.key, e.raw)
	case EventUsageUpdated:
		b.meta().usage = b.intern(e.raw)
	case EventRunCompleted:
		b.complete(e.key, e.raw, e.limit)
	case EventRunFailed:
		b.fail(e.key, e.limit)
	case EventRunCancelled:
		b.cancel(e.key, e.hasKey, e.limit)
	default:
		// Unreachable for an Event built by ParseEvent/CloneEvent.
		return &JSONValidationError{Path: "Agent event", Message: msgEventNotObject}
	}
	return nil
}

// contentVec builds a message's content list from the encoding of a validated content array.
func contentVec(arr string) vec[string] {
	var v vec[string]
	eachElement(arr, func(p string) { v = v.Append(p) })
	return v
}

// eachElement calls fn with the encoding of each element of arr, the encoding of an array
// (compact, valid by construction: no white space, strings closed, brackets balanced).
func eachElement(arr string, fn func(string)) {
	depth, start := 0, 1
	for i := 1; i < len(arr)-1; i++ {
		switch arr[i] {
		case '"':
			// Skip the string: its end is the next quote not escaped by a backslash.
			for i++; arr[i] != '"'; i++ {
				if arr[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 0 {
				fn(arr[start:i])
				start = i + 1
			}
		}
	}
	if len(arr) > 2 {
		fn(arr[start : len(arr)-1])
	}
}

// upsertMessage replaces the entry of id in place (content and role) or appends a new one.
func (b *builder) upsertMessage(id string, role Role, content vec[string]) {
	st := b.st
	h := keyHash(id)
	i := find(st.index, kindMessage, id, h, st.messages, messageKey)
	switch {
	case i < 0:
		m := stateMessage{id: b.intern(id), role: role, content: content}
		st.index.record(kindMessage, h, st.messages.Len())
		st.messages = st.messages.Append(&m)
	case i == st.hotIdx:
		st.hot = stateMessage{id: st.hot.id, role: role, content: content}
	default:
		m := stateMessage{id: st.messages.Get(i).id, role: role, content: content}
		st.messages = st.messages.Set(i, &m)
	}
}

// appendPart appends a delta's part to its message (started or completed); adjacent text is
// not merged. The message becomes the hot one, so a run of deltas on it costs O(1) each.
func (b *builder) appendPart(id string, part string) error {
	st := b.st
	i := st.findMessage(id)
	if i < 0 {
		return refuse(msgDeltaNoMessage)
	}
	if i != st.hotIdx {
		if st.hotIdx >= 0 {
			flushed := st.hot
			st.messages = st.messages.Set(st.hotIdx, &flushed)
		}
		st.hot = *st.messages.Get(i)
		st.hotIdx = i
	}
	st.hot.content = st.hot.content.Append(b.intern(part))
	return nil
}

// addToolCall appends a new call; a known toolCallId must carry the same record (canonical
// comparison through the stored digest) and then changes nothing.
func (b *builder) addToolCall(id, raw string) error {
	fp := canonicalSum(raw)
	calls := b.st.tools.calls
	h := keyHash(id)
	if i := find(b.st.index, kindToolCall, id, h, calls, recordKey); i >= 0 {
		if calls.Get(i).fp != fp {
			return refuse(msgToolCallReused)
		}
		return nil
	}
	b.st.index.record(kindToolCall, h, calls.Len())
	b.tools().calls = calls.Append(&keyedRecord{id: b.intern(id), raw: b.intern(raw), fp: fp})
	return nil
}

// canonicalSum is the SHA-256 of the canonical form of a held encoding.
func canonicalSum(raw string) [32]byte {
	var buf [512]byte
	c, err := jsonvalue.CanonicalText(buf[:0], unsafe.Slice(unsafe.StringData(raw), len(raw)))
	if err != nil {
		panic("events: held encoding does not parse: " + err.Error()) // unreachable
	}
	return sha256.Sum256(c)
}

func (b *builder) knownCall(id string) bool {
	return find(b.st.index, kindToolCall, id, keyHash(id), b.st.tools.calls, recordKey) >= 0
}

// upsertProgress stores the latest progress content of a known call.
func (b *builder) upsertProgress(id string, content string) error {
	if !b.knownCall(id) {
		return refuse(msgProgressNoCall)
	}
	list := b.st.tools.progress
	h := keyHash(id)
	if i := find(b.st.index, kindProgress, id, h, list, progressKey); i >= 0 {
		b.tools().progress = list.Set(i, &stateProgress{id: list.Get(i).id, content: b.intern(content)})
		return nil
	}
	b.st.index.record(kindProgress, h, list.Len())
	b.tools().progress = list.Append(&stateProgress{id: b.intern(id), content: b.intern(content)})
	return nil
}

// upsertOutcome stores a result (toolResults) or error (toolErrors) record of a known call by
// toolCallId.
func (b *builder) upsertOutcome(isError bool, id string, raw string) error {
	kind, list, msgNoCall := kindResult, b.st.tools.results, msgResultNoCall
	if isError {
		kind, list, msgNoCall = kindError, b.st.tools.errors, msgErrorNoCall
	}
	if !b.knownCall(id) {
		return refuse(msgNoCall)
	}
	h := keyHash(id)
	if i := find(b.st.index, kind, id, h, list, recordKey); i >= 0 {
		list = list.Set(i, &keyedRecord{id: list.Get(i).id, raw: b.intern(raw)})
	} else {
		b.st.index.record(kind, h, list.Len())
		list = list.Append(&keyedRecord{id: b.intern(id), raw: b.intern(raw)})
	}
	if isError {
		b.tools().errors = list
	} else {
		b.tools().results = list
	}
	return nil
}

func (b *builder) requireInterrupt(id, raw string) error {
	if b.st.meta.interrupt != "" {
		return refuse(msgInterruptPending)
	}
	m := b.meta()
	m.interrupt = b.intern(raw)
	m.interruptID = b.intern(id)
	m.resolution = nil
	b.st.status = StatusWaiting
	return nil
}

func (b *builder) resolveInterrupt(id, decisions string) error {
	if b.st.meta.interrupt == "" || b.st.meta.interruptID != id {
		return refuse(msgInterruptMismatch)
	}
	m := b.meta()
	m.resolution = &resolution{interruptID: m.interruptID, decisions: b.intern(decisions)}
	m.interrupt = ""
	m.interruptID = ""
	b.st.status = StatusRunning
	return nil
}

// complete, fail and cancel apply the terminal events; usage and limit are encodings, ""
// when the event has none (then the state's value stays).
func (b *builder) complete(finishReason, usage, limit string) {
	b.st.status = StatusCompleted
	m := b.meta()
	m.finishReason = someString(b.intern(finishReason))
	if usage != "" {
		m.usage = b.intern(usage)
	}
	if limit != "" {
		m.limit = b.intern(limit)
	}
}

func (b *builder) fail(code, limit string) {
	b.st.status = StatusFailed
	m := b.meta()
	m.errorCode = someString(b.intern(code))
	if limit != "" {
		m.limit = b.intern(limit)
	}
}

func (b *builder) cancel(reason string, hasReason bool, limit string) {
	b.st.status = StatusCancelled
	m := b.meta()
	m.cancellationReason = optString{}
	if hasReason {
		m.cancellationReason = someString(b.intern(reason))
	}
	if limit != "" {
		m.limit = b.intern(limit)
	}
}
