package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/store"
)

// ReduceLines re-reduces event lines from an empty state and returns the state's JSON.
func ReduceLines(t testing.TB, lines [][]byte) []byte {
	t.Helper()
	st := events.NewReducerState()
	for i, l := range lines {
		ev, err := events.ParseEvent(l)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if st, err = events.Reduce(st, ev); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
	}
	return st.AppendJSON(nil)
}

// CheckCheckpoint checks a run as a relay stored it: its checkpoint equals re-reducing the
// events it covers, the checkpoint plus the later events equals re-reducing them all, and the
// event count agrees. It returns that reduced state, the stored event lines and the run's info.
func CheckCheckpoint(t testing.TB, st store.RunStore, org, runID string) (state []byte, lines [][]byte, info store.RunInfo) {
	t.Helper()
	snap, info, err := st.GetRun(context.Background(), org, runID)
	if err != nil {
		t.Fatalf("GetRun %s/%s: %v", org, runID, err)
	}
	stored, err := st.ReadEvents(context.Background(), org, runID, 0, 1<<30)
	if err != nil {
		t.Fatalf("ReadEvents %s/%s: %v", org, runID, err)
	}
	var covered [][]byte
	for _, e := range stored {
		lines = append(lines, e.Data)
		if e.LogicalSequence <= info.SnapshotSequence {
			covered = append(covered, e.Data)
		}
	}
	if want := ReduceLines(t, covered); !bytes.Equal(snap, want) {
		t.Fatalf("checkpoint of %s (covering %d) differs from re-reducing its %d events:\n got %s\nwant %s", runID, info.SnapshotSequence, len(covered), snap, want)
	}
	cp, err := events.DecodeReducerState(snap)
	if err != nil {
		t.Fatalf("checkpoint of %s does not decode: %v", runID, err)
	}
	for _, l := range lines[len(covered):] {
		ev, err := events.ParseEvent(l)
		if err != nil {
			t.Fatal(err)
		}
		if cp, err = events.Reduce(cp, ev); err != nil {
			t.Fatalf("re-reducing %s after its checkpoint: %v", runID, err)
		}
	}
	state, want := cp.AppendJSON(nil), ReduceLines(t, lines)
	if !bytes.Equal(state, want) {
		t.Fatalf("checkpoint of %s plus its %d later events differs from re-reducing its %d events:\n got %s\nwant %s", runID, len(lines)-len(covered), len(lines), state, want)
	}
	if info.EventCount != int64(len(lines)) {
		t.Fatalf("%s: eventCount %d, stored events %d", runID, info.EventCount, len(lines))
	}
	return state, lines, info
}
