package relay

import (
	"container/list"
	"sync"
	"time"

	"github.com/agentwire/agentwire/events"
)

// runKey scopes a run by org (relay.md §1: tokens scope everything).
type runKey struct{ org, run string }

// runTable holds one entry per run being written, and a bounded LRU of idle runs whose
// reducer state stays cached. The entry's mutex serialises this process's writers of one run
// (they would only conflict in the store otherwise) and orders the fan-out of their frames.
type runTable struct {
	mu       sync.Mutex
	entries  map[runKey]*runEntry
	idle     list.List // *runEntry with refs == 0 and a cached state, most recent first
	capacity int
	// evicted, when set, is called with t.mu held for each entry leaving the idle LRU (its
	// state is valid and nobody holds it); it must not block.
	evicted func(*runEntry)
}

type runEntry struct {
	key  runKey
	refs int           // guarded by runTable.mu
	elem *list.Element // guarded by runTable.mu; non-nil while in idle

	mu sync.Mutex // the run's writer lock; guards the fields below
	// state is the reducer state after the stored event with logical sequence last; valid
	// is false until loaded and after any store error whose outcome is unknown.
	state events.ReducerState
	last  int64
	valid bool
	// checkpointCount is the event count of the run's stored checkpoint (the events after it
	// are the ones a reader re-reduces); it decides when the next checkpoint is due.
	checkpointCount int
	// checkpointAt is when (Config.Now) this process last stored or queued a checkpoint of
	// the run; zero for a state loaded from the store.
	checkpointAt time.Time
}

func newRunTable(capacity int) *runTable {
	return &runTable{entries: make(map[runKey]*runEntry), capacity: capacity}
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
		t.idle.Remove(e.elem)
		e.elem = nil
	}
	t.mu.Unlock()
	e.mu.Lock()
	return e
}

// release unlocks the entry; an idle entry keeps its state in the LRU (or is dropped when it
// has none), and the LRU is trimmed to capacity.
func (t *runTable) release(e *runEntry) {
	valid := e.valid
	e.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	e.refs--
	if e.refs > 0 {
		return
	}
	if !valid {
		delete(t.entries, e.key)
		return
	}
	e.elem = t.idle.PushFront(e)
	for t.idle.Len() > t.capacity {
		old := t.idle.Remove(t.idle.Back()).(*runEntry)
		old.elem = nil
		delete(t.entries, old.key)
		if t.evicted != nil {
			t.evicted(old)
		}
	}
}
