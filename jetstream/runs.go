package jetstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/store"
)

// head is a run's head record, the last message of every batch that changed the run (relay.md
// §5.1.2): what GetRun and ListRuns answer without reading the events, and, by its subject's
// last stream sequence, the guard of the next batch.
type head struct {
	Status  string `json:"status"`
	Created int64  `json:"created"` // unix nanoseconds
	Updated int64  `json:"updated"`
	Count   int64  `json:"count"`
	Last    int64  `json:"last"`
	SnapSeq int64  `json:"snapSeq"`
	// SnapAt is the stream sequence of the checkpoint's first chunk; 0 in a head whose batch
	// carried the checkpoint, whose SnapN chunks are then the messages right before the head
	// (an atomic batch is stored contiguously, and a message cannot name its own sequence).
	SnapAt uint64 `json:"snapAt,omitempty"`
	SnapN  int    `json:"snapN"`
}

// info is the RunInfo the head describes.
func (h *head) info(runID string) store.RunInfo {
	return store.RunInfo{
		RunID: runID, Status: h.Status,
		CreatedAt: time.Unix(0, h.Created), UpdatedAt: time.Unix(0, h.Updated),
		EventCount: h.Count, LastLogicalSequence: h.Last, SnapshotSequence: h.SnapSeq,
	}
}

// parseHead decodes the head stored at seq and makes SnapAt absolute.
func parseHead(data []byte, seq uint64) (head, error) {
	var h head
	if err := json.Unmarshal(data, &h); err != nil {
		return h, fmt.Errorf("jetstream: run head at %d: %w", seq, err)
	}
	if h.SnapAt == 0 {
		h.SnapAt = seq - uint64(h.SnapN)
	}
	return h, nil
}

