package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/store"
)

// AppendResult is the 200 answer of POST /v1/runs/{runId}/events (relay.md §2):
// `{"accepted":n,"duplicates":d,"lastLogicalSequence":x,"status":"…"}`.
type AppendResult struct {
	// Accepted is `accepted`: events of the request that were stored.
	Accepted int
	// Duplicates is `duplicates`: exact duplicates (events.md §8.3 step 3) answered as no-ops.
	Duplicates int
	// LastLogicalSequence is the run's `lastLogicalSequence` after the request.
	LastLogicalSequence int64
	// Status is the run's reducer `status` after the request.
	Status string
}

// AppendJSON appends the answer body.
func (a AppendResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"accepted":`...)
	dst = strconv.AppendInt(dst, int64(a.Accepted), 10)
	dst = append(dst, `,"duplicates":`...)
	dst = strconv.AppendInt(dst, int64(a.Duplicates), 10)
	dst = append(dst, `,"lastLogicalSequence":`...)
	dst = strconv.AppendInt(dst, a.LastLogicalSequence, 10)
	dst = append(dst, `,"status":`...)
	dst = append(dst, jsonvalue.Quote(a.Status)...)
	return append(dst, "}\n"...)
}

// batch is a request body parsed up to its first failing event.
type batch struct {
	events []events.Event
	data   [][]byte // each event's encoding, as stored and served
	// fail is the first parse, size or runId fault; it belongs to the event at index
	// len(events). Reducer refusals of earlier events take precedence over it.
	fail *Error
}

// parallelParseMin is the batch length from which parseBatch spreads the parsing over the
// CPUs: a single writer's batch is otherwise parsed on one core while the others idle, and
// below it the hand-off costs more than it saves.
const parallelParseMin = 64

// parseBatch parses the events of one request, stopping at the first fault (strict JSON and
// contract validation by events.ParseEvent, the 1 MiB event limit, the path's runId). A long
// batch is cut into contiguous parts parsed concurrently (events.ParseEvent is pure); the
// parts are joined in order up to the first fault, so the answer is the sequential one.
func (s *Server) parseBatch(lines [][]byte, runID string) batch {
	workers := min(runtime.GOMAXPROCS(0), len(lines)/(parallelParseMin/2))
	if len(lines) < parallelParseMin || workers < 2 {
		return s.parseRange(lines, 0, runID)
	}
	parts := make([]batch, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(lines)/workers, (w+1)*len(lines)/workers
		wg.Go(func() { parts[w] = s.parseRange(lines[lo:hi], lo, runID) })
	}
	wg.Wait()
	b := batch{events: make([]events.Event, 0, len(lines)), data: make([][]byte, 0, len(lines))}
	for _, p := range parts {
		b.events = append(b.events, p.events...)
		b.data = append(b.data, p.data...)
		if p.fail != nil {
			b.fail = p.fail
			break
		}
	}
	return b
}

// parseRange parses lines in order up to the first fault; first is the request index of
// lines[0] (the index a fault reports).
func (s *Server) parseRange(lines [][]byte, first int, runID string) batch {
	b := batch{events: make([]events.Event, 0, len(lines)), data: make([][]byte, 0, len(lines))}
	size := 0
	for _, line := range lines {
		size += len(line)
	}
	// One buffer holds every event's encoding (about the size of the request text).
	buf := make([]byte, 0, size+size/8+64)
	for j, line := range lines {
		i := first + j
		if len(line) > s.limits.MaxEvent {
			b.fail = newError(CodePayloadTooLarge, "Agent event exceeds the limit of %d bytes.", s.limits.MaxEvent).withIndex(i)
			return b
		}
		ev, err := events.ParseEvent(line)
		if err != nil {
			b.fail = newError(CodeInvalidRequest, "%s", err.Error()).withIndex(i)
			return b
		}
		if ev.RunID() != runID {
			b.fail = newError(CodeInvalidRequest, "Agent event.runId does not match the run ID of the request path.").withIndex(i).withField("runId")
			return b
		}
		b.events = append(b.events, ev)
		start := len(buf)
		buf = ev.AppendJSON(buf)
		b.data = append(b.data, buf[start:len(buf):len(buf)])
	}
	return b
}

// handleAppend serves POST /v1/runs/{runId}/events.
func (s *Server) handleAppend(w http.ResponseWriter, r *http.Request, p *Principal) {
	runID := r.PathValue("runId")
	ndjson, e := mediaEvents.check(r) // checked by the route wrapper; this learns which
	if e != nil {
		s.refuse(w, e)
		return
	}
	body, e := readBody(w, r, s.limits.MaxBody)
	if e != nil {
		s.refuse(w, e)
		return
	}
	var lines [][]byte
	if ndjson {
		if lines, e = splitNDJSON(body, s.limits.MaxBatch); e != nil {
			s.refuse(w, e)
			return
		}
	} else {
		lines = [][]byte{body}
	}
	if len(lines) == 0 {
		s.refuse(w, newError(CodeInvalidRequest, "The request body holds no event."))
		return
	}
	res, e := s.appendLines(r.Context(), p.Org, runID, lines)
	if e != nil {
		s.refuse(w, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(res.AppendJSON(nil))
}

// refuse answers an error of the ingest route and counts it by code.
func (s *Server) refuse(w http.ResponseWriter, e *Error) {
	s.metrics.refusals.WithLabelValues(e.Code).Inc()
	writeError(w, e)
}

// Append is the ingest path of POST /v1/runs/{runId}/events without HTTP framing: lines are
// the request's event texts in order. It parses them, reduces them in order from the run's
// stored state, and stores the accepted events with the new snapshot in one durable AppendRun,
// retrying from fresh state after a store conflict. On any refusal nothing is stored.
//
// A long batch (streamMin events or more) on a store that is a [store.StreamAppender] is
// parsed, reduced and stored in parts that overlap (stream.go); the answer is the same. A
// refusal is an *[Error] (the body the route would answer; use errors.As).
func (s *Server) Append(ctx context.Context, org, runID string, lines [][]byte) (AppendResult, error) {
	res, e := s.appendLines(ctx, org, runID, lines)
	if e != nil {
		return res, e
	}
	return res, nil
}

// appendLines is Append with the refusal's concrete type.
func (s *Server) appendLines(ctx context.Context, org, runID string, lines [][]byte) (AppendResult, *Error) {
	// Streaming pays when this is the only batch being appended: the store's writer then
	// waits for nothing but this batch's parts. With others in flight, group commit already
	// overlaps their parsing with the writer's inserts, and a stream would hold the writer
	// while its parts are parsed on CPUs the other requests share.
	alone := s.appending.Add(1) == 1
	defer s.appending.Add(-1)
	sa, streams := s.store.(store.StreamAppender)
	streams = streams && alone && len(lines) >= streamMin
	var b batch
	if !streams {
		if b = s.parseBatch(lines, runID); len(b.events) == 0 {
			return AppendResult{}, b.fail
		}
	}
	key := runKey{org, runID}
	ent := s.runs.acquire(key)
	defer s.runs.release(ent)

	// The commit must not be cut by the client leaving: once queued, its outcome decides the
	// cached state, and a 2xx is only ever sent after it is durable.
	storeCtx := context.WithoutCancel(ctx)
	if streams {
		if res, e, done := s.appendStreamed(ctx, storeCtx, sa, ent, lines); done {
			return res, e
		}
		// The stream could not decide (a stale cached state, a store conflict): the batch
		// goes the sequential way, which reloads and retries.
		if b = s.parseBatch(lines, runID); len(b.events) == 0 {
			return AppendResult{}, b.fail
		}
	}
	accepted := make([]store.Event, 0, len(b.events))
	for attempt := 0; ; attempt++ {
		// fresh: the state was read from the store for this request. A cached state is
		// only trusted for appends (the store's optimistic check confirms it); a refusal or an
		// all-duplicates answer computed from it is re-checked against a fresh read, in case
		// another process advanced the run.
		fresh := false
		if !ent.valid {
			if e := s.loadState(ctx, ent); e != nil {
				return AppendResult{}, e
			}
			fresh = true
		}
		st := ent.state
		accepted = accepted[:0]
		dups := 0
		var refusal *Error
		for i, ev := range b.events {
			next, err := events.Reduce(st, ev)
			if err != nil {
				refusal = reduceError(err, i)
				break
			}
			if next.EventCount() == st.EventCount() {
				// Reduce returns the state unchanged for an exact duplicate (events.md §8.3
				// step 3); every applied event appends its ID.
				dups++
				continue
			}
			st = next
			accepted = append(accepted, store.Event{
				LogicalSequence: ev.LogicalSequence(),
				EventID:         ev.EventID(),
				Type:            string(ev.Type()),
				Data:            b.data[i],
			})
		}
		if refusal == nil {
			refusal = b.fail
		}
		if (refusal != nil || len(accepted) == 0) && !fresh {
			ent.valid = false
			attempt--
			continue
		}
		if refusal != nil {
			return AppendResult{}, refusal
		}
		if len(accepted) == 0 {
			s.metrics.duplicates.Add(float64(dups))
			return AppendResult{Duplicates: dups, LastLogicalSequence: ent.last, Status: string(st.Status())}, nil
		}
		req := store.AppendRequest{
			ExpectedLastLogicalSequence: ent.last,
			Events:                      accepted,
			Status:                      string(st.Status()),
		}
		// The first batch stores the run's first checkpoint with it, and the terminal batch its
		// last (a finished run's stored checkpoint covers all its events, crash or not); the
		// ones in between are written in the background once due (checkpoints.go).
		inline := ent.last == 0 || st.Status().IsTerminal()
		if inline {
			req.Snapshot = st.AppendJSON(nil)
		}
		info, err := s.store.AppendRun(storeCtx, org, runID, req)
		if err == nil {
			return s.appended(ent, st, info, accepted, dups, inline), nil
		}
		ent.valid = false
		var ee *store.EventError
		if (errors.Is(err, store.ErrConflict) || errors.As(err, &ee)) && attempt < maxConflictRetries {
			// Another writer advanced the run after our read (or, for an EventError, the
			// stored events disagree with the state we reduced against): reload, re-reduce.
			s.metrics.conflicts.Inc()
			continue
		}
		return AppendResult{}, s.storeErr(ctx, "append", err)
	}
}

// appended records a committed batch in the run's entry (state, checkpoint schedule), fans
// its events out and answers it.
func (s *Server) appended(ent *runEntry, st events.ReducerState, info store.RunInfo, accepted []store.Event, dups int, inline bool) AppendResult {
	prev := ent.last
	ent.state, ent.last, ent.valid = st, info.LastLogicalSequence, true
	for _, ev := range accepted {
		ent.size += reducedCost(len(ev.Data))
	}
	now := s.now()
	switch {
	case inline:
		ent.checkpointCount, ent.checkpointAt = st.EventCount(), now
	case s.checkpointDue(ent) && now.Sub(ent.checkpointAt) >= s.cfg.CheckpointMinInterval:
		if s.queueCheckpoint(ent.key.org, ent.key.run, st, info.LastLogicalSequence, ent.size) {
			ent.checkpointCount, ent.checkpointAt = st.EventCount(), now
		}
	}
	s.fan.publishEvents(ent.key, accepted, prev, time.Now())
	s.metrics.ingested.Add(float64(len(accepted)))
	s.metrics.duplicates.Add(float64(dups))
	return AppendResult{Accepted: len(accepted), Duplicates: dups, LastLogicalSequence: info.LastLogicalSequence, Status: info.Status}
}

// Checkpoint intervals double with the run: a snapshot holds every event ID and fingerprint
// (events.md §8.1), so storing one every fixed K events would cost O(n²/K) bytes over a run of
// n events. With the next checkpoint due once as many events follow the last one as it covers
// (and at least Config.CheckpointEvery), a run of n events writes O(log n) checkpoints of at
// most 2n snapshot bytes in all, and a cold load re-reduces at most half of the run. (An
// interval of an eighth of the run was measured first: its more frequent megabyte snapshots
// of long runs showed in the SSE latency tail.)

// checkpointDue reports whether the run's cached state is due for a checkpoint.
func (s *Server) checkpointDue(ent *runEntry) bool {
	return ent.valid && ent.state.EventCount()-ent.checkpointCount >= s.checkpointInterval(ent.checkpointCount)
}

// checkpointInterval is how many events after a checkpoint of count events the next is due.
func (s *Server) checkpointInterval(count int) int {
	return max(s.cfg.CheckpointEvery, count)
}

// loadState reads the run's current reducer state into ent (a missing run is the initial
// state): its stored checkpoint re-reduced with the stored events after it.
func (s *Server) loadState(ctx context.Context, ent *runEntry) *Error {
	l, e := s.currentState(ctx, ent.key.org, ent.key.run)
	if e != nil {
		if e == errRunNotFound {
			ent.state, ent.last, ent.checkpointCount, ent.size, ent.valid = events.NewReducerState(), 0, 0, decodedCost(0), true
			return nil
		}
		return e
	}
	ent.state, ent.last, ent.checkpointCount, ent.size, ent.valid = l.st, l.info.LastLogicalSequence, l.checkpointCount, l.size, true
	return nil
}

// errRunNotFound is currentState's answer for a run the store does not have.
var errRunNotFound = runNotFound()

// tailPage is how many stored events currentState reads at a time.
const tailPage = 512

// readPageBytes bounds the event data of one store read the relay makes (relay.md §3): a page
// of 1,000 events of 1 MiB each would otherwise be a gigabyte for one reader.
const readPageBytes = 4 << 20

// readPage reads at most limit stored events after `after` — and at most readPageBytes of
// them when the store can bound its reads by bytes (store.BoundedReader) — and reports
// whether more may follow.
func (s *Server) readPage(ctx context.Context, org, runID string, after int64, limit int) ([]store.Event, bool, error) {
	if br, ok := s.store.(store.BoundedReader); ok {
		evs, cut, err := br.ReadEventsBounded(ctx, org, runID, after, limit, readPageBytes)
		return evs, cut || len(evs) == limit, err
	}
	evs, err := s.store.ReadEvents(ctx, org, runID, after, limit)
	return evs, len(evs) == limit, err
}

// currentState returns the run's reducer state after its last stored event as of one
// committed state of the store, with that state's metadata and the event count of the
// checkpoint it started from. It decodes the checkpoint GetRun returns and re-reduces the
// stored events after it up to info.LastLogicalSequence (events are append-only, so later
// appends do not change that range); a checkpoint that cannot be decoded is skipped and the run
// re-reduced from its first event. The stored events were validated when they were stored,
// so a failure here means the store is damaged: it is logged and answered 500.
func (s *Server) currentState(ctx context.Context, org, runID string) (loaded, *Error) {
	snap, info, err := s.store.GetRun(ctx, org, runID)
	if errors.Is(err, store.ErrNotFound) {
		return loaded{}, errRunNotFound
	}
	if err != nil {
		return loaded{}, s.storeErr(ctx, "load snapshot", err)
	}
	damaged := func(msg string) (loaded, *Error) {
		s.log.LogAttrs(ctx, slog.LevelError, "stored run state unusable", slog.String("org", org),
			slog.String("run", runID), slog.String("error", msg))
		return loaded{}, newError(CodeInternal, "Internal error.")
	}
	after := info.SnapshotSequence
	size := decodedCost(len(snap))
	st, err := events.DecodeReducerState(snap)
	if err != nil {
		// Every snapshot the relay writes decodes (events.MaxStateDepth allows the depth a
		// state adds to the data it holds), so this one was damaged or written by another
		// program; the stored events are the source of truth: re-reduce from the first event.
		s.log.LogAttrs(ctx, slog.LevelWarn, "stored checkpoint does not decode; re-reducing the run",
			slog.String("org", org), slog.String("run", runID), slog.String("error", err.Error()))
		st, after, size = events.NewReducerState(), 0, decodedCost(0)
	} else if int64(st.LastLogicalSequence()) != info.SnapshotSequence {
		return damaged("checkpoint does not match its logical sequence")
	}
	checkpointCount := st.EventCount()
	for after < info.LastLogicalSequence {
		evs, more, err := s.readPage(ctx, org, runID, after, tailPage)
		if err != nil {
			return loaded{}, s.storeErr(ctx, "load events", err)
		}
		if len(evs) == 0 {
			return damaged("stored events end before the run's last logical sequence")
		}
		for _, e := range evs {
			if e.LogicalSequence > info.LastLogicalSequence {
				break
			}
			ev, err := events.ParseEvent(e.Data)
			if err == nil {
				st, err = events.Reduce(st, ev)
			}
			if err != nil {
				return damaged(fmt.Sprintf("stored event %d: %v", e.LogicalSequence, err))
			}
			size += reducedCost(len(e.Data))
			after = e.LogicalSequence
			if after == info.SnapshotSequence {
				checkpointCount = st.EventCount()
			}
		}
		if !more && after < info.LastLogicalSequence {
			return damaged("stored events end before the run's last logical sequence")
		}
	}
	if int64(st.LastLogicalSequence()) != info.LastLogicalSequence || int64(st.EventCount()) != info.EventCount {
		return damaged("checkpoint and stored events do not match the run's counters")
	}
	return loaded{st: st, info: info, checkpointCount: checkpointCount, size: size}, nil
}

// loaded is a run's state as currentState read it.
type loaded struct {
	st   events.ReducerState
	info store.RunInfo
	// checkpointCount is the event count of the checkpoint it started from; size the
	// estimated heap of st (state.go).
	checkpointCount int
	size            int64
}

func (s *Server) storeErr(ctx context.Context, op string, err error) *Error {
	if errors.Is(err, store.ErrClosed) || (s.isShuttingDown() && errors.Is(err, context.Canceled)) {
		return newError(CodeUnavailable, "The relay is shutting down.")
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return newError(CodeUnavailable, "The request was cancelled.")
	}
	s.log.LogAttrs(ctx, slog.LevelError, "store error", slog.String("op", op), slog.String("error", err.Error()))
	return newError(CodeInternal, "Internal error.")
}

// reduceError maps a Reduce failure of the event at index i: a reducer refusal is 409
// conflict, anything else (a strict-JSON fault) 400; the message is the contract's text.
func reduceError(err error, i int) *Error {
	var re *events.ReduceError
	if errors.As(err, &re) {
		return newError(CodeConflict, "%s", err.Error()).withIndex(i)
	}
	return newError(CodeInvalidRequest, "%s", err.Error()).withIndex(i)
}

// handleGetRun serves GET /v1/runs/{runId}: the run's current snapshot (its checkpoint
// re-reduced with the events after it) plus
// `"meta":{"createdAt","updatedAt","eventCount"}`.
func (s *Server) handleGetRun(w http.ResponseWriter, r *http.Request, p *Principal) {
	l, e := s.currentState(r.Context(), p.Org, r.PathValue("runId"))
	if e != nil {
		writeError(w, e)
		return
	}
	st, info := l.st, l.info
	snap := bytes.TrimRight(st.AppendJSON(nil), " \t\r\n")
	if len(snap) < 2 || snap[len(snap)-1] != '}' {
		writeError(w, s.storeErr(r.Context(), "get run", errors.New("stored snapshot is not a JSON object")))
		return
	}
	inner := bytes.TrimRight(snap[:len(snap)-1], " \t\r\n")
	out := make([]byte, 0, len(snap)+128)
	out = append(out, inner...)
	if inner[len(inner)-1] != '{' {
		out = append(out, ',')
	}
	out = append(out, `"meta":{"createdAt":`...)
	out = appendTime(out, info.CreatedAt)
	out = append(out, `,"updatedAt":`...)
	out = appendTime(out, info.UpdatedAt)
	out = append(out, `,"eventCount":`...)
	out = strconv.AppendInt(out, info.EventCount, 10)
	out = append(out, "}}\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// TimeFormat is how the relay writes `createdAt` and `updatedAt`: RFC 3339 in UTC with
// milliseconds, like event timestamps (events.md §11).
const TimeFormat = "2006-01-02T15:04:05.000Z"

func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, TimeFormat)
	return append(dst, '"')
}

func runNotFound() *Error { return newError(CodeNotFound, "Run not found.") }

// handleReadEvents serves GET /v1/runs/{runId}/events as NDJSON, or as SSE when the client
// accepts text/event-stream.
func (s *Server) handleReadEvents(w http.ResponseWriter, r *http.Request, p *Principal) {
	q := r.URL.Query()
	var after int64
	if v := q.Get("after"); v != "" {
		var e *Error
		if after, e = parseCursor("after", v); e != nil {
			writeError(w, e)
			return
		}
	}
	if wantsSSE(r) {
		if v := r.Header.Get("Last-Event-ID"); v != "" {
			var e *Error
			if after, e = parseCursor("Last-Event-ID", strings.TrimSpace(v)); e != nil {
				writeError(w, e)
				return
			}
		}
		follow := false
		if v := q.Get("follow"); v != "" {
			var err error
			if follow, err = strconv.ParseBool(v); err != nil {
				writeError(w, newError(CodeInvalidRequest, "follow must be true or false, got %q.", clip(v)).withField("follow"))
				return
			}
		}
		s.streamEvents(w, r, p, r.PathValue("runId"), after, follow)
		return
	}
	limit, e := parseLimit(q.Get("limit"), DefaultReadLimit, MaxReadLimit)
	if e != nil {
		writeError(w, e)
		return
	}
	// The answer is written a page at a time, so a large limit of large events is never held
	// whole (relay.md §3).
	ctx, runID := r.Context(), r.PathValue("runId")
	evs, more, err := s.readPage(ctx, p.Org, runID, after, min(limit, tailPage))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, runNotFound())
		return
	}
	if err != nil {
		writeError(w, s.storeErr(ctx, "read events", err))
		return
	}
	w.Header().Set("Content-Type", MediaNDJSON)
	var out []byte
	for {
		out = out[:0]
		for _, ev := range evs {
			out = append(out, ev.Data...)
			out = append(out, '\n')
		}
		if _, err := w.Write(out); err != nil {
			return
		}
		limit -= len(evs)
		if !more || limit == 0 || len(evs) == 0 {
			return
		}
		after = evs[len(evs)-1].LogicalSequence
		if evs, more, err = s.readPage(ctx, p.Org, runID, after, min(limit, tailPage)); err != nil {
			// The answer has begun: end it short; the reader resumes from its last line.
			s.log.LogAttrs(ctx, slog.LevelWarn, "event read failed mid-answer", slog.String("run", runID), slog.String("error", err.Error()))
			return
		}
	}
}

func wantsSSE(r *http.Request) bool {
	for _, a := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(a), MediaSSE) {
			return true
		}
	}
	return false
}

// runStatuses are the reducer statuses a `status=` filter may name (events.md §8.1).
var runStatuses = map[string]bool{
	string(events.StatusIdle): true, string(events.StatusRunning): true, string(events.StatusWaiting): true,
	string(events.StatusCompleted): true, string(events.StatusFailed): true, string(events.StatusCancelled): true,
}

// handleListRuns serves GET /v1/runs?status=&limit=&cursor=: newest first,
// `{"runs":[{runId,status,updatedAt,eventCount}],"next"?:cursor}`.
func (s *Server) handleListRuns(w http.ResponseWriter, r *http.Request, p *Principal) {
	q := r.URL.Query()
	status := q.Get("status")
	if status != "" && !runStatuses[status] {
		writeError(w, newError(CodeInvalidRequest, "status must be one of idle, running, waiting, completed, failed, cancelled, got %q.", clip(status)).withField("status"))
		return
	}
	limit, e := parseLimit(q.Get("limit"), DefaultListLimit, MaxListLimit)
	if e != nil {
		writeError(w, e)
		return
	}
	page, err := s.store.ListRuns(r.Context(), p.Org, store.ListRunsQuery{Status: status, Limit: limit, Cursor: q.Get("cursor")})
	if errors.Is(err, store.ErrInvalidCursor) {
		writeError(w, newError(CodeInvalidRequest, "cursor is not a cursor this relay issued.").withField("cursor"))
		return
	}
	if err != nil {
		writeError(w, s.storeErr(r.Context(), "list runs", err))
		return
	}
	out := make([]byte, 0, 64+96*len(page.Runs))
	out = append(out, `{"runs":[`...)
	for i, run := range page.Runs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"runId":`...)
		out = append(out, jsonvalue.Quote(run.RunID)...)
		out = append(out, `,"status":`...)
		out = append(out, jsonvalue.Quote(run.Status)...)
		out = append(out, `,"updatedAt":`...)
		out = appendTime(out, run.UpdatedAt)
		out = append(out, `,"eventCount":`...)
		out = strconv.AppendInt(out, run.EventCount, 10)
		out = append(out, '}')
	}
	out = append(out, ']')
	if page.Next != "" {
		out = append(out, `,"next":`...)
		out = append(out, jsonvalue.Quote(page.Next)...)
	}
	out = append(out, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}
