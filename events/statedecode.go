package events

import (
	"crypto/sha256"
	"math"
	"strings"
	"unsafe"

	"github.com/agentwire/agentwire/jsonvalue"
)

// stateLabel is the label of DecodeReducerState's strict parse and the root of its paths.
const stateLabel = "Agent reducer state"

// stateMembers are the members of §8.1, in order.
var stateMembers = [...]string{
	"protocolVersion", "runId", "sessionId", "status", "messages", "toolCalls", "toolProgress",
	"toolResults", "toolErrors", "interrupt", "interruptResolution", "usage", "limit",
	"finishReason", "errorCode", "cancellationReason", "lastSequence", "lastLogicalSequence",
	"lastPhaseId", "eventIds", "eventFingerprints",
}

func invalidMember(name string) error {
	return &ValidationError{Message: stateLabel + "." + name + " is invalid."}
}

// DecodeReducerState rebuilds a state from its JSON form (events.md §8.6) so that it behaves
// exactly like the state that was marshalled under further [Reduce] calls, and marshals to
// equal JSON.
//
// The text is parsed strictly (§3.4, label `Agent reducer state`). Then, member by member in
// the §8.1 order, the first fault is returned:
//
//   - not an object → `Agent reducer state must be a JSON object.` (*JSONValidationError);
//   - a member missing or of the wrong JSON type, a `status` outside the six values, a
//     `protocolVersion` that is neither null nor a non-negative safe integer, a malformed list
//     entry (`messages` and `toolProgress` entries are exactly {messageId, role, content} and
//     {toolCallId, content}; `interruptResolution` is exactly {interruptId, decisions}), a key
//     (message ID, tool-call ID) repeated within one list, `eventIds` with repeats or
//     not equal as a set to the keys of `eventFingerprints` (reported for `eventIds`, when
//     `eventFingerprints` is an object), or a fingerprint not matching `sha256:` + 64 lowercase
//     hex digits → `Agent reducer state.<member> is invalid.`
//     (*ValidationError);
//   - nested content parts and records are checked with the validators of §6–§7 at paths
//     under `Agent reducer state.<member>`, e.g.
//     `Agent reducer state.messages[0].content[1].type is unsupported.`;
//   - after the 21 members, a member outside §8.1 → `Agent reducer state.<name> is invalid.`
//
// Depth (project-defined): the state holds event data (content parts, tool records,
// interrupts, decisions, usage, limits) up to three levels deeper than the events that carried
// it, and every event may nest MaxJSONDepth levels (§3.3). So that "Marshal → decode → marshal
// MUST reproduce equal JSON" holds for every state the reducer can produce, the text is parsed
// with a limit of [MaxStateDepth] levels, and each value that came from an event is held to
// the depth that event allowed it (the table in statedepth.go): a deeper one, which no run can
// produce, gets the §3.3 fault `<path> exceeds the maximum nesting depth of 128.` at its first
// container past that depth, checked before the value's own validator.
//
// On error the initial state is returned.
func DecodeReducerState(data []byte) (ReducerState, error) {
	v, err := jsonvalue.ParseDeep(data, stateLabel, MaxStateDepth)
	if err != nil {
		return ReducerState{}, err
	}
	o, ok := v.(*Object)
	if !ok {
		return ReducerState{}, &JSONValidationError{Path: stateLabel, Message: stateLabel + " must be a JSON object."}
	}
	st, err := decodeState(o)
	if err != nil {
		return ReducerState{}, err
	}
	return ReducerState{st: st}, nil
}

// stateDecoder copies the strings and encoded values of a decoded state into the state's
// arena, as Reduce does for the values of events: the parsed tree, and the copy of the text its
// strings are views of, do not outlive the decoding.
type stateDecoder struct {
	ar  arena
	buf []byte
}

// str returns a copy of s held by the arena.
func (dc *stateDecoder) str(s string) string {
	if len(s) > arenaMaxString {
		return strings.Clone(s) // intern would keep s, a view of the parsed text
	}
	var v string
	dc.ar, v = dc.ar.intern(s)
	return v
}

// raw returns the encoding of a decoded value (what the event that carried it held:
// AppendEncoded is a fixed point on encoded text), held by the arena.
func (dc *stateDecoder) raw(v any) string {
	dc.buf = jsonvalue.AppendEncoded(dc.buf[:0], v)
	return dc.str(unsafe.String(unsafe.SliceData(dc.buf), len(dc.buf)))
}

