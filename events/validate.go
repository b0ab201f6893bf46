package events

import (
	"math"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Labels of the event entry points (events.md §4.2, §5.2).
const (
	eventLabel      = "Agent event"
	eventInputLabel = "Agent event input"
)

// ParseEvent parses strict JSON text (events.md §3.4, label `Agent event`) and validates it as an
// event (§4, §5): ParseJSON followed by [CloneEvent], so text faults precede all other faults.
//
// It is the hot path of ingesting and reducing long runs and reads the text once: a
// jsonvalue.Doc checks it as ParseJSON does while writing its encoding and a flat node table,
// the envelope and payload rules run on that table, and the fingerprint is computed from the
// same table (eventdoc.go). A valid event costs one allocation, the copy of its encoding.
func ParseEvent(data []byte) (Event, error) { return parseEventText(data) }

// CloneEvent validates a Go value as an event, in exactly the order of events.md §4.2: the whole
// value by CloneJSONObject(v, "Agent event") (strict-JSON faults, `Agent event must be a JSON
// object.`), then protocolVersion, eventId, runId, sessionId, phaseId, timestamp,
// logicalSequence, sequence, and finally type and payload (§5–§7). The first fault is returned.
// The Event holds the validated clone, unknown members included.
func CloneEvent(v any) (Event, error) {
	o, err := jsonvalue.CloneObject(v, eventLabel)
	if err != nil {
		return Event{}, err
	}
	if err := validateEvent(o); err != nil {
		return Event{}, err
	}
	return eventFromObject(o)
}

// ValidateEventInput checks the payload of an event under construction (events.md §5.2): v must
// be a JSON object (else `Agent event must be an object.`, a *ValidationError), then the payload
// rules of §5.3–§7 apply. Envelope members are neither required nor checked, except that a
// `run.started` input may hold no member but `type` (`Agent event contains unsupported fields.`).
// Members are JSON-checked only where a payload rule clones them (record input, output,
// custom-part data, action input, interrupt payload, decisions); other members, unknown ones
// included, are not inspected.
func ValidateEventInput(v any) error {
	o, ok := rawObject(v)
	if !ok {
		return &ValidationError{Message: eventLabel + " must be an object."}
	}
	var f fields
	f.fill(o)
	ck := checker{raw: true}
	_, _, err := ck.payload(&f, false)
	return err
}

// CloneEventInput clones v by CloneJSONObject(v, "Agent event input") and applies the payload
// rules of events.md §5.3–§7 to the clone (paths start with `Agent event`); it returns the clone.
// As for [ValidateEventInput], envelope members are not checked, and a `run.started` input may
// hold no member but `type`.
func CloneEventInput(v any) (*Object, error) {
	o, err := jsonvalue.CloneObject(v, eventInputLabel)
	if err != nil {
		return nil, err
	}
	var f fields
	f.fill(objView{o: o})
	ck := checker{}
	if _, _, err := ck.payload(&f, false); err != nil {
		return nil, err
	}
	return o, nil
}

func notJSONObject(label string) error {
	return &JSONValidationError{Path: label, Message: label + jsonvalue.SuffixNotObject}
}

// fields holds the members event validation looks at, collected in one pass over the object;
// n counts all members and envelope the envelope members present.
type fields struct {
	protocolVersion, eventID, runID, sessionID, phaseID, timestamp slot
	logicalSequence, sequence, typ                                 slot

	messageID, role, part, content, toolCall, toolCallID, result, error slot
	interrupt, interruptID, decisions, usage, finishReason, limit       slot
	code, message, reason                                               slot

	n, envelope int
}

func (f *fields) fill(o objView) {
	if o.m != nil {
		for k, v := range o.m {
			f.set(k, v)
		}
		return
	}
	for _, m := range o.o.Members() {
		f.set(m.Name, m.Value)
	}
}

func (f *fields) set(name string, v any) {
	f.n++
	s := slot{v, true}
	switch name {
	case "protocolVersion":
		f.protocolVersion = s
	case "eventId":
		f.eventID = s
	case "runId":
		f.runID = s
	case "sessionId":
		f.sessionID = s
	case "phaseId":
		f.phaseID = s
	case "timestamp":
		f.timestamp = s
	case "logicalSequence":
		f.logicalSequence = s
	case "sequence":
		f.sequence = s
	default:
		f.setPayload(name, s)
		return
	}
	f.envelope++
}

func (f *fields) setPayload(name string, s slot) {
	switch name {
	case "type":
		f.typ = s
	case "messageId":
		f.messageID = s
	case "role":
		f.role = s
	case "part":
		f.part = s
	case "content":
		f.content = s
	case "toolCall":
		f.toolCall = s
	case "toolCallId":
		f.toolCallID = s
	case "result":
		f.result = s
	case "error":
		f.error = s
	case "interrupt":
		f.interrupt = s
	case "interruptId":
		f.interruptID = s
	case "decisions":
		f.decisions = s
	case "usage":
		f.usage = s
	case "finishReason":
		f.finishReason = s
	case "limit":
		f.limit = s
	case "code":
		f.code = s
	case "message":
		f.message = s
	case "reason":
		f.reason = s
	}
}

// validateEvent validates the envelope (events.md §4.2 rows 1–8) and the payload of a
// value-model object with the value-model checker: CloneEvent's verdict, and the oracle the
// one-pass path of ParseEvent is tested against.
func validateEvent(o *Object) error {
	var f fields
	f.fill(objView{o: o})
	if pv, ok := f.protocolVersion.v.(float64); !ok || pv != ProtocolVersion {
		return &ValidationError{Message: "Unsupported Agent event protocol version: " + displayVersion(f.protocolVersion) + "."}
	}
	for _, m := range [...]struct {
		s   slot
		msg string
	}{
		{f.eventID, "Agent event.eventId must be a string."},
		{f.runID, "Agent event.runId must be a string."},
		{f.sessionID, "Agent event.sessionId must be a string."},
		{f.phaseID, "Agent event.phaseId must be a string."},
		{f.timestamp, "Agent event.timestamp must be a string."},
	} {
		if _, ok := m.s.v.(string); !ok {
			return &ValidationError{Message: m.msg}
		}
	}
	if _, ok := safeInteger(f.logicalSequence.v); !ok {
		return &ValidationError{Message: "Agent event.logicalSequence must be a non-negative safe integer."}
	}
	if _, ok := safeInteger(f.sequence.v); !ok {
		return &ValidationError{Message: "Agent event.sequence must be a non-negative safe integer."}
	}
	ck := checker{}
	_, _, err := ck.payload(&f, true)
	return err
}

// safeInteger accepts a non-negative safe integer: a number, integral, 0 ≤ n ≤ 2^53−1 (`-0`
// included, as 0).
func safeInteger(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok {
		return 0, false
	}
	return safeFloat(f)
}

// safeFloat is safeInteger for a number.
func safeFloat(f float64) (int64, bool) {
	if !(f >= 0 && f <= jsonvalue.MaxSafeInteger) || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}

// displayVersion formats a protocolVersion for the unsupported-version message as ECMAScript
// String() does (events.md §4.1, §12(h)).
func displayVersion(s slot) string {
	if !s.ok {
		return "undefined"
	}
	var b strings.Builder
	appendDisplay(&b, s.v)
	return b.String()
}

func appendDisplay(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		b.WriteString(jsonvalue.FormatNumber(x))
	case string:
		b.WriteString(x)
	case []any:
		// Array.prototype.join: elements separated by `,`, null elements as empty text.
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if e != nil {
				appendDisplay(b, e)
			}
		}
	default:
		b.WriteString("[object Object]")
	}
}

