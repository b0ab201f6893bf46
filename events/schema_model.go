package events

import (
	"github.com/agentwire/agentwire/internal/schemabuild"
	"github.com/agentwire/agentwire/jsonvalue"
)

// This file is the declarative description of the protocol-1 wire contract that the code
// generator (cmd/agentwire-gen, package internal/gen) renders as schema/events.schema.json and
// ts/events.gen.ts. Validated payloads hold raw objects, so reflection over the Go types cannot
// describe the wire shapes; this model does, in JSON Schema draft 2020-12, built from the same
// constants the validator uses (event types, roles, part types, interrupt kinds, usage keys,
// run statuses). schema_model_test.go replays the conformance corpus against it: every document
// the validator accepts is valid under the schema, and every refusal a schema can express is
// refused by it.
//
// What the schema cannot express, and the validator alone enforces: the strict JSON text rules
// of §3.4 (duplicate member names, invalid UTF-8, unpaired surrogates, depth, overflow), the
// reducer's ordering and identity rules (§8.3–§8.4), and in a reducer state the uniqueness of
// message and tool-call IDs within a list and the equality of `eventIds` with the keys of
// `eventFingerprints` (§8.6).

// eventDefNames maps each event type to its definition name in [WireSchema].
var eventDefNames = map[EventType]string{
	EventRunStarted: "RunStartedEvent", EventMessageStarted: "MessageStartedEvent",
	EventMessagePartDelta: "MessagePartDeltaEvent", EventMessageCompleted: "MessageCompletedEvent",
	EventToolCalled: "ToolCalledEvent", EventToolProgress: "ToolProgressEvent",
	EventToolCompleted: "ToolCompletedEvent", EventToolFailed: "ToolFailedEvent",
	EventInterruptRequired: "InterruptRequiredEvent", EventInterruptResolved: "InterruptResolvedEvent",
	EventUsageUpdated: "UsageUpdatedEvent", EventRunCompleted: "RunCompletedEvent",
	EventRunFailed: "RunFailedEvent", EventRunCancelled: "RunCancelledEvent",
}

// partDefNames maps each content part type to its definition name, in the order of events.md §6.
var partDefNames = [...]struct{ typ, def string }{
	{partText, "TextPart"}, {partReasoning, "ReasoningPart"}, {partImage, "ImagePart"},
	{partAudio, "AudioPart"}, {partVideo, "VideoPart"}, {partFile, "FilePart"},
	{partCitation, "CitationPart"}, {partToolCall, "ToolCallPart"},
	{partToolResult, "ToolResultPart"}, {partCustom, "CustomPart"},
}

// The enumerations the model lists, in the spec's order. They name the validator's own
// constants, so the schema's enums cannot drift from the rules.
var (
	modelRoles          = []Role{RoleUser, RoleAssistant, RoleTool}
	modelRunStatuses    = []RunStatus{StatusIdle, StatusRunning, StatusWaiting, StatusCompleted, StatusFailed, StatusCancelled}
	modelInterruptKinds = []string{InterruptKindToolApproval, InterruptKindCustom}
)

// fingerprintPattern is the shape of an event fingerprint (events.md §3.7, §8.6).
const fingerprintPattern = "^sha256:[0-9a-f]{64}$"

