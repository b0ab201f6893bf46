package hive

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentwire/agentwire/hive/wire"
	"github.com/agentwire/agentwire/jsonvalue"
)

// goldenDecoders decodes and validates a document of each TYPE used in testdata/examples.txt.
var goldenDecoders = map[string]func([]byte) (interface{ MarshalJSON() ([]byte, error) }, error){
	"agent-message": func(b []byte) (interface{ MarshalJSON() ([]byte, error) }, error) {
		var m AgentMessageV1
		if err := m.UnmarshalJSON(b); err != nil {
			return nil, err
		}
		return m, m.Validate()
	},
	"message-delivery": func(b []byte) (interface{ MarshalJSON() ([]byte, error) }, error) {
		var m MessageDeliveryV1
		if err := m.UnmarshalJSON(b); err != nil {
			return nil, err
		}
		return m, m.Validate()
	},
	"message-receipt": func(b []byte) (interface{ MarshalJSON() ([]byte, error) }, error) {
		var m MessageReceiptV1
		if err := m.UnmarshalJSON(b); err != nil {
			return nil, err
		}
		return m, m.Validate()
	},
	"message-stored": func(b []byte) (interface{ MarshalJSON() ([]byte, error) }, error) {
		var m MessageStoredV1
		return m, m.UnmarshalJSON(b)
	},
	"message-status": func(b []byte) (interface{ MarshalJSON() ([]byte, error) }, error) {
		var m MessageStatusV1
		err := m.UnmarshalJSON(b)
		return m, err
	},
	"task-event": func(b []byte) (interface{ MarshalJSON() ([]byte, error) }, error) {
		var m TaskEventV1
		err := m.UnmarshalJSON(b)
		return m, err
	},
	"message-list": func(b []byte) (interface{ MarshalJSON() ([]byte, error) }, error) {
		var m MessageListV1
		if err := m.UnmarshalJSON(b); err != nil {
			return nil, err
		}
		return m, m.Validate()
	},
	"error-body": func(b []byte) (interface{ MarshalJSON() ([]byte, error) }, error) {
		var m HiveErrorBody
		err := m.UnmarshalJSON(b)
		return m, err
	},
	"bus-frame": func(b []byte) (interface{ MarshalJSON() ([]byte, error) }, error) {
		f, err := DecodeBusFrameByTag(b)
		if err != nil {
			return nil, err
		}
		return f, ValidateFrame(f)
	},
}

// TestGoldenExamples decodes every example of hive.md §2.12 and §4.6 (testdata/examples.txt:
// "TYPE document" per line), validates it and checks that it re-encodes byte for byte.
func TestGoldenExamples(t *testing.T) {
	f, err := os.Open("testdata/examples.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		typ, doc, _ := strings.Cut(sc.Text(), " ")
		decode := goldenDecoders[typ]
		if decode == nil {
			t.Fatalf("line %d: no decoder for %q", n, typ)
		}
		v, err := decode([]byte(doc))
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		out, err := v.MarshalJSON()
		if err != nil || string(out) != doc {
			t.Fatalf("line %d: re-encoding differs:\n got %s\nwant %s (%v)", n, out, doc, err)
		}
	}
	if n != 15 {
		t.Fatalf("read %d examples", n)
	}
}

// TestAppendStringMatchesE3 checks rule E3 for every code point class and that it equals the
// strict JSON layer's RFC 8785 string form.
func TestAppendStringMatchesE3(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := "a" + string(r) + "b"
		got := string(wire.AppendString(nil, s))
		if got != jsonvalue.Quote(s) {
			t.Fatalf("U+%04X: %q vs jsonvalue %q", r, got, jsonvalue.Quote(s))
		}
	}
	cases := map[string]string{
		"\u2028\u2029": "\"\u2028\u2029\"",
		"<&>/\x7f":     "\"<&>/\x7f\"",
		"\"\\":         `"\"\\"`,
		"\b\f\n\r\t":   `"\b\f\n\r\t"`,
		"\x00\x1f\x0b": `"\u0000\u001f\u000b"`,
		"é😀":           "\"é😀\"",
		"bad\xffbyte":  "\"bad\uFFFDbyte\"",
	}
	for in, want := range cases {
		if got := string(wire.AppendString(nil, in)); got != want {
			t.Errorf("%q: got %s, want %s", in, got, want)
		}
	}
}

// TestEncodingKeepsRawLineSeparators is hive.md §9 #96.
func TestEncodingKeepsRawLineSeparators(t *testing.T) {
	m := question()
	m.Body.Text = "a\u2028b\u2029c<&>"
	out, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("a\xe2\x80\xa8b\xe2\x80\xa9c<&>")) || bytes.Contains(out, []byte(`\u`)) {
		t.Fatalf("E3 violated: %s", out)
	}
}

