package runview_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/web/runview"
)

func richRun(t testing.TB, n int, seed int64, ending synth.Ending) [][]byte {
	t.Helper()
	data, err := synth.BytesWith(n, seed, synth.Options{Profile: synth.ProfileRich, Ending: ending})
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// reducePrefix is the Go reducer's snapshot of the first c lines.
func reducePrefix(t testing.TB, lines [][]byte, c int) []byte {
	t.Helper()
	s := events.NewReducerState()
	for _, l := range lines[:c] {
		e, err := events.ParseEvent(l)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = events.Reduce(s, e); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := s.MarshalJSON()
	return b
}

func marshal(s events.ReducerState) []byte { b, _ := s.MarshalJSON(); return b }

// TestApplyAndTimeTravel: a rich run applied in batches of several sizes gives, after every
// batch, the Go reducer's snapshot of the same prefix; At(n) for every n gives the snapshot of
// the events up to n, across checkpoint boundaries (K = 7).
func TestApplyAndTimeTravel(t *testing.T) {
	for _, ending := range []synth.Ending{synth.EndingCompleted, synth.EndingFailed, synth.EndingCancelled} {
		lines := richRun(t, 150, 4, ending)
		for _, batch := range []int{1, 3, 50, 150} {
			t.Run(fmt.Sprintf("%s-batch%d", ending, batch), func(t *testing.T) {
				s := runview.New(7)
				mir := mirror{}
				for i := 0; i < len(lines); i += batch {
					j := min(i+batch, len(lines))
					p := s.Apply(bytes.Join(lines[i:j], []byte("\n")))
					if p.Refusal != nil || p.Applied != j-i || len(p.Events) != j-i {
						t.Fatalf("batch %d-%d: %+v", i, j, p.Refusal)
					}
					if !bytes.Equal(marshal(s.State()), reducePrefix(t, lines, j)) {
						t.Fatalf("state after %d events differs from the Go reducer's", j)
					}
					checkPatch(t, p, s.State(), mir)
				}
				for n := 0; n <= len(lines); n++ {
					st, err := s.At(float64(n))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(marshal(st), reducePrefix(t, lines, n)) {
						t.Fatalf("At(%d) differs from reducing the first %d events", n, n)
					}
				}
				if st, _ := s.At(1e9); !bytes.Equal(marshal(st), marshal(s.State())) {
					t.Fatal("At beyond the end is the current state")
				}
			})
		}
	}
}

// mirror is what the page holds of a run's messages, kept up to date from patches alone as
// the page does: a message sent from part f > 0 extends the f parts it has, one sent from 0
// replaces it.
type mirror map[string][]string

// checkPatch decodes a patch's JSON, applies it to the mirror, and checks that the mirror
// then holds exactly the state's messages, part for part, and that every tool the patch
// carries matches the state's.
func checkPatch(t *testing.T, p *runview.Patch, st events.ReducerState, mir mirror) {
	t.Helper()
	var got struct {
		Applied  int
		Events   []map[string]any
		Messages []struct {
			Index     int
			MessageID string
			From      int
			Content   []json.RawMessage
		}
		Tools []struct {
			ToolCallID string
			Call       json.RawMessage
		}
		Head map[string]any
	}
	if err := json.Unmarshal(p.AppendJSON(nil), &got); err != nil {
		t.Fatal(err)
	}
	msgs := st.Messages()
	for _, m := range got.Messages {
		if m.Index >= len(msgs) || msgs[m.Index].MessageID != m.MessageID {
			t.Fatalf("patch message %+v does not match the state", m)
		}
		if have, ok := mir[m.MessageID]; m.From > 0 && (!ok || len(have) != m.From) {
			t.Fatalf("patch message %s from part %d; the page has %d", m.MessageID, m.From, len(have))
		}
		parts := mir[m.MessageID][:m.From:m.From]
		for _, c := range m.Content {
			parts = append(parts, canon(t, c))
		}
		mir[m.MessageID] = parts
	}
	if len(mir) != len(msgs) {
		t.Fatalf("the page has %d messages, the state %d", len(mir), len(msgs))
	}
	for _, m := range msgs {
		if len(mir[m.MessageID]) != len(m.Content) {
			t.Fatalf("message %s: the page has %d parts, the state %d", m.MessageID, len(mir[m.MessageID]), len(m.Content))
		}
		for j, c := range m.Content {
			if mir[m.MessageID][j] != canon(t, c.Raw) {
				t.Fatalf("message %s part %d differs", m.MessageID, j)
			}
		}
	}
	if len(got.Messages) != len(p.Messages) || len(got.Tools) != len(p.Tools) {
		t.Fatalf("patch lists %d/%d messages, %d/%d tools", len(got.Messages), len(p.Messages), len(got.Tools), len(p.Tools))
	}
	for _, tl := range got.Tools {
		c, ok := st.ToolCall(tl.ToolCallID)
		if !ok || canon(t, tl.Call) != canon(t, c.Raw) {
			t.Fatalf("patch tool %s does not match the state", tl.ToolCallID)
		}
	}
	if got.Head["status"] != string(st.Status()) || got.Head["eventCount"] != float64(st.EventCount()) {
		t.Fatalf("head %v", got.Head)
	}
	if len(got.Events) != got.Applied {
		t.Fatalf("%d timeline entries for %d applied events", len(got.Events), got.Applied)
	}
}

// canon is the canonical JSON text of a value (raw JSON text or a decoded value).
func canon(t *testing.T, v any) string {
	t.Helper()
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			t.Fatal(err)
		}
		v = x
	}
	b, err := jsonvalue.Canonicalize(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPatchFrom: a message that only grows by deltas is sent from the part count the page
// has; one that is started again or completed is sent whole; the mirror follows both.
func TestPatchFrom(t *testing.T) {
	ev := func(seq int, typ, payload string) string {
		return fmt.Sprintf(`{"type":%q%s,"protocolVersion":1,"eventId":"e%d","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":%d,"sequence":%d,"timestamp":"t"}`, typ, payload, seq, seq, seq)
	}
	delta := func(seq int, id, text string) string {
		return ev(seq, "message.part.delta", fmt.Sprintf(`,"messageId":%q,"part":{"type":"text","text":%q}`, id, text))
	}
	s := runview.New(0)
	mir := mirror{}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // "id:from" of each message sent
	}{
		{"start", []string{ev(1, "run.started", ""), ev(2, "message.started", `,"messageId":"a","role":"assistant"`), delta(3, "a", "x")}, "a:0"},
		{"deltas", []string{delta(4, "a", "y"), delta(5, "a", "z")}, "a:1"},
		{"two messages", []string{ev(6, "message.started", `,"messageId":"b","role":"user"`), delta(7, "a", "w"), delta(8, "b", "v")}, "b:0 a:3"},
		{"restarted", []string{delta(9, "a", "u"), ev(10, "message.started", `,"messageId":"a","role":"assistant"`), delta(11, "a", "t")}, "a:0"},
		{"completed", []string{delta(12, "b", "s"), ev(13, "message.completed", `,"messageId":"b","role":"user","content":[{"type":"text","text":"done"}]`)}, "b:0"},
		{"after completed", []string{delta(14, "b", "r")}, "b:1"},
		{"duplicate only", []string{delta(14, "b", "r")}, ""},
	} {
		p := s.Apply([]byte(strings.Join(tc.lines, "\n")))
		if p.Refusal != nil {
			t.Fatalf("%s: %+v", tc.name, p.Refusal)
		}
		var sent []string
		for _, m := range p.Messages {
			sent = append(sent, fmt.Sprintf("%s:%d", m.ID, m.From))
		}
		if strings.Join(sent, " ") != tc.want {
			t.Fatalf("%s: sent %q, want %q", tc.name, strings.Join(sent, " "), tc.want)
		}
		checkPatch(t, p, s.State(), mir)
	}
}

func TestViewMatchesState(t *testing.T) {
	lines := richRun(t, 200, 9, synth.EndingCompleted)
	s := runview.New(0)
	s.Apply(bytes.Join(lines, []byte("\n")))
	var v struct {
		Head     map[string]any
		Messages []struct{ MessageID string }
		Tools    []struct {
			ToolCallID string
			Result     json.RawMessage
			Error      json.RawMessage
		}
	}
	if err := json.Unmarshal(runview.View(nil, s.State()), &v); err != nil {
		t.Fatal(err)
	}
	var snap map[string]json.RawMessage
	if err := json.Unmarshal(marshal(s.State()), &snap); err != nil {
		t.Fatal(err)
	}
	var calls, results, errs []map[string]any
	_ = json.Unmarshal(snap["toolCalls"], &calls)
	_ = json.Unmarshal(snap["toolResults"], &results)
	_ = json.Unmarshal(snap["toolErrors"], &errs)
	if len(v.Messages) != s.State().MessageCount() || len(v.Tools) != len(calls) {
		t.Fatalf("view has %d messages, %d tools", len(v.Messages), len(v.Tools))
	}
	nr, ne := 0, 0
	for _, tl := range v.Tools {
		if string(tl.Result) != "null" {
			nr++
		}
		if string(tl.Error) != "null" {
			ne++
		}
	}
	if nr != len(results) || ne != len(errs) || nr == 0 || ne == 0 {
		t.Fatalf("view: %d results, %d errors; state %d, %d", nr, ne, len(results), len(errs))
	}
	for _, m := range []string{"status", "usage", "limit", "finishReason", "lastPhaseId", "lastLogicalSequence"} {
		var want any
		_ = json.Unmarshal(snap[m], &want)
		if fmt.Sprint(v.Head[m]) != fmt.Sprint(want) {
			t.Errorf("head %s = %v, want %v", m, v.Head[m], want)
		}
	}
}

// TestLoadSnapshot: a session loaded from a relay answer (snapshot plus meta) continues like
// the Go reducer, and time travel before the snapshot is refused.
func TestLoadSnapshot(t *testing.T) {
	lines := richRun(t, 120, 1, synth.EndingFailed)
	snap := reducePrefix(t, lines, 70)
	answer := append(snap[:len(snap)-1:len(snap)-1], `,"meta":{"createdAt":"x","updatedAt":"y","eventCount":70}}`...)
	for _, in := range [][]byte{snap, answer} {
		s := runview.New(5)
		if err := s.Load(in); err != nil {
			t.Fatal(err)
		}
		if s.BaseSequence() != 70 {
			t.Fatalf("base %v", s.BaseSequence())
		}
		p := s.Apply(bytes.Join(lines[60:], []byte("\n"))) // 10 duplicates, then 50 new events
		if p.Refusal != nil || p.Duplicates != 10 || p.Applied != 50 {
			t.Fatalf("applied %d, duplicates %d, refusal %+v", p.Applied, p.Duplicates, p.Refusal)
		}
		if !bytes.Equal(marshal(s.State()), reducePrefix(t, lines, 120)) {
			t.Fatal("continued state differs")
		}
		if st, err := s.At(90); err != nil || !bytes.Equal(marshal(st), reducePrefix(t, lines, 90)) {
			t.Fatalf("At(90): %v", err)
		}
		if _, err := s.At(69); !errors.Is(err, runview.ErrBeforeBase) {
			t.Fatalf("At before base: %v", err)
		}
	}
	s := runview.New(5)
	s.Apply(lines[0])
	for _, bad := range []string{`[]`, `{"meta":1}`, `{`} {
		if err := s.Load([]byte(bad)); err == nil {
			t.Fatalf("Load(%s) accepted", bad)
		}
	}
	if s.Len() != 1 {
		t.Fatal("a refused Load changed the session")
	}
	if err := s.Load([]byte(`[]`)); err.Error() != "Agent reducer state must be a JSON object." {
		t.Fatalf("message %q", err)
	}
}

func TestRefusals(t *testing.T) {
	lines := richRun(t, 60, 2, synth.EndingCompleted)
	for _, tc := range []struct {
		name, text string
		applied    int
		index      int
		line       int
		message    string
		kind       string
	}{
		{"not-json", string(lines[0]) + "\n\nnope", 1, 1, 3, "Agent event is not valid JSON text at byte offset 1.", "JSONValidationError"},
		{"must-start", string(lines[1]), 0, 0, 1, "Agent event stream must begin with run.started.", "ReduceError"},
		{"gap-in-phase", string(lines[0]) + "\n" + string(lines[2]), 1, 1, 2, "Message delta has no started message.", "ReduceError"},
		{"validation", string(lines[0]) + "\n" + `{"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","timestamp":"t","logicalSequence":2,"sequence":2,"type":"message.started","messageId":"m","role":"system"}`, 1, 1, 2, "Agent event role is unsupported.", "ValidationError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runview.New(0)
			p := s.Apply([]byte(tc.text))
			r := p.Refusal
			if p.Applied != tc.applied || r == nil || r.Index != tc.index || r.Line != tc.line || r.Message != tc.message || r.Kind != tc.kind {
				t.Fatalf("applied %d, refusal %+v", p.Applied, r)
			}
			if s.Len() != tc.applied {
				t.Fatal("a refused event was kept")
			}
		})
	}
}

