package events_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
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

// freeJSONCases lists every place an event carries free JSON (events.md §4.3, §5.1, §6, §7):
// any-JSON members (`output`, custom-part `data`, action `input`, interrupt `payload`,
// `decisions`), record `input` objects, and unknown members (`metadata` here), which every
// payload, record, part, usage, limit, interrupt and action retains. `deep` is the payload of
// the event with the string "DEEP" where the deep value goes; `before` are the payloads of the
// events a run needs first. Every run starts with run.started and, unless `deep` is terminal,
// ends with run.completed.
var freeJSONCases = []struct {
	name   string
	before []string
	deep   string
}{
	{"tool.called toolCall.input", nil,
		`{"type":"tool.called","toolCall":{"toolCallId":"c","name":"weather","input":{"q":"DEEP"}}}`},
	{"tool.called toolCall.metadata", nil,
		`{"type":"tool.called","toolCall":{"toolCallId":"c","name":"weather","input":{},"metadata":"DEEP"}}`},
	{"tool.progress content[0].data", []string{callC},
		`{"type":"tool.progress","toolCallId":"c","content":[{"type":"custom","name":"n","data":"DEEP"}]}`},
	{"tool.completed result.output", []string{callC},
		`{"type":"tool.completed","result":{"toolCallId":"c","name":"weather","input":{},"output":"DEEP"}}`},
	{"tool.completed result.input", []string{callC},
		`{"type":"tool.completed","result":{"toolCallId":"c","name":"weather","input":{"q":"DEEP"},"output":null}}`},
	{"tool.failed error.input", []string{callC},
		`{"type":"tool.failed","error":{"toolCallId":"c","name":"weather","input":{"q":"DEEP"},"error":"boom"}}`},
	{"tool.failed error.metadata", []string{callC},
		`{"type":"tool.failed","error":{"toolCallId":"c","name":"weather","input":{},"error":"boom","metadata":"DEEP"}}`},
	{"message.started metadata", nil,
		`{"type":"message.started","messageId":"m","role":"assistant","metadata":"DEEP"}`},
	{"message.part.delta part.data", []string{startM},
		`{"type":"message.part.delta","messageId":"m","part":{"type":"custom","name":"n","data":"DEEP"}}`},
	{"message.part.delta part.metadata", []string{startM},
		`{"type":"message.part.delta","messageId":"m","part":{"type":"text","text":"x","metadata":"DEEP"}}`},
	{"message.part.delta part.toolCall.input", []string{startM},
		`{"type":"message.part.delta","messageId":"m","part":{"type":"tool-call","toolCall":{"toolCallId":"c","name":"weather","input":{"q":"DEEP"}}}}`},
	{"message.part.delta part.result.output", []string{startM},
		`{"type":"message.part.delta","messageId":"m","part":{"type":"tool-result","result":{"toolCallId":"c","name":"weather","input":{},"output":"DEEP"}}}`},
	{"message.completed content[0].data", nil,
		`{"type":"message.completed","messageId":"m","role":"assistant","content":[{"type":"custom","name":"n","data":"DEEP"}]}`},
	{"interrupt.required interrupt.payload", nil,
		`{"type":"interrupt.required","interrupt":{"kind":"custom","interruptId":"i","prompt":"p","actions":[],"payload":"DEEP"}}`},
	{"interrupt.required interrupt.metadata", nil,
		`{"type":"interrupt.required","interrupt":{"kind":"custom","interruptId":"i","prompt":"p","actions":[],"metadata":"DEEP"}}`},
	{"interrupt.required actions[0].input", nil,
		`{"type":"interrupt.required","interrupt":{"kind":"tool-approval","interruptId":"i","prompt":"p","actions":[{"id":"a","name":"weather","input":"DEEP"}]}}`},
	{"interrupt.required actions[0].metadata", nil,
		`{"type":"interrupt.required","interrupt":{"kind":"tool-approval","interruptId":"i","prompt":"p","actions":[{"id":"a","name":"weather","input":null,"metadata":"DEEP"}]}}`},
	{"interrupt.resolved decisions", []string{interruptI},
		`{"type":"interrupt.resolved","interruptId":"i","decisions":"DEEP"}`},
	{"usage.updated usage.metadata", nil,
		`{"type":"usage.updated","usage":{"inputTokens":1,"metadata":"DEEP"}}`},
	{"run.completed content[0].data", nil,
		`{"type":"run.completed","finishReason":"stop","content":[{"type":"custom","name":"n","data":"DEEP"}]}`},
	{"run.completed usage.metadata", nil,
		`{"type":"run.completed","finishReason":"stop","content":[],"usage":{"metadata":"DEEP"}}`},
	{"run.completed limit.metadata", nil,
		`{"type":"run.completed","finishReason":"stop","content":[],"limit":{"kind":"steps","metadata":"DEEP"}}`},
	{"run.failed limit.metadata", nil,
		`{"type":"run.failed","code":"x","message":"y","limit":{"kind":"steps","metadata":"DEEP"}}`},
	{"run.cancelled limit.metadata", nil,
		`{"type":"run.cancelled","limit":{"kind":"steps","metadata":"DEEP"}}`},
}

