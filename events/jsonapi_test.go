package events_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// TestJSONLayerNames covers the events.md §2 names of the JSON layer and §14 cases 31–38.
func TestJSONLayerNames(t *testing.T) {
	self := map[string]any{}
	self["self"] = self
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"31 NaN default label", func() error { _, err := events.CloneJSONValue(math.NaN(), ""); return err }, "value must contain only finite JSON numbers."},
		{"32 func", func() error { _, err := events.CloneJSONValue(map[string]any{"f": func() {}}, "value"); return err }, "value.f is not JSON-serializable."},
		{"32 chan", func() error {
			_, err := events.CloneJSONValue(map[string]any{"f": make(chan int)}, "value")
			return err
		}, "value.f is not JSON-serializable."},
		{"32 complex128", func() error { _, err := events.CloneJSONValue(map[string]any{"f": complex128(1)}, "value"); return err }, "value.f is not JSON-serializable."},
		{"33 time.Time", func() error {
			_, err := events.CloneJSONValue(map[string]any{"when": time.Time{}}, "value")
			return err
		}, "value.when must contain only JSON objects and arrays."},
		{"34 int64 2^53", func() error { _, err := events.CloneJSONValue(int64(1<<53), ""); return err }, "value is an integer outside the JSON safe integer range."},
		{"34 int64 2^53-1", func() error { _, err := events.CloneJSONValue(int64(1<<53-1), ""); return err }, ""},
		{"35 cycle", func() error { _, err := events.CloneJSONValue(self, ""); return err }, "value.self contains a circular reference."},
		{"36 CloneJSONObject array", func() error { _, err := events.CloneJSONObject([]any{}, ""); return err }, "object must be a JSON object."},
		{"36 CloneJSONObject nil map", func() error { _, err := events.CloneJSONObject(map[string]any(nil), ""); return err }, "object must be a JSON object."},
		{"37 CloneJSONSchema string", func() error { _, err := events.CloneJSONSchema("string", "tool schema"); return err }, "tool schema must be a JSON Schema object or boolean."},
		{"CloneJSONSchema default label", func() error { _, err := events.CloneJSONSchema(nil, ""); return err }, "schema must be a JSON Schema object or boolean."},
		{"AssertJSONValue", func() error { return events.AssertJSONValue([]any{1, float32(1)}, "") }, "value[1] is not JSON-serializable."},
		{"ParseJSON default label", func() error { _, err := events.ParseJSON([]byte(`[1,]`), ""); return err }, "value is not valid JSON text at byte offset 3."},
		{"ParseJSON label", func() error { _, err := events.ParseJSON([]byte(`{"a":[1e999]}`), "doc"); return err }, "doc.a[0] must contain only finite JSON numbers."},
		{"Canonicalize validates", func() error { _, err := events.Canonicalize(map[string]any{"x": math.Inf(1)}); return err }, "value.x must contain only finite JSON numbers."},
		{"Fingerprint validates", func() error { _, err := events.Fingerprint([]string{}); return err }, "value must contain only JSON objects and arrays."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			valCheckErr(t, tc.name, tc.run(), tc.want, kindJSON)
		})
	}

	// 35: a shared sub-map is accepted and copied twice.
	shared := map[string]any{"k": 1}
	c, err := events.CloneJSONValue(map[string]any{"a": shared, "b": shared}, "")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.(*events.Object).Get("a")
	b, _ := c.(*events.Object).Get("b")
	if a.(*events.Object) == b.(*events.Object) {
		t.Fatal("shared sub-map not copied twice")
	}
	// 37: a boolean schema is returned unchanged.
	if s, err := events.CloneJSONSchema(true, ""); err != nil || s != true {
		t.Fatalf("CloneJSONSchema(true) = %v, %v", s, err)
	}
	// 38: proto-like names are ordinary members, re-encoded identically.
	v, err := events.ParseJSON([]byte(`{"__proto__":1,"constructor":2}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if v.(*events.Object).Len() != 2 {
		t.Fatal("members lost")
	}
	if out, _ := jsonvalue.Marshal(v); string(out) != `{"__proto__":1,"constructor":2}` {
		t.Fatalf("re-encoded %s", out)
	}
	// IsJSONObject.
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{map[string]any{}, true}, {jsonvalue.NewObject(0), true}, {*jsonvalue.NewObject(0), true},
		{map[string]any(nil), false}, {(*events.Object)(nil), false}, {[]any{}, false}, {nil, false},
		{"x", false}, {valValuer{v: map[string]any{}}, true}, {valValuer{v: 1}, false},
	} {
		if got := events.IsJSONObject(tc.v); got != tc.want {
			t.Errorf("IsJSONObject(%#v) = %v", tc.v, got)
		}
	}
	// Canonicalize and Fingerprint on Go values.
	canon, err := events.Canonicalize(map[string]any{"b": json.Number("1.50"), "a": []any{math.Copysign(0, -1), 1e21, 1e-7}})
	if err != nil || string(canon) != `{"a":[0,1e+21,1e-7],"b":1.5}` {
		t.Fatalf("Canonicalize = %s, %v", canon, err)
	}
	fp, err := events.Fingerprint(map[string]any{})
	if err != nil || fp != "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a" {
		t.Fatalf("Fingerprint({}) = %s, %v", fp, err)
	}
}
