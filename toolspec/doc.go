// Package toolspec is agentwire's tool-spec framework (spec: dispatch-tools.md §2–§4).
//
// A [Spec] is an immutable value: a tool name, a model-facing description, an ordered argument
// shape built from the builder primitives of §2.2 ([String], [Number], [Int], [Boolean], [Enum],
// [Unknown], [Array], [Object], [RefineObject] and the [Node.Optional], [Node.Nullable] and
// [Node.Describe] modifiers), an optional cross-field [Validation], a strict flag and an example
// call. From that one value the package derives everything a host needs:
//
//   - [Spec.Schema]: the JSON Schema 2020-12 of the parameters (§2.4), deterministic, with the
//     member order the spec fixes inside every node;
//   - [Spec.Parse]: the strict or lenient parse of a call (§2.3) that never stops at the first
//     fault: it returns the normalized argument object or every [Problem], in the spec's order,
//     each rendered in the exact problem-line formats of §3;
//   - [Spec.Refusal] and [ToolInputError]: the refusal text of §4 (`<tool> was not called: …`,
//     the problem lines, `- Allowed keys: …` and `- Example: <tool>(<compact JSON>)`).
//
// # Values
//
// Arguments are values of the [jsonvalue] model (nil, bool, float64, string, []any and
// *jsonvalue.Object), as produced by [jsonvalue.Parse]: strict JSON, member order kept, absent
// members told apart from present nulls. [Spec.ParseJSON] parses the text itself; [Spec.ParseGo]
// first validates an arbitrary Go value with [jsonvalue.CloneValue].
//
// String lengths are counted in UTF-16 code units (§0): a character outside the Basic
// Multilingual Plane counts 2. Numbers are IEEE-754 doubles and are rendered in the ECMAScript
// shortest round-trip form.
//
// # Problems as data
//
// Problems follow the style of k8s.io/apimachinery's field.ErrorList: each [Problem] carries its
// [ProblemType], the dotted path of the value it concerns and its exact message line. A parse
// of a valid call allocates nothing beyond what normalization needs (nothing at all when no
// unknown key is dropped).
package toolspec
