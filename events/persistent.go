package events

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// This file holds the persistent structures behind ReducerState (events.md §8.5): a persistent
// vector with an append-shared tail, and a shared, append-only key index whose answers are
// confirmed against the querying state's own vectors.
//
// Why these two: the reducer must cost amortised O(size of the event) per step along a chain
// of states, must leave every earlier state intact (forks, refusals, concurrent callers) and
// should make a fork cheap. A vector append normally writes in place into spare capacity of the
// tail it shares with its parent; the first writer of a slot claims it with an atomic
// compare-and-swap, and any other version that wants to append at the same length (a fork)
// copies the tail (at most 32 elements) instead. A slot is therefore written exactly once, before
// the version that contains it is published, and only versions descended from its writer ever
// read it. Keyed lookups (event ID, message ID, tool-call ID) go through an index shared by all
// states derived from one root; it maps a key to the positions at which any of those states
// stored it, and a state confirms a candidate by reading its own vector at that position. The
// index never answers for a state on its own, so a position recorded by a sibling fork is
// harmless.

const (
	vecBits  = 5
	vecWidth = 1 << vecBits
	vecMask  = vecWidth - 1
)

// vecNode is a node of the vector's trie: an internal node (kids) or a full leaf (items). Nodes
// are immutable once reachable from a published version.
type vecNode[T any] struct {
	kids  []*vecNode[T]
	items []T
}

// vecTail is the append-shared tail buffer. claimed counts the slots that some version has
// written; only the version that moves claimed from k to k+1 writes items[k].
type vecTail[T any] struct {
	claimed atomic.Int64
	items   [vecWidth]T
}

// vec is a persistent vector (a 32-way trie of full leaves plus a tail of 1–32 elements, as in
// Clojure's PersistentVector). The zero value is empty. Get is O(log₃₂ n); Append is amortised
// O(1) and usually writes in place; Set copies one tail or one trie path.
type vec[T any] struct {
	root  *vecNode[T]
	tail  *vecTail[T]
	n     int
	shift uint
}

// Len returns the number of elements.
func (v vec[T]) Len() int { return v.n }

// tailOff is the index of the first element held by the tail.
func (v vec[T]) tailOff() int {
	if v.n == 0 {
		return 0
	}
	return ((v.n - 1) >> vecBits) << vecBits
}

// Get returns element i (0 ≤ i < Len()).
func (v vec[T]) Get(i int) T {
	if off := v.tailOff(); i >= off {
		return v.tail.items[i-off]
	}
	node := v.root
	for level := v.shift; level > 0; level -= vecBits {
		node = node.kids[(i>>level)&vecMask]
	}
	return node.items[i&vecMask]
}

// Append returns v with x appended; v itself is unchanged.
func (v vec[T]) Append(x T) vec[T] {
	tlen := v.n - v.tailOff()
	if v.n > 0 && tlen < vecWidth {
		t := v.tail
		if t.claimed.CompareAndSwap(int64(tlen), int64(tlen+1)) {
			t.items[tlen] = x
			v.n++
			return v
		}
		// The slot belongs to another version (a fork): copy the tail.
		nt := &vecTail[T]{}
		copy(nt.items[:], t.items[:tlen])
		nt.items[tlen] = x
		nt.claimed.Store(int64(tlen + 1))
		v.tail = nt
		v.n++
		return v
	}
	if v.n > 0 {
		// The tail is full (all 32 slots claimed, so it never changes again): it becomes a leaf.
		v.root, v.shift = v.pushLeaf(&vecNode[T]{items: v.tail.items[:]})
	}
	nt := &vecTail[T]{}
	nt.items[0] = x
	nt.claimed.Store(1)
	v.tail = nt
	v.n++
	return v
}

// pushLeaf adds a full leaf holding elements [n−32, n) to the trie.
func (v vec[T]) pushLeaf(leaf *vecNode[T]) (*vecNode[T], uint) {
	if v.root == nil {
		return &vecNode[T]{kids: []*vecNode[T]{leaf}}, vecBits
	}
	// Root overflow: the trie of this height is full.
	if (v.n >> vecBits) > (1 << v.shift) {
		return &vecNode[T]{kids: []*vecNode[T]{v.root, newPath(v.shift, leaf)}}, v.shift + vecBits
	}
	return pushTail(v.n, v.shift, v.root, leaf), v.shift
}

