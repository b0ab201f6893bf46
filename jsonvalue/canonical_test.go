package jsonvalue

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1.5, "-1.5"}, {100, "100"},
		{1e21, "1e+21"}, {1e20, "100000000000000000000"}, {999999999999999900000, "999999999999999900000"},
		{1e-7, "1e-7"}, {0.000001, "0.000001"}, {123e-20, "1.23e-18"}, {5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"}, {math.Float64frombits(0x3FD3333333333334), "0.30000000000000004"},
		{333333333.33333329, "333333333.3333333"}, {1e30, "1e+30"}, {4.50, "4.5"}, {2e-3, "0.002"},
		{0.000000000000000000000000001, "1e-27"}, {9007199254740992, "9007199254740992"},
		{295147905179352830000, "295147905179352830000"}, {-1e-7, "-1e-7"}, {1.5e300, "1.5e+300"},
		{123456.789, "123456.789"}, {-9007199254740991, "-9007199254740991"},
	}
	for _, tc := range tests {
		if got := FormatNumber(tc.in); got != tc.want {
			t.Errorf("FormatNumber(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// The member-sorting example of RFC 8785 §3.2.3.
func TestCanonicalSortsByUTF16(t *testing.T) {
	text := `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh",` +
		`"1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`
	v, err := Parse([]byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Canonicalize(v)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
		"\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	if string(c) != want {
		t.Fatalf("got  %s\nwant %s", c, want)
	}
}

func TestCanonicalRFC8785Values(t *testing.T) {
	text := `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],` +
		`"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`
	v, err := Parse([]byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := Canonicalize(v)
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	if string(c) != want {
		t.Fatalf("got  %s\nwant %s", c, want)
	}
}

func TestFingerprint(t *testing.T) {
	ev := `{"type":"message.part.delta","messageId":"m-1","part":{"type":"text","text":"Hel"},
 "protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1",
 "phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`
	v, err := Parse([]byte(ev), "Agent event")
	if err != nil {
		t.Fatal(err)
	}
	fp, err := Fingerprint(v)
	if err != nil {
		t.Fatal(err)
	}
	if fp != "sha256:2dd49398fc79c44a811403fa8d36fc9516cb13e528e1aa8fe636717867aa684a" {
		t.Fatalf("fingerprint %s", fp)
	}
	// Member order does not change the fingerprint; a different value does.
	v2, _ := Parse([]byte(`{"b":[1,{"y":2,"x":1}],"a":"s"}`), "")
	v3, _ := Parse([]byte(`{"a":"s","b":[1,{"x":1,"y":2.0}]}`), "")
	v4, _ := Parse([]byte(`{"a":"s","b":[{"x":1,"y":2},1]}`), "")
	if FingerprintOf(v2) != FingerprintOf(v3) || FingerprintOf(v2) == FingerprintOf(v4) {
		t.Fatal("fingerprint equality does not follow JSON value equality")
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(FingerprintOf(v4)) {
		t.Fatal("fingerprint format")
	}
}

func TestMarshalIndent(t *testing.T) {
	v, _ := Parse([]byte(`{"a":[],"b":{},"c":[1,{"d":null}]}`), "")
	got, err := MarshalIndent(v, "  ")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		`{`,
		`  "a": [],`,
		`  "b": {},`,
		`  "c": [`,
		`    1,`,
		`    {`,
		`      "d": null`,
		`    }`,
		`  ]`,
		`}`,
	}, "\n")
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCompareUTF16(t *testing.T) {
	// U+FB33 sorts after U+1F600 by UTF-16 code units but before it by code points.
	if CompareUTF16("\ufb33", "\U0001F600") <= 0 {
		t.Fatal("U+FB33 must sort after U+1F600")
	}
	if CompareUTF16("a", "ab") >= 0 || CompareUTF16("b", "a") <= 0 || CompareUTF16("é", "é") != 0 {
		t.Fatal("basic order")
	}
	if CompareUTF16("\U0001F600", "\U0001F601") >= 0 {
		t.Fatal("low surrogate order")
	}
}

func TestAppendQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\", `"q\"b\\"`},
		{"\b\t\n\f\r\x00\x1f\x7f", `"\b\t\n\f\r\u0000\u001f` + "\x7f" + `"`},
		{"<&>\u2028/", "\"<&>\u2028/\""},
		{"a\xffb", "\"a\ufffdb\""},
		{"é😀", `"é😀"`},
	}
	for _, tc := range tests {
		if got := string(AppendQuote(nil, tc.in)); got != tc.want {
			t.Errorf("AppendQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// quoteRef is AppendQuote byte by byte, as it was before its eight-byte fast path: the oracle
// of TestQuoteWordPaths.
func quoteRef(s string, validUTF8 bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf && !validUTF8 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString("\ufffd")
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		if needsEscape[c] {
			b.Write(appendEscape(nil, c))
		} else {
			b.WriteByte(c)
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}

// TestQuoteWordPaths checks AppendQuote and appendQuoted against quoteRef on strings that put
// every kind of byte at every position around the eight-byte boundaries.
func TestQuoteWordPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "Z", " ", "~", "\x7f", "\"", "\\", "\n", "\x00", "\x1f", "é", "日", "😀", "\xff", "\xc3", "\xed\xa0\x80"}
	for range 20000 {
		var b strings.Builder
		for n := r.IntN(40); n > 0; n-- {
			if r.IntN(3) == 0 {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		s := b.String()
		if got, want := string(AppendQuote(nil, s)), quoteRef(s, false); got != want {
			t.Fatalf("AppendQuote(%q) = %q, want %q", s, got, want)
		}
		if utf8.ValidString(s) {
			if got, want := string(appendQuoted(nil, s)), quoteRef(s, true); got != want {
				t.Fatalf("appendQuoted(%q) = %q, want %q", s, got, want)
			}
		}
	}
}
