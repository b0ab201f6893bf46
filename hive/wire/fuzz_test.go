package wire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
)

// FuzzCompact checks the decoder's strict-JSON layer against jsonvalue.Parse: Compact refuses
// exactly what Parse refuses, with Parse's message wrapped in a *DecodeError at the same path,
// and its output is a fixed point that parses to Parse's value.
func FuzzCompact(f *testing.F) {
	for _, s := range []string{
		` { "a\u0041" : [ 1.50 , -0 , 12345678901234567890, "\u2028\/" ] } `, `{"a":1,"a":2}`, `[1e400]`,
		"{\"x\":\"\xff\"}", `{"k":["\udc00"]}`, `[[[]]]`, `{"a":tru}`, `"\u0000\u001f"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Compact(data, "v")
		want, perr := jsonvalue.Parse(data, "v")
		if err != nil {
			var de *DecodeError
			var je *jsonvalue.JSONValidationError
			if perr == nil || !errors.As(err, &de) || !errors.As(err, &je) || err.Error() != perr.Error() ||
				de.Path != je.Path || de.Field != fieldOf("v", je.Path) {
				t.Fatalf("%q: Compact says %#v, Parse says %v", data, err, perr)
			}
			return
		}
		if perr != nil {
			t.Fatalf("%q: Compact accepts text Parse refuses: %v", data, perr)
		}
		got, err := jsonvalue.Parse(out, "v")
		if err != nil || !jsonvalue.Equal(got, want) {
			t.Fatalf("%q: compact form %q parses to %v (%v)", data, out, got, err)
		}
		again, err := Compact(out, "v")
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("%q: compact form %q is not a fixed point: %q (%v)", data, out, again, err)
		}
	})
}
