// Package storetest is the conformance suite every [store.Store] backend must pass (design.md
// principle 7: "one Store interface, one shared test suite that both SQLite and JetStream must
// pass"). A backend's own test file calls [RunAll] (or [Run], [RunBus] and
// [RunNotifications]) with an [Opener]:
//
//	func TestConformance(t *testing.T) {
//		storetest.RunAll(t, func(t *testing.T, dir string) store.Store {
//			s, err := sqlite.Open(filepath.Join(dir, "agentwire.db"), sqlite.Options{})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// The suite checks the contract written on [store.RunStore]: ordering, atomic batches (a
// refused batch stores nothing, checkpoint included), checkpoints (a batch without a snapshot
// keeps the previous checkpoint and the sequence it covers while status and counters advance;
// PutCheckpoint stores only a newer checkpoint, never beyond the last event, megabytes round
// trip byte for byte), optimistic-concurrency conflicts, refusal of duplicate sequences and event IDs with the index
// of the first offending event, cursors (a read after every cursor returns exactly the
// remaining events), limits, run listing (order, status filter, cursor pagination), org
// isolation, concurrent writers on distinct runs and on one run (no lost, duplicated or
// half-applied batch), reopening after Close, change notification after commit, and Close
// semantics.
//
// [RunBus] checks [store.BusStore] and [RunNotifications] checks [store.NotificationStore] (see
// their docs); [RunAll] runs the three suites. The suites never assert wall-clock durations;
// waits are bounded only to turn a hang into a failure. Bus expiry is relative to the backend's
// own clock, so those tests use margins of an hour or more; envelope times are explicit.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
)

// Opener opens the backend whose data lives in dir, creating it when dir is empty. The suite
// calls it again with the same dir after closing the first instance and expects the same data.
// The suite closes every store it opens.
type Opener func(t *testing.T, dir string) store.Store

// wait bounds every wait for a notification: long enough for a loaded 2-core CI machine, and
// only there to turn a hang into a failure.
const wait = 20 * time.Second

// Run runs the whole suite as subtests of t; for a [store.StreamAppender] it runs it again
// under "Streamed" with every append made through AppendRunStream, plus the stream's own tests.
func Run(t *testing.T, open Opener) {
	runRuns(t, open)
	runStreamed(t, open)
}

// runRuns runs the runs suite on the stores open returns.
func runRuns(t *testing.T, open Opener) {
	h := &harness{open: open}
	for _, c := range []struct {
		name string
		f    func(*testing.T, *harness)
	}{
		{"AppendAndRead", testAppendAndRead},
		{"InvalidArguments", testInvalidArguments},
		{"NotFound", testNotFound},
		{"RefusedBatchStoresNothing", testRefusedBatch},
		{"Conflict", testConflict},
		{"Cursors", testCursors},
		{"Limits", testLimits},
		{"BoundedReads", testBoundedReads},
		{"Checkpoints", testCheckpoints},
		{"PutCheckpoint", testPutCheckpoint},
		{"OpaqueBytes", testOpaqueBytes},
		{"LargeBatch", testLargeBatch},
		{"ListRuns", testListRuns},
		{"OrgIsolation", testOrgIsolation},
		{"ConcurrentDistinctRuns", testConcurrentDistinctRuns},
		{"ConcurrentSameRun", testConcurrentSameRun},
		{"ConcurrentMixedRefusals", testConcurrentMixedRefusals},
		{"Reopen", testReopen},
		{"Subscribe", testSubscribe},
		{"CanceledContext", testCanceledContext},
		{"Closed", testClosed},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, h) })
	}
}

type harness struct{ open Opener }

// fresh opens a store on a new directory and closes it when the test ends. A test may Close it
// itself first (to reopen the directory): Close is idempotent (store.Store).
func (h *harness) fresh(t *testing.T) (store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s := h.open(t, dir)
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

// Event returns the event the suite stores for (runID, seq, eventID): its Data is a small JSON
// object naming all three, so a misplaced event is visible in a failure.
func Event(runID string, seq int64, eventID string) store.Event {
	return store.Event{
		LogicalSequence: seq,
		EventID:         eventID,
		Type:            "message.part.delta",
		Data:            fmt.Appendf(nil, `{"runId":%q,"logicalSequence":%d,"eventId":%q}`, runID, seq, eventID),
	}
}

// Batch returns Event(runID, seq, "<runID>-e<seq>") for each seq.
func Batch(runID string, seqs ...int64) []store.Event {
	out := make([]store.Event, len(seqs))
	for i, q := range seqs {
		out[i] = Event(runID, q, fmt.Sprintf("%s-e%d", runID, q))
	}
	return out
}

// Seqs returns first, first+1, …, first+n-1.
func Seqs(first int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)
	}
	return out
}

// Snapshot is the stand-in snapshot the suite stores with a batch: it names the run's last
// sequence and event count, so a snapshot left behind by a refused batch is detectable.
func Snapshot(last, count int64) []byte {
	return fmt.Appendf(nil, `{"lastLogicalSequence":%d,"eventCount":%d}`, last, count)
}

// appendOK appends events after expected and fails the test on error.
func appendOK(t *testing.T, s store.Store, org, runID string, expected, countBefore int64, events []store.Event, status string) store.RunInfo {
	t.Helper()
	last := events[len(events)-1].LogicalSequence
	info, err := s.AppendRun(context.Background(), org, runID, store.AppendRequest{
		ExpectedLastLogicalSequence: expected,
		Events:                      events,
		Snapshot:                    Snapshot(last, countBefore+int64(len(events))),
		Status:                      status,
	})
	if err != nil {
		t.Fatalf("AppendRun(%s/%s, expected %d): %v", org, runID, expected, err)
	}
	if info.SnapshotSequence != last {
		t.Fatalf("AppendRun(%s/%s) with a checkpoint: SnapshotSequence %d, want %d", org, runID, info.SnapshotSequence, last)
	}
	return info
}

func readAll(t *testing.T, s store.Store, org, runID string) []store.Event {
	t.Helper()
	evs, err := s.ReadEvents(context.Background(), org, runID, 0, 1<<30)
	if err != nil {
		t.Fatalf("ReadEvents(%s/%s): %v", org, runID, err)
	}
	return evs
}

func sameEvents(t *testing.T, what string, got, want []store.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d events, want %d\n got: %s\nwant: %s", what, len(got), len(want), describe(got), describe(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.LogicalSequence != w.LogicalSequence || g.EventID != w.EventID || g.Type != w.Type || !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("%s: event %d: got %+v, want %+v", what, i, g, w)
		}
	}
}

