package envelope

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Problem is one validation or decoding problem (envelope.md §2.1). Field is the JSON path of the
// field it concerns ("sender.session_id"; "" for the document as a whole); Message is the spec's
// exact message with no prefix, no trailing period and no echo of the bad value. A Problem is an
// error whose Error() is Message.
type Problem struct {
	Field   string
	Message string
}

// Error returns the problem's message exactly.
func (p Problem) Error() string { return p.Message }

// Problems is every problem of one envelope, in the spec's order (§2.2, §2.3, §2.4). The
// problem-list API is project-defined: the compatibility target returns only the first failure,
// which [Problems.First] reproduces.
type Problems []Problem

// First returns nil when p is empty and otherwise p[0] as an error whose Error() is exactly
// p[0].Message: the single error the compatibility target's Validate / ValidateWire returns for
// the same input (decoding problems excepted, §2.3).
func (p Problems) First() error {
	if len(p) == 0 {
		return nil
	}
	return p[0]
}

// Err returns nil when p is empty and otherwise p itself as an error whose Error() joins every
// message with "; " (project-defined).
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return p
}

// Error joins every message with "; " (project-defined).
func (p Problems) Error() string {
	var b strings.Builder
	for i, q := range p {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(q.Message)
	}
	return b.String()
}

// Messages returns the messages of p in order.
func (p Problems) Messages() []string {
	out := make([]string, len(p))
	for i, q := range p {
		out[i] = q.Message
	}
	return out
}

// The struct-check messages of envelope.md §2.2, steps 1–10 and 14.
const (
	MsgEventIDRequired         = "event_id is required"
	MsgSourceRequired          = "source is required"
	MsgSourceEventIDRequired   = "source_event_id is required"
	MsgTopicRequired           = "topic is required"
	MsgDedupeKeyRequired       = "dedupe_key is required"
	MsgIssuedAtMustBeSet       = "issued_at must be set"
	MsgPayloadSummaryRequired  = "payload_summary is required"
	MsgTraceIDRequired         = "trace_id is required"
	MsgInReplyToNotEmpty       = "in_reply_to must not be empty"
	MsgSupersedesNotEmpty      = "supersedes must not be empty"
	MsgSenderSessionIDRequired = "sender.session_id is required"
)

// The wire-check messages of envelope.md §2.3 that [MsgInReplyToNotEmpty] and
// [MsgSupersedesNotEmpty] do not already cover (steps 3–5).
const (
	MsgUrgencyNotEmpty         = "urgency must not be empty"
	MsgExpectsReplyNotEmpty    = "expects_reply must not be empty"
	MsgSenderSessionIDNotEmpty = "sender.session_id must not be empty"
)

// The enum messages of envelope.md §2.2 steps 11–13, derived from the ordered enum slices so the
// message and the schema `enum` cannot drift apart (§6.1).
var (
	MsgSourceEnum       = "source must be one of: " + joinEnum(Sources)
	MsgUrgencyEnum      = "urgency must be one of: " + joinEnum(Urgencies)
	MsgExpectsReplyEnum = "expects_reply must be one of: " + joinEnum(ExpectsReplies)
)

func joinEnum[T ~string](vs []T) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}

