// Package dispatch is agentwire's Dispatch tool suite (spec: dispatch-tools.md): the twenty
// model-facing tool specifications of §6 built with package toolspec, the shared constants of
// §1 (each list defined exactly once), the cross-field rules of §5, and the Dispatch API types
// of §9 with their exact JSON member names and nullability.
//
// The suite is the ordered registry [Suite]; [Lookup] finds a tool by its exact name. Each spec
// emits its JSON Schema 2020-12 (toolspec.Spec.Schema), parses a call in strict or lenient mode
// returning every problem at once (toolspec.Spec.Parse) and renders the refusal text a model
// receives (toolspec.Spec.Refusal). The executor of §8 always uses the strict parse; a host that
// validates calls itself uses the lenient parse, which applies the same cross-field rule.
//
// The executor's validation pass of §8.2 is [ValidateCall]: owner resolution with the
// reference grammar of §8.3 ([ParseRef], [RewriteWebRef], the LEGION_ISSUE fallback), the strict
// parse without owner restatements, and the argument checks of §8.4, in one problem list;
// [CheckConfig] is the configuration check of §8.1. It is pure: the host context is passed in
// and no request is sent (the HTTP client of §8.5–§8.9 is package dispatch/client).
//
// API types follow §9.1: decoding ignores unknown members and tolerates unknown strings in
// enumerated fields, `T|null` members are pointers (or [Opt] when the member may also be
// absent), write inputs with absent-versus-null semantics use [Opt], and arrays encode as `[]`
// when empty. They are encoded with github.com/go-json-experiment/json (member order = field
// order, no HTML escaping).
package dispatch
