package wire

import (
	"math"
	"strconv"
	"sync"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Decoder reads one JSON document strictly (package doc): the typed rules D1–D9 over
// jsonvalue's strict scanner ([jsonvalue.Decoder]), which does every lexical check and renders
// every strict-JSON fault, so faults carry exactly jsonvalue's messages. The zero value is not
// usable; call Reset. A Decoder is meant to live on the stack of one decode call: the views it
// hands out (member names, StringBytes) are valid only until the next call.
type Decoder struct {
	j jsonvalue.Decoder
}

// Reset prepares d to read data; label roots every path in error messages (the contract's Go
// type name, e.g. `AgentMessageV1`).
func (d *Decoder) Reset(data []byte, label string) { d.j.Reset(data, label) }

// Label returns the label given to Reset.
func (d *Decoder) Label() string { return d.j.Label() }

// Document reads exactly one JSON value with fn, allowing JSON white space around it and
// nothing else.
func (d *Decoder) Document(fn func() error) error {
	if err := d.j.BeginDocument(); err != nil {
		return d.lex(err)
	}
	if err := fn(); err != nil {
		return err
	}
	if err := d.j.EndDocument(); err != nil {
		return d.lex(err)
	}
	return nil
}

// ---- errors ----

// lex wraps a strict-JSON fault of the scanner (a *jsonvalue.JSONValidationError, message
// unchanged) as a decoding fault at its path.
func (d *Decoder) lex(err error) error {
	je, ok := err.(*jsonvalue.JSONValidationError)
	if !ok {
		return err
	}
	return &DecodeError{Path: je.Path, Field: fieldOf(d.j.Label(), je.Path), Err: je}
}

// Path returns the label-rooted path of the value being read.
func (d *Decoder) Path() string { return d.j.Path() }

// Fail returns a typed decoding fault "<path> <problem>." at the value being read.
func (d *Decoder) Fail(problem string) error {
	p := d.j.Path()
	return &DecodeError{Path: p, Field: fieldOf(d.j.Label(), p), Message: p + " " + problem + "."}
}

// Wrap returns a *DecodeError at the value being read that wraps err (a value check run while
// decoding, hive.md §0.1); its Error() is err's message unchanged.
func (d *Decoder) Wrap(err error) error {
	p := d.j.Path()
	return &DecodeError{Path: p, Field: fieldOf(d.j.Label(), p), Err: err}
}

// Missing reports the absence of the required member name of the object just read (D2).
func (d *Decoder) Missing(name string) error { return d.FailMember(name, "is missing") }

// Unknown reports the member being read as unknown to a strict type (D5).
func (d *Decoder) Unknown() error { return d.Fail("is not a known member") }

// NullRequired reports a null for a required member or defaulted list (D3).
func (d *Decoder) NullRequired() error { return d.Fail("must not be null") }

// mismatch reports a value of the wrong JSON type: a syntax fault when the next byte starts no
// JSON value at all, else "<path> <problem>.".
func (d *Decoder) mismatch(problem string) error {
	switch d.j.PeekKind() {
	case jsonvalue.KindEnd, jsonvalue.KindInvalid:
		return d.lex(d.j.SyntaxFault())
	case jsonvalue.KindNull:
		if _, err := d.Null(); err != nil {
			return err
		}
		return d.NullRequired()
	}
	return d.Fail(problem)
}

// ---- reading ----

// Next returns the first byte of the value being read (white space is already skipped by the
// decoder), or 0 at the end of the input.
func (d *Decoder) Next() byte { return d.j.Peek() }

// Null consumes a null literal if one is next and reports whether it did.
func (d *Decoder) Null() (bool, error) {
	if d.j.Peek() != 'n' {
		return false, nil
	}
	if err := d.j.ReadNull(); err != nil {
		return false, d.lex(err)
	}
	return true, nil
}

// Object reads a JSON object, calling fn once per member with the path extended by the member.
// fn must consume the member's value with one of the readers. Repeated member names are
// refused (D4) with jsonvalue's message.
func (d *Decoder) Object(fn func(name []byte) error) error { return d.ObjectDup(fn, nil) }

// ObjectDup is Object with a hook for repeated names: when dup is non-nil and returns an error
// for a repeated name, that error is reported instead of jsonvalue's duplicate-member fault.
func (d *Decoder) ObjectDup(fn func(name []byte) error, dup func(name []byte) error) error {
	if d.j.Peek() != '{' {
		return d.mismatch("must be a JSON object")
	}
	if err := d.j.BeginObject(); err != nil {
		return d.lex(err)
	}
	for {
		name, ok, err := d.j.NextMember()
		if err != nil {
			if ok && dup != nil { // a repeated name; the path names the member
				if derr := dup(name); derr != nil {
					return derr
				}
			}
			return d.lex(err)
		}
		if !ok {
			return nil
		}
		if err := fn(name); err != nil {
			return err
		}
	}
}

// Array reads a JSON array, calling fn once per element with the path extended by its index.
func (d *Decoder) Array(fn func(i int) error) error {
	if d.j.Peek() != '[' {
		return d.mismatch("must be a JSON array")
	}
	if err := d.j.BeginArray(); err != nil {
		return d.lex(err)
	}
	for i := 0; ; i++ {
		ok, err := d.j.NextElement()
		if err != nil {
			return d.lex(err)
		}
		if !ok {
			return nil
		}
		if err := fn(i); err != nil {
			return err
		}
	}
}

// String reads a JSON string (a fresh Go string).
func (d *Decoder) String() (string, error) {
	if d.j.Peek() != '"' {
		return "", d.mismatch("must be a string")
	}
	s, err := d.j.ReadString()
	if err != nil {
		return "", d.lex(err)
	}
	return s, nil
}

// StringBytes reads a JSON string and returns its bytes; the slice is valid only until the next
// read (use it for enum names and tags).
func (d *Decoder) StringBytes() ([]byte, error) {
	if d.j.Peek() != '"' {
		return nil, d.mismatch("must be a string")
	}
	b, err := d.j.ReadStringBytes()
	if err != nil {
		return nil, d.lex(err)
	}
	return b, nil
}

// OptString reads an optional string member: null means absent (D3).
func (d *Decoder) OptString(dst **string) error {
	if ok, err := d.Null(); err != nil || ok {
		*dst = nil
		return err
	}
	s, err := d.String()
	if err != nil {
		return err
	}
	*dst = &s
	return nil
}

// Bool reads true or false (D7).
func (d *Decoder) Bool() (bool, error) {
	if c := d.j.Peek(); c != 't' && c != 'f' {
		return false, d.mismatch("must be a boolean")
	}
	b, err := d.j.ReadBool()
	if err != nil {
		return false, d.lex(err)
	}
	return b, nil
}

// Uint reads an unsigned integer within 0..max (D6): a JSON number without sign, fraction or
// exponent.
func (d *Decoder) Uint(max uint64) (uint64, error) {
	if !d.IsNumberStart() {
		return 0, d.mismatch(uintProblem(max))
	}
	tok, err := d.j.ReadNumberText()
	if err != nil {
		return 0, d.lex(err)
	}
	var v uint64
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, d.Fail(uintProblem(max))
		}
		digit := uint64(c - '0')
		if v > (math.MaxUint64-digit)/10 {
			return 0, d.Fail(uintProblem(max))
		}
		v = v*10 + digit
	}
	if v > max {
		return 0, d.Fail(uintProblem(max))
	}
	return v, nil
}