func decodeState(o *Object) (*state, error) {
	var dc stateDecoder
	st, err := dc.state(o)
	if err != nil {
		return nil, err
	}
	st.arena = dc.ar
	return st, nil
}

func (dc *stateDecoder) state(o *Object) (*state, error) {
	st := &state{meta: &stateMeta{}, tools: &stateTools{}, hotIdx: -1}
	meta, tools := st.meta, st.tools
	var eventIDs []string
	for _, name := range stateMembers {
		v, ok := o.Get(name)
		if !ok {
			return nil, invalidMember(name)
		}
		var err error
		switch name {
		case "protocolVersion":
			if v != nil {
				f, isNum := v.(float64)
				if !isNum || f < 0 || f > jsonvalue.MaxSafeInteger || f != math.Trunc(f) {
					return nil, invalidMember(name)
				}
				meta.protocolVersion, meta.hasProtocolVersion = positiveZero(f), true
			}
		case "runId":
			meta.runID, err = dc.optString(v, name)
		case "sessionId":
			meta.sessionID, err = dc.optString(v, name)
		case "status":
			s, isStr := v.(string)
			if !isStr || !validStatus(s) {
				return nil, invalidMember(name)
			}
			st.status = statusOf(s) // the constant, not a view of the parsed text
		case "messages":
			st.messages, err = dc.messages(v)
		case "toolCalls":
			tools.calls, err = dc.records(v, name, func(x any, at string) (string, error) {
				r, err := checkToolCallRecord(x, at)
				return r.ToolCallID, err
			}, true)
		case "toolProgress":
			tools.progress, err = dc.progress(v)
		case "toolResults":
			tools.results, err = dc.records(v, name, func(x any, at string) (string, error) {
				r, err := checkToolResultRecord(x, at)
				return r.ToolCallID, err
			}, false)
		case "toolErrors":
			tools.errors, err = dc.records(v, name, func(x any, at string) (string, error) {
				r, err := checkToolErrorRecord(x, at)
				return r.ToolCallID, err
			}, false)
		case "interrupt":
			if v != nil {
				if err := checkHeldDepth(v, stateLabel+"."+name, topInState, topShift); err != nil {
					return nil, err
				}
				in, err := checkInterrupt(v, stateLabel+"."+name)
				if err != nil {
					return nil, err
				}
				meta.interrupt, meta.interruptID = dc.raw(in.Raw), dc.str(in.InterruptID)
			}
		case "interruptResolution":
			if v != nil {
				r, isObj := v.(*Object)
				if !isObj || r.Len() != 2 {
					return nil, invalidMember(name)
				}
				id, okID := memberString(r, "interruptId")
				d, _ := r.Get("decisions")
				decisions, okD := d.([]any)
				if !okID || !okD {
					return nil, invalidMember(name)
				}
				if err := checkHeldDepth(decisions, stateLabel+"."+name+".decisions", decisionsInState, decisionsShift); err != nil {
					return nil, err
				}
				meta.resolution = &resolution{interruptID: dc.str(id), decisions: dc.raw(decisions)}
			}
		case "usage":
			if v != nil {
				if err := checkHeldDepth(v, stateLabel+"."+name, topInState, topShift); err != nil {
					return nil, err
				}
				u, err := checkUsage(v, stateLabel+"."+name)
				if err != nil {
					return nil, err
				}
				meta.usage = dc.raw(u.Raw)
			}
		case "limit":
			if v != nil {
				if err := checkHeldDepth(v, stateLabel+"."+name, topInState, topShift); err != nil {
					return nil, err
				}
				l, err := checkLimit(v, stateLabel+"."+name)
				if err != nil {
					return nil, err
				}
				meta.limit = dc.raw(l.Raw)
			}
		case "finishReason":
			meta.finishReason, err = dc.optString(v, name)
		case "errorCode":
			meta.errorCode, err = dc.optString(v, name)
		case "cancellationReason":
			meta.cancellationReason, err = dc.optString(v, name)
		case "lastSequence", "lastLogicalSequence":
			f, isNum := v.(float64)
			if !isNum {
				return nil, invalidMember(name)
			}
			if name == "lastSequence" {
				st.lastSequence = positiveZero(f)
			} else {
				st.lastLogicalSequence = positiveZero(f)
			}
		case "lastPhaseId":
			meta.lastPhaseID, err = dc.optString(v, name)
		case "eventIds":
			if eventIDs, err = decodeEventIDs(v); err == nil {
				fps, _ := o.Get("eventFingerprints")
				err = checkEventIDSet(eventIDs, fps)
			}
		case "eventFingerprints":
			st.events, err = dc.fingerprints(v, eventIDs)
		}
		if err != nil {
			return nil, err
		}
	}
	if o.Len() != len(stateMembers) {
		for _, m := range o.Members() {
			if !isStateMember(m.Name) {
				return nil, invalidMember(m.Name)
			}
		}
	}
	st.index = buildIndex(st)
	return st, nil
}

