package gen

import (
	"strings"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/jsonvalue"
)

// hiveContract renders schema/hive.schema.json and ts/hive.gen.ts from the declarative wire
// model of package hive (hive.WireSchema), which a test there checks against the codecs on the
// conformance corpus (conformance/hive).
var hiveContract = Contract{Name: "hive", Render: renderHive}

// hiveEnums are the model's plain enums, exported as readonly tuples beside their unions.
var hiveEnums = []string{
	"MessageType", "NetworkKind", "MessageTrust", "MessageReceiptState", "TaskEventKind",
	"BusFrameTag", "PresenceState", "BusPriority", "BusPrivacy", "ControlAction",
	"HiveErrorCode", "HiveUploadKind", "TaskState", "TaskActorKind",
}

// HiveSchema returns schema/hive.schema.json as a value: the header members, then
// hive.WireSchema.
func HiveSchema() *jsonvalue.Object {
	return SchemaDocument("hive", "BusFrameV1", hive.WireSchema())
}

// hiveConstants are the constants of hive.md exported to TypeScript under their spec names
// (project-defined ones under the upper snake case of their Go names).
func hiveConstants() []TSConst {
	return []TSConst{
		{Name: "MESSAGE_LIST_SCHEMA", Value: hive.MessageListSchema, Doc: "The `schema` of MessageListV1 (hive.md §2.1)."},
		{Name: "SEALED_MESSAGE_SCHEMA", Value: hive.SealedMessageSchema, Doc: "The `content_schema` of a sealed message body (hive.md §2.1)."},
		{Name: "MAX_MESSAGE_TEXT_CHARS", Value: int64(hive.MaxMessageTextChars), Doc: "The character limit of a message `text` (hive.md §2.1)."},
		{Name: "MAX_MESSAGE_REFERENCES", Value: int64(hive.MaxMessageReferences), Doc: "The limit of a body's `references` (hive.md §2.1)."},
		{Name: "MAX_MESSAGES_PAGE", Value: int64(hive.MaxMessagesPage), Doc: "The limit of MessageListV1 `messages` (hive.md §2.1)."},
		{Name: "MAX_QUESTION_DEADLINE_HOURS", Value: hive.MaxQuestionDeadlineHours, Doc: "How far ahead a question's `deadline` may lie (hive.md §2.1)."},
		{Name: "MAX_IDENTIFIER_LENGTH", Value: int64(hive.MaxIdentifierLength), Doc: "The byte limit of validate_id (hive.md §1.2)."},
		{Name: "MAX_SEALED_CIPHERTEXT_BYTES", Value: int64(hive.MaxSealedCiphertextBytes), Doc: "The decoded ciphertext limit of a sealed blob, tag included (hive.md §3.1)."},
		{Name: "MAX_BUS_FRAME_BYTES", Value: int64(hive.MaxBusFrameBytes), Doc: "The largest WebSocket frame; a larger one closes with 1009 (hive.md §4.1)."},
		{Name: "MAX_PUBLISH_BODY_BYTES", Value: int64(hive.MaxPublishBodyBytes), Doc: "The limit of a publish `body`, compact (hive.md §4.4)."},
		{Name: "MAX_BUS_LEASE_MS", Value: int64(hive.MaxBusLeaseMs), Doc: "The longest bus lease; a task claim is one (hive.md §6.4)."},
		{Name: "MAX_BUS_REPLAY", Value: int64(hive.MaxBusReplay), Doc: "The limit of a poll answer, a catch-up page and a hello cursor replay per channel (hive.md §4.1, §4.5)."},
		{Name: "BUS_POLL_SCHEMA", Value: hive.BusPollSchema, Doc: "The `schema` of BusPollV1 (hive.md §4.1)."},
		{Name: "BUS_EVENTS_SCHEMA", Value: hive.BusEventsSchema, Doc: "The `schema` of BusEventsV1 (hive.md §4.1)."},
	}
}

// upperSnake turns a PascalCase name into UPPER_SNAKE_CASE.
func upperSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' && !(s[i-1] >= 'A' && s[i-1] <= 'Z') {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// enumTuples names each enum definition and its tuple: MessageType → MESSAGE_TYPES.
func enumTuples(enums []string) map[string]TSName {
	names := map[string]TSName{}
	for _, e := range enums {
		tuple := upperSnake(e)
		switch {
		case strings.HasSuffix(tuple, "S"):
			tuple += "ES"
		case strings.HasSuffix(tuple, "Y") && !strings.HasSuffix(tuple, "EY"):
			tuple = tuple[:len(tuple)-1] + "IES"
		default:
			tuple += "S"
		}
		names[pointer("/$defs", e)] = TSName{Name: e, Tuple: tuple}
	}
	return names
}

func renderHive() ([]File, error) {
	return Files("hive", HiveSchema(), TSOptions{
		Doc: "The hive contracts of lean-ctx-protocol 0.4.0 (hive.md): messages, networks, sealed blobs, " +
			"bus frames, errors and tasks. Rendered from hive.WireSchema in package " +
			"github.com/agentwire/agentwire/hive; the JSON Schema is schema/hive.schema.json. Optional " +
			"members may be absent or null (null means absent); encoders omit them. Types named " +
			"…Unchecked are the decoded shapes of values carried without validation.",
		Constants: hiveConstants(),
		Names:     enumTuples(hiveEnums),
	})
}