// OptUint reads an optional unsigned integer member: null means absent.
func (d *Decoder) OptUint(dst **uint64, max uint64) error {
	if ok, err := d.Null(); err != nil || ok {
		*dst = nil
		return err
	}
	v, err := d.Uint(max)
	if err != nil {
		return err
	}
	*dst = &v
	return nil
}

func uintProblem(max uint64) string {
	return "must be an integer from 0 to " + strconv.FormatUint(max, 10)
}

// NumberToken reads a JSON number and returns its exact text (valid until the next read),
// checked against the number grammar only: the typed rule that reads it decides its range. A
// value of another type gives "<path> <problem>." (or a syntax fault).
func (d *Decoder) NumberToken(problem string) ([]byte, error) {
	if !d.IsNumberStart() {
		return nil, d.mismatch(problem)
	}
	tok, err := d.j.ReadNumberText()
	if err != nil {
		return nil, d.lex(err)
	}
	return tok, nil
}

// IsNumberStart reports whether the next value is a JSON number.
func (d *Decoder) IsNumberStart() bool { return d.j.PeekKind() == jsonvalue.KindNumber }

// Skip reads and discards one JSON value with every strict-JSON check.
func (d *Decoder) Skip() error {
	if err := d.j.Skip(); err != nil {
		return d.lex(err)
	}
	return nil
}

