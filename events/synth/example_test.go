package synth_test

import (
	"os"

	"github.com/agentwire/agentwire/events/synth"
)

// The smallest run: run.started and run.completed, one phase, timestamps from the epoch.
func ExampleGenerate() {
	if err := synth.Generate(os.Stdout, 2, 1, "run-1"); err != nil {
		panic(err)
	}
	// Output:
	// {"type":"run.started","protocolVersion":1,"eventId":"run-1:1","runId":"run-1","sessionId":"session-1","phaseId":"8707a01d-6329-483f-87df-1bd4a477b564","logicalSequence":1,"sequence":1,"timestamp":"2025-01-01T00:00:00.000Z"}
	// {"type":"run.completed","finishReason":"stop","content":[],"protocolVersion":1,"eventId":"run-1:2","runId":"run-1","sessionId":"session-1","phaseId":"8707a01d-6329-483f-87df-1bd4a477b564","logicalSequence":2,"sequence":2,"timestamp":"2025-01-01T00:00:00.038Z"}
}
