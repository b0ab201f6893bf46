package events

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"unsafe"

	"github.com/agentwire/agentwire/jsonvalue"
)

// This file is ParseEvent's one-pass path (events.md §3.4, §4–§7, §3.7). The text is read once
// by a jsonvalue.Doc, which checks it exactly as ParseJSON does and writes its encoding and a
// flat node table; the envelope and payload rules then run on the node table in the order of
// §4.2 and §5.3–§7, with the messages of the value-model checker in content.go and records.go
// (FuzzParseEventDifferential holds the two to the same verdicts); the fingerprint is SHA-256
// over the canonical form rendered from the same table. A valid event costs one allocation,
// the copy of its encoding, of which the strings the Event keeps are views (a string whose
// encoding holds an escape, such as a quote or a newline, is decoded into a copy of its own).

// eventScratch is the pooled working memory of one ParseEvent call.
type eventScratch struct {
	doc   jsonvalue.Doc
	canon []byte
}

var eventScratchPool = sync.Pool{New: func() any { return &eventScratch{canon: make([]byte, 0, 1024)} }}

func getEventScratch() *eventScratch { return eventScratchPool.Get().(*eventScratch) }

func (sc *eventScratch) release() {
	sc.doc.Clear() // drops the input and the buffers of a huge document
	if cap(sc.canon) > 1<<16 {
		sc.canon = make([]byte, 0, 1024)
	}
	eventScratchPool.Put(sc)
}

// parseEventText is ParseEvent: strict parse, validation, fingerprint, Event.
func parseEventText(data []byte) (Event, error) {
	sc := getEventScratch()
	e, err := sc.parseEvent(data)
	sc.release()
	return e, err
}

// docFields holds the node of each member event validation looks at (-1: absent), by its
// position in memberNames, collected in one pass over the event object; n counts all members
// and envelope the envelope members present.
type docFields struct {
	slot        [len(memberNames)]int
	n, envelope int
}

// Positions in memberNames.
const (
	mProtocolVersion = iota
	mEventID
	mRunID
	mSessionID
	mPhaseID
	mTimestamp
	mLogicalSequence
	mSequence
	mType
	mMessageID
	mRole
	mPart
	mContent
	mToolCall
	mToolCallID
	mResult
	mError
	mInterrupt
	mInterruptID
	mDecisions
	mUsage
	mFinishReason
	mLimit
	mCode
	mMessage
	mReason
)

func (f *docFields) fill(d *jsonvalue.Doc) {
	for k := range f.slot {
		f.slot[k] = -1
	}
	f.n, f.envelope = 0, 0
	for c, end := 1, d.Next(0); c < end; c = d.Next(c) {
		f.n++
		// An encoded name that holds an escape is no name looked at here (none of them has
		// a character JSON escapes), so it is an unknown member.
		k := memberSlot(d.MemberName(c))
		if k < 0 {
			continue
		}
		if k < envelopeMembers {
			f.envelope++
		}
		f.slot[k] = c
	}
}

// memberNames are the members event validation looks at: the eight envelope members first,
// then those of §4.3 (the cases of docFields.fill, in order).
var memberNames = [...]string{
	"protocolVersion", "eventId", "runId", "sessionId", "phaseId", "timestamp", "logicalSequence", "sequence",
	"type", "messageId", "role", "part", "content", "toolCall", "toolCallId", "result", "error",
	"interrupt", "interruptId", "decisions", "usage", "finishReason", "limit", "code", "message", "reason",
}

// envelopeMembers is the number of envelope members at the head of memberNames.
const envelopeMembers = 8

// memberTable maps memberHash of each of memberNames to 1 + its position (0: none): a perfect
// hash, one probe and one string comparison per member instead of a search.
var memberTable = func() (t [64]uint8) {
	for i, name := range memberNames {
		h := memberHash(name)
		if t[h] != 0 {
			panic("events: memberHash collides on " + name + " and " + memberNames[t[h]-1])
		}
		t[h] = uint8(i + 1)
	}
	return t
}()

