package jsonvalue

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// Doc is a strict JSON document decoded in one pass into its encoded form and a flat table of
// nodes over it, for typed decoders that validate a document member by member and keep it as
// bytes rather than as a tree of Go values (an event is validated, fingerprinted and stored
// this way: [Parse] would box every string and number and allocate every object).
//
// [Doc.Parse] reads the text with the [Decoder], so it accepts exactly the texts Parse accepts
// and reports exactly Parse's first fault. While reading it writes the document's encoding:
// the bytes [AppendEncoded] writes for the value Parse returns (white space dropped, member
// order kept, strings re-quoted with RFC 8785 escaping, numbers in the ECMAScript form). A
// compact text that already has that form is copied through span by span. Every value of the
// document is a node: the root is node 0, the members or elements of a container follow it
// in order, each followed by its own subtree, and [Doc.Next] skips a subtree.
// [Doc.AppendCanonical] writes the RFC 8785 form of any node from the same table, copying
// every subtree that is already canonical (members in order) as one span.
//
// A Doc is reusable: Parse resets it. Nothing it returns (the text, member-name and string
// views) outlives the next Parse; callers copy what they keep. The zero Doc is ready to use;
// a Doc must not be used by two goroutines at once.
type Doc struct {
	dec    Decoder
	text   []byte
	nodes  []docNode
	orders [maxCachedOrder + 1]memberOrder // by member count: the last canonical order found
}

// docNode is one value of a Doc.
type docNode struct {
	off, end  int     // the value's encoding: text[off:end]
	name, nln int     // member: the encoded name (without its quotes) is text[name:name+nln]; array element or root: name is -1
	next      int     // index of the first node after this subtree
	n         int     // object: members, array: elements
	num       float64 // number: its value
	key       uint64  // member: the first eight bytes of its encoded name, big-endian, zero-padded
	kind      Kind
	flags     uint8
}

const (
	// flagCanon: the encoding of the subtree is its RFC 8785 form (scalars always; a container
	// whose members are in canonical order and whose children are all canonical).
	flagCanon uint8 = 1 << iota
	// flagEscaped: the encoding of the string value holds an escape, so its inner bytes are
	// not the string itself.
	flagEscaped
	// flagNameEscaped: likewise for the member name.
	flagNameEscaped
	// flagTrue: a true literal.
	flagTrue
	// flagFastKey: the member's key orders it against any other fast-keyed member with a
	// different key (see nameKey).
	flagFastKey
)

// docPool recycles Docs for the package's own one-shot users.
var docPool = sync.Pool{New: func() any { return new(Doc) }}

// maxKeptDoc bounds the buffers Clear keeps: a huge document's buffers go to the garbage
// collector instead of staying pooled.
const maxKeptDoc = 1 << 16

// GetDoc returns a Doc from a shared pool; give it back with [PutDoc].
func GetDoc() *Doc { return docPool.Get().(*Doc) }

// PutDoc returns d to the pool. d and everything it handed out must not be used afterwards.
func PutDoc(d *Doc) {
	d.Clear()
	docPool.Put(d)
}

// Parse reads data as strict JSON text (events.md §3.4) with fault paths rooted at label
// ([DefaultLabel] when empty). The first fault is Parse's, as a *JSONValidationError; after a
// fault the Doc holds nothing usable.
func (d *Doc) Parse(data []byte, label string) error {
	p := &d.dec
	p.Reset(data, label)
	if cap(d.text) < len(data) {
		d.text = make([]byte, 0, len(data)+len(data)/8+16)
	}
	d.text, d.nodes = d.text[:0], d.nodes[:0]
	p.skipWS()
	if err := d.value(); err != nil {
		return err
	}
	return p.EndDocument()
}

