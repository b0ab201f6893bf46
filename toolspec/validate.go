package toolspec

import (
	"math"
	"strconv"
	"sync"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Mode is the parse mode of dispatch-tools.md §2.3.
type Mode uint8

const (
	// Lenient drops unknown top-level keys unless the spec is strict; a host that validates
	// calls itself uses it together with the tool's cross-field validation.
	Lenient Mode = iota
	// Strict refuses unknown top-level keys in every tool; the executor always uses it.
	Strict
)

// String returns "lenient" or "strict".
func (m Mode) String() string {
	if m == Strict {
		return "strict"
	}
	return "lenient"
}

// seg is one path segment: an object key, or an array index when key is not set.
type seg struct {
	key   string
	index int
	isKey bool
}

// span locates one problem inside parser.text; static holds a message that is not rendered
// (the cross-field message, P12).
type span struct {
	typ                ProblemType
	pathStart, pathEnd int
	msgStart, msgEnd   int
	static             string
}

// parser holds the state of one parse. Paths are kept as a segment stack and rendered only when
// a problem is reported; every problem line and path is appended to one text buffer that
// becomes a single string when the parse ends, so a refused call costs two allocations however
// many problems it has, and a valid call none. Parsers are pooled.
type parser struct {
	stack []seg
	text  []byte
	spans []span
}

var parserPool = sync.Pool{New: func() any {
	return &parser{stack: make([]seg, 0, 16), text: make([]byte, 0, 512), spans: make([]span, 0, 8)}
}}

func getParser() *parser {
	p := parserPool.Get().(*parser)
	p.stack, p.text, p.spans = p.stack[:0], p.text[:0], p.spans[:0]
	return p
}

func putParser(p *parser) {
	if cap(p.text) > 64<<10 || cap(p.spans) > 1024 || cap(p.stack) > 1024 {
		return // let an unusually large buffer go
	}
	parserPool.Put(p)
}

// problems materializes the reported problems: one string holds every line and path.
func (p *parser) problems() Problems {
	if len(p.spans) == 0 {
		return nil
	}
	text := string(p.text)
	out := make(Problems, len(p.spans))
	for i, sp := range p.spans {
		msg := sp.static
		if msg == "" {
			msg = text[sp.msgStart:sp.msgEnd]
		}
		out[i] = Problem{Type: sp.typ, Path: text[sp.pathStart:sp.pathEnd], Message: msg}
	}
	return out
}

func (p *parser) appendPath(dst []byte) []byte {
	for i, s := range p.stack {
		if i > 0 {
			dst = append(dst, '.')
		}
		if s.isKey {
			dst = append(dst, s.key...)
		} else {
			dst = strconv.AppendInt(dst, int64(s.index), 10)
		}
	}
	return dst
}

// begin starts a problem line with the current path and returns its start offset; callers
// append the rest of the line to p.text and call end.
func (p *parser) begin() (start, pathEnd int) {
	start = len(p.text)
	p.text = p.appendPath(p.text)
	return start, len(p.text)
}

func (p *parser) end(t ProblemType, start, pathEnd int) {
	p.spans = append(p.spans, span{typ: t, pathStart: start, pathEnd: pathEnd, msgStart: start, msgEnd: len(p.text)})
}

func (p *parser) pushKey(k string) { p.stack = append(p.stack, seg{key: k, isKey: true}) }
func (p *parser) pushIndex(i int)  { p.stack = append(p.stack, seg{index: i}) }
func (p *parser) pop()             { p.stack = p.stack[:len(p.stack)-1] }

// value checks v against n and returns the normalized value and whether it differs from v
// (copy on write: only objects that drop unknown keys, and their ancestors, are copied).
func (p *parser) value(n *Node, v any) (any, bool) {
	if v == nil && (n.nullable || n.kind == KindUnknown) {
		return nil, false
	}
	switch n.kind {
	case KindUnknown:
		return v, false
	case KindString:
		s, ok := v.(string)
		if !ok {
			p.wrongType(n, v)
			return v, false
		}
		p.stringBounds(n, s)
	case KindNumber:
		f, ok := v.(float64)
		if !ok {
			p.wrongType(n, v)
			return v, false
		}
		p.numberChecks(n, f)
	case KindBoolean:
		if _, ok := v.(bool); !ok {
			p.wrongType(n, v)
		}
	case KindEnum:
		if s, ok := v.(string); ok {
			for _, e := range n.values {
				if e == s {
					return v, false
				}
			}
		}
		start, pe := p.begin()
		p.text = append(p.text, " must be one of "...)
		p.text = append(p.text, n.enumList...)
		p.text = append(p.text, "; got "...)
		p.text = appendJSON(p.text, v)
		p.end(ProblemEnum, start, pe)
	case KindArray:
		a, ok := v.([]any)
		if !ok {
			p.wrongType(n, v)
			return v, false
		}
		// Box the slice into an interface only when it was copied: converting a slice to any
		// allocates.
		if na, changed := p.array(n, a); changed {
			return na, true
		}
		return v, false
	case KindObject:
		o, ok := v.(*jsonvalue.Object)
		if !ok || o == nil {
			p.wrongType(n, v)
			return v, false
		}
		out, changed := p.object(n, o, n.strict)
		return out, changed
	}
	return v, false
}

func (p *parser) wrongType(n *Node, v any) {
	start, pe := p.begin()
	p.text = append(p.text, " must be "...)
	p.text = append(p.text, n.exp...)
	p.text = append(p.text, ", not "...)
	p.text = appendDescribe(p.text, v)
	p.end(ProblemWrongType, start, pe)
}

func (p *parser) stringBounds(n *Node, s string) {
	if n.minLen > 0 && len(s) < 3*n.minLen {
		// Three UTF-8 bytes are at least one UTF-16 unit, so a string of 3·min bytes or more
		// cannot be short.
		if l := UTF16Len(s); l < n.minLen {
			start, pe := p.begin()
			p.text = append(p.text, " must be at least "...)
			p.text = strconv.AppendInt(p.text, int64(n.minLen), 10)
			if n.minLen == 1 {
				p.text = append(p.text, " character"...)
			} else {
				p.text = append(p.text, " characters"...)
			}
			p.end(ProblemTooShort, start, pe)
			return
		}
	}
	// A UTF-16 length never exceeds the UTF-8 byte length.
	if n.maxLen >= 0 && len(s) > n.maxLen {
		if l := UTF16Len(s); l > n.maxLen {
			start, pe := p.begin()
			p.text = append(p.text, ' ')
			p.text = appendOverCap(p.text, l, n.maxLen)
			p.end(ProblemTooLong, start, pe)
		}
	}
}

func (p *parser) numberChecks(n *Node, f float64) {
	if n.integer && f != math.Trunc(f) {
		start, pe := p.begin()
		p.text = append(p.text, " must be an integer, not "...)
		p.text = jsonvalue.AppendNumber(p.text, f)
		p.end(ProblemNotInteger, start, pe)
		return
	}
	min, hasMin := n.min, n.hasMin
	max, hasMax := n.max, n.hasMax
	if n.integer {
		// §2.2: an int node refuses values beyond ±2^53−1 for each bound it does not set.
		if !hasMin {
			min, hasMin = -jsonvalue.MaxSafeInteger, true
		}
		if !hasMax {
			max, hasMax = jsonvalue.MaxSafeInteger, true
		}
	}
	if hasMin && f < min {
		start, pe := p.begin()
		p.text = append(p.text, " must be at least "...)
		p.text = jsonvalue.AppendNumber(p.text, min)
		p.end(ProblemTooSmall, start, pe)
		return
	}
	if hasMax && f > max {
		start, pe := p.begin()
		p.text = append(p.text, " must be at most "...)
		p.text = jsonvalue.AppendNumber(p.text, max)
		p.end(ProblemTooLarge, start, pe)
	}
}

func (p *parser) array(n *Node, a []any) ([]any, bool) {
	var out []any
	for i, e := range a {
		p.pushIndex(i)
		ne, changed := p.value(n.item, e)
		p.pop()
		if changed {
			if out == nil {
				out = make([]any, len(a))
				copy(out, a)
			}
			out[i] = ne
		}
	}
	if n.minItems >= 0 && len(a) < n.minItems {
		start, pe := p.begin()
		p.text = append(p.text, " must have at least "...)
		p.text = strconv.AppendInt(p.text, int64(n.minItems), 10)
		if n.minItems == 1 {
			p.text = append(p.text, " item"...)
		} else {
			p.text = append(p.text, " items"...)
		}
		p.end(ProblemTooFewItems, start, pe)
	} else if n.maxItems >= 0 && len(a) > n.maxItems {
		start, pe := p.begin()
		p.text = append(p.text, " has "...)
		p.text = strconv.AppendInt(p.text, int64(len(a)), 10)
		p.text = append(p.text, " items; the limit is "...)
		p.text = strconv.AppendInt(p.text, int64(n.maxItems), 10)
		p.end(ProblemTooManyItems, start, pe)
	}
	if out != nil {
		return out, true
	}
	return a, false
}

// object checks o against the object node n (§2.3 "Problem order", rules 1–3). refuse tells
// whether unknown keys are refused (P4) or dropped.
func (p *parser) object(n *Node, o *jsonvalue.Object, refuse bool) (*jsonvalue.Object, bool) {
	before := len(p.spans)
	// Normalized children that differ from the input, by declared position; allocated only when
	// a nested object drops a key.
	var replaced []any
	for i := range n.fields {
		f := &n.fields[i]
		v, present := o.Get(f.Key)
		if !present {
			if !f.Node.optional {
				p.pushKey(f.Key)
				tok := f.Node.tok
				start, pe := p.begin()
				p.text = append(p.text, " is required ("...)
				p.text = append(p.text, tok...)
				p.text = append(p.text, ')')
				p.end(ProblemRequired, start, pe)
				p.pop()
			}
			continue
		}
		p.pushKey(f.Key)
		nv, changed := p.value(f.Node, v)
		p.pop()
		if changed {
			if replaced == nil {
				replaced = make([]any, len(n.fields))
			}
			replaced[i] = nv
		}
	}
	unknown := 0
	for _, m := range o.Members() {
		if n.fieldIndex(m.Name) >= 0 {
			continue
		}
		unknown++
		if refuse {
			p.unknownField(n, m.Name)
		}
	}
	out := o
	// The normalized copy matters only while the parse can still succeed, or for this object's
	// own cross-field check; a refused parse returns no value.
	needed := len(p.spans) == 0 || (n.check != nil && len(p.spans) == before)
	if needed && (unknown > 0 || replaced != nil) {
		out = jsonvalue.NewObject(o.Len() - unknown)
		for _, m := range o.Members() {
			i := n.fieldIndex(m.Name)
			if i < 0 {
				continue
			}
			v := m.Value
			if replaced != nil && replaced[i] != nil {
				v = replaced[i]
			}
			out.Set(m.Name, v)
		}
	}
	if n.check != nil && len(p.spans) == before && !n.check(out) {
		start, pe := p.begin()
		p.spans = append(p.spans, span{typ: ProblemCrossField, pathStart: start, pathEnd: pe, static: n.message})
	}
	return out, out != o
}

func (p *parser) unknownField(n *Node, key string) {
	start := len(p.text)
	p.text = append(p.text, "unknown field "...)
	p.text = jsonvalue.AppendQuote(p.text, key)
	if len(p.stack) > 0 {
		p.text = append(p.text, " in "...)
		p.text = p.appendPath(p.text)
	}
	p.text = append(p.text, "; allowed: "...)
	p.text = append(p.text, n.allowed...)
	msgEnd := len(p.text)
	// The problem's Path is the unknown member's own path.
	p.pushKey(key)
	pathStart := len(p.text)
	p.text = p.appendPath(p.text)
	p.pop()
	p.spans = append(p.spans, span{typ: ProblemUnknownField, pathStart: pathStart, pathEnd: len(p.text), msgStart: start, msgEnd: msgEnd})
}

// appendDescribe renders `<I>` of §3.3 for a received value.
func appendDescribe(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case float64:
		return jsonvalue.AppendNumber(dst, x)
	case string:
		return append(dst, "a string"...)
	case []any:
		return append(dst, "an array"...)
	case *jsonvalue.Object:
		if x == nil {
			return append(dst, "null"...)
		}
		return append(dst, "an object"...)
	}
	// Not of the jsonvalue model: describe its validated copy when it has one.
	if c, err := jsonvalue.CloneValue(v, ""); err == nil {
		return appendDescribe(dst, c)
	}
	return append(dst, "an unsupported value"...)
}

// appendJSON appends the compact JSON of a received value (P5 `<json>`): input member order, no
// HTML escaping, ECMAScript numbers.
func appendJSON(dst []byte, v any) []byte { return jsonvalue.AppendEncoded(dst, v) }