// memberHash is collision-free on memberNames (checked when memberTable is built).
func memberHash(name string) uint {
	return (uint(len(name))*5 + uint(name[0])*35 + uint(name[len(name)-1])) & 63
}

// memberSlot returns the position of name in memberNames, or -1.
func memberSlot(name string) int {
	if name == "" {
		return -1
	}
	if i := memberTable[memberHash(name)]; i != 0 && memberNames[i-1] == name {
		return int(i - 1)
	}
	return -1
}

// docChecker applies the payload rules of events.md §5–§7 to the nodes of a Doc; its methods
// mirror checker's (content.go, records.go) rule for rule and message for message.
type docChecker struct {
	d *jsonvalue.Doc
}

func (c docChecker) kind(i int) jsonvalue.Kind {
	if i < 0 {
		return jsonvalue.KindEnd // absent: of no JSON kind
	}
	return c.d.Kind(i)
}

func (c docChecker) isString(i int) bool { return c.kind(i) == jsonvalue.KindString }
func (c docChecker) isObject(i int) bool { return c.kind(i) == jsonvalue.KindObject }
func (c docChecker) isArray(i int) bool  { return c.kind(i) == jsonvalue.KindArray }

// member is Doc.Member for an object node i.
func (c docChecker) member(i int, name string) int { return c.d.Member(i, name) }

// optString checks an optional string member: absent is valid, anything present must be a
// string (a present null included, events.md §5.1).
func (c docChecker) optString(o int, name string, p path, suffix string) error {
	if s := c.member(o, name); s >= 0 && !c.isString(s) {
		return vErr(p, suffix)
	}
	return nil
}

// plainString returns the value of string node i when its encoding holds no escape (then it
// may equal one of the fixed names compared with it), else "".
func (c docChecker) plainString(i int) string {
	if !c.isString(i) {
		return ""
	}
	s, plain := c.d.StringView(i)
	if !plain {
		return ""
	}
	return s
}

// part validates one content part at p (events.md §6).
func (c docChecker) part(i int, p path) error {
	if !c.isObject(i) {
		return vErr(p, " must be a content part.")
	}
	t := c.member(i, "type")
	if !c.isString(t) {
		return vErr(p, " must be a content part.")
	}
	switch c.plainString(t) {
	case partText, partReasoning:
		if !c.isString(c.member(i, "text")) {
			return vErr(p, ".text must be a string.")
		}
	case partImage, partAudio, partVideo:
		return c.media(i, p)
	case partFile:
		if err := c.media(i, p); err != nil {
			return err
		}
		return c.optString(i, "name", p, ".name must be a string.")
	case partCitation:
		if !c.isString(c.member(i, "url")) {
			return vErr(p, ".url must be a string.")
		}
		return c.optString(i, "title", p, ".title must be a string.")
	case partToolCall:
		_, err := c.callBase(c.member(i, "toolCall"), p.with(".toolCall"))
		return err
	case partToolResult:
		return c.toolResult(c.member(i, "result"), p.with(".result"))
	case partCustom:
		if !c.isString(c.member(i, "name")) {
			return vErr(p, ".name must be a string.")
		}
		if c.member(i, "data") < 0 {
			return jErr(p, ".data", jsonvalue.SuffixNotSerializable)
		}
	default:
		return vErr(p, ".type is unsupported.")
	}
	return nil
}

// media applies the media-source rule and the member checks of image, audio, video and file
// parts (events.md §6).
func (c docChecker) media(i int, p path) error {
	url, data, fileID := c.member(i, "url"), c.member(i, "data"), c.member(i, "fileId")
	n := 0
	for _, s := range [3]int{url, data, fileID} {
		if s >= 0 {
			n++
		}
	}
	if n != 1 {
		return vErr(p, " must contain exactly one media source.")
	}
	switch {
	case url >= 0:
		if !c.isString(url) {
			return vErr(p, ".url must be a string.")
		}
	case data >= 0:
		if !c.isString(data) {
			return vErr(p, ".data must be a string.")
		}
	default:
		if !c.isString(fileID) {
			return vErr(p, ".fileId must be a string.")
		}
	}
	return c.optString(i, "mimeType", p, ".mimeType must be a string.")
}