// value reads the value at the decoder's position (white space skipped) into a new node.
func (d *Doc) value() error {
	p := &d.dec
	data := p.data
	if p.pos >= len(data) {
		return p.syntax(len(data))
	}
	// The node is written in place, field by field: a composite literal appended here is built
	// on the stack and copied back in overlapping pieces, which stalls store forwarding.
	i := len(d.nodes)
	if i == cap(d.nodes) {
		d.nodes = slices.Grow(d.nodes, 1)
	}
	d.nodes = d.nodes[:i+1]
	nd := &d.nodes[i]
	nd.off, nd.end, nd.name, nd.nln, nd.next, nd.n = len(d.text), 0, -1, 0, 0, 0
	nd.num, nd.key, nd.kind, nd.flags = 0, 0, 0, flagCanon
	switch c := data[p.pos]; c {
	case '{':
		return d.object(i)
	case '[':
		return d.array(i)
	case '"':
		start := p.pos
		b, esc, err := p.scanString()
		if err != nil {
			return err
		}
		d.nodes[i].kind = KindString
		if !esc {
			d.text = append(d.text, data[start:p.pos]...)
		} else if d.appendQuotedBytes(b) {
			d.nodes[i].flags |= flagEscaped
		}
	case 't', 'f', 'n':
		word, kind := "null", KindNull
		switch c {
		case 't':
			word, kind = "true", KindBool
			d.nodes[i].flags |= flagTrue
		case 'f':
			word, kind = "false", KindBool
		}
		if err := p.literal(word); err != nil {
			return err
		}
		d.nodes[i].kind = kind
		d.text = append(d.text, word...)
	default:
		if c != '-' && (c < '0' || c > '9') {
			return p.syntax(p.pos)
		}
		tok, simple, err := p.scanNumber()
		if err != nil {
			return err
		}
		f, err := p.numberValue(tok, simple)
		if err != nil {
			return err
		}
		d.nodes[i].kind, d.nodes[i].num = KindNumber, f
		// An integer literal of up to 15 characters is already in the ECMAScript form, except
		// -0 (written 0).
		if simple && len(tok) <= 15 && (len(tok) != 2 || tok[0] != '-' || tok[1] != '0') {
			d.text = append(d.text, tok...)
		} else {
			d.text = AppendNumber(d.text, f)
		}
	}
	d.nodes[i].end = len(d.text)
	d.nodes[i].next = len(d.nodes)
	return nil
}

// appendQuotedBytes appends the RFC 8785 quoting of the decoded bytes of a string that had
// escapes and reports whether the quoting holds an escape.
func (d *Doc) appendQuotedBytes(b []byte) bool {
	start := len(d.text)
	d.text = appendQuoted(d.text, unsafe.String(unsafe.SliceData(b), len(b)))
	return len(d.text)-start != len(b)+2
}

func (d *Doc) object(i int) error {
	p := &d.dec
	if err := p.open(); err != nil {
		return err
	}
	d.nodes[i].kind = KindObject
	d.text = append(d.text, '{')
	canon := true
	prev, n := -1, 0
	for {
		_, ok, err := p.nextName()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if n > 0 {
			d.text = append(d.text, ',')
		}
		ref := p.names[len(p.names)-1]
		nameAt := len(d.text) + 1
		escaped := false
		if ref.off >= 0 {
			d.text = append(d.text, p.data[ref.off-1:ref.off+ref.n+1]...)
		} else {
			escaped = d.appendQuotedBytes(p.nameBytes(ref))
		}
		nameLen := len(d.text) - 1 - nameAt
		d.text = append(d.text, ':')
		child := len(d.nodes)
		if err := d.value(); err != nil {
			return err
		}
		c := &d.nodes[child]
		c.name, c.nln = nameAt, nameLen
		if escaped {
			c.flags |= flagNameEscaped
		} else if key, fast := nameKey(d.text[nameAt : nameAt+nameLen]); fast {
			c.key = key
			c.flags |= flagFastKey
		}
		// Names are unique (duplicates were refused), so only the order is in question.
		canon = canon && c.flags&flagCanon != 0 && (prev < 0 || d.compareMembers(prev, child) < 0)
		prev = child
		n++
	}
	d.text = append(d.text, '}')
	d.close(i, n, canon)
	return nil
}

func (d *Doc) array(i int) error {
	p := &d.dec
	if err := p.open(); err != nil {
		return err
	}
	d.nodes[i].kind = KindArray
	d.text = append(d.text, '[')
	canon := true
	n := 0
	for {
		ok, err := p.NextElement()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if n > 0 {
			d.text = append(d.text, ',')
		}
		child := len(d.nodes)
		if err := d.value(); err != nil {
			return err
		}
		canon = canon && d.nodes[child].flags&flagCanon != 0
		n++
	}
	d.text = append(d.text, ']')
	d.close(i, n, canon)
	return nil
}

func (d *Doc) close(i, n int, canon bool) {
	nd := &d.nodes[i]
	nd.n, nd.end, nd.next = n, len(d.text), len(d.nodes)
	if !canon {
		nd.flags &^= flagCanon
	}
}

// Clear drops every reference to the last parsed input, so that a pooled Doc does not hold its
// caller's data alive, and the buffers a huge document grew (the Doc keeps the others).
func (d *Doc) Clear() {
	d.dec.Reset(nil, DefaultLabel)
	if cap(d.text) > maxKeptDoc || cap(d.nodes) > maxKeptDoc/32 {
		d.text, d.nodes = nil, nil
		return
	}
	d.text, d.nodes = d.text[:0], d.nodes[:0]
}

