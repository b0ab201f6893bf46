package gen

import (
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
)

func mustObject(t testing.TB, text string) *jsonvalue.Object {
	t.Helper()
	o, err := jsonvalue.ParseObject([]byte(text), "schema")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// body strips the header line and the blank line after it.
func body(ts []byte) string {
	return strings.TrimPrefix(string(ts), "// "+Header+"\n\n")
}

func TestTypeScriptRendering(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		opts   TSOptions
		want   string
	}{
		{
			name:   "required, optional and nullable stay apart",
			schema: `{"title":"T","type":"object","required":["a","c"],"properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":["string","null"]},"d":{"type":["number","null"]}}}`,
			want:   "export interface T {\n  a: string;\n  b?: number;\n  c: string | null;\n  d?: number | null;\n}\n",
		},
		{
			name:   "enum with tuple",
			schema: `{"title":"Color","type":"string","enum":["red","green"]}`,
			opts:   TSOptions{Names: map[string]TSName{"": {Name: "Color", Tuple: "COLORS"}}},
			want:   "export type Color = \"red\" | \"green\";\n\n/** The values of Color, in order. */\nexport const COLORS = [\"red\", \"green\"] as const;\n",
		},
		{
			name:   "const, any, boolean schemas and arrays",
			schema: `{"title":"T","type":"object","properties":{"k":{"const":"x"},"n":{"const":1},"any":{},"t":true,"f":false,"arr":{"type":"array","items":{"type":["string","null"]}},"raw":{"type":"array"}}}`,
			want: "export interface T {\n  k?: \"x\";\n  n?: 1;\n  any?: JsonValue;\n  t?: JsonValue;\n  f?: never;\n  arr?: (string | null)[];\n  raw?: JsonValue[];\n}\n" +
				"\n/** Any JSON value. */\nexport type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };\n",
		},
		{
			name:   "maps and closed empty objects",
			schema: `{"title":"T","type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}},"none":{"type":"object","additionalProperties":false},"empty":{"type":"object","properties":{}}}}`,
			want:   "export interface T {\n  m?: { [key: string]: string };\n  none?: { [key: string]: never };\n  empty?: {};\n}\n",
		},
		{
			name:   "defs, refs, extends and a discriminated union",
			schema: `{"title":"Root","$ref":"#/$defs/Shape","$defs":{"Shape":{"oneOf":[{"$ref":"#/$defs/Circle"},{"$ref":"#/$defs/Square"}]},"Base":{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}},"Circle":{"allOf":[{"$ref":"#/$defs/Base"}],"type":"object","required":["kind"],"properties":{"kind":{"const":"circle"},"r":{"type":"number"}}},"Square":{"allOf":[{"$ref":"#/$defs/Base"}],"type":"object","properties":{"kind":{"const":"square"}}}}}`,
			want: "export type Shape = Circle | Square;\n\nexport interface Base {\n  id: string;\n}\n\n" +
				"export interface Circle extends Base {\n  kind: \"circle\";\n  r?: number;\n}\n\nexport interface Square extends Base {\n  kind?: \"square\";\n}\n",
		},
		{
			name:   "inline object hoisted by name, docs from overlay and description",
			schema: `{"title":"T","description":"The root.","type":"object","required":["s"],"properties":{"s":{"description":"Inner.","type":"object","required":["x"],"properties":{"x":{"type":"string","description":"An x."}}}}}`,
			opts:   TSOptions{Names: map[string]TSName{"/properties/s": {Name: "Inner"}}, Docs: map[string]string{"/properties/s": "Overlay doc."}},
			want:   "/** The root. */\nexport interface T {\n  /** Overlay doc. */\n  s: Inner;\n}\n\n/** Overlay doc. */\nexport interface Inner {\n  /** An x. */\n  x: string;\n}\n",
		},
		{
			name:   "exclusive required members",
			schema: `{"title":"P","type":"object","required":["k"],"properties":{"k":{"const":"p"},"a":{"type":"string"},"b":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`,
			want:   "export type P = {\n  k: \"p\";\n} & (\n  | { a: string; b?: never }\n  | { b: string; a?: never }\n);\n",
		},
		{
			name:   "nullable anyOf and quoted keys",
			schema: `{"title":"T","type":"object","properties":{"x-y":{"anyOf":[{"type":"string","enum":["a"]},{"type":"null"}]}}}`,
			want:   "export interface T {\n  \"x-y\"?: \"a\" | null;\n}\n",
		},
		{
			name:   "long unions break one alternative per line",
			schema: `{"title":"Long","type":"string","enum":["aaaaaaaaaaaa","bbbbbbbbbbbb","cccccccccccc","dddddddddddd","eeeeeeeeeeee","ffffffffffff","gggggggggggg"]}`,
			want:   "export type Long =\n  | \"aaaaaaaaaaaa\"\n  | \"bbbbbbbbbbbb\"\n  | \"cccccccccccc\"\n  | \"dddddddddddd\"\n  | \"eeeeeeeeeeee\"\n  | \"ffffffffffff\"\n  | \"gggggggggggg\";\n",
		},
		{
			name:   "constants",
			schema: `{"title":"T","type":"string"}`,
			opts: TSOptions{Constants: []TSConst{
				{Name: "S", Value: "a\"b", Doc: "A string."}, {Name: "N", Value: int64(100)}, {Name: "F", Value: 0.5},
				{Name: "B", Value: true}, {Name: "L", Value: []string{".", "\t"}},
			}},
			want: "/** A string. */\nexport const S = \"a\\\"b\" as const;\n\nexport const N = 100 as const;\n\nexport const F = 0.5 as const;\n\n" +
				"export const B = true as const;\n\nexport const L = [\".\", \"\\t\"] as const;\n\nexport type T = string;\n",
		},
		{
			name:   "file doc and a long wrapped comment with a closing marker",
			schema: `{"title":"T","description":"This description is long enough that it has to be wrapped over two lines of the doc comment, and it says */ too.","type":"boolean"}`,
			opts:   TSOptions{Doc: "File doc."},
			want: "/** File doc. */\n\n/**\n * This description is long enough that it has to be wrapped over two lines of the doc comment, and\n" +
				" * it says *\\/ too.\n */\nexport type T = boolean;\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := TypeScript(mustObject(t, tt.schema), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := body(ts); got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestTypeScriptErrors(t *testing.T) {
	tests := []struct {
		name, schema string
		opts         TSOptions
		want         string
	}{
		{"unsupported keyword", `{"title":"T","type":"string","format":"email"}`, TSOptions{}, "keyword format is not supported"},
		{"no root name", `{"type":"string"}`, TSOptions{}, "root schema needs a title"},
		{"bad identifier", `{"title":"not ok","type":"string"}`, TSOptions{}, "is not an identifier"},
		{"remote ref", `{"title":"T","type":"object","properties":{"a":{"$ref":"other.json"}}}`, TSOptions{}, "only local references"},
		{"unnamed ref target", `{"title":"T","type":"object","properties":{"a":{"$ref":"#/properties/b"},"b":{"type":"string"}}}`, TSOptions{}, "has no TypeScript name"},
		{"ref beside keywords", `{"title":"T","type":"object","properties":{"a":{"$ref":"#/$defs/X","type":"string"}},"$defs":{"X":{"type":"string"}}}`, TSOptions{}, "$ref beside other keywords"},
		{"allOf of inline schemas", `{"title":"T","allOf":[{"type":"object"}]}`, TSOptions{}, "only $ref entries"},
		{"oneOf beside properties", `{"title":"T","type":"object","properties":{"a":{}},"oneOf":[{"type":"string"}]}`, TSOptions{}, "{required:[name]}"},
		{"unknown type", `{"title":"T","type":"date"}`, TSOptions{}, "unknown type"},
		{"empty enum", `{"title":"T","enum":[]}`, TSOptions{}, "non-empty array"},
		{"object enum", `{"title":"T","enum":[{}]}`, TSOptions{}, "not a JSON scalar"},
		{"duplicate names", `{"title":"X","type":"object","properties":{},"$defs":{"X":{"type":"string"}}}`, TSOptions{}, "declared at"},
		{"tuple without enum", `{"title":"T","type":"string"}`, TSOptions{Names: map[string]TSName{"": {Name: "T", Tuple: "TS"}}}, "a tuple needs an enum"},
		{"bad constant", `{"title":"T","type":"string"}`, TSOptions{Constants: []TSConst{{Name: "X", Value: struct{}{}}}}, "unsupported value type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := TypeScript(mustObject(t, tt.schema), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// FuzzTypeScript renders arbitrary JSON objects as schemas: the renderer never panics and is
// deterministic.
func FuzzTypeScript(f *testing.F) {
	f.Add([]byte(`{"title":"T","type":"object","required":["a"],"properties":{"a":{"type":["string","null"]}}}`))
	f.Add([]byte(`{"title":"R","$ref":"#/$defs/A","$defs":{"A":{"oneOf":[{"$ref":"#/$defs/B"}]},"B":{"allOf":[{"$ref":"#/$defs/A"}],"properties":{}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := jsonvalue.ParseObject(data, "schema")
		if err != nil {
			return
		}
		a, errA := TypeScript(doc, TSOptions{})
		b, errB := TypeScript(doc, TSOptions{})
		if (errA == nil) != (errB == nil) || string(a) != string(b) {
			t.Fatalf("not deterministic: %v / %v", errA, errB)
		}
		if errA == nil && !strings.HasPrefix(string(a), "// "+Header+"\n") {
			t.Fatalf("no header: %q", a)
		}
	})
}
