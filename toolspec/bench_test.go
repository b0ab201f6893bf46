package toolspec_test

import (
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
	ts "github.com/agentwire/agentwire/toolspec"
)

// Parse of the demo spec: a valid call (no allocation) and a call with problems at every level.
func BenchmarkParse(b *testing.B) {
	s := demoSpec(b)
	for _, c := range []struct{ name, text string }{
		{"valid", `{"name":"abcde","count":3,"ratio":0.5,"flag":true,"color":"red","tags":["a","b"],"inner":{"a":"x","b":0},"locked":{"x":false},"maybe":null,"list":[{"k":"v"}]}`},
		{"problems", `{"zz":1,"count":7.5,"name":"a","tags":["",3,"x"],"inner":{"b":-1},"locked":{"x":1,"y":2},"list":[{},{"k":1}],"color":"blue"}`},
	} {
		v, err := jsonvalue.Parse([]byte(c.text), "")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.Parse(v, ts.Strict)
			}
		})
	}
}

func BenchmarkUTF16Len(b *testing.B) {
	text := "A mostly ASCII sentence with an é, a € and one 😀 near the end of a line of text."
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		ts.UTF16Len(text)
	}
}