// content checks a required ContentPart[] member at `Agent event.content`.
func (c docChecker) content(i int) error {
	if !c.isArray(i) {
		return &ValidationError{Message: eventLabel + ".content must be an array."}
	}
	for e, k := i+1, 0; k < c.d.Len(i); e, k = c.d.Next(e), k+1 {
		if err := c.part(e, pathContent.elem(k)); err != nil {
			return err
		}
	}
	return nil
}

// callBase checks the members every tool record starts with (toolCallId, name, input) and
// returns the toolCallId node.
func (c docChecker) callBase(i int, p path) (int, error) {
	if !c.isObject(i) {
		return -1, vErr(p, " must be an object.")
	}
	id := c.member(i, "toolCallId")
	if !c.isString(id) {
		return -1, vErr(p, ".toolCallId must be a string.")
	}
	if !c.isString(c.member(i, "name")) {
		return -1, vErr(p, ".name must be a string.")
	}
	if !c.isObject(c.member(i, "input")) {
		return -1, jErr(p, ".input", jsonvalue.SuffixNotObject)
	}
	return id, nil
}

// toolResult validates a ToolResultRecord at p.
func (c docChecker) toolResult(i int, p path) error {
	if _, err := c.callBase(i, p); err != nil {
		return err
	}
	if c.member(i, "output") < 0 {
		return jErr(p, ".output", jsonvalue.SuffixNotSerializable)
	}
	if s := c.member(i, "isError"); s >= 0 && c.kind(s) != jsonvalue.KindBool {
		return vErr(p, ".isError must be a boolean.")
	}
	return nil
}

// toolError validates a ToolErrorRecord at p.
func (c docChecker) toolError(i int, p path) error {
	if _, err := c.callBase(i, p); err != nil {
		return err
	}
	if !c.isString(c.member(i, "error")) {
		return vErr(p, ".error must be a string.")
	}
	return c.optString(i, "code", p, ".code must be a string.")
}

// interrupt validates an AgentInterrupt at p (events.md §7.2) and returns its interruptId
// node.
func (c docChecker) interrupt(i int, p path) (int, error) {
	if !c.isObject(i) {
		return -1, vErr(p, " must be an object.")
	}
	switch c.plainString(c.member(i, "kind")) {
	case InterruptKindToolApproval, InterruptKindCustom:
	default:
		return -1, vErr(p, ".kind is unsupported.")
	}
	id := c.member(i, "interruptId")
	if !c.isString(id) {
		return -1, vErr(p, ".interruptId must be a string.")
	}
	if !c.isString(c.member(i, "prompt")) {
		return -1, vErr(p, ".prompt must be a string.")
	}
	actions := c.member(i, "actions")
	if !c.isArray(actions) {
		return -1, vErr(p, ".actions must be an array.")
	}
	for a, k := actions+1, 0; k < c.d.Len(actions); a, k = c.d.Next(a), k+1 {
		at := path{base: p.String() + ".actions", idx: k}
		if !c.isObject(a) {
			return -1, vErr(at, " must be an object.")
		}
		if !c.isString(c.member(a, "id")) {
			return -1, vErr(at, ".id must be a string.")
		}
		if !c.isString(c.member(a, "name")) {
			return -1, vErr(at, ".name must be a string.")
		}
		if c.member(a, "input") < 0 {
			return -1, jErr(at, ".input", jsonvalue.SuffixNotSerializable)
		}
	}
	return id, nil
}

// usage validates an AgentUsage at p (events.md §7.3).
func (c docChecker) usage(i int, p path) error {
	if !c.isObject(i) {
		return vErr(p, " must be an object.")
	}
	if err := c.nonNegative(i, p, usageNumberKeys[:]); err != nil {
		return err
	}
	if err := c.optString(i, "model", p, ".model must be a string."); err != nil {
		return err
	}
	return c.optString(i, "provider", p, ".provider must be a string.")
}

