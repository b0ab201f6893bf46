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

// How the relay scopes a lookup by gid: an org sees its own channels, a swarm is reached only
// through membership, and a `reply_to` must also name the very stream of the reply (hive.md S2,
// S3), else the same 404 as an unknown gid.
func ExampleMessageScope() {
	general := store.OrgStream("org-acme", "org:acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general")
	swarm := store.SwarmStream("sw-1")
	scope := store.MessageScope{Org: "org-acme", Swarms: []string{"sw-1"}}
	fmt.Println(scope.Includes(general), scope.Includes(swarm))
	other := store.MessageScope{Org: "org-other"}
	fmt.Println(other.Includes(general), other.Includes(swarm))

	replied := general // the stream of the message reply_to names, from GetMessage
	reply := swarm     // the stream of the reply
	fmt.Println(replied == reply)
	// Output:
	// true true
	// false false
	// false
}
