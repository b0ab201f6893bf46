package web_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/web/runview"
)

// requireTool finds a program the tests need: under CI=true its absence fails the test,
// elsewhere it skips with one line.
func requireTool(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (CI installs it: .ci/run)", names[0])
	}
	t.Skipf("%s not found: install it (apt-get install %s) to run this test", names[0], names[0])
	return ""
}

// call is one call of the reducer API: a function name and its arguments (int, float64,
// string, or []byte).
type call struct {
	fn   string
	args []any
}

func (c call) MarshalJSON() ([]byte, error) {
	out := []any{c.fn}
	for _, a := range c.args {
		if b, ok := a.([]byte); ok {
			out = append(out, map[string]string{"hex": hex.EncodeToString(b)})
			continue
		}
		out = append(out, a)
	}
	return json.Marshal(out)
}

// native makes a call on a runview.Host, with the result as the JS side returns it (a string,
// a number, or nil for null).
func native(h *runview.Host, c call) any {
	b := func(i int) []byte {
		switch x := c.args[i].(type) {
		case []byte:
			return x
		case string:
			return []byte(x)
		}
		panic("bytes argument")
	}
	id := func() int { return c.args[0].(int) }
	orNull := func(msg string, ok bool) any {
		if !ok {
			return nil
		}
		return msg
	}
	switch c.fn {
	case "validate":
		return orNull(h.Validate(b(0)))
	case "validateFile":
		return h.ValidateFile(b(0))
	case "newSession":
		return h.NewSession(c.args[0].(int))
	case "load":
		return orNull(h.Load(id(), b(1)))
	case "apply":
		return h.Apply(id(), b(1))
	case "applyFile":
		return h.ApplyFile(id(), b(1))
	case "view":
		return h.View(id())
	case "viewAt":
		return h.ViewAt(id(), c.args[1].(float64))
	case "snapshot":
		return h.Snapshot(id())
	case "snapshotAt":
		return h.SnapshotAt(id(), c.args[1].(float64))
	case "info":
		return h.Info(id())
	}
	panic("unknown call " + c.fn)
}

