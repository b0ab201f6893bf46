package jsonvalue_test

import (
	"fmt"

	"github.com/agentwire/agentwire/jsonvalue"
)

func ExampleParse() {
	v, err := jsonvalue.Parse([]byte(`{"b":1.0,"a":null}`), "")
	if err != nil {
		panic(err)
	}
	o := v.(*jsonvalue.Object)
	a, present := o.Get("a")
	_, missing := o.Get("c")
	fmt.Println(o.Keys(), a, present, missing)

	_, err = jsonvalue.Parse([]byte(`{"eventId":"a","eventId":"b"}`), "Agent event")
	fmt.Println(err)
	// Output:
	// [b a] <nil> true false
	// Agent event contains duplicate member name "eventId".
}

func ExampleCanonicalize() {
	v, _ := jsonvalue.Parse([]byte(`{"z":1e21,"a":[100.0,-0,1e-7]}`), "")
	c, _ := jsonvalue.Canonicalize(v)
	fp, _ := jsonvalue.Fingerprint(v)
	fmt.Println(string(c))
	fmt.Println(fp[:7], len(fp))
	// Output:
	// {"a":[100,0,1e-7],"z":1e+21}
	// sha256: 71
}