// Text returns the encoding of the whole document: what [AppendEncoded] writes for the value
// [Parse] returns. It is valid until the next Parse.
func (d *Doc) Text() []byte { return d.text }

// Nodes returns the number of nodes (values) of the document.
func (d *Doc) Nodes() int { return len(d.nodes) }

// Kind returns the kind of node i (KindNull, KindBool, KindNumber, KindString, KindArray or
// KindObject).
func (d *Doc) Kind(i int) Kind { return d.nodes[i].kind }

// Len returns the number of members (object) or elements (array) of node i; 0 for a scalar.
func (d *Doc) Len(i int) int { return d.nodes[i].n }

// Next returns the index of the node after the subtree of node i: its next sibling when
// there is one. The first child of a non-empty container i is i+1.
func (d *Doc) Next(i int) int { return d.nodes[i].next }

// Span returns the position of node i's encoding in Text: Text()[off:end].
func (d *Doc) Span(i int) (off, end int) { return d.nodes[i].off, d.nodes[i].end }

// Float returns the value of number node i.
func (d *Doc) Float(i int) float64 { return d.nodes[i].num }

// Bool returns the value of boolean node i.
func (d *Doc) Bool(i int) bool { return d.nodes[i].flags&flagTrue != 0 }

// MemberName returns the encoded name of member node i (a view of Text, without the quotes):
// the name itself unless it holds a character that JSON escapes (`"`, `\`, U+0000–U+001F), so
// comparing it with a name free of those characters is exact. "" for a node that is no member.
func (d *Doc) MemberName(i int) string {
	n := &d.nodes[i]
	if n.name < 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(d.text[n.name:]), n.nln)
}

// Member returns the node of member name of object node i, or -1 when i has no such member.
// name must be free of characters that JSON escapes.
func (d *Doc) Member(i int, name string) int {
	for c, end := i+1, d.nodes[i].next; c < end; c = d.nodes[c].next {
		n := &d.nodes[c]
		if n.nln == len(name) && string(d.text[n.name:n.name+n.nln]) == name {
			return c
		}
	}
	return -1
}

// StringView returns the inner bytes of the encoding of string node i (a view of Text) and
// whether they are the string itself: false when the encoding holds an escape, in which case
// [Doc.Unquote] decodes it.
func (d *Doc) StringView(i int) (string, bool) {
	n := &d.nodes[i]
	return unsafe.String(unsafe.SliceData(d.text[n.off+1:]), n.end-n.off-2), n.flags&flagEscaped == 0
}

// StringIs reports whether node i is a string equal to s, which must be free of characters
// that JSON escapes.
func (d *Doc) StringIs(i int, s string) bool {
	if i < 0 || d.nodes[i].kind != KindString {
		return false
	}
	v, _ := d.StringView(i)
	return v == s
}

// Unquote returns the value of string node i as a fresh string.
func (d *Doc) Unquote(i int) string {
	v, plain := d.StringView(i)
	if plain {
		return strings.Clone(v)
	}
	return unescapeEncoded(v)
}

// Value returns node i as a fresh value of the package's value model (as Parse would).
func (d *Doc) Value(i int) any {
	n := &d.nodes[i]
	v, _ := Parse(d.text[n.off:n.end], "")
	return v
}

// unescapeEncoded decodes the inner bytes of a string written by appendQuoted: the only
// escapes are \" \\ \b \t \n \f \r and \u00xx.
func unescapeEncoded(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'u':
			b = append(b, byte(hexVal(s[i+3])<<4|hexVal(s[i+4])))
			i += 4
		default:
			b = append(b, shortEscape[e])
		}
	}
	return string(b)
}

// AppendCanonical appends the RFC 8785 form of node i ([AppendCanonical] of its value).
func (d *Doc) AppendCanonical(dst []byte, i int) []byte {
	n := &d.nodes[i]
	if n.flags&flagCanon != 0 {
		return append(dst, d.text[n.off:n.end]...)
	}
	if n.kind == KindArray {
		dst = append(dst, '[')
		for c, k := i+1, 0; k < n.n; c, k = d.nodes[c].next, k+1 {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = d.AppendCanonical(dst, c)
		}
		return append(dst, ']')
	}
	var small [maxCachedOrder]int
	idx := small[:0]
	if n.n > len(small) {
		idx = make([]int, 0, n.n)
	}
	for c := i + 1; c < n.next; c = d.nodes[c].next {
		idx = append(idx, c)
	}
	d.sortMembers(idx)
	dst = append(dst, '{')
	for k, c := range idx {
		if k > 0 {
			dst = append(dst, ',')
		}
		m := &d.nodes[c]
		if m.flags&flagCanon != 0 {
			// The name, the colon and the value are contiguous in the encoding.
			dst = append(dst, d.text[m.name-1:m.end]...)
			continue
		}
		dst = append(dst, d.text[m.name-1:m.name+m.nln+1]...)
		dst = append(dst, ':')
		dst = d.AppendCanonical(dst, c)
	}
	return append(dst, '}')
}