// nonNegative checks the members of keys present in the object i, in order: each a finite
// non-negative number.
func (c docChecker) nonNegative(i int, p path, keys []numberKey) error {
	for _, k := range keys {
		s := c.member(i, k.name)
		if s < 0 {
			continue
		}
		if c.kind(s) != jsonvalue.KindNumber {
			return vErr(p, k.notFinite)
		}
		if c.d.Float(s) < 0 {
			return vErr(p, k.negative)
		}
	}
	return nil
}

// limit validates an AgentLimitInfo at p (events.md §7.4).
func (c docChecker) limit(i int, p path) error {
	if !c.isObject(i) {
		return vErr(p, " must be an object.")
	}
	if !c.isString(c.member(i, "kind")) {
		return vErr(p, ".kind must be a string.")
	}
	if err := c.nonNegative(i, p, limitNumberKeys[:]); err != nil {
		return err
	}
	return nil
}

// optLimit checks the optional `limit` member.
func (c docChecker) optLimit(i int) error {
	if i < 0 {
		return nil
	}
	return c.limit(i, pathLimit)
}

// stringMember checks a required string payload member.
func (c docChecker) stringMember(i int, name string) error {
	if !c.isString(i) {
		return &ValidationError{Message: eventLabel + "." + name + " must be a string."}
	}
	return nil
}

func (c docChecker) role(i int) (Role, error) { return parseRole(c.plainString(i)) }

// eventType maps the `type` string node to its constant ("" for no protocol-1 type). The
// constant, not the view of the scratch text, is what the Event keeps.
func (c docChecker) eventType(i int) EventType {
	t := EventType(c.plainString(i))
	for _, k := range EventTypes {
		if k == t {
			return k
		}
	}
	return ""
}

// docEvent is what validation found: the type and the nodes the Event keeps (-1: none).
type docEvent struct {
	typ        EventType
	role       Role
	key        int // see Event.key
	raw, limit int // see Event.raw, Event.limit
}

// check validates the event object (node 0 of c.d) in the order of events.md §4.2 and §5.3.
func (c docChecker) check(f *docFields) (docEvent, error) {
	d := c.d
	if pv := f.slot[mProtocolVersion]; c.kind(pv) != jsonvalue.KindNumber || d.Float(pv) != ProtocolVersion {
		s := slot{}
		if pv >= 0 {
			s = slot{v: d.Value(pv), ok: true}
		}
		return docEvent{}, &ValidationError{Message: "Unsupported Agent event protocol version: " + displayVersion(s) + "."}
	}
	switch {
	case !c.isString(f.slot[mEventID]):
		return docEvent{}, &ValidationError{Message: "Agent event.eventId must be a string."}
	case !c.isString(f.slot[mRunID]):
		return docEvent{}, &ValidationError{Message: "Agent event.runId must be a string."}
	case !c.isString(f.slot[mSessionID]):
		return docEvent{}, &ValidationError{Message: "Agent event.sessionId must be a string."}
	case !c.isString(f.slot[mPhaseID]):
		return docEvent{}, &ValidationError{Message: "Agent event.phaseId must be a string."}
	case !c.isString(f.slot[mTimestamp]):
		return docEvent{}, &ValidationError{Message: "Agent event.timestamp must be a string."}
	case !c.safeInteger(f.slot[mLogicalSequence]):
		return docEvent{}, &ValidationError{Message: "Agent event.logicalSequence must be a non-negative safe integer."}
	case !c.safeInteger(f.slot[mSequence]):
		return docEvent{}, &ValidationError{Message: "Agent event.sequence must be a non-negative safe integer."}
	}
	return c.payload(f)
}

func (c docChecker) safeInteger(i int) bool {
	if c.kind(i) != jsonvalue.KindNumber {
		return false
	}
	_, ok := safeFloat(c.d.Float(i))
	return ok
}

