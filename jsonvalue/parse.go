package jsonvalue

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// DefaultLabel is the label used when Parse, CloneValue or AssertValue get an empty one.
const DefaultLabel = "value"

// Parse parses strict JSON text (events.md §3.4) into a value of the package's value model.
// The first fault in document order is returned as a *JSONValidationError whose message starts
// with label (or with the path under label that holds the fault).
func Parse(data []byte, label string) (any, error) {
	if label == "" {
		label = DefaultLabel
	}
	p := scratchPool.Get().(*parser)
	defer p.release()
	p.data, p.label = data, label
	// Strings without escapes are views of one private copy of the input: one allocation for
	// all their bytes instead of one per string. The copy is never written after this.
	p.owned = append([]byte(nil), data...)
	p.skipWS()
	v, err := p.value(1)
	if err != nil {
		return nil, err
	}
	p.skipWS()
	if p.pos < len(p.data) {
		return nil, p.syntax(p.pos)
	}
	return v, nil
}

// ParseObject parses text that must hold a JSON object; any other value gives
// `<label> must be a JSON object.`
func ParseObject(data []byte, label string) (*Object, error) {
	if label == "" {
		label = "object"
	}
	v, err := Parse(data, label)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, newError(label, SuffixNotObject)
	}
	return o, nil
}

// Valid reports whether data is strict JSON text.
func Valid(data []byte) bool {
	_, err := Parse(data, "")
	return err == nil
}

// scratchPool recycles parsers so the scratch stacks are allocated once, not per document.
var scratchPool = sync.Pool{New: func() any {
	return &parser{stack: make([]segment, 0, 16), members: make([]Member, 0, 64), elems: make([]any, 0, 64)}
}}

func (p *parser) release() {
	clear(p.members) // non-empty only after a fault mid-document
	clear(p.elems)
	p.data, p.owned, p.label, p.pos = nil, nil, "", 0
	p.stack, p.members, p.elems = p.stack[:0], p.members[:0], p.elems[:0]
	if cap(p.members) > 1<<12 || cap(p.elems) > 1<<12 {
		return // do not keep huge scratch stacks alive
	}
	scratchPool.Put(p)
}

type segment struct {
	name  string
	index int // -1 for a member segment
}

type parser struct {
	data    []byte
	owned   []byte // immutable copy of data backing escape-free strings (nil: allocate each)
	pos     int
	label   string
	stack   []segment
	members []Member // scratch stack of the members of the open objects
	elems   []any    // scratch stack of the elements of the open arrays
}

// path renders the label followed by the current segments; only called on error.
func (p *parser) path() string {
	var b strings.Builder
	b.WriteString(p.label)
	for _, s := range p.stack {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		} else {
			b.WriteByte('.')
			b.WriteString(s.name)
		}
	}
	return b.String()
}

func (p *parser) syntax(offset int) error {
	return &JSONValidationError{Path: p.label, Message: p.label + suffixNotJSONTextStart + strconv.Itoa(offset) + "."}
}

func (p *parser) fault(suffix string) error { return newError(p.path(), suffix) }

func (p *parser) skipWS() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value parses one value starting at p.pos (white space already skipped). depth is the depth a
// container opened here would have.
func (p *parser) value(depth int) (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.syntax(len(p.data))
	}
	switch c := p.data[p.pos]; c {
	case '{':
		if depth > MaxDepth {
			return nil, p.fault(SuffixTooDeep)
		}
		return p.object(depth)
	case '[':
		if depth > MaxDepth {
			return nil, p.fault(SuffixTooDeep)
		}
		return p.array(depth)
	case '"':
		s, err := p.str(false)
		if err != nil {
			return nil, err
		}
		return s, nil
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number()
		}
		return nil, p.syntax(p.pos)
	}
}

func (p *parser) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.data) {
			return p.syntax(len(p.data))
		}
		if p.data[p.pos] != word[i] {
			return p.syntax(p.pos)
		}
		p.pos++
	}
	return nil
}

func (p *parser) object(depth int) (any, error) {
	p.pos++ // '{'
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return &Object{}, nil
	}
	start := len(p.members)
	var names map[string]struct{} // duplicate check for large objects
	for {
		if p.pos >= len(p.data) {
			return nil, p.syntax(len(p.data))
		}
		if p.data[p.pos] != '"' {
			return nil, p.syntax(p.pos)
		}
		name, err := p.str(true)
		if err != nil {
			return nil, err
		}
		if p.duplicate(start, name, &names) {
			return nil, newError(p.path(), " contains duplicate member name "+string(appendQuoted(nil, name))+".")
		}
		p.skipWS()
		if p.pos >= len(p.data) {
			return nil, p.syntax(len(p.data))
		}
		if p.data[p.pos] != ':' {
			return nil, p.syntax(p.pos)
		}
		p.pos++
		p.skipWS()
		p.stack = append(p.stack, segment{name: name, index: -1})
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.stack = p.stack[:len(p.stack)-1]
		p.members = append(p.members, Member{Name: name, Value: v})
		p.skipWS()
		if p.pos >= len(p.data) {
			return nil, p.syntax(len(p.data))
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.skipWS()
		case '}':
			p.pos++
			o := &Object{members: append([]Member(nil), p.members[start:]...)}
			clear(p.members[start:])
			p.members = p.members[:start]
			if len(o.members) > indexThreshold {
				o.index = make(map[string]int, len(o.members))
				for i, m := range o.members {
					o.index[m.Name] = i
				}
			}
			return o, nil
		default:
			return nil, p.syntax(p.pos)
		}
	}
}

