package gen

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
)

// GoTypes tells [SchemaFromGo] what reflection cannot see in a Go declaration.
type GoTypes struct {
	// Enums gives, per named string type, its values in the normative order (the package's
	// ordered enum slice); the schema lists them as `enum`.
	Enums map[reflect.Type][]string
	// Names gives the TypeScript declaration of a Go type. Struct types default to their Go
	// name; an enum type without an entry is rendered inline as a literal union.
	Names map[reflect.Type]TSName
}

// SchemaFromGo derives the JSON Schema of a Go struct type from its declarations alone
// (envelope.md §6.1):
//
//   - `json:"name"` makes a property required, `json:"name,omitempty"` (or omitzero) optional;
//     properties keep the field order;
//   - string kinds are `string` (with `enum` from [GoTypes.Enums]), integer kinds `integer`,
//     floats `number`, bool `boolean`, slices `array` with `items`, pointers their element,
//     nested structs an inline closed object;
//   - a `schema:"k=v,…"` tag adds limits: minLength, maxLength, minimum, maximum, minItems,
//     maxItems.
//
// Within a property, keys follow the order of envelope.md §6.2: `type`, `enum`, the limits,
// `items`, `required`, `properties`, `additionalProperties`. Every object is closed
// (`additionalProperties: false`): the schema binds producers. It returns the root schema and
// the TypeScript names of the struct and enum types it met, keyed by JSON Pointer.
func SchemaFromGo(rt reflect.Type, types GoTypes) (*jsonvalue.Object, map[string]TSName, error) {
	g := &goSchema{types: types, names: map[string]TSName{}}
	if rt.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("%v: the root must be a struct", rt)
	}
	s, err := g.schema(rt, "", "")
	if err != nil {
		return nil, nil, err
	}
	return s, g.names, nil
}

type goSchema struct {
	types GoTypes
	names map[string]TSName
}

func (g *goSchema) schema(rt reflect.Type, tag, ptr string) (*jsonvalue.Object, error) {
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	o := jsonvalue.NewObject(4)
	switch rt.Kind() {
	case reflect.String:
		o.Set("type", "string")
		if vals, ok := g.types.Enums[rt]; ok {
			e := make([]any, len(vals))
			for i, v := range vals {
				e[i] = v
			}
			o.Set("enum", e)
			if n, ok := g.types.Names[rt]; ok {
				g.names[ptr] = n
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		o.Set("type", "integer")
	case reflect.Float32, reflect.Float64:
		o.Set("type", "number")
	case reflect.Bool:
		o.Set("type", "boolean")
	case reflect.Slice, reflect.Array:
		o.Set("type", "array")
	case reflect.Struct:
		o.Set("type", "object")
	default:
		return nil, fmt.Errorf("%s: %v has no JSON Schema form", ptrOrRoot(ptr), rt)
	}
	if err := limits(o, tag, ptr); err != nil {
		return nil, err
	}
	switch rt.Kind() {
	case reflect.Slice, reflect.Array:
		items, err := g.schema(rt.Elem(), "", pointer(ptr, "items"))
		if err != nil {
			return nil, err
		}
		o.Set("items", items)
	case reflect.Struct:
		if err := g.object(o, rt, ptr); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (g *goSchema) object(o *jsonvalue.Object, rt reflect.Type, ptr string) error {
	n, ok := g.types.Names[rt]
	if !ok {
		n = TSName{Name: rt.Name()}
	}
	g.names[ptr] = n
	required := []any{}
	props := jsonvalue.NewObject(rt.NumField())
	for f := range rt.Fields() {
		if !f.IsExported() {
			continue
		}
		tag, ok := f.Tag.Lookup("json")
		if !ok {
			return fmt.Errorf("%v.%s: no json tag", rt, f.Name)
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		optional := false
		for _, opt := range strings.Split(opts, ",") {
			optional = optional || opt == "omitempty" || opt == "omitzero"
		}
		if !optional {
			required = append(required, name)
		}
		p, err := g.schema(f.Type, f.Tag.Get("schema"), pointer(pointer(ptr, "properties"), name))
		if err != nil {
			return err
		}
		props.Set(name, p)
	}
	o.Set("required", required)
	o.Set("properties", props)
	o.Set("additionalProperties", false)
	return nil
}

// limits applies a `schema:"k=v,…"` tag.
func limits(o *jsonvalue.Object, tag, ptr string) error {
	if tag == "" {
		return nil
	}
	for _, kv := range strings.Split(tag, ",") {
		k, v, ok := strings.Cut(kv, "=")
		switch k {
		case "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems":
		default:
			return fmt.Errorf("%s: schema tag %q: unknown keyword %s", ptrOrRoot(ptr), kv, k)
		}
		n, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return fmt.Errorf("%s: schema tag %q: want key=number", ptrOrRoot(ptr), kv)
		}
		o.Set(k, n)
	}
	return nil
}

func ptrOrRoot(ptr string) string {
	if ptr == "" {
		return "(root)"
	}
	return ptr
}