func describe(evs []store.Event) string {
	parts := make([]string, len(evs))
	for i, e := range evs {
		parts[i] = fmt.Sprintf("%d/%s", e.LogicalSequence, e.EventID)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// checkRun compares GetRun with the expected state.
func checkRun(t *testing.T, s store.Store, org, runID string, last, count int64, status string) store.RunInfo {
	t.Helper()
	snap, info, err := s.GetRun(context.Background(), org, runID)
	if err != nil {
		t.Fatalf("GetRun(%s/%s): %v", org, runID, err)
	}
	if want := Snapshot(last, count); !bytes.Equal(snap, want) {
		t.Fatalf("GetRun(%s/%s) snapshot = %s, want %s", org, runID, snap, want)
	}
	if info.RunID != runID || info.LastLogicalSequence != last || info.EventCount != count || info.Status != status || info.SnapshotSequence != last {
		t.Fatalf("GetRun(%s/%s) info = %+v, want runID %s last %d count %d status %s, checkpoint at %d", org, runID, info, runID, last, count, status, last)
	}
	if info.CreatedAt.IsZero() || info.UpdatedAt.Before(info.CreatedAt) {
		t.Fatalf("GetRun(%s/%s) times: created %v updated %v", org, runID, info.CreatedAt, info.UpdatedAt)
	}
	return info
}

func testAppendAndRead(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	b1 := Batch("run-1", 1, 2, 3)
	info := appendOK(t, s, "org-a", "run-1", 0, 0, b1, "running")
	if info.RunID != "run-1" || info.LastLogicalSequence != 3 || info.EventCount != 3 || info.Status != "running" {
		t.Fatalf("AppendRun info = %+v", info)
	}
	if info.CreatedAt.IsZero() || !info.UpdatedAt.Equal(info.CreatedAt) {
		t.Fatalf("first append: created %v updated %v, want equal and set", info.CreatedAt, info.UpdatedAt)
	}
	got := checkRun(t, s, "org-a", "run-1", 3, 3, "running")
	if !got.CreatedAt.Equal(info.CreatedAt) || !got.UpdatedAt.Equal(info.UpdatedAt) {
		t.Fatalf("GetRun times %v/%v differ from AppendRun's %v/%v", got.CreatedAt, got.UpdatedAt, info.CreatedAt, info.UpdatedAt)
	}
	b2 := Batch("run-1", 4, 10, 11) // gaps are the reducer's business, not the store's
	info2 := appendOK(t, s, "org-a", "run-1", 3, 3, b2, "completed")
	if !info2.CreatedAt.Equal(info.CreatedAt) || info2.UpdatedAt.Before(info.UpdatedAt) {
		t.Fatalf("second append times: created %v (first %v), updated %v (first %v)", info2.CreatedAt, info.CreatedAt, info2.UpdatedAt, info.UpdatedAt)
	}
	checkRun(t, s, "org-a", "run-1", 11, 6, "completed")
	sameEvents(t, "all events", readAll(t, s, "org-a", "run-1"), append(append([]store.Event{}, b1...), b2...))
	evs, err := s.ReadEvents(ctx, "org-a", "run-1", 11, 10)
	if err != nil || len(evs) != 0 {
		t.Fatalf("ReadEvents at end = %v, %v; want empty, nil", describe(evs), err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

// testCheckpoints: a batch without a snapshot keeps the previous checkpoint and its covered
// sequence while status and counters advance; a refused or conflicting batch changes neither;
// a later checkpoint replaces the previous one; all of it survives a reopen.
func testCheckpoints(t *testing.T, h *harness) {
	s, dir := h.fresh(t)
	ctx := context.Background()
	appendTail := func(expected int64, events []store.Event, status string) store.RunInfo {
		t.Helper()
		info, err := s.AppendRun(ctx, "o", "r", store.AppendRequest{ExpectedLastLogicalSequence: expected, Events: events, Status: status})
		if err != nil {
			t.Fatalf("AppendRun without checkpoint after %d: %v", expected, err)
		}
		return info
	}
	check := func(s store.Store, snapshot []byte, snapSeq, last, count int64, status string) {
		t.Helper()
		snap, info, err := s.GetRun(ctx, "o", "r")
		if err != nil {
			t.Fatalf("GetRun: %v", err)
		}
		if !bytes.Equal(snap, snapshot) || info.SnapshotSequence != snapSeq || info.LastLogicalSequence != last || info.EventCount != count || info.Status != status {
			t.Fatalf("GetRun = %s, %+v; want %s covering %d, last %d, count %d, status %s", snap, info, snapshot, snapSeq, last, count, status)
		}
	}
	appendOK(t, s, "o", "r", 0, 0, Batch("r", 1, 2, 3), "running")
	check(s, Snapshot(3, 3), 3, 3, 3, "running")

	info := appendTail(3, Batch("r", 4, 5), "running")
	if info.SnapshotSequence != 3 || info.LastLogicalSequence != 5 || info.EventCount != 5 {
		t.Fatalf("AppendRun without checkpoint: %+v, want checkpoint at 3, last 5, count 5", info)
	}
	check(s, Snapshot(3, 3), 3, 5, 5, "running")

	// Status is written with every batch: the listing filter sees it without a checkpoint.
	appendTail(5, Batch("r", 6), "completed")
	check(s, Snapshot(3, 3), 3, 6, 6, "completed")
	if runs := listAll(t, s, "o", "completed", 10); len(runs) != 1 || runs[0].RunID != "r" || runs[0].LastLogicalSequence != 6 {
		t.Fatalf("ListRuns(completed) = %+v, want run r at 6", runs)
	}

	for _, c := range []struct {
		name string
		req  store.AppendRequest
	}{
		{"conflict without checkpoint", store.AppendRequest{ExpectedLastLogicalSequence: 5, Events: Batch("r", 7), Status: "failed"}},
		{"conflict with checkpoint", store.AppendRequest{ExpectedLastLogicalSequence: 5, Events: Batch("r", 7), Snapshot: []byte(`{"refused":true}`), Status: "failed"}},
		{"refused event without checkpoint", store.AppendRequest{ExpectedLastLogicalSequence: 6, Events: Batch("r", 7, 6), Status: "failed"}},
		{"refused event with checkpoint", store.AppendRequest{ExpectedLastLogicalSequence: 6, Events: Batch("r", 7, 6), Snapshot: []byte(`{"refused":true}`), Status: "failed"}},
	} {
		if _, err := s.AppendRun(ctx, "o", "r", c.req); err == nil {
			t.Fatalf("%s: AppendRun succeeded", c.name)
		}
		check(s, Snapshot(3, 3), 3, 6, 6, "completed")
	}

	appendOK(t, s, "o", "r", 6, 6, Batch("r", 7, 9), "completed")
	check(s, Snapshot(9, 8), 9, 9, 8, "completed")
	appendTail(9, Batch("r", 10), "completed")
	check(s, Snapshot(9, 8), 9, 10, 9, "completed")

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2 := h.open(t, dir)
	t.Cleanup(func() { _ = s2.Close() })
	check(s2, Snapshot(9, 8), 9, 10, 9, "completed")
	sameEvents(t, "events after reopen", readAll(t, s2, "o", "r"), Batch("r", 1, 2, 3, 4, 5, 6, 7, 9, 10))
}

// testPutCheckpoint: a checkpoint written in its own call replaces an older one, never a newer
// or equal one (stored false), must not be beyond the run's last event, and survives a reopen;
// an unknown run, another org's run and bad arguments change nothing.
func testPutCheckpoint(t *testing.T, h *harness) {
	s, dir := h.fresh(t)
	ctx := context.Background()
	appendOK(t, s, "o", "r", 0, 0, Batch("r", 1, 2), "running")
	if _, err := s.AppendRun(ctx, "o", "r", store.AppendRequest{ExpectedLastLogicalSequence: 2, Events: Batch("r", 3, 4, 5, 7), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	covered := func(s store.Store) (int64, []byte) {
		t.Helper()
		snap, info, err := s.GetRun(ctx, "o", "r")
		if err != nil {
			t.Fatalf("GetRun: %v", err)
		}
		if info.LastLogicalSequence != 7 || info.EventCount != 6 {
			t.Fatalf("GetRun info %+v: the events changed", info)
		}
		return info.SnapshotSequence, snap
	}
	for _, c := range []struct {
		name      string
		org, run  string
		seq       int64
		snap      []byte
		stored    bool
		err       error
		wantSeq   int64
		wantBytes []byte
	}{
		{"newer", "o", "r", 4, Snapshot(4, 4), true, nil, 4, Snapshot(4, 4)},
		{"equal is obsolete", "o", "r", 4, []byte(`{"other":1}`), false, nil, 4, Snapshot(4, 4)},
		{"older is obsolete", "o", "r", 3, Snapshot(3, 3), false, nil, 4, Snapshot(4, 4)},
		{"beyond the last event", "o", "r", 8, Snapshot(8, 7), false, store.ErrInvalid, 4, Snapshot(4, 4)},
		{"zero sequence", "o", "r", 0, Snapshot(1, 1), false, store.ErrInvalid, 4, Snapshot(4, 4)},
		{"empty snapshot", "o", "r", 5, nil, false, store.ErrInvalid, 4, Snapshot(4, 4)},
		{"unknown run", "o", "nope", 1, Snapshot(1, 1), false, store.ErrNotFound, 4, Snapshot(4, 4)},
		{"another org", "p", "r", 5, Snapshot(5, 5), false, store.ErrNotFound, 4, Snapshot(4, 4)},
		{"between events", "o", "r", 6, Snapshot(6, 5), true, nil, 6, Snapshot(6, 5)},
		{"the last event", "o", "r", 7, Snapshot(7, 6), true, nil, 7, Snapshot(7, 6)},
	} {
		stored, err := s.PutCheckpoint(ctx, c.org, c.run, c.seq, c.snap)
		if stored != c.stored || (c.err == nil) != (err == nil) || (c.err != nil && !errors.Is(err, c.err)) {
			t.Fatalf("%s: PutCheckpoint = %v, %v; want %v, %v", c.name, stored, err, c.stored, c.err)
		}
		if seq, snap := covered(s); seq != c.wantSeq || !bytes.Equal(snap, c.wantBytes) {
			t.Fatalf("%s: checkpoint %s at %d, want %s at %d", c.name, snap, seq, c.wantBytes, c.wantSeq)
		}
	}
	// An append after PutCheckpoint answers the sequence the stored checkpoint now covers.
	info, err := s.AppendRun(ctx, "o", "r", store.AppendRequest{ExpectedLastLogicalSequence: 7, Events: Batch("r", 8), Status: "running"})
	if err != nil || info.SnapshotSequence != 7 {
		t.Fatalf("AppendRun after PutCheckpoint at 7: SnapshotSequence %d, %v; want 7", info.SnapshotSequence, err)
	}
	if _, err := s.PutCheckpoint(ctx, "o", "r", 8, Snapshot(8, 7)); err != nil {
		t.Fatal(err)
	}
	// A snapshot of megabytes (a long run's) round-trips byte for byte.
	big := make([]byte, 0, 3<<20+17)
	for len(big) < cap(big) {
		big = append(big, byte('a'+len(big)%23))
	}
	if stored, err := s.PutCheckpoint(ctx, "o", "r", 8, big); err != nil || stored {
		t.Fatalf("PutCheckpoint at the covered sequence = %v, %v; want obsolete", stored, err)
	}
	if info, err := s.AppendRun(ctx, "o", "r", store.AppendRequest{ExpectedLastLogicalSequence: 8, Events: Batch("r", 11), Status: "running"}); err != nil || info.SnapshotSequence != 8 {
		t.Fatalf("AppendRun after PutCheckpoint at 8: SnapshotSequence %d, %v; want 8", info.SnapshotSequence, err)
	}
	if stored, err := s.PutCheckpoint(ctx, "o", "r", 11, big); err != nil || !stored {
		t.Fatalf("PutCheckpoint of %d bytes = %v, %v", len(big), stored, err)
	}
	if snap, info, err := s.GetRun(ctx, "o", "r"); err != nil || info.SnapshotSequence != 11 || !bytes.Equal(snap, big) {
		t.Fatalf("GetRun after a large checkpoint: %d bytes at %d, %v", len(snap), info.SnapshotSequence, err)
	}
	// A batch with its own snapshot still replaces it as before; PutCheckpoint cannot undo that.
	appendOK(t, s, "o", "r", 11, 8, Batch("r", 12), "running")
	if stored, err := s.PutCheckpoint(ctx, "o", "r", 11, Snapshot(11, 7)); err != nil || stored {
		t.Fatalf("PutCheckpoint behind an AppendRun checkpoint = %v, %v", stored, err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2 := h.open(t, dir)
	t.Cleanup(func() { _ = s2.Close() })
	snap, info, err := s2.GetRun(ctx, "o", "r")
	if err != nil || info.SnapshotSequence != 12 || !bytes.Equal(snap, Snapshot(12, 9)) {
		t.Fatalf("after reopen: %s %+v %v", snap, info, err)
	}
}

func testInvalidArguments(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	good := store.AppendRequest{Events: Batch("r", 1), Snapshot: Snapshot(1, 1), Status: "running"}
	with := func(f func(*store.AppendRequest)) store.AppendRequest {
		r := good
		r.Events = append([]store.Event(nil), good.Events...)
		f(&r)
		return r
	}
	for _, c := range []struct {
		name       string
		org, runID string
		req        store.AppendRequest
	}{
		{"empty org", "", "r", good},
		{"empty run", "o", "", good},
		// Ids are at most store.MaxIDBytes on every store (relay.md §5.1.1).
		{"org over the id limit", strings.Repeat("o", store.MaxIDBytes+1), "r", good},
		{"run over the id limit", "o", strings.Repeat("r", store.MaxIDBytes+1), good},
		{"negative expected", "o", "r", with(func(r *store.AppendRequest) { r.ExpectedLastLogicalSequence = -1 })},
		{"no events", "o", "r", with(func(r *store.AppendRequest) { r.Events = nil })},
		{"first batch without snapshot", "o", "r", with(func(r *store.AppendRequest) { r.Snapshot = nil })},
		{"empty snapshot", "o", "r", with(func(r *store.AppendRequest) { r.Snapshot = []byte{} })},
		{"no status", "o", "r", with(func(r *store.AppendRequest) { r.Status = "" })},
		{"zero sequence", "o", "r", with(func(r *store.AppendRequest) { r.Events[0].LogicalSequence = 0 })},
		{"negative sequence", "o", "r", with(func(r *store.AppendRequest) { r.Events[0].LogicalSequence = -4 })},
		{"no type", "o", "r", with(func(r *store.AppendRequest) { r.Events[0].Type = "" })},
		{"no data", "o", "r", with(func(r *store.AppendRequest) { r.Events[0].Data = nil })},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := s.AppendRun(ctx, c.org, c.runID, c.req); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("AppendRun: %v, want ErrInvalid", err)
			}
		})
	}
	if _, _, err := s.GetRun(ctx, "o", "r"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after invalid appends GetRun: %v, want ErrNotFound", err)
	}
	for _, c := range []struct {
		name       string
		org, runID string
		after      int64
		limit      int
	}{
		{"empty org", "", "r", 0, 1},
		{"empty run", "o", "", 0, 1},
		{"run over the id limit", "o", strings.Repeat("r", store.MaxIDBytes+1), 0, 1},
		{"negative after", "o", "r", -1, 1},
		{"zero limit", "o", "r", 0, 0},
		{"negative limit", "o", "r", 0, -1},
	} {
		t.Run("read "+c.name, func(t *testing.T) {
			if _, err := s.ReadEvents(ctx, c.org, c.runID, c.after, c.limit); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("ReadEvents: %v, want ErrInvalid", err)
			}
		})
	}
	if _, _, err := s.GetRun(ctx, "", "r"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("GetRun empty org: %v, want ErrInvalid", err)
	}
	if _, err := s.ListRuns(ctx, "", store.ListRunsQuery{Limit: 1}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("ListRuns empty org: %v, want ErrInvalid", err)
	}
	if _, err := s.ListRuns(ctx, "o", store.ListRunsQuery{}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("ListRuns zero limit: %v, want ErrInvalid", err)
	}
	// Ids of exactly store.MaxIDBytes are stored and read back.
	org, run := strings.Repeat("ö", store.MaxIDBytes/2), strings.Repeat("r", store.MaxIDBytes)
	if _, err := s.AppendRun(ctx, org, run, store.AppendRequest{Events: Batch(run, 1), Snapshot: Snapshot(1, 1), Status: "running"}); err != nil {
		t.Fatalf("AppendRun with %d-byte ids: %v", store.MaxIDBytes, err)
	}
	if evs, err := s.ReadEvents(ctx, org, run, 0, 10); err != nil || len(evs) != 1 {
		t.Fatalf("ReadEvents with %d-byte ids: %d events, %v", store.MaxIDBytes, len(evs), err)
	}
}

func testNotFound(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	if _, _, err := s.GetRun(ctx, "o", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetRun: %v, want ErrNotFound", err)
	}
	if _, err := s.ReadEvents(ctx, "o", "nope", 0, 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ReadEvents: %v, want ErrNotFound", err)
	}
	page, err := s.ListRuns(ctx, "o", store.ListRunsQuery{Limit: 10})
	if err != nil || len(page.Runs) != 0 || page.Next != "" {
		t.Fatalf("ListRuns on empty store = %+v, %v", page, err)
	}
}

// testRefusedBatch: every refusal reason, at the right index, leaves the run exactly as it was
// (events, snapshot, status, counters).
func testRefusedBatch(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	const org, run = "org", "run"
	// Stored: sequences 2, 4, 6 (gaps on purpose) with IDs run-e2, run-e4, run-e6.
	base := Batch(run, 2, 4, 6)
	appendOK(t, s, org, run, 0, 0, base, "running")
	ev := func(seq int64, id string) store.Event { return Event(run, seq, id) }
	for _, c := range []struct {
		name   string
		events []store.Event
		index  int
		reason error
	}{
		{"stored sequence", []store.Event{ev(7, "a"), ev(8, "b"), ev(4, "c")}, 2, store.ErrDuplicateSequence},
		{"first event at stored last", []store.Event{ev(6, "a")}, 0, store.ErrDuplicateSequence},
		{"stored sequence below a gap", []store.Event{ev(2, "a")}, 0, store.ErrDuplicateSequence},
		{"gap below last is out of order", []store.Event{ev(5, "a")}, 0, store.ErrOutOfOrder},
		{"sequence repeated in batch", []store.Event{ev(7, "a"), ev(8, "b"), ev(9, "c"), ev(9, "d")}, 3, store.ErrDuplicateSequence},
		{"earlier batch sequence", []store.Event{ev(7, "a"), ev(9, "b"), ev(7, "c")}, 2, store.ErrDuplicateSequence},
		{"decreasing into a batch gap", []store.Event{ev(7, "a"), ev(9, "b"), ev(8, "c")}, 2, store.ErrOutOfOrder},
		{"stored event ID", []store.Event{ev(7, "a"), ev(8, "b"), ev(9, "c"), ev(10, "d"), ev(11, "run-e4")}, 4, store.ErrDuplicateEventID},
		{"event ID repeated in batch", []store.Event{ev(7, "a"), ev(8, "a")}, 1, store.ErrDuplicateEventID},
		{"first fault wins (ID before order)", []store.Event{ev(7, "run-e2"), ev(3, "x")}, 0, store.ErrDuplicateEventID},
		{"first fault wins (order before ID)", []store.Event{ev(7, "a"), ev(3, "x"), ev(9, "a")}, 1, store.ErrOutOfOrder},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.AppendRun(ctx, org, run, store.AppendRequest{
				ExpectedLastLogicalSequence: 6,
				Events:                      c.events,
				Snapshot:                    []byte(`{"refused":true}`),
				Status:                      "completed",
			})
			var ee *store.EventError
			if !errors.As(err, &ee) {
				t.Fatalf("AppendRun: %v, want *store.EventError", err)
			}
			if ee.Index != c.index || !errors.Is(err, c.reason) {
				t.Fatalf("AppendRun: index %d reason %v (%v), want index %d reason %v", ee.Index, ee.Reason, err, c.index, c.reason)
			}
			if bad := c.events[c.index]; ee.LogicalSequence != bad.LogicalSequence || ee.EventID != bad.EventID {
				t.Fatalf("EventError names %d/%q, want %d/%q", ee.LogicalSequence, ee.EventID, bad.LogicalSequence, bad.EventID)
			}
			if dup := errors.Is(err, store.ErrDuplicate); dup != (c.reason != store.ErrOutOfOrder) {
				t.Fatalf("errors.Is(err, ErrDuplicate) = %v for %v", dup, c.reason)
			}
			sameEvents(t, "after refusal", readAll(t, s, org, run), base)
			checkRun(t, s, org, run, 6, 3, "running")
		})
	}
	// A refused first batch does not create the run.
	_, err := s.AppendRun(ctx, org, "new-run", store.AppendRequest{
		Events: []store.Event{Event("new-run", 1, "x"), Event("new-run", 2, "x")}, Snapshot: Snapshot(2, 2), Status: "running",
	})
	if !errors.Is(err, store.ErrDuplicateEventID) {
		t.Fatalf("refused first batch: %v, want ErrDuplicateEventID", err)
	}
	if _, _, err := s.GetRun(ctx, org, "new-run"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetRun after refused first batch: %v, want ErrNotFound", err)
	}
	page, err := s.ListRuns(ctx, org, store.ListRunsQuery{Limit: 10})
	if err != nil || len(page.Runs) != 1 || page.Runs[0].RunID != run {
		t.Fatalf("ListRuns after refused first batch = %+v, %v", page, err)
	}
	// The run still accepts the batch that continues it.
	appendOK(t, s, org, run, 6, 3, Batch(run, 7), "running")
}

func testConflict(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	appendOK(t, s, "o", "r", 0, 0, Batch("r", 1, 2), "running")
	for _, c := range []struct {
		name     string
		runID    string
		expected int64
		actual   int64
	}{
		{"behind", "r", 1, 2},
		{"ahead", "r", 5, 2},
		{"new run expected as existing", "new", 3, 0},
		{"existing run expected as new", "r", 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.AppendRun(ctx, "o", c.runID, store.AppendRequest{
				ExpectedLastLogicalSequence: c.expected,
				Events:                      Batch(c.runID, 10),
				Snapshot:                    Snapshot(10, 3),
				Status:                      "running",
			})
			var ce *store.ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, store.ErrConflict) {
				t.Fatalf("AppendRun: %v, want *store.ConflictError", err)
			}
			if ce.RunID != c.runID || ce.Expected != c.expected || ce.Actual != c.actual {
				t.Fatalf("ConflictError = %+v, want run %s expected %d actual %d", ce, c.runID, c.expected, c.actual)
			}
		})
	}
	sameEvents(t, "after conflicts", readAll(t, s, "o", "r"), Batch("r", 1, 2))
	checkRun(t, s, "o", "r", 2, 2, "running")
	if _, _, err := s.GetRun(ctx, "o", "new"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("conflicting first batch created the run: %v", err)
	}
	// A conflict also wins over an event fault: the caller must reload before anything else.
	_, err := s.AppendRun(ctx, "o", "r", store.AppendRequest{
		ExpectedLastLogicalSequence: 1, Events: Batch("r", 1), Snapshot: Snapshot(1, 1), Status: "running",
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale duplicate: %v, want ErrConflict", err)
	}
}

// testCursors: after every possible cursor (0, each stored sequence, each gap value, beyond the
// end) a read returns exactly the remaining events, and paging with every limit concatenates
// to the whole run.
func testCursors(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	seqs := []int64{1, 2, 3, 5, 8, 13, 21, 22, 23, 30}
	var all []store.Event
	var count int64
	for _, chunk := range [][]int64{seqs[:1], seqs[1:4], seqs[4:5], seqs[5:]} {
		var expected int64
		if len(all) > 0 {
			expected = all[len(all)-1].LogicalSequence
		}
		b := Batch("r", chunk...)
		appendOK(t, s, "o", "r", expected, count, b, "running")
		all = append(all, b...)
		count += int64(len(b))
	}
	for after := int64(0); after <= 32; after++ {
		var want []store.Event
		for _, e := range all {
			if e.LogicalSequence > after {
				want = append(want, e)
			}
		}
		got, err := s.ReadEvents(ctx, "o", "r", after, 100)
		if err != nil {
			t.Fatalf("ReadEvents(after %d): %v", after, err)
		}
		sameEvents(t, fmt.Sprintf("after %d", after), got, want)
	}
	for limit := 1; limit <= len(all)+1; limit++ {
		var got []store.Event
		cursor := int64(0)
		for pages := 0; ; pages++ {
			if pages > len(all)+1 {
				t.Fatalf("limit %d: paging does not end", limit)
			}
			page, err := s.ReadEvents(ctx, "o", "r", cursor, limit)
			if err != nil {
				t.Fatalf("ReadEvents(after %d, limit %d): %v", cursor, limit, err)
			}
			if len(page) > limit {
				t.Fatalf("ReadEvents(limit %d) returned %d events", limit, len(page))
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			cursor = page[len(page)-1].LogicalSequence
		}
		sameEvents(t, fmt.Sprintf("paged by %d", limit), got, all)
	}
}

func testLimits(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	b := Batch("r", Seqs(1, 7)...)
	appendOK(t, s, "o", "r", 0, 0, b, "running")
	for _, c := range []struct {
		after int64
		limit int
		want  []store.Event
	}{
		{0, 1, b[:1]},
		{0, 3, b[:3]},
		{0, 7, b},
		{0, 8, b},
		{0, 1 << 30, b},
		{3, 2, b[3:5]},
		{6, 5, b[6:]},
		{7, 5, nil},
		{100, 5, nil},
	} {
		got, err := s.ReadEvents(ctx, "o", "r", c.after, c.limit)
		if err != nil {
			t.Fatalf("ReadEvents(%d, %d): %v", c.after, c.limit, err)
		}
		sameEvents(t, fmt.Sprintf("after %d limit %d", c.after, c.limit), got, c.want)
	}
}

// testBoundedReads: a store.BoundedReader's pages stop at the byte budget, never return less
// than one event when one follows, say when they were cut, and page through exactly what
// ReadEvents returns. (Skipped for a backend that does not implement it.)
func testBoundedReads(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	br, ok := s.(store.BoundedReader)
	if !ok {
		t.Skip("the backend does not bound reads by bytes")
	}
	ctx := context.Background()
	b := Batch("r", Seqs(1, 9)...)
	b[4].Data = append(b[4].Data, make([]byte, 1000)...) // one large event in the middle
	for i := range b[4].Data[len(b[4].Data)-1000:] {
		b[4].Data[len(b[4].Data)-1000+i] = ' '
	}
	appendOK(t, s, "o", "r", 0, 0, b, "running")
	size := len(b[0].Data) // the small events are all about this size
	for _, c := range []struct {
		after         int64
		limit, budget int
		want          []store.Event
		cut           bool
	}{
		{0, 100, 3*size + 5, b[:3], true},
		{0, 2, 3*size + 5, b[:2], false},
		{3, 100, 2 * size, b[3:4], true}, // the large event does not fit after the first
		{4, 100, 10, b[4:5], true},       // the first event is returned whatever its size
		{5, 100, 1 << 20, b[5:], false},
		{9, 100, 1 << 20, nil, false},
	} {
		got, cut, err := br.ReadEventsBounded(ctx, "o", "r", c.after, c.limit, c.budget)
		if err != nil {
			t.Fatalf("ReadEventsBounded(%d, %d, %d): %v", c.after, c.limit, c.budget, err)
		}
		sameEvents(t, fmt.Sprintf("after %d limit %d budget %d", c.after, c.limit, c.budget), got, c.want)
		if cut != c.cut {
			t.Fatalf("after %d limit %d budget %d: cut %v, want %v", c.after, c.limit, c.budget, cut, c.cut)
		}
	}
	// Paging by a small budget yields exactly the run.
	var all []store.Event
	for after := int64(0); ; {
		page, cut, err := br.ReadEventsBounded(ctx, "o", "r", after, 1000, 2*size)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if len(page) == 0 {
			break
		}
		after = page[len(page)-1].LogicalSequence
		_ = cut
	}
	sameEvents(t, "paged", all, b)
	if _, _, err := br.ReadEventsBounded(ctx, "o", "r", 0, 10, 0); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("zero budget: %v, want ErrInvalid", err)
	}
	if _, _, err := br.ReadEventsBounded(ctx, "o", "nope", 0, 10, 100); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing run: %v, want ErrNotFound", err)
	}
}

// testOpaqueBytes: the store neither parses nor normalises: arbitrary bytes in data, snapshot,
// IDs and statuses round-trip exactly, and org or run IDs that look like SQL or patterns are
// just text.
func testOpaqueBytes(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	orgs := []string{"o", "o%", "o_", "O", "o'; DROP TABLE runs; --", "ö", "o\x00x"}
	for i, org := range orgs {
		runID := fmt.Sprintf("run %%_*>.\"'\\ ü %d", i)
		events := []store.Event{
			{LogicalSequence: 1, EventID: "", Type: "run.started", Data: []byte{0, 0xff, 0xfe, '\n', '"'}},
			{LogicalSequence: 2, EventID: "é\u2028", Type: "t\x00y", Data: []byte("not json at all")},
			{LogicalSequence: 3, EventID: "%", Type: "x", Data: bytes.Repeat([]byte{0}, 17)},
		}
		snapshot := []byte{'{', 0, 0xc3, '}'}
		status := "weird status ✓"
		if _, err := s.AppendRun(ctx, org, runID, store.AppendRequest{Events: events, Snapshot: snapshot, Status: status}); err != nil {
			t.Fatalf("AppendRun(%q, %q): %v", org, runID, err)
		}
		sameEvents(t, "opaque events of "+org, readAll(t, s, org, runID), events)
		snap, info, err := s.GetRun(ctx, org, runID)
		if err != nil || !bytes.Equal(snap, snapshot) || info.Status != status || info.RunID != runID {
			t.Fatalf("GetRun(%q, %q) = %q, %+v, %v", org, runID, snap, info, err)
		}
	}
	for _, org := range orgs {
		page, err := s.ListRuns(ctx, org, store.ListRunsQuery{Limit: 10})
		if err != nil || len(page.Runs) != 1 {
			t.Fatalf("ListRuns(%q) = %+v, %v; want exactly its own run", org, page, err)
		}
		page, err = s.ListRuns(ctx, org, store.ListRunsQuery{Limit: 10, Status: "weird status %"})
		if err != nil || len(page.Runs) != 0 {
			t.Fatalf("ListRuns(%q) with a pattern-like status = %+v, %v; want none", org, page, err)
		}
	}
}

// testLargeBatch: the relay's limits (10,000 events per batch, 1 MiB per event) fit in one
// append.
func testLargeBatch(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	b := Batch("r", Seqs(1, 10000)...)
	appendOK(t, s, "o", "r", 0, 0, b, "running")
	big := Event("r", 10001, "big")
	big.Data = bytes.Repeat([]byte("x"), 1<<20)
	appendOK(t, s, "o", "r", 10000, 10000, []store.Event{big}, "running")
	checkRun(t, s, "o", "r", 10001, 10001, "running")
	got := readAll(t, s, "o", "r")
	sameEvents(t, "large batch", got, append(b, big))
}

// listAll pages through ListRuns with the given page size and returns the run IDs in order.
func listAll(t *testing.T, s store.Store, org, status string, limit int) []store.RunInfo {
	t.Helper()
	var out []store.RunInfo
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("ListRuns paging does not end")
		}
		page, err := s.ListRuns(context.Background(), org, store.ListRunsQuery{Status: status, Limit: limit, Cursor: cursor})
		if err != nil {
			t.Fatalf("ListRuns(%s, status %q, limit %d, cursor %q): %v", org, status, limit, cursor, err)
		}
		if len(page.Runs) > limit {
			t.Fatalf("ListRuns(limit %d) returned %d runs", limit, len(page.Runs))
		}
		out = append(out, page.Runs...)
		if page.Next == "" {
			return out
		}
		if len(page.Runs) == 0 {
			t.Fatalf("ListRuns returned an empty page with a next cursor")
		}
		cursor = page.Next
	}
}

