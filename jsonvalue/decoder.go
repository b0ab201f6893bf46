package jsonvalue

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Decoder is the strict JSON scanner of events.md §3.4 as a pull decoder: the single
// implementation of white space, literals, string (escapes, surrogate pairs, UTF-8), number
// grammar, duplicate member names, nesting depth and path tracking that [Parse] is built on.
// Typed decoders use it to read a document token by token while keeping what the value model
// drops, such as the exact text of a number.
//
// Every fault is a *[JSONValidationError] with exactly Parse's message: read with the same calls
// in document order, the first fault a Decoder reports is the one Parse reports for the same
// text and label. Faults in a member name are reported at the path of the enclosing object,
// faults in a value at the path of the value ([Decoder.Path]).
//
// A reader for one kind of value (ReadString, ReadNumber, BeginObject, …) expects the next value
// to be of that kind: callers look at [Decoder.Peek] or [Decoder.PeekKind] first; a reader called
// on a value of another kind reports a syntax fault at the value's offset. Readers leave the
// position just after their value; white space before the next value is skipped by
// [Decoder.BeginDocument], [Decoder.NextMember] and [Decoder.NextElement].
//
// The zero value is not ready: call Reset. A Decoder must not be copied after Reset. The views
// it hands out (member names, ReadStringBytes, ReadNumber) are valid only until the next call
// unless documented otherwise.
type Decoder struct {
	data    []byte
	owned   []byte // Parse only: immutable copy of data backing escape-free strings
	pos     int
	label   string
	scratch []byte // decoded bytes of the last string with escapes

	// The stacks below hold no pointers, so pushing and popping them costs no write barriers.
	frames   []frame   // open containers, outermost first; also the path
	names    []nameRef // names of the members of the open objects, for the duplicate check
	escaped  []byte    // the decoded names with escapes of the open objects
	nameSets []map[string]struct{}

	framesBuf [12]frame
	// extraDepth raises the nesting limit above MaxDepth (SetMaxDepth); Reset clears it.
	extraDepth int
	namesBuf   [40]nameRef
}

// frame is one open container: the path segment of the value being read in it and, for an
// object, its member names.
type frame struct {
	bloom   uint64 // object: one bit per nameBloom of its names; a clear bit proves a name new
	index   int    // array: the element being read (-1 before the first); object: -1
	names   int    // position in Decoder.names of the container's first member name
	escaped int    // object: length of Decoder.escaped when it was opened
	set     int    // object: 1 + position in Decoder.nameSets of its name set; 0: no set
	named   bool   // object: its last name is that of the member whose value is being read
}

// nameRef locates a member name: data[off:off+n], or escaped[^off:^off+n] for a name with
// escapes (off < 0).
type nameRef struct {
	off, n int
}

// nameBytes returns the unescaped bytes of a name.
func (d *Decoder) nameBytes(r nameRef) []byte {
	if r.off < 0 {
		return d.escaped[^r.off : ^r.off+r.n]
	}
	return d.data[r.off : r.off+r.n]
}

// dupSetThreshold is the member count from which an object's duplicate check uses a set
// instead of a linear scan.
const dupSetThreshold = 16

// Mark is a position of a [Decoder] to come back to with [Decoder.Rewind].
type Mark struct {
	pos, frames, names, escaped, nameSets int
}

// Kind is the kind of the next value, as told by its first byte.
type Kind uint8

// Kinds reported by [Decoder.PeekKind].
const (
	// KindEnd: no input is left.
	KindEnd Kind = iota
	// KindInvalid: the next byte starts no JSON value (a syntax fault there).
	KindInvalid
	// KindNull: `n`, a null literal.
	KindNull
	// KindBool: `t` or `f`, a boolean literal.
	KindBool
	// KindNumber: `-` or a digit, a number.
	KindNumber
	// KindString: `"`, a string.
	KindString
	// KindArray: `[`, an array.
	KindArray
	// KindObject: `{`, an object.
	KindObject
)

