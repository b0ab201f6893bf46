package jsonvalue

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unsafe"
)

type valuer struct {
	v   any
	err error
}

func (x valuer) JSONValue() (any, error) { return x.v, x.err }

type myBool bool
type myString string

func TestCloneValueFaults(t *testing.T) {
	self := map[string]any{}
	self["self"] = self
	arr := []any{nil}
	arr[0] = arr
	obj := NewObject(1)
	obj.Set("o", obj)
	deep := any(1.0)
	for i := 0; i < 129; i++ {
		deep = []any{deep}
	}
	var nilPtr *int
	tests := []struct {
		name  string
		v     any
		label string
		want  string
	}{
		{"NaN", math.NaN(), "", "value must contain only finite JSON numbers."},
		{"Inf in map", map[string]any{"x": math.Inf(-1)}, "", "value.x must contain only finite JSON numbers."},
		{"func", map[string]any{"f": func() {}}, "value", "value.f is not JSON-serializable."},
		{"chan", map[string]any{"f": make(chan int)}, "value", "value.f is not JSON-serializable."},
		{"complex", map[string]any{"f": complex128(1)}, "value", "value.f is not JSON-serializable."},
		{"float32", []any{float32(1)}, "", "value[0] is not JSON-serializable."},
		{"uintptr", uintptr(1), "", "value is not JSON-serializable."},
		{"unsafe pointer", unsafe.Pointer(nil), "", "value is not JSON-serializable."},
		{"time", map[string]any{"when": time.Time{}}, "value", "value.when must contain only JSON objects and arrays."},
		{"typed slice", []string{"a"}, "", "value must contain only JSON objects and arrays."},
		{"typed map", map[string]string{}, "", "value must contain only JSON objects and arrays."},
		{"nil pointer", nilPtr, "", "value must contain only JSON objects and arrays."},
		{"struct", struct{}{}, "", "value must contain only JSON objects and arrays."},
		{"array", [1]any{1}, "", "value must contain only JSON objects and arrays."},
		{"int64 2^53", int64(1 << 53), "", "value is an integer outside the JSON safe integer range."},
		{"negative int", -int64(1<<53) - 1, "", "value is an integer outside the JSON safe integer range."},
		{"uint64", uint64(1 << 60), "", "value is an integer outside the JSON safe integer range."},
		{"json.Number bad", json.Number("1.5.3"), "", "value is not JSON-serializable."},
		{"json.Number hex", json.Number("0x10"), "", "value is not JSON-serializable."},
		{"json.Number overflow", json.Number("1e999"), "", "value must contain only finite JSON numbers."},
		{"valuer error", valuer{err: errors.New("x")}, "", "value is not JSON-serializable."},
		{"valuer result checked", map[string]any{"v": valuer{v: []any{math.NaN()}}}, "", "value.v[0] must contain only finite JSON numbers."},
		{"invalid utf8 string", []any{"a\xff"}, "", "value[0] contains invalid UTF-8."},
		{"invalid utf8 named string", []any{myString("a\xff")}, "", "value[0] contains invalid UTF-8."},
		{"invalid utf8 name", map[string]any{"\xff": 1}, "", "value contains invalid UTF-8."},
		{"cycle map", self, "", "value.self contains a circular reference."},
		{"cycle slice", arr, "", "value[0] contains a circular reference."},
		{"cycle object", obj, "", "value.o contains a circular reference."},
		{"too deep", deep, "", "value" + strings.Repeat("[0]", 128) + " exceeds the maximum nesting depth of 128."},
		{"label", map[string]any{"b": 1, "a": func() {}}, "Tool input: weather", "Tool input: weather.a is not JSON-serializable."},
		{"map visiting order", map[string]any{"b": func() {}, "a": func() {}}, "", "value.a is not JSON-serializable."},
		{"object visiting order", ObjectOf("b", func() {}, "a", func() {}), "", "value.b is not JSON-serializable."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CloneValue(tc.v, tc.label)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("CloneValue: got %v, want %q", err, tc.want)
			}
			var je *JSONValidationError
			if !errors.As(err, &je) {
				t.Fatalf("%T is not *JSONValidationError", err)
			}
			if err2 := AssertValue(tc.v, tc.label); err2 == nil || err2.Error() != tc.want {
				t.Fatalf("AssertValue: got %v", err2)
			}
		})
	}
}

