package sqlite

// runCache is the writer's copy of the runs rows it has read or written, so that an append
// to a known run skips reading the run's row and its checkpoint's sequence: two of the four
// statements an append runs besides its inserts. Only the writer goroutine uses it, and the
// sqlite backend is the only writer of its file (it holds an exclusive lock), so the copy can
// only go stale through this writer's own transactions: what a group's ops write is pending
// until the group commits, and dropped with it when it does not.
type runCache struct {
	committed map[runRef]cachedRun
	pending   map[runRef]cachedRun
}

type runRef struct{ org, runID string }

// cachedRun is a run's row (id, created_at, event_count, last_seq) and the sequence its
// stored checkpoint covers.
type cachedRun struct {
	id, createdAt, count, last, snapSeq int64
}

// runCacheMax bounds the committed copy; when a commit would take it past the bound it
// starts over empty (the next append of each run reads its row again).
const runCacheMax = 4096

func newRunCache() runCache {
	return runCache{committed: make(map[runRef]cachedRun), pending: make(map[runRef]cachedRun)}
}

// get returns the run's row as the current transaction sees it.
func (c *runCache) get(org, runID string) (cachedRun, bool) {
	k := runRef{org, runID}
	if r, ok := c.pending[k]; ok {
		return r, true
	}
	r, ok := c.committed[k]
	return r, ok
}

// put records what a successful op of the current group wrote.
func (c *runCache) put(org, runID string, r cachedRun) { c.pending[runRef{org, runID}] = r }

// commit makes the group's writes the committed copy, after COMMIT succeeded.
func (c *runCache) commit() {
	if len(c.committed)+len(c.pending) > runCacheMax {
		clear(c.committed)
	}
	for k, r := range c.pending {
		c.committed[k] = r
	}
	clear(c.pending)
}

// discard drops the group's writes (rolled back); all also drops the committed copy, after a
// failure whose effect on the database is not known.
func (c *runCache) discard(all bool) {
	clear(c.pending)
	if all {
		clear(c.committed)
	}
}