// Payload member paths and messages of events.md §5.3.
var (
	pathPart      = pathAt(eventLabel + ".part")
	pathContent   = pathAt(eventLabel + ".content")
	pathToolCall  = pathAt(eventLabel + ".toolCall")
	pathResult    = pathAt(eventLabel + ".result")
	pathError     = pathAt(eventLabel + ".error")
	pathInterrupt = pathAt(eventLabel + ".interrupt")
	pathUsage     = pathAt(eventLabel + ".usage")
	pathLimit     = pathAt(eventLabel + ".limit")
	pathDecisions = pathAt(eventLabel + ".decisions")
)

// member checks a required string payload member.
func (c *checker) member(s slot, name string) (string, error) {
	v, ok := c.str(s.v)
	if !ok {
		return "", &ValidationError{Message: eventLabel + "." + name + " must be a string."}
	}
	return v, nil
}

func (c *checker) role(s slot) (Role, error) {
	r, _ := c.str(s.v)
	return parseRole(r)
}

// parseRole maps a `role` value to its Role constant (never to s itself, which may be a view
// of a reused buffer); both checkers use it.
func parseRole(s string) (Role, error) {
	for _, r := range [...]Role{RoleUser, RoleAssistant, RoleTool} {
		if Role(s) == r {
			return r, nil
		}
	}
	return "", &ValidationError{Message: "Agent event role is unsupported."}
}

// content checks a required ContentPart[] member (`content`).
func (c *checker) content(s slot) ([]ContentPart, []any, error) {
	arr, ok := c.array(s.v)
	if !ok {
		return nil, nil, &ValidationError{Message: eventLabel + ".content must be an array."}
	}
	var parts []ContentPart
	if !c.raw {
		parts = make([]ContentPart, len(arr))
	}
	for i, e := range arr {
		p, err := c.part(e, pathContent.elem(i))
		if err != nil {
			return nil, nil, err
		}
		if !c.raw {
			parts[i] = p
		}
	}
	if c.raw {
		return nil, nil, nil
	}
	return parts, arr, nil
}