// blank is the spec's "blank": empty after trimming Unicode white space (strings.TrimSpace).
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// Validate runs the struct checks of envelope.md §2.2 and returns every problem, in the spec's
// step order (nil when valid). Each field yields at most one problem. It deliberately does not
// check subject syntax, the sign of issued_at, expires_at against issued_at, or the shape of
// dedupe_key (§2.4), which would break First() parity.
func (e Envelope) Validate() Problems {
	var ps Problems
	add := func(field, msg string) { ps = append(ps, Problem{Field: field, Message: msg}) }
	if blank(e.EventID) {
		add("event_id", MsgEventIDRequired)
	}
	if blank(string(e.Source)) {
		add("source", MsgSourceRequired)
	}
	if blank(e.SourceEventID) {
		add("source_event_id", MsgSourceEventIDRequired)
	}
	if blank(e.Topic) {
		add("topic", MsgTopicRequired)
	}
	if blank(e.DedupeKey) {
		add("dedupe_key", MsgDedupeKeyRequired)
	}
	if e.IssuedAt == 0 {
		add("issued_at", MsgIssuedAtMustBeSet)
	}
	if blank(e.PayloadSummary) {
		add("payload_summary", MsgPayloadSummaryRequired)
	}
	if blank(e.TraceID) {
		add("trace_id", MsgTraceIDRequired)
	}
	if e.InReplyTo != "" && blank(e.InReplyTo) {
		add("in_reply_to", MsgInReplyToNotEmpty)
	}
	if e.Supersedes != "" && blank(e.Supersedes) {
		add("supersedes", MsgSupersedesNotEmpty)
	}
	if !blank(string(e.Source)) && !e.Source.Valid() {
		add("source", MsgSourceEnum)
	}
	if e.Urgency != "" && !e.Urgency.Valid() {
		add("urgency", MsgUrgencyEnum)
	}
	if e.ExpectsReply != "" && !e.ExpectsReply.Valid() {
		add("expects_reply", MsgExpectsReplyEnum)
	}
	if e.Sender != nil && blank(e.Sender.SessionID) {
		add("sender.session_id", MsgSenderSessionIDRequired)
	}
	return ps
}

// documentLabel roots the paths of strict-JSON fault messages ("envelope.sender contains …").
const documentLabel = "envelope"

// Decoding-problem messages (project-defined wording; exempt from First() parity, §2.3).
const (
	msgDocumentNotObject = "envelope must be a JSON object or null"
	msgSenderNotObject   = "sender must be a JSON object or null"
	msgMustBeString      = " must be a string"
	msgMustBeInteger     = " must be an integer in the int64 range"
	msgRolesNotArray     = "sender.roles must be an array of strings"
)

// wireFields are the optional strings of envelope.md §2.3 steps 1–4, in step order.
var wireFields = [...]struct{ name, msg string }{
	{"in_reply_to", MsgInReplyToNotEmpty},
	{"supersedes", MsgSupersedesNotEmpty},
	{"urgency", MsgUrgencyNotEmpty},
	{"expects_reply", MsgExpectsReplyNotEmpty},
}

// ValidateWire runs the raw-JSON checks of envelope.md §2.3: a problem for each of
// `in_reply_to`, `supersedes`, `urgency`, `expects_reply` and `sender.session_id` that is present
// with the JSON string "" (which a decoded struct cannot tell from absent). Like the
// compatibility target it reads raw as a map: keys match exactly and, of repeated keys, the last
// counts; strictness faults (duplicates, invalid UTF-8) are left to [Decode]. If raw is JSON
// null the result is empty; if it is not JSON, or JSON other than an object or null, it is one
// problem with Field "" and no step runs; a `sender` that is neither an object nor null gives a
// decoding problem (Field "sender") in place of step 5.
func ValidateWire(raw []byte) Problems {
	v, err := jsonvalue.Parse(raw, documentLabel)
	if err != nil {
		return lenientWire(raw, err)
	}
	return wireChecks(v)
}

// wireChecks is ValidateWire over a strictly parsed document (no repeated keys to choose from).
func wireChecks(v any) Problems {
	if v == nil {
		return nil
	}
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		return Problems{{Field: "", Message: msgDocumentNotObject}}
	}
	var ps Problems
	for _, f := range wireFields {
		if s, ok := o.Get(f.name); ok && s == "" {
			ps = append(ps, Problem{Field: f.name, Message: f.msg})
		}
	}
	if sv, ok := o.Get("sender"); ok && sv != nil {
		so, ok := sv.(*jsonvalue.Object)
		if !ok {
			ps = append(ps, Problem{Field: "sender", Message: msgSenderNotObject})
		} else if s, ok := so.Get("session_id"); ok && s == "" {
			ps = append(ps, Problem{Field: "sender.session_id", Message: MsgSenderSessionIDNotEmpty})
		}
	}
	return ps
}

