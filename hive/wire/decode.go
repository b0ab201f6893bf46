package wire

import (
	"bytes"
	"math"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Decoder reads one JSON document strictly (package doc). The zero value is not usable; call
// Reset. A Decoder is meant to live on the stack of one decode call: the views it hands out
// (member names, StringBytes) are valid only until the next call.
type Decoder struct {
	data  []byte
	pos   int
	label string
	depth int
	path  []segment
	names [][]byte

	pathBuf  [12]segment
	namesBuf [40][]byte
	scratch  []byte
}

// Reset prepares d to read data; label roots every path in error messages (the contract's Go
// type name, e.g. `AgentMessageV1`).
func (d *Decoder) Reset(data []byte, label string) {
	d.data = data
	d.pos = 0
	d.label = label
	d.depth = 0
	d.path = d.pathBuf[:0]
	d.names = d.namesBuf[:0]
}

// Label returns the label given to Reset.
func (d *Decoder) Label() string { return d.label }

// Document reads exactly one JSON value with fn, allowing JSON white space around it and
// nothing else.
func (d *Decoder) Document(fn func() error) error {
	d.skipWS()
	if d.pos >= len(d.data) {
		return d.syntax(len(d.data))
	}
	if err := fn(); err != nil {
		return err
	}
	d.skipWS()
	if d.pos < len(d.data) {
		return d.syntax(d.pos)
	}
	return nil
}

// ---- errors ----

func (d *Decoder) syntax(offset int) error {
	msg := d.label + " is not valid JSON text at byte offset " + strconv.Itoa(offset) + "."
	return &DecodeError{Path: d.label, Err: &jsonvalue.JSONValidationError{Path: d.label, Message: msg}}
}

func (d *Decoder) fault(suffix string) error {
	return jsonFault(d.label, renderPath(d.label, d.path), suffix)
}

// Path returns the label-rooted path of the value being read.
func (d *Decoder) Path() string { return renderPath(d.label, d.path) }

// Fail returns a typed decoding fault "<path> <problem>." at the value being read.
func (d *Decoder) Fail(problem string) error {
	p := renderPath(d.label, d.path)
	return &DecodeError{Path: p, Field: fieldOf(d.label, p), Message: p + " " + problem + "."}
}

// Wrap returns a *DecodeError at the value being read that wraps err (a value check run while
// decoding, hive.md §0.1); its Error() is err's message unchanged.
func (d *Decoder) Wrap(err error) error {
	p := renderPath(d.label, d.path)
	return &DecodeError{Path: p, Field: fieldOf(d.label, p), Err: err}
}

// Missing reports the absence of the required member name of the object just read (D2).
func (d *Decoder) Missing(name string) error {
	p := renderPath(d.label, d.path) + "." + name
	return &DecodeError{Path: p, Field: fieldOf(d.label, p), Message: p + " is missing."}
}

// Unknown reports the member being read as unknown to a strict type (D5).
func (d *Decoder) Unknown() error { return d.Fail("is not a known member") }

// NullRequired reports a null for a required member or defaulted list (D3).
func (d *Decoder) NullRequired() error { return d.Fail("must not be null") }

// mismatch reports a value of the wrong JSON type: a syntax fault when the next byte starts no
// JSON value at all, else "<path> <problem>.".
func (d *Decoder) mismatch(problem string) error {
	if d.pos >= len(d.data) {
		return d.syntax(len(d.data))
	}
	switch c := d.data[d.pos]; {
	case c == '{' || c == '[' || c == '"' || c == 't' || c == 'f' || c == 'n' || c == '-' || (c >= '0' && c <= '9'):
		if c == 'n' {
			if ok, err := d.Null(); err != nil {
				return err
			} else if ok {
				return d.NullRequired()
			}
		}
		return d.Fail(problem)
	default:
		return d.syntax(d.pos)
	}
}

// ---- low level ----

func (d *Decoder) skipWS() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// Next returns the first byte of the value being read (white space is already skipped by the
// decoder), or 0 at the end of the input.
func (d *Decoder) Next() byte {
	if d.pos >= len(d.data) {
		return 0
	}
	return d.data[d.pos]
}

func (d *Decoder) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if d.pos >= len(d.data) {
			return d.syntax(len(d.data))
		}
		if d.data[d.pos] != word[i] {
			return d.syntax(d.pos)
		}
		d.pos++
	}
	return nil
}