// TestValidateLinesMatchesCLI: ValidateLines prints what `agentwire events validate` printed
// for the same file (testdata/mixed.validate.golden, written by the CLI; the CLI's own test
// checks it against the same file).
func TestValidateLinesMatchesCLI(t *testing.T) {
	data, err := os.ReadFile("testdata/mixed.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/mixed.validate.golden")
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, e := range runview.ValidateLines(data) {
		fmt.Fprintf(&got, "line %d: %s\n", e.Line, e.Message)
	}
	if got.String() != string(want) {
		t.Fatalf("got\n%s\nwant\n%s", got.String(), want)
	}
	var decoded []struct {
		Line    int
		Message string
	}
	if err := json.Unmarshal(runview.AppendLineErrors(nil, runview.ValidateLines(data)), &decoded); err != nil || len(decoded) != strings.Count(string(want), "\n") {
		t.Fatalf("JSON form: %v %d", err, len(decoded))
	}
	// ApplyFile skips the invalid lines and reduces the others in order.
	s := runview.New(0)
	p := s.ApplyFile(data)
	want2 := events.NewReducerState()
	runview.Lines(data, func(_ int, l []byte) bool {
		if e, err := events.ParseEvent(l); err == nil {
			if want2, err = events.Reduce(want2, e); err != nil {
				t.Fatal(err)
			}
		}
		return true
	})
	if p.Refusal != nil || p.Applied != want2.EventCount() || !bytes.Equal(marshal(s.State()), marshal(want2)) {
		t.Fatalf("ApplyFile: refusal %+v, applied %d, state differs", p.Refusal, p.Applied)
	}
}

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"", ""}, {"\n", ""}, {"a", "1:a"}, {"a\n", "1:a"}, {"a\n\nb", "1:a 3:b"},
		{" \t\n x \r\n", "2: x \r"}, {"\n\n\nz\n", "4:z"},
	} {
		var got []string
		runview.Lines([]byte(tc.in), func(n int, l []byte) bool { got = append(got, fmt.Sprintf("%d:%s", n, l)); return true })
		if strings.Join(got, " ") != tc.want {
			t.Errorf("Lines(%q) = %q, want %q", tc.in, strings.Join(got, " "), tc.want)
		}
	}
}
