package store

import (
	"crypto/rand"
	"sync"
	"time"
)

// crockford is the ULID alphabet (Crockford's base32: no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ULIDSource mints ULIDs (26 characters of Crockford base32: a 48-bit millisecond timestamp, then
// 80 random bits) that strictly increase in the order minted, even within one millisecond or
// when the clock steps back: within the last minted millisecond (or before it) the random part of
// the previous ULID is incremented instead of drawn anew. That is the monotonic ULID of the ULID
// specification, and what makes a minted `gid` never repeat within a process (hive.md §1.7).
// Random bits come from crypto/rand, so two processes do not collide either.
//
// The zero value is ready to use; it is safe for concurrent use.
type ULIDSource struct {
	mu     sync.Mutex
	ms     uint64   // millisecond of the last ULID
	random [10]byte // random part of the last ULID
	used   bool
}

// New returns the next ULID for the instant t.
func (u *ULIDSource) New(t time.Time) string {
	ms := uint64(max(t.UnixMilli(), 0)) & (1<<48 - 1)
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.used || ms > u.ms {
		u.ms = ms
		if _, err := rand.Read(u.random[:]); err != nil {
			panic("store: crypto/rand: " + err.Error()) // crypto/rand does not fail on supported systems
		}
		u.used = true
	} else if !increment(&u.random) {
		// 2^80 ULIDs in one millisecond: move to the next one, still monotonic.
		u.ms++
	}
	return encodeULID(u.ms, &u.random)
}

// increment adds one to the big-endian r and reports false when it wrapped around to zero.
func increment(r *[10]byte) bool {
	for i := len(r) - 1; i >= 0; i-- {
		r[i]++
		if r[i] != 0 {
			return true
		}
	}
	return false
}

// encodeULID writes 48 bits of ms and 80 bits of random as 26 base32 characters, most
// significant first (the first character carries only 3 bits, so it is at most '7').
func encodeULID(ms uint64, r *[10]byte) string {
	var b [26]byte
	for i := 9; i >= 0; i-- { // 10 characters × 5 bits = 50 ≥ 48
		b[i] = crockford[ms&31]
		ms >>= 5
	}
	// The 80 random bits are exactly 16 characters.
	var hi uint64 = uint64(r[0])<<32 | uint64(r[1])<<24 | uint64(r[2])<<16 | uint64(r[3])<<8 | uint64(r[4])
	var lo uint64 = uint64(r[5])<<32 | uint64(r[6])<<24 | uint64(r[7])<<16 | uint64(r[8])<<8 | uint64(r[9])
	for i := 17; i >= 10; i-- {
		b[i] = crockford[hi&31]
		hi >>= 5
	}
	for i := 25; i >= 18; i-- {
		b[i] = crockford[lo&31]
		lo >>= 5
	}
	return string(b[:])
}

var defaultULIDs ULIDSource

// NewULID returns a ULID for t from the process-wide [ULIDSource]: the `gid` a backend mints
// when [MessageWrite].GID is empty (relay.md: "gid is a ULID (opaque to clients)").
func NewULID(t time.Time) string { return defaultULIDs.New(t) }
