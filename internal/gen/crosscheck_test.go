package gen

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/hive/registry"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/leanctx"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// repoRoot is the repository root seen from this package's directory.
const repoRoot = "../.."

// compiled compiles the rendered schema at path (and every other rendered schema, so references
// resolve) with santhosh-tekuri/jsonschema/v6 and returns it; ref, when not empty, selects a
// definition inside it (e.g. "#/$defs/AgentReducerState").
func compiled(t testing.TB, files []File, path, ref string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	var id string
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".schema.json") {
			continue
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(f.Data))
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		fid := v.(map[string]any)["$id"].(string)
		if err := c.AddResource(fid, v); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if f.Path == path {
			id = fid
		}
	}
	if id == "" {
		t.Fatalf("%s was not rendered", path)
	}
	s, err := c.Compile(id + ref)
	if err != nil {
		t.Fatalf("compile %s%s: %v", path, ref, err)
	}
	return s
}

func rendered(t testing.TB) []File {
	t.Helper()
	files, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// validates reports whether the JSON text doc is valid under s.
func validates(t testing.TB, s *jsonschema.Schema, doc []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return s.Validate(v)
}

// envelopeSchemaAccepts lists the corpus envelopes Decode refuses that the schema accepts: the
// refusal is beyond what §6.2's schema says (it checks lengths, not blankness; integer, not
// non-zero; and JSON Schema's integer is a value, not a spelling).
var envelopeSchemaAccepts = map[string]string{
	"trace-id-blank":           "blank (white space) passes minLength 1",
	"source-event-id-blank":    "blank passes minLength 1",
	"topic-white-space":        "blank passes minLength 1 (envelope.md §2.4)",
	"payload-summary-blank":    "blank passes minLength 1",
	"in-reply-to-blank":        "blank passes minLength 1",
	"supersedes-tab":           "blank passes minLength 1",
	"sender-session-blank":     "blank passes minLength 1",
	"wire-supersedes-blank":    "blank passes minLength 1",
	"issued-at-zero":           "issued_at must be set: the schema says integer, not non-zero",
	"issued-at-minus-zero":     "issued_at must be set: -0 is the integer 0",
	"issued-at-one-point-zero": "1.0 is an integer value in JSON Schema; Decode refuses the spelling",
	"issued-at-exponent":       "1e3 is an integer value in JSON Schema; Decode refuses the spelling",
	"escaped-key-names-field":  "issued_at spelt 1.0 (under an escaped key name)",
	"issued-at-over-int64":     "the schema has no int64 bound",
}

// envelopeSchemaRefuses lists the corpus envelopes Decode accepts that the schema refuses: the
// schema binds producers (envelope.md §1.1 rule 4), so it refuses the unknown keys and the
// present nulls a decoder ignores. Their canonical re-encodings are valid under the schema.
var envelopeSchemaRefuses = map[string]string{
	"wire-supersedes-null":                   "present null",
	"wire-null-passes":                       "present nulls",
	"wire-sender-null":                       "present null sender",
	"expires-at-null-absent":                 "present null expires_at",
	"case-variant-in-reply-to-ignored":       "unknown key In_Reply_To",
	"case-variant-empty-in-reply-to-ignored": "unknown key In_Reply_To",
	"depth-limit-ok":                         "unknown key extra",
	"sender-unknown-key-ignored":             "unknown key in sender",
	"unknown-keys-ignored":                   "unknown keys",
}

// TestEnvelopeSchemaCorpus replays conformance/envelope/decode.json against the rendered
// schema/envelope.schema.json.
func TestEnvelopeSchemaCorpus(t *testing.T) {
	s := compiled(t, rendered(t), "schema/envelope.schema.json", "")
	raw, err := os.ReadFile(filepath.Join(repoRoot, "conformance/envelope/decode.json"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := jsonvalue.ParseObject(raw, "decode.json")
	if err != nil {
		t.Fatal(err)
	}
	cases, _ := root.Get("cases")
	seenAccepts, seenRefuses := map[string]bool{}, map[string]bool{}
	var agree int
	for _, cv := range cases.([]any) {
		c := cv.(*jsonvalue.Object)
		name := get[string](c, "name")
		if get[string](c, "op") != "decode" {
			continue
		}
		text := []byte(get[string](c, "text"))
		if h, ok := c.Get("textHex"); ok {
			if text, err = hex.DecodeString(h.(string)); err != nil {
				t.Fatal(err)
			}
		}
		exp := get[*jsonvalue.Object](c, "expect")
		valid := len(get[[]any](exp, "decode")) == 0
		if e, ok := exp.Get("encoded"); ok {
			if err := validates(t, s, []byte(e.(string))); err != nil {
				t.Errorf("%s: canonical encoding refused by the schema: %v", name, err)
			}
		}
		if _, err := jsonvalue.Parse(text, "envelope"); err != nil {
			continue // strict JSON (§1.1 rule 5): the validator's business, not the schema's
		}
		if _, decErr := envelope.Decode(text); (len(decErr) == 0) != valid {
			t.Fatalf("%s: corpus and Decode disagree", name)
		}
		schemaValid := validates(t, s, text) == nil
		switch {
		case schemaValid == valid:
			agree++
			if r, ok := envelopeSchemaAccepts[name]; ok {
				t.Errorf("%s: listed (%s) but schema and Decode agree", name, r)
			}
			if r, ok := envelopeSchemaRefuses[name]; ok {
				t.Errorf("%s: listed (%s) but schema and Decode agree", name, r)
			}
		case schemaValid:
			seenAccepts[name] = true
			if _, ok := envelopeSchemaAccepts[name]; !ok {
				t.Errorf("%s: Decode refuses it (%v), the schema accepts it", name, get[[]any](exp, "decode"))
			}
		default:
			seenRefuses[name] = true
			if _, ok := envelopeSchemaRefuses[name]; !ok {
				t.Errorf("%s: Decode accepts it, the schema refuses it: %v", name, validates(t, s, text))
			}
		}
	}
	for name := range envelopeSchemaAccepts {
		if !seenAccepts[name] {
			t.Errorf("envelopeSchemaAccepts lists %s, which the schema does not accept", name)
		}
	}
	for name := range envelopeSchemaRefuses {
		if !seenRefuses[name] {
			t.Errorf("envelopeSchemaRefuses lists %s, which the schema does not refuse", name)
		}
	}
	if agree < 60 {
		t.Errorf("only %d cases agree", agree)
	}
	t.Logf("%d decode cases agree; %d refusals beyond the schema, %d producer-strict refusals listed",
		agree, len(envelopeSchemaAccepts), len(envelopeSchemaRefuses))
}

// TestEventsSchemaIsModel checks that schema/events.schema.json is the header members followed
// by events.WireSchema exactly, so the model's corpus test (package events) covers the file.
func TestEventsSchemaIsModel(t *testing.T) {
	files := rendered(t)
	var doc *jsonvalue.Object
	for _, f := range files {
		if f.Path == "schema/events.schema.json" {
			var err error
			if doc, err = jsonvalue.ParseObject(f.Data, f.Path); err != nil {
				t.Fatal(err)
			}
		}
	}
	if doc == nil {
		t.Fatal("schema/events.schema.json not rendered")
	}
	model := events.WireSchema()
	want := jsonvalue.ObjectOf("$comment", Header, "$schema", Dialect,
		"$id", IDBase+"events.schema.json", "title", "AgentEvent")
	for _, m := range model.Members() {
		want.Set(m.Name, m.Value)
	}
	if a, b := jsonvalue.AppendEncoded(nil, doc), jsonvalue.AppendEncoded(nil, want); !bytes.Equal(a, b) {
		t.Fatalf("rendered events schema is not header + model:\n%s\n%s", a, b)
	}
	// A smoke test of the rendered file itself: the example run and its snapshot.
	ev := compiled(t, files, "schema/events.schema.json", "")
	st := compiled(t, files, "schema/events.schema.json", "#/$defs/AgentReducerState")
	lines, err := os.ReadFile(filepath.Join(repoRoot, "conformance/events/example-run.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(lines) {
		if err := validates(t, ev, line); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	snap, err := os.ReadFile(filepath.Join(repoRoot, "conformance/events/example-run.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := validates(t, st, snap); err != nil {
		t.Errorf("example-run.state.json: %v", err)
	}
}

func get[T any](o *jsonvalue.Object, name string) T {
	v, _ := o.Get(name)
	x, _ := v.(T)
	return x
}

// dispatchDisagreements lists the strict-mode tools corpus cases on which the parse and the
// emitted JSON Schema disagree, each with its class from dispatch-tools.md §2.3.1: (1) a
// cross-field rule, (2) UTF-16 code units against code points, (3) the implicit safe-integer
// bound, (4) an unknown key refused by strict mode on a non-strict tool. The test checks the
// list is exact.
var dispatchDisagreements = map[string]string{
	"dispatch_artifact / path and content":                         "(1) cross-field",
	"dispatch_artifact / neither path nor content":                 "(1) cross-field",
	"dispatch_artifact / primary refused":                          "(4) unknown key, non-strict tool",
	"dispatch_ask / kind refused in strict mode":                   "(4) unknown key, non-strict tool",
	"dispatch_ask / issue and project":                             "(1) cross-field",
	"dispatch_ask / 401 astral characters are 802 units":           "(2) UTF-16 length",
	"dispatch_ask / project without artifact":                      "(1) cross-field",
	"dispatch_ask / no owner at all":                               "(1) cross-field",
	"dispatch_comment / turn without reply_to_ask":                 "(1) cross-field",
	"dispatch_comment / project without artifact":                  "(1) cross-field",
	"dispatch_comment / later extension images is unknown":         "(4) unknown key, non-strict tool",
	"dispatch_doc_edit / empty precondition":                       "(1) cross-field",
	"dispatch_doc_edit / precondition with both":                   "(1) cross-field",
	"dispatch_doc_edit / issue without artifact":                   "(1) cross-field",
	"dispatch_doc_edit / occurrence beyond the safe integer range": "(3) implicit safe-integer bound",
	"dispatch_doc_read / project without artifact":                 "(1) cross-field",
	"dispatch_doc_read / page refused":                             "(4) unknown key, non-strict tool",
	"dispatch_edit_ask / ask alone":                                "(1) cross-field",
	"dispatch_issue / label of 21 astral characters is 42 units":   "(2) UTF-16 length",
	"dispatch_issue / unknown keys refused in strict mode":         "(4) unknown key, non-strict tool",
	"dispatch_issue_update / issue alone":                          "(1) cross-field",
	"dispatch_read / no owner":                                     "(1) cross-field",
	"dispatch_read / message is a later extension":                 "(4) unknown key, non-strict tool",
	"dispatch_request_approval / ref is not an argument (strict)":  "(4) unknown key, non-strict tool",
	"dispatch_request_approval / summary is a later extension":     "(4) unknown key, non-strict tool",
	"dispatch_search / one astral character is two units":          "(2) UTF-16 length (accepted by the parse)",
	"dispatch_search / offset is a later extension":                "(4) unknown key, non-strict tool",
	"dispatch_suggest / issue without artifact or ref":             "(1) cross-field",
}

// TestDispatchSchemasCorpus replays the strict-mode cases of conformance/tools against the
// rendered per-tool schemas and the suite schema.
func TestDispatchSchemasCorpus(t *testing.T) {
	files := rendered(t)
	suite := compiled(t, files, "schema/dispatch.schema.json", "")
	paths, err := filepath.Glob(filepath.Join(repoRoot, "conformance/tools/dispatch_*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no tools corpus: %v", err)
	}
	perTool := map[string]*jsonschema.Schema{}
	seen := map[string]bool{}
	agreed := 0
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		root, err := jsonvalue.ParseObject(raw, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, cv := range get[[]any](root, "cases") {
			c := cv.(*jsonvalue.Object)
			if get[string](c, "mode") != "strict" {
				continue
			}
			tool, name := get[string](c, "tool"), get[string](c, "name")
			s, ok := perTool[tool]
			if !ok {
				s = compiled(t, files, "schema/dispatch/"+tool+".schema.json", "")
				perTool[tool] = s
			}
			args := strings.TrimSpace(get[string](c, "arguments"))
			if args == "" {
				args = "{}"
			}
			valid, _ := c.Get("valid")
			toolErr := validates(t, s, []byte(args))
			call := `{"name":` + jsonvalue.Quote(tool) + `,"arguments":` + args + `}`
			suiteErr := validates(t, suite, []byte(call))
			if (toolErr == nil) != (suiteErr == nil) {
				t.Errorf("%s / %s: per-tool schema says %v, suite schema says %v", tool, name, toolErr, suiteErr)
			}
			key := tool + " / " + name
			class, listed := dispatchDisagreements[key]
			agree := (valid == true) == (toolErr == nil)
			switch {
			case agree && listed:
				t.Errorf("%s: listed as %s, but the parse and the schema agree", key, class)
			case agree:
				agreed++
			case listed:
				seen[key] = true
			case toolErr != nil:
				t.Errorf("%s: the parse accepts it, the schema refuses it: %v", key, toolErr)
			default:
				t.Errorf("%s: the parse refuses it %q, the schema accepts it", key, get[[]any](c, "problems"))
			}
		}
	}
	for key := range dispatchDisagreements {
		if !seen[key] {
			t.Errorf("dispatchDisagreements lists %s, which is not a disagreeing strict case", key)
		}
	}
	if agreed < 100 {
		t.Errorf("only %d cases agree", agreed)
	}
	t.Logf("%d strict cases agree; %d classified disagreements", agreed, len(dispatchDisagreements))
}

// TestDispatchSchemasAreEmission checks that schema/dispatch/<tool>.schema.json is the header
// members followed by exactly what toolspec emits, and that the suite schema holds the same
// parameter schemas under $defs, so the differential test of package dispatch covers them.
func TestDispatchSchemasAreEmission(t *testing.T) {
	files := map[string][]byte{}
	for _, f := range rendered(t) {
		files[f.Path] = f.Data
	}
	suite, err := jsonvalue.ParseObject(files["schema/dispatch.schema.json"], "suite")
	if err != nil {
		t.Fatal(err)
	}
	defs := get[*jsonvalue.Object](suite, "$defs")
	specs := dispatch.Specs()
	if len(get[[]any](suite, "oneOf")) != len(specs) || defs.Len() != len(specs)+1 {
		t.Fatalf("suite schema has %d variants and %d defs for %d tools", len(get[[]any](suite, "oneOf")), defs.Len(), len(specs))
	}
	for _, spec := range specs {
		path := SchemaPath("dispatch/" + spec.Name())
		doc, err := jsonvalue.ParseObject(files[path], path)
		if err != nil {
			t.Fatal(err)
		}
		want := jsonvalue.ObjectOf("$comment", Header, "$schema", Dialect,
			"$id", IDBase+"dispatch/"+spec.Name()+".schema.json", "title", spec.Name())
		for _, m := range spec.Schema().Members() {
			want.Set(m.Name, m.Value)
		}
		if !bytes.Equal(jsonvalue.AppendEncoded(nil, doc), jsonvalue.AppendEncoded(nil, want)) {
			t.Errorf("%s is not header + emission", path)
		}
		emitted := spec.Schema()
		emitted.Delete("$schema")
		def, _ := defs.Get(spec.Name())
		if !bytes.Equal(jsonvalue.AppendEncoded(nil, def), jsonvalue.AppendEncoded(nil, emitted)) {
			t.Errorf("suite $defs/%s is not the emission", spec.Name())
		}
	}
}

// tsConstRE matches an exported constant of a generated TypeScript file; its value is JSON
// (strings, numbers, tuples of strings) once a tuple's trailing comma is removed.
var tsConstRE = regexp.MustCompile(`(?ms)^export const ([A-Z0-9_]+) = (.*?) as const;$`)

// TestEnvelopeTSConstantsCorpus checks every TypeScript constant the envelope corpus pins
// (conformance/envelope/stream.json, op "constant", TS names in upper case) against
// ts/envelope.gen.ts.
func TestEnvelopeTSConstantsCorpus(t *testing.T) {
	var ts []byte
	for _, f := range rendered(t) {
		if f.Path == "ts/envelope.gen.ts" {
			ts = f.Data
		}
	}
	consts := map[string]any{}
	for _, m := range tsConstRE.FindAllSubmatch(ts, -1) {
		text := regexp.MustCompile(`,\s*\]$`).ReplaceAll(m[2], []byte("]"))
		v, err := jsonvalue.Parse(text, string(m[1]))
		if err != nil {
			t.Fatalf("constant %s: %v", m[1], err)
		}
		consts[string(m[1])] = v
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "conformance/envelope/stream.json"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := jsonvalue.ParseObject(raw, "stream.json")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, cv := range get[[]any](root, "cases") {
		c := cv.(*jsonvalue.Object)
		name := get[string](c, "constant")
		if get[string](c, "op") != "constant" || strings.ToUpper(name) != name {
			continue // Go-only names
		}
		want, _ := get[*jsonvalue.Object](c, "expect").Get("value")
		got, ok := consts[name]
		if !ok {
			t.Errorf("ts/envelope.gen.ts does not export %s", name)
			continue
		}
		if !jsonvalue.Equal(got, want) {
			t.Errorf("%s = %v, corpus says %v", name, got, want)
		}
		checked++
	}
	if checked < 15 {
		t.Errorf("only %d constants checked", checked)
	}
}

// renderedSchema returns the rendered schema at path as a value.
func renderedSchema(t *testing.T, files []File, path string) *jsonvalue.Object {
	t.Helper()
	for _, f := range files {
		if f.Path == path {
			doc, err := jsonvalue.ParseObject(f.Data, f.Path)
			if err != nil {
				t.Fatal(err)
			}
			return doc
		}
	}
	t.Fatalf("%s not rendered", path)
	return nil
}

// TestHiveLeanctxSchemasAreModels checks that schema/hive.schema.json and
// schema/leanctx.schema.json are the header members followed by hive.WireSchema and
// leanctx.WireSchema exactly, so the models' corpus tests (packages hive and leanctx) cover the
// files.
func TestHiveLeanctxSchemasAreModels(t *testing.T) {
	files := rendered(t)
	for _, c := range []struct {
		name, title string
		model       *jsonvalue.Object
	}{
		{"hive", "BusFrameV1", hive.WireSchema()},
		{"leanctx", "LeanCtxDocument", leanctx.WireSchema()},
	} {
		doc := renderedSchema(t, files, SchemaPath(c.name))
		want := jsonvalue.ObjectOf("$comment", Header, "$schema", Dialect,
			"$id", IDBase+c.name+".schema.json", "title", c.title)
		for _, m := range c.model.Members() {
			want.Set(m.Name, m.Value)
		}
		if a, b := jsonvalue.AppendEncoded(nil, doc), jsonvalue.AppendEncoded(nil, want); !bytes.Equal(a, b) {
			t.Errorf("rendered %s schema is not header + model", c.name)
		}
	}
}

// TestHiveSchemaExamples is a smoke test of the rendered files themselves: the hive.md §2.12 and
// §4.6 examples (hive/testdata/examples.txt, one `TYPE document` per line) are valid under the
// definition of their TYPE, and the root of each file accepts and refuses a sample document.
func TestHiveSchemaExamples(t *testing.T) {
	files := rendered(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot, "hive/testdata/examples.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range bytes.Lines(raw) {
		typ, doc, ok := strings.Cut(strings.TrimSpace(string(line)), " ")
		if !ok {
			continue
		}
		rt, ok := registry.Lookup(typ)
		if !ok {
			t.Fatalf("unknown TYPE %q", typ)
		}
		pkg, def, _ := strings.Cut(rt.GoName, ".")
		s := compiled(t, files, SchemaPath(pkg), "#/$defs/"+def)
		if err := validates(t, s, []byte(doc)); err != nil {
			t.Errorf("%s %s: %v", typ, doc, err)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d examples", n)
	}
	// The root of each file: a frame, and a core-contract document.
	root := compiled(t, files, "schema/hive.schema.json", "")
	if validates(t, root, []byte(`{"t":"ack","channel":"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g","seq":1}`)) != nil {
		t.Error("the hive root refuses an ack frame")
	}
	if validates(t, root, []byte(`{"t":"ack","channel":"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g","seq":0}`)) == nil {
		t.Error("the hive root accepts an ack of seq 0")
	}
	lroot := compiled(t, files, "schema/leanctx.schema.json", "")
	closed := `{"gap_id":"g","last_missing_sequence":9,"ended_at":"e","resolved_at":"r","total_missing_events":3,"billing_period_status":"Complete","signature":"s"}`
	if err := validates(t, lroot, []byte(closed)); err != nil {
		t.Errorf("the leanctx root refuses a gap-closed event: %v", err)
	}
	if validates(t, lroot, []byte(strings.Replace(closed, "Complete", "complete", 1))) == nil {
		t.Error("the leanctx root accepts an unknown BillingPeriodStatus")
	}
}
