// Package leanctx implements the lean-ctx-protocol 0.4.0 core contracts for events,
// observations, assignments and evidence gaps (spec: hive.md §7): evidence references with
// retained extensions, experiment assignments, evidence gaps, money (a lossless i128 coefficient
// with a scale, never a float), policy classification, savings observations and receipts, and
// usage breakdowns.
//
// The wire shapes follow the target's serde derives: PascalCase enum values with no Unknown
// fallback (an unknown string is a decode error; MeasurementMethod is snake_case), unknown
// members ignored except by the strict SavingsReceiptV1 and ContextBalanceV1 and retained by
// EvidenceRefV1. Some value checks run during decoding (typed ids, schema_version, milliunits,
// extensions, Int128); a failing one is a *hive.DecodeError wrapping the *hive.ValidationError,
// whose Error() is the message unchanged. Decoding is strict JSON (package hive/wire: the
// jsonvalue rules, numbers kept exactly as written); encoding writes the compact E3 form.
//
// Only the types with a listed Validate in §7 have one: EvidenceRefV1, ContextBalanceV1 and
// SavingsReceiptV1.
package leanctx

import (
	"strconv"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/hive/wire"
)

// V1SchemaVersion is V1_SCHEMA_VERSION: the only supported `schema_version`.
const V1SchemaVersion uint32 = 1

func verr(msg string) error { return hive.NewValidationError(msg) }

func schemaVersionError(v uint64) error {
	return verr("unsupported schema_version " + strconv.FormatUint(v, 10) + "; expected 1")
}

// ValidateBoundedString is validate_bounded_string(value, field): the §1.2 identifier rule with
// field as the name.
func ValidateBoundedString(value, field string) error { return hive.ValidateID(value, field) }

// TaskId is a task identifier, checked while decoding with the §1.2 rule named `TaskId`
// (e.g. `TaskId must not be empty`).
type TaskId string

// Validate applies the §1.2 rule named `TaskId`.
func (id TaskId) Validate() error { return hive.ValidateID(string(id), "TaskId") }

// MarshalJSON writes the string.
func (id TaskId) MarshalJSON() ([]byte, error) { return wire.AppendString(nil, string(id)), nil }

// UnmarshalJSON reads a string and checks it (a failure is a decode error).
func (id *TaskId) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "TaskId", func(d *wire.Decoder) error {
		s, err := decodeTypedID(d, "TaskId")
		*id = TaskId(s)
		return err
	})
}

// ReceiptId is a receipt identifier, checked while decoding with the §1.2 rule named
// `ReceiptId`.
type ReceiptId string

// Validate applies the §1.2 rule named `ReceiptId`.
func (id ReceiptId) Validate() error { return hive.ValidateID(string(id), "ReceiptId") }

// MarshalJSON writes the string.
func (id ReceiptId) MarshalJSON() ([]byte, error) { return wire.AppendString(nil, string(id)), nil }

// UnmarshalJSON reads a string and checks it (a failure is a decode error).
func (id *ReceiptId) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "ReceiptId", func(d *wire.Decoder) error {
		s, err := decodeTypedID(d, "ReceiptId")
		*id = ReceiptId(s)
		return err
	})
}

func decodeTypedID(d *wire.Decoder, name string) (string, error) {
	s, err := d.String()
	if err != nil {
		return "", err
	}
	if err := hive.ValidateID(s, name); err != nil {
		return s, d.Wrap(err)
	}
	return s, nil
}

// Milliunit is a u16 in 0–1000 (thousandths). Decoding refuses other values with
// `milliunit must be between 0 and 1000`; Validate of the owning type reports
// `<field> must be between 0 and 1000`.
type Milliunit uint16

// MaxMilliunit is the largest milliunit.
const MaxMilliunit Milliunit = 1000

// MarshalJSON writes the number.
func (m Milliunit) MarshalJSON() ([]byte, error) { return strconv.AppendUint(nil, uint64(m), 10), nil }

// UnmarshalJSON reads a u16 and checks the range (a failure is a decode error).
func (m *Milliunit) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "Milliunit", func(d *wire.Decoder) error { return decodeMilliunit(d, m) })
}

func decodeMilliunit(d *wire.Decoder, dst *Milliunit) error {
	v, err := d.Uint(uint64(^uint16(0)))
	if err != nil {
		return err
	}
	if v > uint64(MaxMilliunit) {
		return d.Wrap(verr("milliunit must be between 0 and 1000"))
	}
	*dst = Milliunit(v)
	return nil
}

// ---- enum helpers (PascalCase, no fallback) ----

func decodeEnum[T ~string](d *wire.Decoder, known []string) (T, error) {
	b, err := d.StringBytes()
	if err != nil {
		return "", err
	}
	for _, k := range known {
		if string(b) == k {
			return T(k), nil
		}
	}
	return "", d.EnumFault(b, known)
}

func enumKnown[T ~string](v T, known []string) bool {
	for _, k := range known {
		if string(v) == k {
			return true
		}
	}
	return false
}

// appendEnum writes an enum member; a value outside the known set cannot be represented on the
// wire and fails the encoding.
func appendEnum[T ~string](e *wire.Encoder, name string, v T, typeName string, known []string) {
	if !enumKnown(v, known) {
		e.SetErr(verr(typeName + " " + wire.AppendQuoted(string(v)) + " is not a known value"))
	}
	e.Str(name, string(v))
}

func enumUnmarshal[T ~string](data []byte, label string, known []string, dst *T) error {
	return wire.DecodeDocument(data, label, func(d *wire.Decoder) error {
		v, err := decodeEnum[T](d, known)
		if err == nil {
			*dst = v
		}
		return err
	})
}

func enumMarshal[T ~string](v T, typeName string, known []string) ([]byte, error) {
	if !enumKnown(v, known) {
		return nil, verr(typeName + " " + wire.AppendQuoted(string(v)) + " is not a known value")
	}
	return wire.AppendString(nil, string(v)), nil
}

func decodeString(d *wire.Decoder, dst *string) error {
	s, err := d.String()
	*dst = s
	return err
}

func decodeU64(d *wire.Decoder, dst *uint64) error {
	v, err := d.Uint(^uint64(0))
	*dst = v
	return err
}

func decodeStringList(d *wire.Decoder, dst *[]string) error {
	*dst = []string{}
	return d.Array(func(i int) error {
		s, err := d.String()
		if err != nil {
			return err
		}
		*dst = append(*dst, s)
		return nil
	})
}

func appendStringList(e *wire.Encoder, name string, list []string) {
	e.Key(name)
	e.B = append(e.B, '[')
	for i, s := range list {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		e.B = wire.AppendString(e.B, s)
	}
	e.B = append(e.B, ']')
}
