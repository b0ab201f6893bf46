// Package wire is the strict, serde-like JSON codec shared by the lean-ctx contract packages
// (hive and leanctx; spec: hive.md §0.2–§0.3).
//
// Decoding is one pass over the JSON text with jsonvalue's strict scanner ([jsonvalue.Decoder]:
// duplicate member names, invalid UTF-8, unpaired surrogate escapes, nesting deeper than 128 and
// numbers that overflow a double are refused with exactly jsonvalue's messages) combined with
// the typed rules D1–D9: objects only for structs, required members, null only for optional
// members, exact integers, case-sensitive enums. It keeps the lexical form of numbers, so a u64
// above 2^53 or an i128 coefficient never passes through float64 and `1.0` is not an integer.
//
// The first fault in document order is reported, as a streaming decoder would: a
// *[DecodeError] whose Error() is either jsonvalue's message (a strict-JSON fault, wrapped
// *jsonvalue.JSONValidationError), a value check's message unchanged (a wrapped
// *[ValidationError]), or a typed-decoding message of the form "<path> <problem>." rooted at
// the decoder's label (project-defined).
//
// Encoding appends compact UTF-8 JSON under rule E3: no HTML escaping, U+2028/U+2029, DEL and
// `/` raw, the short escapes for `"` `\` BS FF LF CR TAB and `\u00xx` (lowercase) for the other
// controls.
package wire

import "strings"

// ValidationError is a contract validation failure (hive.md §1.1): one plain message, no code,
// no path, no nesting. Error returns the message; errors.Is compares messages.
type ValidationError struct {
	// Message is the exact spec message.
	Message string
}

// NewValidationError returns a *ValidationError holding msg.
func NewValidationError(msg string) *ValidationError { return &ValidationError{Message: msg} }

// Error returns the message unchanged.
func (e *ValidationError) Error() string { return e.Message }

// Is reports whether target is a *ValidationError with the same message (hive.md §1.1:
// equality compares messages).
func (e *ValidationError) Is(target error) bool {
	t, ok := target.(*ValidationError)
	return ok && t != nil && e != nil && t.Message == e.Message
}

// DecodeError is a decoding failure (hive.md §0.1): the input was refused before Validate could
// run. Err, when set, is the wrapped cause (a *jsonvalue.JSONValidationError for a strict-JSON
// fault, a *ValidationError for a value check run during decoding) and Error returns its message
// unchanged; otherwise Error returns Message.
type DecodeError struct {
	// Path is the label-rooted path of the fault (`AgentMessageV1.body.text`).
	Path string
	// Field is Path without the label: the offending member's dotted path (hive.md §5.4), empty
	// for the document itself.
	Field string
	// Message is the typed-decoding message; empty when Err carries the message.
	Message string
	// Err is the wrapped cause, or nil.
	Err error
}

// Error returns the wrapped cause's message, or Message.
func (e *DecodeError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the wrapped cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// fieldOf strips the label (and the dot after it) from a rendered path.
func fieldOf(label, path string) string {
	f := strings.TrimPrefix(path, label)
	return strings.TrimPrefix(f, ".")
}