// WireSchema returns the JSON Schema (draft 2020-12) description of the protocol-1 wire
// contract: the root validates one event (a `oneOf` over the 14 event types, discriminated by a
// `type` `const`); `$defs` describe the envelope members (§4.2), every payload (§4.3, §5),
// content parts as a tagged union (§6), tool records (§7.1), interrupts (§7.2), usage (§7.3),
// limit info (§7.4) and the reducer state snapshot (§8.1, under `AgentReducerState`).
//
// Required members are `required`; optional ones may be absent but, where present, must hold a
// valid value (a present null is refused unless the member is "any JSON value", §5.1). Objects
// accept unknown members (§5.1) except `run.started` and the reducer state. The document has no
// `$schema`, `$id` or `title`: the generator adds them. Each call returns a fresh value.
func WireSchema() *Object {
	defs := jsonvalue.NewObject(48)

	variants := make([]any, len(EventTypes))
	for i, t := range EventTypes {
		variants[i] = ref(eventDefNames[t])
	}
	defs.Set("AgentEvent", schema("One protocol-1 agent event: the envelope members and the payload of its type, "+
		"discriminated by `type` (events.md §4).", "oneOf", variants))
	defs.Set("AgentEventType", schema("The `type` of an event: one of the 14 lifecycle event types (events.md §4.3).",
		"type", "string", "enum", stringsOf(EventTypes)))
	defs.Set("AgentEventEnvelope", object("The envelope members every event carries (events.md §4.2). All are required.",
		nil,
		req("protocolVersion", schema("The protocol version: the number 1.", "const", float64(ProtocolVersion))),
		req("eventId", schema("Identifies the event for duplicate detection; may be empty.", "type", "string")),
		req("runId", schema("The logical run.", "type", "string")),
		req("sessionId", schema("The conversation session.", "type", "string")),
		req("phaseId", schema("One delivered stream; a resumed run continues in a new phase.", "type", "string")),
		req("timestamp", schema("Event time; RFC 3339 UTC with milliseconds by convention, format not validated.", "type", "string")),
		req("logicalSequence", safeInt("Strictly increasing across the whole run.")),
		req("sequence", safeInt("Strictly increasing within one phase; may restart in a new phase.")),
		req("type", ref("AgentEventType")),
	))

	content := func(d string) *Object { return schema(d, "type", "array", "items", ref("ContentPart")) }
	limit := opt("limit", ref("AgentLimitInfo"))
	events := []struct {
		t       EventType
		doc     string
		members []member
	}{
		{EventRunStarted, "Starts the run, or resumes it from `waiting` (events.md §8.4). No member besides the envelope is allowed.", nil},
		{EventMessageStarted, "Starts (or restarts) a message with empty content.", []member{
			req("messageId", str()), req("role", ref("MessageRole"))}},
		{EventMessagePartDelta, "Appends one content part to a started or completed message.", []member{
			req("messageId", str()), req("part", ref("ContentPart"))}},
		{EventMessageCompleted, "Completes a message, replacing any delta-built content.", []member{
			req("messageId", str()), req("role", ref("MessageRole")), req("content", content("The message's final content."))}},
		{EventToolCalled, "A tool call.", []member{req("toolCall", ref("ToolCallRecord"))}},
		{EventToolProgress, "Progress of a known tool call; the latest progress replaces earlier progress.", []member{
			req("toolCallId", str()), req("content", content("Progress content."))}},
		{EventToolCompleted, "The result of a known tool call.", []member{req("result", ref("ToolResultRecord"))}},
		{EventToolFailed, "The failure of a known tool call.", []member{req("error", ref("ToolErrorRecord"))}},
		{EventInterruptRequired, "Suspends the run on an interrupt; the run becomes `waiting`.", []member{
			req("interrupt", ref("AgentInterrupt"))}},
		{EventInterruptResolved, "Resolves the pending interrupt; the run becomes `running`.", []member{
			req("interruptId", str()),
			req("decisions", schema("Opaque decisions; for tool approval conventionally {approvalId, approved, reason?}.",
				"type", "array", "items", true))}},
		{EventUsageUpdated, "Replaces the run's usage wholesale.", []member{req("usage", ref("AgentUsage"))}},
		{EventRunCompleted, "Completes the run (terminal).", []member{
			req("finishReason", schema("Free-form; conventionally stop, limit, error or cancelled.", "type", "string")),
			req("content", content("The run's final content (not stored by the reducer).")),
			opt("usage", ref("AgentUsage")), limit}},
		{EventRunFailed, "Fails the run (terminal).", []member{
			req("code", schema("Free-form error code, e.g. agent_execution_failed.", "type", "string")),
			req("message", str()), limit}},
		{EventRunCancelled, "Cancels the run (terminal).", []member{opt("reason", str()), limit}},
	}
	for _, e := range events {
		members := append([]member{req("type", schema("", "const", string(e.t)))}, e.members...)
		o := object("The `"+string(e.t)+"` event. "+e.doc, []string{"AgentEventEnvelope"}, members...)
		if e.t == EventRunStarted {
			o.Set("unevaluatedProperties", false)
		}
		defs.Set(eventDefNames[e.t], o)
	}

	defs.Set("MessageRole", schema("A message role (events.md §4.3).", "type", "string", "enum", stringsOf(modelRoles)))

	parts := make([]any, len(partDefNames))
	for i, p := range partDefNames {
		parts[i] = ref(p.def)
	}
	defs.Set("ContentPart", schema("A content part, discriminated by `type` (events.md §6).", "oneOf", parts))
	partTypes := make([]any, len(partDefNames))
	for i, p := range partDefNames {
		partTypes[i] = p.typ
	}
	defs.Set("ContentPartType", schema("The `type` of a content part.", "type", "string", "enum", partTypes))
	part := func(typ, doc string, members ...member) *Object {
		return object(doc, nil, append([]member{req("type", schema("", "const", typ))}, members...)...)
	}
	media := func(typ, doc string, extra ...member) *Object {
		members := []member{
			opt("url", schema("The media's URL.", "type", "string")),
			opt("data", schema("Base64 data (encoding not checked).", "type", "string")),
			opt("fileId", schema("A file reference.", "type", "string")),
			opt("mimeType", str()),
		}
		o := part(typ, doc+" Exactly one media source among url, data and fileId is present.", append(members, extra...)...)
		o.Set("oneOf", []any{
			jsonvalue.ObjectOf("required", []any{"url"}),
			jsonvalue.ObjectOf("required", []any{"data"}),
			jsonvalue.ObjectOf("required", []any{"fileId"}),
		})
		return o
	}
	defs.Set("TextPart", part(partText, "Text.", req("text", str())))
	defs.Set("ReasoningPart", part(partReasoning, "Model reasoning text.", req("text", str())))
	defs.Set("ImagePart", media(partImage, "An image."))
	defs.Set("AudioPart", media(partAudio, "Audio."))
	defs.Set("VideoPart", media(partVideo, "Video."))
	defs.Set("FilePart", media(partFile, "A file.", opt("name", str())))
	defs.Set("CitationPart", part(partCitation, "A citation.", req("url", str()), opt("title", str())))
	defs.Set("ToolCallPart", part(partToolCall, "A tool call inside a message.", req("toolCall", ref("ToolCallRecord"))))
	defs.Set("ToolResultPart", part(partToolResult, "A tool result inside a message.", req("result", ref("ToolResultRecord"))))
	defs.Set("CustomPart", part(partCustom, "An application-defined part.", req("name", str()),
		req("data", schema("Any JSON value, null included."))))

	defs.Set("ToolCallRecord", object("A tool call record (events.md §7.1).", nil,
		req("toolCallId", str()), req("name", str()),
		req("input", schema("The tool input: a JSON object.", "type", "object"))))
	defs.Set("ToolResultRecord", object("A tool result record: the call members, then the output (events.md §7.1).",
		[]string{"ToolCallRecord"},
		req("output", schema("The tool output: any JSON value, null included.")),
		opt("isError", schema("", "type", "boolean"))))
	defs.Set("ToolErrorRecord", object("A tool error record: the call members, then the error (events.md §7.1).",
		[]string{"ToolCallRecord"},
		req("error", str()),
		opt("code", schema("Conventionally tool_input_invalid, tool_execution_failed, tool_timeout or authorization_denied.", "type", "string"))))

	defs.Set("AgentInterrupt", object("An interrupt suspending the run (events.md §7.2).", nil,
		req("kind", ref("AgentInterruptKind")),
		req("interruptId", schema("May be empty.", "type", "string")),
		req("prompt", str()),
		req("actions", schema("", "type", "array", "items", ref("AgentInterruptAction"))),
		opt("payload", schema("Any JSON value, null included."))))
	defs.Set("AgentInterruptKind", schema("The kind of an interrupt.", "type", "string", "enum", stringsOf(modelInterruptKinds)))
	defs.Set("AgentInterruptAction", object("One action of an interrupt; for tool approval: id = approval ID, name = tool name, input = tool input.", nil,
		req("id", str()), req("name", str()),
		req("input", schema("Any JSON value, null included."))))

	usage := make([]member, 0, len(usageNumberKeys)+2)
	for _, k := range usageNumberKeys {
		usage = append(usage, opt(k.name, nonNegative("")))
	}
	usage = append(usage, opt("model", str()), opt("provider", str()))
	defs.Set("AgentUsage", object("Usage metadata; every member optional, {} is valid (events.md §7.3).", nil, usage...))
	defs.Set("AgentLimitInfo", object("The limit a run hit (events.md §7.4).", nil,
		req("kind", schema("Conventionally steps, tokens or model_calls.", "type", "string")),
		opt("limit", nonNegative("")), opt("used", nonNegative(""))))

	defs.Set("AgentRunStatus", schema("The reducer's run status; completed, failed and cancelled are terminal (events.md §8.1).",
		"type", "string", "enum", stringsOf(modelRunStatuses)))
	nullable := func(d, name string) *Object {
		return schema(d, "anyOf", []any{ref(name), jsonvalue.ObjectOf("type", "null")})
	}
	optStr := func(d string) *Object { return schema(d, "type", []any{"string", "null"}) }
	list := func(d, name string) *Object { return schema(d, "type", "array", "items", ref(name)) }
	state := object("The reducer state snapshot (events.md §8.1): exactly these 21 members, always present, in this order.", nil,
		req("protocolVersion", schema("1 once an event is applied, else null.", "type", []any{"integer", "null"},
			"minimum", 0.0, "maximum", float64(jsonvalue.MaxSafeInteger))),
		req("runId", optStr("")), req("sessionId", optStr("")),
		req("status", ref("AgentRunStatus")),
		req("messages", list("Messages in first-seen order.", "AgentStateMessage")),
		req("toolCalls", list("", "ToolCallRecord")),
		req("toolProgress", list("", "AgentStateToolProgress")),
		req("toolResults", list("", "ToolResultRecord")),
		req("toolErrors", list("", "ToolErrorRecord")),
		req("interrupt", nullable("The pending interrupt.", "AgentInterrupt")),
		req("interruptResolution", nullable("The last interrupt resolution.", "AgentInterruptResolution")),
		req("usage", nullable("", "AgentUsage")),
		req("limit", nullable("", "AgentLimitInfo")),
		req("finishReason", optStr("")), req("errorCode", optStr("")), req("cancellationReason", optStr("")),
		req("lastSequence", schema("", "type", "number")),
		req("lastLogicalSequence", schema("", "type", "number")),
		req("lastPhaseId", optStr("")),
		req("eventIds", schema("Every applied event ID, in order.", "type", "array", "items", str(), "uniqueItems", true)),
		req("eventFingerprints", schema("Event ID → sha256 fingerprint of the event's canonical form (events.md §3.7).",
			"type", "object", "additionalProperties", schema("", "type", "string", "pattern", fingerprintPattern))),
	)
	state.Set("additionalProperties", false)
	defs.Set("AgentReducerState", state)
	closed := func(o *Object) *Object { o.Set("additionalProperties", false); return o }
	defs.Set("AgentStateMessage", closed(object("A message of the reducer state.", nil,
		req("messageId", str()), req("role", ref("MessageRole")),
		req("content", schema("", "type", "array", "items", ref("ContentPart"))))))
	defs.Set("AgentStateToolProgress", closed(object("The latest progress of one tool call.", nil,
		req("toolCallId", str()), req("content", schema("", "type", "array", "items", ref("ContentPart"))))))
	defs.Set("AgentInterruptResolution", closed(object("How the last interrupt was resolved.", nil,
		req("interruptId", str()), req("decisions", schema("", "type", "array", "items", true)))))

	return jsonvalue.ObjectOf(
		"description", "AgentDock run events, protocol version 1 (events.md): one event per document. "+
			"The reducer state snapshot is $defs/AgentReducerState.",
		"$ref", "#/$defs/AgentEvent",
		"$defs", defs,
	)
}