func pushTail[T any](n int, level uint, parent *vecNode[T], leaf *vecNode[T]) *vecNode[T] {
	sub := ((n - 1) >> level) & vecMask
	ret := &vecNode[T]{kids: make([]*vecNode[T], max(len(parent.kids), sub+1), vecWidth)}
	copy(ret.kids, parent.kids)
	if level == vecBits {
		ret.kids[sub] = leaf
		return ret
	}
	if sub < len(parent.kids) && parent.kids[sub] != nil {
		ret.kids[sub] = pushTail(n, level-vecBits, parent.kids[sub], leaf)
	} else {
		ret.kids[sub] = newPath(level-vecBits, leaf)
	}
	return ret
}

func newPath[T any](level uint, leaf *vecNode[T]) *vecNode[T] {
	if level == 0 {
		return leaf
	}
	return &vecNode[T]{kids: []*vecNode[T]{newPath(level-vecBits, leaf)}}
}

// Set returns v with element i (0 ≤ i < Len()) replaced by x; v itself is unchanged.
func (v vec[T]) Set(i int, x T) vec[T] {
	off := v.tailOff()
	if i >= off {
		tlen := v.n - off
		nt := &vecTail[T]{}
		copy(nt.items[:], v.tail.items[:tlen])
		nt.items[i-off] = x
		nt.claimed.Store(int64(tlen))
		v.tail = nt
		return v
	}
	v.root = assoc(v.shift, v.root, i, x)
	return v
}

func assoc[T any](level uint, node *vecNode[T], i int, x T) *vecNode[T] {
	if level == 0 {
		ret := &vecNode[T]{items: slices.Clone(node.items)}
		ret.items[i&vecMask] = x
		return ret
	}
	ret := &vecNode[T]{kids: slices.Clone(node.kids)}
	sub := (i >> level) & vecMask
	ret.kids[sub] = assoc(level-vecBits, node.kids[sub], i, x)
	return ret
}

// All calls yield for each element in order until yield returns false.
func (v vec[T]) All(yield func(int, T) bool) {
	i := 0
	var walk func(level uint, node *vecNode[T]) bool
	walk = func(level uint, node *vecNode[T]) bool {
		if level == 0 {
			for _, x := range node.items {
				if !yield(i, x) {
					return false
				}
				i++
			}
			return true
		}
		for _, k := range node.kids {
			if !walk(level-vecBits, k) {
				return false
			}
		}
		return true
	}
	if v.root != nil && !walk(v.shift, v.root) {
		return
	}
	if v.n > 0 {
		for _, x := range v.tail.items[:v.n-v.tailOff()] {
			if !yield(i, x) {
				return
			}
			i++
		}
	}
}

// Slice returns the elements as a new slice.
func (v vec[T]) Slice() []T {
	out := make([]T, 0, v.n)
	v.All(func(_ int, x T) bool { out = append(out, x); return true })
	return out
}

// indexKind separates the key spaces of one shared index.
type indexKind uint8

const (
	kindEvent indexKind = iota
	kindMessage
	kindToolCall
	kindProgress
	kindResult
	kindError
	numKinds
)

// hashSeed keys the index hashes for the life of the process (hashes are never persisted).
var hashSeed = maphash.MakeSeed()

// keyHash hashes a key to the 32 bits the index keeps.
func keyHash(key string) uint32 { return uint32(maphash.String(hashSeed, key)) }

// hashSlot is one entry of a hashTable: a key hash and 1 + a position where some state holds a
// key with that hash (0 marks an empty slot). Eight bytes per slot keep the table small and
// cache-friendly; positions stay below 2³²−1 (no list holds four billion entries).
type hashSlot struct {
	hash uint32
	pos1 uint32
}

// hashTable is an open-addressing multimap from key hash to positions (linear probing, load at
// most 1/2). It holds no pointers, so the garbage collector never scans it, and it never
// deletes. A hash match is only a candidate: callers confirm it against their vector.
type hashTable struct {
	slots []hashSlot
	n     int
}

