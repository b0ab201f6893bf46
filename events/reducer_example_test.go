package events_test

import (
	"fmt"

	"github.com/agentwire/agentwire/events"
)

// Fold a stream into a snapshot, event by event, keeping the last good state on a refusal.
func ExampleReduce() {
	lines := []string{
		`{"type":"run.started","protocolVersion":1,"eventId":"run-1:1","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":1,"sequence":1,"timestamp":"2025-01-01T00:00:00.000Z"}`,
		`{"type":"message.started","messageId":"m","role":"assistant","protocolVersion":1,"eventId":"run-1:2","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":2,"sequence":2,"timestamp":"2025-01-01T00:00:00.100Z"}`,
		`{"type":"message.part.delta","messageId":"m","part":{"type":"text","text":"Hello"},"protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`,
		// A re-sent event is an exact duplicate: no change, no error.
		`{"type":"message.part.delta","messageId":"m","part":{"type":"text","text":"Hello"},"protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`,
		// Out of order: refused, the state stays as it was.
		`{"type":"message.part.delta","messageId":"m","part":{"type":"text","text":"!"},"protocolVersion":1,"eventId":"run-1:4","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":2,"sequence":4,"timestamp":"2025-01-01T00:00:00.300Z"}`,
		`{"type":"run.completed","finishReason":"stop","content":[],"protocolVersion":1,"eventId":"run-1:5","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":5,"sequence":5,"timestamp":"2025-01-01T00:00:00.400Z"}`,
	}
	s := events.NewReducerState()
	for i, line := range lines {
		e, err := events.ParseEvent([]byte(line))
		if err != nil {
			fmt.Printf("line %d: %v\n", i+1, err)
			continue
		}
		next, err := events.Reduce(s, e)
		if err != nil {
			fmt.Printf("line %d: %v\n", i+1, err)
			continue
		}
		s = next
	}
	fmt.Println(s.Status(), s.EventCount())
	for _, m := range s.Messages() {
		for _, p := range m.Content {
			text, _ := p.Raw.Get("text")
			fmt.Println(m.MessageID, m.Role, p.Type, text)
		}
	}
	// Output:
	// line 5: Agent event logical sequence must increase monotonically.
	// completed 4
	// m assistant text Hello
}

// A snapshot survives a round trip through its JSON form and continues identically.
func ExampleDecodeReducerState() {
	s := events.NewReducerState()
	data, _ := s.MarshalJSON()
	fmt.Println(string(data))
	d, err := events.DecodeReducerState(data)
	fmt.Println(d.Status(), err)
	_, err = events.DecodeReducerState([]byte(`{"status":"idle"}`))
	fmt.Println(err)
	// Output:
	// {"protocolVersion":null,"runId":null,"sessionId":null,"status":"idle","messages":[],"toolCalls":[],"toolProgress":[],"toolResults":[],"toolErrors":[],"interrupt":null,"interruptResolution":null,"usage":null,"limit":null,"finishReason":null,"errorCode":null,"cancellationReason":null,"lastSequence":0,"lastLogicalSequence":0,"lastPhaseId":null,"eventIds":[],"eventFingerprints":{}}
	// idle <nil>
	// Agent reducer state.protocolVersion is invalid.
}
