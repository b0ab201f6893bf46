package dispatch

import (
	"bytes"

	"github.com/go-json-experiment/json"
)

type optState uint8

const (
	optAbsent optState = iota
	optNull
	optValue
)

// Opt is a tri-state wire member (dispatch-tools.md §9.1): absent, present as JSON null, or
// present with a value. Its zero value is absent; with the `omitzero` tag option an absent Opt
// is left out of the encoding, a null one is encoded as `null`. It models `name?: T|null`
// members and the write inputs whose absent and null differ (UpdateIssueInput, §8.7).
type Opt[T any] struct {
	state optState
	value T
}

// Some returns a present Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{state: optValue, value: v} }

// Null returns a present Opt holding JSON null.
func Null[T any]() Opt[T] { return Opt[T]{state: optNull} }

// IsZero reports whether the member is absent (the `omitzero` hook).
func (o Opt[T]) IsZero() bool { return o.state == optAbsent }

// Present reports whether the member is present (null included).
func (o Opt[T]) Present() bool { return o.state != optAbsent }

// IsNull reports whether the member is present and null.
func (o Opt[T]) IsNull() bool { return o.state == optNull }

// Get returns the value and whether one is present (false for absent and for null).
func (o Opt[T]) Get() (T, bool) { return o.value, o.state == optValue }

// MarshalJSON encodes null or the value. An absent Opt also encodes as null; tag the field
// `omitzero` to leave it out.
func (o Opt[T]) MarshalJSON() ([]byte, error) {
	if o.state != optValue {
		return []byte("null"), nil
	}
	return json.Marshal(o.value)
}

// UnmarshalJSON decodes null as a present null and anything else as a value.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		var zero T
		*o = Opt[T]{state: optNull, value: zero}
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Opt[T]{state: optValue, value: v}
	return nil
}
