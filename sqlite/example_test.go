package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

// Append a reduced batch with its snapshot, then read it back from a cursor.
func Example() {
	dir, err := os.MkdirTemp("", "agentwire-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx := context.Background()

	info, err := s.AppendRun(ctx, "local", "run-1", store.AppendRequest{
		ExpectedLastLogicalSequence: 0, // a new run
		Events: []store.Event{
			{LogicalSequence: 1, EventID: "run-1:1", Type: "run.started", Data: []byte(`{"type":"run.started"}`)},
			{LogicalSequence: 2, EventID: "run-1:2", Type: "run.completed", Data: []byte(`{"type":"run.completed"}`)},
		},
		Snapshot: []byte(`{"status":"completed"}`),
		Status:   "completed",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(info.RunID, info.Status, info.EventCount, info.LastLogicalSequence)

	events, err := s.ReadEvents(ctx, "local", "run-1", 1, 100)
	if err != nil {
		panic(err)
	}
	for _, e := range events {
		fmt.Printf("id: %d\nevent: %s\ndata: %s\n", e.LogicalSequence, e.Type, e.Data)
	}

	// Another org does not see the run.
	_, _, err = s.GetRun(ctx, "other-org", "run-1")
	fmt.Println(err)
	// Output:
	// run-1 completed 2 2
	// id: 2
	// event: run.completed
	// data: {"type":"run.completed"}
	// store: not found
}
