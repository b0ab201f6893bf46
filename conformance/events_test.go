package conformance_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// The events corpus: conformance/events/*.json (format in conformance/events/README.md).
const eventsDir = "events"

// Error kinds named by "expect.kind" (events.md §3.8).
const (
	evKindJSON     = "JSONValidationError"
	evKindValidate = "ValidationError"
	evKindReduce   = "ReduceError"
)

// evStateMembers are the members of a reducer snapshot, in the order of events.md §8.1.
var evStateMembers = []string{
	"protocolVersion", "runId", "sessionId", "status", "messages", "toolCalls", "toolProgress",
	"toolResults", "toolErrors", "interrupt", "interruptResolution", "usage", "limit",
	"finishReason", "errorCode", "cancellationReason", "lastSequence", "lastLogicalSequence",
	"lastPhaseId", "eventIds", "eventFingerprints",
}

var evFingerprintRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// evOpMembers lists, per op, the case members besides name, spec, op and expect.
var evOpMembers = map[string][]string{
	"parse-event":          {"text", "textHex"},
	"parse-json":           {"text", "textHex", "label"},
	"clone-json-value":     {"value", "label"},
	"clone-json-object":    {"value", "label"},
	"clone-json-schema":    {"value", "label"},
	"validate-event-input": {"input"},
	"clone-event-input":    {"input"},
	"reduce":               {"events", "initialState"},
	"decode-state":         {"text"},
	"tool-parameters":      {"toolName", "parameters", "parametersText"},
	"tool-input":           {"toolName", "parameters", "parametersText", "input", "inputText"},
}

// evCorpusCase is one case of a corpus file.
type evCorpusCase struct {
	file string
	obj  *jsonvalue.Object
	name string
	spec string
	op   string
	exp  evExpectation
}

// evExpectation is the decoded "expect" member.
type evExpectation struct {
	valid       bool
	canonical   *string
	fingerprint *string
	roundTrip   bool
	state       any // reduce / decode-state: the full §8.1 snapshot; nil when not given
	hasState    bool
	message     string // error message ("error" string, or "error.message" for reduce)
	kind        string // "" when not checked
	index       int    // reduce: index of the refused event
	stateBefore any
	hasBefore   bool
}

func TestEventsCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no corpus files under conformance/events")
	}
	seen := map[string]string{}
	total := 0
	for _, file := range files {
		if strings.HasSuffix(file, ".state.json") {
			continue // expected snapshots, not case files
		}
		cases := evLoadCaseFile(t, file)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			for _, c := range cases {
				if prev, dup := seen[c.name]; dup {
					t.Errorf("case name %q used in %s and %s", c.name, prev, c.file)
				}
				seen[c.name] = c.file
				t.Run(c.name, func(t *testing.T) { evRunCase(t, c) })
			}
		})
		total += len(cases)
	}
	if total < 150 {
		t.Errorf("corpus holds %d cases, want at least 150", total)
	}
}

// evLoadCaseFile reads one corpus file strictly (jsonvalue) and checks its shape.
func evLoadCaseFile(t *testing.T, file string) []evCorpusCase {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	root, err := jsonvalue.ParseObject(data, file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if d, ok := root.Get("description"); !ok || !evIsNonEmptyString(d) {
		t.Fatalf("%s: missing description", file)
	}
	raw, _ := root.Get("cases")
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		t.Fatalf("%s: cases must be a non-empty array", file)
	}
	out := make([]evCorpusCase, 0, len(list))
	for i, v := range list {
		o, ok := v.(*jsonvalue.Object)
		if !ok {
			t.Fatalf("%s: cases[%d] is not an object", file, i)
		}
		c, err := evDecodeCase(file, o)
		if err != nil {
			t.Fatalf("%s: cases[%d]: %v", file, i, err)
		}
		out = append(out, c)
	}
	return out
}

func evIsNonEmptyString(v any) bool { s, ok := v.(string); return ok && s != "" }

