package toolspec_test

import (
	"fmt"

	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/toolspec"
)

// A spec is built once from the builder primitives; the same value emits the JSON Schema,
// parses calls and renders the refusal a model receives.
func Example() {
	spec := toolspec.MustNew(toolspec.Definition{
		Name:        "demo_note",
		Description: "Post a short note.",
		Arguments: []toolspec.Field{
			toolspec.Key("topic", toolspec.String().Describe("What the note is about.")),
			toolspec.Key("body", toolspec.String().MaxLen(20).Describe("The note.")),
			toolspec.Key("tags", toolspec.Array(toolspec.String().MinLen(1)).MaxItems(2).Optional()),
		},
		Validation: &toolspec.Validation{
			Check:   func(o *jsonvalue.Object) bool { v, _ := o.Get("topic"); return v != "" },
			Message: "topic must not be empty.",
		},
		Strict:  true,
		Example: `{"topic":"build","body":"Green again."}`,
	})

	schema, _ := jsonvalue.Marshal(spec.Schema())
	fmt.Println(string(schema))

	_, problems, _ := spec.ParseJSON([]byte(`{"body":"This note is far too long.","tags":["", "a", "b"],"mood":"happy"}`), toolspec.Strict)
	fmt.Println(spec.Refusal(problems))
	// Output:
	// {"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"topic":{"type":"string","description":"What the note is about."},"body":{"type":"string","maxLength":20,"description":"The note."},"tags":{"type":"array","items":{"type":"string","minLength":1},"maxItems":2}},"required":["topic","body"],"additionalProperties":false}
	// demo_note was not called: 5 problems
	// - topic is required (string)
	// - body is 6 characters over the 20-character limit (26/20)
	// - tags.0 must be at least 1 character
	// - tags has 3 items; the limit is 2
	// - unknown field "mood"; allowed: topic, body, tags
	// - Allowed keys: topic, body, tags
	// - Example: demo_note({"topic":"build","body":"Green again."})
}