// Reset prepares d to read data. label roots every path in fault messages ([DefaultLabel] when
// empty), as Parse's label does. Reset drops every reference into the previous input.
func (d *Decoder) Reset(data []byte, label string) {
	d.extraDepth = 0
	if label == "" {
		label = DefaultLabel
	}
	if cap(d.frames) <= len(d.framesBuf) {
		d.frames = d.framesBuf[:0]
	} else {
		d.frames = d.frames[:0]
	}
	if cap(d.names) <= len(d.namesBuf) || cap(d.names) > 1<<12 {
		d.names = d.namesBuf[:0]
	} else {
		d.names = d.names[:0]
	}
	if cap(d.scratch) > 1<<16 {
		d.scratch = nil
	}
	if cap(d.escaped) > 1<<16 {
		d.escaped = nil
	}
	d.escaped = d.escaped[:0]
	clear(d.nameSets) // non-empty only after a fault mid-document
	d.nameSets = d.nameSets[:0]
	d.data, d.owned, d.pos, d.label = data, nil, 0, label
}

// Label returns the label that roots fault paths.
func (d *Decoder) Label() string { return d.label }

// Offset returns the byte offset of the next value (or separator) in the input.
func (d *Decoder) Offset() int { return d.pos }

// SetMaxDepth sets the nesting limit of the document being read to n levels (at least
// [MaxDepth]; smaller values are taken as MaxDepth). It is for documents that embed
// contract values one or more levels deeper than the contract's own limit, such as a reducer
// state holding events (each of which may nest MaxDepth levels); the fault message for a
// deeper document stays the same. [Decoder.Reset] restores MaxDepth.
func (d *Decoder) SetMaxDepth(n int) { d.extraDepth = max(n-MaxDepth, 0) }

// Depth returns the number of open containers.
func (d *Decoder) Depth() int { return len(d.frames) }

// Mark returns the current position, to come back to with Rewind.
func (d *Decoder) Mark() Mark {
	return Mark{pos: d.pos, frames: len(d.frames), names: len(d.names), escaped: len(d.escaped), nameSets: len(d.nameSets)}
}

// Rewind goes back to m, which must have been taken before a value that has since been read
// completely, so that the value can be read again (a tagged enum reads its tag first).
func (d *Decoder) Rewind(m Mark) {
	clear(d.nameSets[m.nameSets:])
	d.pos, d.frames, d.names = m.pos, d.frames[:m.frames], d.names[:m.names]
	d.escaped, d.nameSets = d.escaped[:m.escaped], d.nameSets[:m.nameSets]
}

// Path returns the label-rooted path (events.md §3.2) of the value being read: `label.a[0]`.
func (d *Decoder) Path() string {
	if len(d.frames) == 0 {
		return d.label
	}
	b := make([]byte, 0, len(d.label)+16*len(d.frames))
	b = append(b, d.label...)
	for i := range d.frames {
		f := &d.frames[i]
		switch {
		case f.index >= 0:
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
		case f.named:
			end := len(d.names) // the object's names end where the next container's begin
			if i+1 < len(d.frames) {
				end = d.frames[i+1].names
			}
			b = append(b, '.')
			b = append(b, d.nameBytes(d.names[end-1])...)
		}
	}
	return string(b)
}

// Fault returns the *JSONValidationError "<path><suffix>" at the value being read; suffix is
// one of the package's Suffix constants.
func (d *Decoder) Fault(suffix string) error { return d.fault(suffix) }

func (d *Decoder) fault(suffix string) *JSONValidationError { return newError(d.Path(), suffix) }

// SyntaxFault returns the grammar fault at the current offset (`<label> is not valid JSON text at
// byte offset <n>.`), for a typed decoder that finds there no value at all (PeekKind reports
// KindEnd or KindInvalid).
func (d *Decoder) SyntaxFault() error { return d.syntaxHere() }

