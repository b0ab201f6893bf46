package jsonvalue

import (
	"sync"
	"unsafe"
)

// DefaultLabel is the label used when Parse, CloneValue or AssertValue get an empty one.
const DefaultLabel = "value"

// Parse parses strict JSON text (events.md §3.4) into a value of the package's value model.
// The first fault in document order is returned as a *JSONValidationError whose message starts
// with label (or with the path under label that holds the fault).
func Parse(data []byte, label string) (any, error) { return parse(data, label, false) }

// ParseKeepNumbers is Parse with every number kept as a [Number], its literal text, instead of
// a float64 (same checks, same faults), for decoders with exact integer rules such as
// `issued_at: 1.0` being refused. CloneValue turns the result into Parse's value.
func ParseKeepNumbers(data []byte, label string) (any, error) { return parse(data, label, true) }

// Number is the literal text of a JSON number as written in the document (`1.0`, `-0`,
// `12345678901234567890`), checked against the grammar and finite as a double; only
// [ParseKeepNumbers] produces it. Like a json.Number, CloneValue and the encoders treat it as
// the nearest float64.
type Number string

// ParseDeep is [Parse] with a nesting limit of maxDepth levels instead of [MaxDepth] (see
// [Decoder.SetMaxDepth]): for documents that embed values already bound by MaxDepth a few
// levels down, such as a stored reducer state.
func ParseDeep(data []byte, label string, maxDepth int) (any, error) {
	return parseDepth(data, label, false, maxDepth)
}

func parse(data []byte, label string, keepNumbers bool) (any, error) {
	return parseDepth(data, label, keepNumbers, MaxDepth)
}

func parseDepth(data []byte, label string, keepNumbers bool, maxDepth int) (any, error) {
	p := scratchPool.Get().(*parser)
	defer p.release()
	p.Reset(data, label)
	p.SetMaxDepth(maxDepth)
	p.keepNumbers = keepNumbers
	// Strings without escapes are views of one private copy of the input: one allocation for
	// all their bytes instead of one per string. The copy is never written after this.
	p.owned = append([]byte(nil), data...)
	p.skipWS()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.EndDocument(); err != nil {
		return nil, err
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
	return &parser{members: make([]Member, 0, 64), elems: make([]any, 0, 64)}
}}

func (p *parser) release() {
	clear(p.members) // non-empty only after a fault mid-document
	clear(p.elems)
	p.Reset(nil, DefaultLabel)
	p.members, p.elems = p.members[:0], p.elems[:0]
	if cap(p.members) > 1<<12 || cap(p.elems) > 1<<12 {
		return // do not keep huge scratch stacks alive
	}
	scratchPool.Put(p)
}

// parser builds values from the tokens of its Decoder, which does all scanning and checking.
type parser struct {
	Decoder
	keepNumbers bool     // numbers become Number (their text) instead of float64
	members     []Member // scratch stack of the members of the open objects
	elems       []any    // scratch stack of the elements of the open arrays
}

// value parses the value at p.pos (white space already skipped).
func (p *parser) value() (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.syntax(len(p.data))
	}
	switch c := p.data[p.pos]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		b, esc, err := p.scanString()
		if err != nil {
			return nil, err
		}
		return p.stringOf(b, esc), nil
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	default:
		if c != '-' && (c < '0' || c > '9') {
			return nil, p.syntax(p.pos)
		}
		tok, simple, err := p.scanNumber()
		if err != nil {
			return nil, err
		}
		f, err := p.numberValue(tok, simple)
		if err != nil {
			return nil, err
		}
		if p.keepNumbers {
			return Number(unsafe.String(&p.owned[p.pos-len(tok)], len(tok))), nil
		}
		return f, nil
	}
}

func (p *parser) object() (any, error) {
	if err := p.open(); err != nil {
		return nil, err
	}
	start := len(p.members)
	for {
		name, ok, err := p.nextName()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.members = append(p.members, Member{Name: name, Value: v})
	}
	if len(p.members) == start {
		return &Object{}, nil
	}
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
}

func (p *parser) array() (any, error) {
	if err := p.open(); err != nil {
		return nil, err
	}
	start := len(p.elems)
	for {
		ok, err := p.NextElement()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.elems = append(p.elems, v)
	}
	if len(p.elems) == start {
		return []any{}, nil
	}
	arr := append([]any(nil), p.elems[start:]...)
	clear(p.elems[start:])
	p.elems = p.elems[:start]
	return arr, nil
}