const (
	callC      = `{"type":"tool.called","toolCall":{"toolCallId":"c","name":"weather","input":{}}}`
	startM     = `{"type":"message.started","messageId":"m","role":"assistant"}`
	interruptI = `{"type":"interrupt.required","interrupt":{"kind":"custom","interruptId":"i","prompt":"p","actions":[]}}`
)

// withEnvelope turns a payload into event n of run "d" (one phase).
func withEnvelope(n int, payload string) string {
	return fmt.Sprintf(`{"protocolVersion":1,"eventId":"d:%d","runId":"d","sessionId":"s","phaseId":"p","timestamp":"t","logicalSequence":%d,"sequence":%d,`, n, n, n) + payload[1:]
}

// deepAt replaces the "DEEP" placeholder of an event with nested arrays whose innermost one is
// at depth `depth` of the event, and returns the event and the path of that innermost array.
func deepAt(t *testing.T, event string, depth int) (string, string) {
	t.Helper()
	return deepIn(t, event, "Agent event", depth)
}

// deepIn is deepAt for any document whose paths start at label.
func deepIn(t *testing.T, event, label string, depth int) (string, string) {
	t.Helper()
	v, err := jsonvalue.Parse([]byte(event), label)
	if err != nil {
		t.Fatal(err)
	}
	// The placeholder's path and the depth a container there has.
	var path string
	at := 0
	var walk func(x any, p string, d int)
	walk = func(x any, p string, d int) {
		switch x := x.(type) {
		case string:
			if x == "DEEP" {
				path, at = p, d
			}
		case *jsonvalue.Object:
			for _, m := range x.Members() {
				walk(m.Value, jsonvalue.MemberPath(p, m.Name), d+1)
			}
		case []any:
			for i, e := range x {
				walk(e, jsonvalue.IndexPath(p, i), d+1)
			}
		}
	}
	walk(v, label, 1)
	if at == 0 {
		t.Fatalf("no DEEP placeholder in %s", event)
	}
	h := depth - at + 1
	for range h - 1 {
		path += "[0]"
	}
	return strings.Replace(event, `"DEEP"`, strings.Repeat("[", h)+strings.Repeat("]", h), 1), path
}

// nestingOf returns the deepest container depth of JSON text (the top level is 1).
func nestingOf(t *testing.T, data []byte) int {
	t.Helper()
	v, err := jsonvalue.ParseDeep(data, "state", 4*jsonvalue.MaxDepth)
	if err != nil {
		t.Fatal(err)
	}
	var depth func(x any) int
	depth = func(x any) int {
		n := 0
		switch x := x.(type) {
		case *jsonvalue.Object:
			for _, m := range x.Members() {
				n = max(n, depth(m.Value))
			}
			return n + 1
		case []any:
			for _, e := range x {
				n = max(n, depth(e))
			}
			return n + 1
		}
		return 0
	}
	return depth(v)
}

