package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentwire/agentwire/store"
)

// streamReq is one queued AppendRunStream call. The writer runs it like an appendReq, except
// that it inserts each part as it arrives: the caller's parsing and reducing of the rest of
// the batch overlaps with the writing of its beginning.
type streamReq struct {
	opBase
	org, runID string
	s          store.AppendStream
	info       store.RunInfo
}

func (r *streamReq) weight() int { return max(r.s.Weight, 1) }

func (r *streamReq) exec(ctx context.Context, w *writer, g *groupState) error {
	info, n, err := w.applyStream(ctx, r, g.now, g.updateSeq+1)
	if err != nil {
		return err
	}
	r.info = info
	g.updateSeq++
	g.runs++
	g.items += n
	g.wrote = true
	return nil
}

func (r *streamReq) notify(s *Store) { s.runs.Notify(r.org, r.runID) }

// streamStop carries an error that ends a stream without failing the group it runs in: the
// caller's Abort, its context ending before End, or the parts channel closed before End. It
// is a refusal (isRefusal): only the stream's savepoint is rolled back.
type streamStop struct{ err error }

func (e *streamStop) Error() string { return e.err.Error() }
func (e *streamStop) Unwrap() error { return e.err }

// errStreamClosed answers a parts channel closed before its End part.
var errStreamClosed = fmt.Errorf("%w: append stream closed before its end", store.ErrInvalid)

// applyStream is apply for a stream: the run's row (a new run's is inserted first with
// placeholder values, since its events need its id), then each part's events as they arrive,
// then at End the run's row and checkpoint. It returns the run's metadata and the number of
// events stored.
func (w *writer) applyStream(ctx context.Context, r *streamReq, now, updateSeq int64) (store.RunInfo, int, error) {
	row, err := w.openRun(ctx, r.org, r.runID, r.s.ExpectedLastLogicalSequence, now)
	if err != nil {
		return store.RunInfo{}, 0, err
	}
	if !row.exists {
		if row.id, err = w.insertRun(ctx, r.org, r.runID, "", now, updateSeq, 0, 0); err != nil {
			return store.RunInfo{}, 0, err
		}
		row.exists = true
	}
	prev, n := row.last, 0
	for {
		p, ok, err := r.next()
		if err != nil {
			return store.RunInfo{}, 0, &streamStop{err}
		}
		switch {
		case !ok:
			return store.RunInfo{}, 0, &streamStop{errStreamClosed}
		case p.Abort != nil:
			return store.RunInfo{}, 0, &streamStop{p.Abort}
		}
		if err := store.ValidateEvents(p.Events, n); err != nil {
			return store.RunInfo{}, 0, err
		}
		if prev, err = w.insertEvents(ctx, row.id, p.Events, prev, n); err != nil {
			return store.RunInfo{}, 0, err
		}
		n += len(p.Events)
		if !p.End {
			continue
		}
		if n == 0 {
			return store.RunInfo{}, 0, fmt.Errorf("%w: empty batch", store.ErrInvalid)
		}
		if err := store.ValidateAppendEnd(r.s.ExpectedLastLogicalSequence, p.Status, p.Snapshot); err != nil {
			return store.RunInfo{}, 0, err
		}
		info, err := w.writeRun(ctx, r.org, r.runID, &row, p.Status, n, prev, p.Snapshot, now, updateSeq)
		if err != nil {
			return store.RunInfo{}, 0, err
		}
		w.cacheRun(r.org, r.runID, row, info)
		return info, n, nil
	}
}

// next receives the stream's next part: ok is false when the channel was closed, err is the
// caller's context error. (Polling for a while before blocking was measured: it helped while
// the caller parsed on one core, and hurt once the caller parsed on every core, since the
// polling writer kept one of them.)
func (r *streamReq) next() (p store.AppendPart, ok bool, err error) {
	select {
	case p, ok = <-r.s.Parts:
		return p, ok, nil
	case <-r.ctx.Done():
		return p, false, r.ctx.Err()
	}
}

// AppendRunStream implements [store.StreamAppender] with the group-commit writer: the stream
// is one op of a group, run in its own savepoint like any other, and it holds the writer while
// its parts arrive (the ops queued behind it wait for it).
//
// Once queued, AppendRunStream always waits for the writer's answer, so when it returns the
// writer has stopped reading the stream and its events.
func (s *Store) AppendRunStream(ctx context.Context, org, runID string, as store.AppendStream) (store.RunInfo, error) {
	if err := store.ValidateRunKey(org, runID); err != nil {
		return store.RunInfo{}, err
	}
	if as.ExpectedLastLogicalSequence < 0 {
		return store.RunInfo{}, fmt.Errorf("%w: expected last logical sequence %d is negative", store.ErrInvalid, as.ExpectedLastLogicalSequence)
	}
	if as.Parts == nil {
		return store.RunInfo{}, fmt.Errorf("%w: no parts channel", store.ErrInvalid)
	}
	r := &streamReq{opBase: newOpBase(ctx), org: org, runID: runID, s: as}
	if err := s.enqueue(ctx, r); err != nil {
		return store.RunInfo{}, err
	}
	err := <-r.done
	var stop *streamStop
	if errors.As(err, &stop) {
		err = stop.err
	}
	return r.info, err
}
