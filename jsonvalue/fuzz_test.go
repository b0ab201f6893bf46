package jsonvalue

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// oracleValid asks jsontext (json v2 semantics: duplicate names, invalid UTF-8 and unpaired
// surrogate escapes rejected) whether data is exactly one valid JSON text.
func oracleValid(data []byte) bool { return jsontext.Value(data).IsValid() }

// FuzzParse checks Parse against jsontext: whatever jsontext refuses, Parse refuses; whatever
// jsontext accepts, Parse accepts unless it exceeds the depth limit, overflows a double or
// holds an unpaired surrogate escape (faults jsontext does not report the same way). Accepted
// values re-encode to text that parses to an equal value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, `[1,]`, `{"a":1,"a":2}`, "\"\xff\"", `"\ud800"`, `1e400`, `[[[[]]]]`, `01`,
		`{"__proto__":null}`, `"\u0000"`, " \t\n\r[ ] ", `-0.0e-0`, `{"a":{"b":[true,false,null]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data, "")
		ok := oracleValid(data)
		if err != nil {
			var je *JSONValidationError
			if !errors.As(err, &je) || !strings.HasPrefix(err.Error(), "value") || !strings.HasSuffix(err.Error(), ".") {
				t.Fatalf("malformed error %T %q", err, err)
			}
			if ok {
				msg := err.Error()
				if !strings.HasSuffix(msg, SuffixTooDeep) && !strings.HasSuffix(msg, SuffixNotFinite) && !strings.HasSuffix(msg, SuffixUnpaired) {
					t.Fatalf("jsontext accepts %q but Parse says %q", data, msg)
				}
			}
			return
		}
		if !ok {
			t.Fatalf("Parse accepts %q but jsontext refuses it", data)
		}
		enc := AppendEncoded(nil, v)
		v2, err := Parse(enc, "")
		if err != nil || !Equal(v, v2) {
			t.Fatalf("re-encoding %q gave %q (%v)", data, enc, err)
		}
	})
}

// FuzzCanonical checks that the canonical form is a fixed point, equal for equal values and
// independent of member order.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[2,{"d":null,"c":"x"}]}`, `[1e21,1e-7,-0,0.1]`, `{"\ufb33":1,"\ud83d\ude00":2,"\u00e9":3}`,
		`"\u001f\"\\"`, `123456789.123456789`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data, "")
		if err != nil {
			return
		}
		c1, err := Canonicalize(v)
		if err != nil {
			t.Fatalf("Canonicalize of a parsed value: %v", err)
		}
		v2, err := Parse(c1, "")
		if err != nil {
			t.Fatalf("canonical form %q does not parse: %v", c1, err)
		}
		if !Equal(v, v2) {
			t.Fatalf("canonical form %q changed the value", c1)
		}
		c2 := AppendCanonical(nil, v2)
		if !bytes.Equal(c1, c2) {
			t.Fatalf("canonical form not a fixed point: %q vs %q", c1, c2)
		}
		if FingerprintOf(v) != FingerprintOf(v2) {
			t.Fatal("fingerprints differ for equal values")
		}
		if !jsontext.Value(c1).IsValid() {
			t.Fatalf("canonical form %q is not valid JSON for jsontext", c1)
		}
	})
}

// FuzzDecoder checks that every way of reading text with a Decoder (a token-by-token walk,
// AppendCompact, Skip) and ParseKeepNumbers report exactly Parse's first fault, and that what
// they read is Parse's value.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2.50,-0,"x\u00e9"],"b":{"c":null}}`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `[1e400]`,
		"[\"\xff\"]", `{"x":{"\ud800":1}}`, `[[[[[]]]]]`, `{"k":tru}`, `12345678901234567890`, `{"":{"":[""]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecoder(t, data) })
}
