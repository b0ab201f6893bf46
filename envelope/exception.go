package envelope

import (
	"errors"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
)

// ExceptionReason is the `reason` of a delivery exception (envelope.md §5.3; project-defined
// type).
type ExceptionReason string

// The delivery-exception reasons of envelope.md §5.3.
const (
	// ReasonNoHolder: the role has no holder, or the direct lane's session is found nowhere.
	ReasonNoHolder ExceptionReason = "no_holder"
	// ReasonReceiptTimeout: a role forward reached the broker and drew no receipt in time.
	ReasonReceiptTimeout ExceptionReason = "receipt_timeout"
	// ReasonDeliveryFailed: any other failure (a holder that is not live, a delivery mode the
	// recipient does not advertise or that cannot be read, a failed forward or delivery).
	ReasonDeliveryFailed ExceptionReason = "delivery_failed"
)

// ExceptionReasons lists the reasons in the spec's order. Callers must not modify it.
var ExceptionReasons = []ExceptionReason{ReasonNoHolder, ReasonReceiptTimeout, ReasonDeliveryFailed}

// Errors of [NewDeliveryException] and [BuildDeliveryException].
var (
	// ErrExceptionForException: no exception is published for an envelope whose topic is under
	// notifications.envoy.exceptions., so a failure on an exception topic never produces another.
	ErrExceptionForException = errors.New("no delivery exception for an envelope on an exception topic")
	// ErrUnknownExceptionReason: the reason is not one of ExceptionReasons.
	ErrUnknownExceptionReason = errors.New("unknown delivery exception reason")
)

// DeliveryExceptionPayload is the object whose JSON text is a delivery exception's `payload`
// (envelope.md §5.3), keys in this order. All but recipient_session are always present, possibly
// "".
type DeliveryExceptionPayload struct {
	// OriginalTopic is `original_topic`: the failed envelope's topic.
	OriginalTopic string `json:"original_topic"`
	// EventID is `event_id`: the failed envelope's event_id.
	EventID string `json:"event_id"`
	// Reason is `reason`: why delivery failed.
	Reason ExceptionReason `json:"reason"`
	// RecipientSession is `recipient_session`: the intended recipient; omitted when unknown.
	RecipientSession string `json:"recipient_session,omitempty"`
	// PayloadSummary is `payload_summary`, copied from the original.
	PayloadSummary string `json:"payload_summary"`
	// Payload is `payload`, the original payload string (consumers treat absent as "").
	Payload string `json:"payload"`
	// DedupeKey is `dedupe_key`, copied from the original.
	DedupeKey string `json:"dedupe_key"`
	// Source is `source`, copied from the original.
	Source Source `json:"source"`
	// SourceSession is `source_session`, copied from the original (consumers treat absent as "").
	SourceSession string `json:"source_session"`
}

// MarshalJSON encodes the payload object with keys in the order of envelope.md §5.3.
func (p DeliveryExceptionPayload) MarshalJSON() ([]byte, error) {
	o := jsonvalue.NewObject(9)
	o.Set("original_topic", p.OriginalTopic)
	o.Set("event_id", p.EventID)
	o.Set("reason", string(p.Reason))
	if p.RecipientSession != "" {
		o.Set("recipient_session", p.RecipientSession)
	}
	o.Set("payload_summary", p.PayloadSummary)
	o.Set("payload", p.Payload)
	o.Set("dedupe_key", p.DedupeKey)
	o.Set("source", string(p.Source))
	o.Set("source_session", p.SourceSession)
	return jsonvalue.AppendEncoded(nil, o), nil
}

// DecodeDeliveryExceptionPayload reads a delivery exception's `payload` text strictly; absent
// (or null) members read as "", as consumers must treat an absent payload or source_session.
// Unknown members are ignored.
func DecodeDeliveryExceptionPayload(text string) (DeliveryExceptionPayload, error) {
	o, err := jsonvalue.ParseObject([]byte(text), "payload")
	if err != nil {
		return DeliveryExceptionPayload{}, err
	}
	var p DeliveryExceptionPayload
	var reason, source string
	fields := []struct {
		name string
		dst  *string
	}{
		{"original_topic", &p.OriginalTopic}, {"event_id", &p.EventID}, {"reason", &reason},
		{"recipient_session", &p.RecipientSession}, {"payload_summary", &p.PayloadSummary},
		{"payload", &p.Payload}, {"dedupe_key", &p.DedupeKey}, {"source", &source},
		{"source_session", &p.SourceSession},
	}
	for _, f := range fields {
		v, ok := o.Get(f.name)
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return DeliveryExceptionPayload{}, errors.New("payload." + f.name + msgMustBeString)
		}
		*f.dst = s
	}
	p.Reason, p.Source = ExceptionReason(reason), Source(source)
	return p, nil
}

// NeedsDeliveryException reports whether a failed delivery of an envelope on topic gets a
// delivery exception: every topic except those under [ExceptionTopicPrefix] (§5.3).
func NeedsDeliveryException(topic string) bool {
	return !strings.HasPrefix(topic, ExceptionTopicPrefix)
}

// NewDeliveryException builds the delivery exception for original (envelope.md §5.3) with fresh
// ids ([NewEventID]) and issued_at = [NowMillis]. recipientSession is the intended recipient, ""
// when unknown.
func NewDeliveryException(original Envelope, reason ExceptionReason, recipientSession string) (Envelope, error) {
	return BuildDeliveryException(original, reason, recipientSession, NewEventID(), NewEventID(), NowMillis())
}

// BuildDeliveryException is [NewDeliveryException] with the fresh values supplied (deterministic,
// for tests and replays): id is the exception's event_id and the <id> of its dedupe key
// envoy.exception.<id>, traceID its trace_id, issuedAt its issued_at. The exception has exactly
// the fields of §5.3: source envoy, source_event_id = the original event_id, topic
// notifications.envoy.exceptions.<original topic>, payload_summary "delivery exception:
// <reason>", payload = the [DeliveryExceptionPayload] JSON text. It must pass Validate; a
// failure is returned as the Problems error. An original on an exception topic gets none
// ([ErrExceptionForException]).
func BuildDeliveryException(original Envelope, reason ExceptionReason, recipientSession, id, traceID string, issuedAt int64) (Envelope, error) {
	if !NeedsDeliveryException(original.Topic) {
		return Envelope{}, ErrExceptionForException
	}
	known := false
	for _, r := range ExceptionReasons {
		known = known || r == reason
	}
	if !known {
		return Envelope{}, ErrUnknownExceptionReason
	}
	payload, _ := DeliveryExceptionPayload{
		OriginalTopic:    original.Topic,
		EventID:          original.EventID,
		Reason:           reason,
		RecipientSession: recipientSession,
		PayloadSummary:   original.PayloadSummary,
		Payload:          original.Payload,
		DedupeKey:        original.DedupeKey,
		Source:           original.Source,
		SourceSession:    original.SourceSession,
	}.MarshalJSON()
	e := Envelope{
		EventID:        id,
		Source:         SourceEnvoy,
		SourceEventID:  original.EventID,
		Topic:          ExceptionSubject(original.Topic),
		DedupeKey:      ExceptionDedupePrefix + id,
		IssuedAt:       issuedAt,
		PayloadSummary: "delivery exception: " + string(reason),
		Payload:        string(payload),
		TraceID:        traceID,
	}
	if ps := e.Validate(); len(ps) > 0 {
		return Envelope{}, ps.Err()
	}
	return e, nil
}
