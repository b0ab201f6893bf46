package jsonvalue

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"unicode/utf8"
	"unsafe"
)

// CloneValue validates a Go value against the strict JSON rules of events.md §3.5 and returns a
// deep copy in the package's value model. The copy shares no container with v.
func CloneValue(v any, label string) (any, error) {
	if label == "" {
		label = DefaultLabel
	}
	w := walker{copy: true}
	return w.walk(v, label, 0)
}

// AssertValue performs the checks of CloneValue without building the copy.
func AssertValue(v any, label string) error {
	if label == "" {
		label = DefaultLabel
	}
	w := walker{}
	_, err := w.walk(v, label, 0)
	return err
}

// IsObject reports whether v is a JSON object: a non-nil map[string]any or Object (after
// resolving a JSONValuer).
func IsObject(v any) bool {
	v, err := resolveValuer(v)
	if err != nil {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		return x != nil
	case *Object:
		return x != nil
	case Object:
		return true
	}
	return false
}

// CloneObject is CloneValue for a value that must be a JSON object (events.md §3.6); anything
// else gives `<label> must be a JSON object.` The default label is `object`.
func CloneObject(v any, label string) (*Object, error) {
	if label == "" {
		label = "object"
	}
	if !IsObject(v) {
		return nil, newError(label, SuffixNotObject)
	}
	c, err := CloneValue(v, label)
	if err != nil {
		return nil, err
	}
	return c.(*Object), nil
}

// CloneSchema accepts a JSON Schema that is a boolean (returned unchanged) or an object (cloned);
// anything else gives `<label> must be a JSON Schema object or boolean.` The default label is
// `schema`.
func CloneSchema(v any, label string) (any, error) {
	if label == "" {
		label = "schema"
	}
	if b, ok := v.(bool); ok {
		return b, nil
	}
	if !IsObject(v) {
		return nil, newError(label, SuffixNotSchema)
	}
	return CloneValue(v, label)
}

// maxValuerChain bounds how many JSONValuers may stand for one another in a row: a valuer that
// returns itself would otherwise never end.
const maxValuerChain = MaxDepth

var errValuerChain = errors.New("jsonvalue: JSONValuer chain too long")

// resolveValuer replaces a JSONValuer by its value, repeatedly, so every entry point sees the
// same resolved value.
func resolveValuer(v any) (any, error) {
	for i := 0; ; i++ {
		jv, ok := v.(JSONValuer)
		if !ok {
			return v, nil
		}
		if i == maxValuerChain {
			return nil, errValuerChain
		}
		r, err := jv.JSONValue()
		if err != nil {
			return nil, err
		}
		v = r
	}
}

type walker struct {
	copy  bool
	chain []identity // the containers being descended (cycle check)
}

// identity names a container for the cycle check: the map or Object pointer, or a slice's first
// element address together with its length (events.md §3.5).
type identity struct {
	ptr uintptr
	n   int
}

func (w *walker) onChain(id identity) bool { return slices.Contains(w.chain, id) }

// enter performs the checks on entering a container: circular check, then depth check.
func (w *walker) enter(id identity, path string, depth int) error {
	if id.ptr != 0 && w.onChain(id) {
		return newError(path, SuffixCircular)
	}
	if depth+1 > MaxDepth {
		return newError(path, SuffixTooDeep)
	}
	w.chain = append(w.chain, id)
	return nil
}

func (w *walker) leave() { w.chain = w.chain[:len(w.chain)-1] }

// walk checks v at path; depth is the depth of the container holding v (0 at the top).
func (w *walker) walk(v any, path string, depth int) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return x, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, newError(path, SuffixInvalidUTF8)
		}
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, newError(path, SuffixNotFinite)
		}
		return x, nil
	case JSONValuer:
		r, err := resolveValuer(x)
		if err != nil {
			return nil, newError(path, SuffixNotSerializable)
		}
		return w.walk(r, path, depth)
	case json.Number:
		return checkNumberText(string(x), path)
	case Number:
		return checkNumberText(string(x), path)
	case []any:
		if x == nil {
			return nil, nil
		}
		return w.array(x, path, depth)
	case map[string]any:
		if x == nil {
			return nil, nil
		}
		return w.mapObject(x, path, depth)
	case *Object:
		if x == nil {
			return nil, nil
		}
		return w.object(x, path, depth)
	case Object:
		return w.object(&x, path, depth)
	}
	return w.kind(v, path)
}