// payload applies the payload rules of events.md §5.3 in order (CloneEvent/ParseEvent: the
// envelope members are allowed on run.started).
func (c docChecker) payload(f *docFields) (docEvent, error) {
	if !c.isString(f.slot[mType]) {
		return docEvent{}, &ValidationError{Message: eventLabel + ".type must be a string."}
	}
	ev := docEvent{typ: c.eventType(f.slot[mType]), key: -1, raw: -1, limit: -1}
	var err error
	switch ev.typ {
	case EventRunStarted:
		if f.n-1-f.envelope > 0 {
			return docEvent{}, &ValidationError{Message: eventLabel + " contains unsupported fields."}
		}

	case EventMessageStarted:
		if err = c.stringMember(f.slot[mMessageID], "messageId"); err == nil {
			ev.role, err = c.role(f.slot[mRole])
		}
		ev.key = f.slot[mMessageID]

	case EventMessagePartDelta:
		if err = c.stringMember(f.slot[mMessageID], "messageId"); err == nil {
			err = c.part(f.slot[mPart], pathPart)
		}
		ev.key, ev.raw = f.slot[mMessageID], f.slot[mPart]

	case EventMessageCompleted:
		if err = c.stringMember(f.slot[mMessageID], "messageId"); err == nil {
			if ev.role, err = c.role(f.slot[mRole]); err == nil {
				err = c.content(f.slot[mContent])
			}
		}
		ev.key, ev.raw = f.slot[mMessageID], f.slot[mContent]

	case EventToolCalled:
		ev.key, err = c.callBase(f.slot[mToolCall], pathToolCall)
		ev.raw = f.slot[mToolCall]

	case EventToolProgress:
		if err = c.stringMember(f.slot[mToolCallID], "toolCallId"); err == nil {
			err = c.content(f.slot[mContent])
		}
		ev.key, ev.raw = f.slot[mToolCallID], f.slot[mContent]

	case EventToolCompleted:
		if err = c.toolResult(f.slot[mResult], pathResult); err == nil {
			ev.key = c.member(f.slot[mResult], "toolCallId")
		}
		ev.raw = f.slot[mResult]

	case EventToolFailed:
		if err = c.toolError(f.slot[mError], pathError); err == nil {
			ev.key = c.member(f.slot[mError], "toolCallId")
		}
		ev.raw = f.slot[mError]

	case EventInterruptRequired:
		ev.key, err = c.interrupt(f.slot[mInterrupt], pathInterrupt)
		ev.raw = f.slot[mInterrupt]

	case EventInterruptResolved:
		if err = c.stringMember(f.slot[mInterruptID], "interruptId"); err == nil && !c.isArray(f.slot[mDecisions]) {
			err = &ValidationError{Message: eventLabel + ".decisions must be an array."}
		}
		ev.key, ev.raw = f.slot[mInterruptID], f.slot[mDecisions]

	case EventUsageUpdated:
		err = c.usage(f.slot[mUsage], pathUsage)
		ev.raw = f.slot[mUsage]

	case EventRunCompleted:
		if err = c.stringMember(f.slot[mFinishReason], "finishReason"); err == nil {
			if err = c.content(f.slot[mContent]); err == nil && f.slot[mUsage] >= 0 {
				err = c.usage(f.slot[mUsage], pathUsage)
			}
			if err == nil {
				err = c.optLimit(f.slot[mLimit])
			}
		}
		ev.key, ev.raw, ev.limit = f.slot[mFinishReason], f.slot[mUsage], f.slot[mLimit]

	case EventRunFailed:
		if err = c.stringMember(f.slot[mCode], "code"); err == nil {
			if err = c.stringMember(f.slot[mMessage], "message"); err == nil {
				err = c.optLimit(f.slot[mLimit])
			}
		}
		ev.key, ev.limit = f.slot[mCode], f.slot[mLimit]

	case EventRunCancelled:
		if f.slot[mReason] >= 0 {
			err = c.stringMember(f.slot[mReason], "reason")
		}
		if err == nil {
			err = c.optLimit(f.slot[mLimit])
		}
		ev.key, ev.limit = f.slot[mReason], f.slot[mLimit]

	default:
		t, plain := c.d.StringView(f.slot[mType])
		if !plain {
			t = c.d.Unquote(f.slot[mType])
		}
		return docEvent{}, &ValidationError{Message: "Unknown Agent event type: " + t + "."}
	}
	if err != nil {
		return docEvent{}, err
	}
	return ev, nil
}

