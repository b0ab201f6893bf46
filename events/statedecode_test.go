package events_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jsonvalue"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// parseLines parses NDJSON (blank lines skipped) into events.
func parseLines(t testing.TB, data []byte) []events.Event {
	t.Helper()
	var out []events.Event
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, err := events.ParseEvent(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		out = append(out, e)
	}
	return out
}

// TestReducerGolden reduces each testdata/reducer/*.ndjson stream event by event and compares
// the verdict (`ok` or `line N: <message>` for the first refusal) and the last good state,
// indented, with the .golden file.
func TestReducerGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "reducer", "*.ndjson"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".ndjson")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s := events.NewReducerState()
			verdict := "ok"
			for i, e := range parseLines(t, data) {
				next, err := events.Reduce(s, e)
				if err != nil {
					verdict = fmt.Sprintf("line %d: %s", i+1, err)
					break
				}
				s = next
			}
			body, err := s.MarshalIndent("  ")
			if err != nil {
				t.Fatal(err)
			}
			got := verdict + "\n" + string(body) + "\n"
			golden := strings.TrimSuffix(file, ".ndjson") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("state differs from %s:\n%s", golden, got)
			}
			// The golden state decodes and re-encodes to itself (§8.6).
			compact, _ := s.MarshalJSON()
			d, err := events.DecodeReducerState(compact)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := d.MarshalJSON(); !bytes.Equal(b, compact) {
				t.Fatal("golden state does not round-trip")
			}
		})
	}
}

// roundTrip marshals s, decodes it and checks that the decoded state marshals identically.
func roundTrip(t testing.TB, s events.ReducerState) events.ReducerState {
	t.Helper()
	b, _ := s.MarshalJSON()
	d, err := events.DecodeReducerState(b)
	if err != nil {
		t.Fatalf("DecodeReducerState: %v\n%s", err, b)
	}
	if b2, _ := d.MarshalJSON(); !bytes.Equal(b, b2) {
		t.Fatalf("marshal → decode → marshal differs:\n%s\n%s", b, b2)
	}
	return d
}

// outcome describes the result of applying es one by one, refusals included.
func outcome(s events.ReducerState, es []events.Event) string {
	var b strings.Builder
	for _, e := range es {
		next, err := events.Reduce(s, e)
		if err != nil {
			fmt.Fprintf(&b, "%s: %s\n", e.EventID(), err)
			continue
		}
		s = next
	}
	js, _ := s.MarshalJSON()
	b.Write(js)
	return b.String()
}