func runIDs(runs []store.RunInfo) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.RunID
	}
	return out
}

func testListRuns(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	statuses := []string{"running", "completed", "running", "failed", "running", "completed", "waiting", "running"}
	last := map[string]int64{}
	for i, st := range statuses {
		id := fmt.Sprintf("run-%d", i)
		appendOK(t, s, "o", id, 0, 0, Batch(id, 1), st)
		last[id] = 1
	}
	// Appending to run-2 moves it to the front and changes its status.
	appendOK(t, s, "o", "run-2", 1, 1, Batch("run-2", 2, 3), "completed")
	statuses[2] = "completed"
	// Another org's runs never show.
	appendOK(t, s, "other", "run-x", 0, 0, Batch("run-x", 1), "running")

	want := []string{"run-2", "run-7", "run-6", "run-5", "run-4", "run-3", "run-1", "run-0"}
	for limit := 1; limit <= len(want)+1; limit++ {
		got := listAll(t, s, "o", "", limit)
		if strings.Join(runIDs(got), " ") != strings.Join(want, " ") {
			t.Fatalf("ListRuns limit %d = %v, want %v", limit, runIDs(got), want)
		}
		for i := 1; i < len(got); i++ {
			if got[i].UpdatedAt.After(got[i-1].UpdatedAt) {
				t.Fatalf("ListRuns not newest first: %s updated %v after %s updated %v", got[i].RunID, got[i].UpdatedAt, got[i-1].RunID, got[i-1].UpdatedAt)
			}
		}
	}
	all := listAll(t, s, "o", "", 100)
	for _, r := range all {
		n := int64(1)
		if r.RunID == "run-2" {
			n = 3
		}
		var i int
		fmt.Sscanf(r.RunID, "run-%d", &i)
		if r.EventCount != n || r.LastLogicalSequence != n || r.Status != statuses[i] || r.UpdatedAt.Before(r.CreatedAt) {
			t.Fatalf("ListRuns entry %+v: want count/last %d status %s", r, n, statuses[i])
		}
	}
	for _, c := range []struct {
		status string
		want   []string
	}{
		{"running", []string{"run-7", "run-4", "run-0"}},
		{"completed", []string{"run-2", "run-5", "run-1"}},
		{"failed", []string{"run-3"}},
		{"waiting", []string{"run-6"}},
		{"cancelled", nil},
	} {
		for _, limit := range []int{1, 2, 10} {
			got := runIDs(listAll(t, s, "o", c.status, limit))
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Fatalf("ListRuns status %s limit %d = %v, want %v", c.status, limit, got, c.want)
			}
		}
	}
	// An exact page has no next cursor.
	page, err := s.ListRuns(ctx, "o", store.ListRunsQuery{Limit: len(want)})
	if err != nil || len(page.Runs) != len(want) || page.Next != "" {
		t.Fatalf("ListRuns exact page = %d runs, next %q, %v", len(page.Runs), page.Next, err)
	}
	// A run updated between pages is never repeated on a later page.
	page, err = s.ListRuns(ctx, "o", store.ListRunsQuery{Limit: 3})
	if err != nil || page.Next == "" {
		t.Fatalf("ListRuns first page: %+v, %v", page, err)
	}
	appendOK(t, s, "o", "run-7", 1, 1, Batch("run-7", 2), "running")
	seen := map[string]bool{}
	for _, r := range page.Runs {
		seen[r.RunID] = true
	}
	cursor := page.Next
	for cursor != "" {
		p, err := s.ListRuns(ctx, "o", store.ListRunsQuery{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatalf("ListRuns: %v", err)
		}
		for _, r := range p.Runs {
			if seen[r.RunID] {
				t.Fatalf("run %s repeated across pages", r.RunID)
			}
			seen[r.RunID] = true
		}
		cursor = p.Next
	}
	for _, bad := range []string{"x", "!!!", "bm90IGEgY3Vyc29y", " ", page.Next + "x"} {
		if _, err := s.ListRuns(ctx, "o", store.ListRunsQuery{Limit: 2, Cursor: bad}); !errors.Is(err, store.ErrInvalidCursor) || !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("ListRuns cursor %q: %v, want ErrInvalidCursor", bad, err)
		}
	}
}

