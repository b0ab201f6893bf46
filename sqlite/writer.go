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

// writeOp is one queued write call of any lane. The writer runs the ops of a group in queue
// order inside one transaction, each in its own savepoint when the group has several.
type writeOp interface {
	// context is the caller's context; an op whose context has ended is not started.
	context() context.Context
	// weight is how many items the op may store, counted against Options.MaxGroupEvents.
	weight() int
	// exec applies the op inside the open transaction. On success it records its result in
	// the op and its effect in g; on error it leaves g alone. A refusal (isRefusal) leaves the
	// transaction usable and only the op's savepoint is rolled back; any other error fails the
	// whole group.
	exec(ctx context.Context, w *writer, g *groupState) error
	// notify wakes the subscribers of what a successful op changed, after COMMIT.
	notify(s *Store)
	// reply answers the caller: err, or the recorded result when err is nil.
	reply(err error)
}

// groupState is what the ops of one group share.
type groupState struct {
	// now is the runs lane's commit instant, never before the previous commit's (updatedAt).
	now int64
	// wall is the clock reading of the group: the bus lane's notion of "expired".
	wall int64
	// updateSeq is the last update_seq issued to a run in this group.
	updateSeq int64
	// runs counts the run appends applied: when positive, store_state advances.
	runs int
	// items counts what the applied ops stored (CommitInfo.Events).
	items int
	// wrote is set by every op that changed the database: without it nothing is committed.
	wrote bool
}

// opBase carries the caller's context and the answer channel, buffered so the writer never
// blocks on a caller that left.
type opBase struct {
	ctx  context.Context
	done chan error
}

func newOpBase(ctx context.Context) opBase { return opBase{ctx: ctx, done: make(chan error, 1)} }

func (b *opBase) context() context.Context { return b.ctx }
func (b *opBase) reply(err error)          { b.done <- err }

// appendReq is one queued AppendRun call.
type appendReq struct {
	opBase
	org, runID string
	req        store.AppendRequest
	info       store.RunInfo
}

func (r *appendReq) weight() int { return len(r.req.Events) }

func (r *appendReq) exec(ctx context.Context, w *writer, g *groupState) error {
	info, err := w.apply(ctx, r, g.now, g.updateSeq+1)
	if err != nil {
		return err
	}
	r.info = info
	g.updateSeq++
	g.runs++
	g.items += len(r.req.Events)
	g.wrote = true
	return nil
}

func (r *appendReq) notify(s *Store) { s.runs.Notify(r.org, r.runID) }

// writer owns the write connection; only its goroutine touches conn and the statements.
type writer struct {
	s    *Store
	conn *sql.Conn
	reqs chan writeOp
	// bg is the background lane (checkpoint writes): an op there runs in a group of its own,
	// only when no foreground op is waiting, or once the lane has waited backgroundMaxWait.
	bg     chan writeOp
	lastBG time.Time // when the background lane was last served or found empty
	done   chan struct{}

	// Committed store-wide counters (store_state); advanced only after a successful COMMIT.
	updateSeq int64
	clock     int64

	begin, commit, rollback, savepoint, release, rollbackTo *sql.Stmt
	selRun, insRun, updRun, insEvent, seqTaken, updState    *sql.Stmt
	selCheckpoint, putCheckpoint                            *sql.Stmt
	putChunk, countChunks, dropChunks                       *sql.Stmt
	bus                                                     busStmts
	state                                                   stateStmts
	env                                                     envStmts

	errs []error // reused per group

	cache runCache // runs rows read or written (runcache.go)

	// dropped is set by an op that deleted a bus message: after COMMIT the stream tail forgets
	// every stream (streamtail.go).
	dropped bool
	// filters takes the client-id filter hand-overs (clientfilter.go), between groups.
	filters chan filterReq
}

