package sqlite

import (
	"container/list"
	"sort"
	"sync"

	"github.com/agentwire/agentwire/store"
)

// The stream tail: the most recent messages of each bus stream, as the writer committed them.
//
// The relay follows a stream by reading it after its last seq at every change notification
// (ReadStream: a read transaction and four statements). Since this process is the only writer
// of the file (the lock), the writer sees every commit: after COMMIT it hands each stored
// message to the tail, in seq order, and a ReadStream after a recent cursor is answered from
// memory. Each cached stream is complete from its `from` cursor: every entry with a greater seq
// is in it. Anything the tail cannot vouch for drops what it would get wrong:
//
//   - a task event or a publish takes a seq of the stream but is not kept: the stream is
//     dropped, and starts again after it at its next message;
//   - a deleted message (an expiry sweep, whose `now` is the caller's, or a resent
//     client_msg_id whose expired original is dropped) drops every stream;
//   - only the relay's query shape is served (no thread, no viewer); others read the file.
//
// Visibility is the read's: a message whose expires_at has passed by the store's clock is
// skipped. The returned messages share their Data with the write that stored them (it is
// never modified after). Budget: tailEntries messages per stream and tailBytes in all (about
// the data plus tailEntryOverhead per message); past it the streams written least recently
// are dropped whole.
type streamTail struct {
	mu      sync.Mutex
	streams map[store.StreamKey]*list.Element // of *tailStream, most recently written first
	order   list.List
	bytes   int64
	budget  int64
}

// tailStream is one stream's cached entries: every message with seq > from, in seq order.
type tailStream struct {
	key     store.StreamKey
	from    int64
	entries []store.StoredMessage
	bytes   int64
}

const (
	tailEntries       = 1024
	tailBytes         = 8 << 20
	tailEntryOverhead = 256
)

func newStreamTail(budget int64) *streamTail {
	return &streamTail{streams: map[store.StreamKey]*list.Element{}, budget: budget}
}

func entryCost(m *store.StoredMessage) int64 {
	return int64(len(m.Data) + len(m.GID) + len(m.ClientMsgID) + len(m.ThreadID) + len(m.ReplyTo) + tailEntryOverhead)
}

// add records a committed message. A message that does not directly follow its stream's last
// cached seq restarts the stream after the seq before it (the writer adds a stream's messages
// in seq order, and every other seq was dropped by skip).
func (t *streamTail) add(m store.StoredMessage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cost := entryCost(&m)
	el := t.streams[m.Stream]
	var ts *tailStream
	if el != nil {
		ts = el.Value.(*tailStream)
		t.order.MoveToFront(el)
		if last := ts.from + int64(len(ts.entries)); m.Seq != last+1 {
			t.bytes -= ts.bytes
			ts.from, ts.entries, ts.bytes = m.Seq-1, nil, 0
		}
	} else {
		ts = &tailStream{key: m.Stream, from: m.Seq - 1}
		t.streams[m.Stream] = t.order.PushFront(ts)
	}
	ts.entries = append(ts.entries, m)
	ts.bytes += cost
	t.bytes += cost
	if len(ts.entries) > tailEntries {
		drop := len(ts.entries) - tailEntries/2 // keep the newer half, so trims are rare
		for i := range drop {
			c := entryCost(&ts.entries[i])
			ts.bytes -= c
			t.bytes -= c
		}
		ts.entries = append([]store.StoredMessage(nil), ts.entries[drop:]...)
		ts.from += int64(drop)
	}
	for t.bytes > t.budget && t.order.Len() > 0 {
		t.dropLocked(t.order.Back())
	}
}

// skip records that seq was taken by an entry the tail does not keep (a task event, a
// publish): the stream is dropped.
func (t *streamTail) skip(k store.StreamKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if el := t.streams[k]; el != nil {
		t.dropLocked(el)
	}
}

// reset drops every stream (a message was deleted).
func (t *streamTail) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.order.Len() > 0 {
		t.dropLocked(t.order.Back())
	}
}

func (t *streamTail) dropLocked(el *list.Element) {
	ts := t.order.Remove(el).(*tailStream)
	delete(t.streams, ts.key)
	t.bytes -= ts.bytes
}

// read answers ReadStream for k after q.After when the tail holds every entry after it: the
// visible messages with seq > q.After, at most q.Limit. ok is false when the file must be read.
func (t *streamTail) read(k store.StreamKey, q store.ReadQuery, now int64) (_ []store.StreamEntry, ok bool) {
	if q.ThreadID != "" || q.Viewer != nil {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	el := t.streams[k]
	if el == nil {
		return nil, false
	}
	ts := el.Value.(*tailStream)
	if q.After < ts.from {
		return nil, false
	}
	i := sort.Search(len(ts.entries), func(i int) bool { return ts.entries[i].Seq > q.After })
	out := make([]store.StreamEntry, 0, min(q.Limit, len(ts.entries)-i))
	size := 0
	for ; i < len(ts.entries) && len(out) < q.Limit; i++ {
		m := ts.entries[i]
		if !visible(nanos(m.ExpiresAt), now) {
			continue
		}
		if overBudget(q.MaxBytes, len(out), size, len(m.Data)) {
			break
		}
		size += len(m.Data)
		out = append(out, store.StreamEntry{Seq: m.Seq, Message: &m})
	}
	return out, true
}

// size reports the tail's accounted bytes and streams (tests).
func (t *streamTail) size() (bytes int64, streams int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes, len(t.streams)
}
