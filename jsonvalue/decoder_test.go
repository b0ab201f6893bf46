package jsonvalue

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// walk reads one document with the token API the way a typed decoder does and returns the
// compact text it saw (numbers as written) and the first fault.
func walk(data []byte, label string) ([]byte, error) {
	var d Decoder
	d.Reset(data, label)
	if err := d.BeginDocument(); err != nil {
		return nil, err
	}
	out, err := walkValue(&d, nil)
	if err != nil {
		return nil, err
	}
	return out, d.EndDocument()
}

func walkValue(d *Decoder, out []byte) ([]byte, error) {
	switch d.PeekKind() {
	case KindObject:
		if err := d.BeginObject(); err != nil {
			return nil, err
		}
		out = append(out, '{')
		for first := true; ; first = false {
			name, ok, err := d.NextMember()
			if err != nil {
				return nil, err
			}
			if !ok {
				return append(out, '}'), nil
			}
			if !first {
				out = append(out, ',')
			}
			out = append(AppendQuote(out, string(name)), ':')
			if out, err = walkValue(d, out); err != nil {
				return nil, err
			}
		}
	case KindArray:
		if err := d.BeginArray(); err != nil {
			return nil, err
		}
		out = append(out, '[')
		for first := true; ; first = false {
			ok, err := d.NextElement()
			if err != nil {
				return nil, err
			}
			if !ok {
				return append(out, ']'), nil
			}
			if !first {
				out = append(out, ',')
			}
			if out, err = walkValue(d, out); err != nil {
				return nil, err
			}
		}
	case KindString:
		s, err := d.ReadStringBytes()
		return AppendQuote(out, string(s)), err
	case KindNumber:
		tok, err := d.ReadNumber()
		return append(out, tok...), err
	case KindBool:
		b, err := d.ReadBool()
		return strconv.AppendBool(out, b), err
	case KindNull:
		return append(out, "null"...), d.ReadNull()
	}
	return nil, d.SyntaxFault()
}

// sameFault reports whether two errors are equal strict-JSON faults (message and path).
func sameFault(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ja, jb *JSONValidationError
	return errors.As(a, &ja) && errors.As(b, &jb) && *ja == *jb
}

// checkDecoder asserts that every way of reading data with a Decoder agrees with Parse.
func checkDecoder(t *testing.T, data []byte) {
	t.Helper()
	const label = "doc"
	want, perr := Parse(data, label)
	got, err := walk(data, label)
	if !sameFault(err, perr) {
		t.Fatalf("%q: token walk says %v, Parse says %v", data, err, perr)
	}
	var d Decoder
	d.Reset(data, label)
	var compact []byte
	err = d.BeginDocument()
	if err == nil {
		compact, err = d.AppendCompact(nil)
	}
	if err == nil {
		err = d.EndDocument()
	}
	if !sameFault(err, perr) {
		t.Fatalf("%q: AppendCompact says %v, Parse says %v", data, err, perr)
	}
	d.Reset(data, label)
	if err = d.BeginDocument(); err == nil {
		if err = d.Skip(); err == nil {
			err = d.EndDocument()
		}
	}
	if !sameFault(err, perr) {
		t.Fatalf("%q: Skip says %v, Parse says %v", data, err, perr)
	}
	kept, kerr := ParseKeepNumbers(data, label)
	if !sameFault(kerr, perr) {
		t.Fatalf("%q: ParseKeepNumbers says %v, Parse says %v", data, kerr, perr)
	}
	if perr != nil {
		return
	}
	for _, text := range [][]byte{got, compact} {
		v, err := Parse(text, label)
		if err != nil || !Equal(v, want) {
			t.Fatalf("%q: decoder output %q parses to %v (%v)", data, text, v, err)
		}
	}
	if cloned, err := CloneValue(kept, label); err != nil || !Equal(cloned, want) {
		t.Fatalf("%q: CloneValue of the ParseKeepNumbers value is %v (%v)", data, cloned, err)
	}
}