func newWriter(ctx context.Context, s *Store) (*writer, error) {
	w := &writer{
		s:    s,
		conn: s.conn,
		// A deep queue lets many callers pile up behind one fsync; the group cap bounds
		// the work per transaction.
		reqs:    make(chan writeOp, 4*s.opts.MaxGroupRequests),
		bg:      make(chan writeOp, 16),
		done:    make(chan struct{}),
		cache:   newRunCache(),
		filters: make(chan filterReq),
	}
	if err := w.conn.QueryRowContext(ctx, `SELECT update_seq, clock FROM store_state WHERE id = 1`).Scan(&w.updateSeq, &w.clock); err != nil {
		return nil, fmt.Errorf("sqlite: read store state: %w", err)
	}
	for _, p := range w.allDefs() {
		st, err := w.conn.PrepareContext(ctx, p.q)
		if err != nil {
			w.closeStmts()
			return nil, fmt.Errorf("sqlite: prepare %q: %w", p.q, err)
		}
		*p.st = st
	}
	return w, nil
}

// stmtDef is a statement to prepare and where to keep it.
type stmtDef struct {
	st **sql.Stmt
	q  string
}

// defs lists the writer's own statements of the runs lane.
func (w *writer) defs() []stmtDef {
	return []stmtDef{
		{&w.begin, `BEGIN IMMEDIATE`},
		{&w.commit, `COMMIT`},
		{&w.rollback, `ROLLBACK`},
		{&w.savepoint, `SAVEPOINT caller`},
		{&w.release, `RELEASE caller`},
		{&w.rollbackTo, `ROLLBACK TO caller`},
		{&w.selRun, `SELECT id, created_at, event_count, last_seq FROM runs WHERE org = ? AND run_id = ?`},
		{&w.insRun, `INSERT INTO runs (org, run_id, status, created_at, updated_at, update_seq, event_count, last_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.updRun, `UPDATE runs SET status = ?, updated_at = ?, update_seq = ?, event_count = ?, last_seq = ? WHERE id = ?`},
		{&w.selCheckpoint, `SELECT seq FROM run_checkpoints WHERE run = ?`},
		{&w.putCheckpoint, `INSERT INTO run_checkpoints (run, seq, snapshot, chunks) VALUES (?, ?, ?, ?) ON CONFLICT (run) DO UPDATE SET seq = excluded.seq, snapshot = excluded.snapshot, chunks = excluded.chunks`},
		{&w.putChunk, `INSERT OR REPLACE INTO run_checkpoint_chunks (run, seq, idx, data) VALUES (?, ?, ?, ?)`},
		{&w.countChunks, `SELECT count(*) FROM run_checkpoint_chunks WHERE run = ? AND seq = ?`},
		{&w.dropChunks, `DELETE FROM run_checkpoint_chunks WHERE run = ? AND seq <> ?`},
		{&w.insEvent, `INSERT INTO run_events (run, seq, event_id, type, data) VALUES (?, ?, ?, ?, ?)`},
		{&w.seqTaken, `SELECT EXISTS (SELECT 1 FROM run_events WHERE run = ? AND seq = ?)`},
		{&w.updState, `UPDATE store_state SET update_seq = ?, clock = ? WHERE id = 1`},
	}
}

// allDefs is every statement the writer prepares: newWriter prepares them and closeStmts
// closes them from this one list, so none is left open (an unclosed statement keeps the
// connection alive past Close, and with it the WAL file).
func (w *writer) allDefs() []stmtDef {
	defs := w.defs()
	defs = append(defs, w.bus.defs()...)
	defs = append(defs, w.state.defs()...)
	return append(defs, w.env.defs()...)
}

func (w *writer) closeStmts() error {
	var errs []error
	for _, d := range w.allDefs() {
		if *d.st != nil {
			errs = append(errs, (*d.st).Close())
		}
	}
	return errors.Join(errs...)
}

// submit queues op for the writer and waits for its answer on done. If ctx ends first it
// returns ctx.Err(); the op may still be committed (see store.RunStore.AppendRun).
func (s *Store) submit(ctx context.Context, op writeOp, done <-chan error) error {
	return s.submitOn(ctx, false, op, done)
}

// submitOn is submit on the foreground lane, or the background lane when background is set.
func (s *Store) submitOn(ctx context.Context, background bool, op writeOp, done <-chan error) error {
	if err := s.enqueueOn(ctx, background, op); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueue queues op for the writer, unless ctx ends first or the store is closed.
func (s *Store) enqueue(ctx context.Context, op writeOp) error {
	return s.enqueueOn(ctx, false, op)
}

// enqueueOn is enqueue on the foreground lane, or the background lane when background is set.
func (s *Store) enqueueOn(ctx context.Context, background bool, op writeOp) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.ErrClosed
	}
	lane := s.w.reqs
	if background {
		lane = s.w.bg
	}
	select {
	case lane <- op:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
	r := &appendReq{opBase: newOpBase(ctx), org: org, runID: runID, req: req}
	if err := s.submit(ctx, r, r.done); err != nil {
		return store.RunInfo{}, err
	}
	return r.info, nil
}

// sweepOp is one retention-sweeper call that deletes up to limit rows expired at cutoff with
// one statement of the writer (`... expires_at <= ?1 ... LIMIT ?2` or the like).
type sweepOp struct {
	opBase
	what    string                    // for errors: "publishes", "envelopes", …
	stmt    func(w *writer) *sql.Stmt // the DELETE, taking (cutoff, limit)
	cutoff  int64
	limit   int
	deleted int
}

func (o *sweepOp) weight() int { return 1 }

func (o *sweepOp) exec(ctx context.Context, w *writer, g *groupState) error {
	res, err := o.stmt(w).ExecContext(ctx, o.cutoff, o.limit)
	if err != nil {
		return fmt.Errorf("sqlite: expire %s: %w", o.what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: expire %s: %w", o.what, err)
	}
	o.deleted = int(n)
	if n > 0 {
		g.items += int(n)
		g.wrote = true
	}
	return nil
}

func (o *sweepOp) notify(*Store) {}

// sweep runs one sweepOp through the group-commit writer and returns how many rows it deleted.
func (s *Store) sweep(ctx context.Context, cutoff time.Time, limit int, what string, stmt func(w *writer) *sql.Stmt) (int, error) {
	if err := store.ValidateSweep(cutoff, limit); err != nil {
		return 0, err
	}
	o := &sweepOp{opBase: newOpBase(ctx), what: what, stmt: stmt, cutoff: nanos(cutoff), limit: limit}
	if err := s.submit(ctx, o, o.done); err != nil {
		return 0, err
	}
	return o.deleted, nil
}

// storeCheckpoint makes the run's checkpoint cover seq: inline bytes (chunks 0), or the
// chunks already stored for seq (their number), and deletes every other chunk of the run.
func (w *writer) storeCheckpoint(ctx context.Context, run, seq int64, snapshot []byte, chunks int) error {
	if snapshot == nil {
		snapshot = []byte{}
	}
	if _, err := w.putCheckpoint.ExecContext(ctx, run, seq, snapshot, chunks); err != nil {
		return fmt.Errorf("sqlite: write checkpoint: %w", err)
	}
	keep := seq
	if chunks == 0 {
		keep = -1
	}
	if _, err := w.dropChunks.ExecContext(ctx, run, keep); err != nil {
		return fmt.Errorf("sqlite: drop checkpoint chunks: %w", err)
	}
	return nil
}

// checkpointTarget reads the run row and the sequence its checkpoint covers, and checks seq
// against them: obsolete when a checkpoint at seq or later is stored.
func (w *writer) checkpointTarget(ctx context.Context, org, runID string, seq int64) (run int64, obsolete bool, err error) {
	var count, last, createdAt int64
	err = w.selRun.QueryRowContext(ctx, org, runID).Scan(&run, &createdAt, &count, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("%w: run %s", store.ErrNotFound, runID)
	}
	if err != nil {
		return 0, false, fmt.Errorf("sqlite: read run: %w", err)
	}
	if seq > last {
		return 0, false, fmt.Errorf("%w: checkpoint at %d beyond the run's last logical sequence %d", store.ErrInvalid, seq, last)
	}
	var covered int64
	if err := w.selCheckpoint.QueryRowContext(ctx, run).Scan(&covered); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("sqlite: read checkpoint: %w", err)
	}
	return run, seq <= covered, nil
}

// checkpointReq is one queued write of a PutCheckpoint call: one chunk of a large snapshot
// (chunk ≥ 0), or the publication of the checkpoint: inline bytes, or the number of chunks
// stored before (chunks > 0).
type checkpointReq struct {
	opBase
	org, runID string
	seq        int64
	data       []byte
	chunk      int // ≥ 0: store data as chunk number chunk; -1: publish
	chunks     int // publish: how many chunks (0: data is the whole snapshot)
	obsolete   bool
}

func (r *checkpointReq) weight() int { return 1 }

func (r *checkpointReq) exec(ctx context.Context, w *writer, g *groupState) error {
	run, obsolete, err := w.checkpointTarget(ctx, r.org, r.runID, r.seq)
	if err != nil {
		return err
	}
	if obsolete {
		r.obsolete = true
		return nil
	}
	switch {
	case r.chunk >= 0:
		if _, err := w.putChunk.ExecContext(ctx, run, r.seq, r.chunk, r.data); err != nil {
			return fmt.Errorf("sqlite: write checkpoint chunk: %w", err)
		}
	case r.chunks > 0:
		var n int
		if err := w.countChunks.QueryRowContext(ctx, run, r.seq).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: count checkpoint chunks: %w", err)
		}
		if n != r.chunks {
			return fmt.Errorf("%w: checkpoint at %d has %d of its %d chunks", store.ErrInvalid, r.seq, n, r.chunks)
		}
		if err := w.storeCheckpoint(ctx, run, r.seq, nil, r.chunks); err != nil {
			return err
		}
	default:
		if err := w.storeCheckpoint(ctx, run, r.seq, r.data, 0); err != nil {
			return err
		}
	}
	if r.chunk < 0 { // the run's checkpoint now covers r.seq
		if c, ok := w.cache.get(r.org, r.runID); ok {
			c.snapSeq = r.seq
			w.cache.put(r.org, r.runID, c)
		}
	}
	g.items++
	g.wrote = true
	return nil
}

func (r *checkpointReq) notify(*Store) {} // events did not change

// CheckpointChunk is the size of the pieces PutCheckpoint writes a larger snapshot in, each in
// a group commit of its own on the writer's background lane (run only when no other write is
// waiting, or after backgroundMaxWait), so that no commit carries megabytes and an append
// arriving meanwhile waits for at most one small piece (a snapshot grows with its run,
// events.md §8.1). 32 KiB measured better than 128 KiB for the SSE latency tail.
const CheckpointChunk = 32 << 10

// PutCheckpoint implements [store.RunStore.PutCheckpoint]. A snapshot of up to
// CheckpointChunk bytes is one write call of the group commit; a larger one is stored as
// chunks, one write call each, then published by a last call that makes the run's checkpoint
// point at them (GetRun reads checkpoint and chunks in one read transaction). Until the last
// call commits, readers get the previous checkpoint; chunks left by a crash are deleted at the
// next Open or with the run's next checkpoint. It stops early and answers stored false as
// soon as a checkpoint at seq or later is found stored.
func (s *Store) PutCheckpoint(ctx context.Context, org, runID string, seq int64, snapshot []byte) (bool, error) {
	if err := store.ValidateCheckpoint(org, runID, seq, snapshot); err != nil {
		return false, err
	}
	call := func(r *checkpointReq) (bool, error) {
		r.opBase, r.org, r.runID, r.seq = newOpBase(ctx), org, runID, seq
		if err := s.submitOn(ctx, true, r, r.done); err != nil {
			return false, err
		}
		return !r.obsolete, nil
	}
	if len(snapshot) <= CheckpointChunk {
		return call(&checkpointReq{data: snapshot, chunk: -1})
	}
	n := 0
	for off := 0; off < len(snapshot); off += CheckpointChunk {
		ok, err := call(&checkpointReq{data: snapshot[off:min(off+CheckpointChunk, len(snapshot))], chunk: n})
		if err != nil || !ok {
			return false, err
		}
		n++
	}
	return call(&checkpointReq{chunk: -1, chunks: n})
}

// backgroundMaxWait bounds how long the background lane waits behind a steady stream of
// foreground ops.
const backgroundMaxWait = 20 * time.Millisecond

// next returns the next op to run and whether it came from the background lane; ok is false
// once both lanes are closed and drained. Foreground ops go first: a background op (a piece
// of a checkpoint, written off the request path) runs when no foreground op is waiting, or
// when the background lane has not been served for backgroundMaxWait.
func (w *writer) next(fg, bg <-chan writeOp) (op writeOp, background, ok bool) {
	for fg != nil || bg != nil {
		select {
		case r := <-w.filters:
			w.applyFilter(r)
		default:
		}
		if bg != nil && time.Since(w.lastBG) > backgroundMaxWait {
			select {
			case op, ok := <-bg:
				w.lastBG = time.Now()
				if ok {
					return op, true, true
				}
				bg = nil
				continue
			default:
				w.lastBG = time.Now()
			}
		}
		if fg != nil {
			select {
			case op, ok := <-fg:
				if ok {
					return op, false, true
				}
				fg = nil
				continue
			default:
			}
		}
		select {
		case op, ok := <-fg:
			if ok {
				return op, false, true
			}
			fg = nil
		case op, ok := <-bg:
			w.lastBG = time.Now()
			if ok {
				return op, true, true
			}
			bg = nil
		case r := <-w.filters:
			w.applyFilter(r)
		}
	}
	return nil, false, false
}

// run is the writer goroutine: take one request, add whatever else is queued on the
// foreground lane (a background op runs alone), commit the group, repeat until both lanes
// are closed and drained.
func (w *writer) run() {
	defer close(w.done)
	group := make([]writeOp, 0, w.s.opts.MaxGroupRequests)
	fg, bg := (<-chan writeOp)(w.reqs), (<-chan writeOp)(w.bg)
	for {
		first, background, ok := w.next(fg, bg)
		if !ok {
			return
		}
		group = append(group[:0], first)
		if background {
			w.commitGroup(group)
			clear(group)
			continue
		}
		events := first.weight()
	fill:
		for len(group) < w.s.opts.MaxGroupRequests && events < w.s.opts.MaxGroupEvents {
			select {
			case r, ok := <-w.reqs:
				if !ok {
					break fill
				}
				group = append(group, r)
				events += r.weight()
			default:
				break fill
			}
		}
		w.commitGroup(group)
		clear(group)
	}
}

// commitGroup runs one group in one transaction and answers every caller.
func (w *writer) commitGroup(group []writeOp) {
	bg := context.Background() // one caller's context must not cut a shared transaction
	start := time.Now()
	errs := w.errs[:0]
	for range group {
		errs = append(errs, nil)
	}
	w.errs = errs

	w.cache.discard(false)
	w.dropped = false
	// One commit instant for the whole group, never before the previous commit's.
	wall := w.s.now().UnixNano()
	g := groupState{now: max(wall, w.clock), wall: wall, updateSeq: w.updateSeq}
	done := make([]bool, len(group)) // applied (until a group failure)
	appended := 0

	fail := func(err error) {
		_, _ = w.rollback.ExecContext(bg)
		w.cache.discard(true)
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		appended, g.items = 0, 0
		clear(done)
	}

	var groupErr error
	committed := false
	if _, err := w.begin.ExecContext(bg); err != nil {
		groupErr = fmt.Errorf("sqlite: begin: %w", err)
		for i := range errs {
			errs[i] = groupErr
		}
	} else {
		// A lone caller needs no savepoint: its refusal rolls back the whole transaction.
		useSavepoints := len(group) > 1
		for i, r := range group {
			if err := r.context().Err(); err != nil {
				errs[i] = err // nothing stored: it never started
				continue
			}
			if useSavepoints {
				if _, err := w.savepoint.ExecContext(bg); err != nil {
					groupErr = fmt.Errorf("sqlite: savepoint: %w", err)
					break
				}
			}
			err := r.exec(bg, w, &g)
			if err != nil && !isRefusal(err) {
				// An unexpected SQLite error may have rolled back the transaction behind
				// our back; nothing in this group can be trusted to commit atomically.
				groupErr = err
				break
			}
			if err != nil {
				errs[i] = err
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
			done[i] = true
			appended++
		}
		switch {
		case groupErr != nil:
			fail(groupErr)
		case !g.wrote:
			// Everyone was refused, left, or changed nothing (a replay, a repeated
			// receipt): nothing to make durable.
			_, _ = w.rollback.ExecContext(bg)
			w.cache.discard(false)
		default:
			var err error
			if g.runs > 0 {
				if _, err = w.updState.ExecContext(bg, g.updateSeq, g.now); err != nil {
					err = fmt.Errorf("sqlite: update store state: %w", err)
				}
			}
			if err == nil {
				if _, err = w.commit.ExecContext(bg); err != nil {
					err = fmt.Errorf("sqlite: commit: %w", err)
				}
			}
			if err != nil {
				groupErr = err
				fail(groupErr)
			} else {
				committed = true
				w.s.ckpt.poke()
				w.cache.commit()
				if w.dropped {
					w.s.tail.reset()
				}
				if g.runs > 0 {
					w.updateSeq, w.clock = g.updateSeq, g.now
				}
			}
		}
	}
	if w.s.opts.OnCommit != nil {
		w.s.opts.OnCommit(CommitInfo{Requests: len(group), Appended: appended, Events: g.items,
			Duration: time.Since(start), Err: groupErr})
	}
	// Notify before answering, so that when a write returns its subscribers are woken.
	if committed {
		for i, r := range group {
			if done[i] {
				r.notify(w.s)
			}
		}
	}
	for i, r := range group {
		r.reply(errs[i])
		errs[i] = nil
	}
}

// isRefusal reports whether err is one of the typed refusals of a write call, after which the
// transaction is intact and only the caller's savepoint is rolled back: AppendRun's conflict and
// event errors, the bus lane's not-found (an unknown gid, question or stream) and duplicate gid,
// and an argument only the stored state shows invalid (an ack beyond the stream's last seq).
// Writer code returns these only for its own checks, never for a failing SQLite statement.
func isRefusal(err error) bool {
	var c *store.ConflictError
	var e *store.EventError
	var stop *streamStop
	return errors.As(err, &c) || errors.As(err, &e) || errors.As(err, &stop) ||
		errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrDuplicateGID) || errors.Is(err, store.ErrInvalid)
}

// apply writes one caller's batch inside the open transaction: run row first (its id is
// needed by the events), then the checkpoint, then the events in order with the checks of
// AppendRun's contract.
func (w *writer) apply(ctx context.Context, r *appendReq, now, updateSeq int64) (store.RunInfo, error) {
	req := r.req
	row, err := w.openRun(ctx, r.org, r.runID, req.ExpectedLastLogicalSequence, now)
	if err != nil {
		return store.RunInfo{}, err
	}
	info, err := w.writeRun(ctx, r.org, r.runID, &row, req.Status, len(req.Events), req.Events[len(req.Events)-1].LogicalSequence, req.Snapshot, now, updateSeq)
	if err != nil {
		return store.RunInfo{}, err
	}
	if _, err := w.insertEvents(ctx, row.id, req.Events, row.last, 0); err != nil {
		return store.RunInfo{}, err
	}
	w.cacheRun(r.org, r.runID, row, info)
	return info, nil
}

// runRow is a run's row as an append finds it.
type runRow struct {
	id, createdAt, count, last int64
	exists                     bool
	// snapSeq is the sequence the stored checkpoint covers, when snapKnown (from the cache).
	snapSeq   int64
	snapKnown bool
}

// openRun reads the run's row and makes AppendRun's conflict check against expected. A run
// that does not exist has last 0 and createdAt now.
func (w *writer) openRun(ctx context.Context, org, runID string, expected, now int64) (runRow, error) {
	if c, ok := w.cache.get(org, runID); ok {
		if c.last != expected {
			return runRow{}, &store.ConflictError{RunID: runID, Expected: expected, Actual: c.last}
		}
		return runRow{id: c.id, createdAt: c.createdAt, count: c.count, last: c.last, exists: true, snapSeq: c.snapSeq, snapKnown: true}, nil
	}
	row := runRow{exists: true}
	err := w.selRun.QueryRowContext(ctx, org, runID).Scan(&row.id, &row.createdAt, &row.count, &row.last)
	if errors.Is(err, sql.ErrNoRows) {
		row = runRow{createdAt: now}
	} else if err != nil {
		return runRow{}, fmt.Errorf("sqlite: read run: %w", err)
	}
	if row.last != expected {
		return runRow{}, &store.ConflictError{RunID: runID, Expected: expected, Actual: row.last}
	}
	return row, nil
}

// writeRun writes the run's row after an append of added events ending at lastSeq (inserting
// it when row.exists is false, which sets row.id and row.exists) and its checkpoint: snapshot
// when not nil, else the stored one's sequence is read into the answer.
func (w *writer) writeRun(ctx context.Context, org, runID string, row *runRow, status string, added int, lastSeq int64, snapshot []byte, now, updateSeq int64) (store.RunInfo, error) {
	info := store.RunInfo{
		RunID:               runID,
		Status:              status,
		CreatedAt:           time.Unix(0, row.createdAt).UTC(),
		UpdatedAt:           time.Unix(0, now).UTC(),
		EventCount:          row.count + int64(added),
		LastLogicalSequence: lastSeq,
	}
	if row.exists {
		if _, err := w.updRun.ExecContext(ctx, status, now, updateSeq, info.EventCount, info.LastLogicalSequence, row.id); err != nil {
			return store.RunInfo{}, fmt.Errorf("sqlite: update run: %w", err)
		}
	} else {
		id, err := w.insertRun(ctx, org, runID, status, now, updateSeq, info.EventCount, info.LastLogicalSequence)
		if err != nil {
			return store.RunInfo{}, err
		}
		row.id, row.exists = id, true
	}
	switch {
	case snapshot != nil:
		// A checkpoint covers the batch's last event.
		if err := w.storeCheckpoint(ctx, row.id, info.LastLogicalSequence, snapshot, 0); err != nil {
			return store.RunInfo{}, err
		}
		info.SnapshotSequence = info.LastLogicalSequence
	case row.snapKnown:
		info.SnapshotSequence = row.snapSeq
	default:
		// store.ValidateAppend refuses a first batch without a checkpoint, so one is stored.
		if err := w.selCheckpoint.QueryRowContext(ctx, row.id).Scan(&info.SnapshotSequence); err != nil {
			return store.RunInfo{}, fmt.Errorf("sqlite: read checkpoint: %w", err)
		}
	}
	return info, nil
}

// cacheRun records a run's row after a successful append (see runCache).
func (w *writer) cacheRun(org, runID string, row runRow, info store.RunInfo) {
	w.cache.put(org, runID, cachedRun{id: row.id, createdAt: row.createdAt, count: info.EventCount,
		last: info.LastLogicalSequence, snapSeq: info.SnapshotSequence})
}

// insertRun inserts a run's row and returns its id.
func (w *writer) insertRun(ctx context.Context, org, runID, status string, now, updateSeq, count, last int64) (int64, error) {
	res, err := w.insRun.ExecContext(ctx, org, runID, status, now, now, updateSeq, count, last)
	if err != nil {
		return 0, fmt.Errorf("sqlite: insert run: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("sqlite: insert run: %w", err)
	}
	return id, nil
}

// insertEvents inserts events of run id in order after prev (the logical sequence before
// events[0]) with AppendRun's order and uniqueness checks; first is the batch index of
// events[0]. It returns the last event's sequence.
func (w *writer) insertEvents(ctx context.Context, id int64, events []store.Event, prev int64, first int) (int64, error) {
	for j, e := range events {
		i := first + j
		if e.LogicalSequence <= prev {
			// Earlier events of the batch are already inserted, so one lookup covers both
			// "stored" and "earlier in the batch".
			var taken bool
			if err := w.seqTaken.QueryRowContext(ctx, id, e.LogicalSequence).Scan(&taken); err != nil {
				return 0, fmt.Errorf("sqlite: check sequence: %w", err)
			}
			reason := store.ErrOutOfOrder
			if taken {
				reason = store.ErrDuplicateSequence
			}
			return 0, &store.EventError{Index: i, LogicalSequence: e.LogicalSequence, EventID: e.EventID, Reason: reason}
		}
		if _, err := w.insEvent.ExecContext(ctx, id, e.LogicalSequence, e.EventID, e.Type, e.Data); err != nil {
			// The sequence is above every stored one, so a uniqueness failure can only be
			// the event ID.
			if isUniqueViolation(err, "run_events.event_id") {
				return 0, &store.EventError{Index: i, LogicalSequence: e.LogicalSequence, EventID: e.EventID, Reason: store.ErrDuplicateEventID}
			}
			return 0, fmt.Errorf("sqlite: insert event: %w", err)
		}
		prev = e.LogicalSequence
	}
	return prev, nil
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
