package store_test

import (
	"errors"
	"fmt"

	"github.com/agentwire/agentwire/store"
)

// A relay's reaction to AppendRun's typed errors: reload and retry on a conflict, answer the
// event's index on a refusal.
func ExampleConflictError() {
	for _, err := range []error{
		&store.ConflictError{RunID: "run-1", Expected: 4, Actual: 6},
		&store.EventError{Index: 2, LogicalSequence: 5, EventID: "e-5", Reason: store.ErrDuplicateEventID},
	} {
		var conflict *store.ConflictError
		var refused *store.EventError
		switch {
		case errors.As(err, &conflict):
			fmt.Printf("reload %s from %d and re-reduce\n", conflict.RunID, conflict.Actual)
		case errors.As(err, &refused) && errors.Is(err, store.ErrDuplicate):
			fmt.Printf("refuse the batch at index %d: %v\n", refused.Index, refused.Reason)
		}
	}
	// Output:
	// reload run-1 from 6 and re-reduce
	// refuse the batch at index 2: store: duplicate event ID
}

// The live-reader pattern a backend's Subscribe supports: subscribe, read, wait, read again.
func ExampleHub() {
	var hub store.Hub
	wake, cancel := hub.Subscribe("org", "run-1")
	defer cancel()

	hub.Notify("org", "run-1") // a commit
	hub.Notify("org", "run-1") // another one before the reader woke: they coalesce
	<-wake
	fmt.Println("woken; read events after my cursor")
	select {
	case <-wake:
		fmt.Println("woken again")
	default:
		fmt.Println("nothing more pending")
	}
	// Output:
	// woken; read events after my cursor
	// nothing more pending
}
