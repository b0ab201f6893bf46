// Package envelope implements the Envoy event envelope, its subjects and its dedupe rule
// (spec: envelope.md), compatible byte for byte with the Legion Envoy envelope.
//
// The contract has five parts:
//
//   - The envelope ([Envelope], [EnvelopeSender]): one JSON object with no version field, keys in
//     the canonical order of envelope.md §1.2, optional keys omitted when empty, times as integer
//     milliseconds since the Unix epoch ([NowMillis]). [Envelope.MarshalJSON] emits exactly that
//     form; [Decode] reads it strictly (jsonvalue: duplicate names, invalid UTF-8 and excessive
//     depth refused; keys matched case-sensitively; unknown keys ignored).
//   - Validation (§2): [Envelope.Validate] returns every struct problem in the spec's order,
//     [ValidateWire] the raw-JSON checks for present-but-empty optional strings, and [Decode]
//     both. [Problems.First] is the single message the compatibility target reports, so callers
//     get parity and full diagnostics from one call.
//   - Subjects (§3): the prefix constants, one helper per subject family ([GithubPushSubject],
//     [SlackThreadSubject], …), [SanitizeSubjectSegment], the publish- and subscribe-time
//     validity rules ([ValidPublishSubject], [ValidSubscribeSubject]) and the NATS wildcard
//     matcher [MatchSubject].
//   - Dedupe (§4): [MintedDedupeKeyPattern], [DedupeKeyNamesItsEvent], the broker message id
//     [MessageID] and the delivery constants ([DeliveryDuplicateWindow], [ReceiptTimeoutCause],
//     [MaxBroadcastRecipients]).
//   - The notification stream and lanes (§5): [NotificationsStream], [StreamSubjects],
//     [PublishTransport], [SubjectsOverlap], [MergeStreamSubjects] and the delivery-exception
//     builder [NewDeliveryException].
//
// The package is pure: no I/O, no globals beyond constant tables. Everything the JSON Schema and
// TypeScript generator needs (names, required/optional, minimum lengths, enum order) is read
// from the Go declarations here (§6.1): `json` tags, `schema:"minLength=1"` tags and the ordered
// enum slices [Sources], [Urgencies] and [ExpectsReplies].
package envelope

