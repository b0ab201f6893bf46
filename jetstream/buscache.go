package jetstream

import (
	"container/list"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/agentwire/agentwire/store"
)

// DefaultBusCacheBytes is the budget of the bus cache when Options.BusCacheBytes is 0.
const DefaultBusCacheBytes = 32 << 20

// centry is one cached bus stream entry: immutable once stored, so a cached copy is exact
// until the sweeper deletes it (after it expired, when no read shows it anyway).
type centry struct {
	e     store.StreamEntry
	pos   uint64 // its stream sequence
	bytes int64
	gid   string // its keys in the cache's maps ("" when none)
	cmid  string
}

// expires is when the entry goes; zero never.
func (ce *centry) expires() time.Time {
	switch {
	case ce.e.Message != nil:
		return ce.e.Message.ExpiresAt
	case ce.e.Publish != nil:
		return ce.e.Publish.ExpiresAt
	}
	return time.Time{}
}

func (ce *centry) visible(now time.Time) bool { return visibleAt(ce.expires(), now) }

// streamCache is what this instance knows of one bus stream: its counter as last read or
// written (the guard of its next write) and the entries with a seq in (covLo, covHi], every one
// the stream holds in that range.
type streamCache struct {
	key store.StreamKey
	el  *list.Element // in busCache.order; nil until listed

	ctrN   int64
	ctrSeq uint64
	ctrOK  bool

	ents         []*centry // by seq
	covLo, covHi int64
	covOK        bool
	bytes        int64
}

var (
	streamCacheBase = int64(unsafe.Sizeof(streamCache{})) + 64
	centryBase      = int64(unsafe.Sizeof(centry{})+unsafe.Sizeof(store.StoredMessage{})) + 3*64 // + two map entries and the slice slot
)

// entryBytes is what the cache accounts for an entry: its structures, its strings and data.
func entryBytes(e store.StreamEntry, gid, cmid string) int64 {
	n := centryBase + int64(len(gid)+len(cmid))
	str := func(ss ...string) {
		for _, s := range ss {
			n += int64(len(s))
		}
	}
	switch {
	case e.Message != nil:
		m := e.Message
		str(m.GID, m.Stream.Org, m.Stream.Name, m.Stream.Network, m.SenderOrg, m.SenderInstance, m.ClientMsgID, m.Type, m.ThreadID, m.ReplyTo, m.ToOrg, m.ToInstance)
		n += int64(len(m.Data))
	case e.Task != nil:
		t := e.Task
		str(t.QuestionGID, t.Stream.Org, t.Stream.Name, t.Vault)
		n += int64(len(t.Data)) + int64(unsafe.Sizeof(*t))
	case e.Publish != nil:
		p := e.Publish
		str(p.Stream.Org, p.Stream.Name, p.Stream.Network, p.SenderOrg, p.SenderInstance, p.ClientMsgID, p.To)
		n += int64(len(p.Data)) + int64(unsafe.Sizeof(*p))
	}
	return n
}

// busCache holds stream caches within a byte budget (Options.BusCacheBytes): the accounted
// bytes (stream states, their entries, the gid and client_msg_id maps) never exceed it. An
// entry is added only when it fits after evicting the least recently used streams' entries
// (then the streams); one stream's entries are limited to a quarter of the budget, dropping
// its oldest. Reads outside what the cache covers go to the stream leader.
type busCache struct {
	mu      sync.Mutex
	streams map[store.StreamKey]*streamCache
	order   list.List // of *streamCache, most recently used first
	gids    map[string]*centry
	cmids   map[string]*centry
	bytes   int64
	peak    int64
	limit   int64
}

func (c *busCache) init(limit int64) {
	c.streams = map[store.StreamKey]*streamCache{}
	c.gids = map[string]*centry{}
	c.cmids = map[string]*centry{}
	c.limit = limit
}

func (c *busCache) touch(sc *streamCache) {
	if sc.el == nil {
		sc.el = c.order.PushFront(sc)
	} else {
		c.order.MoveToFront(sc.el)
	}
}