// syntax is the grammar fault at offset (events.md §3.4: the first byte that cannot continue a
// valid JSON text, or the input length when the text ends early).
func (d *Decoder) syntax(offset int) *JSONValidationError {
	return &JSONValidationError{Path: d.label, Message: d.label + suffixNotJSONTextStart + strconv.Itoa(offset) + "."}
}

// syntaxHere is the grammar fault at the current position.
func (d *Decoder) syntaxHere() *JSONValidationError {
	return d.syntax(min(d.pos, len(d.data)))
}

func (d *Decoder) skipWS() { d.pos = skipWS(d.data, d.pos) }

// skipWS returns the position of the first byte from i on that is not JSON white space (space,
// tab, LF, CR).
func skipWS(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// BeginDocument skips the white space before the document's value and refuses an empty text.
func (d *Decoder) BeginDocument() error {
	d.skipWS()
	if d.pos >= len(d.data) {
		return d.syntax(len(d.data))
	}
	return nil
}

// EndDocument skips the white space after the document's value and refuses anything else.
func (d *Decoder) EndDocument() error {
	d.skipWS()
	if d.pos < len(d.data) {
		return d.syntax(d.pos)
	}
	return nil
}

// Peek returns the first byte of the next value, or 0 at the end of the input.
func (d *Decoder) Peek() byte {
	if d.pos >= len(d.data) {
		return 0
	}
	return d.data[d.pos]
}

// PeekKind returns the kind of the next value.
func (d *Decoder) PeekKind() Kind {
	if d.pos >= len(d.data) {
		return KindEnd
	}
	switch c := d.data[d.pos]; c {
	case '{':
		return KindObject
	case '[':
		return KindArray
	case '"':
		return KindString
	case 't', 'f':
		return KindBool
	case 'n':
		return KindNull
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return KindNumber
		}
		return KindInvalid
	}
}

// literal reads word (true, false or null) at d.pos.
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

// ReadNull reads a null literal.
func (d *Decoder) ReadNull() error {
	if d.Peek() != 'n' {
		return d.syntaxHere()
	}
	return d.literal("null")
}

// ReadBool reads a true or false literal.
func (d *Decoder) ReadBool() (bool, error) {
	switch d.Peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	}
	return false, d.syntaxHere()
}

