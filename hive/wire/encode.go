package wire

import (
	"github.com/agentwire/agentwire/jsonvalue"
	"strconv"
)

// AppendString appends s as a JSON string under E3 (hive.md §0.3): `"` `\` BS FF LF CR TAB as
// short escapes, other U+0000–U+001F as `\u00xx` with lowercase hex, everything else raw
// (U+2028, U+2029, DEL, `/`, `<`, `>`, `&` included). Invalid UTF-8 bytes are written as
// U+FFFD so the output stays valid UTF-8 (only possible for strings built in Go).
func AppendString(dst []byte, s string) []byte { return jsonvalue.AppendQuote(dst, s) }

// AppendQuoted returns AppendString(nil, s) as a string.
func AppendQuoted(s string) string { return string(AppendString(nil, s)) }

// Encoder appends one JSON object's members in order (E1–E3). Open starts an object, each
// member method writes `,"name":value` (without the comma for the first member), Close ends it.
// The first error set with SetErr sticks and is returned by Bytes.
type Encoder struct {
	// B is the output so far; callers may append encoded values after Key.
	B     []byte
	first bool
	err   error
}

// Open writes `{`.
func (e *Encoder) Open() {
	e.B = append(e.B, '{')
	e.first = true
}

// Close writes `}`.
func (e *Encoder) Close() {
	e.B = append(e.B, '}')
	e.first = false
}

// Key writes the separator and `"name":`; the caller writes the value next.
func (e *Encoder) Key(name string) {
	if !e.first {
		e.B = append(e.B, ',')
	}
	e.first = false
	e.B = AppendString(e.B, name)
	e.B = append(e.B, ':')
}

// Str writes a string member.
func (e *Encoder) Str(name, v string) {
	e.Key(name)
	e.B = AppendString(e.B, v)
}

// OptStr writes a string member when v is non-nil (E1).
func (e *Encoder) OptStr(name string, v *string) {
	if v != nil {
		e.Str(name, *v)
	}
}

// Uint writes an unsigned integer member.
func (e *Encoder) Uint(name string, v uint64) {
	e.Key(name)
	e.B = strconv.AppendUint(e.B, v, 10)
}

// OptUint writes an unsigned integer member when v is non-nil (E1).
func (e *Encoder) OptUint(name string, v *uint64) {
	if v != nil {
		e.Uint(name, *v)
	}
}

// Bool writes a boolean member.
func (e *Encoder) Bool(name string, v bool) {
	e.Key(name)
	if v {
		e.B = append(e.B, "true"...)
	} else {
		e.B = append(e.B, "false"...)
	}
}

// Raw writes a member whose value is already encoded JSON.
func (e *Encoder) Raw(name string, v []byte) {
	e.Key(name)
	e.B = append(e.B, v...)
}

// SetErr records the first encoding error.
func (e *Encoder) SetErr(err error) {
	if e.err == nil && err != nil {
		e.err = err
	}
}

// Err returns the first recorded error.
func (e *Encoder) Err() error { return e.err }

// Bytes returns the encoded bytes, or the first recorded error.
func (e *Encoder) Bytes() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	return e.B, nil
}

// MarshalObject runs fn on a fresh Encoder with room for size bytes and returns its bytes.
func MarshalObject(size int, fn func(e *Encoder)) ([]byte, error) {
	e := Encoder{B: make([]byte, 0, size)}
	fn(&e)
	return e.Bytes()
}