// Capture reads one JSON value and returns its compact re-encoding under E3: strings
// re-escaped, numbers kept exactly as written, member order kept. The result is a fresh slice.
func (d *Decoder) Capture() ([]byte, error) {
	out, err := d.j.AppendCompact(make([]byte, 0, 64))
	if err != nil {
		return nil, d.lex(err)
	}
	return out, nil
}

// TagState says what FindTag found.
type TagState int

// FindTag outcomes.
const (
	// TagMissing: the object has no member with the tag name.
	TagMissing TagState = iota
	// TagNotString: the tag member is not a JSON string.
	TagNotString
	// TagFound: the tag is a string.
	TagFound
)

// FindTag scans the object being read (every strict-JSON check applies, as for an internally
// tagged serde enum that buffers its content) and returns the string value of member name
// without consuming the object (D9).
func (d *Decoder) FindTag(name string) (tag string, state TagState, err error) {
	start := d.j.Mark()
	err = d.Object(func(n []byte) error {
		if string(n) != name {
			return d.Skip()
		}
		if d.Next() != '"' {
			state = TagNotString
			return d.Skip()
		}
		b, err := d.j.ReadStringBytes()
		if err != nil {
			return d.lex(err)
		}
		tag, state = string(b), TagFound
		return nil
	})
	if err != nil {
		return "", TagMissing, err
	}
	d.j.Rewind(start)
	return tag, state, nil
}

// TagFault returns the decode fault for a tagged enum whose tag member name is missing, not a
// string, or (state TagFound) an unknown variant; expected lists the known tags.
func (d *Decoder) TagFault(name string, state TagState, tag string, expected []string) error {
	switch state {
	case TagMissing:
		return d.Missing(name)
	case TagNotString:
		return d.FailMember(name, "must be a string")
	}
	return d.FailMember(name, UnknownVariant(tag, expected))
}

// UnknownVariant renders `has unknown value "x"; expected one of "a", "b"`.
func UnknownVariant(got string, expected []string) string {
	b := make([]byte, 0, 64)
	b = append(b, "has unknown value "...)
	b = AppendString(b, got)
	b = append(b, "; expected one of "...)
	for i, e := range expected {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = AppendString(b, e)
	}
	return string(b)
}

// EnumFault reports an enum value outside the known set of an enum without fallback.
func (d *Decoder) EnumFault(got []byte, expected []string) error {
	return d.Fail(UnknownVariant(string(got), expected))
}

// Compact checks that raw is one strict JSON value (jsonvalue's rules) and returns its compact
// E3 re-encoding with numbers kept as written. label roots fault paths.
func Compact(raw []byte, label string) ([]byte, error) {
	var d Decoder
	d.Reset(raw, label)
	var out []byte
	err := d.Document(func() error {
		var err error
		out, err = d.Capture()
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FailMember returns a typed decoding fault "<path>.<member> <problem>." for a member of the
// object being read (a tag that names a frame of the wrong direction).
func (d *Decoder) FailMember(member, problem string) error {
	p := jsonvalue.MemberPath(d.j.Path(), member)
	return &DecodeError{Path: p, Field: fieldOf(d.j.Label(), p), Message: p + " " + problem + "."}
}

// Offset returns the byte offset of the next value in the input.
func (d *Decoder) Offset() int { return d.j.Offset() }

// CheckRequired reports the first required member (bit i of required stands for names[i], in
// declaration order) missing from seen (D2).
func (d *Decoder) CheckRequired(seen, required uint64, names []string) error {
	if seen&required == required {
		return nil
	}
	for i, n := range names {
		bit := uint64(1) << uint(i)
		if required&bit != 0 && seen&bit == 0 {
			return d.Missing(n)
		}
	}
	return nil
}

// decoderPool recycles decoders: a Decoder is large (inline path and name stacks) and would
// otherwise be allocated for every document.
var decoderPool = sync.Pool{New: func() any { return new(Decoder) }}

// DecodeDocument reads data as one document with fn, labelled label. The decoder passed to fn
// is valid only during the call.
func DecodeDocument(data []byte, label string, fn func(d *Decoder) error) error {
	d := decoderPool.Get().(*Decoder)
	d.Reset(data, label)
	err := d.Document(func() error { return fn(d) })
	d.Reset(nil, "") // drop every reference into data before the decoder is reused
	decoderPool.Put(d)
	return err
}
