// Package schemabuild holds the building blocks the contract packages (hive, leanctx) use to
// describe their wire types as JSON Schema 2020-12 documents in the jsonvalue model, which
// cmd/agentwire-gen renders into schema/*.schema.json and ts/*.gen.ts.
//
// Conventions shared by every model built with it:
//   - a schema object lists `description` first (when not empty), then its keywords in the
//     order given;
//   - an object schema lists `type`, `required` (in member order, omitted when empty),
//     `properties`, and `additionalProperties: false` when strict;
//   - an optional member (absent or null; null means absent) admits null: a plain `type`
//     gains "null", anything else becomes `anyOf: [s, {"type":"null"}]` with the description
//     kept outside.
package schemabuild

import (
	"slices"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Presence says whether an object member must be present and whether it may be null.
type Presence int

const (
	Required  Presence = iota // required, not null
	Optional                  // may be absent or null (null means absent)
	Defaulted                 // may be absent, never null (defaulted lists and texts)
	Raw                       // optional, its schema used as is (already nullable where null is allowed)
)

// Member is one property of an object schema.
type Member struct {
	Name     string
	Schema   any // a *jsonvalue.Object or the boolean schema true
	Presence Presence
}

// Req, Opt and Dflt build a required, optional and defaulted member.
func Req(name string, s any) Member  { return Member{name, s, Required} }
func Opt(name string, s any) Member  { return Member{name, s, Optional} }
func Dflt(name string, s any) Member { return Member{name, s, Defaulted} }

// Strictness of an object schema: Strict refuses unknown members.
const (
	Strict  = true
	Lenient = false
)

// Schema builds a schema object: `description` first (when not empty), then the name/value
// pairs in order.
func Schema(description string, pairs ...any) *jsonvalue.Object {
	o := jsonvalue.NewObject(len(pairs)/2 + 1)
	if description != "" {
		o.Set("description", description)
	}
	for i := 0; i < len(pairs); i += 2 {
		o.Set(pairs[i].(string), pairs[i+1])
	}
	return o
}

// Object builds an object schema (see the package conventions).
func Object(description string, strict bool, members ...Member) *jsonvalue.Object {
	o := Schema(description, "type", "object")
	required := []any{}
	props := jsonvalue.NewObject(len(members))
	for _, m := range members {
		s := m.Schema
		switch m.Presence {
		case Required:
			required = append(required, m.Name)
		case Optional:
			s = Nullable(s)
		}
		props.Set(m.Name, s)
	}
	if len(required) > 0 {
		o.Set("required", required)
	}
	o.Set("properties", props)
	if strict {
		o.Set("additionalProperties", false)
	}
	return o
}

// Nullable returns s admitting null as well: a plain `type` gains "null" where that is exact
// (not beside `enum` or `const`), else the schema becomes `anyOf: [s, {"type":"null"}]` with
// its description kept outside (an `anyOf`-only schema gains the null alternative). The
// boolean schema true admits null already.
func Nullable(s any) any {
	o, ok := s.(*jsonvalue.Object)
	if !ok {
		return s
	}
	if t, ok := o.Get("type"); ok && !o.Has("enum") && !o.Has("const") {
		if x, ok := t.(string); ok {
			if x == "null" {
				return o
			}
			out := jsonvalue.NewObject(o.Len())
			for _, m := range o.Members() {
				if m.Name == "type" {
					out.Set("type", []any{x, "null"})
				} else {
					out.Set(m.Name, m.Value)
				}
			}
			return out
		}
	}
	inner := jsonvalue.NewObject(o.Len())
	desc := ""
	for _, m := range o.Members() {
		if m.Name == "description" {
			desc = m.Value.(string)
			continue
		}
		inner.Set(m.Name, m.Value)
	}
	alts := []any{inner, jsonvalue.ObjectOf("type", "null")}
	if inner.Len() == 1 && inner.Has("anyOf") {
		a, _ := inner.Get("anyOf")
		alts = append(slices.Clone(a.([]any)), jsonvalue.ObjectOf("type", "null"))
	}
	return Schema(desc, "anyOf", alts)
}

// Ref is a reference to the definition name of the document's `$defs`, with an optional
// description.
func Ref(name, description string) *jsonvalue.Object {
	o := jsonvalue.ObjectOf("$ref", "#/$defs/"+name)
	if description != "" {
		o.Set("description", description)
	}
	return o
}

// Refs are references to the definitions names, without descriptions.
func Refs(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = Ref(n, "")
	}
	return out
}

// Str is a string schema.
func Str(description string) *jsonvalue.Object { return Schema(description, "type", "string") }