func evDecodeCase(file string, o *jsonvalue.Object) (evCorpusCase, error) {
	c := evCorpusCase{file: file, obj: o}
	var ok bool
	if c.name, ok = evStr(o, "name"); !ok || c.name == "" {
		return c, errors.New("name must be a non-empty string")
	}
	if c.spec, ok = evStr(o, "spec"); !ok || !strings.HasPrefix(c.spec, "§") {
		return c, fmt.Errorf("%s: spec must name a section (§…)", c.name)
	}
	c.op, _ = evStr(o, "op")
	allowed, known := evOpMembers[c.op]
	if !known {
		return c, fmt.Errorf("%s: unknown op %q", c.name, c.op)
	}
	for _, k := range o.Keys() {
		if k != "name" && k != "spec" && k != "op" && k != "expect" && !slices.Contains(allowed, k) {
			return c, fmt.Errorf("%s: member %q is not defined for op %s", c.name, k, c.op)
		}
	}
	ev, _ := o.Get("expect")
	eo, isObj := ev.(*jsonvalue.Object)
	if !isObj {
		return c, fmt.Errorf("%s: expect must be an object", c.name)
	}
	exp, err := evDecodeExpect(c.op, eo)
	if err != nil {
		return c, fmt.Errorf("%s: expect: %v", c.name, err)
	}
	c.exp = exp
	return c, nil
}

func evStr(o *jsonvalue.Object, name string) (string, bool) {
	v, _ := o.Get(name)
	s, ok := v.(string)
	return s, ok
}

func evDecodeExpect(op string, o *jsonvalue.Object) (evExpectation, error) {
	var e evExpectation
	allowed := []string{"valid", "canonical", "fingerprint", "roundTrip", "state", "stateText", "error", "kind", "stateBefore"}
	for _, k := range o.Keys() {
		if !slices.Contains(allowed, k) {
			return e, fmt.Errorf("unknown member %q", k)
		}
	}
	if v, ok := o.Get("valid"); ok {
		if v != true {
			return e, errors.New(`"valid" must be true`)
		}
		if o.Has("error") || o.Has("kind") || o.Has("stateBefore") {
			return e, errors.New("valid and error expectations are exclusive")
		}
		e.valid = true
		if s, ok := evStr(o, "canonical"); ok {
			e.canonical = &s
		}
		if s, ok := evStr(o, "fingerprint"); ok {
			if !evFingerprintRE.MatchString(s) {
				return e, fmt.Errorf("fingerprint %q is malformed", s)
			}
			e.fingerprint = &s
		}
		if v, ok := o.Get("roundTrip"); ok {
			e.roundTrip = v == true
		}
		var err error
		e.state, e.hasState, err = evExpectedState(o)
		return e, err
	}
	if op == "reduce" {
		st, ok, err := evExpectedState(o)
		if err != nil {
			return e, err
		}
		if ok {
			if o.Has("error") {
				return e, errors.New("state and error expectations are exclusive")
			}
			e.valid, e.state, e.hasState = true, st, true
			return e, nil
		}
		eo, ok := func() (*jsonvalue.Object, bool) { v, _ := o.Get("error"); x, ok := v.(*jsonvalue.Object); return x, ok }()
		if !ok {
			return e, errors.New(`reduce expects "state" or an "error" object`)
		}
		idx, _ := eo.Get("index")
		f, ok := idx.(float64)
		if !ok || f < 0 || f != float64(int(f)) {
			return e, errors.New("error.index must be a non-negative integer")
		}
		e.index = int(f)
		if e.message, ok = evStr(eo, "message"); !ok {
			return e, errors.New("error.message must be a string")
		}
		e.kind, _ = evStr(eo, "kind")
		e.stateBefore, e.hasBefore = o.Get("stateBefore")
	} else {
		var ok bool
		if e.message, ok = evStr(o, "error"); !ok {
			return e, errors.New(`expect needs "valid": true or an "error" string`)
		}
		e.kind, _ = evStr(o, "kind")
	}
	switch e.kind {
	case "", evKindJSON, evKindValidate, evKindReduce:
	default:
		return e, fmt.Errorf("unknown kind %q", e.kind)
	}
	return e, nil
}

