package gen

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
)

// TSOptions is the TypeScript overlay of one contract: what a JSON Schema does not say about
// the declarations (envelope.md §6.3).
type TSOptions struct {
	// Doc is the file's doc comment, written after the header.
	Doc string
	// Constants are exported, in order, as literal-typed `as const` constants before the types.
	Constants []TSConst
	// Names declares inline schemas under a name, keyed by JSON Pointer into the document ("" is
	// the root). Every `$defs` entry is declared under its key unless renamed here.
	Names map[string]TSName
	// Docs gives doc comments by JSON Pointer (a property's schema, a definition, the root); it
	// takes precedence over the schema's `description`.
	Docs map[string]string
}

// TSConst is one exported constant: its TS name, its value (a string, an integer, a float64, a
// bool, or a []string exported as a readonly tuple) and a doc comment.
type TSConst struct {
	Name  string
	Value any
	Doc   string
}

// TSName names one declaration. Tuple, for a schema with `enum`, also exports the values as a
// readonly tuple under that name.
type TSName struct {
	Name  string
	Tuple string
}

// tsKeywords are the keywords the TypeScript renderer understands. Constraint and annotation
// keywords (limits, patterns) do not change the TypeScript type; any other keyword is an error,
// so a schema the renderer would misrepresent fails loudly instead.
var tsKeywords = map[string]bool{
	"$comment": true, "$schema": true, "$id": true, "$defs": true, "$ref": true, "title": true,
	"description": true, "type": true, "enum": true, "const": true, "properties": true,
	"required": true, "additionalProperties": true, "unevaluatedProperties": true, "items": true,
	"allOf": true, "anyOf": true, "oneOf": true,
	"minLength": true, "maxLength": true, "pattern": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "minItems": true, "maxItems": true,
	"uniqueItems": true,
}

var tsIdentRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// tsWidth is the column at which doc comments and long tuples wrap.
const tsWidth = 100

// TypeScript renders the TypeScript declarations of a schema document (envelope.md §6.3):
// interfaces for object schemas with properties (required members plain, optional ones `?`,
// `| null` only where the schema allows null), string-literal unions for `enum`, literal types
// for `const`, unions for `oneOf`/`anyOf` (discriminated where the variants carry `const`
// discriminators), `extends` for `allOf` references, `as const` constants, and doc comments
// from `description` or the overlay. The result starts with the [Header] line comment and ends
// with one LF.
func TypeScript(doc *jsonvalue.Object, opts TSOptions) ([]byte, error) {
	r := &tsRenderer{doc: doc, opts: opts, names: map[string]string{}, queued: map[string]bool{}}
	if err := r.collectNames(); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("// " + Header + "\n")
	if opts.Doc != "" {
		b.WriteString("\n" + tsDoc(opts.Doc, ""))
	}
	for _, c := range opts.Constants {
		s, err := tsConst(c)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n" + s)
	}
	for i := 0; i < len(r.queue); i++ {
		ptr := r.queue[i]
		s, err := r.decl(ptr)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n" + s)
	}
	if r.usesJSON {
		b.WriteString("\n" + tsDoc("Any JSON value.", "") +
			"export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };\n")
	}
	return []byte(b.String()), nil
}

type tsRenderer struct {
	doc      *jsonvalue.Object
	opts     TSOptions
	names    map[string]string // JSON Pointer → declared name
	queue    []string          // pointers to declare, in order
	queued   map[string]bool
	usesJSON bool
}

// collectNames assigns the declared names and queues the root (when named and not a bare
// `$ref`) and every `$defs` entry, in document order.
func (r *tsRenderer) collectNames() error {
	seen := map[string]string{}
	add := func(ptr, name string) error {
		if !tsIdentRE.MatchString(name) {
			return fmt.Errorf("TypeScript name %q (at %q) is not an identifier", name, ptr)
		}
		if prev, dup := seen[name]; dup && prev != ptr {
			return fmt.Errorf("TypeScript name %s declared at %q and %q", name, prev, ptr)
		}
		seen[name] = ptr
		r.names[ptr] = name
		return nil
	}
	for ptr, n := range r.opts.Names {
		if err := add(ptr, n.Name); err != nil {
			return err
		}
	}
	if _, named := r.opts.Names[""]; !named && !isBareRef(r.doc) {
		title, _ := r.doc.Get("title")
		t, ok := title.(string)
		if !ok {
			return fmt.Errorf("root schema needs a title or a TS name")
		}
		if err := add("", t); err != nil {
			return err
		}
	}
	if _, ok := r.names[""]; ok {
		r.enqueue("")
	}
	if defs, ok := r.doc.Get("$defs"); ok {
		d, ok := defs.(*jsonvalue.Object)
		if !ok {
			return fmt.Errorf("$defs is not an object")
		}
		for _, m := range d.Members() {
			ptr := pointer("/$defs", m.Name)
			if _, renamed := r.names[ptr]; !renamed {
				if err := add(ptr, m.Name); err != nil {
					return err
				}
			}
			r.enqueue(ptr)
		}
	}
	return nil
}

