package relay

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/store"
)

// A single writer's long batch costs two serial stretches: parsing and reducing it (about
// 5 µs per event, spread over the CPUs) and the store inserting it (about 7 µs per event in
// SQLite, on the writer goroutine). With a [store.StreamAppender] they overlap: the parts of
// the batch are parsed on every CPU (parsing), one goroutine reduces them in order and hands
// each part to the store while it is still inserting the previous one. The parts start small,
// so the store starts early, and grow to amortize the hand-offs.

// streamMin is the batch length from which Append streams a batch into a StreamAppender.
const streamMin = 64

// streamPart returns the length of the k-th part (0-based): 16, 32, 64, 128, then 256.
func streamPart(k int) int { return 16 << min(k, 4) }

// errStreamRefused aborts a stream whose batch the reducer (or the parser) refused; the
// refusal itself travels in streamOutcome.
var errStreamRefused = errors.New("relay: the batch was refused while it streamed")

// streamOutcome is what the feeding goroutine found: the state after the batch, the accepted
// events, the duplicates, whether the final part carried a checkpoint, and the first refusal
// (nil when the batch was sent whole).
type streamOutcome struct {
	st       events.ReducerState
	accepted []store.Event
	dups     int
	inline   bool
	refusal  *Error
}

// appendStreamed is Append's path for a long batch on a StreamAppender, with ent's lock held.
// done is false when the answer is not known from this attempt — the cached state was stale
// (a refusal or an all-duplicates batch against a state not read for this request) or the
// store reported a conflict — and the caller must take the sequential path, which reloads and
// retries; nothing was stored then. With done true, the answer is the one the sequential
// path gives.
func (s *Server) appendStreamed(ctx, storeCtx context.Context, sa store.StreamAppender, ent *runEntry, lines [][]byte) (res AppendResult, e *Error, done bool) {
	fresh := false
	if !ent.valid {
		if e := s.loadState(ctx, ent); e != nil {
			return AppendResult{}, e, true
		}
		fresh = true
	}
	// Room for every part: the feeder never waits for the store, so when the writer is busy
	// with other callers the whole batch is ready by the time it gets to this one.
	parts := make(chan store.AppendPart, len(lines)/streamPart(0)+2)
	stop := make(chan struct{})
	out := make(chan streamOutcome, 1)
	go func() { out <- s.feedStream(ent, lines, parts, stop) }()
	info, err := sa.AppendRunStream(storeCtx, ent.key.org, ent.key.run, store.AppendStream{
		ExpectedLastLogicalSequence: ent.last,
		Weight:                      len(lines),
		Parts:                       parts,
	})
	close(stop)
	o := <-out
	switch {
	case err == nil:
		s.metrics.streamed.Inc()
		return s.appended(ent, o.st, info, o.accepted, o.dups, o.inline), nil, true
	case errors.Is(err, errStreamRefused):
		if !fresh {
			ent.valid = false
			return AppendResult{}, nil, false
		}
		if o.refusal != nil {
			return AppendResult{}, o.refusal, true
		}
		s.metrics.duplicates.Add(float64(o.dups))
		return AppendResult{Duplicates: o.dups, LastLogicalSequence: ent.last, Status: string(o.st.Status())}, nil, true
	}
	ent.valid = false
	var ee *store.EventError
	if errors.Is(err, store.ErrConflict) || errors.As(err, &ee) {
		s.metrics.conflicts.Inc()
		return AppendResult{}, nil, false
	}
	return AppendResult{}, s.storeErr(ctx, "append", err), true
}

