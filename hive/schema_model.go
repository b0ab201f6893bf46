package hive

import (
	"github.com/agentwire/agentwire/internal/schemabuild"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
)

// This file is the declarative description of the hive wire contract that the code generator
// (cmd/agentwire-gen, package internal/gen) renders as schema/hive.schema.json and
// ts/hive.gen.ts. The codecs are hand-written (no struct tags), so reflection cannot describe
// the wire shapes; this model does, in JSON Schema draft 2020-12, built from the same constants
// the codecs use (enum value lists, frame tags, limits, schema strings). schema_model_test.go
// replays the conformance corpus (conformance/hive) against it through hive/registry: every
// document the validators accept is valid under the schema, every refusal the schema can
// express is refused by it, and the refusals it cannot express are listed there by case name.
//
// The model binds what decoding and Validate accept, no more and no less where JSON Schema (in
// the keyword subset the TypeScript renderer understands, see package internal/gen) can say it:
//
//   - Required members are `required`; optional members may be absent or null (D3: null means
//     absent); defaulted lists (`references`, `roles`) may be absent but not null.
//   - Strict types (§0.4) have `additionalProperties: false`; lenient ones accept any member.
//   - Plain enums with an Unknown fallback (§2.2) are `enum` definitions of the known values in
//     spec order; where Validate refuses Unknown the member references the enum, elsewhere it is
//     `enum | string` (any string decodes).
//   - Tagged enums are `oneOf` unions discriminated by a `const` tag. SenderV1's fallback
//     variant (any other `kind`) and the frames a client ignores are matched by a pattern that
//     accepts every string except the known tags.
//   - Validate's per-member rules are constraints: validate_id is [IdentifierPattern] with
//     `maxLength` 256, validate_text a pattern and a character `maxLength`, channels, base64,
//     `content_schema` and UtcTimestamp (syntax and calendar) exact patterns, counts
//     `minItems`/`maxItems`, numbers `minimum`/`maximum`.
//   - Types whose Validate depends on the network (AgentMessageV1, MessageDeliveryV1) are
//     unions of an org and a swarm variant, discriminated by `network.kind`.
//   - Where a value is carried without being validated (a delivery's body and sealed blob, a
//     stored message's network, a task event's `by`, a presence_update profile, the frames of a
//     poll or catch-up answer) the schema uses an `…Unchecked` definition: the decoded shape
//     only.
//
// What the schema cannot express, and the codecs alone enforce (the test lists each corpus
// case): the strict JSON text rules (duplicate names, invalid UTF-8, lone surrogates, depth,
// number overflow), integer spelling (D6: JSON Schema's integer is a value, so `1.0`, `1e2` and
// `-0` pass), the u64 upper bound (see [WireSchema]), byte-length limits (validate_id's 256
// bytes is emitted as 256 characters, a publish `body`'s 65536 compact bytes not at all), the
// remaining cross-member rules (to_instance needs `to`, an answer needs `reply_to`, only
// questions carry a deadline, exactly one of body and sealed, a private publish names `to`,
// distinct hello agent ids), and the hello `cursors` keys and count (propertyNames and
// maxProperties are outside the renderer's keyword subset).

// IdentifierPattern is the validate_id rule (hive.md §1.2) as a JSON Schema pattern, valid in
// ECMA-262 and RE2: no Cc control character (U+0000–U+001F, U+007F–U+009F) and at least one
// character that is neither Unicode White_Space (what strings.TrimSpace trims) nor a control.
// The 256-byte bound is a separate `maxLength` of 256 characters, which bytes cannot be.
const IdentifierPattern = `^[^\x00-\x1f\x7f-\x9f]*` + nonBlankClass + `[^\x00-\x1f\x7f-\x9f]*$`

// nonBlankClass matches one character that is neither White_Space nor Cc: ASCII controls and
// space, U+007F–U+00A0 (DEL, C1, NEL, NBSP) and the other White_Space characters, written
// literally because ECMA-262 and RE2 share no escape for them.
const nonBlankClass = "[^\\x00-\\x20\\x7f-\\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"

// textControls are the characters validate_text refuses: Cc other than TAB, LF and CR.
const textControls = `\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f`

// textPattern and requiredTextPattern are validate_text (hive.md §1.3) without and with
// `required`; the character limit is a separate `maxLength` (JSON Schema counts code points,
// as validate_text counts scalar values).
const (
	textPattern         = `^[^` + textControls + `]*$`
	requiredTextPattern = `^[^` + textControls + `]*` + nonBlankClass + `[^` + textControls + `]*$`
)

// UtcTimestampPattern is the UtcTimestamp rule (hive.md §1.5) as a JSON Schema pattern: the
// 20-byte `YYYY-MM-DDTHH:MM:SSZ` syntax and the calendar (year not 0000, the month's days,
// February 29 only in Gregorian leap years, hours to 23, minutes and seconds to 59).
const UtcTimestampPattern = `^(?:` +
	`(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-` +
	`(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)` +
	`|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)-02-29` +
	`)T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z$`

// channelPattern is validate_channel (hive.md §1.6): `org:<org>/vault:<vault_id>/<name>`. It
// implies validate_id (ASCII, at most 172 bytes, never blank).
const channelPattern = `^org:[a-z0-9][a-z0-9_-]{0,63}/vault:[0-9a-f]{32}/[a-z0-9][a-z0-9._-]{0,63}$`

// base64Pattern is strict standard padded base64 (hive.md §1.8): groups of four, the last one
// padded, and the pad bits zero.
const base64Pattern = `^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$`

// maxU64Text is the u64 upper bound, stated in descriptions (see [WireSchema]).
const maxU64Text = "18446744073709551615"