// TestStateAtDepthLimit: every event member that carries free JSON may nest to the depth limit
// (128 levels: accepted; 129: the §3.3 fault at the innermost array), and a state holding it
// marshals, decodes to an equal state that reduces the next event identically, indents, and
// answers every accessor (events.md §8.6). The deepest of these states nests exactly
// MaxStateDepth levels: the allowance is what the state needs, no more.
func TestStateAtDepthLimit(t *testing.T) {
	deepest := 0
	for _, tc := range freeJSONCases {
		t.Run(tc.name, func(t *testing.T) {
			tooDeep, path := deepAt(t, tc.deep, events.MaxJSONDepth+1)
			_, err := events.ParseEvent([]byte(withEnvelope(9, tooDeep)))
			var jerr *events.JSONValidationError
			if want := path + " exceeds the maximum nesting depth of 128."; err == nil || err.Error() != want || !errors.As(err, &jerr) || jerr.Path != path {
				t.Fatalf("129 levels: got %v, want %s", err, want)
			}

			deep, _ := deepAt(t, tc.deep, events.MaxJSONDepth)
			lines := []string{withEnvelope(1, `{"type":"run.started"}`)}
			for _, b := range tc.before {
				lines = append(lines, withEnvelope(len(lines)+1, b))
			}
			lines = append(lines, withEnvelope(len(lines)+1, deep))
			if !strings.HasPrefix(tc.deep, `{"type":"run.`) {
				lines = append(lines, withEnvelope(len(lines)+1, `{"type":"run.completed","finishReason":"stop","content":[]}`))
			}
			st := events.NewReducerState()
			for i, l := range lines {
				ev, err := events.ParseEvent([]byte(l))
				if err != nil {
					t.Fatalf("event %d: %v", i+1, err)
				}
				// Every intermediate state decodes and answers the next event like the original.
				back, err := events.DecodeReducerState(st.AppendJSON(nil))
				if err != nil {
					t.Fatalf("state before event %d does not decode: %v", i+1, err)
				}
				if st, err = events.Reduce(st, ev); err != nil {
					t.Fatalf("event %d: %v", i+1, err)
				}
				if back, err = events.Reduce(back, ev); err != nil || !bytes.Equal(back.AppendJSON(nil), st.AppendJSON(nil)) {
					t.Fatalf("the decoded state answers event %d differently (%v)", i+1, err)
				}
			}
			snap := st.AppendJSON(nil)
			back, err := events.DecodeReducerState(snap)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if again := back.AppendJSON(nil); !bytes.Equal(again, snap) {
				t.Fatal("marshal → decode → marshal differs")
			}
			ind, err := st.MarshalIndent("  ")
			if err != nil {
				t.Fatalf("MarshalIndent: %v", err)
			}
			if got, err := events.DecodeReducerState(ind); err != nil || !bytes.Equal(got.AppendJSON(nil), snap) {
				t.Fatalf("the indented state does not decode to the state (%v)", err)
			}
			o, err := st.Value()
			if err != nil || !bytes.Equal(jsonvalue.AppendEncoded(nil, o), snap) {
				t.Fatalf("Value: %v", err)
			}
			// Accessors copy what they return: none may fail on a deep state.
			_, _ = back.Interrupt()
			_, _ = back.InterruptResolution()
			_, _ = back.Usage()
			_, _ = back.Limit()
			_ = back.Messages()
			_ = back.ToolCalls()
			_ = back.ToolProgress()
			_ = back.ToolResults()
			_ = back.ToolErrors()
			n := nestingOf(t, snap)
			if n > events.MaxStateDepth {
				t.Fatalf("state nests %d levels, MaxStateDepth is %d", n, events.MaxStateDepth)
			}
			deepest = max(deepest, n)
		})
	}
	if deepest != events.MaxStateDepth {
		t.Fatalf("the deepest state nests %d levels, MaxStateDepth is %d", deepest, events.MaxStateDepth)
	}
}

