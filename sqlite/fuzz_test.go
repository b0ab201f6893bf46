package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// modelAppend is AppendRun's event rule (store.RunStore.AppendRun, check 3) written as plainly
// as possible: the oracle for FuzzAppendBatch.
func modelAppend(stored []store.Event, batch []store.Event) (index int, reason error) {
	seqs, ids := map[int64]bool{}, map[string]bool{}
	var prev int64
	for _, e := range stored {
		seqs[e.LogicalSequence], ids[e.EventID] = true, true
		prev = e.LogicalSequence
	}
	for i, e := range batch {
		if e.LogicalSequence <= prev {
			if seqs[e.LogicalSequence] {
				return i, store.ErrDuplicateSequence
			}
			return i, store.ErrOutOfOrder
		}
		if ids[e.EventID] {
			return i, store.ErrDuplicateEventID
		}
		seqs[e.LogicalSequence], ids[e.EventID] = true, true
		prev = e.LogicalSequence
	}
	return -1, nil
}

// decodeFuzzBatch turns fuzz bytes into a stored prefix and a batch: byte 0 picks how many
// stored events (sequences 2, 4, 6, … with IDs base-0, base-1, …); then each byte pair is one
// batch event: a signed step from the previous sequence and an ID selector (values ≥ 12 reuse
// a stored ID, others pick one of twelve fresh IDs).
func decodeFuzzBatch(run string, data []byte) (stored, batch []store.Event) {
	if len(data) == 0 {
		return nil, nil
	}
	n := int(data[0] % 5)
	for i := range n {
		stored = append(stored, storetest.Event(run, int64(2*(i+1)), fmt.Sprintf("base-%d", i)))
	}
	prev := int64(2 * n)
	for i := 1; i+1 < len(data) && len(batch) < 64; i += 2 {
		seq := max(prev+int64(int8(data[i])), 1)
		sel := data[i+1] % 16
		id := fmt.Sprintf("id-%d", sel)
		if sel >= 12 {
			id = fmt.Sprintf("base-%d", int(sel-12)%max(n, 1))
		}
		batch = append(batch, storetest.Event(run, seq, id))
		prev = seq
	}
	return stored, batch
}

// FuzzAppendBatch: for any batch, the SQLite backend refuses exactly where the contract's rule
// says, with the same reason, and stores the whole batch or nothing.
func FuzzAppendBatch(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 1, 0, 1, 1, 1, 2},
		{3, 1, 0, 1, 0},          // same ID twice
		{3, 0xff, 0},             // 6-1 = 5, a gap below the last stored: out of order
		{3, 0xfe, 0},             // 6-2 = 4, a stored sequence: duplicate
		{2, 0xfd, 0},             // 4-3 = 1, never stored: out of order
		{4, 1, 12, 1, 0},         // stored ID
		{1, 5, 0, 0, 1},          // same sequence twice in the batch
		{0, 3, 0, 0xfe, 1},       // decreasing into nothing: out of order
		{2, 2, 0, 2, 1, 0xfe, 2}, // back onto an earlier batch sequence
	} {
		f.Add(seed)
	}
	s, err := sqlite.Open(filepath.Join(f.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	var counter atomic.Int64
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		run := fmt.Sprintf("run-%d", counter.Add(1))
		stored, batch := decodeFuzzBatch(run, data)
		if len(batch) == 0 {
			return
		}
		var last int64
		if len(stored) > 0 {
			last = stored[len(stored)-1].LogicalSequence
			if _, err := s.AppendRun(ctx, "o", run, store.AppendRequest{Events: stored, Snapshot: []byte("base"), Status: "running"}); err != nil {
				t.Fatalf("base: %v", err)
			}
		}
		wantIndex, wantReason := modelAppend(stored, batch)
		_, err := s.AppendRun(ctx, "o", run, store.AppendRequest{ExpectedLastLogicalSequence: last, Events: batch, Snapshot: []byte("new"), Status: "running"})
		want := stored
		if wantReason == nil {
			if err != nil {
				t.Fatalf("AppendRun: %v, want success", err)
			}
			want = append(append([]store.Event{}, stored...), batch...)
		} else {
			var ee *store.EventError
			if !errors.As(err, &ee) || ee.Index != wantIndex || !errors.Is(err, wantReason) {
				t.Fatalf("AppendRun: %v, want index %d %v", err, wantIndex, wantReason)
			}
		}
		got, err := s.ReadEvents(ctx, "o", run, 0, 1000)
		if len(want) == 0 {
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("refused first batch: ReadEvents = %d events, %v; want ErrNotFound", len(got), err)
			}
			return
		}
		if err != nil || len(got) != len(want) {
			t.Fatalf("stored %d events (%v), want %d", len(got), err, len(want))
		}
		for i := range got {
			if got[i].LogicalSequence != want[i].LogicalSequence || got[i].EventID != want[i].EventID {
				t.Fatalf("event %d = %d/%s, want %d/%s", i, got[i].LogicalSequence, got[i].EventID, want[i].LogicalSequence, want[i].EventID)
			}
		}
	})
}
