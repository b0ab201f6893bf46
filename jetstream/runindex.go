package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/store"
)

// getMsg reads the first message on subject (wildcards allowed) at a stream sequence at or
// after seq from the stream leader; nil when there is none.
func (s *Store) getMsg(ctx context.Context, st njs.Stream, seq uint64, subject string) (*njs.RawStreamMsg, error) {
	rctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	m, err := st.GetMsg(rctx, seq, njs.WithGetMsgSubject(subject))
	if errors.Is(err, njs.ErrMsgNotFound) {
		return nil, nil
	}
	return m, err
}

// seekFirst returns the first message on subject at a stream sequence in [lo, hi] for which
// ok holds, when ok is monotone over the subject's messages in stream order (false, then
// true): a binary search over stream positions, one leader read a step (about log2(hi-lo)).
// nil when none.
func (s *Store) seekFirst(ctx context.Context, st njs.Stream, subject string, lo, hi uint64, ok func(*njs.RawStreamMsg) (bool, error)) (*njs.RawStreamMsg, error) {
	var ans *njs.RawStreamMsg
	for lo <= hi && lo > 0 {
		mid := lo + (hi-lo)/2
		m, err := s.getMsg(ctx, st, mid, subject)
		if err != nil {
			return nil, err
		}
		if m == nil || m.Sequence > hi {
			if mid == 0 {
				break
			}
			hi = mid - 1
			continue
		}
		good, err := ok(m)
		if err != nil {
			return nil, err
		}
		if good {
			ans = m
			hi = mid - 1
		} else {
			lo = m.Sequence + 1
		}
	}
	return ans, nil
}

var chunkRefSize = int64(unsafe.Sizeof(chunkRef{}))

// ixLookup returns, from the index alone, the stream sequence to read the run's chunks from
// for the events after `after`: the first chunk whose last event is after it (a split event
// from its first part), or the position after the index when no indexed chunk has one. ok is
// false when the index cannot tell. rs.mu must be held.
func (rs *runState) ixLookup(after int64) (uint64, bool) {
	if rs.ixTo < rs.ixFrom || after < rs.ixBefore {
		return 0, false
	}
	i, _ := slices.BinarySearchFunc(rs.ix, after, func(c chunkRef, after int64) int {
		if c.last <= after {
			return -1
		}
		return 1
	})
	if i == len(rs.ix) {
		return rs.ixTo + 1, true
	}
	c := rs.ix[i]
	if c.part > 1 {
		// The parts of an event are consecutive messages of one atomic batch.
		return c.seq - uint64(c.part-1), true
	}
	return c.seq, true
}

// ixAdd records that refs are every chunk of the run in stream sequences [from, to], and
// before the last logical sequence of the run before them (at most). contiguous says that the
// run has no chunk between the index's end and from, so the index extends; otherwise it starts
// over with refs. An index that would outgrow the run's budget keeps its newer half. rs.mu must
// be held.
func (s *Store) ixAdd(rs *runState, refs []chunkRef, from, to uint64, before int64, contiguous bool) {
	if to < from {
		return
	}
	if rs.ixTo < rs.ixFrom || !contiguous || from > rs.ixTo+1 {
		rs.ix, rs.ixFrom, rs.ixTo, rs.ixBefore = nil, from, to, before
	}
	var add []chunkRef
	for _, c := range refs {
		if c.seq > rs.ixTo || len(rs.ix) == 0 && c.seq >= rs.ixFrom {
			add = append(add, c)
		}
	}
	if len(add) > 0 && len(add) <= cap(rs.ix)-len(rs.ix) {
		rs.ix = append(rs.ix, add...)
	} else if len(add) > 0 {
		for {
			want := max(2*cap(rs.ix), len(rs.ix)+len(add), 16)
			grow := int64(want-cap(rs.ix)) * chunkRefSize
			if s.cache.reserve(rs, grow) {
				ix := make([]chunkRef, len(rs.ix), want)
				copy(ix, rs.ix)
				rs.ix = append(ix, add...)
				break
			}
			if len(rs.ix) < 2 {
				// Not even the new chunks fit: no index.
				rs.dropIndex()
				s.cache.resize(rs)
				return
			}
			rs.ixTrim()
			s.cache.resize(rs)
		}
	}
	rs.ixTo = max(rs.ixTo, to)
	s.cache.resize(rs)
}

// ixTrim drops the older half of the index (never starting it inside a split event) and
// releases its memory. rs.mu must be held.
func (rs *runState) ixTrim() {
	k := len(rs.ix) / 2
	for k < len(rs.ix) && rs.ix[k].part > 1 {
		k++
	}
	if k == len(rs.ix) {
		rs.dropIndex()
		return
	}
	rs.ixBefore = rs.ix[k-1].last
	rs.ixFrom = rs.ix[k].seq
	rs.ix = slices.Clone(rs.ix[k:])
}

