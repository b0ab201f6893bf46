package toolspec

import (
	"github.com/agentwire/agentwire/jsonvalue"
)

// SchemaDialect is the `$schema` of every emitted tool schema (dispatch-tools.md §2.4).
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// Schema emits the JSON Schema (draft 2020-12) of the spec's parameters (§2.4): the tool schema
// under the spec's own strict flag, with `$schema` as its first member. Member order inside
// every node is `$schema`, `type`, `enum`, `properties`, `required`, `additionalProperties`,
// `items`, `minLength`, `maxLength`, `minimum`, `maximum`, `minItems`, `maxItems`, `anyOf`,
// `description`. The tool description is not part of it. Each call returns a fresh object.
func (s *Spec) Schema() *jsonvalue.Object {
	o := jsonvalue.NewObject(5)
	o.Set("$schema", SchemaDialect)
	emitInto(o, s.root)
	return o
}

// JSONSchema emits the JSON Schema of a node (without `$schema`), per the table of §2.2.
func (n *Node) JSONSchema() *jsonvalue.Object {
	o := jsonvalue.NewObject(4)
	emitInto(o, n)
	return o
}

func emitInto(o *jsonvalue.Object, n *Node) {
	if n.nullable {
		inner := jsonvalue.NewObject(4)
		emitBody(inner, n)
		o.Set("anyOf", []any{inner, jsonvalue.ObjectOf("type", "null")})
	} else {
		emitBody(o, n)
	}
	if n.description != "" {
		o.Set("description", n.description)
	}
}

// emitBody writes the node's own keywords (no description, no nullable wrapper).
func emitBody(o *jsonvalue.Object, n *Node) {
	switch n.kind {
	case KindString:
		o.Set("type", "string")
		if n.minLen >= 0 {
			o.Set("minLength", float64(n.minLen))
		}
		if n.maxLen >= 0 {
			o.Set("maxLength", float64(n.maxLen))
		}
	case KindNumber:
		if n.integer {
			o.Set("type", "integer")
		} else {
			o.Set("type", "number")
		}
		if n.hasMin {
			o.Set("minimum", n.min)
		}
		if n.hasMax {
			o.Set("maximum", n.max)
		}
	case KindBoolean:
		o.Set("type", "boolean")
	case KindEnum:
		o.Set("type", "string")
		vs := make([]any, len(n.values))
		for i, v := range n.values {
			vs[i] = v
		}
		o.Set("enum", vs)
	case KindUnknown:
		// {} accepts every value.
	case KindArray:
		o.Set("type", "array")
		o.Set("items", n.item.JSONSchema())
		if n.minItems >= 0 {
			o.Set("minItems", float64(n.minItems))
		}
		if n.maxItems >= 0 {
			o.Set("maxItems", float64(n.maxItems))
		}
	case KindObject:
		o.Set("type", "object")
		props := jsonvalue.NewObject(len(n.fields))
		var required []any
		for _, f := range n.fields {
			props.Set(f.Key, f.Node.JSONSchema())
			if !f.Node.optional {
				required = append(required, f.Key)
			}
		}
		o.Set("properties", props)
		if len(required) > 0 {
			o.Set("required", required)
		}
		if n.strict {
			o.Set("additionalProperties", false)
		}
	}
}
