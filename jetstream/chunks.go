package jetstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/store"
)

// Headers of a run's event chunk (relay.md §5.1.2: "chunk messages of consecutive events
// (headers: first and last logicalSequence, count)"). A chunk that carries one part of an event
// larger than a chunk also has hdrPart.
const (
	hdrFirst = "Aw-First"
	hdrLast  = "Aw-Last"
	hdrCount = "Aw-Count"
	// hdrPart is "i/n": the chunk is part i (from 1) of the n chunks of one event.
	hdrPart = "Aw-Part"
	// hdrSnap is "i/n" on a snapshot chunk, with hdrSnapSeq the logical sequence it covers.
	hdrSnap    = "Aw-Snap"
	hdrSnapSeq = "Aw-Snap-Seq"
)

// A chunk's payload is its events back to back, each encoded as
//
//	uvarint(logicalSequence) uvarint(len(eventId)) eventId uvarint(len(type)) type uvarint(len(data)) data
//
// An event whose encoding exceeds a chunk is the only event of as many chunks as it needs, its
// encoding cut into consecutive parts.

// appendEvent appends the encoding of e to b.
func appendEvent(b []byte, e store.Event) []byte {
	b = binary.AppendUvarint(b, uint64(e.LogicalSequence))
	b = binary.AppendUvarint(b, uint64(len(e.EventID)))
	b = append(b, e.EventID...)
	b = binary.AppendUvarint(b, uint64(len(e.Type)))
	b = append(b, e.Type...)
	b = binary.AppendUvarint(b, uint64(len(e.Data)))
	return append(b, e.Data...)
}

// encodedLen is len(appendEvent(nil, e)).
func encodedLen(e store.Event) int {
	n := uvarintLen(uint64(e.LogicalSequence))
	n += uvarintLen(uint64(len(e.EventID))) + len(e.EventID)
	n += uvarintLen(uint64(len(e.Type))) + len(e.Type)
	return n + uvarintLen(uint64(len(e.Data))) + len(e.Data)
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

var errCorrupt = errors.New("jetstream: corrupt chunk")

// decodeEvents decodes a chunk payload (or the joined parts of one event). The events alias b.
func decodeEvents(b []byte) ([]store.Event, error) {
	var out []store.Event
	for len(b) > 0 {
		var e store.Event
		seq, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errCorrupt
		}
		b = b[n:]
		e.LogicalSequence = int64(seq)
		var field [3][]byte
		for i := range field {
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, errCorrupt
			}
			field[i] = b[n : n+int(l)]
			b = b[n+int(l):]
		}
		e.EventID, e.Type, e.Data = string(field[0]), string(field[1]), field[2]
		out = append(out, e)
	}
	return out, nil
}

// chunkEvents packs events into chunk messages on subject of at most max payload bytes each.
func chunkEvents(subject string, events []store.Event, limit int) []*nats.Msg {
	var msgs []*nats.Msg
	var buf []byte
	var first, last int64
	count := 0
	flush := func() {
		if count == 0 {
			return
		}
		m := nats.NewMsg(subject)
		m.Data = buf
		m.Header.Set(hdrFirst, strconv.FormatInt(first, 10))
		m.Header.Set(hdrLast, strconv.FormatInt(last, 10))
		m.Header.Set(hdrCount, strconv.Itoa(count))
		msgs = append(msgs, m)
		buf, count = nil, 0
	}
	for _, e := range events {
		n := encodedLen(e)
		if n > limit {
			flush()
			enc := appendEvent(make([]byte, 0, n), e)
			parts := (n + limit - 1) / limit
			for i := range parts {
				m := nats.NewMsg(subject)
				m.Data = enc[i*limit : min((i+1)*limit, n)]
				seq := strconv.FormatInt(e.LogicalSequence, 10)
				m.Header.Set(hdrFirst, seq)
				m.Header.Set(hdrLast, seq)
				m.Header.Set(hdrCount, "1")
				m.Header.Set(hdrPart, strconv.Itoa(i+1)+"/"+strconv.Itoa(parts))
				msgs = append(msgs, m)
			}
			continue
		}
		if count > 0 && len(buf)+n > limit {
			flush()
		}
		if count == 0 {
			first = e.LogicalSequence
		}
		buf = appendEvent(buf, e)
		last = e.LogicalSequence
		count++
	}
	flush()
	return msgs
}

// chunkSnapshot cuts a checkpoint into chunk messages on subject.
func chunkSnapshot(subject string, snap []byte, covers int64, limit int) []*nats.Msg {
	parts := max((len(snap)+limit-1)/limit, 1)
	msgs := make([]*nats.Msg, parts)
	for i := range parts {
		m := nats.NewMsg(subject)
		m.Data = snap[i*limit : min((i+1)*limit, len(snap))]
		m.Header.Set(hdrSnap, strconv.Itoa(i+1)+"/"+strconv.Itoa(parts))
		m.Header.Set(hdrSnapSeq, strconv.FormatInt(covers, 10))
		msgs[i] = m
	}
	return msgs
}

// chunkMeta is what a chunk's headers say.
type chunkMeta struct {
	first, last int64
	count       int
	part, parts int // 0, 0 for a chunk of whole events
}

func parseChunkMeta(h nats.Header) (chunkMeta, error) {
	var c chunkMeta
	var err error
	if c.first, err = strconv.ParseInt(h.Get(hdrFirst), 10, 64); err != nil {
		return c, fmt.Errorf("%w: %s: %v", errCorrupt, hdrFirst, err)
	}
	if c.last, err = strconv.ParseInt(h.Get(hdrLast), 10, 64); err != nil {
		return c, fmt.Errorf("%w: %s: %v", errCorrupt, hdrLast, err)
	}
	if c.count, err = strconv.Atoi(h.Get(hdrCount)); err != nil {
		return c, fmt.Errorf("%w: %s: %v", errCorrupt, hdrCount, err)
	}
	if p := h.Get(hdrPart); p != "" {
		if c.part, c.parts, err = parsePart(p); err != nil {
			return c, err
		}
	}
	return c, nil
}

// parsePart parses "i/n" with 1 ≤ i ≤ n.
func parsePart(p string) (int, int, error) {
	var i, n int
	if _, err := fmt.Sscanf(p, "%d/%d", &i, &n); err != nil || i < 1 || i > n {
		return 0, 0, fmt.Errorf("%w: part %q", errCorrupt, p)
	}
	return i, n, nil
}