// evExpectedState returns the expected snapshot: "state" (a JSON value) or "stateText" (its
// text, for snapshots nested deeper than a case file may be: a state holds event data up to
// three levels deeper than the event, and the case file holds the state a few levels down).
func evExpectedState(o *jsonvalue.Object) (any, bool, error) {
	st, hasState := o.Get("state")
	text, hasText := o.Get("stateText")
	switch {
	case hasState && hasText:
		return nil, false, errors.New("state and stateText are exclusive")
	case hasText:
		s, ok := text.(string)
		if !ok {
			return nil, false, errors.New("stateText must be a string")
		}
		v, err := jsonvalue.ParseDeep([]byte(s), "stateText", events.MaxStateDepth)
		if err != nil {
			return nil, false, err
		}
		return v, true, nil
	}
	return st, hasState, nil
}

// evRawText returns the bytes of "text" or "textHex".
func evRawText(t *testing.T, c evCorpusCase) []byte {
	t.Helper()
	if s, ok := evStr(c.obj, "text"); ok {
		return []byte(s)
	}
	if s, ok := evStr(c.obj, "textHex"); ok {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatalf("corpus: textHex: %v", err)
		}
		return b
	}
	t.Fatal(`corpus: case needs "text" or "textHex"`)
	return nil
}

// evValueOrText returns member name (a JSON value) or, when absent, the strictly parsed text of
// member name+"Text".
func evValueOrText(t *testing.T, c evCorpusCase, name string) any {
	t.Helper()
	if v, ok := c.obj.Get(name); ok {
		return v
	}
	s, ok := evStr(c.obj, name+"Text")
	if !ok {
		t.Fatalf("corpus: case needs %q or %q", name, name+"Text")
	}
	v, err := jsonvalue.Parse([]byte(s), name+"Text")
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	return v
}

func evRunCase(t *testing.T, c evCorpusCase) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s (%s): panic: %v", c.name, c.spec, r)
		}
	}()
	switch c.op {
	case "parse-event":
		evRunParseEvent(t, c)
	case "parse-json":
		evRunParseJSON(t, c)
	case "clone-json-value", "clone-json-object", "clone-json-schema":
		evRunClone(t, c)
	case "validate-event-input":
		in := evMustGet(t, c, "input")
		before := evMustMarshal(t, in)
		err := events.ValidateEventInput(in)
		evCheckVerdict(t, c, err)
		if got := evMustMarshal(t, in); !bytes.Equal(got, before) {
			t.Errorf("%s: ValidateEventInput modified its input", c.name)
		}
	case "clone-event-input":
		in := evMustGet(t, c, "input")
		before := evMustMarshal(t, in)
		o, err := events.CloneEventInput(in)
		if evCheckVerdict(t, c, err) {
			if o == nil {
				t.Fatalf("%s: CloneEventInput returned nil without error", c.name)
			}
			if !jsonvalue.Equal(o, in) {
				t.Errorf("%s: clone %s differs from input %s", c.name, evMustMarshal(t, o), before)
			}
			evCheckCanonical(t, c, o)
		}
		if got := evMustMarshal(t, in); !bytes.Equal(got, before) {
			t.Errorf("%s: CloneEventInput modified its input", c.name)
		}
	case "reduce":
		evRunReduce(t, c, false)
		evRunReduce(t, c, true)
	case "decode-state":
		evRunDecodeState(t, c)
	case "tool-parameters":
		name := evMustString(t, c, "toolName")
		params := evValueOrText(t, c, "parameters")
		before := evMustMarshal(t, params)
		o, err := events.ValidateToolParameters(name, params)
		if evCheckVerdict(t, c, err) {
			if !jsonvalue.Equal(o, params) {
				t.Errorf("%s: returned parameters %s differ from input %s", c.name, evMustMarshal(t, o), before)
			}
			evCheckCanonical(t, c, o)
		}
		if got := evMustMarshal(t, params); !bytes.Equal(got, before) {
			t.Errorf("%s: ValidateToolParameters modified its input", c.name)
		}
	case "tool-input":
		name := evMustString(t, c, "toolName")
		params := evValueOrText(t, c, "parameters")
		input := evValueOrText(t, c, "input")
		before := evMustMarshal(t, input)
		evCheckVerdict(t, c, events.ValidateToolInput(params, input, name))
		if got := evMustMarshal(t, input); !bytes.Equal(got, before) {
			t.Errorf("%s: ValidateToolInput modified its input", c.name)
		}
	}
}

