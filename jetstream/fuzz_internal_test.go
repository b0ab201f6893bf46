package jetstream

import (
	"bytes"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/store"
)

// FuzzStreamTail: every stream key's subject tail decodes back to the key, and no input makes
// parseTail panic.
func FuzzStreamTail(f *testing.F) {
	f.Add("org", "acme", "org:acme/vault:x/general", "-.swarm.c3dhcm0")
	f.Add("swarm", "", "swarm-1", "a.b")
	f.Fuzz(func(t *testing.T, network, org, name, raw string) {
		_, _ = parseTail(raw)
		if name == "" || network != store.NetworkOrg && network != store.NetworkSwarm || network == store.NetworkOrg && org == "" {
			return
		}
		if network == store.NetworkSwarm {
			org = ""
		}
		k := store.StreamKey{Network: network, Org: org, Name: name}
		got, err := parseTail(streamTail(k))
		if err != nil || got != k {
			t.Fatalf("parseTail(streamTail(%+v)) = %+v, %v", k, got, err)
		}
	})
}

// FuzzChunkDecode: decoding a stored chunk never panics, and chunking then decoding events
// gives them back.
func FuzzChunkDecode(f *testing.F) {
	f.Add([]byte{1, 2, 'e', '1', 1, 't', 2, '{', '}'}, "1/2", int64(3), "id", []byte(`{"a":1}`), 40)
	f.Fuzz(func(t *testing.T, raw []byte, part string, seq int64, id string, data []byte, limit int) {
		_, _ = decodeEvents(raw)
		h := nats.Header{}
		h.Set(hdrFirst, "1")
		h.Set(hdrLast, "2")
		h.Set(hdrCount, "2")
		h.Set(hdrPart, part)
		_, _ = parseChunkMeta(h)
		if seq < 1 || len(data) == 0 || limit < 1 || limit > 1<<16 {
			return
		}
		evs := []store.Event{{LogicalSequence: seq, EventID: id, Type: "t", Data: data}, {LogicalSequence: seq + 1, EventID: id + "x", Type: "u", Data: data}}
		var joined []byte
		var got []store.Event
		for _, m := range chunkEvents("s", evs, limit) {
			c, err := parseChunkMeta(m.Header)
			if err != nil {
				t.Fatal(err)
			}
			joined = append(joined, m.Data...)
			if c.parts > 0 && c.part < c.parts {
				continue
			}
			part, err := decodeEvents(joined)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, part...)
			joined = nil
		}
		if len(got) != 2 {
			t.Fatalf("%d events back", len(got))
		}
		for i := range got {
			if got[i].LogicalSequence != evs[i].LogicalSequence || got[i].EventID != evs[i].EventID || got[i].Type != evs[i].Type || !bytes.Equal(got[i].Data, evs[i].Data) {
				t.Fatalf("event %d: %+v, want %+v", i, got[i], evs[i])
			}
		}
	})
}

// FuzzIDSet: the fingerprint set agrees with a map.
func FuzzIDSet(f *testing.F) {
	f.Add([]byte{1, 2, 3, 1, 0, 255})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var s idSet
		model := map[uint64]bool{}
		for i, b := range ops {
			h := uint64(b)*0x9e3779b97f4a7c15 | 1
			if i%3 == 2 {
				if s.has(h) != model[h] {
					t.Fatalf("has(%x) = %v, want %v", h, s.has(h), model[h])
				}
				continue
			}
			s.grow(s.needs(1))
			s.add(h)
			model[h] = true
		}
		if s.n != len(model) || int64(len(s.t))*8 != s.bytes() {
			t.Fatalf("%d entries, model %d", s.n, len(model))
		}
	})
}