// Null consumes a null literal if one is next and reports whether it did.
func (d *Decoder) Null() (bool, error) {
	if d.pos < len(d.data) && d.data[d.pos] == 'n' {
		if err := d.literal("null"); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

func (d *Decoder) push(name []byte) {
	d.path = append(d.path, segment{name: unsafe.String(unsafe.SliceData(name), len(name)), index: -1})
}

func (d *Decoder) pop() { d.path = d.path[:len(d.path)-1] }

// Object reads a JSON object, calling fn once per member with the path extended by the member.
// fn must consume the member's value with one of the readers. Repeated member names are
// refused (D4) with jsonvalue's message.
func (d *Decoder) Object(fn func(name []byte) error) error { return d.ObjectDup(fn, nil) }

// ObjectDup is Object with a hook for repeated names: when dup is non-nil and returns an error
// for a repeated name, that error is reported instead of jsonvalue's duplicate-member fault.
func (d *Decoder) ObjectDup(fn func(name []byte) error, dup func(name []byte) error) error {
	if d.pos >= len(d.data) {
		return d.syntax(len(d.data))
	}
	if d.data[d.pos] != '{' {
		return d.mismatch("must be a JSON object")
	}
	if d.depth+1 > jsonvalue.MaxDepth {
		return d.fault(jsonvalue.SuffixTooDeep)
	}
	d.depth++
	d.pos++
	base := len(d.names)
	var index map[string]struct{}
	defer func() { d.names = d.names[:base] }()
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		return nil
	}
	for {
		if d.pos >= len(d.data) {
			return d.syntax(len(d.data))
		}
		if d.data[d.pos] != '"' {
			return d.syntax(d.pos)
		}
		name, err := d.str(true)
		if err != nil {
			return err
		}
		// D4: a repeated name. Few members: linear scan; many: a map.
		seen := d.names[base:]
		duplicate := false
		if index != nil {
			_, duplicate = index[unsafe.String(unsafe.SliceData(name), len(name))]
		} else {
			for _, n := range seen {
				if bytes.Equal(n, name) {
					duplicate = true
					break
				}
			}
		}
		if duplicate {
			if dup != nil {
				d.push(name)
				derr := dup(name)
				d.pop()
				if derr != nil {
					return derr
				}
			}
			return d.fault(" contains duplicate member name " + jsonvalue.Quote(string(name)) + ".")
		}
		d.names = append(d.names, name)
		if index == nil && len(seen) >= 16 {
			index = make(map[string]struct{}, 64)
			for _, n := range d.names[base:] {
				index[unsafe.String(unsafe.SliceData(n), len(n))] = struct{}{}
			}
		} else if index != nil {
			index[unsafe.String(unsafe.SliceData(name), len(name))] = struct{}{}
		}
		d.skipWS()
		if d.pos >= len(d.data) {
			return d.syntax(len(d.data))
		}
		if d.data[d.pos] != ':' {
			return d.syntax(d.pos)
		}
		d.pos++
		d.skipWS()
		d.push(name)
		if err := fn(name); err != nil {
			return err
		}
		d.pop()
		d.skipWS()
		if d.pos >= len(d.data) {
			return d.syntax(len(d.data))
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipWS()
		case '}':
			d.pos++
			d.depth--
			return nil
		default:
			return d.syntax(d.pos)
		}
	}
}

// Array reads a JSON array, calling fn once per element with the path extended by its index.
func (d *Decoder) Array(fn func(i int) error) error {
	if d.pos >= len(d.data) {
		return d.syntax(len(d.data))
	}
	if d.data[d.pos] != '[' {
		return d.mismatch("must be a JSON array")
	}
	if d.depth+1 > jsonvalue.MaxDepth {
		return d.fault(jsonvalue.SuffixTooDeep)
	}
	d.depth++
	d.pos++
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		return nil
	}
	d.path = append(d.path, segment{index: 0})
	top := len(d.path) - 1
	for i := 0; ; i++ {
		d.path[top].index = i
		if d.pos >= len(d.data) {
			return d.syntax(len(d.data))
		}
		if err := fn(i); err != nil {
			return err
		}
		d.skipWS()
		if d.pos >= len(d.data) {
			return d.syntax(len(d.data))
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipWS()
		case ']':
			d.pos++
			d.path = d.path[:top]
			d.depth--
			return nil
		default:
			return d.syntax(d.pos)
		}
	}
}