// feedStream parses and reduces lines part by part from ent's state and sends each part's
// accepted events on parts, the last ones with the End part; on the first refusal, or when
// every event is a duplicate, it sends an Abort with errStreamRefused instead. It stops
// sending once stop is closed (the store has answered). It reads ent but never writes it.
func (s *Server) feedStream(ent *runEntry, lines [][]byte, parts chan<- store.AppendPart, stop <-chan struct{}) (o streamOutcome) {
	send := func(p store.AppendPart) bool {
		select {
		case <-stop:
			return false
		default:
		}
		select {
		case parts <- p:
			return true
		case <-stop:
			return false
		}
	}
	pp := newParsing(s, lines, ent.key.run)
	defer pp.stop()
	o.st = ent.state
	o.accepted = make([]store.Event, 0, len(lines))
	sent := 0
	for k := range pp.parts {
		b, lo, hi := pp.wait(k), pp.parts[k].lo, pp.parts[k].hi
		for i, ev := range b.events {
			next, err := events.Reduce(o.st, ev)
			if err != nil {
				o.refusal = reduceError(err, lo+i)
				break
			}
			if next.EventCount() == o.st.EventCount() {
				o.dups++ // an exact duplicate (see Append)
				continue
			}
			o.st = next
			o.accepted = append(o.accepted, store.Event{
				LogicalSequence: ev.LogicalSequence(),
				EventID:         ev.EventID(),
				Type:            string(ev.Type()),
				Data:            b.data[i],
			})
		}
		if o.refusal == nil {
			o.refusal = b.fail
		}
		if o.refusal != nil {
			send(store.AppendPart{Abort: errStreamRefused})
			return o
		}
		lo = hi
		if lo < len(lines) && len(o.accepted) > sent {
			if !send(store.AppendPart{Events: o.accepted[sent:]}) {
				return o
			}
			sent = len(o.accepted)
		}
	}
	if len(o.accepted) == 0 {
		send(store.AppendPart{Abort: errStreamRefused})
		return o
	}
	end := store.AppendPart{Events: o.accepted[sent:], End: true, Status: string(o.st.Status())}
	// As in Append: the first and the terminal batch carry the run's checkpoint.
	if o.inline = ent.last == 0 || o.st.Status().IsTerminal(); o.inline {
		end.Snapshot = o.st.AppendJSON(nil)
	}
	send(end)
	return o
}

// parsing parses the parts of a streamed batch ahead of the reduction, on every CPU: helper
// goroutines and the feeding goroutine itself claim the parts in order, so the first parts
// (small, for the store to start early) are ready first.
type parsing struct {
	s     *Server
	lines [][]byte
	runID string
	parts []parsedPart
	claim atomic.Int64 // parts claimed so far
	quit  atomic.Bool  // the feeder has stopped: claim nothing more
	wg    sync.WaitGroup
}

// parsedPart is lines[lo:hi], parsed once ready is closed.
type parsedPart struct {
	lo, hi int
	b      batch
	ready  chan struct{}
}

func newParsing(s *Server, lines [][]byte, runID string) *parsing {
	p := &parsing{s: s, lines: lines, runID: runID}
	for lo, k := 0, 0; lo < len(lines); k++ {
		hi := min(lo+streamPart(k), len(lines))
		p.parts = append(p.parts, parsedPart{lo: lo, hi: hi, ready: make(chan struct{})})
		lo = hi
	}
	for range min(runtime.GOMAXPROCS(0), len(p.parts)) - 1 {
		p.wg.Go(func() {
			for p.parseNext() {
			}
		})
	}
	return p
}

// stop makes the helpers claim nothing more and waits for the part each may still be parsing:
// once it returns nobody reads the request's lines (Append's caller owns them again).
func (p *parsing) stop() {
	p.quit.Store(true)
	p.wg.Wait()
}

// parseNext claims and parses the next unclaimed part; false when none is left.
func (p *parsing) parseNext() bool {
	if p.quit.Load() {
		return false
	}
	k := int(p.claim.Add(1)) - 1
	if k >= len(p.parts) {
		return false
	}
	pt := &p.parts[k]
	pt.b = p.s.parseRange(p.lines[pt.lo:pt.hi], pt.lo, p.runID)
	close(pt.ready)
	return true
}

// wait returns part k parsed, parsing unclaimed parts itself while it is not ready.
func (p *parsing) wait(k int) batch {
	pt := &p.parts[k]
	for {
		select {
		case <-pt.ready:
			return pt.b
		default:
		}
		if !p.parseNext() {
			<-pt.ready
			return pt.b
		}
	}
}
