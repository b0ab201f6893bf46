package jetstream

import (
	"container/list"
	"hash/maphash"
	"sync"
	"unsafe"
)

// DefaultRunCacheBytes is the budget of the run cache when Options.RunCacheBytes is 0.
const DefaultRunCacheBytes = 64 << 20

// runKey names a run.
type runKey struct{ org, run string }

// chunkRef locates one event chunk of a run: its stream sequence, its first and last logical
// sequences, and, for a part of an event larger than a chunk, its part number (0 otherwise).
type chunkRef struct {
	seq         uint64
	first, last int64
	part        int
}

// runState is what this instance knows of a run: its head (possibly stale: the guard of the
// next batch finds out), an index of a contiguous range of its chunks, and the fingerprints of
// its event IDs. All of it is a cache of committed messages within the run cache's budget;
// losing any part costs reads from the stream, never correctness.
type runState struct {
	key runKey
	wmu sync.Mutex // serializes this instance's writes to the run

	// Owned by runCache.mu.
	el    *list.Element // in runCache.order while the state is cached; nil outside it
	refs  int           // callers holding the state (get without put)
	bytes int64         // what the cache accounts for the state

	mu      sync.Mutex
	known   bool   // h and headSeq were read or written
	headSeq uint64 // stream sequence of h; 0 when the run does not exist
	h       head

	// ix lists every chunk of the run with a stream sequence in [ixFrom, ixTo], in order;
	// ixBefore is the last logical sequence of the run's chunks before ixFrom (0: none). ixTo <
	// ixFrom is an empty index.
	ix           []chunkRef
	ixFrom, ixTo uint64
	ixBefore     int64
	ids          idSet  // fingerprints of the run's event IDs stored up to idsUpTo
	idsUpTo      uint64 // valid only with idsOK
	idsOK        bool
}

// runStateBase is what the cache accounts for a run state besides its index and ID set.
var runStateBase = int64(unsafe.Sizeof(runState{})) + 64 // + the map entry

func (rs *runState) size() int64 {
	return runStateBase + int64(len(rs.key.org)+len(rs.key.run)) + int64(cap(rs.ix))*int64(unsafe.Sizeof(chunkRef{})) + rs.ids.bytes()
}

// dropIndex empties the chunk index. rs.mu must be held.
func (rs *runState) dropIndex() {
	rs.ix, rs.ixFrom, rs.ixTo, rs.ixBefore = nil, 1, 0, 0
}

// dropIDs forgets the ID set. rs.mu must be held.
func (rs *runState) dropIDs() {
	rs.ids, rs.idsUpTo, rs.idsOK = idSet{}, 0, false
}

// runCache holds run states within a byte budget (Options.RunCacheBytes): the accounted bytes
// (run states, their chunk indexes and event-ID sets) never exceed it. A state is created
// only when its base size fits, and an index or a set grows only after reserving its bytes,
// which evicts the least recently used states (or, for states in use, their indexes and sets)
// first; a structure that still does not fit is not built, and the operation reads the stream
// instead. One run's index and set together are limited to a quarter of the budget.
type runCache struct {
	mu    sync.Mutex
	runs  map[runKey]*runState
	order list.List // of *runState, most recently used first
	bytes int64
	peak  int64
	limit int64
	seed  maphash.Seed
}

func (c *runCache) init(limit int64) {
	c.runs = make(map[runKey]*runState)
	c.limit = limit
	c.seed = maphash.MakeSeed()
}

// perRun is the most bytes one run's index and set may take.
func (c *runCache) perRun() int64 { return c.limit / 4 }

// get returns the run's state, creating an empty one, and holds it: the caller must put it
// back. A state whose base size does not fit the budget is returned outside the cache.
func (c *runCache) get(org, run string) *runState {
	k := runKey{org, run}
	c.mu.Lock()
	defer c.mu.Unlock()
	rs := c.runs[k]
	if rs != nil {
		c.order.MoveToFront(rs.el)
		rs.refs++
		return rs
	}
	rs = &runState{key: k, ixFrom: 1}
	rs.refs = 1
	n := rs.size()
	if c.makeRoom(n, nil) {
		rs.bytes = n
		c.runs[k] = rs
		rs.el = c.order.PushFront(rs)
		c.add(n)
	}
	return rs
}

