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

// A typed decoder reads tokens with Parse's checks and messages, keeping the exact text of a
// number that a float64 would round.
func ExampleDecoder() {
	var d jsonvalue.Decoder
	d.Reset([]byte(`{"id":"a","seq":9007199254740993,"seq":1}`), "Frame")
	read := func() error {
		if err := d.BeginDocument(); err != nil {
			return err
		}
		if err := d.BeginObject(); err != nil {
			return err
		}
		for {
			name, ok, err := d.NextMember()
			if err != nil || !ok {
				return err
			}
			switch d.PeekKind() {
			case jsonvalue.KindNumber:
				tok, err := d.ReadNumber()
				if err != nil {
					return err
				}
				fmt.Printf("%s at %s = %s\n", name, d.Path(), tok)
			default:
				if err := d.Skip(); err != nil {
					return err
				}
			}
		}
	}
	fmt.Println(read())
	// Output:
	// seq at Frame.seq = 9007199254740993
	// Frame contains duplicate member name "seq".
}

// ParseKeepNumbers keeps number literals, so `1.0` can be told from `1`.
func ExampleParseKeepNumbers() {
	v, _ := jsonvalue.ParseKeepNumbers([]byte(`{"issued_at":1.0}`), "envelope")
	n, _ := v.(*jsonvalue.Object).Get("issued_at")
	fmt.Printf("%T %s\n", n, n)
	// Output: jsonvalue.Number 1.0
}