// positiveZero folds -0 into 0 (they are equal JSON numbers, §3.1).
func positiveZero(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

func isStateMember(name string) bool {
	for _, m := range stateMembers {
		if m == name {
			return true
		}
	}
	return false
}

func memberString(o *Object, name string) (string, bool) {
	v, ok := o.Get(name)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

func (dc *stateDecoder) optString(v any, name string) (optString, error) {
	if v == nil {
		return optString{}, nil
	}
	s, ok := v.(string)
	if !ok {
		return optString{}, invalidMember(name)
	}
	return someString(dc.str(s)), nil
}

// decodeParts checks a content array at path (each element a content part, §6, held at state
// depth partInState with the given extra depth, see checkHeldDepth).
func decodeParts(v any, at string, shift int) ([]any, bool, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false, nil
	}
	for i, p := range arr {
		path := jsonvalue.IndexPath(at, i)
		if err := checkHeldDepth(p, path, partInState, shift); err != nil {
			return nil, true, err
		}
		if _, err := checkContentPart(p, path); err != nil {
			return nil, true, err
		}
	}
	return arr, true, nil
}

func (dc *stateDecoder) messages(v any) (vec[*stateMessage], error) {
	const name = "messages"
	var out vec[*stateMessage]
	arr, ok := v.([]any)
	if !ok {
		return out, invalidMember(name)
	}
	seen := make(map[string]struct{}, len(arr))
	for i, x := range arr {
		m, isObj := x.(*Object)
		if !isObj || m.Len() != 3 {
			return out, invalidMember(name)
		}
		id, okID := memberString(m, "messageId")
		role, okRole := memberString(m, "role")
		if !okID || !okRole || !validRole(role) {
			return out, invalidMember(name)
		}
		if _, dup := seen[id]; dup {
			return out, invalidMember(name)
		}
		seen[id] = struct{}{}
		c, _ := m.Get("content")
		parts, isArr, err := decodeParts(c, jsonvalue.MemberPath(jsonvalue.IndexPath(stateLabel+"."+name, i), "content"), partShift)
		if !isArr {
			return out, invalidMember(name)
		}
		if err != nil {
			return out, err
		}
		var content vec[string]
		for _, p := range parts {
			content = content.Append(dc.raw(p))
		}
		out = out.Append(&stateMessage{id: dc.str(id), role: roleOf(role), content: content})
	}
	return out, nil
}

// roleOf returns the constant of a valid role.
func roleOf(r string) Role {
	switch Role(r) {
	case RoleUser:
		return RoleUser
	case RoleAssistant:
		return RoleAssistant
	}
	return RoleTool
}

func validRole(r string) bool {
	switch Role(r) {
	case RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// decodeRecords checks a list of tool records with check (which returns the toolCallId) and
// refuses a repeated toolCallId; withFingerprint keeps each record's fingerprint (toolCalls).
func (dc *stateDecoder) records(v any, name string, check func(any, string) (string, error), withFingerprint bool) (vec[*keyedRecord], error) {
	var out vec[*keyedRecord]
	arr, ok := v.([]any)
	if !ok {
		return out, invalidMember(name)
	}
	seen := make(map[string]struct{}, len(arr))
	for i, x := range arr {
		path := jsonvalue.IndexPath(stateLabel+"."+name, i)
		if err := checkHeldDepth(x, path, recordInState, recordShift); err != nil {
			return out, err
		}
		id, err := check(x, path)
		if err != nil {
			return out, err
		}
		if _, dup := seen[id]; dup {
			return out, invalidMember(name)
		}
		seen[id] = struct{}{}
		r := &keyedRecord{id: dc.str(id), raw: dc.raw(x)}
		if withFingerprint {
			r.fp = sha256.Sum256(jsonvalue.AppendCanonical(nil, x))
		}
		out = out.Append(r)
	}
	return out, nil
}

func (dc *stateDecoder) progress(v any) (vec[*stateProgress], error) {
	const name = "toolProgress"
	var out vec[*stateProgress]
	arr, ok := v.([]any)
	if !ok {
		return out, invalidMember(name)
	}
	seen := make(map[string]struct{}, len(arr))
	for i, x := range arr {
		p, isObj := x.(*Object)
		if !isObj || p.Len() != 2 {
			return out, invalidMember(name)
		}
		id, okID := memberString(p, "toolCallId")
		if !okID {
			return out, invalidMember(name)
		}
		if _, dup := seen[id]; dup {
			return out, invalidMember(name)
		}
		seen[id] = struct{}{}
		c, _ := p.Get("content")
		// The parts of a progress entry sit one level below its content array, which sits
		// progressShift deeper than in tool.progress; so do they.
		parts, isArr, err := decodeParts(c, jsonvalue.MemberPath(jsonvalue.IndexPath(stateLabel+"."+name, i), "content"), progressShift)
		if !isArr {
			return out, invalidMember(name)
		}
		if err != nil {
			return out, err
		}
		out = out.Append(&stateProgress{id: dc.str(id), content: dc.raw(parts)})
	}
	return out, nil
}

func decodeEventIDs(v any) ([]string, error) {
	const name = "eventIds"
	arr, ok := v.([]any)
	if !ok {
		return nil, invalidMember(name)
	}
	ids := make([]string, len(arr))
	seen := make(map[string]struct{}, len(arr))
	for i, x := range arr {
		id, isStr := x.(string)
		if !isStr {
			return nil, invalidMember(name)
		}
		if _, dup := seen[id]; dup {
			return nil, invalidMember(name)
		}
		seen[id] = struct{}{}
		ids[i] = id
	}
	return ids, nil
}

// checkEventIDSet refuses eventIds that are not equal as a set to the keys of
// eventFingerprints (§8.6 names `eventIds` for this fault). It applies only when
// eventFingerprints is an object; otherwise that member's own check reports it.
func checkEventIDSet(ids []string, fps any) error {
	o, ok := fps.(*Object)
	if !ok {
		return nil
	}
	// ids has no repeats and member names are unique: equal as sets exactly when the sizes
	// match and every ID is a key.
	if o.Len() != len(ids) {
		return invalidMember("eventIds")
	}
	for _, id := range ids {
		if !o.Has(id) {
			return invalidMember("eventIds")
		}
	}
	return nil
}

// decodeFingerprints checks the fingerprint values (`sha256:` + 64 lowercase hex digits) and
// pairs them with ids, whose set equality with the keys checkEventIDSet has established.
func (dc *stateDecoder) fingerprints(v any, ids []string) (vec[eventEntry], error) {
	const name = "eventFingerprints"
	var out vec[eventEntry]
	o, ok := v.(*Object)
	if !ok {
		return out, invalidMember(name)
	}
	for _, m := range o.Members() {
		fp, isStr := m.Value.(string)
		if !isStr || !isFingerprint(fp) {
			return out, invalidMember(name)
		}
	}
	for _, id := range ids {
		x, _ := o.Get(id)
		out = out.Append(eventEntry{id: dc.str(id), fp: parseFingerprint(x.(string))})
	}
	return out, nil
}

// isFingerprint matches ^sha256:[0-9a-f]{64}$.
func isFingerprint(s string) bool {
	if len(s) != 7+64 || s[:7] != "sha256:" {
		return false
	}
	for i := 7; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// buildIndex records the position of every key of a decoded state in a fresh shared index.
func buildIndex(st *state) *keyIndex {
	x := newKeyIndex()
	st.events.All(func(i int, e eventEntry) bool { x.tables[kindEvent].insert(keyHash(e.id), i); return true })
	st.messages.All(func(i int, m *stateMessage) bool { x.tables[kindMessage].insert(keyHash(m.id), i); return true })
	t := st.tools
	t.calls.All(func(i int, r *keyedRecord) bool { x.tables[kindToolCall].insert(keyHash(r.id), i); return true })
	t.progress.All(func(i int, p *stateProgress) bool { x.tables[kindProgress].insert(keyHash(p.id), i); return true })
	t.results.All(func(i int, r *keyedRecord) bool { x.tables[kindResult].insert(keyHash(r.id), i); return true })
	t.errors.All(func(i int, r *keyedRecord) bool { x.tables[kindError].insert(keyHash(r.id), i); return true })
	return x
}
