package sqlite

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// The client-id filter: a Bloom filter of the S9 keys (sender_org, sender_instance,
// client_msg_id) of the stored bus messages.
//
// Before it stores a message the relay asks whether its client_msg_id was stored already
// (LookupClientMsg, a query on the reader pool), and the writer asks again inside the
// transaction. Almost every answer is "no", and a Bloom filter gives that answer without a
// query: it never says "no" for a key that was stored, so a "maybe" goes to the file as before
// and a "no" is exact.
//
//   - The writer adds a key before the transaction that stores it commits, so no reader can
//     find a stored key the filter does not hold. A key of a group that failed stays in it: one
//     more "maybe", never a wrong "no".
//   - A filter is filled by a scan of the stored keys, in the background; until it ends, every
//     lookup queries the file. The writer takes the filter (between two groups) before the
//     scan starts, so every key is either committed before the scan's snapshot or added by
//     the writer, and makes it current (again between two groups) once the scan ended, so no
//     key it adds falls between the two filters.
//   - Expired messages leave their bits set. When the keys added since a filter was built
//     reach its capacity, a larger one is built the same way and replaces it.
//
// Budget: 10 bits per key of capacity, at least 1 Mi keys (2 MiB, the size being a power of
// two) and at most maxFilterBytes, twice that while a larger one is being filled; past it the
// filter fills up and answers "maybe" more often (more queries, the same answers).
type clientFilter struct {
	words    []atomic.Uint64
	mask     uint64 // bit index mask (the size is a power of two)
	capacity int64  // keys it was sized for
	added    atomic.Int64
	ready    atomic.Bool // the scan of the stored keys ended
	seed     maphash.Seed
}

const (
	filterBitsPerKey = 10
	filterHashes     = 7
	minFilterKeys    = 1 << 20
	maxFilterBytes   = 32 << 20
)

func newClientFilter(keys int64) *clientFilter {
	keys = max(keys, minFilterKeys)
	nbits := uint64(keys) * filterBitsPerKey
	nbits = min(uint64(1)<<bits.Len64(nbits-1), maxFilterBytes*8) // a power of two
	return &clientFilter{words: make([]atomic.Uint64, nbits/64), mask: nbits - 1, capacity: keys, seed: maphash.MakeSeed()}
}

func (f *clientFilter) hash(org, instance, cmid string) (uint64, uint64) {
	var h maphash.Hash
	h.SetSeed(f.seed)
	h.WriteString(org)
	h.WriteByte(0)
	h.WriteString(instance)
	h.WriteByte(0)
	h.WriteString(cmid)
	a := h.Sum64()
	b := bits.RotateLeft64(a, 32)*0x9e3779b97f4a7c15 | 1 // odd: the probes cover the table
	return a, b
}

// add records a key.
func (f *clientFilter) add(org, instance, cmid string) {
	a, b := f.hash(org, instance, cmid)
	for i := range uint64(filterHashes) {
		bit := (a + i*b) & f.mask
		f.words[bit/64].Or(1 << (bit % 64))
	}
	f.added.Add(1)
}

// mayHold reports whether the key may have been added; false is exact.
func (f *clientFilter) mayHold(org, instance, cmid string) bool {
	a, b := f.hash(org, instance, cmid)
	for i := range uint64(filterHashes) {
		bit := (a + i*b) & f.mask
		if f.words[bit/64].Load()&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}

// clientFilters is the store's filter and the one being filled to replace it.
type clientFilters struct {
	cur, next atomic.Pointer[clientFilter]
	building  atomic.Bool
}

// add records a stored key in the current filter and in the one being filled (the writer).
func (c *clientFilters) add(org, instance, cmid string) {
	if f := c.cur.Load(); f != nil {
		f.add(org, instance, cmid)
	}
	if f := c.next.Load(); f != nil {
		f.add(org, instance, cmid)
	}
}

// absent reports that no message with this key was stored: true only when a ready filter
// says so.
func (c *clientFilters) absent(org, instance, cmid string) bool {
	f := c.cur.Load()
	return f != nil && f.ready.Load() && !f.mayHold(org, instance, cmid)
}

// full reports whether the current filter has taken as many keys as it was sized for.
func (c *clientFilters) full() bool {
	f := c.cur.Load()
	return f == nil || f.added.Load() >= f.capacity
}

// filterReq asks the writer to take the filter to fill (next), or to make the filled one
// current (swap). The writer does it between two groups (writer.next), so no key it adds can
// fall between two filters, and no group or commit count changes.
type filterReq struct {
	next *clientFilter
	swap bool
	done chan struct{}
}

// applyFilter carries out a filterReq (in the writer goroutine).
func (w *writer) applyFilter(r filterReq) {
	c := &w.s.clientIDs
	if r.swap {
		c.cur.Store(c.next.Load())
		c.next.Store(nil)
	} else {
		c.next.Store(r.next)
	}
	close(r.done)
}

// toWriter hands r to the writer and waits until it is carried out; false when the store is
// closing.
func (s *Store) toWriter(r filterReq) bool {
	select {
	case s.w.filters <- r:
	case <-s.bg.Done():
		return false
	}
	select {
	case <-r.done:
		return true
	case <-s.bg.Done():
		return false
	}
}

// rebuildClientFilter fills a new filter sized for the stored keys, in the background, and
// makes it the current one; one build at a time. The filter goes to the writer through an op
// before the scan starts.
func (s *Store) rebuildClientFilter() {
	if !s.clientIDs.building.CompareAndSwap(false, true) {
		return
	}
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		defer s.clientIDs.building.Store(false)
		ctx := s.bg
		var count int64
		if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM bus_messages`).Scan(&count); err != nil {
			return // closed: lookups keep querying the file
		}
		next := newClientFilter(2 * count)
		if !s.toWriter(filterReq{next: next, done: make(chan struct{})}) {
			return
		}
		// A failed scan leaves next in place until the next build replaces it: the writer adds
		// to one filter more, and lookups keep using the current one.
		rows, err := s.rdb.QueryContext(ctx, `SELECT sender_org, sender_instance, client_msg_id FROM bus_messages`)
		if err != nil {
			return
		}
		defer rows.Close()
		var org, inst, cmid string
		for rows.Next() {
			if err := rows.Scan(&org, &inst, &cmid); err != nil {
				return
			}
			next.add(org, inst, cmid)
		}
		if rows.Err() != nil {
			return
		}
		next.ready.Store(true)
		s.toWriter(filterReq{swap: true, done: make(chan struct{})})
	}()
}