func TestDecoderAgreesWithParse(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	many := func(n int, name func(i int) string) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + name(i) + `":` + itoa(i))
		}
		return b.String()
	}
	escaped := func(i int) string { return `\u006b` + itoa(i) } // "k<i>" spelled with an escape
	texts := []string{
		"", "  ", "[1,]", `{"a":1,}`, "01", `"\x"`, "\xef\xbb\xbf{}", "[1 /* c */]", "NaN", "-", "1.", "1e+",
		`{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`, `{,}`, `[,]`, `{"a":}`, "tru", "trux", "nul", "\x00", `"\u12G4"`,
		`{"a":"b`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":[{"q\n":1,"q\n":2}]}`, "{\"a\":{\"b\xff\":1}}",
		`{"runId":"\ud800"}`, `["\udc00"]`, `["\ud800\x"]`, `{"\udfff":1}`, `{"u":{"c":1e400}}`, `[-1e309]`,
		deep(128), deep(129), `{"a":` + deep(128) + `}`, "[\"\xff\", 1e400]", `{"a":1,"a":2,]`, `[1e400,]`,
		` {"a" : [ 1.50 , -0 , 12345678901234567890, "\u2028\/" ] , "b":{}, "c":[], "d":[{}], "e":true,"f":false,"g":null} `,
		`{"":1,"":2}`, `{"a":{"a":{"a":1}},"b":[[],[{"a":1,"a":1}]]}`,
		many(40, func(i int) string { return "m" + itoa(i) }) + `}`,
		many(40, func(i int) string { return "m" + itoa(i) }) + `,"m17":0}`,
		many(40, escaped) + `,"k39":0}`,
		many(40, escaped) + `,"k0":0}`,
		`{"o":` + many(30, escaped) + `,"in":` + many(30, escaped) + `,"k5":1}},"k1":` + many(20, escaped) + `}}`,
		`{"o":` + many(30, escaped) + `,"in":` + many(30, escaped) + `}},"k1":` + many(20, escaped) + `,"k19":1}}`,
	}
	for _, text := range texts {
		checkDecoder(t, []byte(text))
	}
}

// TestDecoderFuzzCorpus replays the FuzzParse corpus through every Decoder reader.
func TestDecoderFuzzCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "[]byte(") || !strings.HasSuffix(line, ")") {
				continue
			}
			s, err := strconv.Unquote(line[len("[]byte(") : len(line)-1])
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			checkDecoder(t, []byte(s))
			n++
		}
	}
	if n == 0 {
		t.Fatal("no corpus entries")
	}
}