func (w *walker) array(x []any, path string, depth int) (any, error) {
	var id identity
	if len(x) > 0 {
		id = identity{uintptr(unsafe.Pointer(&x[0])), len(x)}
	}
	if err := w.enter(id, path, depth); err != nil {
		return nil, err
	}
	defer w.leave()
	var out []any
	if w.copy {
		out = make([]any, len(x))
	}
	for i, e := range x {
		c, err := w.walk(e, IndexPath(path, i), depth+1)
		if err != nil {
			return nil, err
		}
		if w.copy {
			out[i] = c
		}
	}
	return out, nil
}

func (w *walker) mapObject(x map[string]any, path string, depth int) (any, error) {
	if err := w.enter(identity{reflect.ValueOf(x).Pointer(), -1}, path, depth); err != nil {
		return nil, err
	}
	defer w.leave()
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	// Member names that are not valid UTF-8 fail; among valid names the visiting order is the
	// RFC 8785 order (UTF-16 code units). Invalid names sort by bytes so the order is stable.
	slices.SortFunc(keys, func(a, b string) int {
		if utf8.ValidString(a) && utf8.ValidString(b) {
			return CompareUTF16(a, b)
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	var out *Object
	if w.copy {
		out = NewObject(len(keys))
	}
	for _, k := range keys {
		if !utf8.ValidString(k) {
			return nil, newError(path, SuffixInvalidUTF8)
		}
		c, err := w.walk(x[k], MemberPath(path, k), depth+1)
		if err != nil {
			return nil, err
		}
		if w.copy {
			out.appendMember(k, c)
		}
	}
	if !w.copy {
		return nil, nil
	}
	return out, nil
}

func (w *walker) object(x *Object, path string, depth int) (any, error) {
	// The members' backing array identifies the object, so an Object passed by value and a
	// *Object sharing its members are the same container for the cycle check.
	var id identity
	if len(x.members) > 0 {
		id = identity{uintptr(unsafe.Pointer(&x.members[0])), -2}
	}
	if err := w.enter(id, path, depth); err != nil {
		return nil, err
	}
	defer w.leave()
	var out *Object
	if w.copy {
		out = NewObject(len(x.members))
	}
	for _, m := range x.members {
		if !utf8.ValidString(m.Name) {
			return nil, newError(path, SuffixInvalidUTF8)
		}
		c, err := w.walk(m.Value, MemberPath(path, m.Name), depth+1)
		if err != nil {
			return nil, err
		}
		if w.copy {
			if out.lookup(m.Name) >= 0 {
				// An Object built through Set cannot hold duplicates; guard anyway.
				return nil, newError(path, " contains duplicate member name "+Quote(m.Name)+".")
			}
			out.appendMember(m.Name, c)
		}
	}
	if !w.copy {
		return nil, nil
	}
	return out, nil
}

// kind applies the reflect-kind rules of §3.5 to values of other Go types.
func (w *walker) kind(v any, path string) (any, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.String:
		s := rv.String()
		if !utf8.ValidString(s) {
			return nil, newError(path, SuffixInvalidUTF8)
		}
		return s, nil
	case reflect.Float64:
		f := rv.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, newError(path, SuffixNotFinite)
		}
		return f, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := rv.Int()
		if n > MaxSafeInteger || n < -MaxSafeInteger {
			return nil, newError(path, SuffixUnsafeInteger)
		}
		return float64(n), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n := rv.Uint()
		if n > MaxSafeInteger {
			return nil, newError(path, SuffixUnsafeInteger)
		}
		return float64(n), nil
	case reflect.Float32, reflect.Complex64, reflect.Complex128, reflect.Chan, reflect.Func,
		reflect.Uintptr, reflect.UnsafePointer:
		return nil, newError(path, SuffixNotSerializable)
	}
	return nil, newError(path, SuffixNotPlain)
}

// checkNumberText parses a json.Number or a Number with the JSON number grammar.
func checkNumberText(s, path string) (any, error) {
	d := Decoder{data: []byte(s), label: path}
	if len(s) == 0 || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return nil, newError(path, SuffixNotSerializable)
	}
	v, err := d.ReadFloat()
	if err != nil {
		if e, ok := err.(*JSONValidationError); ok && e.Message == path+SuffixNotFinite {
			return nil, err
		}
		return nil, newError(path, SuffixNotSerializable)
	}
	if d.pos != len(s) {
		return nil, newError(path, SuffixNotSerializable)
	}
	return v, nil
}