// ReadString reads a string value as a fresh Go string.
func (d *Decoder) ReadString() (string, error) {
	b, err := d.ReadStringBytes()
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// ReadStringBytes reads a string value and returns its unescaped bytes, a view valid only until
// the next call (for enum names and tags).
func (d *Decoder) ReadStringBytes() ([]byte, error) {
	if d.Peek() != '"' {
		return nil, d.syntaxHere()
	}
	b, _, err := d.scanString()
	return b, err
}

// ReadNumberText reads a number and returns its exact text, checked against the RFC 8259
// grammar only: a number that overflows a double is returned, not refused. It is for typed
// decoders whose own range rule replaces jsonvalue's finite-number rule (exact integers); the
// view is valid until the next call.
func (d *Decoder) ReadNumberText() ([]byte, error) {
	if c := d.Peek(); c != '-' && (c < '0' || c > '9') {
		return nil, d.syntaxHere()
	}
	tok, _, err := d.scanNumber()
	return tok, err
}

// ReadNumber reads a number and returns its exact text after Parse's checks: the RFC 8259
// grammar and `<path> must contain only finite JSON numbers.` for a magnitude that rounds to
// infinity. The view is valid until the next call.
func (d *Decoder) ReadNumber() ([]byte, error) {
	if c := d.Peek(); c != '-' && (c < '0' || c > '9') {
		return nil, d.syntaxHere()
	}
	tok, simple, err := d.scanNumber()
	if err != nil {
		return nil, err
	}
	if _, err := d.numberValue(tok, simple); err != nil {
		return nil, err
	}
	return tok, nil
}

// ReadFloat reads a number as Parse does: the nearest double (round half to even), refusing
// one that overflows.
func (d *Decoder) ReadFloat() (float64, error) {
	if c := d.Peek(); c != '-' && (c < '0' || c > '9') {
		return 0, d.syntaxHere()
	}
	tok, simple, err := d.scanNumber()
	if err != nil {
		return 0, err
	}
	return d.numberValue(tok, simple)
}

// BeginObject reads the `{` of an object, refusing it when it would open nesting level
// MaxDepth+1. Its members are then read with NextMember until that reports the end.
func (d *Decoder) BeginObject() error {
	if d.Peek() != '{' {
		return d.syntaxHere()
	}
	return d.open()
}

// open reads the `{` or `[` at d.pos and opens its frame, refusing nesting level MaxDepth+1.
func (d *Decoder) open() error {
	if len(d.frames) >= MaxDepth+d.extraDepth {
		return d.fault(SuffixTooDeep)
	}
	d.pos++
	d.skipWS()
	d.frames = append(d.frames, frame{index: -1, names: len(d.names), escaped: len(d.escaped)})
	return nil
}

// NextMember moves to the next member of the innermost open object: it reads the separator,
// the member name and its colon, and extends the path by the name; ok reports a member. After
// the last member it reads the `}`, closes the object and reports ok false. The name is a view
// valid as long as the input (or, for a name with escapes, a fresh copy); callers must not
// modify it.
//
// A name that repeats one of the object's earlier names gives ok true with the fault `<path>
// contains duplicate member name "<name>".` (path of the object); the path then already names
// the member, so a caller may report its own fault for the member instead. Any other fault
// gives ok false.
func (d *Decoder) NextMember() (name []byte, ok bool, err error) {
	s, ok, err := d.nextName()
	if !ok {
		return nil, false, err
	}
	return unsafe.Slice(unsafe.StringData(s), len(s)), true, err
}

// nextName is NextMember with the name as a string (over d.owned when set).
func (d *Decoder) nextName() (string, bool, error) {
	f := &d.frames[len(d.frames)-1]
	f.named = false
	data, i := d.data, d.pos
	if len(d.names) > f.names {
		// After a member's value: a separator or the end of the object.
		if i = skipWS(data, i); i < len(data) && data[i] == ',' {
			i = skipWS(data, i+1)
		} else if i < len(data) && data[i] == '}' {
			d.pos = i + 1
			d.endObject(f)
			return "", false, nil
		} else {
			d.pos = i
			return "", false, d.syntax(i)
		}
	} else if i < len(data) && data[i] == '}' {
		d.pos = i + 1
		d.endObject(f)
		return "", false, nil
	}
	d.pos = i
	if i >= len(data) || data[i] != '"' {
		return "", false, d.syntax(i)
	}
	b, esc, err := d.scanString()
	if err != nil {
		return "", false, err
	}
	name := d.stringOf(b, esc)
	ref := nameRef{off: d.pos - 1 - len(b), n: len(b)}
	if esc {
		ref.off = ^len(d.escaped)
		d.escaped = append(d.escaped, b...)
	}
	if d.repeated(f, name) {
		err := newError(d.Path(), " contains duplicate member name "+string(appendQuoted(nil, name))+".")
		d.names = append(d.names, ref)
		f.named = true
		return name, true, err
	}
	d.names = append(d.names, ref)
	i = skipWS(data, d.pos)
	if i >= len(data) || data[i] != ':' {
		d.pos = i
		return "", false, d.syntax(i)
	}
	d.pos = skipWS(data, i+1)
	f.named = true
	return name, true, nil
}

// repeated reports whether name is one of the names of the object of frame f; from
// dupSetThreshold names on it keeps them in a set, which it updates with name.
func (d *Decoder) repeated(f *frame, name string) bool {
	if f.set != 0 {
		set := d.nameSets[f.set-1]
		if _, ok := set[name]; ok {
			return true
		}
		set[name] = struct{}{}
		return false
	}
	open := d.names[f.names:]
	if bit := uint64(1) << nameBloom(name); f.bloom&bit == 0 {
		f.bloom |= bit // a new name: no earlier name has its bloom bit
	} else {
		for _, r := range open {
			if r.n == len(name) && string(d.nameBytes(r)) == name {
				return true
			}
		}
	}
	if len(open) >= dupSetThreshold {
		// Keys are views of the names: the input, or a region of d.escaped that is not
		// written again while the object is open (a grown d.escaped leaves it behind intact).
		set := make(map[string]struct{}, 4*len(open))
		for _, r := range open {
			b := d.nameBytes(r)
			set[unsafe.String(unsafe.SliceData(b), len(b))] = struct{}{}
		}
		set[name] = struct{}{}
		d.nameSets = append(d.nameSets, set)
		f.set = len(d.nameSets)
	}
	return false
}

// nameBloom maps a name to one of 64 bits from its length and end bytes: cheap, and different
// for most pairs of names of one object.
func nameBloom(name string) uint {
	if name == "" {
		return 0
	}
	return (uint(len(name))*5 + uint(name[0])*3 + uint(name[len(name)-1])) & 63
}

func (d *Decoder) endObject(f *frame) {
	d.names, d.escaped = d.names[:f.names], d.escaped[:f.escaped]
	if f.set != 0 {
		d.nameSets[f.set-1] = nil
		d.nameSets = d.nameSets[:f.set-1]
	}
	d.frames = d.frames[:len(d.frames)-1]
}

// BeginArray reads the `[` of an array, refusing it when it would open nesting level
// MaxDepth+1. Its elements are then read with NextElement until that reports the end.
func (d *Decoder) BeginArray() error {
	if d.Peek() != '[' {
		return d.syntaxHere()
	}
	return d.open()
}

// NextElement moves to the next element of the innermost open array, reading the separator and
// extending the path by the element's index. After the last element it reads the `]`, closes
// the array and reports ok false.
func (d *Decoder) NextElement() (ok bool, err error) {
	f := &d.frames[len(d.frames)-1]
	data, i := d.data, d.pos
	if f.index >= 0 {
		// After an element: a separator or the end of the array.
		if i = skipWS(data, i); i < len(data) && data[i] == ',' {
			i = skipWS(data, i+1)
		} else if i < len(data) && data[i] == ']' {
			d.pos = i + 1
			d.frames = d.frames[:len(d.frames)-1]
			return false, nil
		} else {
			d.pos = i
			return false, d.syntax(i)
		}
	} else if i < len(data) && data[i] == ']' {
		d.pos = i + 1
		d.frames = d.frames[:len(d.frames)-1]
		return false, nil
	}
	d.pos = i
	if i >= len(data) {
		return false, d.syntax(i)
	}
	f.index++
	return true, nil
}

// Skip reads and discards one value with every check Parse makes.
func (d *Decoder) Skip() error {
	_, err := d.appendValue(nil, false)
	return err
}

// AppendCompact reads one value with every check Parse makes and appends its compact
// re-encoding to dst: member order kept, strings re-quoted by [AppendQuote], numbers exactly as
// written.
func (d *Decoder) AppendCompact(dst []byte) ([]byte, error) {
	return d.appendValue(dst, true)
}

func (d *Decoder) appendValue(out []byte, capture bool) ([]byte, error) {
	if d.pos >= len(d.data) {
		return out, d.syntax(len(d.data))
	}
	switch c := d.data[d.pos]; c {
	case '{', '[':
		if err := d.open(); err != nil {
			return out, err
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		if capture {
			out = append(out, c)
		}
		for first := true; ; first = false {
			var name string
			var ok bool
			var err error
			if c == '{' {
				name, ok, err = d.nextName()
			} else {
				ok, err = d.NextElement()
			}
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			if capture && !first {
				out = append(out, ',')
			}
			if capture && c == '{' {
				out = append(AppendQuote(out, name), ':')
			}
			if out, err = d.appendValue(out, capture); err != nil {
				return out, err
			}
		}
		if capture {
			out = append(out, closer)
		}
		return out, nil
	case '"':
		b, _, err := d.scanString()
		if err != nil {
			return out, err
		}
		if capture {
			out = AppendQuote(out, unsafe.String(unsafe.SliceData(b), len(b)))
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
		if c != '-' && (c < '0' || c > '9') {
			return out, d.syntax(d.pos)
		}
		tok, simple, err := d.scanNumber()
		if err != nil {
			return out, err
		}
		if _, err := d.numberValue(tok, simple); err != nil {
			return out, err
		}
		if capture {
			out = append(out, tok...)
		}
		return out, nil
	}
}

// stringOf returns the string of scanString's result: for an escape-free string a view of the
// input (of d.owned when set, at the same offsets), else a fresh copy of the decoded bytes.
func (d *Decoder) stringOf(b []byte, esc bool) string {
	switch {
	case esc:
		return string(b)
	case d.owned != nil:
		return unsafe.String(&d.owned[d.pos-1-len(b)], len(b)) // the closing quote is in range
	default:
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
}

// scanString reads the string whose opening quote is at d.pos and returns its unescaped bytes:
// a view of the input when it has no escapes (esc false), else the decoded bytes in d.scratch
// (esc true), valid until the next string.
func (d *Decoder) scanString() (b []byte, esc bool, err error) {
	data := d.data
	start := d.pos + 1 // after the opening quote
	i := start
	for {
		// Eight bytes at a time while none of them ends the plain run (see plainWord).
		for i+8 <= len(data) && plainWord(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for i < len(data) && plainASCII[data[i]] {
			i++
		}
		if i >= len(data) {
			break
		}
		switch c := data[i]; {
		case c == '"':
			d.pos = i + 1
			return data[start:i], false, nil
		case c == '\\':
			d.pos = i
			b, err := d.scanEscaped(start)
			return b, true, err
		case c < 0x20:
			d.pos = i
			return nil, false, d.syntax(i)
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				d.pos = i
				return nil, false, d.fault(SuffixInvalidUTF8)
			}
			i += size
		}
	}
	d.pos = len(data)
	return nil, false, d.syntax(len(data))
}

const wordOnes, wordHighs = 0x0101010101010101, 0x8080808080808080

// escapeBits has some high bit (wordHighs) set exactly when some byte of w needs an RFC 8785
// escape: a control character, `"` or `\`. It uses the exact "has a byte less than n" and "has a zero
// byte" tests of the bit-twiddling folklore: (x − n·ones) &^ x has a high bit set when some
// byte of x is below n (n ≤ 128); a zero byte of w ^ c·ones is a byte equal to c.
func escapeBits(w uint64) uint64 {
	control := (w - 0x20*wordOnes) &^ w
	q := w ^ '"'*wordOnes
	quote := (q - wordOnes) &^ q
	b := w ^ '\\'*wordOnes
	backslash := (b - wordOnes) &^ b
	return control | quote | backslash
}

// plainWord reports whether all eight bytes of w are plainASCII: none is a control character,
// `"`, `\` or a byte of a multi-byte character.
func plainWord(w uint64) bool { return (escapeBits(w)|w)&wordHighs == 0 }

// plainASCII marks the bytes a string holds as they are: ASCII except controls, `"` and `\`.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanEscaped continues scanString from the first backslash, decoding into d.scratch.
func (d *Decoder) scanEscaped(start int) ([]byte, error) {
	data := d.data
	buf := append(d.scratch[:0], data[start:d.pos]...)
	for d.pos < len(data) {
		c := data[d.pos]
		switch {
		case c == '"':
			d.pos++
			d.scratch = buf // keep a grown buffer for the next string
			return buf, nil
		case c == '\\':
			d.pos++
			if d.pos >= len(data) {
				return nil, d.syntax(len(data))
			}
			e := data[d.pos]
			d.pos++
			if u := shortEscape[e]; u != 0 {
				buf = append(buf, u)
				continue
			}
			if e != 'u' {
				return nil, d.syntax(d.pos - 1)
			}
			r, err := d.hex4()
			if err != nil {
				return nil, err
			}
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00:
				// A high surrogate must be followed at once by an escaped low surrogate.
				lo, ok := d.peekLowSurrogate()
				if !ok {
					return nil, d.fault(SuffixUnpaired)
				}
				d.pos += 6
				r = utf16.DecodeRune(r, lo)
			case utf16.IsSurrogate(r):
				return nil, d.fault(SuffixUnpaired)
			}
			buf = utf8.AppendRune(buf, r)
		case c < 0x20:
			return nil, d.syntax(d.pos)
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			d.pos++
		default:
			r, size := utf8.DecodeRune(data[d.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, d.fault(SuffixInvalidUTF8)
			}
			buf = append(buf, data[d.pos:d.pos+size]...)
			d.pos += size
		}
	}
	return nil, d.syntax(len(data))
}

// shortEscape maps the byte after a backslash to the byte it stands for (0: not a one-byte
// escape).
var shortEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

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

// peekLowSurrogate reports the escaped low surrogate `\uDC00`–`\uDFFF` at d.pos, if any.
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

// scanNumber reads the number at d.pos (which holds `-` or a digit) under the RFC 8259 grammar.
// simple reports an integer literal: no fraction, no exponent.
func (d *Decoder) scanNumber() (tok []byte, simple bool, err error) {
	start := d.pos
	data := d.data
	if data[d.pos] == '-' {
		d.pos++
	}
	if d.pos >= len(data) {
		return nil, false, d.syntax(len(data))
	}
	switch c := data[d.pos]; {
	case c == '0':
		d.pos++
	case c >= '1' && c <= '9':
		for d.pos < len(data) && data[d.pos] >= '0' && data[d.pos] <= '9' {
			d.pos++
		}
	default:
		return nil, false, d.syntax(d.pos)
	}
	simple = true
	if d.pos < len(data) && data[d.pos] == '.' {
		simple = false
		d.pos++
		if err := d.digits(); err != nil {
			return nil, false, err
		}
	}
	if d.pos < len(data) && (data[d.pos] == 'e' || data[d.pos] == 'E') {
		simple = false
		d.pos++
		if d.pos < len(data) && (data[d.pos] == '+' || data[d.pos] == '-') {
			d.pos++
		}
		if err := d.digits(); err != nil {
			return nil, false, err
		}
	}
	return data[start:d.pos], simple, nil
}

// digits reads the one or more digits of a fraction or an exponent.
func (d *Decoder) digits() error {
	data := d.data
	if d.pos >= len(data) {
		return d.syntax(len(data))
	}
	if data[d.pos] < '0' || data[d.pos] > '9' {
		return d.syntax(d.pos)
	}
	for d.pos < len(data) && data[d.pos] >= '0' && data[d.pos] <= '9' {
		d.pos++
	}
	return nil
}

// numberValue converts a number token to the nearest double, refusing one that overflows
// (events.md §3.4). simple tokens of up to 15 digits are exact in a double and need no parse.
func (d *Decoder) numberValue(tok []byte, simple bool) (float64, error) {
	if simple {
		digits := tok
		neg := digits[0] == '-'
		if neg {
			digits = digits[1:]
		}
		if len(digits) <= 15 {
			var n int64
			for _, c := range digits {
				n = n*10 + int64(c-'0')
			}
			f := float64(n)
			if neg {
				f = -f
			}
			return f, nil
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(tok), len(tok)), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, d.fault(SuffixNotFinite)
	}
	return f, nil
}