func (c *busCache) account(n int64) {
	c.bytes += n
	c.peak = max(c.peak, c.bytes)
}

// stream returns the stream's cache, creating it when it fits (nil otherwise). c.mu held.
func (c *busCache) stream(k store.StreamKey, create bool) *streamCache {
	sc := c.streams[k]
	if sc == nil {
		if !create {
			return nil
		}
		n := streamCacheBase + int64(len(k.Org)+len(k.Name)+len(k.Network))
		if !c.makeRoom(n, nil) {
			return nil
		}
		sc = &streamCache{key: k, bytes: n}
		c.streams[k] = sc
		c.account(n)
	}
	c.touch(sc)
	return sc
}

// makeRoom evicts until n more bytes fit, sparing except; it reports whether they fit. c.mu
// must be held.
func (c *busCache) makeRoom(n int64, except *streamCache) bool {
	for el := c.order.Back(); c.bytes+n > c.limit && el != nil; {
		prev := el.Prev()
		if sc := el.Value.(*streamCache); sc != except {
			c.dropEntries(sc, len(sc.ents))
			if c.bytes+n > c.limit {
				c.order.Remove(el)
				sc.el = nil
				delete(c.streams, sc.key)
				c.bytes -= sc.bytes
			}
		}
		el = prev
	}
	if c.bytes+n > c.limit && except != nil {
		// The stream itself gives up its older entries.
		c.dropEntries(except, len(except.ents))
	}
	return c.bytes+n <= c.limit
}

// dropEntries drops the stream's n oldest entries; the coverage then starts after them.
func (c *busCache) dropEntries(sc *streamCache, n int) {
	if n == 0 {
		return
	}
	for _, ce := range sc.ents[:n] {
		c.forget(ce)
		sc.bytes -= ce.bytes
		c.bytes -= ce.bytes
	}
	if n == len(sc.ents) {
		sc.ents, sc.covOK = nil, false
		return
	}
	sc.covLo = sc.ents[n-1].e.Seq
	sc.ents = slices.Clone(sc.ents[n:])
}

func (c *busCache) forget(ce *centry) {
	if ce.gid != "" && c.gids[ce.gid] == ce {
		delete(c.gids, ce.gid)
	}
	if ce.cmid != "" && c.cmids[ce.cmid] == ce {
		delete(c.cmids, ce.cmid)
	}
}

// counter returns the stream's counter and its guard as last known.
func (c *busCache) counter(k store.StreamKey) (int64, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc := c.stream(k, false); sc != nil && sc.ctrOK {
		return sc.ctrN, sc.ctrSeq, true
	}
	return 0, 0, false
}

// setCounter records the stream's counter read or written at stream sequence seq.
func (c *busCache) setCounter(k store.StreamKey, n int64, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc := c.stream(k, true); sc != nil && (!sc.ctrOK || seq >= sc.ctrSeq) {
		sc.ctrN, sc.ctrSeq, sc.ctrOK = n, seq, true
	}
}

// forgetCounter drops the stream's counter after an unknown outcome.
func (c *busCache) forgetCounter(k store.StreamKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc := c.stream(k, false); sc != nil {
		sc.ctrOK = false
	}
}

// covered returns the cached entries with a seq in (after, upTo] when the cache covers that
// range, ok false otherwise; and, when it covers after, the stream sequence of the first
// entry to read past the coverage (0 otherwise).
func (c *busCache) covered(k store.StreamKey, after, upTo int64) (out []*centry, ok bool, resume uint64, resumeAfter int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sc := c.stream(k, false)
	if sc == nil || !sc.covOK || after < sc.covLo || after > sc.covHi {
		return nil, false, 0, 0
	}
	i, _ := slices.BinarySearchFunc(sc.ents, after, func(ce *centry, after int64) int {
		if ce.e.Seq <= after {
			return -1
		}
		return 1
	})
	for _, ce := range sc.ents[i:] {
		if ce.e.Seq > upTo {
			break
		}
		out = append(out, ce)
	}
	if sc.covHi >= upTo {
		return out, true, 0, 0
	}
	if n := len(sc.ents); n > 0 {
		return out, false, sc.ents[n-1].pos + 1, sc.covHi
	}
	return out, false, 0, 0
}