// WireSchema returns the JSON Schema (draft 2020-12) description of the hive contracts
// (hive.md §1–§6). The root validates one bus frame as `agentwire hive validate --type
// bus-frame` decodes it (by its tag: client→service and two-way frames strictly, as the
// service does; service→client frames leniently, as a client does) and then validates it;
// `$defs/<Type>` validates a document of each contract type as `--type` does (decode, then
// Validate when the type has one), and `$defs/BusFrameToService` and `$defs/BusFrameToClient`
// validate a frame as that receiving side does.
//
// u64 members are `integer` with `minimum` 0; their upper bound 18446744073709551615 is stated
// in the description, not as `maximum`: the generator's JSON model (package jsonvalue) holds
// numbers as IEEE doubles, which cannot spell it. The document has no `$schema`, `$id` or
// `title`: the generator adds them. Each call returns a fresh value.
func WireSchema() *jsonvalue.Object {
	defs := jsonvalue.NewObject(128)
	primitiveDefs(defs)
	messageDefs(defs)
	sealedDefs(defs)
	busDefs(defs)
	errorDefs(defs)
	taskDefs(defs)
	return jsonvalue.ObjectOf(
		"description", "The hive contracts of lean-ctx-protocol 0.4.0 (hive.md): messages, networks, "+
			"sealed blobs, bus frames, errors and tasks. The root validates one bus frame as "+
			"`agentwire hive validate --type bus-frame` does: client→service and two-way frames "+
			"strictly and validated as the service receives them, service→client frames leniently "+
			"as a client does. $defs/<Type> validates a document of each contract type (decoded, "+
			"then validated when the type has a Validate).",
		"$ref", "#/$defs/BusFrameV1",
		"$defs", defs,
	)
}

// ---------------------------------------------------------------------------------------------
// §1 shared primitives.

func primitiveDefs(defs *jsonvalue.Object) {
	defs.Set("Identifier", schema("An opaque identifier passing validate_id (hive.md §1.2): not blank "+
		"(Unicode White_Space only), at most 256 bytes of UTF-8, no control character. The schema "+
		"bounds it at 256 characters; the byte limit is the validator's.",
		"type", "string", "minLength", 1.0, "maxLength", float64(MaxIdentifierLength), "pattern", IdentifierPattern))
	defs.Set("Channel", schema("A channel `org:<org>/vault:<vault_id>/<name>` passing validate_channel "+
		"(hive.md §1.6): org 1-64 of a-z, 0-9, _ and -; vault_id 32 lowercase hex; name 1-64 of "+
		"a-z, 0-9, ., _ and -; org and name start with a letter or digit.",
		"type", "string", "pattern", channelPattern))
	defs.Set("UtcTimestamp", schema("A UtcTimestamp (hive.md §1.5): exactly `YYYY-MM-DDTHH:MM:SSZ`, a "+
		"valid Gregorian date (year 0001-9999, February 29 only in leap years) and time (no leap "+
		"second). Checked while decoding.",
		"type", "string", "minLength", 20.0, "maxLength", 20.0, "pattern", UtcTimestampPattern))
	defs.Set("Uint64", schema("An unsigned 64-bit integer (Rust u64, Go uint64): a JSON number without "+
		"sign, fraction or exponent, 0 to "+maxU64Text+" (D6). Values beyond 2^53 lose precision "+
		"as a JavaScript number; parse them losslessly.",
		"type", "integer", "minimum", 0.0))
}

// ---------------------------------------------------------------------------------------------
// §2 messages.

// fallbackNote is the description suffix of a plain enum with an Unknown fallback (§2.2).
const fallbackNote = " Any other string decodes as Unknown (\"unknown\" included) and encodes as " +
	"\"unknown\" (E4); where the member is validated, Unknown is refused."

