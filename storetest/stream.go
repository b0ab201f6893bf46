package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/agentwire/agentwire/store"
)

// streamed is a store whose AppendRun goes through its AppendRunStream: the runs suite run
// on it checks that the streaming form keeps every rule of AppendRun. The batch is cut into
// parts of 1, 2, 4, … events; the End part carries the last events when their count is odd
// and comes alone after them when it is even, so both shapes occur.
type streamed struct {
	store.Store
	sa store.StreamAppender
}

func (s streamed) AppendRun(ctx context.Context, org, runID string, req store.AppendRequest) (store.RunInfo, error) {
	parts := make(chan store.AppendPart)
	var answer struct {
		info store.RunInfo
		err  error
	}
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		answer.info, answer.err = s.sa.AppendRunStream(ctx, org, runID, store.AppendStream{
			ExpectedLastLogicalSequence: req.ExpectedLastLogicalSequence,
			Weight:                      len(req.Events),
			Parts:                       parts,
		})
	}()
	send := func(p store.AppendPart) bool {
		select {
		case parts <- p:
			return true
		case <-returned:
			return false
		}
	}
	evs := req.Events
	end := store.AppendPart{End: true, Status: req.Status, Snapshot: req.Snapshot}
	for size := 1; ; size *= 2 {
		if len(evs) <= size {
			if len(evs)%2 == 1 {
				end.Events = evs
			} else if len(evs) > 0 && !send(store.AppendPart{Events: evs}) {
				break
			}
			send(end)
			break
		}
		if !send(store.AppendPart{Events: evs[:size]}) {
			break
		}
		evs = evs[size:]
	}
	<-returned
	return answer.info, answer.err
}

// runStreamed runs the whole runs suite again with AppendRun made through AppendRunStream,
// then the tests only a stream has, when the store is a [store.StreamAppender].
func runStreamed(t *testing.T, open Opener) {
	probe := open(t, t.TempDir())
	_, ok := probe.(store.StreamAppender)
	_ = probe.Close()
	if !ok {
		return
	}
	t.Run("Streamed", func(t *testing.T) {
		runRuns(t, func(t *testing.T, dir string) store.Store {
			s := open(t, dir)
			return streamed{Store: s, sa: s.(store.StreamAppender)}
		})
		h := &harness{open: open}
		for _, c := range []struct {
			name string
			f    func(*testing.T, *harness)
		}{
			{"Abort", testStreamAbort},
			{"Ends", testStreamEnds},
			{"ConflictBeforeParts", testStreamConflictFirst},
			{"EventIndexAcrossParts", testStreamIndex},
			{"OthersWait", testStreamOthers},
		} {
			t.Run(c.name, func(t *testing.T) { c.f(t, h) })
		}
	})
}

// stream starts AppendRunStream in the background; the returned function waits for its answer.
func stream(ctx context.Context, s store.Store, org, runID string, expected int64) (chan<- store.AppendPart, func() (store.RunInfo, error)) {
	parts := make(chan store.AppendPart, 8)
	done := make(chan struct{})
	var info store.RunInfo
	var err error
	go func() {
		defer close(done)
		info, err = s.(store.StreamAppender).AppendRunStream(ctx, org, runID, store.AppendStream{ExpectedLastLogicalSequence: expected, Parts: parts})
	}()
	return parts, func() (store.RunInfo, error) { <-done; return info, err }
}

// testStreamAbort: an Abort after some parts stores nothing, on a new run and on an existing
// one, and AppendRunStream returns the abort's error.
func testStreamAbort(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	stop := errors.New("the caller's reducer refused event 7")
	parts, wait := stream(ctx, s, "o", "new", 0)
	parts <- store.AppendPart{Events: Batch("new", 1, 2, 3)}
	parts <- store.AppendPart{Events: Batch("new", 4)}
	parts <- store.AppendPart{Abort: stop}
	if _, err := wait(); err != stop {
		t.Fatalf("aborted stream on a new run: %v, want the abort's error", err)
	}
	if _, _, err := s.GetRun(ctx, "o", "new"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("aborted first stream created the run: %v", err)
	}
	appendOK(t, s, "o", "r", 0, 0, Batch("r", 1, 2), "running")
	parts, wait = stream(ctx, s, "o", "r", 2)
	parts <- store.AppendPart{Events: Batch("r", 3, 4)}
	parts <- store.AppendPart{Events: Batch("r", 5), Abort: stop}
	if _, err := wait(); err != stop {
		t.Fatalf("aborted stream on an existing run: %v, want the abort's error", err)
	}
	sameEvents(t, "after an aborted stream", readAll(t, s, "o", "r"), Batch("r", 1, 2))
	checkRun(t, s, "o", "r", 2, 2, "running")
}