// String reads a JSON string (a fresh Go string).
func (d *Decoder) String() (string, error) {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return "", d.mismatch("must be a string")
	}
	b, err := d.str(false)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// StringBytes reads a JSON string and returns its bytes; the slice is valid only until the next
// read (use it for enum names and tags).
func (d *Decoder) StringBytes() ([]byte, error) {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return nil, d.mismatch("must be a string")
	}
	return d.str(false)
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
	if d.pos < len(d.data) {
		switch d.data[d.pos] {
		case 't':
			return true, d.literal("true")
		case 'f':
			return false, d.literal("false")
		}
	}
	return false, d.mismatch("must be a boolean")
}

// Uint reads an unsigned integer within 0..max (D6): a JSON number without sign, fraction or
// exponent.
func (d *Decoder) Uint(max uint64) (uint64, error) {
	if d.pos >= len(d.data) {
		return 0, d.syntax(len(d.data))
	}
	c := d.data[d.pos]
	if c != '-' && (c < '0' || c > '9') {
		return 0, d.mismatch(uintProblem(max))
	}
	tok, err := d.lexNumber()
	if err != nil {
		return 0, err
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

// NumberToken reads a JSON number and returns its exact text (valid until the next read). A
// value of another type gives "<path> <problem>." (or a syntax fault).
func (d *Decoder) NumberToken(problem string) ([]byte, error) {
	if d.pos >= len(d.data) {
		return nil, d.syntax(len(d.data))
	}
	c := d.data[d.pos]
	if c != '-' && (c < '0' || c > '9') {
		return nil, d.mismatch(problem)
	}
	return d.lexNumber()
}

// IsNumberStart reports whether the next value is a JSON number.
func (d *Decoder) IsNumberStart() bool {
	c := d.Next()
	return c == '-' || (c >= '0' && c <= '9')
}

// Skip reads and discards one JSON value with every strict-JSON check.
func (d *Decoder) Skip() error {
	_, err := d.value(nil, false)
	return err
}

// Capture reads one JSON value and returns its compact re-encoding under E3: strings
// re-escaped, numbers kept exactly as written, member order kept. The result is a fresh slice.
func (d *Decoder) Capture() ([]byte, error) {
	out, err := d.value(make([]byte, 0, 64), true)
	if err != nil {
		return nil, err
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
	start, depth, pathLen := d.pos, d.depth, len(d.path)
	err = d.Object(func(n []byte) error {
		if string(n) != name {
			return d.Skip()
		}
		if d.Next() != '"' {
			state = TagNotString
			return d.Skip()
		}
		b, err := d.str(false)
		if err != nil {
			return err
		}
		tag, state = string(b), TagFound
		return nil
	})
	if err != nil {
		return "", TagMissing, err
	}
	d.pos, d.depth, d.path = start, depth, d.path[:pathLen]
	return tag, state, nil
}

// TagFault returns the decode fault for a tagged enum whose tag member name is missing, not a
// string, or (state TagFound) an unknown variant; expected lists the known tags.
func (d *Decoder) TagFault(name string, state TagState, tag string, expected []string) error {
	switch state {
	case TagMissing:
		return d.Missing(name)
	case TagNotString:
		p := renderPath(d.label, d.path) + "." + name
		return &DecodeError{Path: p, Field: fieldOf(d.label, p), Message: p + " must be a string."}
	}
	p := renderPath(d.label, d.path) + "." + name
	return &DecodeError{Path: p, Field: fieldOf(d.label, p), Message: p + " " + UnknownVariant(tag, expected) + "."}
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

// ---- value scanning (mirrors jsonvalue.Parse, so faults carry identical messages) ----

func (d *Decoder) value(out []byte, capture bool) ([]byte, error) {
	if d.pos >= len(d.data) {
		return out, d.syntax(len(d.data))
	}
	switch c := d.data[d.pos]; c {
	case '{':
		if d.depth+1 > jsonvalue.MaxDepth {
			return out, d.fault(jsonvalue.SuffixTooDeep)
		}
		if capture {
			out = append(out, '{')
		}
		first := true
		err := d.Object(func(name []byte) error {
			if capture {
				if !first {
					out = append(out, ',')
				}
				first = false
				out = AppendString(out, unsafe.String(unsafe.SliceData(name), len(name)))
				out = append(out, ':')
			}
			var err error
			out, err = d.value(out, capture)
			return err
		})
		if capture {
			out = append(out, '}')
		}
		return out, err
	case '[':
		if d.depth+1 > jsonvalue.MaxDepth {
			return out, d.fault(jsonvalue.SuffixTooDeep)
		}
		if capture {
			out = append(out, '[')
		}
		err := d.Array(func(i int) error {
			if capture && i > 0 {
				out = append(out, ',')
			}
			var err error
			out, err = d.value(out, capture)
			return err
		})
		if capture {
			out = append(out, ']')
		}
		return out, err
	case '"':
		b, err := d.str(false)
		if err != nil {
			return out, err
		}
		if capture {
			out = AppendString(out, unsafe.String(unsafe.SliceData(b), len(b)))
		}
		return out, nil
	case 't':
		if capture {
			out = append(out, "true"...)
		}
		return out, d.literal("true")
	case 'f':
		if capture {
			out = append(out, "false"...)
		}
		return out, d.literal("false")
	case 'n':
		if capture {
			out = append(out, "null"...)
		}
		return out, d.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			tok, err := d.lexNumber()
			if err != nil {
				return out, err
			}
			if err := d.checkFinite(tok); err != nil {
				return out, err
			}
			if capture {
				out = append(out, tok...)
			}
			return out, nil
		}
		return out, d.syntax(d.pos)
	}
}

// lexNumber reads a number token per RFC 8259 (jsonvalue's grammar and syntax offsets).
func (d *Decoder) lexNumber() ([]byte, error) {
	start := d.pos
	data := d.data
	if data[d.pos] == '-' {
		d.pos++
	}
	if d.pos >= len(data) {
		return nil, d.syntax(len(data))
	}
	switch c := data[d.pos]; {
	case c == '0':
		d.pos++
	case c >= '1' && c <= '9':
		for d.pos < len(data) && data[d.pos] >= '0' && data[d.pos] <= '9' {
			d.pos++
		}
	default:
		return nil, d.syntax(d.pos)
	}
	if d.pos < len(data) && data[d.pos] == '.' {
		d.pos++
		if d.pos >= len(data) {
			return nil, d.syntax(len(data))
		}
		if data[d.pos] < '0' || data[d.pos] > '9' {
			return nil, d.syntax(d.pos)
		}
		for d.pos < len(data) && data[d.pos] >= '0' && data[d.pos] <= '9' {
			d.pos++
		}
	}
	if d.pos < len(data) && (data[d.pos] == 'e' || data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(data) && (data[d.pos] == '+' || data[d.pos] == '-') {
			d.pos++
		}
		if d.pos >= len(data) {
			return nil, d.syntax(len(data))
		}
		if data[d.pos] < '0' || data[d.pos] > '9' {
			return nil, d.syntax(d.pos)
		}
		for d.pos < len(data) && data[d.pos] >= '0' && data[d.pos] <= '9' {
			d.pos++
		}
	}
	return data[start:d.pos], nil
}

// checkFinite applies jsonvalue's rule that a number must fit a double.
func (d *Decoder) checkFinite(tok []byte) error {
	digits := tok
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) <= 15 && bytes.IndexAny(digits, ".eE") < 0 {
		return nil
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(tok), len(tok)), 64)
	if err != nil || math.IsInf(f, 0) {
		return d.fault(jsonvalue.SuffixNotFinite)
	}
	return nil
}

// str reads a string at d.pos (which holds '"'). The result views the input when the string has
// no escapes; otherwise it is decoded into d.scratch (fresh memory when fresh is set, as member
// names must outlive later reads).
func (d *Decoder) str(fresh bool) ([]byte, error) {
	d.pos++
	start := d.pos
	data := d.data
	for d.pos < len(data) {
		c := data[d.pos]
		switch {
		case c == '"':
			b := data[start:d.pos]
			d.pos++
			return b, nil
		case c == '\\':
			return d.strSlow(start, fresh)
		case c < 0x20:
			return nil, d.syntax(d.pos)
		case c < utf8.RuneSelf:
			d.pos++
		default:
			r, size := utf8.DecodeRune(data[d.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, d.fault(jsonvalue.SuffixInvalidUTF8)
			}
			d.pos += size
		}
	}
	return nil, d.syntax(len(data))
}

func (d *Decoder) strSlow(start int, fresh bool) ([]byte, error) {
	var buf []byte
	if fresh {
		buf = make([]byte, 0, d.pos-start+16)
	} else {
		buf = d.scratch[:0]
	}
	buf = append(buf, d.data[start:d.pos]...)
	data := d.data
	for d.pos < len(data) {
		c := data[d.pos]
		switch {
		case c == '"':
			d.pos++
			if !fresh {
				d.scratch = buf
			}
			return buf, nil
		case c == '\\':
			d.pos++
			if d.pos >= len(data) {
				return nil, d.syntax(len(data))
			}
			e := data[d.pos]
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
				d.pos++
			case 'b':
				buf = append(buf, '\b')
				d.pos++
			case 'f':
				buf = append(buf, '\f')
				d.pos++
			case 'n':
				buf = append(buf, '\n')
				d.pos++
			case 'r':
				buf = append(buf, '\r')
				d.pos++
			case 't':
				buf = append(buf, '\t')
				d.pos++
			case 'u':
				d.pos++
				r, err := d.hex4()
				if err != nil {
					return nil, err
				}
				switch {
				case utf16.IsSurrogate(r) && r < 0xDC00:
					if lo, ok := d.peekLowSurrogate(); ok {
						d.pos += 6
						r = utf16.DecodeRune(r, lo)
					} else {
						return nil, d.fault(jsonvalue.SuffixUnpaired)
					}
				case utf16.IsSurrogate(r):
					return nil, d.fault(jsonvalue.SuffixUnpaired)
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return nil, d.syntax(d.pos)
			}
		case c < 0x20:
			return nil, d.syntax(d.pos)
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			d.pos++
		default:
			r, size := utf8.DecodeRune(data[d.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, d.fault(jsonvalue.SuffixInvalidUTF8)
			}
			buf = append(buf, data[d.pos:d.pos+size]...)
			d.pos += size
		}
	}
	return nil, d.syntax(len(data))
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

func (d *Decoder) hex4() (rune, error) {
	var r rune
	for i := 0; i < 4; i++ {
		if d.pos >= len(d.data) {
			return 0, d.syntax(len(d.data))
		}
		h := hexVal(d.data[d.pos])
		if h < 0 {
			return 0, d.syntax(d.pos)
		}
		r = r<<4 | h
		d.pos++
	}
	return r, nil
}

func (d *Decoder) peekLowSurrogate() (rune, bool) {
	rest := d.data[d.pos:]
	if len(rest) < 6 || rest[0] != '\\' || rest[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range rest[2:6] {
		h := hexVal(c)
		if h < 0 {
			return 0, false
		}
		r = r<<4 | h
	}
	if r < 0xDC00 || r > 0xDFFF {
		return 0, false
	}
	return r, true
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
	p := renderPath(d.label, d.path) + "." + member
	return &DecodeError{Path: p, Field: fieldOf(d.label, p), Message: p + " " + problem + "."}
}

// Offset returns the byte offset of the next value in the input.
func (d *Decoder) Offset() int { return d.pos }

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
	// Drop every reference into data before the decoder is reused.
	clear(d.namesBuf[:])
	clear(d.pathBuf[:])
	d.data, d.names, d.path = nil, nil, nil
	if cap(d.scratch) > 1<<16 {
		d.scratch = nil
	}
	decoderPool.Put(d)
	return err
}
