package events

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// model pairs a persistent vector with the plain slice it must equal.
type model struct {
	v    vec[int]
	want []int
}

func (m model) check(t *testing.T, label string) {
	t.Helper()
	if m.v.Len() != len(m.want) {
		t.Fatalf("%s: Len = %d, want %d", label, m.v.Len(), len(m.want))
	}
	for i, w := range m.want {
		if got := m.v.Get(i); got != w {
			t.Fatalf("%s: Get(%d) = %d, want %d", label, i, got, w)
		}
	}
	if got := m.v.Slice(); !slices.Equal(got, m.want) && len(m.want) > 0 {
		t.Fatalf("%s: Slice differs", label)
	}
}

func TestVecAppendGetSet(t *testing.T) {
	for _, n := range []int{0, 1, 2, 31, 32, 33, 63, 64, 65, 1023, 1024, 1025, 1056, 1057, 32*32*32 + 40} {
		var m model
		for i := 0; i < n; i++ {
			m.v = m.v.Append(i)
			m.want = append(m.want, i)
		}
		m.check(t, "append")
		// Set every 7th element on a copy; the original must not change.
		s := m
		s.want = slices.Clone(m.want)
		for i := 0; i < n; i += 7 {
			s.v = s.v.Set(i, -i)
			s.want[i] = -i
		}
		s.check(t, "set")
		m.check(t, "original after set")
	}
}

// TestVecForks applies random operations to random earlier versions and checks every version
// against its model after each step: appends to an older version (a fork) must copy instead of
// overwriting a slot that a newer version already owns.
func TestVecForks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	versions := []model{{}}
	for step := 0; step < 4000; step++ {
		base := versions[len(versions)-1]
		if rng.IntN(4) == 0 {
			base = versions[rng.IntN(len(versions))]
		}
		next := model{v: base.v, want: slices.Clone(base.want)}
		if len(next.want) > 0 && rng.IntN(5) == 0 {
			i := rng.IntN(len(next.want))
			next.v = next.v.Set(i, step)
			next.want[i] = step
		} else {
			next.v = next.v.Append(step)
			next.want = append(next.want, step)
		}
		versions = append(versions, next)
		if step%500 == 0 {
			for i, m := range versions {
				m.check(t, "version "+strconv.Itoa(i))
			}
		}
	}
	for i, m := range versions {
		m.check(t, "version "+strconv.Itoa(i))
	}
}

// TestVecConcurrentAppend appends to the same version from many goroutines: exactly one may
// write in place, the others copy, and every result holds its own element.
func TestVecConcurrentAppend(t *testing.T) {
	var base vec[int]
	for i := 0; i < 40; i++ {
		base = base.Append(i)
	}
	const workers = 16
	results := make([]vec[int], workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := base
			for k := 0; k < 100; k++ {
				v = v.Append(1000*w + k)
			}
			results[w] = v
		}()
	}
	wg.Wait()
	for w, v := range results {
		if v.Len() != 140 {
			t.Fatalf("worker %d: Len = %d", w, v.Len())
		}
		for i := 0; i < 40; i++ {
			if v.Get(i) != i {
				t.Fatalf("worker %d: Get(%d) = %d", w, i, v.Get(i))
			}
		}
		for k := 0; k < 100; k++ {
			if got := v.Get(40 + k); got != 1000*w+k {
				t.Fatalf("worker %d: Get(%d) = %d, want %d", w, 40+k, got, 1000*w+k)
			}
		}
	}
}