// lenientWire is ValidateWire for text the strict parser refused (strictErr): it reads raw the
// way the compatibility target does, with encoding/json into a map, so repeated keys resolve to
// the last and invalid UTF-8 does not stop the checks.
func lenientWire(raw []byte, strictErr error) Problems {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		if json.Valid(raw) {
			return Problems{{Field: "", Message: msgDocumentNotObject}}
		}
		return Problems{{Field: "", Message: strictErr.Error()}}
	}
	var ps Problems
	for _, f := range wireFields {
		if r, ok := m[f.name]; ok && isEmptyJSONString(r) {
			ps = append(ps, Problem{Field: f.name, Message: f.msg})
		}
	}
	if r, ok := m["sender"]; ok {
		var sm map[string]json.RawMessage
		if err := json.Unmarshal(r, &sm); err != nil {
			ps = append(ps, Problem{Field: "sender", Message: msgSenderNotObject})
		} else if r, ok := sm["session_id"]; ok && isEmptyJSONString(r) {
			ps = append(ps, Problem{Field: "sender.session_id", Message: MsgSenderSessionIDNotEmpty})
		}
	}
	return ps
}

// isEmptyJSONString reports whether raw JSON text is the string "" (the only spelling of an empty
// JSON string: an escape always yields at least one character).
func isEmptyJSONString(r json.RawMessage) bool {
	return string(bytes.TrimSpace(r)) == `""`
}

// Decode reads one envelope (envelope.md §2.4): it returns the [ValidateWire] problems, then, if
// raw decoded into the struct, the [Envelope.Validate] problems. Decoding is strict JSON (§1.1
// rule 5: duplicate member names, invalid UTF-8 and excessive depth refused) and
// case-sensitive; unknown keys are ignored and JSON null leaves a field at its zero value, so
// `null` decodes to the zero Envelope. A strict-JSON fault or a type error (`issued_at: 1.5`,
// `issued_at: 1.0`, `source: 5`) is one decoding problem naming the field, and Validate does not
// run. The returned Envelope is the decoded value when there is no decoding problem (it may still
// have validation problems) and the zero Envelope otherwise. Ingress points and bus consumers use
// Decode; a consumer drops an envelope with any problem.
func Decode(raw []byte) (Envelope, Problems) {
	v, err := jsonvalue.ParseKeepNumbers(raw, documentLabel)
	if err != nil {
		ps := lenientWire(raw, err)
		if len(ps) == 1 && ps[0].Field == "" {
			return Envelope{}, ps
		}
		return Envelope{}, append(ps, Problem{Field: fieldOf(err), Message: err.Error()})
	}
	ps := wireChecks(v)
	if len(ps) == 1 && ps[0].Field == "" {
		return Envelope{}, ps
	}
	e, dp := decodeValue(v)
	if dp != nil {
		for _, p := range ps {
			if p == *dp {
				return Envelope{}, ps
			}
		}
		return Envelope{}, append(ps, *dp)
	}
	return e, append(ps, e.Validate()...)
}

// fieldOf turns the label-rooted path of a strict-JSON fault into a field path.
func fieldOf(err error) string {
	je, ok := err.(*jsonvalue.JSONValidationError)
	if !ok {
		return ""
	}
	p := strings.TrimPrefix(je.Path, documentLabel)
	return strings.TrimPrefix(p, ".")
}