// TestDecodeStateDepth: DecodeReducerState accepts each member of a state holding event data
// as deep as an event can have carried it (limit: the depth of its innermost container in the
// state) and refuses one level more with the §3.3 fault at that container, so that every
// accessor and every further Reduce works on what it accepts.
func TestDecodeStateDepth(t *testing.T) {
	const tail = `"finishReason":null,"errorCode":null,"cancellationReason":null,` +
		`"lastSequence":2,"lastLogicalSequence":2,"lastPhaseId":"p","eventIds":["d:1","d:2"],` +
		`"eventFingerprints":{"d:1":"sha256:` + zeros64 + `","d:2":"sha256:` + zeros64 + `"}}`
	state := func(members string) string {
		o := map[string]string{
			"messages": `[]`, "toolCalls": `[]`, "toolProgress": `[]`, "toolResults": `[]`, "toolErrors": `[]`,
			"interrupt": `null`, "interruptResolution": `null`, "usage": `null`, "limit": `null`,
		}
		for m := range strings.SplitSeq(members, "\x00") {
			name, val, _ := strings.Cut(m, "=")
			o[name] = val
		}
		s := `{"protocolVersion":1,"runId":"d","sessionId":"s","status":"waiting",`
		for _, name := range []string{"messages", "toolCalls", "toolProgress", "toolResults", "toolErrors", "interrupt", "interruptResolution", "usage", "limit"} {
			s += `"` + name + `":` + o[name] + `,`
		}
		return s + tail
	}
	tests := []struct {
		name    string
		members string
		limit   int // the depth of the innermost container the state may hold there
	}{
		{"messages content part (message.part.delta)", `messages=[{"messageId":"m","role":"user","content":[{"type":"custom","name":"n","data":"DEEP"}]}]`, 131},
		{"messages content part member", `messages=[{"messageId":"m","role":"user","content":[{"type":"text","text":"x","metadata":"DEEP"}]}]`, 131},
		{"toolProgress content", `toolProgress=[{"toolCallId":"c","content":[{"type":"custom","name":"n","data":"DEEP"}]}]`, 130},
		{"toolCalls input", `toolCalls=[{"toolCallId":"c","name":"w","input":{"q":"DEEP"}}]`, 129},
		{"toolResults output", `toolResults=[{"toolCallId":"c","name":"w","input":{},"output":"DEEP"}]`, 129},
		{"toolErrors member", `toolErrors=[{"toolCallId":"c","name":"w","input":{},"error":"e","metadata":"DEEP"}]`, 129},
		{"interruptResolution decisions", `interruptResolution={"interruptId":"i","decisions":"DEEP"}`, 129},
		{"interrupt payload", `interrupt={"kind":"custom","interruptId":"i","prompt":"p","actions":[],"payload":"DEEP"}`, 128},
		{"interrupt action input", `interrupt={"kind":"custom","interruptId":"i","prompt":"p","actions":[{"id":"a","name":"w","input":"DEEP"}]}`, 128},
		{"usage member", `usage={"metadata":"DEEP"}`, 128},
		{"limit member", `limit={"kind":"steps","metadata":"DEEP"}`, 128},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := state(tc.members)
			ok, _ := deepIn(t, text, "Agent reducer state", tc.limit)
			st, err := events.DecodeReducerState([]byte(ok))
			if err != nil {
				t.Fatalf("at depth %d: %v", tc.limit, err)
			}
			if again, err := events.DecodeReducerState(st.AppendJSON(nil)); err != nil || !bytes.Equal(again.AppendJSON(nil), st.AppendJSON(nil)) {
				t.Fatalf("no round trip (%v)", err)
			}
			if _, err := st.MarshalIndent("  "); err != nil {
				t.Fatalf("MarshalIndent: %v", err)
			}
			_, _ = st.Interrupt()
			_, _ = st.InterruptResolution()
			_, _ = st.Usage()
			_, _ = st.Limit()
			_, _, _, _, _ = st.Messages(), st.ToolCalls(), st.ToolProgress(), st.ToolResults(), st.ToolErrors()

			bad, path := deepIn(t, text, "Agent reducer state", tc.limit+1)
			_, err = events.DecodeReducerState([]byte(bad))
			var jerr *events.JSONValidationError
			if want := path + " exceeds the maximum nesting depth of 128."; err == nil || err.Error() != want || !errors.As(err, &jerr) || jerr.Path != path {
				t.Fatalf("at depth %d: got %v, want %s", tc.limit+1, err, want)
			}
		})
	}
}

const zeros64 = "0000000000000000000000000000000000000000000000000000000000000000"
