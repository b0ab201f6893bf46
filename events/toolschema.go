package events

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/agentwire/agentwire/jsonvalue"
)

// This file implements the raw JSON Schema subset AgentDock accepts for tool parameters at the
// model boundary (events.md §10): registration checks (ValidateToolParameters and the registry
// checks of ValidateToolDefinition) and argument validation (ValidateToolInput).

// Schema keywords allowed at the model boundary (events.md §10.1); every other keyword anywhere
// in the parameters is rejected at registration.
var allowedSchemaKeywords = map[string]bool{
	"$schema": true, "title": true, "description": true, "type": true, "properties": true,
	"required": true, "additionalProperties": true, "items": true, "enum": true, "const": true,
	"oneOf": true, "anyOf": true, "allOf": true,
}

// schemaTypes are the seven single `type` strings of events.md §10.1.
var schemaTypes = map[string]bool{
	"array": true, "boolean": true, "integer": true, "null": true, "number": true,
	"object": true, "string": true,
}

// ValidateToolParameters checks a tool's parameters schema at registration (events.md §10.2), in
// order:
//
//  1. not a JSON object (booleans included) → `Tool parameters must be a JSON schema object: <name>`;
//  2. root `type` not exactly "object" → `Tool parameters must have an object root type: <name>`;
//  3. the node check of §10.2 a)–h) from path `$` on the given Go value (not a clone): unsupported
//     keywords, invalid `type`, `properties`, `required`, `oneOf`/`anyOf`/`allOf`, `items`,
//     `additionalProperties` and `enum` shapes, with the exact messages (no final period);
//  4. CloneJSONValue(parameters, "Tool parameters: <name>") for the strict-JSON faults.
//
// Go values are classified as in §3.5: a JSONValuer is resolved first, []any is an array,
// map[string]any and Object are objects, kind bool is a boolean, kind string (json.Number
// excepted) a string; any other Go type is neither. The node check does not descend into a
// container already on its chain of descent; step 4 then reports the cycle (§12(i)).
// It returns the validated clone. Faults of steps 1–3 are *ValidationError, those of step 4
// *JSONValidationError.
func ValidateToolParameters(toolName string, parameters any) (*Object, error) {
	root, _, ok := schemaObject(parameters)
	if !ok {
		return nil, &ValidationError{Message: "Tool parameters must be a JSON schema object: " + toolName}
	}
	if t, ok := rawString(root.get("type").v); !ok || t != "object" {
		return nil, &ValidationError{Message: "Tool parameters must have an object root type: " + toolName}
	}
	sc := schemaCheck{tool: toolName}
	if err := sc.node(parameters, "$"); err != nil {
		return nil, err
	}
	c, err := jsonvalue.CloneValue(parameters, "Tool parameters: "+toolName)
	if err != nil {
		return nil, err
	}
	o, ok := c.(*Object)
	if !ok {
		// Only reachable with a JSONValuer that answers differently on each call.
		return nil, &ValidationError{Message: "Tool parameters must be a JSON schema object: " + toolName}
	}
	return o, nil
}

// identity names a container for the cycle checks: map or Object pointer, or a slice's first
// element address with its length (events.md §3.5).
type identity struct {
	ptr  uintptr
	n    int
	kind byte
}

// schemaObject classifies v (a JSONValuer resolved first) as a JSON object and returns a view of
// it with the identity of its container.
func schemaObject(v any) (objView, identity, bool) {
	switch x := resolve(v).(type) {
	case map[string]any:
		if x == nil {
			return objView{}, identity{}, false
		}
		return objView{m: x}, identity{ptr: uintptr(reflect.ValueOf(x).UnsafePointer()), kind: 'm'}, true
	case *Object:
		if x == nil {
			return objView{}, identity{}, false
		}
		return objView{o: x}, identity{ptr: uintptr(unsafe.Pointer(x)), kind: 'o'}, true
	case Object:
		// A value copy: its identity is the members array it shares with the original. An empty
		// one has nothing to descend into, so it needs no identity (and zero-size arrays may
		// share an address).
		var id identity
		if x.Len() > 0 {
			id = identity{ptr: uintptr(unsafe.Pointer(unsafe.SliceData(x.Members()))), n: x.Len(), kind: 'v'}
		}
		return objView{o: &x}, id, true
	}
	return objView{}, identity{}, false
}

