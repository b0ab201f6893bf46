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

// Corpus tallies a conformance corpus replayed against a model: every document the Go side
// (Who: "validators", "codec") accepts must be valid under the schema, and every refused one
// that parses as strict JSON must be refused by it, except those listed in NotExpressible
// (case name → why the schema cannot say it), each of which must be such a case.
type Corpus struct {
	T              testing.TB
	Who            string
	ListName       string            // the Go name of NotExpressible, for the messages
	NotExpressible map[string]string // case name → reason

	seen                          map[string]bool
	accepted, refused, strictJSON int
}

// Check records one case: valid and verr are the Go side's verdict, doc the document, def the
// compiled definition it is checked against (defName for the messages).
func (c *Corpus) Check(name, defName string, def *jsonschema.Schema, doc []byte, valid bool, verr error) {
	c.T.Helper()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if _, err := jsonvalue.Parse(doc, "document"); err != nil {
		if valid {
			c.T.Errorf("%s: accepted, but not strict JSON: %v", name, err)
		}
		c.strictJSON++ // strict JSON (depth, duplicates, overflow): the codec's business
		return
	}
	serr := Verdict(c.T, def, doc)
	reason, listed := c.NotExpressible[name]
	switch {
	case valid && serr != nil:
		c.T.Errorf("%s ($defs/%s): accepted by the %s, refused by the schema: %v", name, defName, c.Who, serr)
	case valid:
		c.accepted++
	case serr != nil:
		c.refused++
		if listed {
			c.T.Errorf("%s: listed as not expressible (%s), but the schema refuses it", name, reason)
		}
	case listed:
		c.seen[name] = true
	default:
		c.T.Errorf("%s ($defs/%s): refused by the %s (%v), accepted by the schema", name, defName, c.Who, verr)
	}
}

// Finish checks that every listed case was met as expected and that at least minAccepted
// accepted and minRefused refused documents were checked, and logs the counts.
func (c *Corpus) Finish(minAccepted, minRefused int) {
	c.T.Helper()
	for name, reason := range c.NotExpressible {
		if !c.seen[name] {
			c.T.Errorf("%s lists %s (%s), which is not a refused case the schema accepts", c.ListName, name, reason)
		}
	}
	if c.accepted < minAccepted || c.refused < minRefused {
		c.T.Errorf("only %d accepted and %d refused documents checked", c.accepted, c.refused)
	}
	c.T.Logf("%d accepted documents valid, %d refusals refused, %d not expressible, %d strict-JSON faults skipped",
		c.accepted, c.refused, len(c.NotExpressible), c.strictJSON)
}
