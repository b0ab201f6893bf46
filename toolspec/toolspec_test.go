package toolspec_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
	ts "github.com/agentwire/agentwire/toolspec"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// demoSpec exercises every primitive and modifier of dispatch-tools.md §2.2.
func demoSpec(t testing.TB) *ts.Spec {
	t.Helper()
	s, err := ts.New(demoDefinition())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func demoDefinition() ts.Definition {
	return ts.Definition{
		Name:        "demo_tool",
		Description: "A tool that uses every primitive.",
		Arguments: []ts.Field{
			ts.Key("name", ts.String().MinLen(2).MaxLen(5).Describe("A short name.")),
			ts.Key("count", ts.Int().Min(1).Max(3)),
			ts.Key("ratio", ts.Number().Min(0.5).Optional()),
			ts.Key("big", ts.Int().Optional()),
			ts.Key("floor", ts.Int().Min(0).Optional()),
			ts.Key("flag", ts.Boolean().Optional()),
			ts.Key("color", ts.Enum("red", "green").Optional()),
			ts.Key("any", ts.Unknown().Optional()),
			ts.Key("tags", ts.Array(ts.String().MinLen(1)).MinItems(1).MaxItems(2).Optional()),
			ts.Key("inner", ts.Object(
				ts.Key("a", ts.String()),
				ts.Key("b", ts.Int().Min(0).Optional()),
			).Optional().Describe("A non-strict object.")),
			ts.Key("locked", ts.Object(ts.Key("x", ts.Boolean())).Strict().Optional()),
			ts.Key("empty", ts.Object().Strict().Optional()),
			ts.Key("maybe", ts.String().MaxLen(3).Optional().Nullable().Describe("Nullable.")),
			ts.Key("list", ts.Array(ts.Object(ts.Key("k", ts.String()))).Optional()),
		},
		Validation: &ts.Validation{
			Check: func(o *jsonvalue.Object) bool {
				f, _ := o.Get("flag")
				return f != true || o.Has("color")
			},
			Message: "flag needs color.",
		},
		Example: `{"name":"ab","count":2}`,
	}
}

type parseCase struct {
	name string
	args string
	mode ts.Mode
	want []string // problem lines; nil = accepted
}

func TestParseProblems(t *testing.T) {
	s := demoSpec(t)
	cases := []parseCase{
		{"valid minimal", `{"name":"ab","count":2}`, ts.Strict, nil},
		{"valid everything", `{"name":"abcde","count":3,"ratio":0.5,"big":-9007199254740991,"floor":0,"flag":true,"color":"red","any":null,"tags":["a","b"],"inner":{"a":"x","b":0},"locked":{"x":false},"empty":{},"maybe":null,"list":[{"k":"v"}]}`, ts.Strict, nil},
		{"absent payload equivalent", `{}`, ts.Strict, []string{"name is required (string)", "count is required (number)"}},
		{"P2 wrong types", `{"name":1,"count":"2"}`, ts.Strict, []string{"name must be a string, not 1", "count must be a number, not a string"}},
		{"P2 renders every received kind", `{"name":null,"count":true,"flag":"x","tags":{},"inner":[],"locked":1.5,"ratio":false}`, ts.Strict, []string{
			"name must be a string, not null",
			"count must be a number, not true",
			"ratio must be a number, not false",
			"flag must be a boolean, not a string",
			"tags must be an array, not an object",
			"inner must be an object {a, b?}, not an array",
			"locked must be an object {x}, not 1.5",
		}},
		{"P2 object without declared keys", `{"name":"ab","count":1,"empty":"x"}`, ts.Strict, []string{"empty must be an object, not a string"}},
		{"P3 integral", `{"name":"ab","count":1.5}`, ts.Strict, []string{"count must be an integer, not 1.5"}},
		{"P3 1.0 is integral", `{"name":"ab","count":1.0}`, ts.Strict, nil},
		{"P3 exponent form", `{"name":"ab","count":1e-7}`, ts.Strict, []string{"count must be an integer, not 1e-7"}},
		{"P10 over", `{"name":"ab","count":4}`, ts.Strict, []string{"count must be at most 3"}},
		{"P11 under", `{"name":"ab","count":0}`, ts.Strict, []string{"count must be at least 1"}},
		{"P11 fractional bound", `{"name":"ab","count":1,"ratio":0.25}`, ts.Strict, []string{"ratio must be at least 0.5"}},
		{"implicit int bounds", `{"name":"ab","count":1,"big":9007199254740992}`, ts.Strict, []string{"big must be at most 9007199254740991"}},
		{"implicit int lower bound", `{"name":"ab","count":1,"big":-1e300}`, ts.Strict, []string{"big must be at least -9007199254740991"}},
		{"implicit upper bound with explicit min", `{"name":"ab","count":1,"floor":1e16}`, ts.Strict, []string{"floor must be at most 9007199254740991"}},
		{"explicit min still applies", `{"name":"ab","count":1,"floor":-1}`, ts.Strict, []string{"floor must be at least 0"}},
		{"P5 enum", `{"name":"ab","count":1,"color":"blue"}`, ts.Strict, []string{`color must be one of red|green; got "blue"`}},
		{"P5 enum non-string", `{"name":"ab","count":1,"color":1}`, ts.Strict, []string{`color must be one of red|green; got 1`}},
		{"P5 enum null", `{"name":"ab","count":1,"color":null}`, ts.Strict, []string{`color must be one of red|green; got null`}},
		{"P5 enum object compact input order", `{"name":"ab","count":1,"color":{"z":1,"a":[true,"<&>"]}}`, ts.Strict, []string{`color must be one of red|green; got {"z":1,"a":[true,"<&>"]}`}},
		{"P6 too many", `{"name":"ab","count":1,"tags":["a","b","c"]}`, ts.Strict, []string{"tags has 3 items; the limit is 2"}},
		{"P7 too few singular", `{"name":"ab","count":1,"tags":[]}`, ts.Strict, []string{"tags must have at least 1 item"}},
		{"elements before count", `{"name":"ab","count":1,"tags":["",2,"c"]}`, ts.Strict, []string{"tags.0 must be at least 1 character", "tags.1 must be a string, not 2", "tags has 3 items; the limit is 2"}},
		{"P8 over cap", `{"name":"abcdef","count":1}`, ts.Strict, []string{"name is 1 characters over the 5-character limit (6/5)"}},
		{"P8 counts UTF-16 units", `{"name":"😀😀😀","count":1}`, ts.Strict, []string{"name is 1 characters over the 5-character limit (6/5)"}},
		{"BMP characters count one", `{"name":"ééééé","count":1}`, ts.Strict, nil},
		{"P9 under min plural", `{"name":"a","count":1}`, ts.Strict, []string{"name must be at least 2 characters"}},
		{"astral char is two units", `{"name":"😀","count":1}`, ts.Strict, nil},
		{"P4 root strict", `{"name":"ab","count":1,"zzz":1,"a\"b":2}`, ts.Strict, []string{
			`unknown field "zzz"; allowed: name, count, ratio, big, floor, flag, color, any, tags, inner, locked, empty, maybe, list`,
			`unknown field "a\"b"; allowed: name, count, ratio, big, floor, flag, color, any, tags, inner, locked, empty, maybe, list`,
		}},
		{"P4 key escaping", "{\"name\":\"ab\",\"count\":1,\"\\u0001\\n<\":1}", ts.Strict, []string{
			`unknown field "\u0001\n<"; allowed: name, count, ratio, big, floor, flag, color, any, tags, inner, locked, empty, maybe, list`,
		}},
		{"lenient drops root unknown", `{"name":"ab","count":1,"zzz":1}`, ts.Lenient, nil},
		{"nested non-strict drops in strict mode", `{"name":"ab","count":1,"inner":{"a":"x","q":1}}`, ts.Strict, nil},
		{"nested strict refuses in lenient mode", `{"name":"ab","count":1,"locked":{"x":true,"y":1}}`, ts.Lenient, []string{`unknown field "y" in locked; allowed: x`}},
		{"nested strict with no keys", `{"name":"ab","count":1,"empty":{"v":1}}`, ts.Lenient, []string{`unknown field "v" in empty; allowed: none`}},
		{"nested paths", `{"name":"ab","count":1,"inner":{"b":-1},"list":[{"k":"v"},{},{"k":3}]}`, ts.Strict, []string{
			"inner.a is required (string)", "inner.b must be at least 0", "list.1.k is required (string)", "list.2.k must be a string, not 3",
		}},
		{"nullable accepts null", `{"name":"ab","count":1,"maybe":null}`, ts.Strict, nil},
		{"nullable wrong type", `{"name":"ab","count":1,"maybe":5}`, ts.Strict, []string{"maybe must be a string or null, not 5"}},
		{"nullable bounds", `{"name":"ab","count":1,"maybe":"abcd"}`, ts.Strict, []string{"maybe is 1 characters over the 3-character limit (4/3)"}},
		{"present null is not absent", `{"name":"ab","count":null}`, ts.Strict, []string{"count must be a number, not null"}},
		{"P12 cross-field", `{"name":"ab","count":1,"flag":true}`, ts.Strict, []string{"flag needs color."}},
		{"P12 not after shape problems", `{"name":"ab","count":9,"flag":true}`, ts.Strict, []string{"count must be at most 3"}},
		{"P12 not after unknown keys", `{"name":"ab","count":1,"flag":true,"zz":1}`, ts.Strict, []string{`unknown field "zz"; allowed: name, count, ratio, big, floor, flag, color, any, tags, inner, locked, empty, maybe, list`}},
		{"P12 reads normalized value (lenient drop)", `{"name":"ab","count":1,"flag":true,"colour":"red"}`, ts.Lenient, []string{"flag needs color."}},
		{"order: declared then unknown", `{"zz":1,"count":7,"name":"a"}`, ts.Strict, []string{
			"name must be at least 2 characters", "count must be at most 3",
			`unknown field "zz"; allowed: name, count, ratio, big, floor, flag, color, any, tags, inner, locked, empty, maybe, list`,
		}},
		{"negative zero renders 0", `{"name":"ab","count":-0.5}`, ts.Strict, []string{"count must be an integer, not -0.5"}},
		{"root array", `[]`, ts.Strict, []string{"arguments must be an object, not an array"}},
		{"root null", `null`, ts.Lenient, []string{"arguments must be an object, not null"}},
		{"root string", `"x"`, ts.Strict, []string{"arguments must be an object, not a string"}},
		{"root number", `-0`, ts.Strict, []string{"arguments must be an object, not 0"}},
		{"root boolean", `false`, ts.Strict, []string{"arguments must be an object, not false"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, problems, err := s.ParseJSON([]byte(c.args), c.mode)
			if err != nil {
				t.Fatalf("ParseJSON: %v", err)
			}
			got := problems.Lines()
			if len(got) == 0 {
				got = nil
			}
			if !equalLines(got, c.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestProblemData(t *testing.T) {
	s := demoSpec(t)
	_, problems, err := s.ParseJSON([]byte(`{"count":1.5,"list":[{"k":1}],"locked":{"x":true,"y":0},"zz":1}`), ts.Strict)
	if err != nil {
		t.Fatal(err)
	}
	want := ts.Problems{
		{Type: ts.ProblemRequired, Path: "name", Message: "name is required (string)"},
		{Type: ts.ProblemNotInteger, Path: "count", Message: "count must be an integer, not 1.5"},
		{Type: ts.ProblemUnknownField, Path: "locked.y", Message: `unknown field "y" in locked; allowed: x`},
		{Type: ts.ProblemWrongType, Path: "list.0.k", Message: "list.0.k must be a string, not 1"},
		{Type: ts.ProblemUnknownField, Path: "zz", Message: `unknown field "zz"; allowed: name, count, ratio, big, floor, flag, color, any, tags, inner, locked, empty, maybe, list`},
	}
	if len(problems) != len(want) {
		t.Fatalf("got %d problems %v", len(problems), problems)
	}
	for i := range want {
		if problems[i] != want[i] {
			t.Errorf("problem %d: got %+v want %+v", i, problems[i], want[i])
		}
	}
	if problems.Error() != strings.Join(problems.Lines(), "\n") {
		t.Error("Problems.Error must join the lines")
	}
	if problems[0].Error() != problems[0].Message || ts.ProblemRequired.String() != "Required" {
		t.Error("Problem.Error / ProblemType.String")
	}
}

func TestNormalization(t *testing.T) {
	s := demoSpec(t)
	in, err := jsonvalue.Parse([]byte(`{"zz":1,"name":"ab","count":1,"inner":{"q":0,"a":"x"},"list":[{"k":"v","drop":1},{"k":"w"}]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	out, problems := s.Parse(in, ts.Lenient)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	got, _ := jsonvalue.Marshal(out)
	if want := `{"name":"ab","count":1,"inner":{"a":"x"},"list":[{"k":"v"},{"k":"w"}]}`; string(got) != want {
		t.Errorf("normalized %s want %s", got, want)
	}
	// The input is never modified.
	orig, _ := jsonvalue.Marshal(in)
	if !strings.Contains(string(orig), `"drop":1`) {
		t.Error("input modified")
	}
	// Nothing dropped: the input itself is returned.
	in2, _ := jsonvalue.Parse([]byte(`{"name":"ab","count":1,"inner":{"a":"x"}}`), "")
	out2, _ := s.Parse(in2, ts.Strict)
	if out2 != in2 {
		t.Error("expected the input object back when nothing is dropped")
	}
}

func TestParseGoAndJSONErrors(t *testing.T) {
	s := demoSpec(t)
	if _, problems, err := s.ParseGo(map[string]any{"name": "ab", "count": 2}, ts.Strict); err != nil || len(problems) > 0 {
		t.Errorf("ParseGo: %v %v", err, problems)
	}
	if _, _, err := s.ParseGo(map[string]any{"x": func() {}}, ts.Strict); err == nil {
		t.Error("ParseGo must refuse non-JSON values")
	}
	// Strict-JSON faults come from the jsonvalue layer, labelled "arguments", before any check.
	_, _, err := s.ParseJSON([]byte(`{"name":"a","name":"b"}`), ts.Strict)
	if jerr, ok := err.(*jsonvalue.JSONValidationError); !ok || !strings.HasPrefix(jerr.Message, "arguments") {
		t.Errorf("duplicate names: %v", err)
	}
	if _, _, err := s.ParseJSON([]byte(`{"name":`), ts.Strict); err == nil {
		t.Error("malformed JSON must fail")
	}
	// Whitespace only is an absent payload: `{}`.
	_, problems, err := s.ParseJSON([]byte(" \n"), ts.Strict)
	if err != nil || len(problems) != 2 {
		t.Errorf("absent payload: %v %v", err, problems)
	}
}

func TestRefusalText(t *testing.T) {
	s := demoSpec(t)
	_, problems, _ := s.ParseJSON([]byte(`{"name":"ab"}`), ts.Strict)
	want := "demo_tool was not called: 1 problem\n" +
		"- count is required (number)\n" +
		"- Allowed keys: name, count, ratio, big, floor, flag, color, any, tags, inner, locked, empty, maybe, list\n" +
		`- Example: demo_tool({"name":"ab","count":2})`
	if got := s.Refusal(problems); got != want {
		t.Errorf("refusal:\n%s\nwant:\n%s", got, want)
	}
	args, _ := jsonvalue.Parse([]byte(`{}`), "")
	err := s.Check(args, ts.Strict)
	tie, ok := err.(*ts.ToolInputError)
	if !ok || !strings.HasPrefix(tie.Error(), "demo_tool was not called: 2 problems\n- name is required (string)\n- count is required (number)\n- Allowed keys:") {
		t.Errorf("Check: %v", err)
	}
	// Other tool families render only the header and the problem lines.
	other := &ts.ToolInputError{Tool: "other_tool", Problems: ts.Problems{{Message: "x is required (string)"}}}
	if other.Error() != "other_tool was not called: 1 problem\n- x is required (string)" {
		t.Errorf("other family: %q", other.Error())
	}
	if s.Check(jsonvalue.ObjectOf("name", "ab", "count", 1.0), ts.Strict) != nil {
		t.Error("valid call refused")
	}
}

func TestDescriptionOutermost(t *testing.T) {
	a := ts.String().Describe("d").Nullable().Optional()
	b := ts.String().Nullable().Optional().Describe("d")
	for _, n := range []*ts.Node{a, b} {
		got, _ := jsonvalue.Marshal(n.JSONSchema())
		if want := `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"d"}`; string(got) != want {
			t.Errorf("got %s want %s", got, want)
		}
	}
	// Modifiers leave their receiver unchanged.
	base := ts.String()
	_ = base.MaxLen(3).Describe("x")
	if got, _ := jsonvalue.Marshal(base.JSONSchema()); string(got) != `{"type":"string"}` {
		t.Errorf("builder mutated its receiver: %s", got)
	}
}

func TestMissingTokens(t *testing.T) {
	s, err := ts.New(ts.Definition{
		Name: "tokens", Description: "d", Example: `{"u":1,"e":"a","a":[],"o":{},"n":null,"b":true,"x":1}`,
		Arguments: []ts.Field{
			ts.Key("u", ts.Unknown()), ts.Key("e", ts.Enum("a", "b")), ts.Key("a", ts.Array(ts.String())),
			ts.Key("o", ts.Object()), ts.Key("n", ts.String().Nullable()), ts.Key("b", ts.Boolean()), ts.Key("x", ts.Int()),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, problems := s.Parse(jsonvalue.NewObject(0), ts.Strict)
	want := []string{"u is required (value)", "e is required (one of a|b)", "a is required (array)",
		"o is required (object)", "n is required (string or null)", "b is required (boolean)", "x is required (number)"}
	if !equalLines(problems.Lines(), want) {
		t.Errorf("got %q", problems.Lines())
	}
}

func TestNewRefusesBadDefinitions(t *testing.T) {
	d := demoDefinition()
	d.Example = `{"name":"ab"}`
	if _, err := ts.New(d); err == nil || !strings.Contains(err.Error(), "count is required (number)") {
		t.Errorf("example not validated: %v", err)
	}
	d = demoDefinition()
	d.Example = `[1]`
	if _, err := ts.New(d); err == nil {
		t.Error("non-object example accepted")
	}
	d = demoDefinition()
	d.Name = ""
	if _, err := ts.New(d); err == nil {
		t.Error("empty name accepted")
	}
	a := demoSpec(t)
	if _, err := ts.NewSuite(a, a); err == nil {
		t.Error("duplicate names accepted")
	}
	suite, err := ts.NewSuite(a)
	if err != nil || suite.Len() != 1 || suite.Names()[0] != "demo_tool" {
		t.Fatal(err)
	}
	if _, ok := suite.Lookup("Demo_tool"); ok {
		t.Error("lookup must be exact")
	}
}

func TestUTF16Len(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "€": 1, "😀": 2, "a😀b": 4, "\u2028": 1} {
		if got := ts.UTF16Len(s); got != want {
			t.Errorf("UTF16Len(%q) = %d want %d", s, got, want)
		}
	}
	if got := ts.OverCapMessage(858, 800); got != "is 58 characters over the 800-character limit (858/800)" {
		t.Error(got)
	}
}

// TestSchemaGolden pins the emitted JSON Schema of the demo spec (testdata/demo.schema.json).
func TestSchemaGolden(t *testing.T) {
	s := demoSpec(t)
	got, err := jsonvalue.MarshalIndent(s.Schema(), "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "demo.schema.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("schema differs from %s (run with -update):\n%s", path, got)
	}
}