// rawArray classifies v as a JSON array ([]any, non-nil) with its identity.
func rawArray(v any) ([]any, identity, bool) {
	a, ok := resolve(v).([]any)
	if !ok || a == nil {
		return nil, identity{}, false
	}
	var id identity
	if len(a) > 0 {
		id = identity{ptr: uintptr(unsafe.Pointer(&a[0])), n: len(a), kind: 'a'}
	}
	return a, id, true
}

// rawBool classifies v as a JSON boolean (kind bool, a JSONValuer resolved first).
func rawBool(v any) (value, ok bool) {
	v = resolve(v)
	if b, ok := v.(bool); ok {
		return b, true
	}
	if v == nil {
		return false, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Bool {
		return rv.Bool(), true
	}
	return false, false
}

// visitNames returns the member names of o in visiting order (events.md §3.2): document order
// for an Object, the RFC 8785 order for a map (names that are not valid UTF-8 sort by bytes, as
// in jsonvalue).
func (w objView) visitNames() []string {
	if w.m == nil {
		return w.o.Keys()
	}
	keys := make([]string, 0, len(w.m))
	for k := range w.m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if utf8.ValidString(a) && utf8.ValidString(b) {
			return jsonvalue.CompareUTF16(a, b)
		}
		return strings.Compare(a, b)
	})
	return keys
}

// schemaCheck is the node check of events.md §10.2 step 3.
type schemaCheck struct {
	tool  string
	chain []identity
}

func (s *schemaCheck) onChain(id identity) bool {
	return id.ptr != 0 && slices.Contains(s.chain, id)
}

func (s *schemaCheck) fail(msg, p string) error {
	return &ValidationError{Message: "Tool parameters " + msg + " at " + p + ": " + s.tool}
}

