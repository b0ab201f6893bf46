package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

const (
	evStart = `{"type":"run.started","protocolVersion":1,"eventId":"r:1","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`
	evMsg   = `{"type":"message.started","messageId":"m","role":"assistant","protocolVersion":1,"eventId":"r:2","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":2,"sequence":2,"timestamp":"t"}`
	evDelta = `{"type":"message.part.delta","messageId":"m","part":{"type":"text","text":"Hello"},"protocolVersion":1,"eventId":"r:3","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":3,"sequence":3,"timestamp":"t"}`
	evDone  = `{"type":"run.completed","finishReason":"stop","content":[],"protocolVersion":1,"eventId":"r:4","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":4,"sequence":4,"timestamp":"t"}`
)

func TestEventsValidate(t *testing.T) {
	in := evStart + "\n\n  \n" + `{"protocolVersion":2}` + "\n" + evMsg + "\r\n" + `{"a":1,"a":2}` + "\n[]"
	code, out, errs := runCLI(t, in, "events", "validate")
	if code != 1 || errs != "" {
		t.Fatalf("exit %d stderr %q", code, errs)
	}
	want := "line 4: Unsupported Agent event protocol version: 2.\n" +
		"line 6: Agent event contains duplicate member name \"a\".\n" +
		"line 7: Agent event must be a JSON object.\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	if code, out, _ := runCLI(t, evStart+"\n"+evMsg+"\n", "events", "validate", "-"); code != 0 || out != "" {
		t.Fatalf("valid input: exit %d out %q", code, out)
	}
	if code, _, errs := runCLI(t, "", "events", "validate", filepath.Join(t.TempDir(), "missing")); code != 2 || !strings.HasPrefix(errs, "agentwire: ") {
		t.Fatalf("missing file: exit %d stderr %q", code, errs)
	}
}

func TestEventsReduce(t *testing.T) {
	run := strings.Join([]string{evStart, evMsg, evDelta, evDone}, "\n") + "\n"
	code, out, errs := runCLI(t, run, "events", "reduce", "--compact")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d stderr %q", code, errs)
	}
	if !strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 1 ||
		!strings.Contains(out, `"status":"completed"`) || !strings.Contains(out, `"content":[{"type":"text","text":"Hello"}]`) {
		t.Fatalf("compact snapshot: %s", out)
	}
	code, out, _ = runCLI(t, run, "events", "reduce")
	if code != 0 || !strings.HasPrefix(out, "{\n  \"protocolVersion\": 1,\n  \"runId\": \"r\",") || !strings.HasSuffix(out, "}\n") {
		t.Fatalf("indented snapshot: exit %d\n%s", code, out)
	}
	// Empty input: the initial state.
	code, out, _ = runCLI(t, "", "events", "reduce", "--compact")
	if code != 0 || !strings.HasPrefix(out, `{"protocolVersion":null,"runId":null,"sessionId":null,"status":"idle","messages":[]`) {
		t.Fatalf("empty input: exit %d %s", code, out)
	}
	// The first refusal: stderr names the physical line, nothing on stdout.
	bad := evStart + "\n\n" + evDelta + "\n" + evMsg + "\n"
	code, out, errs = runCLI(t, bad, "events", "reduce")
	if code != 1 || out != "" || errs != "line 3: Message delta has no started message.\n" {
		t.Fatalf("refusal: exit %d out %q stderr %q", code, out, errs)
	}
	code, out, errs = runCLI(t, evStart+"\n{", "events", "reduce")
	if code != 1 || out != "" || errs != "line 2: Agent event is not valid JSON text at byte offset 1.\n" {
		t.Fatalf("parse fault: exit %d out %q stderr %q", code, out, errs)
	}
}

func TestEventsReduceExampleRun(t *testing.T) {
	want, err := os.ReadFile("../../conformance/events/example-run.state.json")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "events", "reduce", "../../conformance/events/example-run.ndjson")
	if code != 0 || out != string(want) {
		t.Fatalf("exit %d stderr %q; output differs from example-run.state.json:\n%s", code, errs, out)
	}
}