// seekStart returns the stream sequence to read the run's chunks from for the events after
// `after` when its index cannot tell (ixLookup): a binary search of the stream, before the
// index when it is not empty (ixFrom itself when no earlier chunk qualifies), else up to hi (0:
// up to the run's last chunk, read first).
func (s *Store) seekStart(ctx context.Context, org, run string, after int64, ixFrom uint64, ixEmpty bool, hi uint64) (uint64, error) {
	if after == 0 {
		return 1, nil
	}
	subj := runSubject(org, run)
	switch {
	case !ixEmpty:
		if ixFrom <= 1 {
			return ixFrom, nil
		}
		hi = ixFrom - 1
	case hi == 0:
		rctx, cancel := s.ctxTimeout(ctx)
		m, err := s.runs.GetLastMsgForSubject(rctx, subj)
		cancel()
		if errors.Is(err, njs.ErrMsgNotFound) {
			return 1, nil
		}
		if err != nil {
			return 0, fmt.Errorf("jetstream: read run chunk: %w", err)
		}
		c, err := parseChunkMeta(m.Header)
		if err != nil {
			return 0, err
		}
		if c.last <= after {
			return m.Sequence + 1, nil
		}
		hi = m.Sequence
	}
	m, err := s.seekFirst(ctx, s.runs, subj, 1, hi, func(m *njs.RawStreamMsg) (bool, error) {
		c, err := parseChunkMeta(m.Header)
		return c.last > after, err
	})
	if err != nil {
		return 0, fmt.Errorf("jetstream: read run chunk: %w", err)
	}
	if m == nil {
		if !ixEmpty {
			return ixFrom, nil
		}
		return hi + 1, nil
	}
	c, err := parseChunkMeta(m.Header)
	if err != nil {
		return 0, err
	}
	if c.part > 1 {
		return m.Sequence - uint64(c.part-1), nil
	}
	return m.Sequence, nil
}

// splitJoiner joins the parts of an event split over several chunk messages.
type splitJoiner struct{ buf []byte }

// join returns the data of chunk c, or of the split event it completes; whole is false while
// parts of a split event are still to come.
func (j *splitJoiner) join(c chunkMeta, data []byte) (_ []byte, whole bool) {
	if c.parts == 0 {
		return data, true
	}
	if c.part == 1 {
		j.buf = j.buf[:0]
	}
	j.buf = append(j.buf, data...)
	return j.buf, c.part >= c.parts
}