func testOrgIsolation(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	appendOK(t, s, "org-a", "shared", 0, 0, Batch("shared", 1, 2, 3), "running")
	// The same run ID in another org is another run: it starts from 0, and its event IDs may
	// repeat org-a's.
	appendOK(t, s, "org-b", "shared", 0, 0, Batch("shared", 1), "completed")
	appendOK(t, s, "org-a", "only-a", 0, 0, Batch("only-a", 1), "running")
	sameEvents(t, "org-a shared", readAll(t, s, "org-a", "shared"), Batch("shared", 1, 2, 3))
	sameEvents(t, "org-b shared", readAll(t, s, "org-b", "shared"), Batch("shared", 1))
	checkRun(t, s, "org-a", "shared", 3, 3, "running")
	checkRun(t, s, "org-b", "shared", 1, 1, "completed")
	if _, _, err := s.GetRun(ctx, "org-b", "only-a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetRun across orgs: %v, want ErrNotFound", err)
	}
	if _, err := s.ReadEvents(ctx, "org-b", "only-a", 0, 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ReadEvents across orgs: %v, want ErrNotFound", err)
	}
	// A conflict in org-b reports org-b's run, not org-a's.
	_, err := s.AppendRun(ctx, "org-b", "shared", store.AppendRequest{ExpectedLastLogicalSequence: 3, Events: Batch("shared", 4), Snapshot: Snapshot(4, 4), Status: "running"})
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Actual != 1 {
		t.Fatalf("cross-org conflict: %v, want actual 1", err)
	}
	if got := runIDs(listAll(t, s, "org-b", "", 10)); strings.Join(got, " ") != "shared" {
		t.Fatalf("ListRuns(org-b) = %v", got)
	}
	if got := runIDs(listAll(t, s, "org-a", "", 10)); strings.Join(got, " ") != "only-a shared" {
		t.Fatalf("ListRuns(org-a) = %v", got)
	}
	if got := listAll(t, s, "org-c", "", 10); len(got) != 0 {
		t.Fatalf("ListRuns(org-c) = %v", runIDs(got))
	}
}

