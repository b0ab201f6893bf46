package envelope

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// TestBuildDeliveryException covers envelope.md §5.3.
func TestBuildDeliveryException(t *testing.T) {
	orig := with(func(e *Envelope) {
		e.SourceSession, e.Payload, e.Topic = "ses_0", `{"q":"<x>"}`, "notifications.role.reviewer"
	})
	const id, trace = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	tests := []struct {
		name      string
		orig      Envelope
		reason    ExceptionReason
		recipient string
		want      string
	}{
		{"role lane timeout", orig, ReasonReceiptTimeout, "ses_9",
			`{"event_id":"` + id + `","source":"envoy","source_event_id":"e1",` +
				`"topic":"notifications.envoy.exceptions.notifications.role.reviewer","dedupe_key":"envoy.exception.` + id + `",` +
				`"issued_at":1760000000001,"payload_summary":"delivery exception: receipt_timeout",` +
				`"payload":"{\"original_topic\":\"notifications.role.reviewer\",\"event_id\":\"e1\",\"reason\":\"receipt_timeout\",` +
				`\"recipient_session\":\"ses_9\",\"payload_summary\":\"hi\",\"payload\":\"{\\\"q\\\":\\\"<x>\\\"}\",` +
				`\"dedupe_key\":\"publish.` + hex32 + `\",\"source\":\"agent\",\"source_session\":\"ses_0\"}",` +
				`"trace_id":"` + trace + `"}`},
		{"unknown recipient, empty copies", v(), ReasonNoHolder, "",
			`{"event_id":"` + id + `","source":"envoy","source_event_id":"e1",` +
				`"topic":"notifications.envoy.exceptions.notifications.agent.ses_1","dedupe_key":"envoy.exception.` + id + `",` +
				`"issued_at":1760000000001,"payload_summary":"delivery exception: no_holder",` +
				`"payload":"{\"original_topic\":\"notifications.agent.ses_1\",\"event_id\":\"e1\",\"reason\":\"no_holder\",` +
				`\"payload_summary\":\"hi\",\"payload\":\"\",\"dedupe_key\":\"publish.` + hex32 + `\",\"source\":\"agent\",\"source_session\":\"\"}",` +
				`"trace_id":"` + trace + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := BuildDeliveryException(tt.orig, tt.reason, tt.recipient, id, trace, 1760000000001)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(e.AppendJSON(nil)); got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			p, err := DecodeDeliveryExceptionPayload(e.Payload)
			if err != nil || p.OriginalTopic != tt.orig.Topic || p.RecipientSession != tt.recipient || p.Reason != tt.reason ||
				p.Payload != tt.orig.Payload || p.SourceSession != tt.orig.SourceSession {
				t.Fatalf("payload %+v, %v", p, err)
			}
			if DedupeKeyNamesItsEvent(e) {
				t.Fatal("an exception key must not name its event")
			}
		})
	}
}

func TestDeliveryExceptionRefusals(t *testing.T) {
	onException := with(func(e *Envelope) { e.Topic = ExceptionSubject("notifications.agent.ses_1") })
	if _, err := NewDeliveryException(onException, ReasonDeliveryFailed, ""); !errors.Is(err, ErrExceptionForException) {
		t.Fatalf("exception for exception: %v", err)
	}
	if NeedsDeliveryException(onException.Topic) || !NeedsDeliveryException("notifications.agent.ses_1") {
		t.Fatal("NeedsDeliveryException")
	}
	if _, err := NewDeliveryException(v(), "bogus", ""); !errors.Is(err, ErrUnknownExceptionReason) {
		t.Fatalf("unknown reason: %v", err)
	}
	if _, err := BuildDeliveryException(v(), ReasonNoHolder, "", "", "t", 1); err == nil || !strings.Contains(err.Error(), "event_id is required") {
		t.Fatalf("invalid exception passed: %v", err)
	}
	e, err := NewDeliveryException(v(), ReasonDeliveryFailed, "ses_2")
	if err != nil {
		t.Fatal(err)
	}
	hex := regexp.MustCompile(`^[0-9a-f]{32}$`)
	if !hex.MatchString(e.EventID) || !hex.MatchString(e.TraceID) || e.EventID == e.TraceID ||
		e.DedupeKey != ExceptionDedupePrefix+e.EventID || e.IssuedAt <= 0 || len(e.Validate()) != 0 {
		t.Fatalf("fresh exception %+v", e)
	}
}

func TestDecodeDeliveryExceptionPayload(t *testing.T) {
	p, err := DecodeDeliveryExceptionPayload(`{"original_topic":"t","event_id":"e","reason":"no_holder","payload_summary":"s","dedupe_key":"k","source":"agent","extra":1}`)
	if err != nil || p.Payload != "" || p.SourceSession != "" || p.OriginalTopic != "t" || p.Source != SourceAgent {
		t.Fatalf("absent members: %+v %v", p, err)
	}
	if _, err := DecodeDeliveryExceptionPayload(`{"payload":1}`); err == nil || err.Error() != "payload.payload must be a string" {
		t.Fatalf("type error: %v", err)
	}
	if _, err := DecodeDeliveryExceptionPayload(`[]`); err == nil {
		t.Fatal("array accepted")
	}
}