// put releases a state held by get.
func (c *runCache) put(rs *runState) {
	c.mu.Lock()
	rs.refs--
	c.mu.Unlock()
}

func (c *runCache) add(n int64) {
	c.bytes += n
	c.peak = max(c.peak, c.bytes)
}

// makeRoom evicts until n more bytes fit the budget, sparing except; it reports whether they
// fit. c.mu must be held. A state that another goroutine is using (its mu held) is skipped;
// an idle state that someone still holds loses its index and set but stays.
func (c *runCache) makeRoom(n int64, except *runState) bool {
	for el := c.order.Back(); c.bytes+n > c.limit && el != nil; {
		prev := el.Prev()
		if rs := el.Value.(*runState); rs != except && rs.mu.TryLock() {
			if rs.refs == 0 {
				c.order.Remove(el)
				rs.el = nil
				delete(c.runs, rs.key)
				c.bytes -= rs.bytes
				rs.bytes = 0
			} else {
				rs.dropIndex()
				rs.dropIDs()
				n2 := rs.size()
				c.bytes -= rs.bytes - n2
				rs.bytes = n2
			}
			rs.mu.Unlock()
		}
		el = prev
	}
	return c.bytes+n <= c.limit
}

// resize accounts the new size of rs after its index or set changed; growth must have been
// reserved (reserve) unless it shrank. rs.mu must be held.
func (c *runCache) resize(rs *runState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs.el == nil {
		return
	}
	n := rs.size()
	c.bytes += n - rs.bytes
	c.peak = max(c.peak, c.bytes)
	rs.bytes = n
}

// reserve reports whether rs may grow by n bytes: the run stays within its quarter and the
// cache within its budget (evicting others first). A state outside the cache keeps no index
// or set. rs.mu must be held; the caller grows rs and calls resize.
func (c *runCache) reserve(rs *runState, n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs.el == nil || rs.size()-runStateBase+n > c.perRun() {
		return false
	}
	if !c.makeRoom(n, rs) {
		return false
	}
	// Account the reservation now, so that concurrent reservations see it.
	c.add(n)
	rs.bytes += n
	return true
}

// stats returns the accounted bytes, their peak and the budget.
func (c *runCache) stats() (bytes, peak, limit int64, runs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.peak, c.limit, len(c.runs)
}

// fingerprint is the 64-bit hash of an event ID in the run cache's ID sets, never 0.
func (c *runCache) fingerprint(id string) uint64 {
	h := maphash.String(c.seed, id)
	if h == 0 {
		h = 1
	}
	return h
}

// idSet is an open-addressing set of nonzero fingerprints: 8 bytes a slot, at most three
// quarters full.
type idSet struct {
	t []uint64
	n int
}

func (s *idSet) bytes() int64 { return int64(cap(s.t)) * 8 }

func (s *idSet) has(h uint64) bool {
	if len(s.t) == 0 {
		return false
	}
	mask := uint64(len(s.t) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.t[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// needs returns the slots the set needs to hold n more fingerprints (its current size when
// they fit).
func (s *idSet) needs(n int) int {
	slots := max(len(s.t), 64)
	for (s.n+n)*4 > slots*3 {
		slots *= 2
	}
	return slots
}

// grow rehashes into slots slots.
func (s *idSet) grow(slots int) {
	if slots <= len(s.t) {
		return
	}
	old := s.t
	s.t, s.n = make([]uint64, slots), 0
	for _, h := range old {
		if h != 0 {
			s.add(h)
		}
	}
}

// add inserts h; the set must have room (needs).
func (s *idSet) add(h uint64) {
	mask := uint64(len(s.t) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.t[i] {
		case h:
			return
		case 0:
			s.t[i] = h
			s.n++
			return
		}
	}
}
