package hive

import "github.com/agentwire/agentwire/hive/wire"

// enumDecode maps a wire string to a known value of a plain enum, or to unknown (hive.md §2.2:
// `#[serde(other)]`; "unknown" itself also maps to unknown). A non-string is a decode error
// (D7).
func enumDecode[T ~string](d *wire.Decoder, known []T, unknown T) (T, error) {
	b, err := d.StringBytes()
	if err != nil {
		return unknown, err
	}
	for _, k := range known {
		if string(b) == string(k) {
			return k, nil
		}
	}
	return unknown, nil
}

// enumWire returns the wire string of v: itself when known, else "unknown" (E4).
func enumWire[T ~string](v T, known []T) string {
	for _, k := range known {
		if v == k {
			return string(v)
		}
	}
	return "unknown"
}

func enumKnown[T ~string](v T, known []T) bool {
	for _, k := range known {
		if v == k {
			return true
		}
	}
	return false
}

// enumUnmarshal is UnmarshalJSON for a plain enum with fallback.
func enumUnmarshal[T ~string](data []byte, label string, known []T, unknown T, dst *T) error {
	return wire.DecodeDocument(data, label, func(d *wire.Decoder) error {
		v, err := enumDecode(d, known, unknown)
		*dst = v
		return err
	})
}

func enumMarshal[T ~string](v T, known []T) ([]byte, error) {
	return wire.AppendString(nil, enumWire(v, known)), nil
}

// checkRequired reports the first missing required member in declaration order (D2).
func checkRequired(d *wire.Decoder, seen, required uint64, names []string) error {
	return d.CheckRequired(seen, required, names)
}

// decodeString reads a required string member into dst.
func decodeString(d *wire.Decoder, dst *string) error {
	s, err := d.String()
	*dst = s
	return err
}

// document decodes one top-level value with a fresh decoder labelled label.
func document(data []byte, label string, fn func(d *wire.Decoder) error) error {
	return wire.DecodeDocument(data, label, fn)
}

// marshalWith encodes one object with members written by fn.
func marshalWith(size int, fn func(e *wire.Encoder)) ([]byte, error) {
	return wire.MarshalObject(size, fn)
}
