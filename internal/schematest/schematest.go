// Package schematest compiles the contract packages' JSON Schema models with
// github.com/santhosh-tekuri/jsonschema/v6, the independent oracle their tests check the
// models against (every document the Go validators accept is valid under the model, every
// refusal the schema can express is refused by it). It is imported by tests only.
package schematest

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Dialect is the `$schema` the models are compiled under.
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// CompileDefs registers the schema document doc at url (with `$schema` set to [Dialect]) and
// returns a lookup of its definitions, each compiled on first use; "" is the root.
func CompileDefs(t testing.TB, url string, doc *jsonvalue.Object) func(def string) *jsonschema.Schema {
	t.Helper()
	withDialect := jsonvalue.ObjectOf("$schema", Dialect)
	for _, m := range doc.Members() {
		withDialect.Set(m.Name, m.Value)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, Value(t, withDialect)); err != nil {
		t.Fatal(err)
	}
	compiled := map[string]*jsonschema.Schema{}
	return func(def string) *jsonschema.Schema {
		t.Helper()
		if s, ok := compiled[def]; ok {
			return s
		}
		loc := url
		if def != "" {
			loc += "#/$defs/" + def
		}
		s, err := c.Compile(loc)
		if err != nil {
			t.Fatalf("compile %s: %v", loc, err)
		}
		compiled[def] = s
		return s
	}
}

// Value converts a value of the jsonvalue model to the schema library's value form.
func Value(t testing.TB, v any) any {
	t.Helper()
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	x, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// Verdict validates the JSON text doc (numbers kept exact) under s; text that is not JSON
// fails the test.
func Verdict(t testing.TB, s *jsonschema.Schema, doc []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return s.Validate(v)
}