func messageDefs(defs *jsonvalue.Object) {
	defs.Set("MessageType", enumSchema("What a message is (hive.md §2.2): question (may carry a deadline), "+
		"offer, handoff (announces a handoff; the binding one is handoff.offer), answer (needs "+
		"reply_to), finding."+fallbackNote, messageTypes))
	defs.Set("NetworkKind", enumSchema("The kind of a network (hive.md §2.2): the `kind` of NetworkV1 and "+
		"the `network` query parameter."+fallbackNote, networkKinds))
	defs.Set("MessageTrust", enumSchema("Whose data a delivered message is (hive.md §2.2): team (the same "+
		"organization) or untrusted (anything else; always in a swarm)."+fallbackNote, messageTrusts))
	defs.Set("MessageReceiptState", enumSchema("How far a recipient got with a message (hive.md §2.2): "+
		"delivered, read."+fallbackNote, receiptStates))
	defs.Set("TaskEventKind", enumSchema("What happened to a task (hive.md §2.2, §6.2)."+fallbackNote, taskEventKinds))

	// §2.3 NetworkV1.
	defs.Set("NetworkV1", schema("Where a message lives, tagged by `kind` (hive.md §2.3): an org channel "+
		"or a swarm. Strict, no fallback: any other kind, a missing kind and a member of the other "+
		"variant are decode errors. Validated.", "oneOf", refs("NetworkOrg", "NetworkSwarm")))
	defs.Set("NetworkOrg", object("An organization's channel; the channel is the network.", strict,
		req("kind", constant("org")), req("channel", ref("Channel", "The channel (validate_channel)."))))
	defs.Set("NetworkSwarm", object("A swarm.", strict,
		req("kind", constant("swarm")), req("swarm_id", ref("Identifier", "The swarm (validate_id)."))))
	defs.Set("NetworkV1Unchecked", schema("A NetworkV1 as a record carries it without validating it "+
		"(MessageStoredV1): the decoded shape only.", "oneOf", []any{
		object("", strict, req("kind", constant("org")), req("channel", str(""))),
		object("", strict, req("kind", constant("swarm")), req("swarm_id", str(""))),
	}))

	// §2.4 MessageReferenceV1.
	refDefs := []struct{ def, tag, doc string }{
		{"ReferenceTask", "task", "A task of the channel's vault (org networks only)."},
		{"ReferenceFact", "fact", "A fact."},
		{"ReferenceProposal", "proposal", "A proposal."},
		{"ReferenceCommit", "commit", "A commit: 7-64 lowercase hex digits."},
		{"ReferenceHandoff", "handoff", "A handoff."},
	}
	defs.Set("MessageReferenceV1", schema("What a message points at, tagged by `kind` (hive.md §2.4). "+
		"Strict, no fallback. Validated: numbers start at 1, commit ids are 7-64 lowercase hex, "+
		"ids pass validate_id.", "oneOf", refs("ReferenceTask", "ReferenceFact", "ReferenceProposal",
		"ReferenceCommit", "ReferenceHandoff")))
	number := schema("From 1 (u64).", "type", "integer", "minimum", 1.0)
	defs.Set("ReferenceTask", object(refDefs[0].doc, strict, req("kind", constant("task")), req("number", number)))
	defs.Set("ReferenceFact", object(refDefs[1].doc, strict, req("kind", constant("fact")),
		req("id", ref("Identifier", "validate_id as `reference id`."))))
	defs.Set("ReferenceProposal", object(refDefs[2].doc, strict, req("kind", constant("proposal")), req("number", number)))
	defs.Set("ReferenceCommit", object(refDefs[3].doc, strict, req("kind", constant("commit")),
		req("id", schema("7-64 characters of 0-9 and a-f.", "type", "string", "pattern", "^[0-9a-f]{7,64}$"))))
	defs.Set("ReferenceHandoff", object(refDefs[4].doc, strict, req("kind", constant("handoff")),
		req("handoff_id", ref("Identifier", ""))))
	defs.Set("SwarmMessageReference", schema("A reference a swarm message may carry: any but a task "+
		"(`Swarm messages do not reference org tasks`, hive.md §2.5).", "oneOf",
		refs("ReferenceFact", "ReferenceProposal", "ReferenceCommit", "ReferenceHandoff")))
	unchecked := make([]any, len(refDefs))
	for i, r := range refDefs {
		m := req("id", str(""))
		switch r.tag {
		case "task", "proposal":
			m = req("number", ref("Uint64", ""))
		case "handoff":
			m = req("handoff_id", str(""))
		}
		unchecked[i] = object("", strict, req("kind", constant(r.tag)), m)
	}
	defs.Set("MessageReferenceV1Unchecked", schema("A MessageReferenceV1 as a delivery carries it "+
		"without validating it: the decoded shape only.", "oneOf", unchecked))

	// §2.5 MessageBodyV1.
	text := func() *jsonvalue.Object {
		return schema("validate_text(text, 4000, \"text\", required): not blank, at most 4000 "+
			"characters, no control character but TAB, LF and CR.",
			"type", "string", "maxLength", float64(MaxMessageTextChars), "pattern", requiredTextPattern)
	}
	refList := func(item string) *jsonvalue.Object {
		return schema("Defaulted (absent decodes as empty, null is refused) and omitted when empty; at "+
			"most 16.", "type", "array", "maxItems", float64(MaxMessageReferences), "items", ref(item, ""))
	}
	defs.Set("MessageBodyV1", object("A message body in the clear (hive.md §2.5), validated as on an org "+
		"network (a sealed plaintext, a standalone body, an org message). Strict.", strict,
		req("text", text()), dflt("references", refList("MessageReferenceV1"))))
	defs.Set("MessageBodySwarm", object("A message body validated as on a swarm network: no task "+
		"references. Strict.", strict,
		req("text", text()), dflt("references", refList("SwarmMessageReference"))))
	defs.Set("MessageBodyV1Unchecked", object("A MessageBodyV1 as a delivery carries it: decoded, not "+
		"validated (a client runs body.Validate(network.kind()) before handing it to an agent, "+
		"hive.md §2.8). Strict.", strict,
		req("text", str("")),
		dflt("references", schema("Defaulted and omitted when empty.", "type", "array",
			"items", ref("MessageReferenceV1Unchecked", "")))))

	// §2.6 AgentMessageV1.
	agentMessage := func(network string) []member {
		org := network == "org"
		ms := []member{
			req("client_msg_id", ref("Identifier", "Client-chosen (a ULID by convention); a resend is a no-op (§8 S9).")),
			req("network", ref(map[bool]string{true: "NetworkOrg", false: "NetworkSwarm"}[org], "")),
			req("type", ref("MessageType", "Required (absent is a decode error); Unknown is refused.")),
			req("from", ref("Identifier", "The sending agent (bus agent id).")),
			opt("to", ref("Identifier", "One recipient; absent means everyone on the channel or swarm.")),
		}
		if org {
			ms = append(ms, opt("to_instance", ref("Identifier",
				"The instance running `to` (as presence_update shows it); only with `to`.")))
		} else {
			ms = append(ms, opt("to_instance", schema("Org networks only: absent (or null) on a swarm.", "type", "null")))
		}
		ms = append(ms,
			opt("reply_to", ref("Identifier", "The gid answered or replied to; an answer needs it.")),
			opt("deadline", ref("UtcTimestamp", "Questions only: when an unanswered question becomes a task proposal.")))
		if org {
			ms = append(ms,
				opt("body", ref("MessageBodyV1", "The body in the clear; exactly one of body and sealed.")),
				opt("sealed", ref("SealedMessageBlob", "The sealed body (hive.md §3); exactly one of body and sealed.")))
		} else {
			ms = append(ms,
				opt("body", ref("MessageBodySwarm", "The body in the clear: required on a swarm.")),
				opt("sealed", schema("Swarm messages are public to the swarm's workers: absent (or null).", "type", "null")))
		}
		return ms
	}
	defs.Set("AgentMessageV1", schema("A message an agent sends (`message`, client→service; hive.md §2.6), "+
		"validated: an org or a swarm message, by `network.kind`. Strict.", "oneOf",
		refs("AgentMessageOrg", "AgentMessageSwarm")))
	defs.Set("AgentMessageOrg", object("An AgentMessageV1 on an org network.", strict, agentMessage("org")...))
	defs.Set("AgentMessageSwarm", object("An AgentMessageV1 on a swarm: no to_instance, no sealed body, "+
		"no task references.", strict, agentMessage("swarm")...))

	// §2.7 SenderV1.
	defs.Set("SenderV1", schema("The sender of a delivered message, tagged by `kind` (hive.md §2.7). "+
		"Lenient, with a fallback: any other kind decodes as Unknown (its members ignored) and "+
		"encodes as {\"kind\":\"unknown\"}. Not validated by itself.", "oneOf",
		refs("SenderAgent", "SenderPerson", "SenderSwarm", "SenderUnknown")))
	defs.Set("SenderAgent", object("An agent of the organization; agent, instance_label and owner are "+
		"self-reported.", lenient,
		req("kind", constant("agent")),
		req("agent", str("The agent (bus agent id), chosen by the sender.")),
		req("instance_label", str("Chosen by the sender.")),
		opt("instance_id", str("Set by the service; use it as to_instance to answer exactly that engine.")),
		opt("owner", str("Chosen by the sender.")),
		opt("model", str("")),
		req("mine", schema("True iff the sending and receiving instances have the same owner.", "type", "boolean")),
		opt("profile_id", str("The agent's profile."))))
	defs.Set("SenderPerson", object("A person answering on the web.", lenient,
		req("kind", constant("person")), req("label", str(""))))
	defs.Set("SenderSwarm", object("A swarm participant, shown only by profile handle and swarm-scope "+
		"reputation.", lenient,
		req("kind", constant("swarm")), req("handle", str("")),
		req("reputation", ref("Uint64", "The participant's ReputationV1.score."))))
	senderKinds := []string{"agent", "person", "swarm"}
	defs.Set("SenderUnknown", object("Any other kind: decodes as Unknown, members ignored.", lenient,
		req("kind", schema("Any string but "+quotedList(senderKinds)+".", "type", "string",
			"pattern", PatternNoneOf(senderKinds)))))

	// §2.8 MessageDeliveryV1.
	delivery := func(network string) []member {
		org := network == "org"
		ms := []member{
			req("gid", ref("Identifier", "The global message id: opaque, never parsed or sorted by.")),
			req("seq", ref("Uint64", "Position on the channel (org) or swarm, gap-free (not validated: 0 passes).")),
		}
		if org {
			ms = append(ms, req("network", ref("NetworkOrg", "")),
				req("type", knownOrAny("MessageType", "Not validated: Unknown passes.")),
				req("from", schema("An org sender: an agent, a person, or an Unknown kind (`org messages have org senders`).",
					"oneOf", refs("SenderAgent", "SenderPerson", "SenderUnknown"))))
		} else {
			ms = append(ms, req("network", ref("NetworkSwarm", "")),
				req("type", knownOrAny("MessageType", "Not validated: Unknown passes.")),
				req("from", ref("SenderSwarm", "Swarm senders appear only as a handle.")))
		}
		ms = append(ms,
			opt("to", str("Not validated.")),
			req("thread_id", ref("Identifier", "gid of the thread's first message (its own gid if first).")),
			opt("reply_to", str("Not validated.")),
			opt("deadline", ref("UtcTimestamp", "The effective deadline, service default included (§8 S12); on any type.")),
			opt("body", ref("MessageBodyV1Unchecked", "Exactly one of body and sealed; its content is not validated here.")),
			opt("sealed", ref("SealedBlobV1Unchecked", "Exactly one of body and sealed; not validated here.")))
		if org {
			ms = append(ms, req("trust", knownOrAny("MessageTrust", "Not validated on org (the service sends team).")))
		} else {
			ms = append(ms, req("trust", schema("Swarm content is always untrusted.", "const", string(MessageTrustUntrusted))))
		}
		return append(ms,
			req("server_time", ref("UtcTimestamp", "")),
			req("expires_at", ref("UtcTimestamp", "When the message goes (§8 S11).")))
	}
	defs.Set("MessageDeliveryV1", schema("A delivered message (`message.deliver`, service→client; hive.md "+
		"§2.8), validated: an org or a swarm delivery, by `network.kind`. Lenient.", "oneOf",
		refs("MessageDeliveryOrg", "MessageDeliverySwarm")))
	defs.Set("MessageDeliveryOrg", object("A MessageDeliveryV1 on an org network.", lenient, delivery("org")...))
	defs.Set("MessageDeliverySwarm", object("A MessageDeliveryV1 on a swarm: trust untrusted, the sender a "+
		"swarm handle.", lenient, delivery("swarm")...))
	defs.Set("MessageDeliveryV1Unchecked", object("A MessageDeliveryV1 as a poll or catch-up answer carries "+
		"it: decoded, not validated (a client validates it before showing it). Lenient.", lenient,
		req("gid", str("")), req("seq", ref("Uint64", "")), req("network", ref("NetworkV1Unchecked", "")),
		req("type", knownOrAny("MessageType", "")), req("from", ref("SenderV1", "")),
		opt("to", str("")), req("thread_id", str("")), opt("reply_to", str("")),
		opt("deadline", ref("UtcTimestamp", "")), opt("body", ref("MessageBodyV1Unchecked", "")),
		opt("sealed", ref("SealedBlobV1Unchecked", "")), req("trust", knownOrAny("MessageTrust", "")),
		req("server_time", ref("UtcTimestamp", "")), req("expires_at", ref("UtcTimestamp", ""))))

	// §2.9–§2.11.
	defs.Set("MessageReceiptV1", object("A recipient's receipt (`message.receipt`, client→service; hive.md "+
		"§2.9), validated. Strict.", strict, receiptMembers()...))
	defs.Set("MessageStoredV1", object("The message was stored (`message.stored`, service→sender; hive.md "+
		"§2.10). Lenient, no Validate.", lenient, storedMembers()...))
	defs.Set("MessageStatusV1", object("A recipient's receipt relayed to the sender (`message.status`; "+
		"hive.md §2.10). Lenient, no Validate.", lenient, statusMembers()...))
	defs.Set("TaskEventV1", object("A task change (`task.event`, on the task's vault channel; hive.md "+
		"§2.10). Lenient, no Validate.", lenient, taskEventMembers()...))
	defs.Set("MessageListV1", object("One page of message history (GET /v1/messages; hive.md §2.11), "+
		"validated. Lenient.", lenient,
		req("schema", schema("require_schema: exactly "+MessageListSchema+".", "const", MessageListSchema)),
		req("messages", schema("At most 200, ascending seq; each validated.", "type", "array",
			"maxItems", float64(MaxMessagesPage), "items", ref("MessageDeliveryV1", ""))),
		opt("next", str("Pass it as after_gid for the next page; absent at the end."))))
}