func TestDecoderNumbers(t *testing.T) {
	tests := []struct {
		text, literal, checked, fault string
		float                         float64
	}{
		{"1.0", "1.0", "1.0", "", 1},
		{"-0", "-0", "-0", "", 0},
		{"12345678901234567890", "12345678901234567890", "12345678901234567890", "", 12345678901234567890},
		{"1e400", "1e400", "", "n must contain only finite JSON numbers.", 0},
		{"-1E+2", "-1E+2", "-1E+2", "", -100},
		{"01", "0", "0", "", 0}, // the grammar stops at the leading zero; EndDocument refuses the rest
	}
	for _, tc := range tests {
		var d Decoder
		d.Reset([]byte(tc.text), "n")
		tok, err := d.ReadNumberText()
		if err != nil || string(tok) != tc.literal {
			t.Errorf("%s: ReadNumberText = %q, %v", tc.text, tok, err)
		}
		d.Reset([]byte(tc.text), "n")
		tok, err = d.ReadNumber()
		if got := errString(err); string(tok) != tc.checked || got != tc.fault {
			t.Errorf("%s: ReadNumber = %q, %q", tc.text, tok, got)
		}
		d.Reset([]byte(tc.text), "n")
		f, err := d.ReadFloat()
		if got := errString(err); f != tc.float || got != tc.fault {
			t.Errorf("%s: ReadFloat = %v, %q", tc.text, f, got)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestDecoderReaderOnOtherKind(t *testing.T) {
	tests := []struct {
		text string
		read func(d *Decoder) error
		want string
	}{
		{`1`, func(d *Decoder) error { _, err := d.ReadString(); return err }, "v is not valid JSON text at byte offset 0."},
		{`"a"`, func(d *Decoder) error { _, err := d.ReadNumber(); return err }, "v is not valid JSON text at byte offset 0."},
		{`[]`, func(d *Decoder) error { return d.BeginObject() }, "v is not valid JSON text at byte offset 0."},
		{`{}`, func(d *Decoder) error { return d.BeginArray() }, "v is not valid JSON text at byte offset 0."},
		{``, func(d *Decoder) error { _, err := d.ReadBool(); return err }, "v is not valid JSON text at byte offset 0."},
		{`nul`, func(d *Decoder) error { return d.ReadNull() }, "v is not valid JSON text at byte offset 3."},
		{`x`, func(d *Decoder) error { return d.SyntaxFault() }, "v is not valid JSON text at byte offset 0."},
	}
	for _, tc := range tests {
		var d Decoder
		d.Reset([]byte(tc.text), "v")
		if got := errString(tc.read(&d)); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestDecoderPeekKind(t *testing.T) {
	for text, want := range map[string]Kind{
		"": KindEnd, "x": KindInvalid, "n": KindNull, "t": KindBool, "f": KindBool, "-": KindNumber,
		"7": KindNumber, `"`: KindString, "[": KindArray, "{": KindObject, "+": KindInvalid,
	} {
		var d Decoder
		d.Reset([]byte(text), "")
		if got := d.PeekKind(); got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
}

// TestDecoderDuplicateMember checks what a caller sees at a repeated name: ok with the fault at
// the object's path, and a path that already names the member.
func TestDecoderDuplicateMember(t *testing.T) {
	var d Decoder
	d.Reset([]byte(`{"x":[{"a":1,"a":2}]}`), "doc")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.BeginObject())
	name, ok, err := d.NextMember()
	must(err)
	if !ok || string(name) != "x" || d.Path() != "doc.x" {
		t.Fatalf("%q %v %s", name, ok, d.Path())
	}
	must(d.BeginArray())
	if ok, err = d.NextElement(); !ok {
		t.Fatal(err)
	}
	must(d.BeginObject())
	_, _, err = d.NextMember()
	must(err)
	if _, err := d.ReadFloat(); err != nil || d.Path() != "doc.x[0].a" {
		t.Fatalf("%v %s", err, d.Path())
	}
	name, ok, err = d.NextMember()
	if !ok || string(name) != "a" || err == nil || err.Error() != `doc.x[0] contains duplicate member name "a".` {
		t.Fatalf("%q %v %v", name, ok, err)
	}
	var je *JSONValidationError
	if !errors.As(err, &je) || je.Path != "doc.x[0]" || d.Path() != "doc.x[0].a" {
		t.Fatalf("%+v %s", je, d.Path())
	}
}

// TestDecoderMarkRewind reads an object twice, as a tagged enum does.
func TestDecoderMarkRewind(t *testing.T) {
	var d Decoder
	d.Reset([]byte(`[{"kind":"a","v":1},2]`), "doc")
	if err := d.BeginArray(); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.NextElement(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	m := d.Mark()
	first, err := d.AppendCompact(nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Rewind(m)
	second, err := d.AppendCompact(nil)
	if err != nil || string(first) != string(second) || d.Path() != "doc[0]" {
		t.Fatalf("%s %s %v %s", first, second, err, d.Path())
	}
	if ok, err := d.NextElement(); !ok || err != nil || d.Path() != "doc[1]" {
		t.Fatal(ok, err, d.Path())
	}
}

func TestParseKeepNumbers(t *testing.T) {
	v, err := ParseKeepNumbers([]byte(`{"a":1.0,"b":[-0,12345678901234567890,2e3]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	a, _ := o.Get("a")
	b, _ := o.Get("b")
	if a != Number("1.0") {
		t.Fatalf("a = %#v", a)
	}
	want := []any{Number("-0"), Number("12345678901234567890"), Number("2e3")}
	got := b.([]any)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("b = %#v", got)
		}
	}
	if _, err := ParseKeepNumbers([]byte(`[1e400]`), "n"); err == nil || err.Error() != "n[0] must contain only finite JSON numbers." {
		t.Fatal(err)
	}
}

// TestPlainWord checks the eight-byte tests of scanString and the quoting functions against
// their byte tables: every byte value at every position of a word of otherwise plain bytes, and
// random words.
func TestPlainWord(t *testing.T) {
	check := func(w uint64) {
		plain, escape := true, false
		for k := 0; k < 8; k++ {
			plain = plain && plainASCII[byte(w>>(8*k))]
			escape = escape || needsEscape[byte(w>>(8*k))]
		}
		if got := plainWord(w); got != plain {
			t.Fatalf("plainWord(%#016x) = %v, want %v", w, got, plain)
		}
		if got := escapeWord(w); got != escape {
			t.Fatalf("escapeWord(%#016x) = %v, want %v", w, got, escape)
		}
	}
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			for _, fill := range []uint64{0x6161616161616161, 0x2020202020202020, 0x7f7f7f7f7f7f7f7f, 0x2323232323232323, 0x5d5d5d5d5d5d5d5d, 0x8080808080808080, 0xffffffffffffffff, 0xa0a0a0a0a0a0a0a0} {
				check(fill&^(0xff<<(8*pos)) | uint64(c)<<(8*pos))
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 16 {
		w := r.Uint64()
		check(w)
		check(w & 0x7f7f7f7f7f7f7f7f)
	}
}