// member is one property of an object schema.
type member struct {
	name     string
	schema   *Object
	optional bool
}

func req(name string, s *Object) member { return member{name: name, schema: s} }
func opt(name string, s *Object) member { return member{name: name, schema: s, optional: true} }

// schema builds a schema object: `description` first (when not empty), then the pairs.
var schema = schemabuild.Schema

// object builds an open object schema: description, `allOf` of the extended definitions, type,
// required (in member order), properties.
func object(description string, extends []string, members ...member) *Object {
	o := schema(description)
	if len(extends) > 0 {
		all := make([]any, len(extends))
		for i, e := range extends {
			all[i] = ref(e)
		}
		o.Set("allOf", all)
	}
	o.Set("type", "object")
	required := []any{}
	props := jsonvalue.NewObject(len(members))
	for _, m := range members {
		if !m.optional {
			required = append(required, m.name)
		}
		props.Set(m.name, m.schema)
	}
	if len(required) > 0 {
		o.Set("required", required)
	}
	o.Set("properties", props)
	return o
}

func ref(name string) *Object { return jsonvalue.ObjectOf("$ref", "#/$defs/"+name) }
func str() *Object            { return jsonvalue.ObjectOf("type", "string") }

func safeInt(description string) *Object {
	return schema(description, "type", "integer", "minimum", 0.0, "maximum", float64(jsonvalue.MaxSafeInteger))
}

func nonNegative(description string) *Object {
	return schema(description, "type", "number", "minimum", 0.0)
}

func stringsOf[T ~string](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