// decodeValue maps a document parsed by jsonvalue.ParseKeepNumbers onto the struct: numbers are
// their literal text, so issued_at and expires_at are read exactly (a float64 cannot tell 1 from
// 1.0 nor represent every int64).
func decodeValue(v any) (Envelope, *Problem) {
	var e Envelope
	if v == nil {
		return e, nil
	}
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		return e, &Problem{Field: "", Message: msgDocumentNotObject}
	}
	// Like encoding/json, keep decoding after a type error and report the first one met in
	// document order.
	var first *Problem
	fail := func(p *Problem) {
		if first == nil {
			first = p
		}
	}
	for _, m := range o.Members() {
		if m.Value == nil {
			continue // null leaves the field at its zero value
		}
		switch m.Name {
		case "event_id":
			fail(decodeString(m, &e.EventID))
		case "source":
			var s string
			fail(decodeString(m, &s))
			e.Source = Source(s)
		case "source_event_id":
			fail(decodeString(m, &e.SourceEventID))
		case "source_session":
			fail(decodeString(m, &e.SourceSession))
		case "topic":
			fail(decodeString(m, &e.Topic))
		case "dedupe_key":
			fail(decodeString(m, &e.DedupeKey))
		case "issued_at":
			n, p := decodeInt(m)
			fail(p)
			e.IssuedAt = n
		case "expires_at":
			n, p := decodeInt(m)
			fail(p)
			if p == nil {
				e.ExpiresAt = &n
			}
		case "payload_summary":
			fail(decodeString(m, &e.PayloadSummary))
		case "payload_ref":
			fail(decodeString(m, &e.PayloadRef))
		case "payload":
			fail(decodeString(m, &e.Payload))
		case "trace_id":
			fail(decodeString(m, &e.TraceID))
		case "sender":
			fail(decodeSender(m.Value, &e.Sender))
		case "in_reply_to":
			fail(decodeString(m, &e.InReplyTo))
		case "supersedes":
			fail(decodeString(m, &e.Supersedes))
		case "urgency":
			var s string
			fail(decodeString(m, &s))
			e.Urgency = Urgency(s)
		case "expects_reply":
			var s string
			fail(decodeString(m, &s))
			e.ExpectsReply = ExpectsReply(s)
		}
	}
	if first != nil {
		return Envelope{}, first
	}
	return e, nil
}

func decodeString(m jsonvalue.Member, dst *string) *Problem {
	s, ok := m.Value.(string)
	if !ok {
		return &Problem{Field: m.Name, Message: m.Name + msgMustBeString}
	}
	*dst = s
	return nil
}

// decodeInt reads an int64 time: only an integer literal (no fraction, no exponent) in the int64
// range is accepted (envelope.md §1.1 rule 5).
func decodeInt(m jsonvalue.Member) (int64, *Problem) {
	bad := &Problem{Field: m.Name, Message: m.Name + msgMustBeInteger}
	text, ok := m.Value.(jsonvalue.Number)
	if !ok || strings.ContainsAny(string(text), ".eE") {
		return 0, bad
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		return 0, bad
	}
	return n, nil
}

// decodeSender decodes the `sender` member value (null leaves *dst nil).
func decodeSender(v any, dst **EnvelopeSender) *Problem {
	if v == nil {
		return nil
	}
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		return &Problem{Field: "sender", Message: msgSenderNotObject}
	}
	s := &EnvelopeSender{}
	var first *Problem
	str := func(m jsonvalue.Member, dst *string) {
		x, ok := m.Value.(string)
		if !ok {
			if first == nil {
				first = &Problem{Field: "sender." + m.Name, Message: "sender." + m.Name + msgMustBeString}
			}
			return
		}
		*dst = x
	}
	for _, m := range o.Members() {
		if m.Value == nil {
			continue
		}
		switch m.Name {
		case "session_id":
			str(m, &s.SessionID)
		case "machine":
			str(m, &s.Machine)
		case "cwd":
			str(m, &s.Cwd)
		case "title":
			str(m, &s.Title)
		case "roles":
			arr, ok := m.Value.([]any)
			if !ok {
				if first == nil {
					first = &Problem{Field: "sender.roles", Message: msgRolesNotArray}
				}
				continue
			}
			roles := make([]string, len(arr))
			for i, r := range arr {
				if r == nil {
					continue // null element: zero value, as encoding/json does
				}
				x, ok := r.(string)
				if !ok {
					if first == nil {
						f := jsonvalue.IndexPath("sender.roles", i)
						first = &Problem{Field: f, Message: f + msgMustBeString}
					}
					break
				}
				roles[i] = x
			}
			s.Roles = roles
		}
	}
	if first != nil {
		return first
	}
	*dst = s
	return nil
}