func (t *hashTable) insert(h uint32, pos int) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	want := hashSlot{hash: h, pos1: uint32(pos) + 1}
	mask := uint32(len(t.slots) - 1)
	i := h & mask
	for ; t.slots[i].pos1 != 0; i = (i + 1) & mask {
		if t.slots[i] == want {
			return
		}
	}
	t.slots[i] = want
	t.n++
}

func (t *hashTable) grow() {
	old := t.slots
	t.slots = make([]hashSlot, max(16, 2*len(old)))
	mask := uint32(len(t.slots) - 1)
	for _, sl := range old {
		if sl.pos1 == 0 {
			continue
		}
		i := sl.hash & mask
		for t.slots[i].pos1 != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = sl
	}
}

// keyIndex is the append-only key → positions index shared by every state derived from one
// root state (by Reduce) or one decoded state. It records, per key space, the positions at
// which any of those states stored a key (by hash); a state confirms a candidate by reading its
// own vector there, so hash collisions and positions recorded by sibling forks are harmless.
type keyIndex struct {
	mu     sync.Mutex
	tables [numKinds]hashTable
}

func newKeyIndex() *keyIndex { return &keyIndex{} }

// record notes that some state holds a key with hash h at position pos.
func (x *keyIndex) record(kind indexKind, h uint32, pos int) {
	x.mu.Lock()
	x.tables[kind].insert(h, pos)
	x.mu.Unlock()
}

// find returns the position of key (whose hash is h) in v, whose elements are keyed by keyOf,
// or −1.
func find[T any](x *keyIndex, kind indexKind, key string, h uint32, v vec[T], keyOf func(T) string) int {
	if x == nil || v.n == 0 {
		return -1
	}
	found := -1
	x.mu.Lock()
	if slots := x.tables[kind].slots; len(slots) > 0 {
		mask := uint32(len(slots) - 1)
		for i := h & mask; slots[i].pos1 != 0; i = (i + 1) & mask {
			if pos := int(slots[i].pos1) - 1; slots[i].hash == h && pos < v.n && keyOf(v.Get(pos)) == key {
				found = pos
				break
			}
		}
	}
	x.mu.Unlock()
	return found
}

// An arena holds the strings a state keeps from the events it applied (event IDs, content
// parts, records, …) as copies packed into shared chunks, so that a state does not keep every
// event's whole encoding alive through views of it: an applied event's encoding can die young,
// the state holds about a third of the bytes, and the state's strings lie together in memory
// (its snapshot reads them in order rather than from all over the heap). Chunks are
// append-shared exactly like a vector's tail: a state owns the bytes of its chunk up to its
// end; the first version to append at that end claims the following bytes with a
// compare-and-swap, and any other (a fork) starts a chunk of its own. Bytes are written once,
// before the state that holds them is published.
type arena struct {
	c   *arenaChunk
	end int // the bytes of c this state holds: c.buf[:end]
}

type arenaChunk struct {
	claimed atomic.Int64 // bytes of buf written by some version
	buf     []byte
}

const (
	arenaFirstChunk = 1 << 10  // a fork's or a new state's first chunk
	arenaMaxChunk   = 64 << 10 // chunks double up to this size
	// arenaMaxString is the longest string copied into a chunk. A longer one is kept as it
	// is (a view of its event, which it makes up most of anyway).
	arenaMaxString = 8 << 10
)

// intern returns a copy of s held by the arena, and the arena that holds it. A returned
// string is never written again.
func (a arena) intern(s string) (arena, string) {
	n := len(s)
	if n == 0 {
		return a, "" // not s: an empty view still points into (and keeps) what it views
	}
	if n > arenaMaxString {
		return a, s
	}
	size := arenaFirstChunk
	if c := a.c; c != nil {
		if a.end+n <= len(c.buf) {
			if c.claimed.CompareAndSwap(int64(a.end), int64(a.end+n)) {
				copy(c.buf[a.end:], s)
				v := unsafe.String(&c.buf[a.end], n)
				a.end += n
				return a, v
			}
			// Another version appended here first (a fork): start small.
		} else {
			size = min(2*len(c.buf), arenaMaxChunk)
		}
	}
	c := &arenaChunk{buf: make([]byte, max(size, n))}
	copy(c.buf, s)
	c.claimed.Store(int64(n))
	return arena{c: c, end: n}, unsafe.String(&c.buf[0], n)
}
