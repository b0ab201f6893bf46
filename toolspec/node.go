package toolspec

import (
	"fmt"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Kind is the primitive a [Node] was built from (dispatch-tools.md §2.2).
type Kind uint8

// The primitives of §2.2.
const (
	KindString  Kind = iota + 1 // string({min?, max?})
	KindNumber                  // number({int?, min?, max?})
	KindBoolean                 // boolean()
	KindEnum                    // enum(values)
	KindUnknown                 // unknown(): any JSON value, null included
	KindArray                   // array(item, {min?, max?})
	KindObject                  // object(shape, {strict?}) and refineObject(…)
)

var kindNames = [...]string{"", "string", "number", "boolean", "enum", "unknown", "array", "object"}

// String returns the primitive's name as the spec spells it.
func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Node is one argument schema node. Nodes are immutable: every builder method returns a new
// node and leaves its receiver unchanged, so a node may be shared between shapes and specs.
type Node struct {
	kind        Kind
	optional    bool
	nullable    bool
	description string

	// string: bounds on the UTF-16 length; -1 when not given.
	minLen, maxLen int

	// number
	integer        bool
	min, max       float64
	hasMin, hasMax bool

	// enum
	values   []string
	enumList string // values joined by "|" (P1 token, P5 message)

	// array: item node and count bounds; -1 when not given.
	item               *Node
	minItems, maxItems int

	// object
	fields   []Field
	strict   bool
	check    func(*jsonvalue.Object) bool
	message  string
	expected string // "an object {k1, k2?}" or "an object" (§3.3), fixed at construction
	allowed  string // declared keys joined by ", ", or "none" (P4 and the Allowed keys line)

	// Rendered once per node so that reporting a problem builds no strings.
	tok string // the P1 token
	exp string // the P2 `<E>`
}

// Field is one (key, node) pair of an object shape. Declaration order is significant
// (dispatch-tools.md §2.1): it orders the P1 and P4 lines, the allowed-keys lists, the JSON
// Schema properties and required lists and the `an object {…}` rendering.
type Field struct {
	Key  string
	Node *Node
}

// Key builds a [Field]; it is the usual way to write a shape:
//
//	toolspec.Object(toolspec.Key("label", toolspec.String()), …)
func Key(key string, node *Node) Field {
	if node == nil {
		panic("toolspec.Key: nil node for " + key)
	}
	return Field{Key: key, Node: node}
}

func (n *Node) clone() *Node {
	c := *n
	return &c
}

// done fixes the node's rendered token and `<E>` after construction or a modifier.
func (n *Node) done() *Node {
	n.tok, n.exp = n.renderToken(), n.renderExpected()
	return n
}

func (n *Node) mustBe(k Kind, method string) {
	if n.kind != k {
		panic(fmt.Sprintf("toolspec: %s on a %s node", method, n.kind))
	}
}

// String is string({}): a JSON string (token `string`).
func String() *Node { return (&Node{kind: KindString, minLen: -1, maxLen: -1}).done() }

// MinLen returns a copy of a string node with `min` set: the length (UTF-16 code units) must be
// at least n (P9).
func (n *Node) MinLen(min int) *Node {
	n.mustBe(KindString, "MinLen")
	if min < 0 {
		panic("toolspec: negative MinLen")
	}
	c := n.clone()
	c.minLen = min
	return c.done()
}

// MaxLen returns a copy of a string node with `max` set: the length (UTF-16 code units) must be
// at most n (P8).
func (n *Node) MaxLen(max int) *Node {
	n.mustBe(KindString, "MaxLen")
	if max < 0 {
		panic("toolspec: negative MaxLen")
	}
	c := n.clone()
	c.maxLen = max
	return c.done()
}

// Number is number({}): a JSON number (token `number`).
func Number() *Node { return (&Node{kind: KindNumber}).done() }

// Int is number({int: true}): an integral JSON number (P3). Without explicit bounds it still
// refuses values beyond ±9007199254740991 (§2.2); those implicit bounds are not emitted.
func Int() *Node { return (&Node{kind: KindNumber, integer: true}).done() }

// Min returns a copy of a number node with `min` set (P11).
func (n *Node) Min(min float64) *Node {
	n.mustBe(KindNumber, "Min")
	c := n.clone()
	c.min, c.hasMin = min, true
	return c.done()
}

// Max returns a copy of a number node with `max` set (P10).
func (n *Node) Max(max float64) *Node {
	n.mustBe(KindNumber, "Max")
	c := n.clone()
	c.max, c.hasMax = max, true
	return c.done()
}

// Boolean is boolean(): `true` or `false` (token `boolean`).
func Boolean() *Node { return (&Node{kind: KindBoolean}).done() }

// Enum is enum(values): one of the listed strings, in this order (P5; token `one of v1|v2|…`).
// Non-strings never match.
func Enum(values ...string) *Node {
	if len(values) == 0 {
		panic("toolspec.Enum: no values")
	}
	vs := append([]string(nil), values...)
	return (&Node{kind: KindEnum, values: vs, enumList: strings.Join(vs, "|")}).done()
}

// Unknown is unknown(): any JSON value, null included; it checks nothing and emits `{}`.
func Unknown() *Node { return (&Node{kind: KindUnknown}).done() }

// Array is array(item, {}): a JSON array whose every element is checked against item.
func Array(item *Node) *Node {
	if item == nil {
		panic("toolspec.Array: nil item")
	}
	return (&Node{kind: KindArray, item: item, minItems: -1, maxItems: -1}).done()
}

// MinItems returns a copy of an array node with `min` set (P7).
func (n *Node) MinItems(min int) *Node {
	n.mustBe(KindArray, "MinItems")
	c := n.clone()
	c.minItems = min
	return c.done()
}

// MaxItems returns a copy of an array node with `max` set (P6).
func (n *Node) MaxItems(max int) *Node {
	n.mustBe(KindArray, "MaxItems")
	c := n.clone()
	c.maxItems = max
	return c.done()
}

// Object is object(shape, {}): a JSON object whose declared keys are checked in declaration
// order; unknown keys are dropped unless the object is [Node.Strict].
func Object(shape ...Field) *Node {
	n := &Node{kind: KindObject, fields: append([]Field(nil), shape...)}
	seen := make(map[string]bool, len(shape))
	keys := make([]string, len(shape))
	var exp strings.Builder
	exp.WriteString("an object")
	for i, f := range shape {
		if f.Node == nil {
			panic("toolspec.Object: nil node for " + f.Key)
		}
		if seen[f.Key] {
			panic("toolspec.Object: duplicate key " + f.Key)
		}
		seen[f.Key] = true
		keys[i] = f.Key
		if i == 0 {
			exp.WriteString(" {")
		} else {
			exp.WriteString(", ")
		}
		exp.WriteString(f.Key)
		if f.Node.optional {
			exp.WriteByte('?')
		}
	}
	if len(shape) > 0 {
		exp.WriteByte('}')
		n.allowed = strings.Join(keys, ", ")
	} else {
		n.allowed = "none"
	}
	n.expected = exp.String()
	return n.done()
}

// RefineObject is refineObject(shape, check, message, {}): an [Object] followed by one
// cross-field check over the normalized object (declared keys only). The check runs only when
// no other problem was reported for the object or anything inside it; when it returns false the
// problem is message verbatim (P12). The check reads the object's declared keys (the values of
// nested objects may still carry keys that normalization would drop when an earlier sibling
// already failed, so a check must not depend on undeclared members).
func RefineObject(shape []Field, check func(*jsonvalue.Object) bool, message string) *Node {
	if check == nil || message == "" {
		panic("toolspec.RefineObject: check and message are required")
	}
	n := Object(shape...)
	n.check, n.message = check, message
	return n.done()
}

// Strict returns a copy of an object node that refuses unknown keys (P4) in every parse mode.
func (n *Node) Strict() *Node {
	n.mustBe(KindObject, "Strict")
	c := n.clone()
	c.strict = true
	return c.done()
}

// Optional returns a copy of the node whose key may be absent: it is left out of the parent's
// `required` list. A present null is not absent and is checked like any other value.
func (n *Node) Optional() *Node {
	c := n.clone()
	c.optional = true
	return c.done()
}

// Nullable returns a copy of the node that also accepts JSON null; it emits
// {"anyOf":[<inner>,{"type":"null"}]} and adds ` or null` to its token and `<E>`.
func (n *Node) Nullable() *Node {
	c := n.clone()
	c.nullable = true
	return c.done()
}

// Describe returns a copy of the node carrying a description, emitted as "description" on the
// outermost node of the property whatever order the modifiers were applied in.
func (n *Node) Describe(text string) *Node {
	c := n.clone()
	c.description = text
	return c.done()
}

// Kind reports the node's primitive.
func (n *Node) Kind() Kind { return n.kind }

// IsOptional reports whether the key holding this node may be absent.
func (n *Node) IsOptional() bool { return n.optional }

// IsNullable reports whether the node accepts JSON null.
func (n *Node) IsNullable() bool { return n.nullable }

// IsStrict reports whether an object node refuses unknown keys.
func (n *Node) IsStrict() bool { return n.strict }

// IsInteger reports whether a number node is `int`.
func (n *Node) IsInteger() bool { return n.integer }

// Description returns the text attached with [Node.Describe].
func (n *Node) Description() string { return n.description }

// Fields returns a copy of an object node's shape in declaration order.
func (n *Node) Fields() []Field { return append([]Field(nil), n.fields...) }

// Item returns an array node's item node.
func (n *Node) Item() *Node { return n.item }

// Values returns a copy of an enum node's values in declaration order.
func (n *Node) Values() []string { return append([]string(nil), n.values...) }

// Message returns a refined object's cross-field message ("" when it has no check).
func (n *Node) Message() string { return n.message }

// AllowedKeys returns an object node's declared keys joined by ", ", or "none" (the `<keys>` of
// P4 and the `Allowed keys` refusal line).
func (n *Node) AllowedKeys() string { return n.allowed }

// renderToken renders the `<expected>` word of the missing-key line P1 (§2.2 "Token", §2.3.1).
func (n *Node) renderToken() string {
	var t string
	switch n.kind {
	case KindString:
		t = "string"
	case KindNumber:
		t = "number"
	case KindBoolean:
		t = "boolean"
	case KindEnum:
		t = "one of " + n.enumList
	case KindArray:
		t = "array"
	case KindObject:
		t = "object"
	default:
		return "value"
	}
	if n.nullable {
		t += " or null"
	}
	return t
}

// renderExpected renders `<E>` of P2 (§3.3).
func (n *Node) renderExpected() string {
	var e string
	switch n.kind {
	case KindString:
		e = "a string"
	case KindNumber:
		e = "a number"
	case KindBoolean:
		e = "a boolean"
	case KindArray:
		e = "an array"
	case KindObject:
		e = n.expected
	case KindEnum:
		e = "one of " + n.enumList
	default:
		e = "a value"
	}
	if n.nullable {
		e += " or null"
	}
	return e
}

// fieldIndex returns the position of key among an object node's declared keys, or -1.
func (n *Node) fieldIndex(key string) int {
	for i := range n.fields {
		if n.fields[i].Key == key {
			return i
		}
	}
	return -1
}
