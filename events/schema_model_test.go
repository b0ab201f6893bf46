package events

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"github.com/agentwire/agentwire/internal/schematest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// corpusDir is the events conformance corpus (conformance/events/README.md).
const corpusDir = "../conformance/events"

// modelURL is where the tests register the model with the schema compiler.
const modelURL = "https://agentwire.dev/schemas/events.model.json"

// notExpressible lists the corpus refusals the schema cannot express, with the reason; the test
// checks that the schema really accepts each of them, so the list stays exact.
var notExpressible = map[string]string{
	// §8.6: eventIds equal as a set to the keys of eventFingerprints.
	"state-eventIds-missing-fingerprint-key":   "eventIds equal as a set to the eventFingerprints keys",
	"state-eventIds-without-fingerprint-entry": "eventIds equal as a set to the eventFingerprints keys",
}

type modelSchemas struct{ event, state *jsonschema.Schema }

func compileModel(t testing.TB) modelSchemas {
	t.Helper()
	doc := WireSchema()
	withDialect := jsonvalue.ObjectOf("$schema", "https://json-schema.org/draft/2020-12/schema")
	for _, m := range doc.Members() {
		withDialect.Set(m.Name, m.Value)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(modelURL, santhoshValue(t, withDialect)); err != nil {
		t.Fatal(err)
	}
	ev, err := c.Compile(modelURL)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Compile(modelURL + "#/$defs/AgentReducerState")
	if err != nil {
		t.Fatal(err)
	}
	return modelSchemas{ev, st}
}

// santhoshValue converts a value of the jsonvalue model to the schema library's value form.
var santhoshValue = schematest.Value

// TestWireSchemaCorpus replays the events corpus against the model: documents the validator
// accepts are valid under the schema; refusals of strictly parsed documents are refused by it,
// except the listed ones the schema cannot express.
func TestWireSchemaCorpus(t *testing.T) {
	s := compileModel(t)
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus under %s: %v", corpusDir, err)
	}
	seenNotExpressible := map[string]bool{}
	var accepted, refused, skipped int
	for _, file := range files {
		if strings.HasSuffix(file, ".state.json") {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		root, err := jsonvalue.ParseObject(raw, file)
		if err != nil {
			t.Fatal(err)
		}
		cases, _ := root.Get("cases")
		for _, cv := range cases.([]any) {
			c := cv.(*jsonvalue.Object)
			name := caseMember[string](c, "name")
			op := caseMember[string](c, "op")
			exp := caseMember[*jsonvalue.Object](c, "expect")
			check := func(sch *jsonschema.Schema, label string, doc []byte, wantValid bool) {
				t.Helper()
				v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
				if err != nil {
					t.Fatalf("%s %s: %v", name, label, err)
				}
				verr := sch.Validate(v)
				switch {
				case wantValid && verr != nil:
					t.Errorf("%s (%s): the validator accepts it, the schema refuses it: %v", name, label, verr)
				case wantValid:
					accepted++
				case verr == nil:
					t.Errorf("%s (%s): the validator refuses it, the schema accepts it", name, label)
				default:
					refused++
				}
			}
			switch op {
			case "parse-event", "decode-state":
				sch := s.event
				if op == "decode-state" {
					sch = s.state
				}
				text := caseText(t, c)
				msg, errMsg := exp.Get("error")
				// A state nests deeper than an event (MaxStateDepth).
				limit := jsonvalue.MaxDepth
				if op == "decode-state" {
					limit = MaxStateDepth
				}
				if _, err := jsonvalue.ParseDeep(text, "doc", limit); err != nil {
					if !errMsg {
						t.Errorf("%s: valid case does not parse strictly: %v", name, err)
					}
					skipped++ // a strict-JSON fault (§3.4): not the schema's business
					continue
				}
				if m, _ := msg.(string); strings.HasSuffix(m, jsonvalue.SuffixTooDeep) {
					skipped++ // a value nested deeper than its event allowed (§3.3): likewise
					continue
				}
				if reason, ok := notExpressible[name]; ok {
					seenNotExpressible[name] = true
					if !errMsg {
						t.Errorf("%s: listed as a refusal (%s) but the corpus accepts it", name, reason)
					}
					check(sch, "not expressible: "+reason, text, true)
					continue
				}
				check(sch, op, text, !errMsg)
			case "reduce":
				for i, ev := range caseMember[[]any](c, "events") {
					check(s.event, fmt.Sprintf("events[%d]", i), []byte(ev.(string)), true)
				}
				for _, k := range []string{"initialState"} {
					if st, ok := c.Get(k); ok {
						check(s.state, k, encoded(t, st), true)
					}
				}
				for _, k := range []string{"state", "stateBefore"} {
					if st, ok := exp.Get(k); ok {
						check(s.state, "expect."+k, encoded(t, st), true)
					}
				}
				if st, ok := exp.Get("stateText"); ok {
					check(s.state, "expect.stateText", []byte(st.(string)), true)
				}
			}
		}
	}
	for name := range notExpressible {
		if !seenNotExpressible[name] {
			t.Errorf("notExpressible lists %s, which is not a corpus case", name)
		}
	}
	if accepted < 300 || refused < 150 {
		t.Errorf("only %d accepted and %d refused documents checked", accepted, refused)
	}
	t.Logf("%d documents accepted, %d refused, %d strict-JSON faults skipped", accepted, refused, skipped)
}

// TestWireSchemaExampleRun checks the example run and its snapshot.
func TestWireSchemaExampleRun(t *testing.T) {
	s := compileModel(t)
	lines, err := os.ReadFile(filepath.Join(corpusDir, "example-run.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range bytes.Lines(lines) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		n++
		if err := s.event.Validate(santhoshValue(t, mustParse(t, line))); err != nil {
			t.Errorf("example-run line %d: %v", n, err)
		}
	}
	st, err := os.ReadFile(filepath.Join(corpusDir, "example-run.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.state.Validate(santhoshValue(t, mustParse(t, st))); err != nil {
		t.Errorf("example-run.state.json: %v", err)
	}
	if err := s.state.Validate(santhoshValue(t, mustParse(t, mustMarshal(t, NewReducerState())))); err != nil {
		t.Errorf("initial state: %v", err)
	}
}

// TestWireSchemaRefusals pins schema verdicts on hand-written documents, one per rule the
// schema expresses.
func TestWireSchemaRefusals(t *testing.T) {
	s := compileModel(t)
	env := `"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","timestamp":"t","logicalSequence":1,"sequence":1`
	ev := func(payload string) string { return "{" + env + "," + payload + "}" }
	tests := []struct {
		name, doc string
		valid     bool
	}{
		{"run.started", ev(`"type":"run.started"`), true},
		{"run.started unknown member", ev(`"type":"run.started","x":1`), false},
		{"message.started unknown member kept", ev(`"type":"message.started","messageId":"m","role":"user","x":1`), true},
		{"protocolVersion 1.0", strings.Replace(ev(`"type":"run.started"`), `"protocolVersion":1`, `"protocolVersion":1.0`, 1), true},
		{"protocolVersion 2", strings.Replace(ev(`"type":"run.started"`), `"protocolVersion":1`, `"protocolVersion":2`, 1), false},
		{"sequence -0", strings.Replace(ev(`"type":"run.started"`), `"sequence":1`, `"sequence":-0`, 1), true},
		{"sequence above safe", strings.Replace(ev(`"type":"run.started"`), `"sequence":1`, `"sequence":9007199254740992`, 1), false},
		{"unknown type", ev(`"type":"run.paused"`), false},
		{"role system", ev(`"type":"message.started","messageId":"m","role":"system"`), false},
		{"media two sources", ev(`"type":"message.part.delta","messageId":"m","part":{"type":"image","url":"u","fileId":"f"}`), false},
		{"media null source", ev(`"type":"message.part.delta","messageId":"m","part":{"type":"image","url":null}`), false},
		{"media one source", ev(`"type":"message.part.delta","messageId":"m","part":{"type":"file","data":"SGk=","name":"a"}`), true},
		{"custom data null", ev(`"type":"message.part.delta","messageId":"m","part":{"type":"custom","name":"n","data":null}`), true},
		{"custom data absent", ev(`"type":"message.part.delta","messageId":"m","part":{"type":"custom","name":"n"}`), false},
		{"output null", ev(`"type":"tool.completed","result":{"toolCallId":"c","name":"n","input":{},"output":null}`), true},
		{"output absent", ev(`"type":"tool.completed","result":{"toolCallId":"c","name":"n","input":{}}`), false},
		{"input array", ev(`"type":"tool.called","toolCall":{"toolCallId":"c","name":"n","input":[]}`), false},
		{"usage negative", ev(`"type":"usage.updated","usage":{"inputTokens":-1}`), false},
		{"usage empty", ev(`"type":"usage.updated","usage":{}`), true},
		{"reason null", ev(`"type":"run.cancelled","reason":null`), false},
		{"reason absent", ev(`"type":"run.cancelled"`), true},
		{"limit kind missing", ev(`"type":"run.failed","code":"c","message":"m","limit":{"used":1}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.event.Validate(santhoshValue(t, mustParse(t, []byte(tt.doc))))
			if (err == nil) != tt.valid {
				t.Fatalf("schema verdict %v, want valid=%v", err, tt.valid)
			}
			_, perr := ParseEvent([]byte(tt.doc))
			if (perr == nil) != tt.valid {
				t.Fatalf("validator verdict %v, want valid=%v", perr, tt.valid)
			}
		})
	}
}

// TestWireSchemaEnumsFollowValidator checks that the model's enumerations are the validator's.
func TestWireSchemaEnumsFollowValidator(t *testing.T) {
	defs, _ := WireSchema().Get("$defs")
	d := defs.(*jsonvalue.Object)
	enum := func(def string) []string {
		o, _ := d.Get(def)
		e, _ := o.(*jsonvalue.Object).Get("enum")
		var out []string
		for _, v := range e.([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	if got, want := enum("AgentEventType"), stringsOfSlice(EventTypes); !slices.Equal(got, want) {
		t.Errorf("AgentEventType %q, want %q", got, want)
	}
	oneOf, _ := mustGet(d, "AgentEvent").Get("oneOf")
	if len(oneOf.([]any)) != len(EventTypes) {
		t.Errorf("AgentEvent has %d variants", len(oneOf.([]any)))
	}
	for _, typ := range enum("ContentPartType") {
		if _, err := CloneContentParts([]any{jsonvalue.ObjectOf("type", typ)}, ""); err != nil &&
			strings.HasSuffix(err.Error(), ".type is unsupported.") {
			t.Errorf("part type %q unknown to the validator", typ)
		}
	}
	for _, st := range enum("AgentRunStatus") {
		if !validStatus(st) {
			t.Errorf("status %q unknown to the validator", st)
		}
	}
	for _, r := range enum("MessageRole") {
		if !validRole(r) {
			t.Errorf("role %q unknown to the validator", r)
		}
	}
}

func stringsOfSlice[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func mustGet(o *jsonvalue.Object, name string) *jsonvalue.Object {
	v, _ := o.Get(name)
	return v.(*jsonvalue.Object)
}

func caseMember[T any](o *jsonvalue.Object, name string) T {
	v, _ := o.Get(name)
	x, _ := v.(T)
	return x
}

func caseText(t *testing.T, c *jsonvalue.Object) []byte {
	t.Helper()
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

func encoded(t testing.TB, v any) []byte {
	t.Helper()
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t testing.TB, b []byte) any {
	t.Helper()
	v, err := jsonvalue.Parse(b, "doc")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustMarshal(t testing.TB, v interface{ MarshalJSON() ([]byte, error) }) []byte {
	t.Helper()
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ExampleWireSchema lists the definitions of the wire model that describe content parts.
func ExampleWireSchema() {
	defs, _ := WireSchema().Get("$defs")
	part, _ := defs.(*jsonvalue.Object).Get("ContentPartType")
	enum, _ := part.(*jsonvalue.Object).Get("enum")
	fmt.Println(enum)
	// Output: [text reasoning image audio video file citation tool-call tool-result custom]
}