func receiptMembers() []member {
	return []member{
		req("gid", ref("Identifier", "")),
		req("by", ref("Identifier", "The receiving agent.")),
		req("state", ref("MessageReceiptState", "Unknown is refused (`unknown receipt state`).")),
	}
}

func storedMembers() []member {
	return []member{
		req("client_msg_id", str("")), req("gid", str("")), req("thread_id", str("")),
		req("network", ref("NetworkV1Unchecked", "")),
		req("seq", ref("Uint64", "Position on the channel or swarm.")),
		req("server_time", ref("UtcTimestamp", "")), req("expires_at", ref("UtcTimestamp", "")),
	}
}

func statusMembers() []member {
	return []member{
		req("gid", str("")), req("client_msg_id", str("")),
		req("by", str("The recipient: agent id on org, handle on swarm.")),
		req("state", knownOrAny("MessageReceiptState", "")),
		req("server_time", ref("UtcTimestamp", "")),
	}
}

func taskEventMembers() []member {
	return []member{
		req("channel", str("The task's vault channel (not validated).")),
		req("seq", ref("Uint64", "")),
		req("number", ref("Uint64", "The task number in the vault.")),
		req("event", knownOrAny("TaskEventKind", "")),
		req("state", knownOrAny("TaskState", "The task state after the event; clients trust it over event.")),
		opt("by", ref("TaskActorV1Unchecked", "Who acted; absent means the service itself. Not validated here.")),
		req("server_time", ref("UtcTimestamp", "")),
	}
}

