package events_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

type (
	tsMap = map[string]any
	tsArr = []any
)

// tsSchemaString is a named string type: kind string, so a string for the classification.
type tsSchemaString string

// tsFreshValuer returns a new self-referencing schema on every call, so no container is ever
// seen twice: only the evaluation depth bound stops it.
type tsFreshValuer struct{}

func (tsFreshValuer) JSONValue() (any, error) {
	return tsMap{"allOf": tsArr{tsFreshValuer{}, tsFreshValuer{}}}, nil
}

func TestValidateToolParameters(t *testing.T) {
	selfProps := tsMap{"type": "object"}
	selfProps["properties"] = tsMap{"a": selfProps}
	selfAsProps := tsMap{"type": "object"}
	selfAsProps["properties"] = selfAsProps
	selfItems := tsMap{"type": "object"}
	selfItems["items"] = selfItems
	allOfSelf := tsArr{nil}
	allOfSelf[0] = allOfSelf
	selfEntry := tsMap{"type": "object"}
	selfEntry["anyOf"] = tsArr{selfEntry}

	cases := []struct {
		name   string
		params any
		want   string
		kind   string
	}{
		// §14 cases 63–66, 73, 74.
		{"63 true", true, "Tool parameters must be a JSON schema object: weather", kindVal},
		{"63 string root type", tsMap{"type": "string"}, "Tool parameters must have an object root type: weather", kindVal},
		{"64 property not a schema", tsMap{"type": "object", "properties": tsMap{"city": "string"}}, "Tool parameters contain an invalid JSON schema at $.properties.city: weather", kindVal},
		{"65 format", tsMap{"type": "object", "properties": tsMap{"city": tsMap{"type": "string", "format": "x"}}}, "Tool parameters use unsupported JSON schema keyword format at $.properties.city: weather", kindVal},
		{"66 type array", tsMap{"type": "object", "properties": tsMap{"city": tsMap{"type": tsArr{"string", "null"}}}}, "Tool parameters contain an invalid JSON schema type at $.properties.city: weather", kindVal},
		{"66 blank required", tsMap{"type": "object", "required": tsArr{" "}}, "Tool parameters required entries must be non-empty strings at $.required[0]: weather", kindVal},
		{"73 oneOf before items", tsMap{"type": "object", "oneOf": 5, "items": tsMap{"format": "x"}}, "Tool parameters oneOf must be an array at $: weather", kindVal},
		{"74 format NaN", tsMap{"type": "object", "properties": tsMap{"a": tsMap{"format": math.NaN()}}}, "Tool parameters use unsupported JSON schema keyword format at $.properties.a: weather", kindVal},
		{"74 type NaN", tsMap{"type": math.NaN()}, "Tool parameters must have an object root type: weather", kindVal},
		{"74 title NaN", tsMap{"type": "object", "title": math.NaN()}, "Tool parameters: weather.title must contain only finite JSON numbers.", kindJSON},

		// Step 1 and 2.
		{"false", false, "Tool parameters must be a JSON schema object: weather", kindVal},
		{"nil", nil, "Tool parameters must be a JSON schema object: weather", kindVal},
		{"nil map", tsMap(nil), "Tool parameters must be a JSON schema object: weather", kindVal},
		{"array", tsArr{}, "Tool parameters must be a JSON schema object: weather", kindVal},
		{"typed map", map[string]string{"type": "object"}, "Tool parameters must be a JSON schema object: weather", kindVal},
		{"no type", tsMap{}, "Tool parameters must have an object root type: weather", kindVal},
		{"type list", tsMap{"type": tsArr{"object"}}, "Tool parameters must have an object root type: weather", kindVal},
		{"root type before keyword", tsMap{"$ref": "#", "type": "string"}, "Tool parameters must have an object root type: weather", kindVal},
		{"named string root type", tsMap{"type": tsSchemaString("object")}, "", kindNone},
		{"JSONValuer root", valValuer{v: tsMap{"type": "object"}}, "", kindNone},
		{"Object root", jsonvalue.ObjectOf("type", "object"), "", kindNone},

		// b) keywords in visiting order.
		{"$ref at root", tsMap{"type": "object", "$ref": "#/x"}, "Tool parameters use unsupported JSON schema keyword $ref at $: weather", kindVal},
		{"map order", tsMap{"type": "object", "pattern": "x", "format": "y"}, "Tool parameters use unsupported JSON schema keyword format at $: weather", kindVal},
		{"Object document order", jsonvalue.ObjectOf("type", "object", "pattern", "x", "format", "y"), "Tool parameters use unsupported JSON schema keyword pattern at $: weather", kindVal},
		{"keyword before type", tsMap{"type": "object", "properties": tsMap{"a": tsMap{"type": 5, "default": 1}}}, "Tool parameters use unsupported JSON schema keyword default at $.properties.a: weather", kindVal},
		{"nullable", tsMap{"type": "object", "nullable": true}, "Tool parameters use unsupported JSON schema keyword nullable at $: weather", kindVal},
		{"all allowed keywords", tsMap{"$schema": "https://json-schema.org/draft/2020-12/schema", "title": 1, "description": tsMap{"format": 1}, "type": "object",
			"properties": tsMap{"a": true, "b": false, "c": tsMap{}}, "required": tsArr{"a"}, "additionalProperties": false,
			"items": true, "enum": tsArr{tsMap{"format": 1}}, "const": tsMap{"$ref": 1},
			"oneOf": tsArr{true}, "anyOf": tsArr{tsMap{}}, "allOf": tsArr{}}, "", kindNone},

		// c) type.
		{"type float", tsMap{"type": "object", "properties": tsMap{"a": tsMap{"type": "float"}}}, "Tool parameters contain an invalid JSON schema type at $.properties.a: weather", kindVal},
		{"type null is fine", tsMap{"type": "object", "properties": tsMap{"a": tsMap{"type": "null"}}}, "", kindNone},
		{"type json.Number", tsMap{"type": "object", "properties": tsMap{"a": tsMap{"type": json.Number("1")}}}, "Tool parameters contain an invalid JSON schema type at $.properties.a: weather", kindVal},

		// d) properties.
		{"properties array", tsMap{"type": "object", "properties": tsArr{}}, "Tool parameters properties must be an object at $: weather", kindVal},
		{"properties typed map", tsMap{"type": "object", "properties": map[string]string{}}, "Tool parameters properties must be an object at $: weather", kindVal},
		{"property nil", tsMap{"type": "object", "properties": tsMap{"a": nil}}, "Tool parameters contain an invalid JSON schema at $.properties.a: weather", kindVal},
		{"property array", tsMap{"type": "object", "properties": tsMap{"a": tsArr{}}}, "Tool parameters contain an invalid JSON schema at $.properties.a: weather", kindVal},
		{"properties before required", tsMap{"type": "object", "required": 5, "properties": tsMap{"a": tsMap{"format": 1}}}, "Tool parameters use unsupported JSON schema keyword format at $.properties.a: weather", kindVal},
		{"property schemas in map order", tsMap{"type": "object", "properties": tsMap{"b": 1, "a": 2}}, "Tool parameters contain an invalid JSON schema at $.properties.a: weather", kindVal},
		{"property completely before the next", tsMap{"type": "object", "properties": jsonvalue.ObjectOf("b", tsMap{"items": tsMap{"if": 1}}, "a", 2)}, "Tool parameters use unsupported JSON schema keyword if at $.properties.b.items: weather", kindVal},
		{"properties with keyword names", tsMap{"type": "object", "properties": tsMap{"format": tsMap{"type": "string"}, "$ref": true}}, "", kindNone},

		// e) required.
		{"required not array", tsMap{"type": "object", "required": "city"}, "Tool parameters required must be an array at $: weather", kindVal},
		{"required typed slice", tsMap{"type": "object", "required": []string{"city"}}, "Tool parameters required must be an array at $: weather", kindVal},
		{"required number entry", tsMap{"type": "object", "required": tsArr{"a", 1}}, "Tool parameters required entries must be non-empty strings at $.required[1]: weather", kindVal},
		{"required empty", tsMap{"type": "object", "required": tsArr{""}}, "Tool parameters required entries must be non-empty strings at $.required[0]: weather", kindVal},
		{"required NBSP and BOM", tsMap{"type": "object", "required": tsArr{"\u00a0\ufeff\u3000\u2028\v"}}, "Tool parameters required entries must be non-empty strings at $.required[0]: weather", kindVal},
		{"required zero-width space is not blank", tsMap{"type": "object", "required": tsArr{"\u200b"}}, "", kindNone},
		{"required padded name is fine", tsMap{"type": "object", "required": tsArr{" a "}}, "", kindNone},
		{"required before combinators", tsMap{"type": "object", "required": tsArr{nil}, "oneOf": 1}, "Tool parameters required entries must be non-empty strings at $.required[0]: weather", kindVal},

		// f) oneOf, anyOf, allOf.
		{"anyOf not array", tsMap{"type": "object", "anyOf": tsMap{}}, "Tool parameters anyOf must be an array at $: weather", kindVal},
		{"allOf not array", tsMap{"type": "object", "allOf": true}, "Tool parameters allOf must be an array at $: weather", kindVal},
		{"oneOf entries before anyOf", tsMap{"type": "object", "anyOf": 5, "oneOf": tsArr{tsMap{"x": 1}}}, "Tool parameters use unsupported JSON schema keyword x at $.oneOf[0]: weather", kindVal},
		{"anyOf before allOf", tsMap{"type": "object", "allOf": 5, "anyOf": 5}, "Tool parameters anyOf must be an array at $: weather", kindVal},
		{"allOf entry", tsMap{"type": "object", "allOf": tsArr{true, tsMap{}, "x"}}, "Tool parameters contain an invalid JSON schema at $.allOf[2]: weather", kindVal},
		{"combinators before items", tsMap{"type": "object", "allOf": tsArr{1}, "items": 1}, "Tool parameters contain an invalid JSON schema at $.allOf[0]: weather", kindVal},

		// g) items then additionalProperties; h) enum.
		{"tuple items", tsMap{"type": "object", "properties": tsMap{"a": tsMap{"type": "array", "items": tsArr{tsMap{}}}}}, "Tool parameters contain an invalid JSON schema at $.properties.a.items: weather", kindVal},
		{"items before additionalProperties", tsMap{"type": "object", "additionalProperties": 1, "items": 1}, "Tool parameters contain an invalid JSON schema at $.items: weather", kindVal},
		{"additionalProperties string", tsMap{"type": "object", "additionalProperties": "no"}, "Tool parameters contain an invalid JSON schema at $.additionalProperties: weather", kindVal},
		{"additionalProperties keyword", tsMap{"type": "object", "additionalProperties": tsMap{"minimum": 1}}, "Tool parameters use unsupported JSON schema keyword minimum at $.additionalProperties: weather", kindVal},
		{"enum not array", tsMap{"type": "object", "enum": "a"}, "Tool parameters enum must be an array at $: weather", kindVal},
		{"enum after additionalProperties", tsMap{"type": "object", "enum": "a", "additionalProperties": 1}, "Tool parameters contain an invalid JSON schema at $.additionalProperties: weather", kindVal},
		{"deep path", tsMap{"type": "object", "properties": tsMap{"a": tsMap{"items": tsMap{"properties": tsMap{"b": tsMap{"anyOf": tsArr{true, tsMap{"not": tsMap{}}}}}}}}}, "Tool parameters use unsupported JSON schema keyword not at $.properties.a.items.properties.b.anyOf[1]: weather", kindVal},

		// Step 4: strict JSON of everything the node check does not inspect.
		{"enum member NaN", tsMap{"type": "object", "enum": tsArr{math.NaN()}}, "Tool parameters: weather.enum[0] must contain only finite JSON numbers.", kindJSON},
		{"const func", tsMap{"type": "object", "const": func() {}}, "Tool parameters: weather.const is not JSON-serializable.", kindJSON},
		{"const finite in property", tsMap{"type": "object", "properties": tsMap{"a": tsMap{"const": math.Inf(-1)}}}, "Tool parameters: weather.properties.a.const must contain only finite JSON numbers.", kindJSON},
		{"description struct", tsMap{"type": "object", "description": struct{}{}}, "Tool parameters: weather.description must contain only JSON objects and arrays.", kindJSON},
		{"unsafe integer", tsMap{"type": "object", "title": uint64(1 << 60)}, "Tool parameters: weather.title is an integer outside the JSON safe integer range.", kindJSON},

		// Cycles (§12(i)): the node check stops, step 4 reports.
		{"property is the root", selfProps, "Tool parameters: weather.properties.a contains a circular reference.", kindJSON},
		{"properties is the root", selfAsProps, "Tool parameters: weather.properties contains a circular reference.", kindJSON},
		{"items is the root", selfItems, "Tool parameters: weather.items contains a circular reference.", kindJSON},
		{"anyOf entry is the root", selfEntry, "Tool parameters: weather.anyOf[0] contains a circular reference.", kindJSON},
		{"allOf array holds itself", tsMap{"type": "object", "allOf": allOfSelf}, "Tool parameters contain an invalid JSON schema at $.allOf[0]: weather", kindVal},
		{"shared sub-schema is fine", func() any {
			s := tsMap{"type": "string"}
			return tsMap{"type": "object", "properties": tsMap{"a": s, "b": s}, "anyOf": tsArr{s, s}}
		}(), "", kindNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := events.ValidateToolParameters("weather", tc.params)
			valCheckErr(t, "ValidateToolParameters", err, tc.want, tc.kind)
			if err != nil {
				if o != nil {
					t.Fatal("non-nil result with an error")
				}
				return
			}
			c, _ := events.CloneJSONValue(tc.params, "")
			if !jsonvalue.Equal(o, c) {
				t.Fatal("result is not the clone of the parameters")
			}
		})
	}
}