func TestKeyIndexForks(t *testing.T) {
	x := newKeyIndex()
	key := func(e eventEntry) string { return e.id }
	rec := func(id string, pos int) { x.record(kindEvent, keyHash(id), pos) }
	var a, b vec[eventEntry]
	a = a.Append(eventEntry{id: "x"})
	rec("x", 0)
	// A fork of the empty vector stores "y" at position 0 and "x" at position 1.
	b = b.Append(eventEntry{id: "y"})
	rec("y", 0)
	b = b.Append(eventEntry{id: "x"})
	rec("x", 1)
	rec("x", 1) // recorded twice: kept once
	tests := []struct {
		v    vec[eventEntry]
		id   string
		want int
	}{
		{a, "x", 0}, {a, "y", -1}, {b, "x", 1}, {b, "y", 0}, {b, "z", -1}, {vec[eventEntry]{}, "x", -1},
	}
	for _, tc := range tests {
		if got := find(x, kindEvent, tc.id, keyHash(tc.id), tc.v, key); got != tc.want {
			t.Errorf("find(%q) = %d, want %d", tc.id, got, tc.want)
		}
	}
	if got := x.tables[kindEvent].n; got != 3 {
		t.Errorf("recorded positions = %d, want 3", got)
	}
	if got := find(x, kindMessage, "x", keyHash("x"), a, key); got != -1 {
		t.Errorf("key spaces are separate: got %d", got)
	}
}

// TestKeyIndexCollisions records many keys under one hash: lookups must still confirm each
// candidate against the vector.
func TestKeyIndexCollisions(t *testing.T) {
	x := newKeyIndex()
	key := func(e eventEntry) string { return e.id }
	var v vec[eventEntry]
	const h = uint32(12345)
	for i := 0; i < 200; i++ {
		v = v.Append(eventEntry{id: strconv.Itoa(i)})
		x.record(kindEvent, h, i)
		x.record(kindEvent, keyHash(strconv.Itoa(i)), i)
	}
	for i := 0; i < 200; i++ {
		if got := find(x, kindEvent, strconv.Itoa(i), h, v, key); got != i {
			t.Fatalf("colliding key %d found at %d", i, got)
		}
		if got := find(x, kindEvent, strconv.Itoa(i), keyHash(strconv.Itoa(i)), v, key); got != i {
			t.Fatalf("key %d found at %d", i, got)
		}
	}
	if got := find(x, kindEvent, "nope", h, v, key); got != -1 {
		t.Fatalf("absent key found at %d", got)
	}
}

// TestArenaForksAndConcurrency interns strings along a chain, from forks and from many
// goroutines sharing one base: every string reads back as interned and no version's bytes are
// overwritten by another's.
func TestArenaForksAndConcurrency(t *testing.T) {
	var base arena
	var kept []string
	for i := range 6000 { // several chunks, doubling up to arenaMaxChunk
		var v string
		base, v = base.intern(strings.Repeat(strconv.Itoa(i%10), 1+i%40))
		kept = append(kept, v)
	}
	check := func() {
		t.Helper()
		for i, v := range kept {
			if want := strings.Repeat(strconv.Itoa(i%10), 1+i%40); v != want {
				t.Fatalf("string %d reads %q, want %q", i, v, want)
			}
		}
	}
	if base.c == nil || len(base.c.buf) != arenaMaxChunk {
		t.Fatalf("chunks did not grow to %d", arenaMaxChunk)
	}
	// A fork appends at the same end as its base's next version: one of them starts a chunk.
	a, va := base.intern("first")
	b, vb := base.intern("second")
	if va != "first" || vb != "second" || a.c == b.c {
		t.Fatalf("fork: %q %q, shared chunk %v", va, vb, a.c == b.c)
	}
	if b.c != nil && len(b.c.buf) != arenaFirstChunk {
		t.Fatalf("a fork's chunk has %d bytes, want %d", len(b.c.buf), arenaFirstChunk)
	}
	// Long strings and empty ones are kept as they are.
	long := strings.Repeat("x", arenaMaxString+1)
	if c, v := base.intern(long); c != base || unsafe.StringData(v) != unsafe.StringData(long) {
		t.Fatal("a long string was copied")
	}
	if c, v := base.intern(""); c != base || v != "" {
		t.Fatal("an empty string took arena bytes")
	}
	const workers = 8
	results := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := base
			for k := range 500 {
				var v string
				a, v = a.intern(fmt.Sprintf("w%d-%d", w, k))
				results[w] = append(results[w], v)
			}
		}()
	}
	wg.Wait()
	for w, vs := range results {
		for k, v := range vs {
			if want := fmt.Sprintf("w%d-%d", w, k); v != want {
				t.Fatalf("worker %d string %d reads %q, want %q", w, k, v, want)
			}
		}
	}
	check()
}

