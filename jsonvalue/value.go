// Package jsonvalue is agentwire's strict JSON layer, shared by every contract package.
//
// It implements events.md §3:
//
//   - [Parse]: RFC 8259 text → value, in one pass, rejecting duplicate member names, invalid
//     UTF-8, unpaired surrogate escapes, numbers that overflow a double and nesting deeper than
//     [MaxDepth], each with the spec's exact message and path. [ParseKeepNumbers] is Parse with
//     numbers kept as their literal text ([Number]).
//   - [Decoder]: the strict scanner Parse is built on, as a token-level pull decoder for typed
//     decoders that need what the value model drops (exact integers, i128 coefficients); the
//     single implementation of JSON lexing in the module, with the same checks, faults and fault
//     order as Parse.
//   - [Doc]: Parse's reading of a text into the value's encoding and a flat table of nodes
//     instead of Go values, for typed decoders that validate a document member by member and
//     keep it as bytes; [Doc.AppendCanonical] gives the RFC 8785 form of any node from the same
//     table.
//   - [CloneValue], [AssertValue], [CloneObject], [IsObject], [CloneSchema]: validation and deep
//     copy of Go values (the cloneJsonValue / cloneJsonObject rules of §3.5–§3.6).
//   - [Canonicalize] and [Fingerprint]: RFC 8785 (JCS) serialisation and its `sha256:` digest.
//   - [Marshal] / [AppendMarshal] / [MarshalIndent]: the encoder every contract uses (member order
//     kept, ECMAScript number form, no HTML escaping).
//
// # Value model
//
// A validated value is built only from nil (null), bool, float64 (always finite), string (valid
// UTF-8), []any and *[Object]. Object keeps its members in document order and tells an absent
// member (Get reports false) from a present null (Get reports nil, true).
//
// Every fault is a *[JSONValidationError] whose Error() is exactly the spec's message.
package jsonvalue

import (
	"iter"
)

// MaxDepth is the maximum container nesting depth (events.md §3.3): a top-level container is at
// depth 1 and opening one at depth MaxDepth+1 is refused.
const MaxDepth = 128

// MaxSafeInteger is 2^53−1, the largest integer every JSON peer represents exactly.
const MaxSafeInteger = 9007199254740991

// Member is one name/value pair of an [Object].
type Member struct {
	Name  string
	Value any
}

// indexThreshold is the member count above which an Object keeps a name index; below it a linear
// scan over the members is faster than hashing.
const indexThreshold = 12

// Object is an ordered JSON object: member order is the document (or insertion) order, and member
// names are unique. The zero value is an empty object. Values reachable from a *Object produced by
// this package are never modified by it afterwards; callers that build objects with [Object.Set]
// own them until they hand them out.
type Object struct {
	members []Member
	index   map[string]int
}

// NewObject returns an empty object with room for n members.
func NewObject(n int) *Object {
	return &Object{members: make([]Member, 0, n)}
}

// ObjectOf builds an object from name/value pairs; a later pair with an existing name replaces
// the earlier value in place. It is meant for literals in code and tests.
func ObjectOf(pairs ...any) *Object {
	if len(pairs)%2 != 0 {
		panic("jsonvalue.ObjectOf: odd number of arguments")
	}
	o := NewObject(len(pairs) / 2)
	for i := 0; i < len(pairs); i += 2 {
		o.Set(pairs[i].(string), pairs[i+1])
	}
	return o
}

// Len reports the number of members; a nil object has none.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.members)
}

// Members returns the members in order. The slice is shared: callers must not modify it.
func (o *Object) Members() []Member {
	if o == nil {
		return nil
	}
	return o.members
}

// All iterates over the members in order.
func (o *Object) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		if o == nil {
			return
		}
		for _, m := range o.members {
			if !yield(m.Name, m.Value) {
				return
			}
		}
	}
}

// Keys returns the member names in order.
func (o *Object) Keys() []string {
	keys := make([]string, o.Len())
	for i, m := range o.Members() {
		keys[i] = m.Name
	}
	return keys
}