// loadHead reads the run's head from the stream leader (relay.md §5.1.2: reads that follow a
// write go to the leader) into rs. rs.mu must be held.
func (s *Store) loadHead(ctx context.Context, rs *runState) error {
	ctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	m, err := s.runs.GetLastMsgForSubject(ctx, headSubject(rs.key.org, rs.key.run))
	if errors.Is(err, njs.ErrMsgNotFound) {
		rs.known, rs.headSeq, rs.h = true, 0, head{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("jetstream: read run head: %w", err)
	}
	h, err := parseHead(m.Data, m.Sequence)
	if err != nil {
		return err
	}
	rs.known, rs.headSeq, rs.h = true, m.Sequence, h
	return nil
}

// forChunks calls fn for each event chunk of the run with a stream sequence from `from` up to
// upTo (0: no bound), in order, until fn returns false.
func (s *Store) forChunks(ctx context.Context, org, run string, from, upTo uint64, fn func(seq uint64, c chunkMeta, data []byte) (bool, error)) error {
	subj := runSubject(org, run)
	for seq := from; upTo == 0 || seq <= upTo; {
		if err := ctx.Err(); err != nil {
			return err
		}
		rctx, cancel := s.ctxTimeout(ctx)
		m, err := s.runs.GetMsg(rctx, seq, njs.WithGetMsgSubject(subj))
		cancel()
		if errors.Is(err, njs.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("jetstream: read run chunk: %w", err)
		}
		if upTo != 0 && m.Sequence > upTo {
			return nil
		}
		c, err := parseChunkMeta(m.Header)
		if err != nil {
			return err
		}
		more, err := fn(m.Sequence, c, m.Data)
		if err != nil || !more {
			return err
		}
		seq = m.Sequence + 1
	}
	return nil
}

// Wire errors of a refused guard: the run's head subject moved (10071), or another batch on it
// is being proposed in a cluster (10164); and the server's limit on open batches (10210).
const (
	errCodeWrongLastSeq      njs.ErrorCode = 10071
	errCodeWrongLastSeqConst njs.ErrorCode = 10164
	errCodeTooManyInflight   njs.ErrorCode = 10210
)

// guardRefused reports whether err is a refused expected-last-sequence guard or a transient
// limit, after which the caller re-reads and retries.
func guardRefused(err error) bool {
	var ae *njs.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode {
	case errCodeWrongLastSeq, errCodeWrongLastSeqConst, errCodeTooManyInflight:
		return true
	}
	return false
}

// maxBatchMsgs is the server's default limit on the messages of one atomic batch.
const maxBatchMsgs = 1000

// publishBatch publishes msgs as one atomic batch (group-committed with other writers' batches)
// whose first message carries the guard: the head subject's last stream sequence must be
// headSeq (0: no head yet). It returns the stream sequence of the last message.
func (s *Store) publishBatch(ctx context.Context, msgs []*nats.Msg, headSubj string, headSeq uint64, events int) (uint64, error) {
	msgs[0].Header.Set(njs.ExpectedLastSubjSeqHeader, strconv.FormatUint(headSeq, 10))
	msgs[0].Header.Set(njs.ExpectedLastSubjSeqSubjHeader, headSubj)
	return s.runCommit.publish(ctx, msgs, events)
}

// backoff sleeps before retry attempt (1, 2, …) of a refused guard, or returns ctx's error.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(min(attempt, 20)) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// AppendRun stores the batch as one atomic JetStream batch: its event chunks, the checkpoint
// chunks when it carries one, and the new head, guarded by the head subject's last sequence
// (relay.md §5.1.2). A refused guard re-reads the head: a moved run is a ConflictError, an
// unchanged one (a checkpoint written meanwhile, or a proposal in flight) is retried.
func (s *Store) AppendRun(ctx context.Context, org, runID string, req store.AppendRequest) (store.RunInfo, error) {
	if err := store.ValidateAppend(org, runID, req); err != nil {
		return store.RunInfo{}, err
	}
	if err := checkRunIDs(org, runID); err != nil {
		return store.RunInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.RunInfo{}, err
	}
	if err := s.enter(); err != nil {
		return store.RunInfo{}, err
	}
	defer s.leave()
	return s.appendRun(ctx, org, runID, req)
}

func checkRunIDs(org, runID string) error {
	if err := checkID("org", org); err != nil {
		return err
	}
	return checkID("runId", runID)
}

func (s *Store) appendRun(ctx context.Context, org, runID string, req store.AppendRequest) (store.RunInfo, error) {
	rs := s.cache.get(org, runID)
	defer s.cache.put(rs)
	rs.wmu.Lock()
	defer rs.wmu.Unlock()
	return s.appendLocked(ctx, rs, req)
}

// appendLocked is AppendRun with rs.wmu held.
func (s *Store) appendLocked(ctx context.Context, rs *runState, req store.AppendRequest) (store.RunInfo, error) {
	org, runID := rs.key.org, rs.key.run
	rs.mu.Lock()
	defer rs.mu.Unlock()
	fresh := false
	if !rs.known {
		if err := s.loadHead(ctx, rs); err != nil {
			return store.RunInfo{}, err
		}
		fresh = true
	}
	for attempt := 1; ; attempt++ {
		if rs.h.Last != req.ExpectedLastLogicalSequence {
			if !fresh {
				if err := s.loadHead(ctx, rs); err != nil {
					return store.RunInfo{}, err
				}
				fresh = true
				continue
			}
			return store.RunInfo{}, &store.ConflictError{RunID: runID, Expected: req.ExpectedLastLogicalSequence, Actual: rs.h.Last}
		}
		if err := s.checkEvents(ctx, rs, req.Events, 0, rs.h.Last, nil, make(map[string]struct{}, len(req.Events))); err != nil {
			var ee *store.EventError
			if !fresh && errors.As(err, &ee) {
				// A cached head may be stale: the refusal must be against the stored run.
				if err := s.loadHead(ctx, rs); err != nil {
					return store.RunInfo{}, err
				}
				fresh = true
				continue
			}
			return store.RunInfo{}, err
		}
		h := rs.h
		now := s.now().UnixNano()
		if rs.headSeq == 0 {
			h = head{Created: now}
		}
		h.Updated = max(now, h.Updated, h.Created)
		h.Status = req.Status
		h.Count += int64(len(req.Events))
		h.Last = req.Events[len(req.Events)-1].LogicalSequence
		msgs := chunkEvents(runSubject(org, runID), req.Events, s.chunk)
		nev := len(msgs)
		if req.Snapshot != nil {
			snap := chunkSnapshot(snapSubject(org, runID), req.Snapshot, h.Last, s.chunk)
			// The checkpoint replaces the run's previous one: the rollup drops the old chunks
			// in the same commit.
			snap[0].Header.Set(njs.MsgRollup, njs.MsgRollupSubject)
			msgs = append(msgs, snap...)
			h.SnapSeq, h.SnapAt, h.SnapN = h.Last, 0, len(snap)
		}
		hm := nats.NewMsg(headSubject(org, runID))
		hm.Header.Set(njs.MsgRollup, njs.MsgRollupSubject)
		hm.Data, _ = json.Marshal(&h)
		msgs = append(msgs, hm)
		last, err := s.publishBatch(ctx, msgs, headSubject(org, runID), rs.headSeq, len(req.Events))
		if err != nil {
			if guardRefused(err) && attempt < 1000 {
				prev := rs.headSeq
				if err := s.loadHead(ctx, rs); err != nil {
					return store.RunInfo{}, err
				}
				fresh = true
				if rs.headSeq == prev {
					if err := backoff(ctx, attempt); err != nil {
						return store.RunInfo{}, err
					}
				}
				continue
			}
			// The outcome may be unknown (a timeout): read the run again next time.
			rs.known = false
			return store.RunInfo{}, fmt.Errorf("jetstream: append run: %w", err)
		}
		first := last - uint64(len(msgs)) + 1
		if h.SnapAt == 0 {
			h.SnapAt = last - uint64(h.SnapN)
		}
		metas := make([]chunkMeta, nev)
		for i, m := range msgs[:nev] {
			metas[i], _ = parseChunkMeta(m.Header)
		}
		s.committed(rs, h, last, first, rs.headSeq, req.Events, metas, req.ExpectedLastLogicalSequence)
		s.ownHeads.add(last)
		s.runHub.Notify(org, runID)
		info := h.info(runID)
		return info, nil
	}
}

// PutCheckpoint stores a checkpoint as its own atomic batch (its chunks and a head that points
// at them), guarded like AppendRun.
func (s *Store) PutCheckpoint(ctx context.Context, org, runID string, seq int64, snapshot []byte) (bool, error) {
	if err := store.ValidateCheckpoint(org, runID, seq, snapshot); err != nil {
		return false, err
	}
	if err := checkRunIDs(org, runID); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := s.enter(); err != nil {
		return false, err
	}
	defer s.leave()
	rs := s.cache.get(org, runID)
	defer s.cache.put(rs)
	rs.wmu.Lock()
	defer rs.wmu.Unlock()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if err := s.loadHead(ctx, rs); err != nil {
		return false, err
	}
	for attempt := 1; ; attempt++ {
		switch {
		case rs.headSeq == 0:
			return false, fmt.Errorf("%w: run %q", store.ErrNotFound, runID)
		case seq > rs.h.Last:
			return false, fmt.Errorf("%w: checkpoint at %d is beyond the run's last event %d", store.ErrInvalid, seq, rs.h.Last)
		case seq <= rs.h.SnapSeq:
			return false, nil
		}
		h := rs.h
		snap := chunkSnapshot(snapSubject(org, runID), snapshot, seq, s.chunk)
		snap[0].Header.Set(njs.MsgRollup, njs.MsgRollupSubject)
		h.SnapSeq, h.SnapAt, h.SnapN = seq, 0, len(snap)
		hm := nats.NewMsg(headSubject(org, runID))
		hm.Header.Set(njs.MsgRollup, njs.MsgRollupSubject)
		hm.Data, _ = json.Marshal(&h)
		last, err := s.publishBatch(ctx, append(snap, hm), headSubject(org, runID), rs.headSeq, 0)
		if err != nil {
			if guardRefused(err) && attempt < 1000 {
				prev := rs.headSeq
				if err := s.loadHead(ctx, rs); err != nil {
					return false, err
				}
				if rs.headSeq == prev {
					if err := backoff(ctx, attempt); err != nil {
						return false, err
					}
				}
				continue
			}
			rs.known = false
			return false, fmt.Errorf("jetstream: put checkpoint: %w", err)
		}
		h.SnapAt = last - uint64(h.SnapN)
		s.committed(rs, h, last, last-uint64(h.SnapN), rs.headSeq, nil, nil, rs.h.Last)
		s.ownHeads.add(last) // a checkpoint wakes nobody
		return true, nil
	}
}

var _ store.BoundedReader = (*Store)(nil)

// ReadEvents reads the run's chunks from the stream leader, starting at the first chunk the
// index says may hold an event after `after`.
func (s *Store) ReadEvents(ctx context.Context, org, runID string, after int64, limit int) ([]store.Event, error) {
	evs, _, err := s.readEvents(ctx, org, runID, after, limit, 0)
	return evs, err
}

// ReadEventsBounded is ReadEvents stopping before the event that would bring the page's data
// past maxBytes (the first event always comes).
func (s *Store) ReadEventsBounded(ctx context.Context, org, runID string, after int64, limit, maxBytes int) ([]store.Event, bool, error) {
	if maxBytes <= 0 {
		return nil, false, fmt.Errorf("%w: byte budget %d is not positive", store.ErrInvalid, maxBytes)
	}
	return s.readEvents(ctx, org, runID, after, limit, maxBytes)
}

// readEvents reads up to limit events after `after` and, when maxBytes > 0, up to maxBytes
// of their data (at least one event); cut reports that the budget stopped it.
func (s *Store) readEvents(ctx context.Context, org, runID string, after int64, limit, maxBytes int) ([]store.Event, bool, error) {
	if err := store.ValidateRead(org, runID, after, limit); err != nil {
		return nil, false, err
	}
	if err := checkRunIDs(org, runID); err != nil {
		return nil, false, err
	}
	if err := s.enter(); err != nil {
		return nil, false, err
	}
	defer s.leave()
	rs := s.cache.get(org, runID)
	defer s.cache.put(rs)
	rs.mu.Lock()
	from, ok := rs.ixLookup(after)
	ixFrom, ixEmpty := rs.ixFrom, rs.ixTo < rs.ixFrom
	rs.mu.Unlock()
	if !ok {
		var err error
		if from, err = s.seekStart(ctx, org, runID, after, ixFrom, ixEmpty, 0); err != nil {
			return nil, false, err
		}
	}
	var out []store.Event
	size, cut := 0, false
	var parts splitJoiner
	var seen []chunkRef
	err := s.forChunks(ctx, org, runID, from, 0, func(seq uint64, c chunkMeta, data []byte) (bool, error) {
		seen = append(seen, chunkRef{seq: seq, first: c.first, last: c.last, part: c.part})
		if c.last <= after {
			return true, nil
		}
		data, whole := parts.join(c, data)
		if !whole {
			return true, nil
		}
		evs, err := decodeEvents(data)
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			if e.LogicalSequence > after {
				if maxBytes > 0 && len(out) > 0 && size+len(e.Data) > maxBytes {
					cut = true
					return false, nil
				}
				e.Data = slices.Clone(e.Data)
				out = append(out, e)
				size += len(e.Data)
				if len(out) == limit {
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, false, err
	}
	if len(seen) == 0 && from <= 1 {
		if _, _, err := s.getHead(ctx, org, runID); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	if len(seen) > 0 {
		// Remember the chunks read: every chunk of the run from `from` to the last one read.
		rs.mu.Lock()
		s.ixAdd(rs, seen, from, seen[len(seen)-1].seq, after, rs.ixTo >= rs.ixFrom && from <= rs.ixTo+1 && from >= rs.ixFrom)
		rs.mu.Unlock()
	}
	return out, cut, nil
}

// getHead reads the run's head from the leader; ErrNotFound when the run does not exist.
func (s *Store) getHead(ctx context.Context, org, runID string) (head, uint64, error) {
	ctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	m, err := s.runs.GetLastMsgForSubject(ctx, headSubject(org, runID))
	if errors.Is(err, njs.ErrMsgNotFound) {
		return head{}, 0, fmt.Errorf("%w: run %q", store.ErrNotFound, runID)
	}
	if err != nil {
		return head{}, 0, fmt.Errorf("jetstream: read run head: %w", err)
	}
	h, err := parseHead(m.Data, m.Sequence)
	return h, m.Sequence, err
}

// GetRun reads the head and then the checkpoint chunks it points at; a checkpoint replaced in
// between (its chunks rolled up) is read again from the new head.
func (s *Store) GetRun(ctx context.Context, org, runID string) ([]byte, store.RunInfo, error) {
	if err := store.ValidateRunKey(org, runID); err != nil {
		return nil, store.RunInfo{}, err
	}
	if err := checkRunIDs(org, runID); err != nil {
		return nil, store.RunInfo{}, err
	}
	if err := s.enter(); err != nil {
		return nil, store.RunInfo{}, err
	}
	defer s.leave()
	for attempt := 1; ; attempt++ {
		h, _, err := s.getHead(ctx, org, runID)
		if err != nil {
			return nil, store.RunInfo{}, err
		}
		snap, err := s.readSnapshot(ctx, org, runID, h)
		if errors.Is(err, errSnapshotMoved) && attempt < 100 {
			continue
		}
		if err != nil {
			return nil, store.RunInfo{}, err
		}
		return snap, h.info(runID), nil
	}
}

var errSnapshotMoved = errors.New("jetstream: checkpoint replaced while read")

func (s *Store) readSnapshot(ctx context.Context, org, runID string, h head) ([]byte, error) {
	var snap []byte
	subj := snapSubject(org, runID)
	for i := range h.SnapN {
		rctx, cancel := s.ctxTimeout(ctx)
		m, err := s.runs.GetMsg(rctx, h.SnapAt+uint64(i))
		cancel()
		if errors.Is(err, njs.ErrMsgNotFound) {
			return nil, errSnapshotMoved
		}
		if err != nil {
			return nil, fmt.Errorf("jetstream: read checkpoint: %w", err)
		}
		want := strconv.Itoa(i+1) + "/" + strconv.Itoa(h.SnapN)
		if m.Subject != subj || m.Header.Get(hdrSnap) != want || m.Header.Get(hdrSnapSeq) != strconv.FormatInt(h.SnapSeq, 10) {
			return nil, errSnapshotMoved
		}
		snap = append(snap, m.Data...)
	}
	if snap == nil {
		snap = []byte{}
	}
	return snap, nil
}

// ListRuns reads the org's heads (the last message of each head subject) through a short-lived
// consumer and pages them by (updatedAt, head stream sequence) descending (relay.md §5.1.6).
func (s *Store) ListRuns(ctx context.Context, org string, q store.ListRunsQuery) (store.RunPage, error) {
	if err := store.ValidateList(org, q); err != nil {
		return store.RunPage{}, err
	}
	if err := checkID("org", org); err != nil {
		return store.RunPage{}, err
	}
	var cur *listCursor
	if q.Cursor != "" {
		c, err := parseListCursor(q.Cursor)
		if err != nil {
			return store.RunPage{}, err
		}
		cur = &c
	}
	if err := s.enter(); err != nil {
		return store.RunPage{}, err
	}
	defer s.leave()
	type entry struct {
		info store.RunInfo
		seq  uint64
	}
	// Newest first by (updatedAt, head stream sequence); only the page and the entry after it
	// are kept (memory: the limit, whatever the org's number of runs).
	order := func(a, b entry) int {
		if c := b.info.UpdatedAt.Compare(a.info.UpdatedAt); c != 0 {
			return c
		}
		switch {
		case a.seq > b.seq:
			return -1
		case a.seq < b.seq:
			return 1
		}
		return 0
	}
	var all []entry
	err := s.lastPerSubject(ctx, s.runs, runHeadPrefix+token(org)+".*", func(m njs.Msg, seq uint64) error {
		_, runID, err := splitKey(m.Subject(), runHeadPrefix)
		if err != nil {
			return err
		}
		h, err := parseHead(m.Data(), seq)
		if err != nil {
			return err
		}
		if q.Status != "" && h.Status != q.Status {
			return nil
		}
		info := h.info(runID)
		info.SnapshotSequence = 0
		if cur != nil && !(h.Updated < cur.updated || h.Updated == cur.updated && seq < cur.seq) {
			return nil
		}
		e := entry{info, seq}
		if i, _ := slices.BinarySearchFunc(all, e, order); i <= q.Limit {
			all = slices.Insert(all, i, e)
			if len(all) > q.Limit+1 {
				all = all[:q.Limit+1]
			}
		}
		return nil
	})
	if err != nil {
		return store.RunPage{}, err
	}
	var page store.RunPage
	for i, e := range all {
		if i == q.Limit {
			last := all[i-1]
			page.Next = listCursor{last.info.UpdatedAt.UnixNano(), last.seq}.String()
			break
		}
		page.Runs = append(page.Runs, e.info)
	}
	return page, nil
}

// lastPerSubject calls fn with the last message of every subject matching filter, through an
// ephemeral consumer that delivers the last message per subject.
func (s *Store) lastPerSubject(ctx context.Context, st njs.Stream, filter string, fn func(m njs.Msg, seq uint64) error) error {
	ctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	c, err := st.CreateConsumer(ctx, njs.ConsumerConfig{
		DeliverPolicy:     njs.DeliverLastPerSubjectPolicy,
		AckPolicy:         njs.AckNonePolicy,
		FilterSubject:     filter,
		InactiveThreshold: time.Minute,
		MemoryStorage:     true,
		Replicas:          1,
	})
	if err != nil {
		return fmt.Errorf("jetstream: list consumer: %w", err)
	}
	name := c.CachedInfo().Name
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), s.opts.Timeout)
		_ = st.DeleteConsumer(dctx, name)
		dcancel()
	}()
	pending := c.CachedInfo().NumPending
	for pending > 0 {
		batch, err := c.Fetch(int(min(pending, 1000)), njs.FetchMaxWait(s.opts.Timeout))
		if err != nil {
			return fmt.Errorf("jetstream: list: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("jetstream: list: %w", err)
			}
			if err := fn(m, md.Sequence.Stream); err != nil {
				return err
			}
			pending = md.NumPending
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("jetstream: list: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("jetstream: list: no message within %v with %d pending", s.opts.Timeout, pending)
		}
	}
	return nil
}

// listCursor is the position after which a ListRuns page starts.
type listCursor struct {
	updated int64
	seq     uint64
}

// String encodes the cursor opaquely: base64url of "r1.<updatedAt ns>.<head stream seq>".
func (c listCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte("r1." + strconv.FormatInt(c.updated, 10) + "." + strconv.FormatUint(c.seq, 10)))
}

func parseListCursor(s string) (listCursor, error) {
	bad := fmt.Errorf("%w %q", store.ErrInvalidCursor, s)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return listCursor{}, bad
	}
	rest, ok := strings.CutPrefix(string(b), "r1.")
	if !ok {
		return listCursor{}, bad
	}
	u, q, ok := strings.Cut(rest, ".")
	if !ok {
		return listCursor{}, bad
	}
	var c listCursor
	if c.updated, err = strconv.ParseInt(u, 10, 64); err != nil {
		return listCursor{}, bad
	}
	if c.seq, err = strconv.ParseUint(q, 10, 64); err != nil {
		return listCursor{}, bad
	}
	if c.String() != s {
		return listCursor{}, bad
	}
	return c, nil
}

// Subscribe wakes after each commit to the run, by any relay: the wake-up consumer sees every
// committed head (relay.md §5.1.5), and a write through this store also wakes directly.
func (s *Store) Subscribe(org, runID string) (<-chan struct{}, func()) {
	return s.runHub.Subscribe(org, runID)
}