// ---------------------------------------------------------------------------------------------
// §3 sealed blobs.

func sealedDefs(defs *jsonvalue.Object) {
	sealed := func(doc string, checked bool) *jsonvalue.Object {
		if !checked {
			return object(doc, strict,
				req("content_schema", str("")), req("epoch", ref("Uint64", "")),
				req("nonce", str("")), req("ciphertext", str("")))
		}
		maxChars := (MaxSealedCiphertextBytes + 2) / 3 * 4
		return object(doc, strict,
			req("content_schema", schema("What the plaintext is: leanctx.hive.<area>/v<n>.",
				"type", "string", "maxLength", float64(MaxIdentifierLength), "pattern", contentSchemaPattern.String())),
			req("epoch", schema("The key epoch, from 1 (u64).", "type", "integer", "minimum", 1.0)),
			req("nonce", schema("Standard padded base64 of exactly 24 bytes.", "type", "string",
				"pattern", "^[A-Za-z0-9+/]{32}$")),
			req("ciphertext", schema("Standard padded base64 of 16 to 1048576 bytes, the 16-byte tag "+
				"included. The schema bounds the text at "+strconv.Itoa(maxChars)+" characters, which "+
				"also admits 1048577 and 1048578 bytes.",
				"type", "string", "minLength", 24.0, "maxLength", float64(maxChars), "pattern", base64Pattern)))
	}
	defs.Set("SealedBlobV1", sealed("A body encrypted with the vault key of one epoch (hive.md §3.1), "+
		"validated. Strict.", true))
	o := schema("The sealed body of an org AgentMessageV1: a validated SealedBlobV1 whose content is a "+
		"message body (hive.md §3.2).", "allOf", refs("SealedBlobV1"), "type", "object",
		"required", []any{"content_schema"})
	o.Set("properties", jsonvalue.ObjectOf("content_schema", schema("`sealed content must be "+
		SealedMessageSchema+"`.", "const", SealedMessageSchema)))
	defs.Set("SealedMessageBlob", o)
	defs.Set("SealedBlobV1Unchecked", sealed("A SealedBlobV1 as a delivery carries it: decoded, not "+
		"validated. Strict.", false))
}

// ---------------------------------------------------------------------------------------------
// §4 the bus.

// frameDefNames maps each frame tag to its definition, in the order of hive.md §4.2.
var frameDefNames = map[string]string{
	TagHello: "FrameHello", TagPresence: "FramePresence", TagPublish: "FramePublish", TagAck: "FrameAck",
	TagPublished: "FramePublished", TagDeliver: "FrameDeliver", TagPresenceUpdate: "FramePresenceUpdate",
	TagControl: "FrameControl", TagHandoffOffer: "FrameHandoffOffer", TagHandoffAck: "FrameHandoffAck",
	TagHandoffReject: "FrameHandoffReject", TagMessage: "FrameMessage", TagMessageStored: "FrameMessageStored",
	TagMessageDeliver: "FrameMessageDeliver", TagMessageReceipt: "FrameMessageReceipt",
	TagMessageStatus: "FrameMessageStatus", TagTaskEvent: "FrameTaskEvent", TagError: "FrameError",
}

// clientTags are the tags a client decodes (service→client and two-way, the presence_update
// alias included); every other tag is ignored at a client.
func clientTags() []string {
	var out []string
	for _, t := range allTags {
		if frameDirections[t] != ClientToService {
			out = append(out, t)
		}
	}
	return append(out, TagPresenceUpdateAlias)
}

