package gen

import (
	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// eventsContract renders schema/events.schema.json and ts/events.gen.ts from the declarative
// wire model of package events (events.WireSchema), which a test there checks against the
// validator on the conformance corpus.
var eventsContract = Contract{Name: "events", Render: renderEvents}

// eventsTuples exports the model's enumerations as readonly tuples beside their unions.
var eventsTuples = map[string]TSName{
	"/$defs/AgentEventType":     {Name: "AgentEventType", Tuple: "AGENT_EVENT_TYPES"},
	"/$defs/MessageRole":        {Name: "MessageRole", Tuple: "MESSAGE_ROLES"},
	"/$defs/ContentPartType":    {Name: "ContentPartType", Tuple: "CONTENT_PART_TYPES"},
	"/$defs/AgentInterruptKind": {Name: "AgentInterruptKind", Tuple: "AGENT_INTERRUPT_KINDS"},
	"/$defs/AgentRunStatus":     {Name: "AgentRunStatus", Tuple: "AGENT_RUN_STATUSES"},
}

// EventsSchema returns schema/events.schema.json as a value: the header members, then
// events.WireSchema.
func EventsSchema() *jsonvalue.Object {
	return SchemaDocument("events", "AgentEvent", events.WireSchema())
}

func renderEvents() ([]File, error) {
	return Files("events", EventsSchema(), TSOptions{
		Doc: "AgentDock run events, protocol version 1 (events.md): the event union, content parts, " +
			"records and the reducer state snapshot. Rendered from events.WireSchema in package " +
			"github.com/agentwire/agentwire/events; the JSON Schema is schema/events.schema.json.",
		Constants: []TSConst{
			{Name: "AGENT_EVENT_PROTOCOL_VERSION", Value: int64(events.ProtocolVersion), Doc: "The protocol version every event carries (events.md §4.1)."},
			{Name: "MAX_JSON_DEPTH", Value: int64(events.MaxJSONDepth), Doc: "Maximum container nesting depth (events.md §3.3)."},
		},
		Names: eventsTuples,
	})
}
