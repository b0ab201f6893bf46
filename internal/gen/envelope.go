package gen

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/jsonvalue"
)

// envelopeContract renders schema/envelope.schema.json (exactly the layout of envelope.md §6.2)
// and ts/envelope.gen.ts (§6.3) from the Go declarations of package envelope.
var envelopeContract = Contract{Name: "envelope", Render: renderEnvelope}

// envelopeDocs are the TypeScript doc comments of the envelope members (envelope.md §1.2,
// §1.3). They are prose only: every constraint comes from the Go declarations (§6.1), and
// TestEnvelopeDocsComplete keeps this table in step with the schema's properties.
var envelopeDocs = map[string]string{
	"":                                         "The Envoy event envelope (envelope.md §1.2): one JSON object, keys in canonical order, no version field. Times are integer milliseconds since the Unix epoch.",
	"/properties/event_id":                     "Unique id of this envelope; minted ids are 32 lowercase hex characters, new per send.",
	"/properties/source":                       "The system the event came from.",
	"/properties/source_event_id":              "The originating system's event or delivery id.",
	"/properties/source_session":               "Session that sent it; omitted rather than empty.",
	"/properties/topic":                        "NATS subject the envelope is published on.",
	"/properties/dedupe_key":                   "Identity of the underlying event across topics and re-sends (envelope.md §4).",
	"/properties/issued_at":                    "Issue time, milliseconds since the Unix epoch; not 0.",
	"/properties/expires_at":                   "Time after which the envelope is stale, milliseconds since the Unix epoch.",
	"/properties/payload_summary":              "Short human-readable summary.",
	"/properties/payload_ref":                  "Pointer to an external payload, e.g. nats://payloads/evt-1.",
	"/properties/payload":                      "Full machine body: a string (usually JSON text), never an embedded object.",
	"/properties/trace_id":                     "Correlation id.",
	"/properties/sender":                       "Who sent it.",
	"/properties/in_reply_to":                  "event_id this envelope answers.",
	"/properties/supersedes":                   "event_id this envelope replaces.",
	"/properties/urgency":                      "Sender-declared urgency.",
	"/properties/expects_reply":                "Whether the sender waits for an answer.",
	"/properties/sender/properties/session_id": "The sending session.",
	"/properties/sender/properties/machine":    "The sender's host.",
	"/properties/sender/properties/cwd":        "The sender's working directory.",
	"/properties/sender/properties/title":      "The sender's display title.",
	"/properties/sender/properties/roles":      "Roles the sender holds.",
}

// envelopeTypes returns what reflection needs besides the struct tags: the ordered enum slices
// and the TypeScript names of envelope.md §6.3 (from envelope.TypeScriptEnums, matched to the Go
// enum types by their values).
func envelopeTypes() (GoTypes, error) {
	enums := map[reflect.Type][]string{
		reflect.TypeFor[envelope.Source]():       strs(envelope.Sources),
		reflect.TypeFor[envelope.Urgency]():      strs(envelope.Urgencies),
		reflect.TypeFor[envelope.ExpectsReply](): strs(envelope.ExpectsReplies),
	}
	names := map[reflect.Type]TSName{}
	for rt, vals := range enums {
		i := slices.IndexFunc(envelope.TypeScriptEnums(), func(e envelope.TSEnum) bool { return slices.Equal(e.Values, vals) })
		if i < 0 {
			return GoTypes{}, fmt.Errorf("no TypeScript enum has the values of %v", rt)
		}
		e := envelope.TypeScriptEnums()[i]
		names[rt] = TSName{Name: e.Union, Tuple: e.Tuple}
	}
	return GoTypes{Enums: enums, Names: names}, nil
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// EnvelopeSchema returns schema/envelope.schema.json as a value: envelope.md §6.2, derived from
// the Go types by [SchemaFromGo], with the TypeScript names of its struct and enum types.
func EnvelopeSchema() (*jsonvalue.Object, map[string]TSName, error) {
	types, err := envelopeTypes()
	if err != nil {
		return nil, nil, err
	}
	body, names, err := SchemaFromGo(reflect.TypeFor[envelope.Envelope](), types)
	if err != nil {
		return nil, nil, err
	}
	return SchemaDocument("envelope", "Envelope", body), names, nil
}

func renderEnvelope() ([]File, error) {
	doc, names, err := EnvelopeSchema()
	if err != nil {
		return nil, err
	}
	var consts []TSConst
	for _, c := range envelope.TypeScriptConstants() {
		consts = append(consts, TSConst{Name: c.Name, Value: c.Value, Doc: c.Doc})
	}
	return Files("envelope", doc, TSOptions{
		Doc: "The Envoy envelope, its subjects and dedupe constants (envelope.md). Rendered from the Go " +
			"declarations of package github.com/agentwire/agentwire/envelope; the JSON Schema is " +
			"schema/envelope.schema.json.",
		Constants: consts,
		Names:     names,
		Docs:      envelopeDocs,
	})
}