// node checks the schema node v at path p (rules a–h).
func (s *schemaCheck) node(v any, p string) error {
	if _, ok := rawBool(v); ok {
		return nil // a) a boolean sub-schema; the root is known to be an object
	}
	o, id, ok := schemaObject(v)
	if !ok {
		return s.fail("contain an invalid JSON schema", p)
	}
	if s.onChain(id) {
		return nil // already being checked higher up: step 4 reports the cycle
	}
	s.chain = append(s.chain, id)
	defer func() { s.chain = s.chain[:len(s.chain)-1] }()

	// b) keywords, in visiting order.
	for _, k := range o.visitNames() {
		if !allowedSchemaKeywords[k] {
			return s.fail("use unsupported JSON schema keyword "+k, p)
		}
	}
	// c) type.
	if t := o.get("type"); t.ok {
		if ts, ok := rawString(t.v); !ok || !schemaTypes[ts] {
			return s.fail("contain an invalid JSON schema type", p)
		}
	}
	// d) properties, each property schema completely before `required`.
	if pr := o.get("properties"); pr.ok {
		po, pid, ok := schemaObject(pr.v)
		if !ok {
			return s.fail("properties must be an object", p)
		}
		if !s.onChain(pid) {
			s.chain = append(s.chain, pid)
			for _, name := range po.visitNames() {
				if err := s.node(po.get(name).v, p+".properties."+name); err != nil {
					return err
				}
			}
			s.chain = s.chain[:len(s.chain)-1]
		}
	}
	// e) required.
	if rq := o.get("required"); rq.ok {
		arr, _, ok := rawArray(rq.v)
		if !ok {
			return s.fail("required must be an array", p)
		}
		for i, e := range arr {
			if name, ok := rawString(e); !ok || jsTrim(name) == "" {
				return s.fail("required entries must be non-empty strings", p+".required["+strconv.Itoa(i)+"]")
			}
		}
	}
	// f) oneOf, anyOf, allOf: each keyword's entries before the next keyword.
	for _, kw := range [3]string{"oneOf", "anyOf", "allOf"} {
		c := o.get(kw)
		if !c.ok {
			continue
		}
		arr, aid, ok := rawArray(c.v)
		if !ok {
			return s.fail(kw+" must be an array", p)
		}
		if s.onChain(aid) {
			continue
		}
		s.chain = append(s.chain, aid)
		for i, e := range arr {
			if err := s.node(e, p+"."+kw+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		s.chain = s.chain[:len(s.chain)-1]
	}
	// g) items, then additionalProperties.
	if it := o.get("items"); it.ok {
		if err := s.node(it.v, p+".items"); err != nil {
			return err
		}
	}
	if ap := o.get("additionalProperties"); ap.ok {
		if err := s.node(ap.v, p+".additionalProperties"); err != nil {
			return err
		}
	}
	// h) enum.
	if en := o.get("enum"); en.ok {
		if _, _, ok := rawArray(en.v); !ok {
			return s.fail("enum must be an array", p)
		}
	}
	return nil
}

// isJSSpace reports the ECMAScript white space and line terminators String.prototype.trim
// removes: Unicode Zs, TAB, VT, FF, U+FEFF, LF, CR, U+2028, U+2029.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// jsTrim is ECMAScript String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// maxEvalDepth bounds the nesting of ValidateToolInput's evaluation. Parameters that passed
// registration nest at most MaxJSONDepth deep and inputs likewise, so the bound is only reached
// with untrusted parameters built to recurse forever (for instance through a JSONValuer); the
// node then fails instead of exhausting the stack.
const maxEvalDepth = 4 * MaxJSONDepth

// ValidateToolInput validates a tool call's input against the tool's parameters (events.md
// §10.3). The parameters are not re-checked: they are trusted to have passed
// [ValidateToolParameters] (keywords outside §10.1 are ignored). The input is first checked by
// CloneJSONObject(input, "Tool input: <toolName>"); validation then runs on the clone from path
// `$`: true/false schemas, const, enum (canonical equality), allOf/anyOf/oneOf (errors inside
// entries discarded), type, object members (`Missing required input <p>.<prop> for tool
// <toolName>.`, `Unexpected input <p>.<k> for tool <toolName>.`) and array items; every other
// failure reads `Invalid input at <p> for tool <toolName>.` All faults but the JSON-layer ones
// of the input are *ValidationError.
//
// ValidateToolInput never panics, whatever the parameters: malformed nodes fail, and cycles
// through allOf/anyOf/oneOf fail instead of recursing.
func ValidateToolInput(parameters any, input any, toolName string) error {
	in, err := jsonvalue.CloneObject(input, "Tool input: "+toolName)
	if err != nil {
		return err
	}
	ev := inputEval{tool: toolName}
	return ev.eval(parameters, in)
}

// segment is one step of an input path: a member name, or an index when name is "" and idx ≥ 0.
type segment struct {
	name string
	idx  int
}

// inputEval evaluates input against a schema. stack is the current input path; quiet > 0 inside
// combinator entries, whose errors are discarded, so no message is built there; comb holds the
// schema nodes being evaluated against the current input value, to cut combinator cycles.
type inputEval struct {
	tool  string
	stack []segment
	quiet int
	comb  []identity
	depth int
}

// errDiscarded stands for any failure inside a combinator entry; it never leaves ValidateToolInput.
var errDiscarded = &ValidationError{Message: "discarded"}

func (e *inputEval) path() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, s := range e.stack {
		if s.idx >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.idx))
			b.WriteByte(']')
		} else {
			b.WriteByte('.')
			b.WriteString(s.name)
		}
	}
	return b.String()
}

func (e *inputEval) fail() error {
	if e.quiet > 0 {
		return errDiscarded
	}
	return &ValidationError{Message: "Invalid input at " + e.path() + " for tool " + e.tool + "."}
}

func (e *inputEval) failMember(prefix, name string) error {
	if e.quiet > 0 {
		return errDiscarded
	}
	return &ValidationError{Message: prefix + e.path() + "." + name + " for tool " + e.tool + "."}
}

// descend evaluates v, found at the pushed segment, against schema s. A new input value starts
// a fresh combinator chain.
func (e *inputEval) descend(seg segment, s, v any) error {
	e.stack = append(e.stack, seg)
	saved := e.comb
	e.comb = e.comb[len(e.comb):len(e.comb)]
	err := e.eval(s, v)
	e.comb = saved
	e.stack = e.stack[:len(e.stack)-1]
	return err
}

// accepts reports whether a combinator entry accepts v; its errors are discarded.
func (e *inputEval) accepts(s, v any) bool {
	e.quiet++
	err := e.eval(s, v)
	e.quiet--
	return err == nil
}

