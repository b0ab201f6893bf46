package events

import (
	"github.com/agentwire/agentwire/jsonvalue"
)

// JSONValuer is implemented by Go values that stand for a JSON value: the strict-JSON checks
// (events.md §3.5) check the value it returns in its place.
type JSONValuer = jsonvalue.JSONValuer

// ParseJSON parses strict JSON text (events.md §3.4) into a fresh value of the §3.1 value model:
// nil, bool, float64, string, []any and *[Object]. Faults are *[JSONValidationError]s whose
// paths start at label; an empty label means `value`.
func ParseJSON(data []byte, label string) (any, error) { return jsonvalue.Parse(data, label) }

// CloneJSONValue validates a Go value against the strict JSON rules of events.md §3.5
// (cloneJsonValue) and returns a deep copy that shares no container with v. An empty label
// means `value`.
func CloneJSONValue(v any, label string) (any, error) { return jsonvalue.CloneValue(v, label) }

// AssertJSONValue performs the checks of [CloneJSONValue] without building the copy.
func AssertJSONValue(v any, label string) error { return jsonvalue.AssertValue(v, label) }

// CloneJSONObject is [CloneJSONValue] for a value that must be a JSON object (events.md §3.6,
// cloneJsonObject): anything but a non-nil map[string]any or Object gives
// `<label> must be a JSON object.` An empty label means `object`.
func CloneJSONObject(v any, label string) (*Object, error) { return jsonvalue.CloneObject(v, label) }

// IsJSONObject reports whether v is a JSON object: a non-nil map[string]any or Object, after
// resolving a [JSONValuer] (events.md §3.6).
func IsJSONObject(v any) bool { return jsonvalue.IsObject(v) }

// CloneJSONSchema accepts a boolean schema (returned unchanged) or an object schema (validated
// and cloned as by [CloneJSONValue]); anything else gives
// `<label> must be a JSON Schema object or boolean.` (events.md §3.6). No keyword is inspected;
// see [ValidateToolParameters] for the model-boundary subset. An empty label means `schema`.
func CloneJSONSchema(v any, label string) (any, error) { return jsonvalue.CloneSchema(v, label) }

// Canonicalize validates v (events.md §3.5) and returns its RFC 8785 (JSON Canonicalization
// Scheme) serialisation (§3.7).
func Canonicalize(v any) ([]byte, error) { return jsonvalue.Canonicalize(v) }

// Fingerprint validates v and returns `sha256:` followed by the 64 lowercase hexadecimal digits
// of SHA-256 over its canonical form (events.md §3.7).
func Fingerprint(v any) (string, error) { return jsonvalue.Fingerprint(v) }
