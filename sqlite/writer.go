package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentwire/agentwire/store"

	sqlite3 "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"
)

// appendReq is one queued AppendRun call.
type appendReq struct {
	ctx        context.Context
	org, runID string
	req        store.AppendRequest
	done       chan appendResult // buffered: the writer never blocks on a caller that left
}

type appendResult struct {
	info store.RunInfo
	err  error
}

// writer owns the write connection; only its goroutine touches conn and the statements.
type writer struct {
	s    *Store
	conn *sql.Conn
	reqs chan *appendReq
	done chan struct{}

	// Committed store-wide counters (store_state); advanced only after a successful COMMIT.
	updateSeq int64
	clock     int64

	begin, commit, rollback, savepoint, release, rollbackTo *sql.Stmt
	selRun, insRun, updRun, insEvent, seqTaken, updState    *sql.Stmt

	results []appendResult // reused per group
	touched []*appendReq
}

func newWriter(ctx context.Context, s *Store) (*writer, error) {
	w := &writer{
		s:    s,
		conn: s.conn,
		// A deep queue lets many callers pile up behind one fsync; the group cap bounds
		// the work per transaction.
		reqs: make(chan *appendReq, 4*s.opts.MaxGroupRequests),
		done: make(chan struct{}),
	}
	if err := w.conn.QueryRowContext(ctx, `SELECT update_seq, clock FROM store_state WHERE id = 1`).Scan(&w.updateSeq, &w.clock); err != nil {
		return nil, fmt.Errorf("sqlite: read store state: %w", err)
	}
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		{&w.begin, `BEGIN IMMEDIATE`},
		{&w.commit, `COMMIT`},
		{&w.rollback, `ROLLBACK`},
		{&w.savepoint, `SAVEPOINT caller`},
		{&w.release, `RELEASE caller`},
		{&w.rollbackTo, `ROLLBACK TO caller`},
		{&w.selRun, `SELECT id, created_at, event_count, last_seq FROM runs WHERE org = ? AND run_id = ?`},
		{&w.insRun, `INSERT INTO runs (org, run_id, status, created_at, updated_at, update_seq, event_count, last_seq, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.updRun, `UPDATE runs SET status = ?, updated_at = ?, update_seq = ?, event_count = ?, last_seq = ?, snapshot = ? WHERE id = ?`},
		{&w.insEvent, `INSERT INTO run_events (run, seq, event_id, type, data) VALUES (?, ?, ?, ?, ?)`},
		{&w.seqTaken, `SELECT EXISTS (SELECT 1 FROM run_events WHERE run = ? AND seq = ?)`},
		{&w.updState, `UPDATE store_state SET update_seq = ?, clock = ? WHERE id = 1`},
	} {
		st, err := w.conn.PrepareContext(ctx, p.q)
		if err != nil {
			w.closeStmts()
			return nil, fmt.Errorf("sqlite: prepare %q: %w", p.q, err)
		}
		*p.st = st
	}
	return w, nil
}

func (w *writer) closeStmts() error {
	var errs []error
	for _, st := range []*sql.Stmt{w.begin, w.commit, w.rollback, w.savepoint, w.release, w.rollbackTo,
		w.selRun, w.insRun, w.updRun, w.insEvent, w.seqTaken, w.updState} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// AppendRun implements [store.RunStore.AppendRun] by queueing the batch for the group-commit
// writer. See the package documentation for how concurrent calls share one transaction.
//
// The store reads req's slices until AppendRun returns; after a return with a context error
// it may still read them, so the caller must not modify them then.
func (s *Store) AppendRun(ctx context.Context, org, runID string, req store.AppendRequest) (store.RunInfo, error) {
	if err := store.ValidateAppend(org, runID, req); err != nil {
		return store.RunInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.RunInfo{}, err
	}
	r := &appendReq{ctx: ctx, org: org, runID: runID, req: req, done: make(chan appendResult, 1)}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return store.RunInfo{}, store.ErrClosed
	}
	select {
	case s.w.reqs <- r:
	case <-ctx.Done():
		s.mu.RUnlock()
		return store.RunInfo{}, ctx.Err()
	}
	s.mu.RUnlock()
	select {
	case res := <-r.done:
		return res.info, res.err
	case <-ctx.Done():
		return store.RunInfo{}, ctx.Err()
	}
}

// run is the writer goroutine: take one request, add whatever else is queued, commit the
// group, repeat until the queue is closed and drained.
func (w *writer) run() {
	defer close(w.done)
	group := make([]*appendReq, 0, w.s.opts.MaxGroupRequests)
	for {
		first, ok := <-w.reqs
		if !ok {
			return
		}
		group = append(group[:0], first)
		events := len(first.req.Events)
	fill:
		for len(group) < w.s.opts.MaxGroupRequests && events < w.s.opts.MaxGroupEvents {
			select {
			case r, ok := <-w.reqs:
				if !ok {
					break fill
				}
				group = append(group, r)
				events += len(r.req.Events)
			default:
				break fill
			}
		}
		w.commitGroup(group)
		clear(group)
	}
}

// commitGroup runs one group in one transaction and answers every caller.
func (w *writer) commitGroup(group []*appendReq) {
	bg := context.Background() // one caller's context must not cut a shared transaction
	start := time.Now()
	results := w.results[:0]
	for range group {
		results = append(results, appendResult{})
	}
	w.results = results
	touched := w.touched[:0]

	// One commit instant for the whole group, never before the previous commit's.
	now := w.s.opts.Now().UnixNano()
	if now < w.clock {
		now = w.clock
	}
	updateSeq := w.updateSeq
	appended, events := 0, 0

	fail := func(err error) {
		_, _ = w.rollback.ExecContext(bg)
		for i := range results {
			if results[i].err == nil {
				results[i] = appendResult{err: err}
			}
		}
		appended, events = 0, 0
		touched = touched[:0]
	}

	var groupErr error
	if _, err := w.begin.ExecContext(bg); err != nil {
		groupErr = fmt.Errorf("sqlite: begin: %w", err)
		for i := range results {
			results[i].err = groupErr
		}
	} else {
		// A lone caller needs no savepoint: its refusal rolls back the whole transaction.
		useSavepoints := len(group) > 1
		for i, r := range group {
			if err := r.ctx.Err(); err != nil {
				results[i].err = err // nothing stored: it never started
				continue
			}
			if useSavepoints {
				if _, err := w.savepoint.ExecContext(bg); err != nil {
					groupErr = fmt.Errorf("sqlite: savepoint: %w", err)
					break
				}
			}
			info, err := w.apply(bg, r, now, updateSeq+1)
			if err != nil && !isRefusal(err) {
				// An unexpected SQLite error may have rolled back the transaction behind
				// our back; nothing in this group can be trusted to commit atomically.
				groupErr = err
				break
			}
			if err != nil {
				results[i].err = err
				if useSavepoints {
					if _, e := w.rollbackTo.ExecContext(bg); e != nil {
						groupErr = fmt.Errorf("sqlite: rollback to savepoint: %w", e)
						break
					}
					if _, e := w.release.ExecContext(bg); e != nil {
						groupErr = fmt.Errorf("sqlite: release savepoint: %w", e)
						break
					}
				}
				continue
			}
			if useSavepoints {
				if _, err := w.release.ExecContext(bg); err != nil {
					groupErr = fmt.Errorf("sqlite: release savepoint: %w", err)
					break
				}
			}
			updateSeq++
			results[i].info = info
			appended++
			events += len(r.req.Events)
			touched = append(touched, r)
		}
		switch {
		case groupErr != nil:
			fail(groupErr)
		case appended == 0:
			// Everyone was refused (or left): nothing to make durable.
			_, _ = w.rollback.ExecContext(bg)
		default:
			if _, err := w.updState.ExecContext(bg, updateSeq, now); err != nil {
				groupErr = fmt.Errorf("sqlite: update store state: %w", err)
				fail(groupErr)
			} else if _, err := w.commit.ExecContext(bg); err != nil {
				groupErr = fmt.Errorf("sqlite: commit: %w", err)
				fail(groupErr)
			} else {
				w.updateSeq, w.clock = updateSeq, now
			}
		}
	}
	if w.s.opts.OnCommit != nil {
		w.s.opts.OnCommit(CommitInfo{Requests: len(group), Appended: appended, Events: events,
			Duration: time.Since(start), Err: groupErr})
	}
	// Notify before answering, so that when AppendRun returns its subscribers are woken.
	for _, r := range touched {
		w.s.runs.Notify(r.org, r.runID)
	}
	for i, r := range group {
		r.done <- results[i]
		results[i] = appendResult{}
	}
	clear(touched)
	w.touched = touched[:0]
}

// isRefusal reports whether err is one of AppendRun's typed refusals, after which the
// transaction is intact and only the caller's savepoint is rolled back.
func isRefusal(err error) bool {
	var c *store.ConflictError
	var e *store.EventError
	return errors.As(err, &c) || errors.As(err, &e)
}

// apply writes one caller's batch inside the open transaction: run row first (its id is
// needed by the events), then the events in order with the checks of AppendRun's contract.
func (w *writer) apply(ctx context.Context, r *appendReq, now, updateSeq int64) (store.RunInfo, error) {
	req := r.req
	var id, createdAt, count, last int64
	exists := true
	err := w.selRun.QueryRowContext(ctx, r.org, r.runID).Scan(&id, &createdAt, &count, &last)
	if errors.Is(err, sql.ErrNoRows) {
		exists = false
		createdAt = now
	} else if err != nil {
		return store.RunInfo{}, fmt.Errorf("sqlite: read run: %w", err)
	}
	if last != req.ExpectedLastLogicalSequence {
		return store.RunInfo{}, &store.ConflictError{RunID: r.runID, Expected: req.ExpectedLastLogicalSequence, Actual: last}
	}
	info := store.RunInfo{
		RunID:               r.runID,
		Status:              req.Status,
		CreatedAt:           time.Unix(0, createdAt).UTC(),
		UpdatedAt:           time.Unix(0, now).UTC(),
		EventCount:          count + int64(len(req.Events)),
		LastLogicalSequence: req.Events[len(req.Events)-1].LogicalSequence,
	}
	if exists {
		if _, err := w.updRun.ExecContext(ctx, req.Status, now, updateSeq, info.EventCount, info.LastLogicalSequence, req.Snapshot, id); err != nil {
			return store.RunInfo{}, fmt.Errorf("sqlite: update run: %w", err)
		}
	} else {
		res, err := w.insRun.ExecContext(ctx, r.org, r.runID, req.Status, now, now, updateSeq, info.EventCount, info.LastLogicalSequence, req.Snapshot)
		if err != nil {
			return store.RunInfo{}, fmt.Errorf("sqlite: insert run: %w", err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return store.RunInfo{}, fmt.Errorf("sqlite: insert run: %w", err)
		}
	}
	prev := last
	for i, e := range req.Events {
		if e.LogicalSequence <= prev {
			// Earlier events of the batch are already inserted, so one lookup covers both
			// "stored" and "earlier in the batch".
			var taken bool
			if err := w.seqTaken.QueryRowContext(ctx, id, e.LogicalSequence).Scan(&taken); err != nil {
				return store.RunInfo{}, fmt.Errorf("sqlite: check sequence: %w", err)
			}
			reason := store.ErrOutOfOrder
			if taken {
				reason = store.ErrDuplicateSequence
			}
			return store.RunInfo{}, &store.EventError{Index: i, LogicalSequence: e.LogicalSequence, EventID: e.EventID, Reason: reason}
		}
		if _, err := w.insEvent.ExecContext(ctx, id, e.LogicalSequence, e.EventID, e.Type, e.Data); err != nil {
			// The sequence is above every stored one, so a uniqueness failure can only be
			// the event ID.
			if isUniqueViolation(err, "run_events.event_id") {
				return store.RunInfo{}, &store.EventError{Index: i, LogicalSequence: e.LogicalSequence, EventID: e.EventID, Reason: store.ErrDuplicateEventID}
			}
			return store.RunInfo{}, fmt.Errorf("sqlite: insert event: %w", err)
		}
		prev = e.LogicalSequence
	}
	return info, nil
}

// isUniqueViolation reports whether err is SQLite's UNIQUE constraint failure on column.
func isUniqueViolation(err error, column string) bool {
	var se *sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code()
	return (code == sqlitelib.SQLITE_CONSTRAINT_UNIQUE || code == sqlitelib.SQLITE_CONSTRAINT_PRIMARYKEY) &&
		strings.Contains(se.Error(), column)
}