func evMustGet(t *testing.T, c evCorpusCase, name string) any {
	t.Helper()
	v, ok := c.obj.Get(name)
	if !ok {
		t.Fatalf("corpus: case needs %q", name)
	}
	return v
}

func evMustString(t *testing.T, c evCorpusCase, name string) string {
	t.Helper()
	s, ok := evStr(c.obj, name)
	if !ok {
		t.Fatalf("corpus: %q must be a string", name)
	}
	return s
}

func evMustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// evErrorKind names the kind of err for "expect.kind" (events.md §3.8).
func evErrorKind(err error) string {
	var jv *events.JSONValidationError
	var ve *events.ValidationError
	var re *events.ReduceError
	switch {
	case errors.As(err, &jv):
		return evKindJSON
	case errors.As(err, &ve):
		return evKindValidate
	case errors.As(err, &re):
		return evKindReduce
	}
	return fmt.Sprintf("%T", err)
}

// evCheckVerdict compares err with a non-reduce evExpectation; it reports whether the case
// expected (and got) success, so the caller can check the result further.
func evCheckVerdict(t *testing.T, c evCorpusCase, err error) bool {
	t.Helper()
	return evCheckError(t, c, err, c.exp.message, c.exp.kind)
}

func evCheckError(t *testing.T, c evCorpusCase, err error, message, kind string) bool {
	t.Helper()
	if c.exp.valid {
		if err != nil {
			t.Errorf("%s (%s): want valid, got %s %q", c.name, c.spec, evErrorKind(err), err.Error())
		}
		return err == nil
	}
	if err == nil {
		t.Errorf("%s (%s): want error %q, got none", c.name, c.spec, message)
		return false
	}
	if err.Error() != message {
		t.Errorf("%s (%s):\n got error %q\nwant error %q", c.name, c.spec, err.Error(), message)
	}
	if kind != "" && evErrorKind(err) != kind {
		t.Errorf("%s (%s): error kind %s, want %s", c.name, c.spec, evErrorKind(err), kind)
	}
	if errors.Unwrap(err) != nil {
		t.Errorf("%s (%s): error wraps another error (§3.8)", c.name, c.spec)
	}
	return false
}

// evCheckCanonical compares v's canonical form and fingerprint with the evExpectation.
func evCheckCanonical(t *testing.T, c evCorpusCase, v any) {
	t.Helper()
	if c.exp.canonical != nil {
		got, err := events.Canonicalize(v)
		if err != nil {
			t.Errorf("%s: Canonicalize: %v", c.name, err)
		} else if string(got) != *c.exp.canonical {
			t.Errorf("%s (%s):\n got canonical %s\nwant canonical %s", c.name, c.spec, got, *c.exp.canonical)
		}
	}
	if c.exp.fingerprint != nil {
		got, err := events.Fingerprint(v)
		if err != nil {
			t.Errorf("%s: Fingerprint: %v", c.name, err)
		} else if got != *c.exp.fingerprint {
			t.Errorf("%s (%s): fingerprint %s, want %s", c.name, c.spec, got, *c.exp.fingerprint)
		}
	}
}

func evRunParseJSON(t *testing.T, c evCorpusCase) {
	label, _ := evStr(c.obj, "label")
	v, err := events.ParseJSON(evRawText(t, c), label)
	if !evCheckVerdict(t, c, err) {
		return
	}
	evCheckCanonical(t, c, v)
	if c.exp.roundTrip {
		enc := evMustMarshal(t, v)
		v2, err := events.ParseJSON(enc, "")
		if err != nil {
			t.Fatalf("%s: re-parsing the encoding %s: %v", c.name, enc, err)
		}
		if !jsonvalue.Equal(v, v2) || !bytes.Equal(evMustMarshal(t, v2), enc) {
			t.Errorf("%s: encoding %s does not round-trip", c.name, enc)
		}
		if o, ok := v.(*jsonvalue.Object); ok {
			if !slices.Equal(o.Keys(), v2.(*jsonvalue.Object).Keys()) {
				t.Errorf("%s: member order not kept: %v vs %v", c.name, o.Keys(), v2.(*jsonvalue.Object).Keys())
			}
		}
	}
}