import (
	"strconv"
	"time"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Source is the `source` field: the system the event came from (envelope.md §1.4). Its JSON form
// is a plain string; the named type is project-defined.
type Source string

// The eight `source` values, in the normative order of envelope.md §1.4.
const (
	SourceAgent      Source = "agent"
	SourceHuman      Source = "human"
	SourceEnvoy      Source = "envoy"
	SourceGithub     Source = "github"
	SourceSlack      Source = "slack"
	SourceWhatsapp   Source = "whatsapp"
	SourceGhostWispr Source = "ghostwispr"
	SourceDispatch   Source = "dispatch"
)

// Sources lists every `source` value in the normative order (messages and schema `enum`).
// Callers must not modify it.
var Sources = []Source{
	SourceAgent, SourceHuman, SourceEnvoy, SourceGithub, SourceSlack, SourceWhatsapp,
	SourceGhostWispr, SourceDispatch,
}

// Urgency is the optional `urgency` field: sender-declared urgency (envelope.md §1.4).
type Urgency string

// The four `urgency` values, in the normative order of envelope.md §1.4.
const (
	UrgencyLow      Urgency = "low"
	UrgencyMed      Urgency = "med"
	UrgencyHigh     Urgency = "high"
	UrgencyBlocking Urgency = "blocking"
)

// Urgencies lists every `urgency` value in the normative order. Callers must not modify it.
var Urgencies = []Urgency{UrgencyLow, UrgencyMed, UrgencyHigh, UrgencyBlocking}

// ExpectsReply is the optional `expects_reply` field: whether the sender waits for an answer
// (envelope.md §1.4).
type ExpectsReply string

// The three `expects_reply` values, in the normative order of envelope.md §1.4.
const (
	ExpectsReplyNone     ExpectsReply = "none"
	ExpectsReplyOptional ExpectsReply = "optional"
	ExpectsReplyRequired ExpectsReply = "required"
)

// ExpectsReplies lists every `expects_reply` value in the normative order. Callers must not
// modify it.
var ExpectsReplies = []ExpectsReply{ExpectsReplyNone, ExpectsReplyOptional, ExpectsReplyRequired}

// Valid reports whether s is one of [Sources] (exact, case-sensitive match).
func (s Source) Valid() bool {
	for _, v := range Sources {
		if s == v {
			return true
		}
	}
	return false
}

// Valid reports whether u is one of [Urgencies] (exact, case-sensitive match).
func (u Urgency) Valid() bool {
	for _, v := range Urgencies {
		if u == v {
			return true
		}
	}
	return false
}

// Valid reports whether x is one of [ExpectsReplies] (exact, case-sensitive match).
func (x ExpectsReply) Valid() bool {
	for _, v := range ExpectsReplies {
		if x == v {
			return true
		}
	}
	return false
}

// EnvelopeSender is the optional `sender` object (envelope.md §1.3): who sent the envelope.
// Keys in canonical order; all but `session_id` are optional and omitted when empty.
type EnvelopeSender struct {
	// SessionID is `session_id`: the sending session; required, not blank.
	SessionID string `json:"session_id" schema:"minLength=1"`
	// Machine is `machine`: the sender's host.
	Machine string `json:"machine,omitempty"`
	// Cwd is `cwd`: the sender's working directory.
	Cwd string `json:"cwd,omitempty"`
	// Title is `title`: the sender's display title.
	Title string `json:"title,omitempty"`
	// Roles is `roles`: the roles the sender holds; omitted when nil or empty.
	Roles []string `json:"roles,omitempty"`
}

// Envelope is the Envoy event envelope (envelope.md §1.2), fields in canonical property order.
// It has no version field; required fields are always emitted, optional ones omitted when empty.
type Envelope struct {
	// EventID is `event_id`: unique id of this envelope (minted ids: 32 lowercase hex, [NewEventID]).
	EventID string `json:"event_id" schema:"minLength=1"`
	// Source is `source`: the system the event came from, one of [Sources].
	Source Source `json:"source"`
	// SourceEventID is `source_event_id`: the originating system's event or delivery id.
	SourceEventID string `json:"source_event_id" schema:"minLength=1"`
	// SourceSession is `source_session`: the session that sent it; omitted rather than empty.
	SourceSession string `json:"source_session,omitempty"`
	// Topic is `topic`: the NATS subject the envelope is published on (§3).
	Topic string `json:"topic" schema:"minLength=1"`
	// DedupeKey is `dedupe_key`: identity of the underlying event across topics and re-sends (§4).
	DedupeKey string `json:"dedupe_key" schema:"minLength=1"`
	// IssuedAt is `issued_at`: issue time in milliseconds since the Unix epoch; must not be 0.
	IssuedAt int64 `json:"issued_at"`
	// ExpiresAt is `expires_at`: time after which the envelope is stale, ms epoch; nil = absent.
	ExpiresAt *int64 `json:"expires_at,omitempty"`
	// PayloadSummary is `payload_summary`: short human-readable summary.
	PayloadSummary string `json:"payload_summary" schema:"minLength=1"`
	// PayloadRef is `payload_ref`: pointer to an external payload, e.g. nats://payloads/evt-1.
	PayloadRef string `json:"payload_ref,omitempty"`
	// Payload is `payload`: the full machine body, a string (usually JSON text), never an object.
	Payload string `json:"payload,omitempty"`
	// TraceID is `trace_id`: correlation id.
	TraceID string `json:"trace_id" schema:"minLength=1"`
	// Sender is `sender`: who sent it (§1.3); nil = absent.
	Sender *EnvelopeSender `json:"sender,omitempty"`
	// InReplyTo is `in_reply_to`: the event_id this envelope answers; non-empty if present.
	InReplyTo string `json:"in_reply_to,omitempty" schema:"minLength=1"`
	// Supersedes is `supersedes`: the event_id this envelope replaces; non-empty if present.
	Supersedes string `json:"supersedes,omitempty" schema:"minLength=1"`
	// Urgency is `urgency`: sender-declared urgency, one of [Urgencies] when present.
	Urgency Urgency `json:"urgency,omitempty"`
	// ExpectsReply is `expects_reply`: whether the sender waits for an answer, one of
	// [ExpectsReplies] when present.
	ExpectsReply ExpectsReply `json:"expects_reply,omitempty"`
}

// NowMillis returns the current Unix time in milliseconds, the unit of `issued_at` and
// `expires_at` (envelope.md §1.1 rule 2).
func NowMillis() int64 { return time.Now().UnixMilli() }

// MarshalJSON encodes the envelope in canonical property order (envelope.md §1.1 rule 3):
// required keys always, optional keys only when non-empty, times as integer literals, strings
// without HTML escaping.
func (e Envelope) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// AppendJSON appends the canonical encoding of e (see [Envelope.MarshalJSON]) to dst.
func (e Envelope) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"event_id":`...)
	dst = jsonvalue.AppendQuote(dst, e.EventID)
	dst = append(dst, `,"source":`...)
	dst = jsonvalue.AppendQuote(dst, string(e.Source))
	dst = append(dst, `,"source_event_id":`...)
	dst = jsonvalue.AppendQuote(dst, e.SourceEventID)
	dst = appendOptString(dst, "source_session", e.SourceSession)
	dst = append(dst, `,"topic":`...)
	dst = jsonvalue.AppendQuote(dst, e.Topic)
	dst = append(dst, `,"dedupe_key":`...)
	dst = jsonvalue.AppendQuote(dst, e.DedupeKey)
	dst = append(dst, `,"issued_at":`...)
	dst = appendInt(dst, e.IssuedAt)
	if e.ExpiresAt != nil {
		dst = append(dst, `,"expires_at":`...)
		dst = appendInt(dst, *e.ExpiresAt)
	}
	dst = append(dst, `,"payload_summary":`...)
	dst = jsonvalue.AppendQuote(dst, e.PayloadSummary)
	dst = appendOptString(dst, "payload_ref", e.PayloadRef)
	dst = appendOptString(dst, "payload", e.Payload)
	dst = append(dst, `,"trace_id":`...)
	dst = jsonvalue.AppendQuote(dst, e.TraceID)
	if e.Sender != nil {
		dst = append(dst, `,"sender":`...)
		dst = e.Sender.AppendJSON(dst)
	}
	dst = appendOptString(dst, "in_reply_to", e.InReplyTo)
	dst = appendOptString(dst, "supersedes", e.Supersedes)
	dst = appendOptString(dst, "urgency", string(e.Urgency))
	dst = appendOptString(dst, "expects_reply", string(e.ExpectsReply))
	return append(dst, '}')
}

// MarshalJSON encodes the sender object with keys in the order of envelope.md §1.3, omitting
// empty optional keys.
func (s EnvelopeSender) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// AppendJSON appends the canonical encoding of s (see [EnvelopeSender.MarshalJSON]) to dst.
func (s EnvelopeSender) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"session_id":`...)
	dst = jsonvalue.AppendQuote(dst, s.SessionID)
	dst = appendOptString(dst, "machine", s.Machine)
	dst = appendOptString(dst, "cwd", s.Cwd)
	dst = appendOptString(dst, "title", s.Title)
	if len(s.Roles) > 0 {
		dst = append(dst, `,"roles":[`...)
		for i, r := range s.Roles {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonvalue.AppendQuote(dst, r)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// UnmarshalJSON decodes strictly (envelope.md §1.1 rules 4–5) without validating: it fails only
// where [Decode] reports a decoding problem. Use [Decode] to also run the wire and struct checks.
func (e *Envelope) UnmarshalJSON(data []byte) error {
	v, err := jsonvalue.ParseKeepNumbers(data, documentLabel)
	if err != nil {
		return Problem{Field: fieldOf(err), Message: err.Error()}
	}
	d, p := decodeValue(v)
	if p != nil {
		return *p
	}
	*e = d
	return nil
}

// UnmarshalJSON decodes a sender object strictly (envelope.md §1.1 rules 4–5, §1.3).
func (s *EnvelopeSender) UnmarshalJSON(data []byte) error {
	v, err := jsonvalue.Parse(data, "sender")
	if err != nil {
		return Problem{Field: fieldOf(err), Message: err.Error()}
	}
	var out *EnvelopeSender
	if p := decodeSender(v, &out); p != nil {
		return *p
	}
	if out == nil {
		out = &EnvelopeSender{}
	}
	*s = *out
	return nil
}

func appendOptString(dst []byte, name, v string) []byte {
	if v == "" {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return jsonvalue.AppendQuote(dst, v)
}

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }
