package storetest_test

import (
	"fmt"

	"github.com/agentwire/agentwire/storetest"
)

// The fixtures the suite stores: each event's data names its run, sequence and ID, and the
// snapshot names the run's last sequence and count, so misplaced data shows in a failure.
func ExampleBatch() {
	for _, e := range storetest.Batch("run-1", storetest.Seqs(1, 2)...) {
		fmt.Println(e.LogicalSequence, e.EventID, e.Type, string(e.Data))
	}
	fmt.Println(string(storetest.Snapshot(2, 2)))
	// Output:
	// 1 run-1-e1 message.part.delta {"runId":"run-1","logicalSequence":1,"eventId":"run-1-e1"}
	// 2 run-1-e2 message.part.delta {"runId":"run-1","logicalSequence":2,"eventId":"run-1-e2"}
	// {"lastLogicalSequence":2,"eventCount":2}
}