// evRunClone replays the §3.5–§3.6 clone entry points on a JSON value.
func evRunClone(t *testing.T, c evCorpusCase) {
	in := evMustGet(t, c, "value")
	label, _ := evStr(c.obj, "label")
	before := evMustMarshal(t, in)
	var out any
	var err error
	switch c.op {
	case "clone-json-value":
		out, err = events.CloneJSONValue(in, label)
	case "clone-json-object":
		var o *events.Object
		if o, err = events.CloneJSONObject(in, label); o != nil {
			out = o
		}
	case "clone-json-schema":
		out, err = events.CloneJSONSchema(in, label)
	}
	if evCheckVerdict(t, c, err) {
		if !jsonvalue.Equal(out, in) {
			t.Errorf("%s: clone %s differs from input %s", c.name, evMustMarshal(t, out), before)
		}
		evCheckCanonical(t, c, out)
	}
	if got := evMustMarshal(t, in); !bytes.Equal(got, before) {
		t.Errorf("%s: %s modified its input", c.name, c.op)
	}
}

func evRunParseEvent(t *testing.T, c evCorpusCase) {
	data := evRawText(t, c)
	e, err := events.ParseEvent(data)
	if !evCheckVerdict(t, c, err) {
		return
	}
	if !e.Valid() {
		t.Fatalf("%s: ParseEvent returned a zero Event without error", c.name)
	}
	enc, err := e.MarshalJSON()
	if err != nil {
		t.Fatalf("%s: MarshalJSON: %v", c.name, err)
	}
	v, err := events.ParseJSON(enc, "")
	if err != nil {
		t.Fatalf("%s: MarshalJSON wrote invalid JSON %s: %v", c.name, enc, err)
	}
	// The event retains every member (§2, §5.1): its encoding equals the input as a JSON value,
	// and its fingerprint is that of the whole value (§3.7).
	orig, err := events.ParseJSON(data, "")
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	if !jsonvalue.Equal(orig, v) {
		t.Errorf("%s: event encodes as %s, want a value equal to the input", c.name, enc)
	}
	if want, _ := events.Fingerprint(orig); e.Fingerprint() != want {
		t.Errorf("%s: Event.Fingerprint %s, want %s", c.name, e.Fingerprint(), want)
	}
	evCheckCanonical(t, c, v)
	if c.exp.fingerprint != nil && e.Fingerprint() != *c.exp.fingerprint {
		t.Errorf("%s (%s): Event.Fingerprint %s, want %s", c.name, c.spec, e.Fingerprint(), *c.exp.fingerprint)
	}
	if c.exp.roundTrip {
		e2, err := events.ParseEvent(enc)
		if err != nil {
			t.Fatalf("%s: ParseEvent(MarshalJSON) = %v", c.name, err)
		}
		enc2, _ := e2.MarshalJSON()
		if e2.Fingerprint() != e.Fingerprint() || !bytes.Equal(enc, enc2) {
			t.Errorf("%s: round trip changed the event:\n%s\n%s", c.name, enc, enc2)
		}
	}
}

func evRunDecodeState(t *testing.T, c evCorpusCase) {
	s, err := events.DecodeReducerState(evRawText(t, c))
	if !evCheckVerdict(t, c, err) {
		return
	}
	enc := evMarshalState(t, s)
	if c.exp.hasState {
		evCompareState(t, c, "decoded state", enc, c.exp.state)
	}
	// Marshal → decode → marshal reproduces equal JSON (§8.6).
	s2, err := events.DecodeReducerState(enc)
	if err != nil {
		t.Fatalf("%s: decoding the marshalled state: %v", c.name, err)
	}
	if enc2 := evMarshalState(t, s2); !bytes.Equal(enc, enc2) {
		t.Errorf("%s: marshal → decode → marshal changed the state:\n%s\n%s", c.name, enc, enc2)
	}
}

