// Package codectest holds the round-trip property the contract packages' fuzz targets check for
// every wire type with a strict JSON codec (hive, leanctx): the decoder never accepts text
// jsonvalue refuses, a JSON-level fault carries jsonvalue's exact message, every refusal is one
// of the package's contract errors, a decoded value encodes, and the encoding decodes to a
// value that encodes to the same bytes with the same Validate verdict. It is imported by tests
// only, and imports no contract package (package-internal tests of those packages use it).
package codectest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Codec is a decodable, encodable contract value.
type Codec[T any] interface {
	*T
	UnmarshalJSON([]byte) error
	MarshalJSON() ([]byte, error)
}

// Strict asserts the strictness half of the property for the outcome err of decoding data:
// accepted text is text jsonvalue accepts (label roots its messages); a refusal satisfies
// contractErr, and a JSON-level fault (*jsonvalue.JSONValidationError) is exactly jsonvalue's.
func Strict(t *testing.T, data []byte, label string, err error, contractErr func(error) bool) {
	t.Helper()
	_, jerr := jsonvalue.Parse(data, label)
	if err == nil {
		if jerr != nil {
			t.Fatalf("accepted text jsonvalue refuses: %v", jerr)
		}
		return
	}
	if !contractErr(err) {
		t.Fatalf("error of type %T: %v", err, err)
	}
	var je *jsonvalue.JSONValidationError
	if errors.As(err, &je) && (jerr == nil || jerr.Error() != err.Error()) {
		t.Fatalf("JSON fault %q but jsonvalue says %v", err, jerr)
	}
}

// RoundTrip decodes data as T and checks the whole property (validate may be nil for types
// without Validate).
func RoundTrip[T any, P Codec[T]](t *testing.T, data []byte, label string, validate func(P) error, contractErr func(error) bool) {
	t.Helper()
	var v T
	p := P(&v)
	err := p.UnmarshalJSON(data)
	Strict(t, data, label, err, contractErr)
	if err != nil {
		return
	}
	verdict := ""
	if validate != nil {
		verdict = ErrText(validate(p))
	}
	out, err := p.MarshalJSON()
	if err != nil {
		t.Fatalf("decoded value does not encode: %v", err)
	}
	var w T
	q := P(&w)
	if err := q.UnmarshalJSON(out); err != nil {
		t.Fatalf("re-decoding %s: %v", out, err)
	}
	out2, err := q.MarshalJSON()
	if err != nil || !bytes.Equal(out, out2) {
		t.Fatalf("not idempotent:\n%s\n%s", out, out2)
	}
	if validate != nil {
		if again := ErrText(validate(q)); again != verdict {
			t.Fatalf("verdict changed by a round trip: %q → %q", verdict, again)
		}
	}
}

// ErrText returns err's message, or "" for nil.
func ErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