// parseEvent reads, validates and fingerprints one event.
func (sc *eventScratch) parseEvent(data []byte) (Event, error) {
	d := &sc.doc
	if err := d.Parse(data, eventLabel); err != nil {
		return Event{}, err
	}
	if d.Kind(0) != jsonvalue.KindObject {
		return Event{}, notJSONObject(eventLabel)
	}
	var f docFields
	f.fill(d)
	c := docChecker{d: d}
	ev, err := c.check(&f)
	if err != nil {
		return Event{}, err
	}
	sc.canon = d.AppendCanonical(sc.canon[:0], 0)

	// The one allocation: the event's encoding, which the strings below are views of.
	text := string(d.Text())
	str := func(i int) string {
		off, end := d.Span(i)
		if _, plain := d.StringView(i); plain {
			return text[off+1 : end-1]
		}
		return d.Unquote(i)
	}
	span := func(i int) string {
		if i < 0 {
			return ""
		}
		off, end := d.Span(i)
		return text[off:end]
	}
	e := Event{
		text:            text,
		eventID:         str(f.slot[mEventID]),
		runID:           str(f.slot[mRunID]),
		sessionID:       str(f.slot[mSessionID]),
		phaseID:         str(f.slot[mPhaseID]),
		timestamp:       str(f.slot[mTimestamp]),
		logicalSequence: int64(d.Float(f.slot[mLogicalSequence])),
		sequence:        int64(d.Float(f.slot[mSequence])),
		typ:             ev.typ,
		fingerprint:     sha256.Sum256(sc.canon),
		role:            ev.role,
		raw:             span(ev.raw),
		limit:           span(ev.limit),
	}
	if ev.key >= 0 {
		e.key, e.hasKey = str(ev.key), true
	}
	return e, nil
}

// eventFromObject builds the Event of a value-model object that has passed validateEvent:
// its encoding is read back by the one-pass path, which gives it the same verdict.
func eventFromObject(o *Object) (Event, error) {
	return parseEventText(jsonvalue.AppendEncoded(nil, o))
}

// decodeRaw decodes the encoding of a value held by an Event or a state (valid by
// construction) into a fresh value of the value model.
func decodeRaw(s string) any {
	v, err := jsonvalue.Parse(unsafe.Slice(unsafe.StringData(s), len(s)), "")
	if err != nil {
		panic("events: held encoding does not parse: " + err.Error()) // unreachable
	}
	return v
}

// decodePayload rebuilds the typed payload of a valid Event with the value-model checker.
func (e Event) decodePayload() Payload {
	ck := checker{}
	switch e.typ {
	case EventRunStarted:
		return RunStarted{}
	case EventMessageStarted:
		return MessageStarted{MessageID: e.key, Role: e.role}
	case EventMessagePartDelta:
		p, _ := ck.part(decodeRaw(e.raw), pathPart)
		return MessagePartDelta{MessageID: e.key, Part: p}
	case EventToolProgress:
		parts, raw, _ := ck.content(slot{v: decodeRaw(e.raw), ok: true})
		return ToolProgress{ToolCallID: e.key, Content: parts, RawContent: raw}
	case EventUsageUpdated:
		u, _ := ck.usage(decodeRaw(e.raw), pathUsage)
		return UsageUpdated{Usage: u}
	}
	o := decodeRaw(e.text).(*Object)
	var f fields
	f.fill(objView{o: o})
	_, p, _ := ck.payload(&f, true)
	return p
}

// fingerprintLen is the length of `sha256:` and 64 hex digits.
const fingerprintLen = 7 + 64

// appendFingerprint appends `sha256:` and the lowercase hex digits of sum.
func appendFingerprint(dst []byte, sum *[32]byte) []byte {
	dst = append(dst, "sha256:"...)
	n := len(dst)
	dst = append(dst, make([]byte, 64)...)
	hex.Encode(dst[n:], sum[:])
	return dst
}

// parseFingerprint decodes a string matching ^sha256:[0-9a-f]{64}$ (checked by the caller).
func parseFingerprint(s string) (sum [32]byte) {
	_, _ = hex.Decode(sum[:], []byte(s[7:]))
	return sum
}