func evMarshalState(t *testing.T, s events.ReducerState) []byte {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatalf("ReducerState.MarshalJSON: %v", err)
	}
	return b
}

// evCompareState checks a marshalled state against an expected snapshot: equal JSON values,
// the §8.1 members in the §8.1 order, and well-formed fingerprints. A state nests up to
// events.MaxStateDepth levels (deeper than an event may), and is parsed with that limit.
func evCompareState(t *testing.T, c evCorpusCase, what string, got []byte, want any) {
	t.Helper()
	v, err := jsonvalue.ParseDeep(got, "state", events.MaxStateDepth)
	if err != nil {
		t.Fatalf("%s: %s is not valid JSON: %v", c.name, what, err)
	}
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		t.Fatalf("%s: %s is not an object: %s", c.name, what, got)
	}
	if !slices.Equal(o.Keys(), evStateMembers) {
		t.Errorf("%s: %s members %v, want %v (§8.1)", c.name, what, o.Keys(), evStateMembers)
	}
	if fps, ok := o.Get("eventFingerprints"); ok {
		if fo, ok := fps.(*jsonvalue.Object); ok {
			for _, m := range fo.Members() {
				if s, _ := m.Value.(string); !evFingerprintRE.MatchString(s) {
					t.Errorf("%s: fingerprint of %q is %v (§14.60)", c.name, m.Name, m.Value)
				}
			}
		}
	}
	if !jsonvalue.Equal(v, want) {
		t.Errorf("%s (%s): %s differs from the expected snapshot\n got: %s\nwant: %s\n%s",
			c.name, c.spec, what, got, jsonvalue.AppendEncoded(nil, want), evStateDiff(o, want))
	}
}

// evStateDiff names the top-level members that differ, to make failures readable.
func evStateDiff(got *jsonvalue.Object, want any) string {
	wo, ok := want.(*jsonvalue.Object)
	if !ok {
		return "expected snapshot is not an object"
	}
	var diff []string
	for _, m := range wo.Members() {
		g, ok := got.Get(m.Name)
		if !ok || !jsonvalue.Equal(g, m.Value) {
			gb := jsonvalue.AppendEncoded(nil, g)
			wb := jsonvalue.AppendEncoded(nil, m.Value)
			diff = append(diff, fmt.Sprintf("  %s: got %s, want %s", m.Name, gb, wb))
		}
	}
	sort.Strings(diff)
	return "differing members:\n" + strings.Join(diff, "\n")
}