// TestStateKeepsNoEventText checks that the strings a state takes from an event are copies in
// its arena, not views of the event's encoding (which would keep every applied event alive).
func TestStateKeepsNoEventText(t *testing.T) {
	lines := []string{
		`{"type":"run.started","protocolVersion":1,"eventId":"e1","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
		`{"type":"message.started","messageId":"m","role":"user","protocolVersion":1,"eventId":"e2","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":2,"sequence":2,"timestamp":"t"}`,
		`{"type":"message.part.delta","messageId":"m","part":{"type":"text","text":"hi"},"protocolVersion":1,"eventId":"e3","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":3,"sequence":3,"timestamp":"t"}`,
		`{"type":"tool.called","toolCall":{"toolCallId":"c","name":"n","input":{}},"protocolVersion":1,"eventId":"e4","runId":"r","sessionId":"s","phaseId":"p2","logicalSequence":4,"sequence":1,"timestamp":"t"}`,
		`{"type":"usage.updated","usage":{"inputTokens":1},"protocolVersion":1,"eventId":"e5","runId":"r","sessionId":"s","phaseId":"p2","logicalSequence":5,"sequence":2,"timestamp":"t"}`,
	}
	s := NewReducerState()
	var texts []string
	for _, l := range lines {
		e, err := ParseEvent([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, e.text)
		if s, err = Reduce(s, e); err != nil {
			t.Fatal(err)
		}
	}
	st := s.get()
	var held []string
	st.events.All(func(_ int, e eventEntry) bool { held = append(held, e.id); return true })
	st.eachMessage(func(_ int, m *stateMessage) {
		held = append(held, m.id)
		m.content.All(func(_ int, p string) bool { held = append(held, p); return true })
	})
	st.tools.calls.All(func(_ int, r *keyedRecord) bool { held = append(held, r.id, r.raw); return true })
	held = append(held, st.meta.runID.s, st.meta.sessionID.s, st.meta.lastPhaseID.s, st.meta.usage)
	for _, h := range held {
		p := uintptr(unsafe.Pointer(unsafe.StringData(h)))
		for _, x := range texts {
			if b := uintptr(unsafe.Pointer(unsafe.StringData(x))); p >= b && p < b+uintptr(len(x)) {
				t.Fatalf("the state holds %q as a view of event %s", h, x)
			}
		}
	}
}

// TestDecodedStateKeepsNoParsedText checks that a decoded state's fixed-vocabulary strings are
// the package's constants: a view of the parsed snapshot, however short, would keep the whole
// parsed copy of the snapshot alive (the other strings are copied into the arena by
// stateDecoder, which TestStateCostEstimates in relay measures).
func TestDecodedStateKeepsNoParsedText(t *testing.T) {
	s := NewReducerState()
	for _, l := range []string{
		`{"type":"run.started","protocolVersion":1,"eventId":"e1","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
		`{"type":"message.started","messageId":"m","role":"assistant","protocolVersion":1,"eventId":"e2","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":2,"sequence":2,"timestamp":"t"}`,
	} {
		e, err := ParseEvent([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		if s, err = Reduce(s, e); err != nil {
			t.Fatal(err)
		}
	}
	d, err := DecodeReducerState(s.AppendJSON(nil))
	if err != nil {
		t.Fatal(err)
	}
	st := d.get()
	if unsafe.StringData(string(st.status)) != unsafe.StringData(string(StatusRunning)) {
		t.Fatal("the decoded status is not the constant")
	}
	m := st.messages.Get(0)
	if unsafe.StringData(string(m.role)) != unsafe.StringData(string(RoleAssistant)) {
		t.Fatal("the decoded role is not the constant")
	}
	if st.arena.c == nil {
		t.Fatal("the decoded strings are not in the arena")
	}
}
