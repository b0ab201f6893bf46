package jsonvalue

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// docSeeds are texts that exercise every branch of Doc: escapes in names and values, unsorted
// and sorted objects at several levels, numbers whose ECMAScript form differs from the
// literal, and faults of every kind.
var docSeeds = []string{
	`{"type":"message.part.delta","messageId":"m-1","part":{"type":"text","text":"Hel"},"protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`,
	` { "b" : [ 1 , 2.50 , -0 , 1e21 , 1E2 , 0.0000001 , 12345678901234567890 , -123456789012345 ] , "a" : { "d" : null , "c" : true , "e" : false } } `,
	`{"a":{"b":{"c":[{"z":1,"y":2}]}},"b":[[],{}],"c":""}`,
	`{"\u0061b":1,"a\"q":2,"a\\":3,"a\n":4,"\u00e9":5,"\ud83d\ude00":6,"\ufb33":7}`,
	`["\u0000\u001f\"\\\/\b\f\n\r\t", "\u00e9\u2028", "plain", "é日本"]`,
	`{"x":"\u0022","y":"a\u005cb"}`,
	`[]`, `{}`, `0`, `-0`, `-0.0`, `"s"`, `null`, `true`, `false`, `1.5e-7`, `-1e-7`, `123456789012345`, `1234567890123456`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[1,]`, `{"a":1,}`, `[1e400]`, "[\"\xff\"]", `{"\ud800":1}`, `["\udc00"]`, `01`, `[01]`,
	` `, ``, `{"a" 1}`, `{"a":tru}`, `[1 2]`, `"abc`, `{"k":"v"} x`, "\ufeff[]", `[NaN]`, `[+1]`, `{'a':1}`,
	strings.Repeat("[", 128) + strings.Repeat("]", 128), strings.Repeat("[", 129) + strings.Repeat("]", 129),
	`{"a":` + strings.Repeat(`{"a":`, 127) + `1` + strings.Repeat("}", 128),
	// Objects of one size in different orders, one after the other and nested: the remembered
	// order of the last one must be confirmed, not trusted.
	`{"b":1,"a":2,"c":3}`, `{"c":1,"a":2,"b":3}`, `{"c":1,"b":2,"a":3}`, `{"a":1,"c":2,"b":3}`,
	`{"z":{"b":1,"a":2},"y":{"a":1,"b":{"d":1,"c":2}},"x":[{"b":{},"a":[]},{"a":0,"b":0}]}`,
	`{"\ue000":1,"\ud800\udc00":2,"\u00ff":3}`, `{"\ud800\udc00":1,"\ue000":2,"\u00ff":3}`,
	`{"abcdefgh1":1,"abcdefgh0":2,"abcdefg":3,"abcdefgh":4}`, `{"é\ue000":1,"é\ud83d\ude00":2}`,
	`{"m":{"k17":1,"k16":2,"k15":3,"k14":4,"k13":5,"k12":6,"k11":7,"k10":8,"k9":9,"k8":10,"k7":11,"k6":12,"k5":13,"k4":14,"k3":15,"k2":16,"k1":17,"k0":18}}`,
}

func TestDoc(t *testing.T) {
	d := GetDoc()
	defer PutDoc(d)
	for _, s := range docSeeds {
		checkDoc(t, d, []byte(s))
	}
}

// FuzzDoc checks Doc against Parse on arbitrary bytes: the same first fault, and for a valid
// text the encoding of Parse's value, its canonical form, and the same value at every node.
func FuzzDoc(f *testing.F) {
	for _, s := range docSeeds {
		f.Add([]byte(s))
	}
	d := new(Doc)
	f.Fuzz(func(t *testing.T, data []byte) { checkDoc(t, d, data) })
}

func checkDoc(t *testing.T, d *Doc, data []byte) {
	t.Helper()
	v, perr := Parse(data, "lbl")
	derr := d.Parse(data, "lbl")
	if (perr == nil) != (derr == nil) || perr != nil && perr.Error() != derr.Error() {
		t.Fatalf("%q: Parse %v, Doc.Parse %v", data, perr, derr)
	}
	if derr != nil {
		var je *JSONValidationError
		if !errors.As(derr, &je) {
			t.Fatalf("%q: fault of type %T", data, derr)
		}
		return
	}
	if want := AppendEncoded(nil, v); !bytes.Equal(d.Text(), want) {
		t.Fatalf("%q: Text %q, want %q", data, d.Text(), want)
	}
	if end := checkNode(t, d, 0, v); end != d.Nodes() {
		t.Fatalf("%q: tree ends at node %d of %d", data, end, d.Nodes())
	}
	c, err := CanonicalText(nil, d.Text())
	if err != nil || !bytes.Equal(c, AppendCanonical(nil, v)) {
		t.Fatalf("%q: CanonicalText %q (%v)", data, c, err)
	}
}