// runWasm runs the calls through the committed reducer.wasm under node.
func runWasm(t *testing.T, calls []call) []any {
	t.Helper()
	node := requireTool(t, "node", "nodejs")
	in, err := json.Marshal(map[string]any{
		"wasm": filepath.Join("assets", "reducer.wasm"), "exec": filepath.Join("assets", "wasm_exec.js"), "calls": calls,
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("testdata", "wasmhost.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, stderr.String(), out)
	}
	var res []any
	if err := json.Unmarshal(out, &res); err != nil {
		_ = os.WriteFile(filepath.Join(os.TempDir(), "wasmhost.out"), out, 0o644)
		t.Fatalf("node output: %v: %.300s", err, out)
	}
	if len(res) != len(calls) {
		t.Fatalf("%d results for %d calls", len(res), len(calls))
	}
	return res
}

// corpusCalls turns the events conformance corpus into reducer calls: every reduce case
// (from its initial state when it has one) event by event with the snapshot after each and
// the time-travel snapshot at each event's sequence; every decode-state case as a load; every
// parse-event case as a validate. want holds, per call index, the Go reducer's own answer
// (events package, not runview) where one exists.
func corpusCalls(t *testing.T) (calls []call, want map[int]string) {
	t.Helper()
	want = map[int]string{}
	files, _ := filepath.Glob(filepath.Join("..", "conformance", "events", "*.json"))
	nextID := 1
	session := func(k int) int {
		calls = append(calls, call{"newSession", []any{k}})
		nextID++
		return nextID - 1
	}
	cases := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".state.json") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		root, err := jsonvalue.ParseObject(data, f)
		if err != nil {
			t.Fatal(err)
		}
		list, _ := root.Get("cases")
		for _, cv := range list.([]any) {
			c := cv.(*jsonvalue.Object)
			op, _ := c.Get("op")
			text := func() []byte {
				if s, ok := c.Get("text"); ok {
					return []byte(s.(string))
				}
				h, _ := c.Get("textHex")
				b, err := hex.DecodeString(h.(string))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			switch op {
			case "parse-event":
				b := text()
				_, err := events.ParseEvent(b)
				if err != nil {
					want[len(calls)] = err.Error()
				}
				calls = append(calls, call{"validate", []any{b}})
			case "decode-state":
				id := session(2)
				calls = append(calls, call{"load", []any{id, text()}})
				calls = append(calls, call{"snapshot", []any{id}})
			case "reduce":
				id := session(2)
				st := events.NewReducerState()
				if init, ok := c.Get("initialState"); ok {
					enc := jsonvalue.AppendEncoded(nil, init)
					if st, err = events.DecodeReducerState(enc); err != nil {
						t.Fatal(err)
					}
					calls = append(calls, call{"load", []any{id, enc}})
				}
				evs, _ := c.Get("events")
				var seqs []float64
				for _, ev := range evs.([]any) {
					line := []byte(ev.(string))
					e, err := events.ParseEvent(line)
					if err != nil {
						t.Fatalf("%s: corpus event does not parse: %v", f, err)
					}
					if next, err := events.Reduce(st, e); err == nil {
						st = next
					}
					calls = append(calls, call{"apply", []any{id, line}})
					want[len(calls)] = string(st.AppendJSON(nil))
					calls = append(calls, call{"snapshot", []any{id}})
					seqs = append(seqs, float64(e.LogicalSequence()))
				}
				for _, n := range seqs {
					calls = append(calls, call{"snapshotAt", []any{id, n}})
				}
				calls = append(calls, call{"view", []any{id}}, call{"info", []any{id}})
			default:
				continue
			}
			cases++
		}
	}
	if cases < 400 {
		t.Fatalf("only %d corpus cases of the reduce, decode-state and parse-event ops", cases)
	}
	return calls, want
}

// richCalls streams rich runs (each ending) in batches, then asks for the snapshot and the view
// at every sequence, and validates a mixed transcript.
func richCalls(t *testing.T, start int) (calls []call, want map[int]string) {
	want = map[int]string{}
	id := start
	for _, ending := range []synth.Ending{synth.EndingCompleted, synth.EndingFailed, synth.EndingCancelled} {
		data, err := synth.BytesWith(160, 5, synth.Options{Profile: synth.ProfileRich, Ending: ending})
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		calls = append(calls, call{"newSession", []any{16}})
		st := events.NewReducerState()
		for i := 0; i < len(lines); i += 9 {
			batch := lines[i:min(i+9, len(lines))]
			for _, l := range batch {
				e, _ := events.ParseEvent(l)
				st, _ = events.Reduce(st, e)
			}
			calls = append(calls, call{"apply", []any{id, string(bytes.Join(batch, []byte("\n")))}})
			want[len(calls)] = string(st.AppendJSON(nil))
			calls = append(calls, call{"snapshot", []any{id}})
		}
		for n := 0; n <= len(lines); n++ {
			calls = append(calls, call{"snapshotAt", []any{id, float64(n)}}, call{"viewAt", []any{id, float64(n)}})
		}
		id++
	}
	mixed, err := os.ReadFile(filepath.Join("runview", "testdata", "mixed.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	calls = append(calls, call{"validateFile", []any{mixed}}, call{"newSession", []any{0}}, call{"applyFile", []any{id, mixed}}, call{"view", []any{id}})
	calls = append(calls, call{"apply", []any{999, "x"}}, call{"load", []any{999, "{}"}}, call{"snapshotAt", []any{id, -1.0}})
	return calls, want
}

// TestWasmMatchesGo runs the whole events conformance corpus and rich runs through the
// committed WebAssembly build under node and natively: every result (snapshots after every
// event, time-travel snapshots and views at every sequence, patches, validation messages,
// decode refusals) is byte-identical, and every snapshot equals the events package's own
// marshalled state.
func TestWasmMatchesGo(t *testing.T) {
	calls, want := corpusCalls(t)
	sessions := 0
	for _, c := range calls {
		if c.fn == "newSession" {
			sessions++
		}
	}
	more, want2 := richCalls(t, sessions+1)
	for i, w := range want2 {
		want[len(calls)+i] = w
	}
	calls = append(calls, more...)

	got := runWasm(t, calls)
	h := runview.NewHost()
	mismatches := 0
	for i, c := range calls {
		n := native(h, c)
		g := got[i]
		if gf, ok := g.(float64); ok { // JSON numbers come back as float64
			g = int(gf)
		}
		if fmt.Sprint(g) != fmt.Sprint(n) || (g == nil) != (n == nil) {
			mismatches++
			if mismatches <= 5 {
				t.Errorf("call %d %s: wasm %.200v, Go %.200v", i, c.fn, g, n)
			}
		}
		if w, ok := want[i]; ok && fmt.Sprint(g) != w {
			t.Errorf("call %d %s: wasm %.200v, events package %.200v", i, c.fn, g, w)
		}
	}
	if mismatches > 0 {
		t.Fatalf("%d of %d calls differ", mismatches, len(calls))
	}
	t.Logf("%d calls byte-identical between the WebAssembly build and Go", len(calls))
}