// scanEvents calls fn with every event of the run's chunks at stream sequences from `from` up
// to upTo, in order, joining split events; the event's Data aliases a buffer that fn must copy
// to keep. Memory: one chunk, or one split event.
func (s *Store) scanEvents(ctx context.Context, org, run string, from, upTo uint64, fn func(e store.Event) error) error {
	var parts splitJoiner
	return s.forChunks(ctx, org, run, from, upTo, func(seq uint64, c chunkMeta, data []byte) (bool, error) {
		data, whole := parts.join(c, data)
		if !whole {
			return true, nil
		}
		evs, err := decodeEvents(data)
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			if err := fn(e); err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// storedIDs marks true the IDs among ids (batch ID → taken) that the run has stored up to its
// head. It keeps the run's fingerprint set up to date when the budget allows: the part of the
// run the set does not cover yet is scanned exactly (and added to it), and in the part it
// covers a fingerprint miss is final while a hit is confirmed by scanning the run's chunks.
// Without a set the whole run is scanned. rs.mu must be held.
func (s *Store) storedIDs(ctx context.Context, rs *runState, ids map[string]bool) error {
	if len(ids) == 0 || rs.headSeq == 0 {
		return nil
	}
	covered := uint64(0) // the set covers the run up to this stream sequence
	if rs.idsOK {
		covered = min(rs.idsUpTo, rs.headSeq)
	}
	var maybe map[string]bool
	if covered > 0 {
		for id := range ids {
			if rs.ids.has(s.cache.fingerprint(id)) {
				if maybe == nil {
					maybe = map[string]bool{}
				}
				maybe[id] = false
			}
		}
	}
	if covered < rs.headSeq {
		build := true
		var hs []uint64
		err := s.scanEvents(ctx, rs.key.org, rs.key.run, covered+1, rs.headSeq, func(e store.Event) error {
			if _, ok := ids[e.EventID]; ok {
				ids[e.EventID] = true
			}
			if build {
				hs = append(hs, s.cache.fingerprint(e.EventID))
				if len(hs) >= 4096 {
					build = s.addIDs(rs, hs)
					hs = hs[:0]
				}
			}
			return nil
		})
		if err == nil && build {
			build = s.addIDs(rs, hs)
		}
		if err == nil && build {
			rs.idsOK, rs.idsUpTo = true, rs.headSeq
		} else {
			rs.dropIDs()
			s.cache.resize(rs)
		}
		if err != nil {
			return err
		}
	}
	if len(maybe) == 0 {
		return nil
	}
	return s.scanEvents(ctx, rs.key.org, rs.key.run, 1, covered, func(e store.Event) error {
		if _, ok := maybe[e.EventID]; ok {
			ids[e.EventID] = true
		}
		return nil
	})
}

// addIDs adds fingerprints to the run's set, reserving its growth; false when the set does
// not fit the budget (the caller drops it). rs.mu must be held.
func (s *Store) addIDs(rs *runState, hs []uint64) bool {
	if len(hs) == 0 {
		return true
	}
	if slots := rs.ids.needs(len(hs)); slots > len(rs.ids.t) {
		if !s.cache.reserve(rs, int64(slots-len(rs.ids.t))*8) {
			return false
		}
		rs.ids.grow(slots)
		s.cache.resize(rs)
	}
	for _, h := range hs {
		rs.ids.add(h)
	}
	return true
}

// seqStored reports whether the run has stored an event with logical sequence seq (which is at
// most its last): the classification of a refused sequence. rs.mu must be held.
func (s *Store) seqStored(ctx context.Context, rs *runState, seq int64) (bool, error) {
	if seq < 1 || rs.headSeq == 0 {
		return false, nil
	}
	from, ok := rs.ixLookup(seq - 1)
	if !ok {
		var err error
		if from, err = s.seekStart(ctx, rs.key.org, rs.key.run, seq-1, rs.ixFrom, rs.ixTo < rs.ixFrom, rs.headSeq); err != nil {
			return false, err
		}
	}
	if from > rs.headSeq {
		return false, nil
	}
	found := false
	errStop := errors.New("stop")
	err := s.scanEvents(ctx, rs.key.org, rs.key.run, from, rs.headSeq, func(e store.Event) error {
		if e.LogicalSequence >= seq {
			found = e.LogicalSequence == seq
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return false, err
	}
	return found, nil
}

// checkEvents applies AppendRun's check 3 to events (batch indexes from first) against the
// stored events and the batch's earlier events (seen: their logical sequences, increasing;
// ids: their event IDs). rs.mu must be held, with a head read from the stream.
func (s *Store) checkEvents(ctx context.Context, rs *runState, events []store.Event, first int, prev int64, seen []int64, ids map[string]struct{}) error {
	taken := make(map[string]bool, len(events))
	for _, e := range events {
		taken[e.EventID] = false
	}
	if err := s.storedIDs(ctx, rs, taken); err != nil {
		return err
	}
	for j, e := range events {
		i := first + j
		if e.LogicalSequence <= prev {
			_, inBatch := slices.BinarySearch(seen, e.LogicalSequence)
			stored := false
			if !inBatch {
				var err error
				if stored, err = s.seqStored(ctx, rs, e.LogicalSequence); err != nil {
					return err
				}
			}
			reason := store.ErrOutOfOrder
			if stored || inBatch {
				reason = store.ErrDuplicateSequence
			}
			return &store.EventError{Index: i, LogicalSequence: e.LogicalSequence, EventID: e.EventID, Reason: reason}
		}
		_, inBatch := ids[e.EventID]
		if taken[e.EventID] || inBatch {
			return &store.EventError{Index: i, LogicalSequence: e.LogicalSequence, EventID: e.EventID, Reason: store.ErrDuplicateEventID}
		}
		ids[e.EventID] = struct{}{}
		seen = append(seen, e.LogicalSequence)
		prev = e.LogicalSequence
	}
	return nil
}

// committed updates rs after this instance committed a batch on the run: its head, the
// index (the batch's chunks) and the ID set (the batch's events), each only when it stays
// exact. oldHead is the head the batch was guarded by; first the stream sequence of the
// batch's first message; nev its event chunks (the first nev messages). rs.mu must be held.
func (s *Store) committed(rs *runState, h head, last, first uint64, oldHead uint64, events []store.Event, chunks []chunkMeta, before int64) {
	contiguous := rs.ixTo >= rs.ixFrom && rs.ixTo >= oldHead
	idsExact := rs.idsOK && rs.idsUpTo >= oldHead
	rs.headSeq, rs.h, rs.known = last, h, true
	if len(chunks) > 0 {
		refs := make([]chunkRef, len(chunks))
		for i, c := range chunks {
			refs[i] = chunkRef{seq: first + uint64(i), first: c.first, last: c.last, part: c.part}
		}
		s.ixAdd(rs, refs, first, last, before, contiguous)
	} else if contiguous {
		rs.ixTo = last
	}
	if idsExact {
		hs := make([]uint64, len(events))
		for i, e := range events {
			hs[i] = s.cache.fingerprint(e.EventID)
		}
		if s.addIDs(rs, hs) {
			rs.idsUpTo = last
		} else {
			rs.dropIDs()
			s.cache.resize(rs)
		}
	}
}
