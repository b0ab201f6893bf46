package jetstream

import (
	"context"
	"fmt"

	"github.com/agentwire/agentwire/store"
)

var _ store.StreamAppender = (*Store)(nil)

// AppendRunStream buffers the parts and publishes the whole batch at its end, exactly as
// AppendRun (relay.md §5.1.2: an abandoned atomic batch would hold one of the stream's in-flight
// slots for 10 s, since the client cannot tell the server it gave up). The conflict is answered
// before any part is read, and each part's events are checked as they arrive, so a refusal
// still comes early; this instance's other writes to the run wait for the stream to end.
func (s *Store) AppendRunStream(ctx context.Context, org, runID string, st store.AppendStream) (store.RunInfo, error) {
	if err := store.ValidateRunKey(org, runID); err != nil {
		return store.RunInfo{}, err
	}
	if st.ExpectedLastLogicalSequence < 0 {
		return store.RunInfo{}, fmt.Errorf("%w: expected last logical sequence %d is negative", store.ErrInvalid, st.ExpectedLastLogicalSequence)
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
	rs := s.cache.get(org, runID)
	defer s.cache.put(rs)
	rs.wmu.Lock()
	defer rs.wmu.Unlock()
	rs.mu.Lock()
	if !rs.known || rs.h.Last != st.ExpectedLastLogicalSequence {
		if err := s.loadHead(ctx, rs); err != nil {
			rs.mu.Unlock()
			return store.RunInfo{}, err
		}
	}
	last := rs.h.Last
	rs.mu.Unlock()
	if last != st.ExpectedLastLogicalSequence {
		return store.RunInfo{}, &store.ConflictError{RunID: runID, Expected: st.ExpectedLastLogicalSequence, Actual: last}
	}
	var events []store.Event
	var seen []int64
	ids := map[string]struct{}{}
	for {
		var p store.AppendPart
		var ok bool
		select {
		case <-ctx.Done():
			return store.RunInfo{}, ctx.Err()
		case p, ok = <-st.Parts:
		}
		switch {
		case !ok:
			return store.RunInfo{}, fmt.Errorf("%w: the stream closed before its end", store.ErrInvalid)
		case p.Abort != nil:
			return store.RunInfo{}, p.Abort
		}
		if err := store.ValidateEvents(p.Events, len(events)); err != nil {
			return store.RunInfo{}, err
		}
		prev := st.ExpectedLastLogicalSequence
		if len(events) > 0 {
			prev = events[len(events)-1].LogicalSequence
		}
		rs.mu.Lock()
		err := s.checkEvents(ctx, rs, p.Events, len(events), prev, seen, ids)
		rs.mu.Unlock()
		if err != nil {
			return store.RunInfo{}, err
		}
		for _, e := range p.Events {
			seen = append(seen, e.LogicalSequence)
		}
		events = append(events, p.Events...)
		if !p.End {
			continue
		}
		req := store.AppendRequest{ExpectedLastLogicalSequence: st.ExpectedLastLogicalSequence, Events: events, Snapshot: p.Snapshot, Status: p.Status}
		if err := store.ValidateAppend(org, runID, req); err != nil {
			return store.RunInfo{}, err
		}
		return s.appendLocked(ctx, rs, req)
	}
}