// evRunReduce replays a reduce case. With viaDecode, every intermediate state is marshalled and
// decoded again before the next event (§14.61: continuing from a decoded state gives the same
// results).
func evRunReduce(t *testing.T, c evCorpusCase, viaDecode bool) {
	mode := "direct"
	if viaDecode {
		mode = "via DecodeReducerState"
	}
	s := events.NewReducerState()
	if init, ok := c.obj.Get("initialState"); ok {
		var err error
		s, err = events.DecodeReducerState(evMustMarshal(t, init))
		if err != nil {
			t.Fatalf("%s: initialState: %v", c.name, err)
		}
	}
	list, ok := evMustGet(t, c, "events").([]any)
	if !ok {
		t.Fatal("corpus: events must be an array of strings")
	}
	for i, raw := range list {
		txt, ok := raw.(string)
		if !ok {
			t.Fatalf("corpus: events[%d] must be a string", i)
		}
		e, err := events.ParseEvent([]byte(txt))
		if err != nil {
			t.Fatalf("corpus: events[%d] is not a valid event: %v", i, err)
		}
		if viaDecode {
			s, err = events.DecodeReducerState(evMarshalState(t, s))
			if err != nil {
				t.Fatalf("%s [%s]: decoding the state before events[%d]: %v", c.name, mode, i, err)
			}
		}
		before := evMarshalState(t, s)
		next, err := events.Reduce(s, e)
		if after := evMarshalState(t, s); !bytes.Equal(before, after) {
			t.Fatalf("%s [%s]: Reduce changed its input state at events[%d] (§8.2)", c.name, mode, i)
		}
		if err != nil {
			if c.exp.valid || i != c.exp.index {
				t.Fatalf("%s (%s) [%s]: events[%d] refused with %s %q, want %s", c.name, c.spec, mode, i,
					evErrorKind(err), err.Error(), evDescribeExpect(c.exp))
			}
			evCheckError(t, c, err, c.exp.message, c.exp.kind)
			if got := evMarshalState(t, next); !bytes.Equal(got, before) {
				t.Errorf("%s [%s]: a refused Reduce returned a changed state (§14.59)\n got: %s\nwant: %s",
					c.name, mode, got, before)
			}
			if c.exp.hasBefore {
				evCompareState(t, c, "state before the refused event", before, c.exp.stateBefore)
			}
			return
		}
		if !c.exp.valid && i == c.exp.index {
			t.Fatalf("%s (%s) [%s]: events[%d] accepted, want error %q", c.name, c.spec, mode, i, c.exp.message)
		}
		// Re-applying an applied event is an exact duplicate: same state, no error (§8.3 step 3).
		again, err := events.Reduce(next, e)
		if err != nil {
			t.Fatalf("%s [%s]: re-applying events[%d]: %v", c.name, mode, i, err)
		}
		nb := evMarshalState(t, next)
		if ab := evMarshalState(t, again); !bytes.Equal(ab, nb) {
			t.Errorf("%s [%s]: re-applying events[%d] changed the state", c.name, mode, i)
		}
		s = next
	}
	if !c.exp.valid {
		t.Fatalf("%s (%s) [%s]: all %d events applied, want %s", c.name, c.spec, mode, len(list), evDescribeExpect(c.exp))
	}
	final := evMarshalState(t, s)
	evCompareState(t, c, "final state ("+mode+")", final, c.exp.state)
	s2, err := events.DecodeReducerState(final)
	if err != nil {
		t.Fatalf("%s: decoding the final state: %v", c.name, err)
	}
	if again := evMarshalState(t, s2); !bytes.Equal(again, final) {
		t.Errorf("%s: marshal → decode → marshal changed the final state (§14.61)", c.name)
	}
}

func evDescribeExpect(e evExpectation) string {
	if e.valid {
		return "all events applied"
	}
	return fmt.Sprintf("events[%d] refused with %q", e.index, e.message)
}

// TestEventsExampleRun reduces example-run.ndjson (the README's main-job input) and compares
// the result with the hand-checked snapshot example-run.state.json.
func TestEventsExampleRun(t *testing.T) {
	evs := evLoadExampleRun(t)
	want := evLoadExampleState(t)
	s := events.NewReducerState()
	for i, e := range evs {
		next, err := events.Reduce(s, e)
		if err != nil {
			t.Fatalf("event %d refused: %v", i+1, err)
		}
		s = next
	}
	c := evCorpusCase{name: "example-run", spec: "§8"}
	evCompareState(t, c, "example-run state", evMarshalState(t, s), want)
	all, err := events.ReduceAll(evs)
	if err != nil {
		t.Fatalf("ReduceAll: %v", err)
	}
	if !bytes.Equal(evMarshalState(t, all), evMarshalState(t, s)) {
		t.Error("ReduceAll and Reduce disagree on the example run")
	}
}

func evLoadExampleRun(t testing.TB) []events.Event {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(eventsDir, "example-run.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []events.Event
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.Trim(line, " \t")) == 0 {
			continue // blank lines are skipped (cli.md NDJSON rules)
		}
		e, err := events.ParseEvent(line)
		if err != nil {
			t.Fatalf("example-run.ndjson line %d: %v", n+1, err)
		}
		evs = append(evs, e)
	}
	if len(evs) == 0 {
		t.Fatal("example-run.ndjson holds no events")
	}
	return evs
}