func TestEncodingOmitsAbsentMembers(t *testing.T) {
	m := question()
	m.Body.References = []MessageReferenceV1{}
	out, _ := m.MarshalJSON()
	want := `{"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"` + testChannel + `"},"type":"question","from":"claude-3e","body":{"text":"Which retry budget does payments use?"}}`
	if string(out) != want {
		t.Fatalf("got %s", out)
	}
	m.Type = "poll"
	out, _ = m.MarshalJSON()
	if !bytes.Contains(out, []byte(`"type":"unknown"`)) {
		t.Fatalf("E4: %s", out)
	}
	d := delivery(true)
	d.From = SenderUnknown{}
	out, _ = d.MarshalJSON()
	if !bytes.Contains(out, []byte(`"from":{"kind":"unknown"}`)) {
		t.Fatalf("E4 sender: %s", out)
	}
	d.ServerTime = UtcTimestamp{}
	if _, err := d.MarshalJSON(); errText(err) != "UtcTimestamp must use canonical YYYY-MM-DDTHH:MM:SSZ syntax" {
		t.Fatalf("a zero timestamp must not encode: %v", err)
	}
}

// TestDecoderAgreesWithJSONValue checks the decoder's strict-JSON faults against
// jsonvalue.Parse: the same message when the decoder reports a JSON-level fault, and no
// acceptance of text jsonvalue refuses.
func TestDecoderAgreesWithJSONValue(t *testing.T) {
	base := `{"gid":"g-1","by":"codex-85","state":"read"}`
	inputs := []string{
		base,
		`{"gid":"g-1","gid":"g-2"}`,
		`{"gid":"\ud800","by":"x","state":"read"}`,
		`{"gid":"\ud800\u0041"}`,
		`{"gid":"\udc00"}`,
		"{\"gid\":\"a\xffb\"}",
		"{\"g\xc3\":1}",
		`{"gid":"a` + "\x01" + `"}`,
		`{"gid":"a\x"}`,
		`{"gid":"a\u00zz"}`,
		`{"gid":"g-1",}`,
		`{"gid" "g-1"}`,
		`{"gid":"g-1"`,
		`{"gid":tru}`,
		`{"gid":nul}`,
		`{"gid":-}`,
		`{"gid":01}`,
		`{"gid":1.}`,
		`{"gid":1e}`,
		`{"gid":1e400}`,
		`[` + strings.Repeat("[", 200),
		`  ` + base + `  x`,
		``,
		` `,
		`{,}`,
		`{"gid":"g-1"}}`,
		`"str`,
	}
	for _, in := range inputs {
		var r MessageReceiptV1
		err := r.UnmarshalJSON([]byte(in))
		_, jerr := jsonvalue.Parse([]byte(in), "MessageReceiptV1")
		if err == nil {
			if jerr != nil {
				t.Errorf("%q accepted but jsonvalue refuses: %v", in, jerr)
			}
			continue
		}
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%q: not a DecodeError: %T", in, err)
			continue
		}
		var je *jsonvalue.JSONValidationError
		if errors.As(err, &je) {
			if jerr == nil || jerr.Error() != err.Error() {
				t.Errorf("%q: decoder %q, jsonvalue %v", in, err, jerr)
			}
		}
	}
}

func TestDecodeErrorField(t *testing.T) {
	tests := []struct{ in, field string }{
		{`{"client_msg_id":"x","priority":"high"}`, "priority"},
		{`{"client_msg_id":"x","network":{"kind":"org","channel":"c","swarm_id":"s"}}`, "network.swarm_id"},
		{`{"client_msg_id":"x","network":{"kind":"org","channel":"` + testChannel + `"},"type":"question","from":"a","deadline":"2026-02-29T12:00:00Z"}`, "deadline"},
		{`{"client_msg_id":"x","network":{"kind":"mesh"}}`, "network.kind"},
		{`{"client_msg_id":1}`, "client_msg_id"},
		{`{"client_msg_id":"x","body":{"text":"t","references":[{"kind":"task","number":-1}]}}`, "body.references[0].number"},
	}
	for _, tc := range tests {
		var m AgentMessageV1
		err := m.UnmarshalJSON([]byte(tc.in))
		var de *DecodeError
		if !errors.As(err, &de) || de.Field != tc.field {
			t.Errorf("%s: %v field %q, want %q", tc.in, err, func() string {
				if de != nil {
					return de.Field
				}
				return ""
			}(), tc.field)
		}
		if d := NewValidationFailure(err); d.Code != HiveErrorCodeInvalidRequest || d.Field == nil || *d.Field != tc.field {
			t.Errorf("%s: NewValidationFailure = %+v", tc.in, d)
		}
	}
}

func TestEnumUnmarshal(t *testing.T) {
	var mt MessageType
	for in, want := range map[string]MessageType{`"question"`: MessageTypeQuestion, `"poll"`: MessageTypeUnknown, `"unknown"`: MessageTypeUnknown, `"Question"`: MessageTypeUnknown} {
		if err := mt.UnmarshalJSON([]byte(in)); err != nil || mt != want {
			t.Errorf("%s: %q %v", in, mt, err)
		}
	}
	for _, in := range []string{`1`, `null`, `{"question":null}`, `["question"]`} {
		if err := mt.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("%s must be a decode error (D7)", in)
		}
	}
	var ts TaskState
	if err := ts.UnmarshalJSON([]byte(`"failed"`)); err != nil || ts != TaskStateUnknown {
		t.Fatal("failed decodes as Unknown")
	}
	if b, _ := TaskState("failed").MarshalJSON(); string(b) != `"unknown"` {
		t.Fatal("E4")
	}
}
