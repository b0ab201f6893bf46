// Package mcp serves the twenty Dispatch tools of dispatch-tools.md over the Model Context
// Protocol, with the official Go SDK (github.com/modelcontextprotocol/go-sdk), so that any MCP
// host gets the tool surface with agentwire's refusals. `agentwire dispatch mcp` runs it over
// stdio or over the SDK's streamable HTTP transport ([Server.HTTPHandler]).
//
// # tools/list
//
// Each tool of [dispatch.Suite] is registered with its exact name, its description and, as
// its input schema, the JSON Schema 2020-12 that `agentwire tools schema NAME` prints (the same
// document, member order kept; the wire carries it compact). Annotations are attached only
// where a hint is true: `readOnlyHint` for the six tools that only read (doc_read, read,
// search, issues, open_asks, whoami) and `idempotentHint` for dispatch_request_approval, the
// one write the spec calls idempotent. The SDK lists tools sorted by name, and its annotation
// type always writes the two boolean hints, so a read tool's annotations also carry
// `idempotentHint:false`, which is the protocol's default meaning.
//
// # tools/call
//
// A call runs [client.Client.CallJSON] on the raw bytes of the JSON-RPC message's `arguments`
// member: the tools are registered with the SDK's low-level [sdk.Server.AddTool], which hands
// the handler `json.RawMessage` without decoding, validating against the input schema or
// re-encoding it (checked by this package's tests: duplicate member names, invalid UTF-8,
// unpaired surrogates, numbers beyond the double range and nesting beyond 128 levels arrive
// byte for byte). The strict JSON layer and the strict parse of §2.3 are therefore the only
// validation, and the model receives one refusal listing every problem. An absent
// `arguments` member is an absent payload (`{}`); `null` is refused as §2.3 says.
//
// Every outcome is a tool result, never a JSON-RPC error:
//
//   - success: the §8.9 text as one text content, and the result's details (a JSON object) as
//     `structuredContent`;
//   - a refusal (§4), including a text the strict JSON layer refuses, which is rendered as a
//     refusal whose one problem is that layer's message: `isError:true` with exactly that text;
//   - a disabled configuration (§8.1), a service, gateway or transport failure (§8.8) or a
//     failure of the executor's own: `isError:true` with the error's text.
//
// The SDK itself handles a few requests before any handler runs: a call of an unknown tool
// name is a JSON-RPC error, and a message its JSON decoder refuses as a whole never reaches
// the server: a text that is not JSON, or nesting deeper than the SDK's limit of 1000 levels
// for the whole message (arguments nested 998 levels or more). Over stdio (and the in-memory
// transport) the SDK then ends the session; over HTTP only that request fails. Arguments
// nested 129 to 997 levels reach the strict parser and are refused with its depth message.
//
// # Cancellation and deadlines
//
// The handler's context is the SDK's request context: an MCP `notifications/cancelled` for the
// call, or the end of the session (the client closed stdio or the HTTP session), cancels it, and
// with it the Dispatch request in flight. Each Dispatch request keeps the executor's own
// deadline ([dispatch.RequestDeadline], 60 s).
//
// # HTTP
//
// [Server.HTTPHandler] wraps the SDK's streamable HTTP handler with the relay's local-mode rules
// (relay.md §1), checked by package internal/localnet before the SDK sees the request: a
// `Host` that is not a loopback name is refused (403), a present `Origin` that is not a
// loopback origin is refused (403), and a POST body must be `application/json` in UTF-8 (415).
// Refusals carry the relay's error body `{"error":{"code":…,"message":…,"field":…}}` in its
// wording. With AllowRemote (for a
// server deliberately bound to another address) the Host rule is not applied; the Origin and
// media-type rules still are.
package mcp