// duplicate reports whether name is already a member of the object whose members start at
// p.members[start]; large objects switch to a set.
func (p *parser) duplicate(start int, name string, names *map[string]struct{}) bool {
	open := p.members[start:]
	if *names == nil {
		for i := range open {
			if open[i].Name == name {
				return true
			}
		}
		if len(open) >= indexThreshold {
			*names = make(map[string]struct{}, 2*len(open))
			for i := range open {
				(*names)[open[i].Name] = struct{}{}
			}
			(*names)[name] = struct{}{}
		}
		return false
	}
	if _, ok := (*names)[name]; ok {
		return true
	}
	(*names)[name] = struct{}{}
	return false
}

func (p *parser) array(depth int) (any, error) {
	p.pos++ // '['
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return []any{}, nil
	}
	start := len(p.elems)
	p.stack = append(p.stack, segment{index: 0})
	top := len(p.stack) - 1
	for {
		p.stack[top].index = len(p.elems) - start
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.elems = append(p.elems, v)
		p.skipWS()
		if p.pos >= len(p.data) {
			return nil, p.syntax(len(p.data))
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.skipWS()
		case ']':
			p.pos++
			p.stack = p.stack[:top]
			arr := append([]any(nil), p.elems[start:]...)
			clear(p.elems[start:])
			p.elems = p.elems[:start]
			return arr, nil
		default:
			return nil, p.syntax(p.pos)
		}
	}
}

// str parses a string at p.pos (which holds '"'). For a member name (isName) faults are reported
// at the enclosing object's path, which is the current path; for a value, at the value's path,
// which is also the current path — the caller pushes the member segment only after the name.
func (p *parser) str(isName bool) (string, error) {
	_ = isName
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes, ASCII or valid UTF-8.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			var s string
			if p.owned != nil {
				s = unsafe.String(&p.owned[start], p.pos-start) // start < len(owned): it holds the quote
			} else {
				s = string(p.data[start:p.pos])
			}
			p.pos++
			return s, nil
		case c == '\\':
			return p.strSlow(start)
		case c < 0x20:
			return "", p.syntax(p.pos)
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.fault(SuffixInvalidUTF8)
			}
			p.pos += size
		}
	}
	return "", p.syntax(len(p.data))
}

func (p *parser) strSlow(start int) (string, error) {
	buf := make([]byte, 0, p.pos-start+16)
	buf = append(buf, p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c == '\\':
			p.pos++
			if p.pos >= len(p.data) {
				return "", p.syntax(len(p.data))
			}
			e := p.data[p.pos]
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
				p.pos++
			case 'b':
				buf = append(buf, '\b')
				p.pos++
			case 'f':
				buf = append(buf, '\f')
				p.pos++
			case 'n':
				buf = append(buf, '\n')
				p.pos++
			case 'r':
				buf = append(buf, '\r')
				p.pos++
			case 't':
				buf = append(buf, '\t')
				p.pos++
			case 'u':
				p.pos++
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				switch {
				case utf16.IsSurrogate(r) && r < 0xDC00:
					// A high surrogate must be followed at once by an escaped low surrogate.
					if lo, ok := p.peekLowSurrogate(); ok {
						p.pos += 6
						r = utf16.DecodeRune(r, lo)
					} else {
						return "", p.fault(SuffixUnpaired)
					}
				case utf16.IsSurrogate(r):
					return "", p.fault(SuffixUnpaired)
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", p.syntax(p.pos)
			}
		case c < 0x20:
			return "", p.syntax(p.pos)
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.fault(SuffixInvalidUTF8)
			}
			buf = append(buf, p.data[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
	return "", p.syntax(len(p.data))
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

func (p *parser) hex4() (rune, error) {
	var r rune
	for i := 0; i < 4; i++ {
		if p.pos >= len(p.data) {
			return 0, p.syntax(len(p.data))
		}
		h := hexVal(p.data[p.pos])
		if h < 0 {
			return 0, p.syntax(p.pos)
		}
		r = r<<4 | h
		p.pos++
	}
	return r, nil
}

func (p *parser) peekLowSurrogate() (rune, bool) {
	d := p.data[p.pos:]
	if len(d) < 6 || d[0] != '\\' || d[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range d[2:6] {
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

func (p *parser) number() (any, error) {
	start := p.pos
	d := p.data
	if d[p.pos] == '-' {
		p.pos++
	}
	if p.pos >= len(d) {
		return nil, p.syntax(len(d))
	}
	simple := true
	switch c := d[p.pos]; {
	case c == '0':
		p.pos++
	case c >= '1' && c <= '9':
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	default:
		return nil, p.syntax(p.pos)
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		simple = false
		p.pos++
		if p.pos >= len(d) {
			return nil, p.syntax(len(d))
		}
		if d[p.pos] < '0' || d[p.pos] > '9' {
			return nil, p.syntax(p.pos)
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		simple = false
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(d) {
			return nil, p.syntax(len(d))
		}
		if d[p.pos] < '0' || d[p.pos] > '9' {
			return nil, p.syntax(p.pos)
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	text := d[start:p.pos]
	if simple {
		digits := text
		neg := false
		if digits[0] == '-' {
			neg = true
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
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, p.fault(SuffixNotFinite)
	}
	return f, nil
}