func TestCloneValueAccepts(t *testing.T) {
	shared := map[string]any{"k": 1}
	v := map[string]any{
		"a": shared, "b": shared, "n": nil, "s": []any(nil), "m": map[string]any(nil), "o": (*Object)(nil),
		"i": int64(1<<53 - 1), "u": uint8(7), "mb": myBool(true), "ms": myString("x"), "num": json.Number("-1.5e2"),
		"val": valuer{v: "from valuer"}, "neg0": math.Copysign(0, -1),
	}
	c, err := CloneValue(v, "")
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendEncoded(nil, c))
	want := `{"a":{"k":1},"b":{"k":1},"i":9007199254740991,"m":null,"mb":true,"ms":"x","n":null,"neg0":0,"num":-150,"o":null,"s":null,"u":7,"val":"from valuer"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	o := c.(*Object)
	a, _ := o.Get("a")
	b, _ := o.Get("b")
	if a.(*Object) == b.(*Object) {
		t.Fatal("shared sub-tree must be copied twice")
	}
	// Cloning a clone succeeds and is equal; the clone shares nothing with its input.
	c2, err := CloneValue(c, "")
	if err != nil || !Equal(c, c2) {
		t.Fatalf("clone of clone: %v", err)
	}
	in := []any{map[string]any{"x": []any{1.0}}}
	out, _ := CloneValue(in, "")
	in[0].(map[string]any)["x"].([]any)[0] = 2.0
	if got := string(AppendEncoded(nil, out)); got != `[{"x":[1]}]` {
		t.Fatalf("clone shares containers with its input: %s", got)
	}
}

func TestObjectSchemaHelpers(t *testing.T) {
	if _, err := CloneObject([]any{}, ""); err == nil || err.Error() != "object must be a JSON object." {
		t.Fatalf("CloneObject([]) = %v", err)
	}
	if _, err := CloneObject(map[string]any(nil), ""); err == nil || err.Error() != "object must be a JSON object." {
		t.Fatalf("CloneObject(nil map) = %v", err)
	}
	if _, err := CloneSchema("string", "tool schema"); err == nil || err.Error() != "tool schema must be a JSON Schema object or boolean." {
		t.Fatalf("CloneSchema(string) = %v", err)
	}
	if v, err := CloneSchema(true, ""); err != nil || v != true {
		t.Fatalf("CloneSchema(true) = %v, %v", v, err)
	}
	if !IsObject(valuer{v: map[string]any{}}) || IsObject([]any{}) || IsObject(nil) || IsObject((*Object)(nil)) {
		t.Fatal("IsObject")
	}
}

type selfValuer struct{}

func (selfValuer) JSONValue() (any, error) { return selfValuer{}, nil }

func TestValuerChains(t *testing.T) {
	if _, err := CloneValue([]any{selfValuer{}}, ""); err == nil || err.Error() != "value[0] is not JSON-serializable." {
		t.Fatalf("self-returning valuer: %v", err)
	}
	nested := valuer{v: valuer{v: map[string]any{"a": 1}}}
	if !IsObject(nested) {
		t.Fatal("IsObject must resolve valuer chains like CloneValue")
	}
	if _, err := CloneObject(nested, ""); err != nil {
		t.Fatal(err)
	}
	if IsObject(selfValuer{}) {
		t.Fatal("endless valuer is not an object")
	}
}

func TestObjectValueCycle(t *testing.T) {
	o := NewObject(1)
	o.Set("x", nil)
	o.Set("x", *o) // a value copy sharing o's members
	if _, err := CloneValue(o, ""); err == nil || err.Error() != "value.x contains a circular reference." {
		t.Fatalf("got %v", err)
	}
}