func busDefs(defs *jsonvalue.Object) {
	tags := make([]any, len(allTags))
	for i, t := range allTags {
		tags[i] = t
	}
	defs.Set("BusFrameTag", schema("The `t` of a bus frame (hive.md §4.2), in spec order. Receivers also "+
		"accept presence.update for presence_update; senders write presence_update.", "type", "string", "enum", tags))
	defs.Set("PresenceState", enumSchema("The state of a presence frame (hive.md §4.3)."+fallbackNote, presenceStates))
	defs.Set("BusPriority", enumSchema("The priority of a publish (hive.md §4.3)."+fallbackNote, busPriorities))
	defs.Set("BusPrivacy", enumSchema("Who may see a publish (hive.md §4.3): team (every follower of the "+
		"channel; may be shown on the web), private (only `to`; never shown on the web)."+fallbackNote, busPrivacies))
	defs.Set("ControlAction", enumSchema("A control action (hive.md §4.3): hold, veto, stop; all three end "+
		"leases."+fallbackNote+" Clients ignore Unknown.", controlActions))
	defs.Set("BusAgentV1", object("An agent an instance runs and the channels it follows (hive.md §4.3), "+
		"validated. Strict.", strict,
		req("agent_id", ref("Identifier", "")), req("role", ref("Identifier", "")),
		req("channels", schema("1-256 channels.", "type", "array", "minItems", 1.0, "maxItems", 256.0,
			"items", ref("Channel", "")))))
	defs.Set("PresenceProfileV1", object("A self-reported profile (hive.md §4.3) in a presence frame: "+
		"validated, strict.", strict,
		opt("display_name", schema("validate_text(display_name, 64, required): a present name is not blank.",
			"type", "string", "maxLength", 64.0, "pattern", requiredTextPattern)),
		opt("model", ref("Identifier", "")),
		dflt("roles", schema("Defaulted and omitted when empty; at most 16.", "type", "array",
			"maxItems", 16.0, "items", ref("Identifier", "")))))
	defs.Set("PresenceProfileV1Unchecked", object("A self-reported profile in a presence_update frame: "+
		"decoded, not validated. Lenient.", lenient,
		opt("display_name", str("")), opt("model", str("")),
		dflt("roles", schema("Defaulted and omitted when empty.", "type", "array", "items", str("")))))

	// The unions.
	var all, toService, toClient, polled []any
	for _, t := range allTags {
		name := frameDefNames[t]
		var strictRef any = ref(name, "")
		if frameDirections[t] == BothWays {
			// A two-way frame is lenient at a client and strict at the service.
			strictRef = schema("", "allOf", refs(name), "unevaluatedProperties", false)
		}
		switch frameDirections[t] {
		case ClientToService:
			all, toService = append(all, strictRef), append(toService, strictRef)
		case ServiceToClient:
			all, toClient = append(all, ref(name, "")), append(toClient, ref(name, ""))
		case BothWays:
			all, toService, toClient = append(all, strictRef), append(toService, strictRef), append(toClient, ref(name, ""))
		}
		if frameDirections[t] != ClientToService {
			switch t {
			case TagHandoffOffer, TagHandoffAck, TagHandoffReject, TagMessageDeliver:
				polled = append(polled, ref(name+"Unchecked", ""))
			default:
				polled = append(polled, ref(name, ""))
			}
		}
	}
	polled = append(polled, ref("FrameIgnored", ""))
	defs.Set("BusFrameV1", schema("One bus frame, tagged by `t` (hive.md §4.2), as `agentwire hive validate "+
		"--type bus-frame` takes it: client→service and two-way frames strict, service→client frames "+
		"lenient, each validated (§4.4).", "oneOf", all))
	defs.Set("BusFrameToService", schema("A frame as the service receives it (hive.md §4.2): the "+
		"client→service and two-way frames, strict and validated (§4.4). Any other tag is refused.",
		"oneOf", toService))
	defs.Set("BusFrameToClient", schema("A frame a client processes (hive.md §4.2): the service→client and "+
		"two-way frames, lenient and validated. A client ignores any other tag.", "oneOf", toClient))
	defs.Set("BusFrameV1Polled", schema("A frame in a poll or catch-up answer: decoded as at a client and not "+
		"validated; a frame a client ignores (FrameIgnored) is dropped.", "oneOf", polled))

	frame := func(tag, doc string, st bool, members ...member) *jsonvalue.Object {
		return object(doc, st, append([]member{req("t", constant(tag))}, members...)...)
	}
	cursors := schema("The last seq held per channel: optional, omitted when empty. Keys are channels "+
		"(validate_channel), at most 1024.", "type", "object", "additionalProperties", ref("Uint64", ""))
	defs.Set("FrameHello", frame(TagHello, "`hello` (client→service): the client's first frame; announces "+
		"the agents (hive.md §4.5). Strict.", strict,
		req("instance_id", ref("Identifier", "Must equal the socket token's instance (H3).")),
		req("agents", schema("At most 64, distinct agent_id.", "type", "array", "maxItems", float64(MaxHelloAgents),
			"items", ref("BusAgentV1", ""))),
		opt("cursors", cursors)))
	defs.Set("FramePresence", frame(TagPresence, "`presence` (client→service). Strict.", strict,
		req("agent_id", ref("Identifier", "")),
		req("state", ref("PresenceState", "Unknown is refused (`unknown presence state`).")),
		opt("profile", ref("PresenceProfileV1", ""))))
	defs.Set("FramePublish", frame(TagPublish, "`publish` (client→service). Strict.", strict,
		req("client_msg_id", ref("Identifier", "")),
		req("channel", ref("Channel", "")),
		opt("to", ref("Identifier", "The recipient; a private publish names one.")),
		req("from", ref("Identifier", "")),
		req("kind", ref("Identifier", "")),
		req("priority", ref("BusPriority", "Unknown is refused.")),
		req("privacy", ref("BusPrivacy", "Unknown is refused.")),
		req("body", anyJSON("Any JSON value, null included (required); at most 65536 bytes compact."))))
	defs.Set("FrameAck", frame(TagAck, "`ack` (client→service): everything up to seq is acknowledged. Strict.", strict,
		req("channel", ref("Channel", "")),
		req("seq", schema("From 1 (u64).", "type", "integer", "minimum", 1.0))))
	defs.Set("FramePublished", frame(TagPublished, "`published` (service→client): the position of the "+
		"sender's publish. Lenient.", lenient,
		req("client_msg_id", str("")), req("channel", str("")), req("seq", ref("Uint64", "")),
		req("server_time", ref("UtcTimestamp", ""))))
	defs.Set("FrameDeliver", frame(TagDeliver, "`deliver` (service→client): a publish for its followers. Lenient.", lenient,
		req("seq", ref("Uint64", "")), req("channel", str("")), req("from", str("The publishing agent id.")),
		opt("to", str("")), req("kind", str("")),
		req("priority", knownOrAny("BusPriority", "")), req("privacy", knownOrAny("BusPrivacy", "")),
		req("body", anyJSON("Any JSON value, null included.")), req("server_time", ref("UtcTimestamp", ""))))
	defs.Set("FramePresenceUpdate", object("`presence_update` (service→client; receivers also accept the "+
		"tag presence.update, senders write presence_update). Lenient.", lenient,
		req("t", schema("", "enum", []any{TagPresenceUpdate, TagPresenceUpdateAlias})),
		req("agent_id", str("")), req("instance_id", str("")), req("role", str("")),
		req("vault_id", str("")), req("state", knownOrAny("PresenceState", "")),
		req("server_time", ref("UtcTimestamp", "")), opt("profile_id", str("")),
		opt("profile", ref("PresenceProfileV1Unchecked", ""))))
	defs.Set("FrameControl", frame(TagControl, "`control` (service→client): hold, veto or stop (hive.md "+
		"§4.3); a client ignores one that names neither target_agent nor target_ref. Lenient.", lenient,
		req("control_id", str("")), opt("target_agent", str("")), opt("target_ref", str("")),
		req("action", knownOrAny("ControlAction", "")), req("reason", str("")), req("issued_by", str("")),
		req("seq", ref("Uint64", "The organization's control stream, gap-free.")),
		req("server_time", ref("UtcTimestamp", ""))))
	handoff := func(tag string, checked bool) []member {
		id := func(doc string) *jsonvalue.Object {
			if checked {
				return ref("Identifier", doc)
			}
			return str(doc)
		}
		switch tag {
		case TagHandoffOffer:
			channel := ref("Channel", "")
			if !checked {
				channel = str("")
			}
			return []member{req("handoff_id", id("")), req("channel", channel), req("from", id("")),
				req("to", id("")), req("bundle_ref", id("")), req("deadline", ref("UtcTimestamp", ""))}
		case TagHandoffAck:
			return []member{req("handoff_id", id("")), req("by", id(""))}
		}
		reason := str("")
		if checked {
			reason = schema("validate_text(reason, 1000, required).", "type", "string", "maxLength", 1000.0,
				"pattern", requiredTextPattern)
		}
		return []member{req("handoff_id", id("")), req("by", id("")), req("reason", reason)}
	}
	twoWay := " Two-way: strict at the service, lenient at a client; validated on both sides."
	unchecked := " As a poll or catch-up answer carries it: decoded as at a client, not validated."
	defs.Set("FrameHandoffOffer", frame(TagHandoffOffer, "`handoff.offer`: the binding handoff (hive.md §4.6)."+twoWay,
		lenient, handoff(TagHandoffOffer, true)...))
	defs.Set("FrameHandoffAck", frame(TagHandoffAck, "`handoff.ack`: the only way a handoff completes."+twoWay,
		lenient, handoff(TagHandoffAck, true)...))
	defs.Set("FrameHandoffReject", frame(TagHandoffReject, "`handoff.reject`: refuses a handoff."+twoWay,
		lenient, handoff(TagHandoffReject, true)...))
	defs.Set("FrameMessage", schema("`message` (client→service): an AgentMessageV1 flattened next to `t`, "+
		"an org or a swarm message. Strict, validated.", "oneOf", refs("FrameMessageOrg", "FrameMessageSwarm")))
	defs.Set("FrameMessageOrg", frame(TagMessage, "A `message` frame on an org network.", strict, flattened(defs, "AgentMessageOrg")...))
	defs.Set("FrameMessageSwarm", frame(TagMessage, "A `message` frame on a swarm.", strict, flattened(defs, "AgentMessageSwarm")...))
	defs.Set("FrameMessageStored", frame(TagMessageStored, "`message.stored` (service→sender): a "+
		"MessageStoredV1 flattened next to `t`. Lenient.", lenient, storedMembers()...))
	defs.Set("FrameMessageDeliver", schema("`message.deliver` (service→client): a MessageDeliveryV1 flattened "+
		"next to `t`, an org or a swarm delivery. Lenient, validated.", "oneOf",
		refs("FrameMessageDeliverOrg", "FrameMessageDeliverSwarm")))
	defs.Set("FrameMessageDeliverOrg", frame(TagMessageDeliver, "A `message.deliver` frame on an org network.",
		lenient, flattened(defs, "MessageDeliveryOrg")...))
	defs.Set("FrameMessageDeliverSwarm", frame(TagMessageDeliver, "A `message.deliver` frame on a swarm.",
		lenient, flattened(defs, "MessageDeliverySwarm")...))
	defs.Set("FrameMessageReceipt", frame(TagMessageReceipt, "`message.receipt` (client→service): a "+
		"MessageReceiptV1 flattened next to `t`. Strict, validated.", strict, receiptMembers()...))
	defs.Set("FrameMessageStatus", frame(TagMessageStatus, "`message.status` (service→sender): a "+
		"MessageStatusV1 flattened next to `t`. Lenient.", lenient, statusMembers()...))
	defs.Set("FrameTaskEvent", frame(TagTaskEvent, "`task.event` (service→client): a TaskEventV1 flattened "+
		"next to `t`. Lenient.", lenient, taskEventMembers()...))
	defs.Set("FrameError", frame(TagError, "`error` (service→client): a refused frame or request. Lenient.", lenient,
		opt("client_msg_id", str("The refused message or publish.")),
		opt("handoff_id", str("The refused handoff frame.")),
		req("error", ref("HiveErrorDetailV1", ""))))
	defs.Set("FrameHandoffOfferUnchecked", frame(TagHandoffOffer, "`handoff.offer`."+unchecked, lenient,
		handoff(TagHandoffOffer, false)...))
	defs.Set("FrameHandoffAckUnchecked", frame(TagHandoffAck, "`handoff.ack`."+unchecked, lenient,
		handoff(TagHandoffAck, false)...))
	defs.Set("FrameHandoffRejectUnchecked", frame(TagHandoffReject, "`handoff.reject`."+unchecked, lenient,
		handoff(TagHandoffReject, false)...))
	defs.Set("FrameMessageDeliverUnchecked", frame(TagMessageDeliver, "`message.deliver`."+unchecked, lenient,
		flattened(defs, "MessageDeliveryV1Unchecked")...))
	ct := clientTags()
	defs.Set("FrameIgnored", object("A frame a client ignores: a client→service or unknown tag (hive.md "+
		"§4.2). Its other members are not read.", lenient,
		req("t", schema("Any string but the tags a client decodes: "+quotedList(ct)+".", "type", "string",
			"pattern", PatternNoneOf(ct)))))

	defs.Set("BusPollV1", object("The answer of GET /v1/bus/poll (hive.md §4.1), validated: at most 500 "+
		"frames the socket would have received. Lenient.", lenient,
		req("schema", schema("require_schema: exactly "+BusPollSchema+".", "const", BusPollSchema)),
		req("frames", schema("Decoded as at a client; frames a client ignores are dropped.", "type", "array",
			"items", ref("BusFrameV1Polled", ""))),
		req("cursor", str("Opaque; pass it back next time."))))
	defs.Set("BusEventsV1", object("The answer of the channel catch-up route (hive.md §4.1), validated: "+
		"deliver, message.deliver and task.event frames with seq > after_seq, ascending. Lenient.", lenient,
		req("schema", schema("require_schema: exactly "+BusEventsSchema+".", "const", BusEventsSchema)),
		req("channel", str("")),
		req("events", schema("Decoded as at a client; frames a client ignores are dropped.", "type", "array",
			"items", ref("BusFrameV1Polled", ""))),
		opt("next_after_seq", ref("Uint64", "Present iff more events exist."))))
}

