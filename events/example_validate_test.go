package events_test

import (
	"errors"
	"fmt"

	"github.com/agentwire/agentwire/events"
)

// ExampleParseEvent decodes the worked example of events.md §3.7 and shows a rejected event.
func ExampleParseEvent() {
	ev, err := events.ParseEvent([]byte(`{"type":"message.part.delta","messageId":"m-1",
		"part":{"type":"text","text":"Hel"},"protocolVersion":1,"eventId":"run-1:3",
		"runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":3,"sequence":3,
		"timestamp":"2025-01-01T00:00:00.200Z"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	delta := ev.Payload().(events.MessagePartDelta)
	text, _ := delta.Part.Raw.Get("text")
	fmt.Println(ev.Type(), ev.EventID(), ev.LogicalSequence(), delta.MessageID, delta.Part.Type, text)
	fmt.Println(ev.Fingerprint())

	_, err = events.ParseEvent([]byte(`{"protocolVersion":"1"}`))
	var ve *events.ValidationError
	fmt.Println(errors.As(err, &ve), err)
	// Output:
	// message.part.delta run-1:3 3 m-1 text Hel
	// sha256:2dd49398fc79c44a811403fa8d36fc9516cb13e528e1aa8fe636717867aa684a
	// true Unsupported Agent event protocol version: 1.
}

// ExampleValidateToolInput checks a tool call's arguments against registered parameters.
func ExampleValidateToolInput() {
	params, err := events.ValidateToolParameters("weather", map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}},
		"required":             []any{"city"},
		"additionalProperties": false,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(events.ValidateToolInput(params, map[string]any{"city": "Oslo", "days": 2}, "weather"))
	fmt.Println(events.ValidateToolInput(params, map[string]any{"days": 2}, "weather"))
	fmt.Println(events.ValidateToolInput(params, map[string]any{"city": "Oslo", "days": 1.5}, "weather"))
	// Output:
	// <nil>
	// Missing required input $.city for tool weather.
	// Invalid input at $.days for tool weather.
}
