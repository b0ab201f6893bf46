package relay

import (
	"container/list"
	"sync"
	"time"

	"github.com/agentwire/agentwire/events"
)

// runKey scopes a run by org (relay.md §1: tokens scope everything).
type runKey struct{ org, run string }

// The reducer-state cache is bounded by bytes (relay.md §3: `--state-cache`, default
// 256 MiB), not by a count of runs: a finished run of 100,000 events keeps tens of megabytes
// of state, so a count bound let nine such runs take a relay from 26 MB to 955 MB resident.
//
// A state's bytes are estimated from what built it, with factors measured (heap in use after
// GC, TestStateCostEstimates keeps them upper bounds): a state reduced from events retains 0.56
// times the events' JSON bytes on synthetic runs (events/synth, default and rich profiles) and
// 1.05 times on a run of large text deltas, whose text it keeps nearly whole; a state decoded
// from a stored checkpoint retains 0.12 times the snapshot's bytes on synthetic runs and up to
// the whole snapshot when it holds long texts (kept as views of it). The estimates take the
// largest (reducedCost, decodedCost), so the accounting errs on the side of the budget.

// reducedCost is the estimated heap a state keeps for one event of n JSON bytes reduced into it.
func reducedCost(n int) int64 { return int64(n) + int64(n)/4 + 64 }

// decodedCost is the estimated heap of a state decoded from a snapshot of n bytes.
func decodedCost(n int) int64 { return int64(n) + 1024 }

// runTable holds one entry per run being written, and a byte-bounded LRU of idle runs whose
// reducer state stays cached. The entry's mutex serialises this process's writers of one run
// (they would only conflict in the store otherwise) and orders the fan-out of their frames.
//
// Idle entries live in two LRU lists: terminal runs (which take no more events, only replays)
// and the others. When the idle states' bytes exceed the budget, terminal runs go first,
// oldest first, then the others. A state larger than the whole budget is not kept. Entries a
// request holds are not counted: they are bounded by the requests in flight.
type runTable struct {
	mu       sync.Mutex
	entries  map[runKey]*runEntry
	idle     [2]list.List // [0] live, [1] terminal: *runEntry with refs == 0 and a cached state, most recent first
	bytes    int64        // sum of size over the entries in idle
	capacity int64        // byte budget of the idle states; 0 caches none
	// evicted, when set, is called with t.mu held for each entry leaving the idle LRU (its
	// state is valid and nobody holds it); it must not block.
	evicted func(*runEntry)
	// evictions counts the entries dropped to keep the budget.
	evictions uint64
	// metrics, when set, receives the accounting after each change (t.mu held).
	metrics *Metrics
}

type runEntry struct {
	key  runKey
	refs int           // guarded by runTable.mu
	elem *list.Element // guarded by runTable.mu; non-nil while in idle
	// list is the idle list elem is in; cost the size accounted for it (runTable.mu).
	list int
	cost int64

	mu sync.Mutex // the run's writer lock; guards the fields below
	// state is the reducer state after the stored event with logical sequence last; valid
	// is false until loaded and after any store error whose outcome is unknown.
	state events.ReducerState
	last  int64
	valid bool
	// size is the estimated heap of state (reducedCost, decodedCost).
	size int64
	// checkpointCount is the event count of the run's stored checkpoint (the events after it
	// are the ones a reader re-reduces); it decides when the next checkpoint is due.
	checkpointCount int
	// checkpointAt is when (Config.Now) this process last stored or queued a checkpoint of
	// the run; zero for a state loaded from the store.
	checkpointAt time.Time
}

func newRunTable(capacity int64) *runTable {
	return &runTable{entries: make(map[runKey]*runEntry), capacity: max(capacity, 0)}
}

// acquire returns the run's entry with its writer lock held.
func (t *runTable) acquire(k runKey) *runEntry {
	t.mu.Lock()
	e := t.entries[k]
	if e == nil {
		e = &runEntry{key: k}
		t.entries[k] = e
	}
	e.refs++
	if e.elem != nil {
		t.idle[e.list].Remove(e.elem)
		t.bytes -= e.cost
		e.elem = nil
		t.observe(0)
	}
	t.mu.Unlock()
	e.mu.Lock()
	return e
}

// release unlocks the entry; an idle entry keeps its state in the LRU (or is dropped when it
// has none, or one larger than the budget), and the LRU is trimmed to its byte budget.
func (t *runTable) release(e *runEntry) {
	valid, size, terminal := e.valid, e.size, e.state.Status().IsTerminal()
	e.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	e.refs--
	if e.refs > 0 {
		return
	}
	if !valid || size > t.capacity {
		delete(t.entries, e.key)
		if valid {
			t.evictions++
			t.observe(1)
			if t.evicted != nil {
				t.evicted(e)
			}
		}
		return
	}
	e.list, e.cost = 0, size
	if terminal {
		e.list = 1
	}
	e.elem = t.idle[e.list].PushFront(e)
	t.bytes += e.cost
	evicted := 0
	defer func() { t.observe(evicted) }()
	for t.bytes > t.capacity {
		l := &t.idle[1]
		if l.Len() == 0 {
			l = &t.idle[0]
		}
		old := l.Remove(l.Back()).(*runEntry)
		old.elem = nil
		t.bytes -= old.cost
		t.evictions++
		evicted++
		delete(t.entries, old.key)
		if t.evicted != nil {
			t.evicted(old)
		}
	}
}

// observe updates the metrics (t.mu held).
func (t *runTable) observe(evicted int) {
	if t.metrics == nil {
		return
	}
	t.metrics.stateCacheBytes.Set(float64(t.bytes))
	t.metrics.stateCacheRuns.Set(float64(t.idle[0].Len() + t.idle[1].Len()))
	if evicted > 0 {
		t.metrics.stateCacheEvictions.Add(float64(evicted))
	}
}

// cached returns the idle runs and their accounted bytes.
func (t *runTable) cached() (runs int, bytes int64, evictions uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.idle[0].Len() + t.idle[1].Len(), t.bytes, t.evictions
}