// flattened returns the members of the object definition name already in defs, as members
// (for a frame that flattens it next to `t`).
func flattened(defs *jsonvalue.Object, name string) []member {
	d, _ := defs.Get(name)
	o := d.(*jsonvalue.Object)
	required := map[string]bool{}
	if r, ok := o.Get("required"); ok {
		for _, n := range r.([]any) {
			required[n.(string)] = true
		}
	}
	props, _ := o.Get("properties")
	var out []member
	for _, m := range props.(*jsonvalue.Object).Members() {
		p := presenceRaw
		if required[m.Name] {
			p = required0
		}
		out = append(out, member{Name: m.Name, Schema: m.Value, Presence: p})
	}
	return out
}

// ---------------------------------------------------------------------------------------------
// §5 errors.

func errorDefs(defs *jsonvalue.Object) {
	defs.Set("HiveErrorCode", enumSchema("The code of an error detail (hive.md §5.2), with its HTTP status "+
		"in the spec's table."+fallbackNote+" Unknown means: act on the HTTP status alone.", errorCodes))
	defs.Set("HiveUploadKind", enumSchema("The upload kind an upload_disabled error names (hive.md §5.1)."+
		fallbackNote, uploadKinds))
	defs.Set("HiveErrorDetailV1", object("The error detail of every non-2xx body and of the bus error frame "+
		"(hive.md §5.1). Lenient, no Validate.", lenient,
		req("code", knownOrAny("HiveErrorCode", "")),
		dflt("message", str("Human text, a validation message verbatim; always written, absent decodes as \"\" (null is refused).")),
		opt("field", str("The failing member or parameter, top-level or dotted (network.channel).")),
		opt("reason", str("A finer code (hive.md §5.3).")),
		opt("limit", ref("Uint64", "The limit that was hit.")),
		opt("used", ref("Uint64", "How much is used.")),
		opt("retry_after_s", ref("Uint64", "Seconds before a retry can succeed.")),
		opt("kind", knownOrAny("HiveUploadKind", "With upload_disabled."))))
	defs.Set("HiveErrorBody", object("Every non-2xx HTTP body (hive.md §5.1): no schema. Lenient.", lenient,
		req("error", ref("HiveErrorDetailV1", ""))))
}