func (r *tsRenderer) enqueue(ptr string) {
	if !r.queued[ptr] {
		r.queued[ptr] = true
		r.queue = append(r.queue, ptr)
	}
}

// isBareRef reports whether the schema's only type-bearing keyword is `$ref`.
func isBareRef(s *jsonvalue.Object) bool {
	if !s.Has("$ref") {
		return false
	}
	for _, k := range s.Keys() {
		switch k {
		case "$ref", "$comment", "$schema", "$id", "$defs", "title", "description":
		default:
			return false
		}
	}
	return true
}

// lookup returns the schema at a JSON Pointer of the document.
func (r *tsRenderer) lookup(ptr string) (any, error) {
	var cur any = r.doc
	if ptr == "" {
		return cur, nil
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *jsonvalue.Object:
			v, ok := c.Get(tok)
			if !ok {
				return nil, fmt.Errorf("no schema at %q", ptr)
			}
			cur = v
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("no schema at %q", ptr)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("no schema at %q", ptr)
		}
	}
	return cur, nil
}

// pointer appends one reference token to a JSON Pointer (RFC 6901 escaping).
func pointer(base, token string) string {
	return base + "/" + strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// docOf is the doc comment of the schema at ptr: the overlay's, else its `description`.
func (r *tsRenderer) docOf(ptr string, s any) string {
	if d, ok := r.opts.Docs[ptr]; ok {
		return d
	}
	if o, ok := s.(*jsonvalue.Object); ok {
		if d, ok := o.Get("description"); ok {
			if str, ok := d.(string); ok {
				return str
			}
		}
	}
	return ""
}

// decl renders the declaration of the named schema at ptr.
func (r *tsRenderer) decl(ptr string) (string, error) {
	name := r.names[ptr]
	s, err := r.lookup(ptr)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(tsDoc(r.docOf(ptr, s), ""))
	o, isObj := s.(*jsonvalue.Object)
	if isObj && isInterface(o) {
		ext, err := r.extends(ptr, o)
		if err != nil {
			return "", err
		}
		members := "{}"
		if o.Has("properties") {
			if members, err = r.members(ptr, o, ""); err != nil {
				return "", err
			}
		}
		b.WriteString("export interface " + name)
		if len(ext) > 0 {
			b.WriteString(" extends " + strings.Join(ext, ", "))
		}
		b.WriteString(" " + members + "\n")
	} else {
		e, err := r.expr(ptr, s, "", true)
		if err != nil {
			return "", err
		}
		line := "export type " + name + " = " + e + ";"
		if parts, ok := r.alternatives(ptr, s); ok && len(line) > tsWidth && !strings.Contains(line, "\n") {
			line = "export type " + name + " =\n  | " + strings.Join(parts, "\n  | ") + ";"
		}
		b.WriteString(line + "\n")
	}
	if n := r.opts.Names[ptr]; n.Tuple != "" {
		vals, ok := enumValues(s)
		if !ok {
			return "", fmt.Errorf("%s: a tuple needs an enum of strings", name)
		}
		c, err := tsConst(TSConst{Name: n.Tuple, Value: vals, Doc: "The values of " + name + ", in order."})
		if err != nil {
			return "", err
		}
		b.WriteString("\n" + c)
	}
	return b.String(), nil
}

// isInterface reports whether an object schema becomes an interface: it has properties (or
// extends a reference) and no exclusive-required `oneOf`.
func isInterface(o *jsonvalue.Object) bool {
	if o.Has("oneOf") || o.Has("anyOf") || o.Has("enum") || o.Has("const") || o.Has("$ref") {
		return false
	}
	if t, ok := o.Get("type"); ok && t != "object" {
		return false
	}
	if o.Has("allOf") {
		return true
	}
	props, _ := o.Get("properties")
	po, ok := props.(*jsonvalue.Object)
	return ok && po.Len() > 0
}

func enumValues(s any) ([]string, bool) {
	o, ok := s.(*jsonvalue.Object)
	if !ok {
		return nil, false
	}
	e, ok := o.Get("enum")
	if !ok {
		return nil, false
	}
	arr, ok := e.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(arr))
	for i, v := range arr {
		if out[i], ok = v.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// extends returns the names an object schema extends: its `allOf` entries, each a `$ref`.
func (r *tsRenderer) extends(ptr string, o *jsonvalue.Object) ([]string, error) {
	all, ok := o.Get("allOf")
	if !ok {
		return nil, nil
	}
	arr, ok := all.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: allOf is not an array", ptr)
	}
	var out []string
	for i, e := range arr {
		eo, ok := e.(*jsonvalue.Object)
		if !ok || !isBareRef(eo) {
			return nil, fmt.Errorf("%s/allOf/%d: only $ref entries are supported", ptr, i)
		}
		n, err := r.ref(eo)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// ref resolves a local `$ref` (#/…) to the declared name of its target.
func (r *tsRenderer) ref(o *jsonvalue.Object) (string, error) {
	v, _ := o.Get("$ref")
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "#") {
		return "", fmt.Errorf("$ref %v: only local references are supported", v)
	}
	target := s[1:]
	name, ok := r.names[target]
	if !ok {
		return "", fmt.Errorf("$ref %s: target has no TypeScript name", s)
	}
	if _, err := r.lookup(target); err != nil {
		return "", err
	}
	r.enqueue(target)
	return name, nil
}

// expr renders the type expression of the schema s at ptr. top is true for the schema being
// declared (so its own name is not used).
func (r *tsRenderer) expr(ptr string, s any, indent string, top bool) (string, error) {
	if name, ok := r.names[ptr]; ok && !top {
		r.enqueue(ptr)
		return name, nil
	}
	switch v := s.(type) {
	case bool:
		if v {
			r.usesJSON = true
			return "JsonValue", nil
		}
		return "never", nil
	case *jsonvalue.Object:
		return r.objectExpr(ptr, v, indent)
	default:
		return "", fmt.Errorf("%q: a schema must be an object or a boolean", ptr)
	}
}

func (r *tsRenderer) objectExpr(ptr string, o *jsonvalue.Object, indent string) (string, error) {
	for _, k := range o.Keys() {
		if !tsKeywords[k] {
			return "", fmt.Errorf("%q: keyword %s is not supported by the TypeScript renderer", ptr, k)
		}
	}
	if o.Has("$ref") {
		if !isBareRef(o) {
			return "", fmt.Errorf("%q: $ref beside other keywords is not supported", ptr)
		}
		return r.ref(o)
	}
	if c, ok := o.Get("const"); ok {
		return tsLiteral(c)
	}
	if e, ok := o.Get("enum"); ok {
		parts, err := enumLiterals(ptr, e)
		if err != nil {
			return "", err
		}
		return strings.Join(parts, " | "), nil
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		if alt, ok := o.Get(kw); ok && !o.Has("properties") {
			parts, err := r.union(pointer(ptr, kw), alt, indent)
			if err != nil {
				return "", err
			}
			return strings.Join(parts, " | "), nil
		}
	}
	types, err := schemaTypes(ptr, o)
	if err != nil {
		return "", err
	}
	if types == nil {
		if o.Has("properties") || o.Has("allOf") || o.Has("oneOf") || o.Has("additionalProperties") {
			types = []string{"object"}
		} else {
			r.usesJSON = true
			return "JsonValue", nil
		}
	}
	parts := make([]string, 0, len(types))
	for _, t := range types {
		var p string
		switch t {
		case "string", "boolean", "null":
			p = t
		case "integer", "number":
			p = "number"
		case "array":
			item := "JsonValue"
			if it, ok := o.Get("items"); ok {
				if item, err = r.expr(pointer(ptr, "items"), it, indent, false); err != nil {
					return "", err
				}
			} else {
				r.usesJSON = true
			}
			if strings.ContainsAny(item, "|&") {
				item = "(" + item + ")"
			}
			p = item + "[]"
		case "object":
			if p, err = r.inlineObject(ptr, o, indent); err != nil {
				return "", err
			}
		default:
			return "", fmt.Errorf("%q: unknown type %q", ptr, t)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " | "), nil
}

// schemaTypes returns the `type` keyword as a list (nil when absent).
func schemaTypes(ptr string, o *jsonvalue.Object) ([]string, error) {
	t, ok := o.Get("type")
	if !ok {
		return nil, nil
	}
	switch x := t.(type) {
	case string:
		return []string{x}, nil
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%q: type entries must be strings", ptr)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("%q: type must be a string or an array", ptr)
}

// union renders the alternatives of a `oneOf` or `anyOf`.
func (r *tsRenderer) union(ptr string, alt any, indent string) ([]string, error) {
	arr, ok := alt.([]any)
	if !ok || len(arr) == 0 {
		return nil, fmt.Errorf("%q: must be a non-empty array", ptr)
	}
	parts := make([]string, len(arr))
	for i, a := range arr {
		e, err := r.expr(fmt.Sprintf("%s/%d", ptr, i), a, indent, false)
		if err != nil {
			return nil, err
		}
		parts[i] = e
	}
	return parts, nil
}

func enumLiterals(ptr string, e any) ([]string, error) {
	arr, ok := e.([]any)
	if !ok || len(arr) == 0 {
		return nil, fmt.Errorf("%q: enum must be a non-empty array", ptr)
	}
	parts := make([]string, len(arr))
	for i, x := range arr {
		lit, err := tsLiteral(x)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", ptr, err)
		}
		parts[i] = lit
	}
	return parts, nil
}

// alternatives returns the members of a declaration that is a union of enum literals or of
// `oneOf`/`anyOf` alternatives, so a long declaration can list one per line.
func (r *tsRenderer) alternatives(ptr string, s any) ([]string, bool) {
	o, ok := s.(*jsonvalue.Object)
	if !ok || o.Has("const") || o.Has("$ref") {
		return nil, false
	}
	if e, ok := o.Get("enum"); ok {
		parts, err := enumLiterals(ptr, e)
		return parts, err == nil
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		if alt, ok := o.Get(kw); ok && !o.Has("properties") {
			parts, err := r.union(pointer(ptr, kw), alt, "")
			return parts, err == nil
		}
	}
	return nil, false
}

// inlineObject renders an object schema as a type expression: a member list, an index
// signature for a map, extended references and an exclusive-required `oneOf` as intersections.
func (r *tsRenderer) inlineObject(ptr string, o *jsonvalue.Object, indent string) (string, error) {
	var parts []string
	ext, err := r.extends(ptr, o)
	if err != nil {
		return "", err
	}
	parts = append(parts, ext...)
	exclusive, err := exclusiveKeys(ptr, o)
	if err != nil {
		return "", err
	}
	if o.Has("properties") || len(ext) == 0 {
		m, err := r.membersExcept(ptr, o, indent, exclusive)
		if err != nil {
			return "", err
		}
		parts = append(parts, m)
	}
	if len(exclusive) > 0 {
		props, _ := o.Get("properties")
		po, _ := props.(*jsonvalue.Object)
		variants := make([]string, len(exclusive))
		for i, k := range exclusive {
			ks, ok := po.Get(k)
			if !ok {
				return "", fmt.Errorf("%q: oneOf requires %s, which is not a property", ptr, k)
			}
			t, err := r.expr(pointer(pointer(ptr, "properties"), k), ks, indent+"  ", false)
			if err != nil {
				return "", err
			}
			fields := []string{tsKey(k) + ": " + t}
			for _, other := range exclusive {
				if other != k {
					fields = append(fields, tsKey(other)+"?: never")
				}
			}
			variants[i] = indent + "  | { " + strings.Join(fields, "; ") + " }"
		}
		parts = append(parts, "(\n"+strings.Join(variants, "\n")+"\n"+indent+")")
	}
	return strings.Join(parts, " & "), nil
}

// exclusiveKeys recognises `oneOf: [{"required":[a]}, {"required":[b]}, …]` beside
// `properties` (exactly one of the listed members present) and returns [a, b, …].
func exclusiveKeys(ptr string, o *jsonvalue.Object) ([]string, error) {
	alt, ok := o.Get("oneOf")
	if !ok {
		return nil, nil
	}
	arr, ok := alt.([]any)
	if !ok || !o.Has("properties") {
		return nil, fmt.Errorf("%q: oneOf beside properties must list {required:[name]} entries", ptr)
	}
	out := make([]string, len(arr))
	for i, a := range arr {
		ao, ok := a.(*jsonvalue.Object)
		if !ok || ao.Len() != 1 {
			return nil, fmt.Errorf("%q: oneOf beside properties must list {required:[name]} entries", ptr)
		}
		req, _ := ao.Get("required")
		ra, ok := req.([]any)
		if !ok || len(ra) != 1 {
			return nil, fmt.Errorf("%q: oneOf beside properties must list {required:[name]} entries", ptr)
		}
		if out[i], ok = ra[0].(string); !ok {
			return nil, fmt.Errorf("%q: required entries must be strings", ptr)
		}
	}
	return out, nil
}

func (r *tsRenderer) members(ptr string, o *jsonvalue.Object, indent string) (string, error) {
	return r.membersExcept(ptr, o, indent, nil)
}

// membersExcept renders `{ … }` with one line per property (skipping except), or an index
// signature when the object declares no properties.
func (r *tsRenderer) membersExcept(ptr string, o *jsonvalue.Object, indent string, except []string) (string, error) {
	required := map[string]bool{}
	if req, ok := o.Get("required"); ok {
		arr, ok := req.([]any)
		if !ok {
			return "", fmt.Errorf("%q: required must be an array", ptr)
		}
		for _, x := range arr {
			if s, ok := x.(string); ok {
				required[s] = true
			}
		}
	}
	props, hasProps := o.Get("properties")
	if !hasProps {
		if len(except) > 0 {
			return "", fmt.Errorf("%q: oneOf needs properties", ptr)
		}
		if ap, ok := o.Get("additionalProperties"); ok {
			if ap == false {
				return "{ [key: string]: never }", nil
			}
			t, err := r.expr(pointer(ptr, "additionalProperties"), ap, indent, false)
			if err != nil {
				return "", err
			}
			return "{ [key: string]: " + t + " }", nil
		}
		r.usesJSON = true
		return "{ [key: string]: JsonValue }", nil
	}
	po, ok := props.(*jsonvalue.Object)
	if !ok {
		return "", fmt.Errorf("%q: properties must be an object", ptr)
	}
	if po.Len() == 0 {
		if ap, ok := o.Get("additionalProperties"); ok && ap == false {
			return "{ [key: string]: never }", nil
		}
		return "{}", nil
	}
	inner := indent + "  "
	var b strings.Builder
	b.WriteString("{\n")
	for _, m := range po.Members() {
		skip := false
		for _, e := range except {
			skip = skip || e == m.Name
		}
		if skip {
			continue
		}
		mp := pointer(pointer(ptr, "properties"), m.Name)
		t, err := r.expr(mp, m.Value, inner, false)
		if err != nil {
			return "", err
		}
		b.WriteString(tsDoc(r.docOf(mp, m.Value), inner))
		opt := "?"
		if required[m.Name] {
			opt = ""
		}
		b.WriteString(inner + tsKey(m.Name) + opt + ": " + t + ";\n")
	}
	b.WriteString(indent + "}")
	return b.String(), nil
}

// tsKey writes a property name bare when it is an identifier, else as a string literal.
func tsKey(k string) string {
	if tsIdentRE.MatchString(k) {
		return k
	}
	return jsonvalue.Quote(k)
}

// tsLiteral renders a JSON scalar as a TypeScript literal type or value.
func tsLiteral(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case bool, string, float64:
		return string(jsonvalue.AppendEncoded(nil, x)), nil
	}
	return "", fmt.Errorf("literal %v is not a JSON scalar", v)
}

// tsConst renders `export const NAME = <value> as const;` with its doc comment.
func tsConst(c TSConst) (string, error) {
	if !tsIdentRE.MatchString(c.Name) {
		return "", fmt.Errorf("constant name %q is not an identifier", c.Name)
	}
	var val string
	switch x := c.Value.(type) {
	case string:
		val = jsonvalue.Quote(x)
	case bool:
		val = fmt.Sprint(x)
	case int:
		val = fmt.Sprint(x)
	case int64:
		val = fmt.Sprint(x)
	case float64:
		val = jsonvalue.FormatNumber(x)
	case []string:
		quoted := make([]string, len(x))
		for i, s := range x {
			quoted[i] = jsonvalue.Quote(s)
		}
		val = "[" + strings.Join(quoted, ", ") + "]"
		head := "export const " + c.Name + " = "
		if len(head)+len(val)+len(" as const;") > tsWidth {
			val = "[\n  " + strings.Join(quoted, ",\n  ") + ",\n]"
		}
	default:
		return "", fmt.Errorf("constant %s: unsupported value type %T", c.Name, c.Value)
	}
	return tsDoc(c.Doc, "") + "export const " + c.Name + " = " + val + " as const;\n", nil
}

// tsDoc renders a doc comment at indent: `/** text */` when it fits one line, else a block
// wrapped at [tsWidth] columns. Explicit line breaks in text are kept.
func tsDoc(text, indent string) string {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "*\\/"))
	if text == "" {
		return ""
	}
	if one := indent + "/** " + text + " */"; !strings.Contains(text, "\n") && len(one) <= tsWidth {
		return one + "\n"
	}
	var b strings.Builder
	b.WriteString(indent + "/**\n")
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			if line != "" && len(indent)+3+len(line)+1+len(w) > tsWidth {
				b.WriteString(indent + " * " + line + "\n")
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		if line == "" {
			b.WriteString(indent + " *\n")
		} else {
			b.WriteString(indent + " * " + line + "\n")
		}
	}
	b.WriteString(indent + " */\n")
	return b.String()
}