const writers = 8

// testConcurrentDistinctRuns: 8 writers, each on its own run, batches of varying size. Every
// acknowledged event is stored once, in order, with the snapshot of its last batch.
func testConcurrentDistinctRuns(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	const batches = 12
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			run := fmt.Sprintf("run-%d", w)
			var last, count int64
			for b := range batches {
				n := 1 + (w+b)%5
				evs := Batch(run, Seqs(last+1, n)...)
				_, err := s.AppendRun(context.Background(), "o", run, store.AppendRequest{
					ExpectedLastLogicalSequence: last, Events: evs,
					Snapshot: Snapshot(last+int64(n), count+int64(n)), Status: "running",
				})
				if err != nil {
					errs <- fmt.Errorf("%s batch %d: %w", run, b, err)
					return
				}
				last += int64(n)
				count += int64(n)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w := range writers {
		run := fmt.Sprintf("run-%d", w)
		var total int64
		for b := range batches {
			total += int64(1 + (w+b)%5)
		}
		sameEvents(t, run, readAll(t, s, "o", run), Batch(run, Seqs(1, int(total))...))
		checkRun(t, s, "o", run, total, total, "running")
	}
	if got := listAll(t, s, "o", "", 3); len(got) != writers {
		t.Fatalf("ListRuns = %v, want %d runs", runIDs(got), writers)
	}
}

// testConcurrentSameRun: 8 writers race on one run with optimistic concurrency, each reading
// the run, appending the next event and retrying on conflict. Exactly the acknowledged events
// are stored, gap-free and once each, and the snapshot matches them.
func testConcurrentSameRun(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	const perWriter = 10
	// Seed the run so every writer starts from an existing run.
	appendOK(t, s, "o", "r", 0, 0, Batch("r", 1), "running")
	var mu sync.Mutex
	acked := map[string]int64{} // event ID → sequence it was acknowledged at
	conflicts := 0
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				id := fmt.Sprintf("w%d-%d", w, i)
				for attempt := 0; ; attempt++ {
					if attempt > 10000 {
						errs <- fmt.Errorf("%s: no progress", id)
						return
					}
					_, info, err := s.GetRun(ctx, "o", "r")
					if err != nil {
						errs <- err
						return
					}
					next := info.LastLogicalSequence + 1
					_, err = s.AppendRun(ctx, "o", "r", store.AppendRequest{
						ExpectedLastLogicalSequence: info.LastLogicalSequence,
						Events:                      []store.Event{Event("r", next, id)},
						Snapshot:                    Snapshot(next, info.EventCount+1),
						Status:                      "running",
					})
					if errors.Is(err, store.ErrConflict) {
						mu.Lock()
						conflicts++
						mu.Unlock()
						continue
					}
					if err != nil {
						errs <- fmt.Errorf("%s: %w", id, err)
						return
					}
					mu.Lock()
					acked[id] = next
					mu.Unlock()
					break
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := int64(1 + writers*perWriter)
	got := readAll(t, s, "o", "r")
	if int64(len(got)) != total {
		t.Fatalf("stored %d events, want %d (conflicts seen: %d)", len(got), total, conflicts)
	}
	for i, e := range got {
		if e.LogicalSequence != int64(i+1) {
			t.Fatalf("event %d has sequence %d: gap or repeat", i, e.LogicalSequence)
		}
		if i == 0 {
			continue
		}
		if seq, ok := acked[e.EventID]; !ok || seq != e.LogicalSequence {
			t.Fatalf("stored event %s at %d was acknowledged at %d (%v)", e.EventID, e.LogicalSequence, seq, ok)
		}
		if !bytes.Equal(e.Data, Event("r", e.LogicalSequence, e.EventID).Data) {
			t.Fatalf("event %d data %s", i, e.Data)
		}
	}
	if len(acked) != writers*perWriter {
		t.Fatalf("%d acknowledged, want %d", len(acked), writers*perWriter)
	}
	checkRun(t, s, "o", "r", total, total, "running")
}

// testConcurrentMixedRefusals: concurrent writers where every other batch is refused. Refused
// batches (which a group-committing backend may share a transaction with) store nothing; the
// others all land.
func testConcurrentMixedRefusals(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	const rounds = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Go(func() {
			run := fmt.Sprintf("run-%d", w)
			var last int64
			for r := range rounds {
				good := Batch(run, Seqs(last+1, 3)...)
				// A bad batch: valid start, then a duplicate ID at index 2.
				bad := Batch(run, Seqs(last+1, 3)...)
				bad[2].EventID = bad[0].EventID
				for k, b := range [][]store.Event{bad, good} {
					_, err := s.AppendRun(context.Background(), "o", run, store.AppendRequest{
						ExpectedLastLogicalSequence: last, Events: b, Snapshot: Snapshot(last+3, last+3), Status: "running",
					})
					var ee *store.EventError
					switch {
					case k == 0:
						if !errors.As(err, &ee) || ee.Index != 2 || !errors.Is(err, store.ErrDuplicateEventID) {
							errs <- fmt.Errorf("%s round %d bad batch: %v", run, r, err)
							return
						}
					case err != nil:
						errs <- fmt.Errorf("%s round %d good batch: %w", run, r, err)
						return
					}
				}
				last += 3
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w := range writers {
		run := fmt.Sprintf("run-%d", w)
		sameEvents(t, run, readAll(t, s, "o", run), Batch(run, Seqs(1, 3*rounds)...))
		checkRun(t, s, "o", run, 3*rounds, 3*rounds, "running")
	}
}

func testReopen(t *testing.T, h *harness) {
	s, dir := h.fresh(t)
	for i := range 5 {
		run := fmt.Sprintf("run-%d", i)
		appendOK(t, s, "o", run, 0, 0, Batch(run, 1, 2), "running")
	}
	appendOK(t, s, "o", "run-1", 2, 2, Batch("run-1", 3), "completed")
	appendOK(t, s, "p", "run-1", 0, 0, Batch("run-1", 7), "failed")
	before := listAll(t, s, "o", "", 100)
	firstPage, err := s.ListRuns(context.Background(), "o", store.ListRunsQuery{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s2 := h.open(t, dir)
	t.Cleanup(func() { _ = s2.Close() })
	after := listAll(t, s2, "o", "", 100)
	if len(after) != len(before) {
		t.Fatalf("after reopen %d runs, before %d", len(after), len(before))
	}
	for i := range after {
		a, b := after[i], before[i]
		if a.RunID != b.RunID || a.Status != b.Status || a.EventCount != b.EventCount || a.LastLogicalSequence != b.LastLogicalSequence ||
			!a.CreatedAt.Equal(b.CreatedAt) || !a.UpdatedAt.Equal(b.UpdatedAt) {
			t.Fatalf("run %d after reopen %+v, before %+v", i, a, b)
		}
	}
	// A cursor issued before the restart still pages the same way.
	rest := listAll(t, s2, "o", "", 100)[2:]
	page, err := s2.ListRuns(context.Background(), "o", store.ListRunsQuery{Limit: 100, Cursor: firstPage.Next})
	if err != nil || strings.Join(runIDs(page.Runs), " ") != strings.Join(runIDs(rest), " ") {
		t.Fatalf("old cursor after reopen = %v, %v; want %v", runIDs(page.Runs), err, runIDs(rest))
	}
	sameEvents(t, "run-1", readAll(t, s2, "o", "run-1"), Batch("run-1", 1, 2, 3))
	checkRun(t, s2, "o", "run-1", 3, 3, "completed")
	checkRun(t, s2, "p", "run-1", 7, 1, "failed")
	// Writing continues where it stopped, and a stale expectation is still a conflict.
	appendOK(t, s2, "o", "run-0", 2, 2, Batch("run-0", 3), "running")
	if _, err := s2.AppendRun(context.Background(), "o", "run-0", store.AppendRequest{
		ExpectedLastLogicalSequence: 2, Events: Batch("run-0", 4), Snapshot: Snapshot(4, 4), Status: "running",
	}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale append after reopen: %v, want conflict", err)
	}
	if got := listAll(t, s2, "o", "", 100); got[0].RunID != "run-0" || got[0].UpdatedAt.Before(after[0].UpdatedAt) {
		t.Fatalf("after reopen the newest run is %+v, want run-0 updated no earlier than %v", got[0], after[0].UpdatedAt)
	}
}

func receive(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed", what)
		}
	case <-time.After(wait):
		t.Fatalf("%s: no notification", what)
	}
}

func testSubscribe(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	// Subscribing before the run exists is allowed.
	ch, cancel := s.Subscribe("o", "r")
	defer cancel()
	other, cancelOther := s.Subscribe("o", "r2")
	defer cancelOther()
	appendOK(t, s, "o", "r", 0, 0, Batch("r", 1), "running")
	receive(t, ch, "first append")
	// The notification comes after commit: the event is readable.
	if evs, err := s.ReadEvents(ctx, "o", "r", 0, 10); err != nil || len(evs) != 1 {
		t.Fatalf("after notification ReadEvents = %v, %v", describe(evs), err)
	}
	// The live-reader loop: wake, read from the cursor, wait again; every event is seen once.
	type result struct {
		seen []store.Event
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var seen []store.Event
		cursor := int64(1)
		for cursor < 20 {
			if _, ok := <-ch; !ok {
				done <- result{seen, errors.New("channel closed")}
				return
			}
			evs, err := s.ReadEvents(ctx, "o", "r", cursor, 100)
			if err != nil {
				done <- result{seen, err}
				return
			}
			seen = append(seen, evs...)
			if len(evs) > 0 {
				cursor = evs[len(evs)-1].LogicalSequence
			}
		}
		done <- result{seen, nil}
	}()
	for q := int64(2); q <= 20; q++ {
		appendOK(t, s, "o", "r", q-1, q-1, Batch("r", q), "running")
	}
	var seen []store.Event
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		seen = r.seen
	case <-time.After(wait):
		t.Fatal("live reader did not reach the last event")
	}
	sameEvents(t, "live reader", seen, Batch("r", Seqs(2, 19)...))
	// Two subscribers of one run both wake; the other run's subscriber wakes for its own run.
	ch2, cancel2 := s.Subscribe("o", "r")
	defer cancel2()
	appendOK(t, s, "o", "r", 20, 20, Batch("r", 21), "running")
	receive(t, ch, "first subscriber")
	receive(t, ch2, "second subscriber")
	appendOK(t, s, "o", "r2", 0, 0, Batch("r2", 1), "running")
	receive(t, other, "other run")
	// cancel is idempotent.
	cancel2()
	cancel2()
	// Close ends every subscription by closing its channel.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.After(wait); ; {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("subscription channel not closed by Close")
		}
	}
}

func testCanceledContext(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.AppendRun(ctx, "o", "r", store.AppendRequest{Events: Batch("r", 1), Snapshot: Snapshot(1, 1), Status: "running"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("AppendRun with canceled context: %v, want context.Canceled", err)
	}
	if _, _, err := s.GetRun(context.Background(), "o", "r"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("canceled append stored something: %v", err)
	}
}

func testClosed(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	appendOK(t, s, "o", "r", 0, 0, Batch("r", 1), "running")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.AppendRun(ctx, "o", "r", store.AppendRequest{ExpectedLastLogicalSequence: 1, Events: Batch("r", 2), Snapshot: Snapshot(2, 2), Status: "running"}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("AppendRun after Close: %v", err)
	}
	if _, err := s.ReadEvents(ctx, "o", "r", 0, 1); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("ReadEvents after Close: %v", err)
	}
	if _, _, err := s.GetRun(ctx, "o", "r"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("GetRun after Close: %v", err)
	}
	if _, err := s.ListRuns(ctx, "o", store.ListRunsQuery{Limit: 1}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("ListRuns after Close: %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Ping after Close: %v", err)
	}
	ch, cancel := s.Subscribe("o", "r")
	defer cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("Subscribe after Close delivered a value")
		}
	case <-time.After(wait):
		t.Fatal("Subscribe after Close: channel not closed")
	}
}
