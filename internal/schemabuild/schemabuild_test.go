package schemabuild_test

import (
	"fmt"
	"testing"

	"github.com/agentwire/agentwire/internal/schemabuild"
	"github.com/agentwire/agentwire/jsonvalue"
)

func TestNullable(t *testing.T) {
	for _, c := range []struct {
		name string
		in   any
		want string
	}{
		{"plain type gains null", schemabuild.Str("d"), `{"description":"d","type":["string","null"]}`},
		{"null stays", schemabuild.Schema("", "type", "null"), `{"type":"null"}`},
		{"enum goes to anyOf", schemabuild.Schema("e", "type", "string", "enum", []any{"a"}),
			`{"description":"e","anyOf":[{"type":"string","enum":["a"]},{"type":"null"}]}`},
		{"const goes to anyOf", schemabuild.Schema("", "const", 1.0), `{"anyOf":[{"const":1},{"type":"null"}]}`},
		{"ref goes to anyOf, description outside", schemabuild.Ref("X", "x"),
			`{"description":"x","anyOf":[{"$ref":"#/$defs/X"},{"type":"null"}]}`},
		{"anyOf gains an alternative", schemabuild.Schema("", "anyOf", schemabuild.Refs("A", "B")),
			`{"anyOf":[{"$ref":"#/$defs/A"},{"$ref":"#/$defs/B"},{"type":"null"}]}`},
		{"true stays", true, `true`},
	} {
		got, err := jsonvalue.Marshal(schemabuild.Nullable(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %s, %v; want %s", c.name, got, err, c.want)
		}
	}
}

func TestObject(t *testing.T) {
	for _, c := range []struct {
		name   string
		strict bool
		ms     []schemabuild.Member
		want   string
	}{
		{"empty lenient", schemabuild.Lenient, nil, `{"type":"object","properties":{}}`},
		{"members in order", schemabuild.Strict, []schemabuild.Member{
			schemabuild.Opt("b", schemabuild.Str("")),
			schemabuild.Req("a", schemabuild.Str("")),
			schemabuild.Dflt("c", schemabuild.Schema("", "type", "array")),
			{Name: "d", Schema: schemabuild.Schema("", "type", []any{"string", "null"}), Presence: schemabuild.Raw},
		}, `{"type":"object","required":["a"],"properties":{"b":{"type":["string","null"]},"a":{"type":"string"},"c":{"type":"array"},"d":{"type":["string","null"]}},"additionalProperties":false}`},
	} {
		got, err := jsonvalue.Marshal(schemabuild.Object("", c.strict, c.ms...))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %s, %v; want %s", c.name, got, err, c.want)
		}
	}
}

func ExampleObject() {
	s := schemabuild.Object("A greeting.", schemabuild.Strict,
		schemabuild.Req("text", schemabuild.Str("What to say.")),
		schemabuild.Opt("to", schemabuild.Ref("Name", "")))
	b, _ := jsonvalue.Marshal(s)
	fmt.Println(string(b))
	// Output:
	// {"description":"A greeting.","type":"object","required":["text"],"properties":{"text":{"description":"What to say.","type":"string"},"to":{"anyOf":[{"$ref":"#/$defs/Name"},{"type":"null"}]}},"additionalProperties":false}
}