// tsWeather builds parameters of a "weather" tool from JSON text.
func tsWeather(t *testing.T, text string) any {
	t.Helper()
	return valParse(t, text)
}

func TestValidateToolInput(t *testing.T) {
	const weather = "weather"
	allOfSelf := tsMap{"type": "object"}
	allOfSelf["allOf"] = tsArr{allOfSelf, allOfSelf}
	oneOfSelf := tsMap{}
	oneOfSelf["oneOf"] = tsArr{oneOfSelf}
	propSelf := tsMap{"type": "object"}
	propSelf["properties"] = tsMap{"a": propSelf}
	propSelf["additionalProperties"] = propSelf

	cases := []struct {
		name   string
		params any
		input  any // JSON text when a string starting with '{', '[' or '"'
		want   string
		kind   string
	}{
		// §14 cases 67–70, 72, 75, 76.
		{"67 missing required", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, `{}`, "Missing required input $.city for tool weather.", kindVal},
		{"68 unexpected", `{"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false}`, `{"city":"Oslo","extra":1}`, "Unexpected input $.extra for tool weather.", kindVal},
		{"69 integer 1.5", `{"type":"object","properties":{"days":{"type":"integer"}}}`, `{"days":1.5}`, "Invalid input at $.days for tool weather.", kindVal},
		{"69 integer 2.0", `{"type":"object","properties":{"days":{"type":"integer"}}}`, `{"days":2.0}`, "", kindNone},
		{"integer -0", `{"type":"object","properties":{"days":{"type":"integer"}}}`, `{"days":-0}`, "", kindNone},
		{"70 oneOf two matches", `{"type":"object","properties":{"unit":{"oneOf":[{"type":"string"},{"const":"c"}]}}}`, `{"unit":"c"}`, "Invalid input at $.unit for tool weather.", kindVal},
		{"70 oneOf one match", `{"type":"object","properties":{"unit":{"oneOf":[{"type":"string"},{"const":"c"}]}}}`, `{"unit":"f"}`, "", kindNone},
		{"70 items", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}`, `{"tags":[1]}`, "Invalid input at $.tags[0] for tool weather.", kindVal},
		{"72 allOf discards entry errors", `{"type":"object","allOf":[{"type":"object","required":["city"]}]}`, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"75 input array", `{"type":"object"}`, `[]`, "Tool input: weather must be a JSON object.", kindJSON},
		{"75 input string", `{"type":"object"}`, `"x"`, "Tool input: weather must be a JSON object.", kindJSON},
		{"75 unregistered format ignored", `{"type":"object","properties":{"city":{"type":"string","format":"x"}}}`, `{"city":"Oslo"}`, "", kindNone},
		{"76 document order", `{"type":"object","additionalProperties":false}`, `{"b":1,"0":2}`, "Unexpected input $.b for tool weather.", kindVal},
		{"76 constructor", `{"type":"object","additionalProperties":false}`, `{"constructor":1}`, "Unexpected input $.constructor for tool weather.", kindVal},

		// Step 1: boolean schemas.
		{"true root", true, `{"a":1}`, "", kindNone},
		{"false root", false, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"false property", `{"type":"object","properties":{"x":false}}`, `{"x":null}`, "Invalid input at $.x for tool weather.", kindVal},
		{"false property absent is fine", `{"type":"object","properties":{"x":false}}`, `{}`, "", kindNone},

		// Steps 2 and 3: const and enum by canonical form.
		{"const object any order", `{"type":"object","properties":{"p":{"const":{"a":1,"b":[1,{"c":null}]}}}}`, `{"p":{"b":[1,{"c":null}],"a":1.0}}`, "", kindNone},
		{"const mismatch", `{"type":"object","properties":{"p":{"const":{"a":1}}}}`, `{"p":{"a":1,"b":2}}`, "Invalid input at $.p for tool weather.", kindVal},
		{"const -0 equals 0", `{"type":"object","properties":{"p":{"const":0}}}`, `{"p":-0}`, "", kindNone},
		{"const null", `{"type":"object","properties":{"p":{"const":null}}}`, `{"p":false}`, "Invalid input at $.p for tool weather.", kindVal},
		{"const Go int", tsMap{"type": "object", "properties": tsMap{"p": tsMap{"const": 2}}}, `{"p":2}`, "", kindNone},
		{"const Go map", tsMap{"type": "object", "properties": tsMap{"p": tsMap{"const": tsMap{"k": []any{int8(1)}}}}}, `{"p":{"k":[1]}}`, "", kindNone},
		{"const NaN equals nothing", tsMap{"type": "object", "properties": tsMap{"p": tsMap{"const": math.NaN()}}}, `{"p":0}`, "Invalid input at $.p for tool weather.", kindVal},
		{"const func equals nothing", tsMap{"type": "object", "properties": tsMap{"p": tsMap{"const": func() {}}}}, `{"p":null}`, "Invalid input at $.p for tool weather.", kindVal},
		{"enum member", `{"type":"object","properties":{"u":{"enum":["c","f",null]}}}`, `{"u":null}`, "", kindNone},
		{"enum miss", `{"type":"object","properties":{"u":{"enum":["c","f"]}}}`, `{"u":"k"}`, "Invalid input at $.u for tool weather.", kindVal},
		{"enum empty", `{"type":"object","properties":{"u":{"enum":[]}}}`, `{"u":"k"}`, "Invalid input at $.u for tool weather.", kindVal},
		{"const before type", `{"type":"object","properties":{"u":{"type":"string","const":"a"}}}`, `{"u":"b"}`, "Invalid input at $.u for tool weather.", kindVal},

		// Step 4: combinators.
		{"anyOf none", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`, `{"v":1}`, "Invalid input at $.v for tool weather.", kindVal},
		{"anyOf one", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`, `{"v":null}`, "", kindNone},
		{"anyOf empty", `{"type":"object","anyOf":[]}`, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"allOf empty", `{"type":"object","allOf":[]}`, `{}`, "", kindNone},
		{"oneOf none", `{"type":"object","oneOf":[false]}`, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"allOf nested path", `{"type":"object","properties":{"loc":{"allOf":[{"properties":{"lat":{"type":"number"}}}]}}}`, `{"loc":{"lat":"x"}}`, "Invalid input at $.loc for tool weather.", kindVal},
		{"additionalProperties alone does not make an object schema", `{"type":"object","anyOf":[{"additionalProperties":false}]}`, `{"a":1}`, "", kindNone},
		{"anyOf discards unexpected", `{"type":"object","anyOf":[{"type":"object","additionalProperties":false}]}`, `{"a":1}`, "Invalid input at $ for tool weather.", kindVal},
		{"entries that are neither object nor boolean never accept", tsMap{"type": "object", "anyOf": tsArr{"x", nil, 1}}, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"combinators before type", `{"type":"string","anyOf":[false]}`, `{}`, "Invalid input at $ for tool weather.", kindVal},

		// Step 5: type.
		{"type null", `{"type":"object","properties":{"v":{"type":"null"}}}`, `{"v":0}`, "Invalid input at $.v for tool weather.", kindVal},
		{"type boolean", `{"type":"object","properties":{"v":{"type":"boolean"}}}`, `{"v":"true"}`, "Invalid input at $.v for tool weather.", kindVal},
		{"type string", `{"type":"object","properties":{"v":{"type":"string"}}}`, `{"v":1}`, "Invalid input at $.v for tool weather.", kindVal},
		{"type number", `{"type":"object","properties":{"v":{"type":"number"}}}`, `{"v":"1"}`, "Invalid input at $.v for tool weather.", kindVal},
		{"type number ok", `{"type":"object","properties":{"v":{"type":"number"}}}`, `{"v":1e-7}`, "", kindNone},
		{"type integer large", `{"type":"object","properties":{"v":{"type":"integer"}}}`, `{"v":1e300}`, "", kindNone},
		{"type array", `{"type":"object","properties":{"v":{"type":"array"}}}`, `{"v":{}}`, "Invalid input at $.v for tool weather.", kindVal},
		{"type object", `{"type":"object","properties":{"v":{"type":"object"}}}`, `{"v":[]}`, "Invalid input at $.v for tool weather.", kindVal},
		{"unknown type never matches", tsMap{"type": "object", "properties": tsMap{"v": tsMap{"type": "float"}}}, `{"v":1}`, "Invalid input at $.v for tool weather.", kindVal},

		// Step 6: objects.
		{"properties implies object", `{"type":"object","properties":{"v":{"properties":{}}}}`, `{"v":[]}`, "Invalid input at $.v for tool weather.", kindVal},
		{"nested missing required", `{"type":"object","properties":{"loc":{"type":"object","required":["lat","lon"]}}}`, `{"loc":{"lat":1}}`, "Missing required input $.loc.lon for tool weather.", kindVal},
		{"required before members", `{"type":"object","properties":{"a":{"type":"string"}},"required":["city"],"additionalProperties":false}`, `{"a":1,"extra":1}`, "Missing required input $.city for tool weather.", kindVal},
		{"required order", `{"type":"object","required":["b","a"]}`, `{}`, "Missing required input $.b for tool weather.", kindVal},
		{"required with null value present", `{"type":"object","required":["a"]}`, `{"a":null}`, "", kindNone},
		{"required __proto__ is ordinary", `{"type":"object","required":["__proto__"]}`, `{}`, "Missing required input $.__proto__ for tool weather.", kindVal},
		{"members in document order", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}`, `{"b":1,"a":1}`, "Invalid input at $.b for tool weather.", kindVal},
		{"Go map input in RFC 8785 order", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}`, tsMap{"b": 1, "a": 1}, "Invalid input at $.a for tool weather.", kindVal},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"number"}}`, `{"x":"a"}`, "Invalid input at $.x for tool weather.", kindVal},
		{"additionalProperties true", `{"type":"object","additionalProperties":true}`, `{"x":"a"}`, "", kindNone},
		{"undeclared without additionalProperties", `{"type":"object","properties":{}}`, `{"x":"a"}`, "", kindNone},
		{"declared not checked by additionalProperties", `{"type":"object","properties":{"a":true},"additionalProperties":false}`, `{"a":[]}`, "", kindNone},
		{"toString undeclared", `{"type":"object","properties":{"a":true},"additionalProperties":{"type":"string"}}`, `{"toString":1}`, "Invalid input at $.toString for tool weather.", kindVal},
		{"member names are raw in paths", `{"type":"object","additionalProperties":false}`, `{"a.b[0]":1}`, "Unexpected input $.a.b[0] for tool weather.", kindVal},

		// Step 7: arrays.
		{"items implies array", `{"type":"object","properties":{"v":{"items":{"type":"string"}}}}`, `{"v":"s"}`, "Invalid input at $.v for tool weather.", kindVal},
		{"type array without items", `{"type":"object","properties":{"v":{"type":"array"}}}`, `{"v":[1,"a",null]}`, "", kindNone},
		{"nested array path", `{"type":"object","properties":{"m":{"type":"array","items":{"type":"array","items":{"type":"integer"}}}}}`, `{"m":[[1],[2,3.5]]}`, "Invalid input at $.m[1][1] for tool weather.", kindVal},
		{"array of objects", `{"type":"object","properties":{"m":{"items":{"required":["id"]}}}}`, `{"m":[{"id":1},{}]}`, "", kindNone},
		{"array of objects typed", `{"type":"object","properties":{"m":{"items":{"type":"object","required":["id"]}}}}`, `{"m":[{"id":1},{}]}`, "Missing required input $.m[1].id for tool weather.", kindVal},
		{"items false", `{"type":"object","properties":{"m":{"items":false}}}`, `{"m":[]}`, "", kindNone},
		{"items false non-empty", `{"type":"object","properties":{"m":{"items":false}}}`, `{"m":[0]}`, "Invalid input at $.m[0] for tool weather.", kindVal},

		// Input faults (§10.3 first check).
		{"input func", `{"type":"object"}`, tsMap{"f": func() {}}, "Tool input: weather.f is not JSON-serializable.", kindJSON},
		{"input nil", `{"type":"object"}`, nil, "Tool input: weather must be a JSON object.", kindJSON},
		{"input Object", `{"type":"object","required":["a"]}`, jsonvalue.ObjectOf("b", 1), "Missing required input $.a for tool weather.", kindVal},

		// Parameters that never passed registration must not panic.
		{"nil parameters", nil, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"string parameters", "x", `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"typed map parameters", map[string]string{"type": "object"}, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"typed property schema", tsMap{"type": "object", "properties": tsMap{"a": map[string]string{}}}, `{"a":1}`, "Invalid input at $.a for tool weather.", kindVal},
		{"non-array required ignored", tsMap{"type": "object", "required": "a"}, `{}`, "", kindNone},
		{"non-string required entries ignored", tsMap{"type": "object", "required": tsArr{1, nil}}, `{}`, "", kindNone},
		{"non-array enum", tsMap{"type": "object", "enum": "a"}, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"non-array allOf", tsMap{"type": "object", "allOf": 5}, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"allOf cycle", allOfSelf, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"oneOf cycle", tsMap{"type": "object", "properties": tsMap{"a": oneOfSelf}}, `{"a":1}`, "Invalid input at $.a for tool weather.", kindVal},
		{"property cycle bounded by input", propSelf, `{"a":{"a":{"b":{}}}}`, "", kindNone},
		{"property cycle rejects non-object", propSelf, `{"a":{"a":{"b":1}}}`, "Invalid input at $.a.a.b for tool weather.", kindVal},
		{"fresh self-recursive JSONValuer", tsMap{"type": "object", "allOf": tsArr{tsFreshValuer{}}}, `{}`, "Invalid input at $ for tool weather.", kindVal},
		{"JSONValuer failing", tsMap{"type": "object", "properties": tsMap{"a": valValuer{err: errTest}}}, `{"a":1}`, "Invalid input at $.a for tool weather.", kindVal},
		{"JSONValuer schema", tsMap{"type": "object", "properties": tsMap{"a": valValuer{v: tsMap{"type": "string"}}}}, `{"a":"x"}`, "", kindNone},
		{"Object value schema", *jsonvalue.ObjectOf("type", "object", "required", tsArr{"a"}), `{}`, "Missing required input $.a for tool weather.", kindVal},
		{"additionalProperties typed map ignored", tsMap{"type": "object", "additionalProperties": map[string]bool{}}, `{"x":1}`, "", kindNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			params := tc.params
			if s, ok := params.(string); ok && len(s) > 0 && s[0] == '{' {
				params = tsWeather(t, s)
			}
			input := tc.input
			if s, ok := input.(string); ok && len(s) > 0 && (s[0] == '{' || s[0] == '[' || s[0] == '"') {
				input = valParse(t, s)
			}
			err := events.ValidateToolInput(params, input, weather)
			valCheckErr(t, "ValidateToolInput", err, tc.want, tc.kind)
			if err != nil && err.Error() == "discarded" {
				t.Fatal("a discarded entry error escaped")
			}
		})
	}
}

var errTest = errors.New("test: no value")

func TestValidateToolDefinition(t *testing.T) {
	exec := func() {}
	params := tsMap{"type": "object", "properties": tsMap{"city": tsMap{"type": "string"}}}
	def := func(mods ...any) tsMap {
		m := tsMap{"name": "weather", "description": "Weather by city.", "parameters": params, "execute": exec}
		for i := 0; i < len(mods); i += 2 {
			if mods[i+1] == valDelete {
				delete(m, mods[i].(string))
				continue
			}
			m[mods[i].(string)] = mods[i+1]
		}
		return m
	}
	taken := func(name string) bool { return name == "taken" }
	cases := []struct {
		name string
		def  any
		want string
	}{
		{"valid", def(), ""},
		{"valid with authorize and requiresApproval", def("authorize", func(any) error { return nil }, "requiresApproval", true), ""},
		{"not an object", []any{}, "Tool must be an object."},
		{"nil", nil, "Tool must be an object."},
		{"name absent", def("name", valDelete), "Tool name must be a non-empty string."},
		{"name number", def("name", 1), "Tool name must be a non-empty string."},
		{"name blank", def("name", " \t\u3000"), "Tool name must be a non-empty string."},
		{"name padded", def("name", " weather"), "Tool name must not have leading or trailing whitespace:  weather"},
		{"name trailing NBSP", def("name", "weather\u00a0"), "Tool name must not have leading or trailing whitespace: weather\u00a0"},
		{"name before description", def("name", "", "description", ""), "Tool name must be a non-empty string."},
		{"description absent", def("description", valDelete), "Tool description: weather must be a non-empty string."},
		{"description blank", def("description", "\n"), "Tool description: weather must be a non-empty string."},
		{"description before execute", def("description", 1, "execute", valDelete), "Tool description: weather must be a non-empty string."},
		{"execute absent", def("execute", valDelete), "Tool execute must be a function: weather"},
		{"execute nil func", def("execute", (func())(nil)), "Tool execute must be a function: weather"},
		{"execute string", def("execute", "run"), "Tool execute must be a function: weather"},
		{"authorize not func", def("authorize", true), "Tool authorize must be a function: weather"},
		{"authorize nil", def("authorize", nil), "Tool authorize must be a function: weather"},
		{"requiresApproval string", def("requiresApproval", "yes"), "Tool requiresApproval must be a boolean: weather"},
		{"requiresApproval before parameters", def("requiresApproval", 1, "parameters", true), "Tool requiresApproval must be a boolean: weather"},
		{"parameters", def("parameters", true), "Tool parameters must be a JSON schema object: weather"},
		{"parameters absent", def("parameters", valDelete), "Tool parameters must be a JSON schema object: weather"},
		{"parameters before taken", def("name", "taken", "parameters", tsMap{"type": "object", "format": 1}), "Tool parameters use unsupported JSON schema keyword format at $: taken"},
		{"taken", def("name", "taken"), "Tool already registered: taken"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := events.ValidateToolDefinition(tc.def, taken)
			valCheckErr(t, "ValidateToolDefinition", err, tc.want, kindVal)
			if err == nil && p.Len() != 2 {
				t.Fatalf("parameters clone %v", p)
			}
		})
	}
	if _, err := events.ValidateToolDefinition(def(), nil); err != nil {
		t.Fatal(err)
	}
	if n, err := events.ValidateToolName(tsSchemaString("x")); err != nil || n != "x" {
		t.Fatalf("ValidateToolName = %q, %v", n, err)
	}
	if err := events.ValidateToolDescription("x", "d"); err != nil {
		t.Fatal(err)
	}
	valCheckErr(t, "ToolAlreadyRegistered", events.ToolAlreadyRegistered("x"), "Tool already registered: x", kindVal)
}

// FuzzToolInput: ValidateToolParameters and ValidateToolInput never panic on any parameters;
// errors are typed and shaped as §10 says; plain Go maps and ordered objects give the same
// verdicts (the schema's member order never matters, the input's only picks which fault is
// reported first).
func FuzzToolInput(f *testing.F) {
	f.Fuzz(func(t *testing.T, paramsText, inputText []byte) {
		params, err := events.ParseJSON(paramsText, "")
		if err != nil {
			params = string(paramsText)
		}
		input, err := events.ParseJSON(inputText, "")
		if err != nil {
			input = string(inputText)
		}
		_, perr := events.ValidateToolParameters("t", params)
		if perr != nil {
			msg := perr.Error()
			if k := valKind(perr); !(k == kindVal && strings.HasPrefix(msg, "Tool parameters ") && strings.HasSuffix(msg, ": t")) &&
				!(k == kindJSON && strings.HasPrefix(msg, "Tool parameters: t")) {
				t.Fatalf("ValidateToolParameters: %T %q", perr, msg)
			}
		}
		err = events.ValidateToolInput(params, input, "t")
		if err != nil {
			msg := err.Error()
			switch valKind(err) {
			case kindJSON:
				if !strings.HasPrefix(msg, "Tool input: t") {
					t.Fatalf("JSON error %q", msg)
				}
			case kindVal:
				if !(strings.HasPrefix(msg, "Invalid input at $") || strings.HasPrefix(msg, "Missing required input $") ||
					strings.HasPrefix(msg, "Unexpected input $")) || !strings.HasSuffix(msg, " for tool t.") {
					t.Fatalf("validation error %q", msg)
				}
			default:
				t.Fatalf("error %T %q", err, msg)
			}
		}
		err2 := events.ValidateToolInput(valToGo(params), input, "t")
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("Object parameters %v, map parameters %v", err, err2)
		}
		if _, isObj := input.(*events.Object); isObj {
			err3 := events.ValidateToolInput(params, valToGo(input), "t")
			if (err == nil) != (err3 == nil) {
				t.Fatalf("Object input %v, map input %v", err, err3)
			}
		}
	})
}