// maxCachedOrder is the largest object whose member order the Doc remembers.
const maxCachedOrder = 16

// memberOrder is a remembered canonical order: positions of the members in document order.
type memberOrder struct {
	ok  bool
	pos [maxCachedOrder]uint8
}

// sortMembers sorts member nodes idx (given in document order) into the RFC 8785 order.
// Documents of one stream tend to repeat their objects' member order (every event of a producer
// writes its envelope alike), so the last order found for an object of the same size is tried
// first: confirming it costs n−1 comparisons, fewer than sorting.
func (d *Doc) sortMembers(idx []int) {
	n := len(idx)
	if n < 2 {
		return
	}
	if n > maxCachedOrder {
		// Insertion sort: member lists are short and often nearly sorted.
		for a := 1; a < n; a++ {
			for b := a; b > 0 && d.compareMembers(idx[b-1], idx[b]) > 0; b-- {
				idx[b-1], idx[b] = idx[b], idx[b-1]
			}
		}
		return
	}
	o := &d.orders[n]
	ok := o.ok
	for k := 1; ok && k < n; k++ {
		ok = d.compareMembers(idx[o.pos[k-1]], idx[o.pos[k]]) < 0
	}
	if !ok {
		for k := range n {
			o.pos[k] = uint8(k)
		}
		for a := 1; a < n; a++ {
			for b := a; b > 0 && d.compareMembers(idx[o.pos[b-1]], idx[o.pos[b]]) > 0; b-- {
				o.pos[b-1], o.pos[b] = o.pos[b], o.pos[b-1]
			}
		}
		o.ok = true
	}
	var sorted [maxCachedOrder]int
	for k := range n {
		sorted[k] = idx[o.pos[k]]
	}
	copy(idx, sorted[:n])
}

// nameKey returns the sort key of an encoded member name free of escapes: its first eight
// bytes, big-endian, zero-padded. fast reports that none of those bytes is 0xEE or above. Then
// for two such names with different keys, the keys order them as RFC 8785 does: the first
// byte that differs lies in the keys, and the characters it belongs to are both below U+E000
// (lead bytes below 0xEE), where UTF-8 byte order, code point order and UTF-16 order agree; a
// name that ends inside the key has zero padding there, below any byte of a name (a NUL would
// be escaped). Equal keys, or a slow one, need the full comparison.
func nameKey(b []byte) (key uint64, fast bool) {
	if len(b) >= 8 {
		key = binary.BigEndian.Uint64(b)
	} else {
		for i, c := range b {
			key |= uint64(c) << (56 - 8*i)
		}
	}
	if key&0x8080808080808080 != 0 {
		for k := 0; k < 64; k += 8 {
			if byte(key>>k) >= 0xEE {
				return key, false
			}
		}
	}
	return key, true
}

// compareMembers compares the names of member nodes a and b in the RFC 8785 order.
func (d *Doc) compareMembers(a, b int) int {
	na, nb := &d.nodes[a], &d.nodes[b]
	if na.flags&nb.flags&flagFastKey != 0 && na.key != nb.key {
		if na.key < nb.key {
			return -1
		}
		return 1
	}
	return d.compareNames(a, b)
}

// compareNames compares the names of member nodes a and b by UTF-16 code units.
func (d *Doc) compareNames(a, b int) int {
	na, nb := &d.nodes[a], &d.nodes[b]
	sa := unsafe.String(unsafe.SliceData(d.text[na.name:]), na.nln)
	sb := unsafe.String(unsafe.SliceData(d.text[nb.name:]), nb.nln)
	if na.flags&flagNameEscaped != 0 {
		sa = unescapeEncoded(sa)
	}
	if nb.flags&flagNameEscaped != 0 {
		sb = unescapeEncoded(sb)
	}
	return CompareUTF16(sa, sb)
}

// CanonicalText appends the RFC 8785 form of a value given as its encoding (text that
// [AppendEncoded] wrote, or any strict JSON text) to dst; text that is not strict JSON gives
// Parse's fault under the label `value`.
func CanonicalText(dst, text []byte) ([]byte, error) {
	d := GetDoc()
	defer PutDoc(d)
	if err := d.Parse(text, ""); err != nil {
		return dst, err
	}
	return d.AppendCanonical(dst, 0), nil
}