// checkNode compares node i with v and returns the index after its subtree.
func checkNode(t *testing.T, d *Doc, i int, v any) int {
	t.Helper()
	off, end := d.Span(i)
	if want := AppendEncoded(nil, v); !bytes.Equal(d.Text()[off:end], want) {
		t.Fatalf("node %d: span %q, want %q", i, d.Text()[off:end], want)
	}
	if got, want := d.AppendCanonical([]byte("x"), i), AppendCanonical([]byte("x"), v); !bytes.Equal(got, want) {
		t.Fatalf("node %d: canonical %q, want %q", i, got, want)
	}
	if !Equal(d.Value(i), v) {
		t.Fatalf("node %d: Value differs", i)
	}
	kind := d.Kind(i)
	switch x := v.(type) {
	case nil:
		if kind != KindNull {
			t.Fatalf("node %d: kind %d, want null", i, kind)
		}
	case bool:
		if kind != KindBool || d.Bool(i) != x {
			t.Fatalf("node %d: kind %d bool %v, want %v", i, kind, d.Bool(i), x)
		}
	case float64:
		if kind != KindNumber || d.Float(i) != x {
			t.Fatalf("node %d: kind %d number %v, want %v", i, kind, d.Float(i), x)
		}
	case string:
		if kind != KindString || d.Unquote(i) != x {
			t.Fatalf("node %d: kind %d string %q, want %q", i, kind, d.Unquote(i), x)
		}
		if view, plain := d.StringView(i); plain != (view == x) || plain != !strings.ContainsAny(x, "\"\\") && !hasControl(x) {
			t.Fatalf("node %d: view %q plain %v for %q", i, view, plain, x)
		}
		if plain := !strings.ContainsAny(x, "\"\\") && !hasControl(x); plain && !d.StringIs(i, x) {
			t.Fatalf("node %d: StringIs(%q) false", i, x)
		}
	case []any:
		if kind != KindArray || d.Len(i) != len(x) {
			t.Fatalf("node %d: kind %d len %d, want array of %d", i, kind, d.Len(i), len(x))
		}
		c := i + 1
		for _, e := range x {
			if d.MemberName(c) != "" {
				t.Fatalf("node %d: element with a name", c)
			}
			c = checkNode(t, d, c, e)
		}
		if c != d.Next(i) {
			t.Fatalf("node %d: Next %d, children end at %d", i, d.Next(i), c)
		}
	case *Object:
		if kind != KindObject || d.Len(i) != x.Len() {
			t.Fatalf("node %d: kind %d len %d, want object of %d", i, kind, d.Len(i), x.Len())
		}
		c := i + 1
		for _, m := range x.Members() {
			if want := string(appendQuoted(nil, m.Name)); `"`+d.MemberName(c)+`"` != want {
				t.Fatalf("node %d: name %q, want %s", c, d.MemberName(c), want)
			}
			if !strings.ContainsAny(m.Name, "\"\\") && !hasControl(m.Name) && d.Member(i, m.Name) != c {
				t.Fatalf("node %d: Member(%q) = %d, want %d", i, m.Name, d.Member(i, m.Name), c)
			}
			c = checkNode(t, d, c, m.Value)
		}
		if c != d.Next(i) {
			t.Fatalf("node %d: Next %d, children end at %d", i, d.Next(i), c)
		}
		if d.Member(i, "\x00absent") != -1 {
			t.Fatalf("node %d: an absent member found", i)
		}
		return c
	}
	return d.Next(i)
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

func BenchmarkDocParse(b *testing.B) {
	d := GetDoc()
	defer PutDoc(d)
	var canon []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(benchEvent)))
	for b.Loop() {
		if err := d.Parse(benchEvent, "Agent event"); err != nil {
			b.Fatal(err)
		}
		canon = d.AppendCanonical(canon[:0], 0)
	}
}