// eval validates the value-model value v against the schema node s (events.md §10.3 steps 1–7).
func (e *inputEval) eval(s, v any) error {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > maxEvalDepth {
		return e.fail()
	}
	// 1. Boolean schemas.
	if b, ok := rawBool(s); ok {
		if b {
			return nil
		}
		return e.fail()
	}
	o, id, ok := schemaObject(s)
	if !ok {
		return e.fail()
	}
	if id.ptr != 0 {
		if slices.Contains(e.comb, id) {
			return e.fail() // a combinator cycle never accepts
		}
		e.comb = append(e.comb, id)
		defer func() { e.comb = e.comb[:len(e.comb)-1] }()
	}
	// 2. const.
	if c := o.get("const"); c.ok && !jsonEqual(c.v, v) {
		return e.fail()
	}
	// 3. enum.
	if en := o.get("enum"); en.ok {
		arr, _, ok := rawArray(en.v)
		if !ok || !slices.ContainsFunc(arr, func(m any) bool { return jsonEqual(m, v) }) {
			return e.fail()
		}
	}
	// 4. allOf, anyOf, oneOf: entry errors are discarded.
	if c := o.get("allOf"); c.ok {
		arr, _, ok := rawArray(c.v)
		if !ok {
			return e.fail()
		}
		for _, entry := range arr {
			if !e.accepts(entry, v) {
				return e.fail()
			}
		}
	}
	if c := o.get("anyOf"); c.ok {
		arr, _, ok := rawArray(c.v)
		if !ok || !slices.ContainsFunc(arr, func(entry any) bool { return e.accepts(entry, v) }) {
			return e.fail()
		}
	}
	if c := o.get("oneOf"); c.ok {
		arr, _, ok := rawArray(c.v)
		if !ok {
			return e.fail()
		}
		n := 0
		for _, entry := range arr {
			if e.accepts(entry, v) {
				n++
			}
		}
		if n != 1 {
			return e.fail()
		}
	}
	// 5. type.
	var typ string
	if t := o.get("type"); t.ok {
		typ, _ = rawString(t.v)
		if !matchesType(typ, v) {
			return e.fail()
		}
	}
	// 6. Objects.
	props := o.get("properties")
	if typ == "object" || props.ok {
		vo, ok := v.(*Object)
		if !ok {
			return e.fail()
		}
		if rq := o.get("required"); rq.ok {
			if arr, _, ok := rawArray(rq.v); ok {
				for _, r := range arr {
					if name, ok := rawString(r); ok && !vo.Has(name) {
						return e.failMember("Missing required input ", name)
					}
				}
			}
		}
		declared, hasDeclared := rawObject(props.v)
		ap := o.get("additionalProperties")
		for _, m := range vo.Members() {
			if hasDeclared {
				if ps := declared.get(m.Name); ps.ok {
					if err := e.descend(segment{name: m.Name, idx: -1}, ps.v, m.Value); err != nil {
						return err
					}
					continue
				}
			}
			if !ap.ok {
				continue
			}
			if b, ok := rawBool(ap.v); ok {
				if !b {
					return e.failMember("Unexpected input ", m.Name)
				}
				continue
			}
			if _, _, ok := schemaObject(ap.v); ok {
				if err := e.descend(segment{name: m.Name, idx: -1}, ap.v, m.Value); err != nil {
					return err
				}
			}
		}
	}
	// 7. Arrays.
	items := o.get("items")
	if typ == "array" || items.ok {
		arr, ok := v.([]any)
		if !ok {
			return e.fail()
		}
		if items.ok {
			for i, el := range arr {
				if err := e.descend(segment{idx: i}, items.v, el); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// matchesType applies a §10.3 step 5 `type` to a value-model value.
func matchesType(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(*Object)
		return ok
	}
	return false
}

// jsonEqual reports whether the schema value a (any Go value) and the value-model value v have
// the same canonical form (events.md §3.7, §12(a)). A value without a canonical form (not
// strict JSON) equals nothing.
func jsonEqual(a, v any) bool {
	if eq, known := directEqual(a, v); known {
		return eq
	}
	c, err := jsonvalue.CloneValue(a, "")
	if err != nil {
		return false
	}
	return jsonvalue.Equal(c, v)
}

// directEqual compares a against v when a is built from value-model types, walking both in
// lockstep (so a cyclic a cannot loop); known is false when a holds another Go type. Values of
// a that are not strict JSON (NaN, invalid UTF-8) never equal a validated v, which matches
// their lack of a canonical form.
func directEqual(a, v any) (eq, known bool) {
	switch x := a.(type) {
	case nil:
		return v == nil, true
	case bool:
		y, ok := v.(bool)
		return ok && x == y, true
	case float64:
		y, ok := v.(float64)
		return ok && x == y, true
	case string:
		y, ok := v.(string)
		return ok && x == y, true
	case []any:
		if x == nil {
			return v == nil, true
		}
		y, ok := v.([]any)
		if !ok || len(x) != len(y) {
			return false, true
		}
		for i := range x {
			if eq, known := directEqual(x[i], y[i]); !known || !eq {
				return eq, known
			}
		}
		return true, true
	case *Object:
		if x == nil {
			return v == nil, true
		}
		y, ok := v.(*Object)
		if !ok || x.Len() != y.Len() {
			return false, true
		}
		for _, m := range y.Members() {
			w, ok := x.Get(m.Name)
			if !ok {
				return false, true
			}
			if eq, known := directEqual(w, m.Value); !known || !eq {
				return eq, known
			}
		}
		return true, true
	}
	return false, false
}

// ValidateToolDefinition applies a tool registry's definition checks (events.md §10.2) to a
// dynamic definition def (map[string]any or Object with members name, description, parameters,
// execute, authorize?, requiresApproval?), in this order:
//
//   - def not an object → `Tool must be an object.`
//   - name not a string, or blank → `Tool name must be a non-empty string.`
//   - name with surrounding white space → `Tool name must not have leading or trailing whitespace: <name>`
//   - description not a string, or blank → `Tool description: <name> must be a non-empty string.`
//   - execute absent or not a (non-nil) Go func → `Tool execute must be a function: <name>`
//   - authorize present but not a func → `Tool authorize must be a function: <name>`
//   - requiresApproval present but not a boolean → `Tool requiresApproval must be a boolean: <name>`
//   - the parameters, by [ValidateToolParameters]
//   - registered(name) true → `Tool already registered: <name>` (registered may be nil).
//
// "White space" and "blank" use the ECMAScript trim set. It returns the validated parameters
// clone. Registries of static (typed) definitions use [ValidateToolName],
// [ValidateToolDescription], [ValidateToolParameters] and [ToolAlreadyRegistered] in the same
// order.
func ValidateToolDefinition(def any, registered func(name string) bool) (*Object, error) {
	o, ok := rawObject(def)
	if !ok {
		return nil, &ValidationError{Message: "Tool must be an object."}
	}
	name, err := ValidateToolName(o.get("name").v)
	if err != nil {
		return nil, err
	}
	if err := ValidateToolDescription(name, o.get("description").v); err != nil {
		return nil, err
	}
	if ex := o.get("execute"); !ex.ok || !isFunc(ex.v) {
		return nil, &ValidationError{Message: "Tool execute must be a function: " + name}
	}
	if au := o.get("authorize"); au.ok && !isFunc(au.v) {
		return nil, &ValidationError{Message: "Tool authorize must be a function: " + name}
	}
	if ra := o.get("requiresApproval"); ra.ok {
		if _, ok := rawBool(ra.v); !ok {
			return nil, &ValidationError{Message: "Tool requiresApproval must be a boolean: " + name}
		}
	}
	params, err := ValidateToolParameters(name, o.get("parameters").v)
	if err != nil {
		return nil, err
	}
	if registered != nil && registered(name) {
		return nil, ToolAlreadyRegistered(name)
	}
	return params, nil
}

// ValidateToolName checks a tool name (events.md §10.2): a string that is not blank
// (`Tool name must be a non-empty string.`) and has no leading or trailing white space
// (`Tool name must not have leading or trailing whitespace: <name>`), ECMAScript trim set.
func ValidateToolName(name any) (string, error) {
	s, ok := rawString(name)
	if !ok || jsTrim(s) == "" {
		return "", &ValidationError{Message: "Tool name must be a non-empty string."}
	}
	if jsTrim(s) != s {
		return "", &ValidationError{Message: "Tool name must not have leading or trailing whitespace: " + s}
	}
	return s, nil
}

// ValidateToolDescription checks a tool description (events.md §10.2): a string that is not
// blank, else `Tool description: <name> must be a non-empty string.`
func ValidateToolDescription(name string, description any) error {
	if s, ok := rawString(description); !ok || jsTrim(s) == "" {
		return &ValidationError{Message: "Tool description: " + name + " must be a non-empty string."}
	}
	return nil
}

// ToolAlreadyRegistered is the registry fault for a taken name: `Tool already registered: <name>`.
func ToolAlreadyRegistered(name string) *ValidationError {
	return &ValidationError{Message: "Tool already registered: " + name}
}

func isFunc(v any) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Func && !rv.IsNil()
}