// ---------------------------------------------------------------------------------------------
// §6 tasks.

func taskDefs(defs *jsonvalue.Object) {
	defs.Set("TaskState", enumSchema("The state of a task (hive.md §6.1): done, rejected and cancelled are "+
		"terminal; `failed` is not a state of this contract."+fallbackNote, taskStates))
	defs.Set("TaskActorKind", enumSchema("The kind of a task actor (hive.md §6.3)."+fallbackNote, taskActorKinds))
	label := schema("validate_text(label, 128, required).", "type", "string", "maxLength", 128.0, "pattern", requiredTextPattern)
	defs.Set("TaskActorV1", schema("Who acted on a task (hive.md §6.3) as its standalone Validate accepts it: "+
		"an agent or a person, by `kind` (Unknown is refused). Lenient.", "oneOf",
		refs("TaskActorAgent", "TaskActorPerson")))
	defs.Set("TaskActorAgent", object("An agent actor.", lenient,
		req("kind", constant(string(TaskActorKindAgent))),
		req("agent", ref("Identifier", "Agent actors name an agent.")),
		opt("instance_id", ref("Identifier", "The service SHOULD set it.")),
		opt("label", label)))
	defs.Set("TaskActorPerson", object("A person actor.", lenient,
		req("kind", constant(string(TaskActorKindPerson))),
		opt("agent", schema("Person actors carry no agent: absent (or null).", "type", "null")),
		opt("instance_id", schema("Person actors carry no instance_id: absent (or null).", "type", "null")),
		req("label", label)))
	defs.Set("TaskActorV1Unchecked", object("A TaskActorV1 as a task event carries it: decoded, not "+
		"validated (TaskEventV1 has no Validate). Lenient.", lenient,
		req("kind", knownOrAny("TaskActorKind", "")),
		opt("agent", str("")), opt("instance_id", str("")), opt("label", str(""))))
}

// ---------------------------------------------------------------------------------------------
// Building blocks.

// The shared building blocks (package internal/schemabuild), under short local names.
type member = schemabuild.Member

const (
	required0   = schemabuild.Required
	optional    = schemabuild.Optional
	defaulted   = schemabuild.Defaulted
	presenceRaw = schemabuild.Raw
	strict      = schemabuild.Strict
	lenient     = schemabuild.Lenient
)

var (
	req    = schemabuild.Req
	opt    = schemabuild.Opt
	dflt   = schemabuild.Dflt
	schema = schemabuild.Schema
	object = schemabuild.Object
	ref    = schemabuild.Ref
	refs   = schemabuild.Refs
	str    = schemabuild.Str
)

func constant(v string) *jsonvalue.Object { return jsonvalue.ObjectOf("const", v) }

func anyJSON(description string) *jsonvalue.Object {
	// An empty schema (no type) admits every JSON value; the renderer writes JsonValue.
	return schema(description)
}

// knownOrAny is a plain-enum member that is not validated: the known values, or any other
// string (decoded as Unknown).
func knownOrAny(enum, description string) *jsonvalue.Object {
	return schema(description, "anyOf", []any{ref(enum, ""),
		schema("Any other string: Unknown.", "type", "string")})
}

func enumSchema[T ~string](description string, values []T) *jsonvalue.Object {
	vals := make([]any, len(values))
	for i, v := range values {
		vals[i] = string(v)
	}
	return schema(description, "type", "string", "enum", vals)
}

func quotedList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, ", ")
}

// PatternNoneOf returns a JSON Schema pattern (valid in ECMA-262 and RE2) that matches every
// string except the given words: how the schema spells "any other tag" (a tagged enum's
// fallback variant, the frames a client ignores) without the `not` keyword, which the
// TypeScript renderer does not accept. It is built from the words' prefix tree.
func PatternNoneOf(words []string) string {
	return "^(?:" + noneOfNode("", words) + ")$"
}

func noneOfNode(prefix string, words []string) string {
	in := false
	var next []byte
	for _, w := range words {
		switch {
		case w == prefix:
			in = true
		case strings.HasPrefix(w, prefix) && !slices.Contains(next, w[len(prefix)]):
			next = append(next, w[len(prefix)])
		}
	}
	slices.Sort(next)
	var alts []string
	if !in {
		alts = append(alts, "")
	}
	if len(next) == 0 {
		return strings.Join(append(alts, `[\s\S]+`), "|")
	}
	var class strings.Builder
	for _, c := range next {
		if strings.IndexByte(`\]^-[`, c) >= 0 {
			class.WriteByte('\\')
		}
		class.WriteByte(c)
	}
	alts = append(alts, `[^`+class.String()+`][\s\S]*`)
	for _, c := range next {
		alts = append(alts, regexp.QuoteMeta(string(c))+"(?:"+noneOfNode(prefix+string(c), words)+")")
	}
	return strings.Join(alts, "|")
}
