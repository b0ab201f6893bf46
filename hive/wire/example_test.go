package wire_test

import (
	"fmt"

	"github.com/agentwire/agentwire/hive/wire"
)

// A decoder reads one struct-shaped object: the first fault in document order is reported.
func ExampleDecoder() {
	var name string
	var seq uint64
	err := wire.DecodeDocument([]byte(`{"name":"a","seq":1.0}`), "Example", func(d *wire.Decoder) error {
		return d.Object(func(member []byte) error {
			switch string(member) {
			case "name":
				var err error
				name, err = d.String()
				return err
			case "seq":
				var err error
				seq, err = d.Uint(^uint64(0))
				return err
			}
			return d.Unknown()
		})
	})
	fmt.Println(name, seq, err)
	// Output: a 0 Example.seq must be an integer from 0 to 18446744073709551615.
}

// E3: no HTML escaping, controls as short or \u00xx escapes.
func ExampleAppendString() {
	fmt.Println(string(wire.AppendString(nil, "é<b>&\t\x01")))
	// Output: "é<b>&\t\u0001"
}
