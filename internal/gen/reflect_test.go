package gen

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
)

type rfKind string

type rfInner struct {
	ID   string   `json:"id" schema:"minLength=1,maxLength=8"`
	Tags []string `json:"tags,omitempty"`
}

type rfOuter struct {
	Name    string    `json:"name"`
	Kind    rfKind    `json:"kind,omitempty"`
	Count   *int64    `json:"count,omitempty"`
	Ratio   float64   `json:"ratio" schema:"minimum=0,maximum=1"`
	On      bool      `json:"on,omitzero"`
	Inner   *rfInner  `json:"inner,omitempty"`
	Items   []rfInner `json:"items" schema:"minItems=1"`
	Skipped string    `json:"-"`
	//lint:ignore U1000 an unexported field the generator must skip
	private string
	Kinds   []rfKind `json:"kinds,omitempty"`
	_       struct{} `json:"-"`
}

func TestSchemaFromGo(t *testing.T) {
	kind := reflect.TypeFor[rfKind]()
	s, names, err := SchemaFromGo(reflect.TypeFor[rfOuter](), GoTypes{
		Enums: map[reflect.Type][]string{kind: {"a", "b"}},
		Names: map[reflect.Type]TSName{kind: {Name: "Kind", Tuple: "KINDS"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	inner := `{"type":"object","required":["id"],"properties":{"id":{"type":"string","minLength":1,"maxLength":8},` +
		`"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`
	want := `{"type":"object","required":["name","ratio","items"],"properties":{` +
		`"name":{"type":"string"},"kind":{"type":"string","enum":["a","b"]},"count":{"type":"integer"},` +
		`"ratio":{"type":"number","minimum":0,"maximum":1},"on":{"type":"boolean"},"inner":` + inner + `,` +
		`"items":{"type":"array","minItems":1,"items":` + inner + `},` +
		`"kinds":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"additionalProperties":false}`
	if got := string(jsonvalue.AppendEncoded(nil, s)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	wantNames := map[string]TSName{
		"":                        {Name: "rfOuter"},
		"/properties/kind":        {Name: "Kind", Tuple: "KINDS"},
		"/properties/inner":       {Name: "rfInner"},
		"/properties/items/items": {Name: "rfInner"},
		"/properties/kinds/items": {Name: "Kind", Tuple: "KINDS"},
	}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("names %v, want %v", names, wantNames)
	}
}

func TestSchemaFromGoErrors(t *testing.T) {
	type noTag struct{ A string }
	type badKind struct {
		C chan int `json:"c"`
	}
	type badTag struct {
		A string `json:"a" schema:"pattern=x"`
	}
	type badValue struct {
		A string `json:"a" schema:"minLength"`
	}
	tests := []struct {
		rt   reflect.Type
		want string
	}{
		{reflect.TypeFor[string](), "the root must be a struct"},
		{reflect.TypeFor[noTag](), "no json tag"},
		{reflect.TypeFor[badKind](), "has no JSON Schema form"},
		{reflect.TypeFor[badTag](), "unknown keyword pattern"},
		{reflect.TypeFor[badValue](), "want key=number"},
	}
	for _, tt := range tests {
		_, _, err := SchemaFromGo(tt.rt, GoTypes{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.rt, err, tt.want)
		}
	}
}
