package wire

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
)

func skipAll(data string) error {
	return DecodeDocument([]byte(data), "doc", func(d *Decoder) error { return d.Skip() })
}

func TestDuplicateDetectionManyMembers(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, `"m%02d":%d,`, i, i)
	}
	ok := b.String()[:b.Len()-1] + "}"
	if err := skipAll(ok); err != nil {
		t.Fatal(err)
	}
	for _, dup := range []string{"m00", "m16", "m17", "m39"} {
		in := ok[:len(ok)-1] + `,"` + dup + `":1}`
		err := skipAll(in)
		_, jerr := jsonvalue.Parse([]byte(in), "doc")
		if err == nil || jerr == nil || err.Error() != jerr.Error() {
			t.Fatalf("%s: %v vs %v", dup, err, jerr)
		}
	}
	// Escaped names are compared decoded.
	if err := skipAll(`{"a":1,"\u0061":2}`); err == nil || err.Error() != `doc contains duplicate member name "a".` {
		t.Fatal(err)
	}
}

func TestFindTag(t *testing.T) {
	cases := []struct {
		in    string
		tag   string
		state TagState
		err   string
	}{
		{`{"x":1,"kind":"org"}`, "org", TagFound, ""},
		{`{"x":1}`, "", TagMissing, ""},
		{`{"kind":1}`, "", TagNotString, ""},
		{`{"kind":"a","kind":"b"}`, "", TagMissing, `doc contains duplicate member name "kind".`},
		{`{"kind":"a","x":tru}`, "", TagMissing, "doc is not valid JSON text at byte offset 19."},
		{`[1]`, "", TagMissing, "doc must be a JSON object."},
	}
	for _, tc := range cases {
		var tag string
		var state TagState
		err := DecodeDocument([]byte(tc.in), "doc", func(d *Decoder) error {
			var err error
			tag, state, err = d.FindTag("kind")
			if err != nil {
				return err
			}
			return d.Skip() // the object is still there to read
		})
		if tag != tc.tag || state != tc.state || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s: %q %v %v", tc.in, tag, state, err)
		}
	}
}

func TestCompactKeepsNumbers(t *testing.T) {
	out, err := Compact([]byte(" { \"a\" : [ 1.50 , -0 , 1e400 ] } "), "v")
	if err == nil {
		t.Fatalf("1e400 overflows a double: %s", out)
	}
	out, err = Compact([]byte(" { \"a\\u0041\" : [ 1.50 , -0 , 12345678901234567890, \"\\u2028\\/\" ] } "), "v")
	if err != nil || string(out) != "{\"aA\":[1.50,-0,12345678901234567890,\"\u2028/\"]}" {
		t.Fatalf("%s %v", out, err)
	}
}

func TestObjectDupHook(t *testing.T) {
	err := DecodeDocument([]byte(`{"a":1,"b":2,"b":3}`), "doc", func(d *Decoder) error {
		return d.ObjectDup(func([]byte) error { return d.Skip() }, func(name []byte) error {
			return d.Wrap(NewValidationError("dup " + string(name)))
		})
	})
	var de *DecodeError
	if !errors.As(err, &de) || err.Error() != "dup b" || de.Field != "b" {
		t.Fatalf("%v %+v", err, de)
	}
}

func TestUintForms(t *testing.T) {
	for in, want := range map[string]string{
		`7`:                    "",
		`0`:                    "",
		`18446744073709551615`: "",
		`18446744073709551616`: "doc must be an integer from 0 to 18446744073709551615.",
		`-0`:                   "doc must be an integer from 0 to 18446744073709551615.",
		`7.0`:                  "doc must be an integer from 0 to 18446744073709551615.",
		`7e0`:                  "doc must be an integer from 0 to 18446744073709551615.",
		`"7"`:                  "doc must be an integer from 0 to 18446744073709551615.",
		`null`:                 "doc must not be null.",
		`07`:                   "doc is not valid JSON text at byte offset 1.",
		`x`:                    "doc is not valid JSON text at byte offset 0.",
	} {
		err := DecodeDocument([]byte(in), "doc", func(d *Decoder) error { _, err := d.Uint(^uint64(0)); return err })
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
