package events_test

import (
	"bytes"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jsonvalue"
)

// deepen returns copies of the event text v with a member "deep" added, in turn, to every
// object of the event, holding nested arrays that take that position to exactly the maximum
// nesting depth (jsonvalue.MaxDepth).
func deepen(t *testing.T, line []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for i := 0; ; i++ {
		v, err := jsonvalue.Parse(line, "event")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		var walk func(x any, depth int) bool
		walk = func(x any, depth int) bool {
			switch x := x.(type) {
			case *jsonvalue.Object:
				if n == i {
					var deep any = []any{}
					for d := depth + 2; d < jsonvalue.MaxDepth; d++ {
						deep = []any{deep}
					}
					x.Set("deep", deep)
					return true
				}
				n++
				for _, m := range x.Members() {
					if walk(m.Value, depth+1) {
						return true
					}
				}
			case []any:
				for _, e := range x {
					if walk(e, depth+1) {
						return true
					}
				}
			}
			return false
		}
		if !walk(v, 1) {
			return out
		}
		out = append(out, jsonvalue.AppendEncoded(nil, v))
	}
}

// A state whose events nest to the maximum depth still round-trips (events.md §8.6: "Marshal
// → decode → marshal MUST reproduce equal JSON"): the state embeds event values a few levels
// deeper than the events themselves, and DecodeReducerState allows for that.
func TestDecodeDeepestState(t *testing.T) {
	data, err := synth.Bytes(60, 3, "run-deep")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	tried, kept := 0, 0
	for i := range lines {
		for _, deep := range deepen(t, lines[i]) {
			ev, err := events.ParseEvent(deep)
			tried++
			if err != nil {
				continue // the contract refuses a member there (closed records)
			}
			st := events.NewReducerState()
			ok := true
			for j := range lines {
				e := ev
				if j != i {
					if e, err = events.ParseEvent(lines[j]); err != nil {
						t.Fatal(err)
					}
				}
				if st, err = events.Reduce(st, e); err != nil {
					ok = false // e.g. a deep member the reducer refuses to merge
					break
				}
			}
			if !ok {
				continue
			}
			kept++
			snap := st.AppendJSON(nil)
			back, err := events.DecodeReducerState(snap)
			if err != nil {
				t.Fatalf("line %d %s: decode of its state: %v", i+1, deep[:min(len(deep), 120)], err)
			}
			if again := back.AppendJSON(nil); !bytes.Equal(again, snap) {
				t.Fatalf("line %d: state does not round-trip", i+1)
			}
		}
	}
	if kept == 0 {
		t.Fatalf("no deep event was accepted (%d tried)", tried)
	}
	t.Logf("%d deep variants, %d accepted and reduced", tried, kept)
}
