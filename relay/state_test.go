package relay_test

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/relay"
)

// The state cache is bounded by bytes (relay.md §3): many large runs streamed through a relay
// with a small budget keep its accounting under the budget after every batch, finished runs
// leave before running ones, and every run still answers exactly (an evicted run is reloaded
// from its checkpoint).
func TestStateCacheByteBudget(t *testing.T) {
	const budget = 5 << 19 // 2.5 MiB
	h := newHarness(t, func(c *relay.Config) { c.StateCache = budget })
	lines := func(run string, n int, seed int64) [][]byte {
		data, err := synth.BytesWith(n, seed, synth.Options{RunID: run})
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	}
	check := func(when string) {
		t.Helper()
		runs, used, _ := h.server.CachedStates()
		if used > budget {
			t.Fatalf("%s: %d cached runs account %d bytes, over the %d budget", when, runs, used, budget)
		}
	}
	// A run that stays open (its last event withheld): about 1 MB of state as accounted.
	open := lines("open", 2001, 1)
	for i := 0; i < 2000; i += 500 {
		h.postOK("open", open[i:i+500]...)
		check("open run")
	}
	// Ten finished runs of the same size stream through: each would fit alone; two finished
	// ones and the open one would not.
	for r := range 10 {
		run := "done-" + strconv.Itoa(r)
		evs := lines(run, 2000, int64(r+2))
		for i := 0; i < len(evs); i += 500 {
			h.postOK(run, evs[i:i+500]...)
			check(run)
		}
		if !h.server.StateCached(relay.LocalOrg, "open") {
			t.Fatalf("after %s the open run was evicted before a finished one", run)
		}
	}
	_, _, evictions := h.server.CachedStates()
	if evictions < 9 {
		t.Fatalf("%d evictions, want at least 9", evictions)
	}
	// Evicted runs answer from the store: a replay of a finished run's batch is all duplicates,
	// and the open run completes.
	if res := h.postOK("done-0", lines("done-0", 2000, 2)[1000:1500]...); res.Accepted != 0 || res.Duplicates != 500 {
		t.Fatalf("replay to an evicted run: %+v", res)
	}
	if res := h.postOK("open", open[2000]); res.Accepted != 1 || res.Status != "completed" {
		t.Fatalf("open run: %+v", res)
	}
	check("end")
	for _, run := range []string{"open", "done-0", "done-9"} {
		h.checkSnapshot(relay.LocalOrg, run)
	}
	_, _, body := h.do("GET", "/metrics", "", nil, nil)
	for _, series := range []string{"agentwire_state_cache_bytes ", "agentwire_state_cache_runs ", "agentwire_state_cache_evictions_total "} {
		if !bytes.Contains(body, []byte(series)) {
			t.Fatalf("metrics lack %s", series)
		}
	}
}

// The estimates the budget relies on are upper bounds of the heap a state really keeps, for
// a state reduced from events and one decoded from its snapshot, on both synthetic profiles
// and on a run made of large text deltas (where the state keeps nearly every byte it got).
func TestStateCostEstimates(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	textRun := func() [][]byte {
		text := strings.Repeat("lorem ipsum ", 400) // ~4.8 KB a delta
		lines := [][]byte{ev("text", 1, 1, "run.started", ""), ev("text", 2, 2, "message.started", `"messageId":"m","role":"assistant"`)}
		for i := int64(3); i < 2003; i++ {
			lines = append(lines, ev("text", i, i, "message.part.delta", `"messageId":"m","part":{"type":"text","text":"`+text+`"}`))
		}
		return lines
	}
	for _, p := range []synth.Profile{synth.ProfileDefault, synth.ProfileRich, "text"} {
		var lines [][]byte
		if p == "text" {
			lines = textRun()
		} else {
			data, err := synth.BytesWith(20000, 7, synth.Options{Profile: p})
			if err != nil {
				t.Fatal(err)
			}
			lines = bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		}
		before := heap()
		st := events.NewReducerState()
		estimate := relay.DecodedCost(0)
		for _, l := range lines {
			ev, err := events.ParseEvent(l)
			if err != nil {
				t.Fatal(err)
			}
			if st, err = events.Reduce(st, ev); err != nil {
				t.Fatal(err)
			}
			estimate += relay.ReducedCost(len(l))
		}
		reduced := int64(heap() - before)
		snap := st.AppendJSON(nil)
		runtime.KeepAlive(st)
		before = heap()
		decoded, err := events.DecodeReducerState(snap)
		if err != nil {
			t.Fatal(err)
		}
		decodedHeap := int64(heap() - before)
		runtime.KeepAlive(decoded)
		runtime.KeepAlive(lines)
		t.Logf("%s: reduced %d bytes (estimate %d), decoded %d (estimate %d)", p, reduced, estimate, decodedHeap, relay.DecodedCost(len(snap)))
		if reduced > estimate {
			t.Errorf("%s: a reduced state keeps %d bytes, more than its estimate %d", p, reduced, estimate)
		}
		if decodedHeap > relay.DecodedCost(len(snap)) {
			t.Errorf("%s: a decoded state keeps %d bytes, more than its estimate %d", p, decodedHeap, relay.DecodedCost(len(snap)))
		}
	}
}
