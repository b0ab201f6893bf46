package jsonvalue

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestParseFaults(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name, text, label, want string
	}{
		{"empty", "", "", "value is not valid JSON text at byte offset 0."},
		{"only space", "  ", "", "value is not valid JSON text at byte offset 2."},
		{"trailing comma", "[1,]", "", "value is not valid JSON text at byte offset 3."},
		{"trailing comma object", `{"a":1,}`, "", "value is not valid JSON text at byte offset 7."},
		{"leading zero", "01", "", "value is not valid JSON text at byte offset 1."},
		{"leading zero in array", "[01]", "", "value is not valid JSON text at byte offset 2."},
		{"bad escape", `"\x"`, "", "value is not valid JSON text at byte offset 2."},
		{"bom", "\xef\xbb\xbf{}", "", "value is not valid JSON text at byte offset 0."},
		{"comment", "[1 /* c */]", "", "value is not valid JSON text at byte offset 3."},
		{"single quotes", "'a'", "", "value is not valid JSON text at byte offset 0."},
		{"NaN", "NaN", "", "value is not valid JSON text at byte offset 0."},
		{"Infinity", "[Infinity]", "", "value is not valid JSON text at byte offset 1."},
		{"plus", "+1", "", "value is not valid JSON text at byte offset 0."},
		{"trailing text", "{} x", "Agent event", "Agent event is not valid JSON text at byte offset 3."},
		{"control char", "\"a\x01\"", "", "value is not valid JSON text at byte offset 2."},
		{"raw newline in string", "\"a\nb\"", "", "value is not valid JSON text at byte offset 2."},
		{"unterminated", `{"a":"b`, "", "value is not valid JSON text at byte offset 7."},
		{"truncated literal", "tru", "", "value is not valid JSON text at byte offset 3."},
		{"bad literal", "trux", "", "value is not valid JSON text at byte offset 3."},
		{"missing colon", `{"a" 1}`, "", "value is not valid JSON text at byte offset 5."},
		{"minus alone", "-", "", "value is not valid JSON text at byte offset 1."},
		{"minus letter", "-a", "", "value is not valid JSON text at byte offset 1."},
		{"frac missing", "1.]", "", "value is not valid JSON text at byte offset 2."},
		{"exp missing", "1e", "", "value is not valid JSON text at byte offset 2."},
		{"exp sign missing", "1e+", "", "value is not valid JSON text at byte offset 3."},
		{"bad hex", `"\u12G4"`, "", "value is not valid JSON text at byte offset 5."},
		{"vertical tab white space", "\v1", "", "value is not valid JSON text at byte offset 0."},
		{"duplicate", `{"eventId":"a","eventId":"b"}`, "Agent event", `Agent event contains duplicate member name "eventId".`},
		{"duplicate escaped", `{"a":1,"\u0061":2}`, "Agent event", `Agent event contains duplicate member name "a".`},
		{"duplicate nested", `{"x":[{"q\n":1,"q\n":2}]}`, "", `value.x[0] contains duplicate member name "q\n".`},
		{"invalid utf8 value", "{\"runId\":\"a\xffb\"}", "Agent event", "Agent event.runId contains invalid UTF-8."},
		{"invalid utf8 name", "{\"a\":{\"b\xff\":1}}", "", "value.a contains invalid UTF-8."},
		{"utf8 surrogate bytes", "[\"\xed\xa0\x80\"]", "", "value[0] contains invalid UTF-8."},
		{"unpaired high", `{"runId":"\ud800"}`, "Agent event", "Agent event.runId contains an unpaired surrogate."},
		{"unpaired low", `["\udc00"]`, "", "value[0] contains an unpaired surrogate."},
		{"high then high", `["\ud800\ud800"]`, "", "value[0] contains an unpaired surrogate."},
		{"high then bad escape", `["\ud800\x"]`, "", "value[0] contains an unpaired surrogate."},
		{"unpaired in name", `{"\udfff":1}`, "", "value contains an unpaired surrogate."},
		{"overflow", `{"usage":{"costUsd":1e400}}`, "Agent event", "Agent event.usage.costUsd must contain only finite JSON numbers."},
		{"negative overflow", `[-1e309]`, "", "value[0] must contain only finite JSON numbers."},
		{"too deep", deep(129), "", "value" + strings.Repeat("[0]", 128) + " exceeds the maximum nesting depth of 128."},
		{"too deep object", `{"a":` + deep(128) + `}`, "", "value.a" + strings.Repeat("[0]", 127) + " exceeds the maximum nesting depth of 128."},
		{"first fault wins", "[\"\xff\", 1e400]", "", "value[0] contains invalid UTF-8."},
		{"grammar before duplicate", `{"a":1,"a":2,]`, "", `value contains duplicate member name "a".`},
		{"fault before grammar", `[1e400,]`, "", "value[0] must contain only finite JSON numbers."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Parse([]byte(tc.text), tc.label)
			if err == nil {
				t.Fatalf("Parse(%q) = %#v, want error %q", tc.text, v, tc.want)
			}
			var je *JSONValidationError
			if !errors.As(err, &je) {
				t.Fatalf("error %T is not *JSONValidationError", err)
			}
			if err.Error() != tc.want {
				t.Fatalf("Parse(%q):\n got %q\nwant %q", tc.text, err.Error(), tc.want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"depth 128", strings.Repeat("[", 128) + strings.Repeat("]", 128), strings.Repeat("[", 128) + strings.Repeat("]", 128)},
		{"underflow", `[1e-400,-1e-400]`, `[0,0]`},
		{"proto names", `{"__proto__":1,"constructor":2}`, `{"__proto__":1,"constructor":2}`},
		{"white space", " \t\r\n{ \"a\" : [ 1 , 2 ] } \r\n", `{"a":[1,2]}`},
		{"escapes", `"\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00"`, "\"\\\"\\\\/\\b\\f\\n\\r\\tAé😀\""},
		{"numbers", `[1.0,-0,1E2,2.5e-3,9007199254740993,123456789012345678]`, `[1,0,100,0.0025,9007199254740992,123456789012345680]`},
		{"member order kept", `{"b":1,"a":2}`, `{"b":1,"a":2}`},
		{"null member", `{"a":null}`, `{"a":null}`},
		{"html not escaped", `"<&>\u2028"`, "\"<&>\u2028\""},
		{"control escaped lower hex", `"\u001f\u007f"`, "\"\\u001f\x7f\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Parse([]byte(tc.text), "")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestObjectAbsentVersusNull(t *testing.T) {
	o, err := ParseObject([]byte(`{"a":null}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := o.Get("a"); !ok || v != nil {
		t.Fatalf("Get(a) = %v, %v; want nil, true", v, ok)
	}
	if _, ok := o.Get("b"); ok {
		t.Fatal("Get(b) reported present")
	}
	if _, err := ParseObject([]byte(`[]`), "Agent event"); err == nil || err.Error() != "Agent event must be a JSON object." {
		t.Fatalf("ParseObject([]) = %v", err)
	}
}

func TestObjectManyMembers(t *testing.T) {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < 100; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + itoa(i) + `":` + itoa(i))
	}
	dup := b.String() + `,"k7":1}`
	b.WriteByte('}')
	o, err := ParseObject([]byte(b.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := o.Get("k77"); !ok || v != 77.0 {
		t.Fatalf("Get(k77) = %v, %v", v, ok)
	}
	o.Delete("k3")
	if o.Has("k3") || o.Len() != 99 {
		t.Fatal("Delete failed")
	}
	if v, _ := o.Get("k99"); v != 99.0 {
		t.Fatal("index broken after Delete")
	}
	if _, err := Parse([]byte(dup), ""); err == nil || err.Error() != `value contains duplicate member name "k7".` {
		t.Fatalf("duplicate in large object: %v", err)
	}
}

func TestParseInvalidUTF8Hex(t *testing.T) {
	// Overlong encodings and stray continuation bytes are invalid UTF-8 too.
	for _, h := range []string{"c0af", "80", "f8888080", "eda080", "f4908080"} {
		raw, _ := hex.DecodeString(h)
		text := append(append([]byte(`["`), raw...), '"', ']')
		_, err := Parse(text, "")
		if err == nil || err.Error() != "value[0] contains invalid UTF-8." {
			t.Errorf("%s: got %v", h, err)
		}
	}
}