// TestDecodeContinuation is case 61: marshal → decode → marshal is equal, and continuing from
// the decoded state gives the same results as from the original, for every split point of
// synthetic runs and of streams with duplicates, refusals and forks.
func TestDecodeContinuation(t *testing.T) {
	streams := map[string][]events.Event{}
	for _, seed := range []int64{1, 2, 3} {
		data, err := synth.Bytes(120, seed, "")
		if err != nil {
			t.Fatal(err)
		}
		es := parseLines(t, data)
		// Mix in replays (no-ops), a reused ID and out-of-order events (refused).
		extra := []events.Event{es[0], es[len(es)/2], ev(t, 5, "run.started", "runId", es[0].RunID(), "eventId", es[4].EventID())}
		streams[fmt.Sprintf("synth-%d", seed)] = append(es[:len(es)-1:len(es)-1], append(extra, es[len(es)-1])...)
	}
	for _, file := range []string{"tools-interrupt", "phases", "refused-reused-id"} {
		data, err := os.ReadFile(filepath.Join("testdata", "reducer", file+".ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		streams[file] = parseLines(t, data)
	}
	for name, es := range streams {
		t.Run(name, func(t *testing.T) {
			s := events.NewReducerState()
			for k := 0; k <= len(es); k++ {
				d := roundTrip(t, s)
				if got, want := outcome(d, es[k:]), outcome(s, es[k:]); got != want {
					t.Fatalf("split at %d: decoded state continues differently:\n%s\n---\n%s", k, got, want)
				}
				if k < len(es) {
					if next, err := events.Reduce(s, es[k]); err == nil {
						s = next
					}
				}
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	b := []byte(strings.Replace(initialJSON, `"protocolVersion":null`, `"protocolVersion":9007199254740991`, 1))
	if _, err := events.DecodeReducerState(b); err != nil {
		t.Fatalf("largest safe protocolVersion: %v", err)
	}
	// Member order of the state object is not significant; neither is eventFingerprints order.
	s := mustReduce(t, events.NewReducerState(), start(t, 1), msgStarted(t, 2, "m"))
	o, _ := s.Value()
	fps, _ := o.Get("eventFingerprints")
	fo := fps.(*jsonvalue.Object)
	rev := jsonvalue.NewObject(2)
	for i := fo.Len() - 1; i >= 0; i-- {
		rev.Set(fo.Members()[i].Name, fo.Members()[i].Value)
	}
	shuffled := jsonvalue.NewObject(21)
	for i := o.Len() - 1; i >= 0; i-- {
		m := o.Members()[i]
		if m.Name == "eventFingerprints" {
			shuffled.Set(m.Name, rev)
		} else {
			shuffled.Set(m.Name, m.Value)
		}
	}
	text, _ := jsonvalue.Marshal(shuffled)
	d, err := events.DecodeReducerState(text)
	if err != nil {
		t.Fatal(err)
	}
	if marshal(t, d) != marshal(t, s) {
		t.Fatal("reordered state decodes differently")
	}
	// -0 sequences decode as 0.
	z := strings.Replace(initialJSON, `"lastSequence":0`, `"lastSequence":-0`, 1)
	if d, err := events.DecodeReducerState([]byte(z)); err != nil || marshal(t, d) != initialJSON {
		t.Fatalf("-0: %v", err)
	}
}

// validStateText is a state with every kind of entry, the base of the decode fault table.
func validStateText(t testing.TB) *jsonvalue.Object {
	s := mustReduce(t, events.NewReducerState(), start(t, 1), msgStarted(t, 2, "m"), delta(t, 3, "m", "x"),
		ev(t, 4, "tool.called", "toolCall", call("c-1")),
		ev(t, 5, "tool.progress", "toolCallId", "c-1", "content", []any{text("p")}),
		ev(t, 6, "tool.completed", "result", result("c-1")),
		ev(t, 7, "tool.failed", "error", toolError("c-1", "x")),
		ev(t, 8, "interrupt.required", "interrupt", interrupt("i-1")),
		ev(t, 9, "interrupt.resolved", "interruptId", "i-1", "decisions", []any{}),
		ev(t, 10, "interrupt.required", "interrupt", interrupt("i-2")),
		ev(t, 11, "usage.updated", "usage", obj("inputTokens", 1.0)),
		completed(t, 12, "limit", obj("kind", "steps")))
	o, err := s.Value()
	if err != nil {
		t.Fatal(err)
	}
	// interruptResolution is cleared by the second interrupt; put one back for the table.
	o.Set("interruptResolution", obj("interruptId", "i-0", "decisions", []any{}))
	return o
}

func TestDecodeErrors(t *testing.T) {
	type edit func(o *jsonvalue.Object)
	set := func(name string, v any) edit { return func(o *jsonvalue.Object) { o.Set(name, v) } }
	del := func(name string) edit { return func(o *jsonvalue.Object) { o.Delete(name) } }
	inner := func(name string, i int, member string, v any) edit {
		return func(o *jsonvalue.Object) {
			arr, _ := o.Get(name)
			e := arr.([]any)[i].(*jsonvalue.Object)
			if v == nil {
				e.Delete(member)
			} else {
				e.Set(member, v)
			}
		}
	}
	dup := func(name string) edit {
		return func(o *jsonvalue.Object) {
			arr, _ := o.Get(name)
			a := arr.([]any)
			o.Set(name, append(a, a[0]))
		}
	}
	fp := func(o *jsonvalue.Object) *jsonvalue.Object {
		v, _ := o.Get("eventFingerprints")
		return v.(*jsonvalue.Object)
	}
	invalid := func(m string) string { return "Agent reducer state." + m + " is invalid." }
	tests := []struct {
		name string
		edit edit
		want string
	}{
		{"protocolVersion string", set("protocolVersion", "1"), invalid("protocolVersion")},
		{"protocolVersion negative", set("protocolVersion", -1.0), invalid("protocolVersion")},
		{"protocolVersion fraction", set("protocolVersion", 1.5), invalid("protocolVersion")},
		{"protocolVersion unsafe", set("protocolVersion", 9007199254740992.0), invalid("protocolVersion")},
		{"runId number", set("runId", 1.0), invalid("runId")},
		{"sessionId bool", set("sessionId", true), invalid("sessionId")},
		{"status unknown", set("status", "paused"), invalid("status")},
		{"status null", set("status", nil), invalid("status")},
		{"messages object", set("messages", obj()), invalid("messages")},
		{"messages entry not object", set("messages", []any{"m"}), invalid("messages")},
		{"messages entry missing messageId", inner("messages", 0, "messageId", nil), invalid("messages")},
		{"messages entry role system", inner("messages", 0, "role", "system"), invalid("messages")},
		{"messages entry content object", inner("messages", 0, "content", obj()), invalid("messages")},
		{"messages entry extra member", inner("messages", 0, "extra", 1.0), invalid("messages")},
		{"messages duplicate ID", dup("messages"), invalid("messages")},
		{"messages part", inner("messages", 0, "content", []any{text("a"), obj("type", "sticker")}),
			"Agent reducer state.messages[0].content[1].type is unsupported."},
		{"messages part media", inner("messages", 0, "content", []any{obj("type", "image")}),
			"Agent reducer state.messages[0].content[0] must contain exactly one media source."},
		{"toolCalls not array", set("toolCalls", nil), invalid("toolCalls")},
		{"toolCalls entry", set("toolCalls", []any{5.0}), "Agent reducer state.toolCalls[0] must be an object."},
		{"toolCalls input", inner("toolCalls", 0, "input", []any{}), "Agent reducer state.toolCalls[0].input must be a JSON object."},
		{"toolCalls duplicate", dup("toolCalls"), invalid("toolCalls")},
		{"toolProgress entry extra", inner("toolProgress", 0, "x", 1.0), invalid("toolProgress")},
		{"toolProgress entry id", inner("toolProgress", 0, "toolCallId", 1.0), invalid("toolProgress")},
		{"toolProgress part", inner("toolProgress", 0, "content", []any{5.0}), "Agent reducer state.toolProgress[0].content[0] must be a content part."},
		{"toolProgress duplicate", dup("toolProgress"), invalid("toolProgress")},
		{"toolResults output", inner("toolResults", 0, "output", nil), "Agent reducer state.toolResults[0].output is not JSON-serializable."},
		{"toolResults isError", inner("toolResults", 0, "isError", "yes"), "Agent reducer state.toolResults[0].isError must be a boolean."},
		{"toolResults duplicate", dup("toolResults"), invalid("toolResults")},
		{"toolErrors error", inner("toolErrors", 0, "error", 5.0), "Agent reducer state.toolErrors[0].error must be a string."},
		{"toolErrors duplicate", dup("toolErrors"), invalid("toolErrors")},
		{"interrupt kind", set("interrupt", obj("kind", "approval")), "Agent reducer state.interrupt.kind is unsupported."},
		{"interrupt array", set("interrupt", []any{}), "Agent reducer state.interrupt must be an object."},
		{"interruptResolution id", set("interruptResolution", obj("interruptId", 1.0, "decisions", []any{})), invalid("interruptResolution")},
		{"interruptResolution decisions", set("interruptResolution", obj("interruptId", "i", "decisions", obj())), invalid("interruptResolution")},
		{"interruptResolution extra", set("interruptResolution", obj("interruptId", "i", "decisions", []any{}, "x", 1.0)), invalid("interruptResolution")},
		{"interruptResolution missing", set("interruptResolution", obj("interruptId", "i", "x", []any{})), invalid("interruptResolution")},
		{"usage negative", set("usage", obj("inputTokens", -1.0)), "Agent reducer state.usage.inputTokens must be non-negative."},
		{"usage string", set("usage", "x"), "Agent reducer state.usage must be an object."},
		{"limit kind", set("limit", obj("kind", 5.0)), "Agent reducer state.limit.kind must be a string."},
		{"finishReason number", set("finishReason", 1.0), invalid("finishReason")},
		{"errorCode array", set("errorCode", []any{}), invalid("errorCode")},
		{"cancellationReason object", set("cancellationReason", obj()), invalid("cancellationReason")},
		{"lastSequence string", set("lastSequence", "1"), invalid("lastSequence")},
		{"lastLogicalSequence null", set("lastLogicalSequence", nil), invalid("lastLogicalSequence")},
		{"lastPhaseId number", set("lastPhaseId", 0.0), invalid("lastPhaseId")},
		{"eventIds repeat", func(o *jsonvalue.Object) {
			ids, _ := o.Get("eventIds")
			a := ids.([]any)
			a[1] = a[0]
		}, invalid("eventIds")},
		{"eventIds number", set("eventIds", []any{1.0}), invalid("eventIds")},
		{"eventFingerprints not object", set("eventFingerprints", []any{}), invalid("eventFingerprints")},
		{"eventFingerprints uppercase", func(o *jsonvalue.Object) {
			f := fp(o)
			f.Set(f.Members()[0].Name, "sha256:"+strings.Repeat("A", 64))
		}, invalid("eventFingerprints")},
		{"eventFingerprints short", func(o *jsonvalue.Object) {
			f := fp(o)
			f.Set(f.Members()[0].Name, "sha256:abc")
		}, invalid("eventFingerprints")},
		{"eventFingerprints TypeScript text", func(o *jsonvalue.Object) {
			f := fp(o)
			f.Set(f.Members()[0].Name, `{"type":"run.started"}`)
		}, invalid("eventFingerprints")},
		{"eventIds not equal as a set: missing key", func(o *jsonvalue.Object) { fp(o).Delete("run-1:3") }, invalid("eventIds")},
		{"eventIds not equal as a set: other key", func(o *jsonvalue.Object) {
			f := fp(o)
			v, _ := f.Get("run-1:3")
			f.Delete("run-1:3")
			f.Set("run-1:99", v)
		}, invalid("eventIds")},
		{"eventIds not equal as a set: extra key", func(o *jsonvalue.Object) {
			fp(o).Set("run-1:99", "sha256:"+strings.Repeat("0", 64))
		}, invalid("eventIds")},
		{"set mismatch reported before a bad fingerprint value", func(o *jsonvalue.Object) {
			f := fp(o)
			f.Set(f.Members()[0].Name, "x")
			f.Set("run-1:99", "sha256:"+strings.Repeat("0", 64))
		}, invalid("eventIds")},
		{"unknown member", set("extra", nil), invalid("extra")},
		{"unknown member after a known fault", func(o *jsonvalue.Object) { o.Set("extra", nil); o.Set("eventIds", nil) }, invalid("eventIds")},
		{"first fault in §8.1 order", func(o *jsonvalue.Object) { o.Set("toolErrors", nil); o.Set("status", "x") }, invalid("status")},
	}
	for _, m := range []string{"protocolVersion", "runId", "sessionId", "status", "messages", "toolCalls", "toolProgress",
		"toolResults", "toolErrors", "interrupt", "interruptResolution", "usage", "limit", "finishReason", "errorCode",
		"cancellationReason", "lastSequence", "lastLogicalSequence", "lastPhaseId", "eventIds", "eventFingerprints"} {
		tests = append(tests, struct {
			name string
			edit edit
			want string
		}{"missing " + m, del(m), invalid(m)})
	}
	base := validStateText(t)
	baseText, _ := jsonvalue.Marshal(base)
	if _, err := events.DecodeReducerState(baseText); err != nil {
		t.Fatalf("base state: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := jsonvalue.Parse(baseText, "")
			o := v.(*jsonvalue.Object)
			tc.edit(o)
			text, err := jsonvalue.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			s, err := events.DecodeReducerState(text)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v\nwant    %s", err, tc.want)
			}
			if marshal(t, s) != initialJSON {
				t.Fatal("a failed decode must return the initial state")
			}
		})
	}
}

func TestDecodeTextAndKinds(t *testing.T) {
	tests := []struct {
		text string
		want string
		json bool // *JSONValidationError rather than *ValidationError
	}{
		{`[]`, "Agent reducer state must be a JSON object.", true},
		{`"x"`, "Agent reducer state must be a JSON object.", true},
		{`null`, "Agent reducer state must be a JSON object.", true},
		{``, "Agent reducer state is not valid JSON text at byte offset 0.", true},
		{`{`, "Agent reducer state is not valid JSON text at byte offset 1.", true},
		{`{"status":"idle","status":"idle"}`, `Agent reducer state contains duplicate member name "status".`, true},
		{`{"runId":"\ud800"}`, "Agent reducer state.runId contains an unpaired surrogate.", true},
		{`{}`, "Agent reducer state.protocolVersion is invalid.", false},
		{strings.Replace(initialJSON, `"status":"idle"`, `"status":"done"`, 1), "Agent reducer state.status is invalid.", false},
	}
	for _, tc := range tests {
		_, err := events.DecodeReducerState([]byte(tc.text))
		if err == nil || err.Error() != tc.want {
			t.Errorf("DecodeReducerState(%q) = %v, want %s", tc.text, err, tc.want)
			continue
		}
		var je *events.JSONValidationError
		var ve *events.ValidationError
		if tc.json && !errors.As(err, &je) || !tc.json && !errors.As(err, &ve) {
			t.Errorf("DecodeReducerState(%q): error type %T", tc.text, err)
		}
	}
}

// FuzzDecodeReducerState feeds arbitrary text to DecodeReducerState. It must never panic; a
// refusal is a *JSONValidationError or *ValidationError that wraps nothing; an accepted state
// re-encodes to text that decodes to the same encoding (§8.6), indents, converts to a value,
// answers every accessor (each copies within MaxJSONDepth, so a held value deeper than an
// event allows would fail here), nests at most MaxStateDepth levels, and takes a next event.
// Seeds: the initial state, states of a synthetic run, and deep states at and past the limit.
func FuzzDecodeReducerState(f *testing.F) {
	f.Add([]byte(initialJSON))
	data, err := synth.Bytes(40, 2, "fz")
	if err != nil {
		f.Fatal(err)
	}
	s := events.NewReducerState()
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		e, err := events.ParseEvent(line)
		if err != nil {
			f.Fatal(err)
		}
		if s, err = events.Reduce(s, e); err != nil {
			f.Fatal(err)
		}
		if i%7 == 0 {
			f.Add(s.AppendJSON(nil))
		}
	}
	deep := strings.Repeat("[", 126) + strings.Repeat("]", 126)
	f.Add([]byte(strings.Replace(initialJSON, `"interruptResolution":null`, `"interruptResolution":{"interruptId":"i","decisions":[`+deep+`]}`, 1)))
	f.Add([]byte(strings.Replace(initialJSON, `"interrupt":null`, `"interrupt":{"kind":"custom","interruptId":"i","prompt":"p","actions":[],"payload":[`+deep+`]}`, 1)))
	f.Add([]byte(strings.Replace(initialJSON, `"messages":[]`, `"messages":[{"messageId":"m","role":"user","content":[{"type":"custom","name":"n","data":[[`+deep+`]]}]}]`, 1)))
	next, err := events.ParseEvent([]byte(`{"type":"usage.updated","usage":{},"protocolVersion":1,"eventId":"fz:next","runId":"fz","sessionId":"s","phaseId":"p","logicalSequence":9007199254740991,"sequence":9007199254740991,"timestamp":"t"}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := events.DecodeReducerState(data)
		if err != nil {
			var jerr *events.JSONValidationError
			var verr *events.ValidationError
			if !errors.As(err, &jerr) && !errors.As(err, &verr) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if errors.Unwrap(err) != nil {
				t.Fatalf("error wraps another: %v", err)
			}
			return
		}
		enc := st.AppendJSON(nil)
		again, err := events.DecodeReducerState(enc)
		if err != nil {
			t.Fatalf("the encoding of an accepted state does not decode: %v\n%s", err, enc)
		}
		if b := again.AppendJSON(nil); !bytes.Equal(b, enc) {
			t.Fatalf("marshal → decode → marshal differs:\n%s\n%s", enc, b)
		}
		if _, err := st.MarshalIndent("  "); err != nil {
			t.Fatalf("MarshalIndent: %v", err)
		}
		if _, err := st.Value(); err != nil {
			t.Fatalf("Value: %v", err)
		}
		_, _ = st.Interrupt()
		_, _ = st.InterruptResolution()
		_, _ = st.Usage()
		_, _ = st.Limit()
		_, _, _, _, _ = st.Messages(), st.ToolCalls(), st.ToolProgress(), st.ToolResults(), st.ToolErrors()
		if n := nestingOf(t, enc); n > events.MaxStateDepth {
			t.Fatalf("accepted a state nesting %d levels", n)
		}
		_, _ = events.Reduce(st, next)
	})
}
