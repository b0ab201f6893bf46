// Package conformance holds agentwire's language-neutral conformance corpora and their Go
// runners.
//
// Each contract has a directory of JSON case files, conformance/<contract>/*.json, described by
// that directory's README.md. A case names the spec rule it pins ("spec": "§14.7"), the entry
// point it exercises ("op") and the exact verdict ("expect"): a valid result, possibly with its
// canonical form, fingerprint or full reducer snapshot, or the exact error message and error
// kind. Raw JSON texts are carried as JSON strings (or hex for bytes that are not UTF-8), so
// duplicate member names, member order and malformed escapes are all expressible, and any
// language with a JSON parser can replay the corpus against its own implementation.
//
// The Go runners are the tests of package conformance_test: conformance/events_test.go replays
// conformance/events/ (events.md, the AgentDock run-event protocol version 1) against package
// events. This package itself has no exported API; it exists so that the corpora and their
// runners live in one place that every contract package can be checked against.
package conformance