// add records entries read or written: every entry of the stream with a seq in (from, to],
// in order. They extend the coverage when it reaches from, and replace it otherwise. What does
// not fit the budget is not kept.
func (c *busCache) add(k store.StreamKey, from, to int64, ents []*centry) {
	if to <= from {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sc := c.stream(k, true)
	if sc == nil {
		return
	}
	if !sc.covOK || from > sc.covHi || from < sc.covLo {
		c.dropEntries(sc, len(sc.ents))
		sc.covLo, sc.covHi, sc.covOK = from, from, true
	}
	for _, ce := range ents {
		if ce.e.Seq <= sc.covHi {
			continue
		}
		if sc.bytes+ce.bytes > c.limit/4 {
			// The stream keeps its newer half.
			c.dropEntries(sc, max(len(sc.ents)/2, 1))
			if !sc.covOK {
				sc.covLo, sc.covHi, sc.covOK = ce.e.Seq-1, ce.e.Seq-1, true
			}
		}
		if !c.makeRoom(ce.bytes, sc) || !sc.covOK {
			// Not even this entry fits: the coverage ends before it.
			sc.covHi = min(sc.covHi, ce.e.Seq-1)
			return
		}
		sc.ents = append(sc.ents, ce)
		sc.bytes += ce.bytes
		c.account(ce.bytes)
		sc.covHi = ce.e.Seq
		if ce.gid != "" {
			c.gids[ce.gid] = ce
		}
		if ce.cmid != "" {
			c.cmids[ce.cmid] = ce
		}
	}
	sc.covHi = max(sc.covHi, to)
}

// gid returns the cached entry of a gid, nil when none.
func (c *busCache) gid(gid string) *centry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gids[gid]
}

// cmid returns the cached entry of a client_msg_id subject, nil when none.
func (c *busCache) cmid(subject string) *centry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmids[subject]
}

// deleted forgets an entry the sweeper deleted.
func (c *busCache) deleted(k store.StreamKey, seq int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sc := c.stream(k, false)
	if sc == nil {
		return
	}
	i, ok := slices.BinarySearchFunc(sc.ents, seq, func(ce *centry, seq int64) int {
		switch {
		case ce.e.Seq < seq:
			return -1
		case ce.e.Seq > seq:
			return 1
		}
		return 0
	})
	if !ok {
		return
	}
	ce := sc.ents[i]
	c.forget(ce)
	sc.bytes -= ce.bytes
	c.bytes -= ce.bytes
	sc.ents = slices.Delete(sc.ents, i, i+1)
}

// stats returns the accounted bytes, their peak and the budget.
func (c *busCache) stats() (bytes, peak, limit int64, streams int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.peak, c.limit, len(c.streams)
}

// lru maps strings to int64 values, holding at most its capacity; the least recently used
// key goes first. Not safe for concurrent use.
type lru struct {
	cap   int
	items map[string]*list.Element // of *lruItem
	order list.List                // most recent first
}

type lruItem struct {
	key string
	val int64
}

func newLRU(capacity int) *lru { return &lru{cap: capacity, items: map[string]*list.Element{}} }

func (l *lru) get(k string) (int64, bool) {
	el := l.items[k]
	if el == nil {
		return 0, false
	}
	l.order.MoveToFront(el)
	return el.Value.(*lruItem).val, true
}

// put sets k and reports whether another key was dropped to make room.
func (l *lru) put(k string, v int64) bool {
	if el := l.items[k]; el != nil {
		el.Value.(*lruItem).val = v
		l.order.MoveToFront(el)
		return false
	}
	l.items[k] = l.order.PushFront(&lruItem{key: k, val: v})
	if len(l.items) > l.cap {
		delete(l.items, l.order.Remove(l.order.Back()).(*lruItem).key)
		return true
	}
	return false
}

func (l *lru) len() int { return len(l.items) }