// testStreamEnds: a stream whose context ends or whose channel closes before End stores
// nothing; one with no event at all is invalid.
func testStreamEnds(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	parts, wait := stream(ctx, s, "o", "r", 0)
	parts <- store.AppendPart{Events: Batch("r", 1, 2)}
	cancel()
	if _, err := wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("stream canceled before End: %v, want context.Canceled", err)
	}
	bg := context.Background()
	parts, wait = stream(bg, s, "o", "r", 0)
	parts <- store.AppendPart{Events: Batch("r", 1, 2)}
	close(parts)
	if _, err := wait(); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("stream closed before End: %v, want ErrInvalid", err)
	}
	parts, wait = stream(bg, s, "o", "r", 0)
	parts <- store.AppendPart{End: true, Status: "running", Snapshot: Snapshot(0, 0)}
	if _, err := wait(); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("stream without events: %v, want ErrInvalid", err)
	}
	if _, _, err := s.GetRun(bg, "o", "r"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unfinished streams created the run: %v", err)
	}
	parts, wait = stream(bg, s, "o", "r", 0)
	parts <- store.AppendPart{Events: Batch("r", 1, 2)}
	parts <- store.AppendPart{Events: Batch("r", 3), End: true, Status: "completed", Snapshot: Snapshot(3, 3)}
	info, err := wait()
	if err != nil || info.LastLogicalSequence != 3 || info.EventCount != 3 || info.SnapshotSequence != 3 || info.Status != "completed" {
		t.Fatalf("complete stream: %+v, %v", info, err)
	}
	sameEvents(t, "after a complete stream", readAll(t, s, "o", "r"), Batch("r", 1, 2, 3))
	checkRun(t, s, "o", "r", 3, 3, "completed")
}

// testStreamConflictFirst: a stream against a stale expectation is answered with the conflict
// before its caller sends any part (the caller must not have to finish the stream first).
func testStreamConflictFirst(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	appendOK(t, s, "o", "r", 0, 0, Batch("r", 1, 2), "running")
	_, wait := stream(ctx, s, "o", "r", 1)
	var ce *store.ConflictError
	if _, err := wait(); !errors.As(err, &ce) || ce.Expected != 1 || ce.Actual != 2 {
		t.Fatalf("stale stream: %v, want a conflict expected 1 actual 2", err)
	}
}

// testStreamIndex: an event fault in a later part names its index in the whole stream.
func testStreamIndex(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	appendOK(t, s, "o", "r", 0, 0, Batch("r", 1, 2), "running")
	parts, wait := stream(ctx, s, "o", "r", 2)
	parts <- store.AppendPart{Events: Batch("r", 3, 4, 5)}
	parts <- store.AppendPart{Events: append(Batch("r", 6), Event("r", 7, "r-e4"))}
	var ee *store.EventError
	if _, err := wait(); !errors.As(err, &ee) || ee.Index != 4 || !errors.Is(err, store.ErrDuplicateEventID) {
		t.Fatalf("duplicate event ID in the second part: %v, want an EventError at index 4", err)
	}
	parts, wait = stream(ctx, s, "o", "r", 2)
	parts <- store.AppendPart{Events: Batch("r", 3)}
	parts <- store.AppendPart{Events: []store.Event{{LogicalSequence: 4, EventID: "x"}}}
	if _, err := wait(); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("invalid event in the second part: %v, want ErrInvalid", err)
	}
	sameEvents(t, "after refused streams", readAll(t, s, "o", "r"), Batch("r", 1, 2))
	checkRun(t, s, "o", "r", 2, 2, "running")
}

// testStreamOthers: writes of other callers made while a stream is open all complete once it
// ends, and the stream's batch is stored whole.
func testStreamOthers(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	parts, wait := stream(ctx, s, "o", "r", 0)
	parts <- store.AppendPart{Events: Batch("r", 1, 2)}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Go(func() {
			run := string(rune('a' + i))
			_, err := s.AppendRun(ctx, "o", run, store.AppendRequest{Events: Batch(run, 1), Snapshot: Snapshot(1, 1), Status: "running"})
			errs <- err
		})
	}
	parts <- store.AppendPart{Events: Batch("r", 3), End: true, Status: "running", Snapshot: Snapshot(3, 3)}
	if _, err := wait(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("append beside a stream: %v", err)
		}
	}
	checkRun(t, s, "o", "r", 3, 3, "running")
	for i := range 4 {
		run := string(rune('a' + i))
		checkRun(t, s, "o", run, 1, 1, "running")
	}
}