func TestEventsSynth(t *testing.T) {
	code, a, _ := runCLI(t, "", "events", "synth", "--events", "500", "--seed", "9")
	_, b, _ := runCLI(t, "", "events", "synth", "--events", "500", "--seed", "9")
	_, c, _ := runCLI(t, "", "events", "synth", "--events", "500", "--seed", "10")
	if code != 0 || a != b || a == c || strings.Count(a, "\n") != 500 {
		t.Fatalf("synth not deterministic or wrong length (exit %d, %d lines)", code, strings.Count(a, "\n"))
	}
	if !strings.Contains(a, `"runId":"run-9"`) {
		t.Fatal("default run id must be run-<seed>")
	}
	if code, out, errs := runCLI(t, a, "events", "reduce", "--compact"); code != 0 || !strings.Contains(out, `"status":"completed"`) {
		t.Fatalf("synth output does not reduce: exit %d %s", code, errs)
	}
	_, two, _ := runCLI(t, "", "events", "synth", "--events", "2", "--run-id", "x")
	lines := strings.Split(strings.TrimSuffix(two, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"run.started"`) || !strings.Contains(lines[1], `"run.completed"`) || !strings.Contains(lines[0], `"runId":"x"`) {
		t.Fatalf("synth 2: %q", two)
	}
	for _, args := range [][]string{
		{"events", "synth"}, {"events", "synth", "--events", "1"}, {"events", "synth", "--events", "x"},
		{"events", "synth", "--events", "3", "extra"},
	} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || !strings.HasPrefix(errs, "agentwire: ") {
			t.Errorf("%v: exit %d stderr %q", args, code, errs)
		}
	}
}

// depthCases returns the cases of the conformance corpus's depth.json with the given op: runs
// whose events carry free JSON nested to the depth limit (reduce) and events one level deeper
// (parse-event).
func depthCases(t *testing.T, op string) []*jsonvalue.Object {
	t.Helper()
	data, err := os.ReadFile("../../conformance/events/depth.json")
	if err != nil {
		t.Fatal(err)
	}
	root, err := jsonvalue.ParseObject(data, "depth.json")
	if err != nil {
		t.Fatal(err)
	}
	list, _ := root.Get("cases")
	var out []*jsonvalue.Object
	for _, c := range list.([]any) {
		o := c.(*jsonvalue.Object)
		if got, _ := o.Get("op"); got == op {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s cases in depth.json", op)
	}
	return out
}

func caseString(o *jsonvalue.Object, path ...string) string {
	var v any = o
	for _, p := range path {
		v, _ = v.(*jsonvalue.Object).Get(p)
	}
	s, _ := v.(string)
	return s
}

// depthRun returns a depth.json reduce case as NDJSON and its expected snapshot.
func depthRun(t *testing.T, c *jsonvalue.Object) (string, any) {
	t.Helper()
	evs, _ := c.Get("events")
	var lines []string
	for _, e := range evs.([]any) {
		lines = append(lines, e.(string))
	}
	want, err := jsonvalue.ParseDeep([]byte(caseString(c, "expect", "stateText")), "stateText", events.MaxStateDepth)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n") + "\n", want
}

// TestEventsDepthLimit: a run whose events carry free JSON nested 128 levels (every member of
// the conformance corpus's depth.json) reduces to its snapshot, indented or compact, although
// the snapshot nests deeper than an event may; an event one level deeper gets its verdict line.
func TestEventsDepthLimit(t *testing.T) {
	for _, c := range depthCases(t, "reduce") {
		name := caseString(c, "name")
		t.Run(name, func(t *testing.T) {
			in, want := depthRun(t, c)
			for _, args := range [][]string{{"events", "reduce"}, {"events", "reduce", "--compact"}} {
				code, out, errs := runCLI(t, in, args...)
				if code != 0 || errs != "" {
					t.Fatalf("%v: exit %d stderr %q", args, code, errs)
				}
				got, err := jsonvalue.ParseDeep([]byte(out), "stdout", events.MaxStateDepth)
				if err != nil || !jsonvalue.Equal(got, want) || !strings.HasSuffix(out, "}\n") {
					t.Fatalf("%v: snapshot differs from the corpus (%v):\n%s", args, err, out)
				}
				if _, err := events.DecodeReducerState([]byte(out)); err != nil {
					t.Fatalf("%v: the printed snapshot does not decode: %v", args, err)
				}
			}
			if code, out, errs := runCLI(t, in, "events", "validate"); code != 0 || out != "" || errs != "" {
				t.Fatalf("validate: exit %d out %q err %q", code, out, errs)
			}
		})
	}
	for _, c := range depthCases(t, "parse-event") {
		name := caseString(c, "name")
		t.Run(name, func(t *testing.T) {
			want := "line 2: " + caseString(c, "expect", "error") + "\n"
			code, out, errs := runCLI(t, evStart+"\n"+caseString(c, "text")+"\n", "events", "validate")
			if code != 1 || out != want || errs != "" {
				t.Fatalf("exit %d out %q err %q, want %q", code, out, errs, want)
			}
		})
	}
}

func TestEventsSynthRich(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status string
	}{
		{[]string{"--seed", "3"}, "completed"}, {[]string{"--seed", "4"}, "failed"}, {[]string{"--seed", "5"}, "cancelled"},
		{[]string{"--seed", "3", "--ending", "cancelled"}, "cancelled"},
	} {
		args := append([]string{"events", "synth", "--events", "120", "--profile", "rich"}, tc.args...)
		code, out, errs := runCLI(t, "", args...)
		if code != 0 || strings.Count(out, "\n") != 120 || strings.Count(out, `"type":"run.started"`) != 3 {
			t.Fatalf("%v: exit %d stderr %q, %d lines", args, code, errs, strings.Count(out, "\n"))
		}
		if code, snap, errs := runCLI(t, out, "events", "reduce", "--compact"); code != 0 || !strings.Contains(snap, `"status":"`+tc.status+`"`) {
			t.Fatalf("%v: reduce exit %d %s", args, code, errs)
		}
	}
	for _, args := range [][]string{
		{"--events", "41", "--profile", "rich"}, {"--events", "100", "--profile", "fancy"},
		{"--events", "100", "--ending", "failed"}, {"--events", "100", "--profile", "rich", "--ending", "paused"},
	} {
		if code, _, errs := runCLI(t, "", append([]string{"events", "synth"}, args...)...); code != 2 || !strings.HasPrefix(errs, "agentwire: ") {
			t.Errorf("%v: exit %d stderr %q", args, code, errs)
		}
	}
}

// TestEventsValidateViewerGolden: the web viewer's /open page lists invalid lines with the
// messages of this command; both read the same golden file (web/runview's test is the other).
func TestEventsValidateViewerGolden(t *testing.T) {
	want, err := os.ReadFile("../../web/runview/testdata/mixed.validate.golden")
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "", "events", "validate", "../../web/runview/testdata/mixed.ndjson")
	if code != 1 || out != string(want) {
		t.Fatalf("exit %d, output\n%s", code, out)
	}
}