// lookup returns the position of name, or -1.
func (o *Object) lookup(name string) int {
	if o == nil {
		return -1
	}
	if o.index != nil {
		if i, ok := o.index[name]; ok {
			return i
		}
		return -1
	}
	for i := range o.members {
		if o.members[i].Name == name {
			return i
		}
	}
	return -1
}

// Get returns the value of member name and whether it is present. A present null is (nil, true).
func (o *Object) Get(name string) (any, bool) {
	i := o.lookup(name)
	if i < 0 {
		return nil, false
	}
	return o.members[i].Value, true
}

// Has reports whether member name is present (null included).
func (o *Object) Has(name string) bool { return o.lookup(name) >= 0 }

// Set replaces the value of an existing member in place or appends a new member.
func (o *Object) Set(name string, v any) {
	if i := o.lookup(name); i >= 0 {
		o.members[i].Value = v
		return
	}
	o.appendMember(name, v)
}

// appendMember appends a member known not to be present.
func (o *Object) appendMember(name string, v any) {
	o.members = append(o.members, Member{Name: name, Value: v})
	if o.index != nil {
		o.index[name] = len(o.members) - 1
	} else if len(o.members) > indexThreshold {
		o.index = make(map[string]int, len(o.members)*2)
		for i, m := range o.members {
			o.index[m.Name] = i
		}
	}
}

// Delete removes member name if present, keeping the order of the others.
func (o *Object) Delete(name string) {
	i := o.lookup(name)
	if i < 0 {
		return
	}
	o.members = append(o.members[:i:i], o.members[i+1:]...)
	if o.index != nil {
		o.index = make(map[string]int, len(o.members))
		for j, m := range o.members {
			o.index[m.Name] = j
		}
	}
}

// MarshalJSON encodes the object with the package encoder (member order kept).
func (o *Object) MarshalJSON() ([]byte, error) { return Marshal(o) }

// JSONValuer is implemented by Go values that stand for a JSON value: CloneValue checks the
// returned value in the receiver's place (events.md §3.5).
type JSONValuer interface {
	JSONValue() (any, error)
}

// JSONValidationError is a fault of the strict JSON layer (events.md §3.3–§3.6). Error returns
// Message exactly; Path is the path the message names (label-rooted), kept for callers that
// want it structurally.
type JSONValidationError struct {
	Path    string
	Message string
}

func (e *JSONValidationError) Error() string { return e.Message }

func newError(path, suffix string) *JSONValidationError {
	return &JSONValidationError{Path: path, Message: path + suffix}
}

// Message suffixes of events.md §3; a message is the path followed by one of these.
const (
	SuffixInvalidUTF8      = " contains invalid UTF-8."
	SuffixUnpaired         = " contains an unpaired surrogate."
	SuffixNotFinite        = " must contain only finite JSON numbers."
	SuffixTooDeep          = " exceeds the maximum nesting depth of 128."
	SuffixNotSerializable  = " is not JSON-serializable."
	SuffixNotPlain         = " must contain only JSON objects and arrays."
	SuffixUnsafeInteger    = " is an integer outside the JSON safe integer range."
	SuffixCircular         = " contains a circular reference."
	SuffixNotObject        = " must be a JSON object."
	SuffixNotSchema        = " must be a JSON Schema object or boolean."
	suffixNotJSONTextStart = " is not valid JSON text at byte offset "
)

// MemberPath appends an object member to a path (events.md §3.2: `.<raw name>`).
func MemberPath(path, name string) string { return path + "." + name }

// IndexPath appends an array element to a path (events.md §3.2: `[<i>]`).
func IndexPath(path string, i int) string { return path + "[" + itoa(i) + "]" }

func itoa(i int) string {
	if i >= 0 && i < 10 {
		return string(rune('0' + i))
	}
	var b [20]byte
	n := len(b)
	neg := i < 0
	u := uint64(i)
	if neg {
		u = uint64(-i)
	}
	for u >= 10 {
		n--
		b[n] = byte('0' + u%10)
		u /= 10
	}
	n--
	b[n] = byte('0' + u)
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}