// optLimit checks the optional `limit` member; nil when absent.
func (c *checker) optLimit(s slot) (*LimitInfo, error) {
	if !s.ok {
		return nil, nil
	}
	l, err := c.limit(s.v, pathLimit)
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// payload applies the payload rules of events.md §5.3 in order: type, then the type's members in
// the order of §4.3. withEnvelope allows the eight envelope members on run.started (CloneEvent
// and ParseEvent only, §5.1).
func (c *checker) payload(f *fields, withEnvelope bool) (EventType, Payload, error) {
	t, ok := c.str(f.typ.v)
	if !ok {
		return "", nil, &ValidationError{Message: eventLabel + ".type must be a string."}
	}
	switch EventType(t) {
	case EventRunStarted:
		other := f.n - 1
		if withEnvelope {
			other -= f.envelope
		}
		if other > 0 {
			return "", nil, &ValidationError{Message: eventLabel + " contains unsupported fields."}
		}
		return EventRunStarted, RunStarted{}, nil

	case EventMessageStarted:
		id, err := c.member(f.messageID, "messageId")
		if err != nil {
			return "", nil, err
		}
		role, err := c.role(f.role)
		if err != nil {
			return "", nil, err
		}
		return EventMessageStarted, MessageStarted{MessageID: id, Role: role}, nil

	case EventMessagePartDelta:
		id, err := c.member(f.messageID, "messageId")
		if err != nil {
			return "", nil, err
		}
		part, err := c.part(f.part.v, pathPart)
		if err != nil {
			return "", nil, err
		}
		return EventMessagePartDelta, MessagePartDelta{MessageID: id, Part: part}, nil

	case EventMessageCompleted:
		id, err := c.member(f.messageID, "messageId")
		if err != nil {
			return "", nil, err
		}
		role, err := c.role(f.role)
		if err != nil {
			return "", nil, err
		}
		parts, raw, err := c.content(f.content)
		if err != nil {
			return "", nil, err
		}
		return EventMessageCompleted, MessageCompleted{MessageID: id, Role: role, Content: parts, RawContent: raw}, nil

	case EventToolCalled:
		r, err := c.toolCall(f.toolCall.v, pathToolCall)
		if err != nil {
			return "", nil, err
		}
		return EventToolCalled, ToolCalled{ToolCall: r}, nil

	case EventToolProgress:
		id, err := c.member(f.toolCallID, "toolCallId")
		if err != nil {
			return "", nil, err
		}
		parts, raw, err := c.content(f.content)
		if err != nil {
			return "", nil, err
		}
		return EventToolProgress, ToolProgress{ToolCallID: id, Content: parts, RawContent: raw}, nil

	case EventToolCompleted:
		r, err := c.toolResult(f.result.v, pathResult)
		if err != nil {
			return "", nil, err
		}
		return EventToolCompleted, ToolCompleted{Result: r}, nil

	case EventToolFailed:
		r, err := c.toolError(f.error.v, pathError)
		if err != nil {
			return "", nil, err
		}
		return EventToolFailed, ToolFailed{Error: r}, nil

	case EventInterruptRequired:
		in, err := c.interrupt(f.interrupt.v, pathInterrupt)
		if err != nil {
			return "", nil, err
		}
		return EventInterruptRequired, InterruptRequired{Interrupt: in}, nil

	case EventInterruptResolved:
		id, err := c.member(f.interruptID, "interruptId")
		if err != nil {
			return "", nil, err
		}
		decisions, ok := c.array(f.decisions.v)
		if !ok {
			return "", nil, &ValidationError{Message: eventLabel + ".decisions must be an array."}
		}
		if err := c.jsonValue(decisions, pathDecisions, ""); err != nil {
			return "", nil, err
		}
		if c.raw {
			decisions = nil
		}
		return EventInterruptResolved, InterruptResolved{InterruptID: id, Decisions: decisions}, nil

	case EventUsageUpdated:
		u, err := c.usage(f.usage.v, pathUsage)
		if err != nil {
			return "", nil, err
		}
		return EventUsageUpdated, UsageUpdated{Usage: u}, nil

	case EventRunCompleted:
		reason, err := c.member(f.finishReason, "finishReason")
		if err != nil {
			return "", nil, err
		}
		parts, raw, err := c.content(f.content)
		if err != nil {
			return "", nil, err
		}
		p := RunCompleted{FinishReason: reason, Content: parts, RawContent: raw}
		if f.usage.ok {
			u, err := c.usage(f.usage.v, pathUsage)
			if err != nil {
				return "", nil, err
			}
			p.Usage = &u
		}
		if p.Limit, err = c.optLimit(f.limit); err != nil {
			return "", nil, err
		}
		return EventRunCompleted, p, nil

	case EventRunFailed:
		code, err := c.member(f.code, "code")
		if err != nil {
			return "", nil, err
		}
		msg, err := c.member(f.message, "message")
		if err != nil {
			return "", nil, err
		}
		l, err := c.optLimit(f.limit)
		if err != nil {
			return "", nil, err
		}
		return EventRunFailed, RunFailed{Code: code, Message: msg, Limit: l}, nil

	case EventRunCancelled:
		var p RunCancelled
		if f.reason.ok {
			r, err := c.member(f.reason, "reason")
			if err != nil {
				return "", nil, err
			}
			p.Reason = &r
		}
		l, err := c.optLimit(f.limit)
		if err != nil {
			return "", nil, err
		}
		p.Limit = l
		return EventRunCancelled, p, nil
	}
	return "", nil, &ValidationError{Message: "Unknown Agent event type: " + t + "."}
}
