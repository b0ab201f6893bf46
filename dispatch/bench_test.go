package dispatch_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	ts "github.com/agentwire/agentwire/toolspec"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Benchmarks of the must-show list: our strict parse (every problem, rendered) against
// santhosh-tekuri/jsonschema/v6 validating the same call against the same emitted schema, for
// a valid call and for a call with exactly 7 problems, all of them schema-expressible so that
// both validators have the same 7 faults to find. Decoding happens outside the timed loop on
// both sides: ours is the jsonvalue value (ordered *Object, float64), theirs the value
// jsonschema.UnmarshalJSON produces (map[string]any, json.Number), each library's native input.
//
// Run: go test -run='^$' -bench=Validate -count=5 ./dispatch/

var benchCalls = []struct {
	tool, valid, sevenProblems string
}{
	{
		tool:  "dispatch_issue",
		valid: `{"project":"DSP","title":"Native workspace","parent":"DSP-1","force":false,"labels":["ui","perf"],"priority":1,"assignee":"octocat","components":{"mode":"explicit","ids":["web","api"]}}`,
		sevenProblems: `{"project":1,"title":null,"force":"yes","labels":["","` + strings.Repeat("x", 45) +
			`"],"priority":7.5,"components":{"mode":"all"}}`,
	},
	{
		tool:  "dispatch_doc_edit",
		valid: `{"issue":"DSP-1","artifact":"spec","ops":[{"op":"replace","find":"old","with":"new"},{"op":"delete_column","block":"table-123","index":1},{"op":"insert","markdown":"## Notes","after":"end"}],"precondition":{"blocks":[{"id":"table-123","token":"sha256:current-table-token"}]},"summary":"tidy"}`,
		sevenProblems: `{"issue":"DSP-1","artifact":5,"ops":[{"op":"rename","find":1},{"op":"move","index":1.5,"colour":"red"}],` +
			`"precondition":{"document":""},"summary":false}`,
	},
	{
		tool:  "dispatch_comment",
		valid: `{"issue":"DSP-1","artifact":"spec","quote":"old wording","occurrence":0,"body":"Looks good, one nit.","reply_to_ask":"01234567-0000-4000-8000-000000000001","turn":"agent"}`,
		sevenProblems: `{"issue":3,"project":["CORE"],"quote":false,"occurrence":-2,"body":"` + strings.Repeat("b", 2010) +
			`","reply_to":null,"turn":"robot"}`,
	},
}

type benchInput struct {
	spec   *ts.Spec
	ours   *jsonvalue.Object
	theirs any
	sch    *jsonschema.Schema
}

func prepareBench(tb testing.TB, tool, text string, wantProblems int) benchInput {
	tb.Helper()
	spec, ok := dispatch.Lookup(tool)
	if !ok {
		tb.Fatal(tool)
	}
	ours, err := jsonvalue.ParseObject([]byte(text), "arguments")
	if err != nil {
		tb.Fatal(err)
	}
	theirs, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
	if err != nil {
		tb.Fatal(err)
	}
	sch, err := compileSchema(spec)
	if err != nil {
		tb.Fatal(err)
	}
	_, problems := spec.Parse(ours, ts.Strict)
	if len(problems) != wantProblems {
		tb.Fatalf("%s: %d problems, want %d: %q", tool, len(problems), wantProblems, problems.Lines())
	}
	verr := sch.Validate(theirs)
	if (verr == nil) != (wantProblems == 0) {
		tb.Fatalf("%s: jsonschema verdict %v", tool, verr)
	}
	if verr != nil {
		if n := countLeaves(verr.(*jsonschema.ValidationError)); n != wantProblems {
			tb.Fatalf("%s: jsonschema reports %d leaf errors, want %d:\n%v", tool, n, wantProblems, verr)
		}
	}
	return benchInput{spec: spec, ours: ours, theirs: theirs, sch: sch}
}

func countLeaves(e *jsonschema.ValidationError) int {
	if len(e.Causes) == 0 {
		return 1
	}
	n := 0
	for _, c := range e.Causes {
		n += countLeaves(c)
	}
	return n
}

// TestBenchCalls checks the benchmark inputs: the valid calls pass both validators, the others
// carry exactly 7 problems that both validators find.
func TestBenchCalls(t *testing.T) {
	for _, c := range benchCalls {
		prepareBench(t, c.tool, c.valid, 0)
		prepareBench(t, c.tool, c.sevenProblems, 7)
	}
}

func BenchmarkValidate(b *testing.B) {
	for _, c := range benchCalls {
		for _, variant := range []struct {
			name     string
			text     string
			problems int
		}{{"valid", c.valid, 0}, {"7problems", c.sevenProblems, 7}} {
			in := prepareBench(b, c.tool, variant.text, variant.problems)
			b.Run(c.tool+"/"+variant.name+"/agentwire", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_, problems := in.spec.Parse(in.ours, ts.Strict)
					if len(problems) != variant.problems {
						b.Fatal(len(problems))
					}
				}
			})
			b.Run(c.tool+"/"+variant.name+"/jsonschema-v6", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					err := in.sch.Validate(in.theirs)
					if (err == nil) != (variant.problems == 0) {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRefusal measures rendering the whole refusal text of a 7-problem call.
func BenchmarkRefusal(b *testing.B) {
	in := prepareBench(b, benchCalls[0].tool, benchCalls[0].sevenProblems, 7)
	b.ReportAllocs()
	for b.Loop() {
		_, problems := in.spec.Parse(in.ours, ts.Strict)
		_ = in.spec.Refusal(problems)
	}
}