func evLoadExampleState(t testing.TB) any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(eventsDir, "example-run.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonvalue.Parse(data, "example-run.state.json")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// BenchmarkEventsExampleRun measures parsing and reducing the 20-event example run.
func BenchmarkEventsExampleRun(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(eventsDir, "example-run.ndjson"))
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		s := events.NewReducerState()
		for _, line := range lines {
			e, err := events.ParseEvent(line)
			if err != nil {
				b.Fatal(err)
			}
			if s, err = events.Reduce(s, e); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEventsCorpusParseEvent measures ParseEvent over every parse-event case text.
func BenchmarkEventsCorpusParseEvent(b *testing.B) {
	texts := evCorpusTexts(b, "parse-event")
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			_, _ = events.ParseEvent(t)
		}
	}
}

// evCorpusTexts returns the raw texts of every case of the given op ("text", or "textHex" decoded).
func evCorpusTexts(tb testing.TB, op string) [][]byte {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	var texts [][]byte
	for _, file := range files {
		if strings.HasSuffix(file, ".state.json") {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		root, err := jsonvalue.ParseObject(data, file)
		if err != nil {
			tb.Fatal(err)
		}
		cs, _ := root.Get("cases")
		list, _ := cs.([]any)
		for _, v := range list {
			o, ok := v.(*jsonvalue.Object)
			if !ok {
				continue
			}
			if got, _ := evStr(o, "op"); got != op {
				continue
			}
			if s, ok := evStr(o, "text"); ok {
				texts = append(texts, []byte(s))
			} else if s, ok := evStr(o, "textHex"); ok {
				if b, err := hex.DecodeString(s); err == nil {
					texts = append(texts, b)
				}
			}
		}
	}
	return texts
}

// FuzzEventsCorpusParseEvent mutates the corpus's event texts (its seeds, replayed by every
// plain `go test`) and checks the invariants the corpus relies on: ParseEvent never panics;
// a refusal is a *JSONValidationError or *ValidationError that wraps nothing; an accepted
// event encodes to a value equal to its input, with the fingerprint of that value, and
// re-parses to the same event.
func FuzzEventsCorpusParseEvent(f *testing.F) {
	for _, t := range evCorpusTexts(f, "parse-event") {
		f.Add(t)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := events.ParseEvent(data)
		if err != nil {
			if k := evErrorKind(err); k != evKindJSON && k != evKindValidate {
				t.Fatalf("ParseEvent error of kind %s: %v", k, err)
			}
			if errors.Unwrap(err) != nil {
				t.Fatalf("ParseEvent error wraps another error: %v", err)
			}
			return
		}
		enc, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		orig, err := events.ParseJSON(data, "")
		if err != nil {
			t.Fatalf("ParseEvent accepted text that ParseJSON rejects: %v", err)
		}
		got, err := events.ParseJSON(enc, "")
		if err != nil || !jsonvalue.Equal(orig, got) {
			t.Fatalf("encoding %s is not equal to the input (%v)", enc, err)
		}
		if fp, _ := events.Fingerprint(orig); fp != e.Fingerprint() {
			t.Fatalf("fingerprint %s, want %s", e.Fingerprint(), fp)
		}
		e2, err := events.ParseEvent(enc)
		if err != nil || e2.Fingerprint() != e.Fingerprint() {
			t.Fatalf("re-parsing the encoding: %v", err)
		}
	})
}

// Example_events replays one corpus case by hand: the "text" of a parse-event case is given to
// events.ParseEvent and the verdict is printed in the corpus's "expect" vocabulary.
func Example_events() {
	text := `{"protocolVersion":"1","eventId":"e","runId":"r","sessionId":"s","phaseId":"p",` +
		`"timestamp":"t","logicalSequence":1,"sequence":1,"type":"run.started"}`
	if _, err := events.ParseEvent([]byte(text)); err != nil {
		fmt.Printf("error: %s\nkind: %s\n", err, evErrorKind(err))
	}
	// Output:
	// error: Unsupported Agent event protocol version: 1.
	// kind: ValidationError
}
