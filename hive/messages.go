package hive

import (
	"github.com/agentwire/agentwire/hive/wire"
)

// Constants of the messages module (hive.md §2.1).
const (
	// MessageListSchema is MESSAGE_LIST_SCHEMA, the `schema` of MessageListV1.
	MessageListSchema = "leanctx.hive.message-list/v1"
	// SealedMessageSchema is SEALED_MESSAGE_SCHEMA: the `content_schema` of a sealed message
	// body, whose plaintext is a MessageBodyV1 `{text, references}`.
	SealedMessageSchema = "leanctx.hive.sealed-message/v1"
	// MaxMessageTextChars is MAX_MESSAGE_TEXT_CHARS, the character limit of `text`.
	MaxMessageTextChars = 4000
	// MaxMessageReferences is MAX_MESSAGE_REFERENCES, the limit of `references`.
	MaxMessageReferences = 16
	// MaxMessagesPage is MAX_MESSAGES_PAGE, the limit of MessageListV1 `messages`.
	MaxMessagesPage = 200
	// MaxQuestionDeadlineHours is MAX_QUESTION_DEADLINE_HOURS (7 × 24): how far ahead a
	// question's `deadline` may lie (enforced by the service, §8 S12).
	MaxQuestionDeadlineHours int64 = 7 * 24
)

// ---------------------------------------------------------------------------------------------
// Plain enums (hive.md §2.2): snake_case wire values, any other string decodes as Unknown, and
// Unknown (or any value outside the known set) encodes as "unknown".

// MessageType is the `type` of a message.
type MessageType string

// MessageType values.
const (
	// MessageTypeQuestion asks other agents; may carry a deadline.
	MessageTypeQuestion MessageType = "question"
	// MessageTypeOffer offers help or a capability.
	MessageTypeOffer MessageType = "offer"
	// MessageTypeHandoff announces handing work on (the binding handoff is `handoff.offer`).
	MessageTypeHandoff MessageType = "handoff"
	// MessageTypeAnswer answers a question; needs `reply_to`.
	MessageTypeAnswer MessageType = "answer"
	// MessageTypeFinding reports something found.
	MessageTypeFinding MessageType = "finding"
	// MessageTypeUnknown is any other string.
	MessageTypeUnknown MessageType = "unknown"
)

var messageTypes = []MessageType{MessageTypeQuestion, MessageTypeOffer, MessageTypeHandoff, MessageTypeAnswer, MessageTypeFinding}

// MarshalJSON writes the wire value ("unknown" for values outside the known set).
func (t MessageType) MarshalJSON() ([]byte, error) { return enumMarshal(t, messageTypes) }

// UnmarshalJSON reads a string; unknown strings give MessageTypeUnknown.
func (t *MessageType) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "MessageType", messageTypes, MessageTypeUnknown, t)
}

// NetworkKind is the kind of a network: the value of NetworkV1.Kind and of the `network` query
// parameter.
type NetworkKind string

// NetworkKind values.
const (
	// NetworkKindOrg is an organization's private bus, one network per vault channel.
	NetworkKindOrg NetworkKind = "org"
	// NetworkKindSwarm is one network per swarm_id.
	NetworkKindSwarm NetworkKind = "swarm"
	// NetworkKindUnknown is any other string.
	NetworkKindUnknown NetworkKind = "unknown"
)

var networkKinds = []NetworkKind{NetworkKindOrg, NetworkKindSwarm}

// MarshalJSON writes the wire value.
func (k NetworkKind) MarshalJSON() ([]byte, error) { return enumMarshal(k, networkKinds) }

// UnmarshalJSON reads a string; unknown strings give NetworkKindUnknown.
func (k *NetworkKind) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "NetworkKind", networkKinds, NetworkKindUnknown, k)
}

// MessageTrust says whose data a delivered message is (`trust`).
type MessageTrust string

// MessageTrust values.
const (
	// MessageTrustTeam: an agent or person of the same organization.
	MessageTrustTeam MessageTrust = "team"
	// MessageTrustUntrusted: anything else; always in a swarm.
	MessageTrustUntrusted MessageTrust = "untrusted"
	// MessageTrustUnknown is any other string.
	MessageTrustUnknown MessageTrust = "unknown"
)

var messageTrusts = []MessageTrust{MessageTrustTeam, MessageTrustUntrusted}

// MarshalJSON writes the wire value.
func (t MessageTrust) MarshalJSON() ([]byte, error) { return enumMarshal(t, messageTrusts) }

// UnmarshalJSON reads a string; unknown strings give MessageTrustUnknown.
func (t *MessageTrust) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "MessageTrust", messageTrusts, MessageTrustUnknown, t)
}

// MessageReceiptState is how far a recipient got with a message (`state`).
type MessageReceiptState string

// MessageReceiptState values.
const (
	// MessageReceiptStateDelivered: the message reached the recipient.
	MessageReceiptStateDelivered MessageReceiptState = "delivered"
	// MessageReceiptStateRead: the recipient read it (implies delivered).
	MessageReceiptStateRead MessageReceiptState = "read"
	// MessageReceiptStateUnknown is any other string.
	MessageReceiptStateUnknown MessageReceiptState = "unknown"
)

var receiptStates = []MessageReceiptState{MessageReceiptStateDelivered, MessageReceiptStateRead}

// MarshalJSON writes the wire value.
func (s MessageReceiptState) MarshalJSON() ([]byte, error) { return enumMarshal(s, receiptStates) }

// UnmarshalJSON reads a string; unknown strings give MessageReceiptStateUnknown.
func (s *MessageReceiptState) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "MessageReceiptState", receiptStates, MessageReceiptStateUnknown, s)
}

// TaskEventKind is what happened to a task (`event` of TaskEventV1, hive.md §6.2).
type TaskEventKind string

// TaskEventKind values.
const (
	// TaskEventKindProposed: a task was proposed.
	TaskEventKindProposed TaskEventKind = "proposed"
	// TaskEventKindOpened: a task was created or its proposal approved.
	TaskEventKindOpened TaskEventKind = "opened"
	// TaskEventKindClaimed: an agent claimed the task.
	TaskEventKindClaimed TaskEventKind = "claimed"
	// TaskEventKindReleased: the claim ended without a result.
	TaskEventKindReleased TaskEventKind = "released"
	// TaskEventKindSubmitted: a result waits for its decision.
	TaskEventKindSubmitted TaskEventKind = "submitted"
	// TaskEventKindDecided: a proposal was declined or a result accepted or rejected.
	TaskEventKindDecided TaskEventKind = "decided"
	// TaskEventKindCancelled: a person stopped the task.
	TaskEventKindCancelled TaskEventKind = "cancelled"
	// TaskEventKindUnknown is any other string.
	TaskEventKindUnknown TaskEventKind = "unknown"
)

var taskEventKinds = []TaskEventKind{TaskEventKindProposed, TaskEventKindOpened, TaskEventKindClaimed, TaskEventKindReleased, TaskEventKindSubmitted, TaskEventKindDecided, TaskEventKindCancelled}

// MarshalJSON writes the wire value.
func (k TaskEventKind) MarshalJSON() ([]byte, error) { return enumMarshal(k, taskEventKinds) }

// UnmarshalJSON reads a string; unknown strings give TaskEventKindUnknown.
func (k *TaskEventKind) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "TaskEventKind", taskEventKinds, TaskEventKindUnknown, k)
}

// ---------------------------------------------------------------------------------------------
// NetworkV1 (hive.md §2.3): tagged by "kind", strict, no fallback.

// NetworkV1 is where a message lives: NetworkOrg or NetworkSwarm. Decode it with
// DecodeNetworkV1 or as a member of a holder.
type NetworkV1 interface {
	// Kind is `kind()`: NetworkKindOrg or NetworkKindSwarm.
	Kind() NetworkKind
	// Validate checks the variant's member (§2.3).
	Validate() error
	// MarshalJSON writes the tagged wire form.
	MarshalJSON() ([]byte, error)
	appendJSON(e *wire.Encoder)
	isNetworkV1()
}

// NetworkOrg is `{"kind":"org","channel":…}`: an org channel (the channel is the network).
type NetworkOrg struct {
	// Channel is `channel`, checked with ValidateChannel.
	Channel string
}

// NetworkSwarm is `{"kind":"swarm","swarm_id":…}`.
type NetworkSwarm struct {
	// SwarmID is `swarm_id`, an opaque id.
	SwarmID string
}

func (NetworkOrg) isNetworkV1()   {}
func (NetworkSwarm) isNetworkV1() {}

// Kind returns NetworkKindOrg.
func (NetworkOrg) Kind() NetworkKind { return NetworkKindOrg }

// Kind returns NetworkKindSwarm.
func (NetworkSwarm) Kind() NetworkKind { return NetworkKindSwarm }

// Validate is validate_channel(channel).
func (n NetworkOrg) Validate() error { return ValidateChannel(n.Channel) }

// Validate is validate_id(swarm_id, "swarm_id").
func (n NetworkSwarm) Validate() error { return ValidateID(n.SwarmID, "swarm_id") }

func (n NetworkOrg) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "org")
	e.Str("channel", n.Channel)
	e.Close()
}

func (n NetworkSwarm) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "swarm")
	e.Str("swarm_id", n.SwarmID)
	e.Close()
}

// MarshalJSON writes `{"kind":"org","channel":…}`.
func (n NetworkOrg) MarshalJSON() ([]byte, error) { return marshalWith(96, n.appendJSON) }

// MarshalJSON writes `{"kind":"swarm","swarm_id":…}`.
func (n NetworkSwarm) MarshalJSON() ([]byte, error) { return marshalWith(48, n.appendJSON) }

var networkTags = []string{"org", "swarm"}

// NetworkKindOf returns the kind of n, NetworkKindUnknown for nil.
func NetworkKindOf(n NetworkV1) NetworkKind {
	if n == nil {
		return NetworkKindUnknown
	}
	return n.Kind()
}

// DecodeNetworkV1 decodes one NetworkV1 document.
func DecodeNetworkV1(data []byte) (NetworkV1, error) {
	var n NetworkV1
	err := document(data, "NetworkV1", func(d *wire.Decoder) error { return decodeNetwork(d, &n) })
	if err != nil {
		return nil, err
	}
	return n, nil
}

func decodeNetwork(d *wire.Decoder, dst *NetworkV1) error {
	tag, st, err := d.FindTag("kind")
	if err != nil {
		return err
	}
	switch {
	case st == wire.TagFound && tag == "org":
		var n NetworkOrg
		seen := false
		err = d.Object(func(name []byte) error {
			switch string(name) {
			case "channel":
				seen = true
				return decodeString(d, &n.Channel)
			case "kind":
				return d.Skip()
			}
			return d.Unknown()
		})
		if err == nil && !seen {
			err = d.Missing("channel")
		}
		*dst = n
		return err
	case st == wire.TagFound && tag == "swarm":
		var n NetworkSwarm
		seen := false
		err = d.Object(func(name []byte) error {
			switch string(name) {
			case "swarm_id":
				seen = true
				return decodeString(d, &n.SwarmID)
			case "kind":
				return d.Skip()
			}
			return d.Unknown()
		})
		if err == nil && !seen {
			err = d.Missing("swarm_id")
		}
		*dst = n
		return err
	}
	return d.TagFault("kind", st, tag, networkTags)
}

func appendNetwork(e *wire.Encoder, name string, n NetworkV1) {
	e.Key(name)
	if n == nil {
		e.B = append(e.B, "null"...)
		e.SetErr(verr("network must be set"))
		return
	}
	n.appendJSON(e)
}

// ---------------------------------------------------------------------------------------------
// MessageReferenceV1 (hive.md §2.4): tagged by "kind", strict, no fallback.

// MessageReferenceV1 is what a message points at: ReferenceTask, ReferenceFact,
// ReferenceProposal, ReferenceCommit or ReferenceHandoff.
type MessageReferenceV1 interface {
	// Validate is the variant's own check (§2.4).
	Validate() error
	// MarshalJSON writes the tagged wire form.
	MarshalJSON() ([]byte, error)
	appendJSON(e *wire.Encoder)
	isMessageReferenceV1()
}

// ReferenceTask is `{"kind":"task","number":N}`: a task of the channel's vault (org only).
type ReferenceTask struct {
	// Number is `number`, from 1.
	Number uint64
}

// ReferenceFact is `{"kind":"fact","id":…}`.
type ReferenceFact struct {
	// ID is `id`, checked as "reference id".
	ID string
}

// ReferenceProposal is `{"kind":"proposal","number":N}`.
type ReferenceProposal struct {
	// Number is `number`, from 1.
	Number uint64
}

// ReferenceCommit is `{"kind":"commit","id":…}`: 7–64 lowercase hex digits.
type ReferenceCommit struct {
	// ID is `id`.
	ID string
}

// ReferenceHandoff is `{"kind":"handoff","handoff_id":…}`.
type ReferenceHandoff struct {
	// HandoffID is `handoff_id`.
	HandoffID string
}

func (ReferenceTask) isMessageReferenceV1()     {}
func (ReferenceFact) isMessageReferenceV1()     {}
func (ReferenceProposal) isMessageReferenceV1() {}
func (ReferenceCommit) isMessageReferenceV1()   {}
func (ReferenceHandoff) isMessageReferenceV1()  {}

// Validate: 0 → `numbers start at 1`.
func (r ReferenceTask) Validate() error {
	if r.Number == 0 {
		return verr("numbers start at 1")
	}
	return nil
}

// Validate is validate_id(id, "reference id").
func (r ReferenceFact) Validate() error { return ValidateID(r.ID, "reference id") }

// Validate: 0 → `numbers start at 1`.
func (r ReferenceProposal) Validate() error {
	if r.Number == 0 {
		return verr("numbers start at 1")
	}
	return nil
}

// Validate: byte length 7–64, every byte in 0-9a-f, else `commit references are 7-64 hex`.
func (r ReferenceCommit) Validate() error {
	if len(r.ID) < 7 || len(r.ID) > 64 || !isLowerHex(r.ID) {
		return verr("commit references are 7-64 hex")
	}
	return nil
}

// Validate is validate_id(handoff_id, "handoff_id").
func (r ReferenceHandoff) Validate() error { return ValidateID(r.HandoffID, "handoff_id") }

func (r ReferenceTask) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "task")
	e.Uint("number", r.Number)
	e.Close()
}

func (r ReferenceFact) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "fact")
	e.Str("id", r.ID)
	e.Close()
}

func (r ReferenceProposal) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "proposal")
	e.Uint("number", r.Number)
	e.Close()
}

func (r ReferenceCommit) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "commit")
	e.Str("id", r.ID)
	e.Close()
}

func (r ReferenceHandoff) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "handoff")
	e.Str("handoff_id", r.HandoffID)
	e.Close()
}

// MarshalJSON writes the tagged wire form.
func (r ReferenceTask) MarshalJSON() ([]byte, error) { return marshalWith(32, r.appendJSON) }

// MarshalJSON writes the tagged wire form.
func (r ReferenceFact) MarshalJSON() ([]byte, error) { return marshalWith(32, r.appendJSON) }

// MarshalJSON writes the tagged wire form.
func (r ReferenceProposal) MarshalJSON() ([]byte, error) { return marshalWith(32, r.appendJSON) }

// MarshalJSON writes the tagged wire form.
func (r ReferenceCommit) MarshalJSON() ([]byte, error) { return marshalWith(32, r.appendJSON) }

// MarshalJSON writes the tagged wire form.
func (r ReferenceHandoff) MarshalJSON() ([]byte, error) { return marshalWith(32, r.appendJSON) }

var referenceTags = []string{"task", "fact", "proposal", "commit", "handoff"}

// DecodeMessageReferenceV1 decodes one MessageReferenceV1 document.
func DecodeMessageReferenceV1(data []byte) (MessageReferenceV1, error) {
	var r MessageReferenceV1
	err := document(data, "MessageReferenceV1", func(d *wire.Decoder) error { return decodeReference(d, &r) })
	if err != nil {
		return nil, err
	}
	return r, nil
}

// decodeOneMember decodes a strict variant with exactly one required member besides "kind".
func decodeOneMember(d *wire.Decoder, member string, read func() error) error {
	seen := false
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case member:
			seen = true
			return read()
		case "kind":
			return d.Skip()
		}
		return d.Unknown()
	})
	if err == nil && !seen {
		err = d.Missing(member)
	}
	return err
}

func decodeReference(d *wire.Decoder, dst *MessageReferenceV1) error {
	tag, st, err := d.FindTag("kind")
	if err != nil {
		return err
	}
	if st == wire.TagFound {
		switch tag {
		case "task", "proposal":
			var n uint64
			err := decodeOneMember(d, "number", func() (err error) { n, err = d.Uint(maxU64); return })
			if tag == "task" {
				*dst = ReferenceTask{Number: n}
			} else {
				*dst = ReferenceProposal{Number: n}
			}
			return err
		case "fact", "commit":
			var s string
			err := decodeOneMember(d, "id", func() error { return decodeString(d, &s) })
			if tag == "fact" {
				*dst = ReferenceFact{ID: s}
			} else {
				*dst = ReferenceCommit{ID: s}
			}
			return err
		case "handoff":
			var s string
			err := decodeOneMember(d, "handoff_id", func() error { return decodeString(d, &s) })
			*dst = ReferenceHandoff{HandoffID: s}
			return err
		}
	}
	return d.TagFault("kind", st, tag, referenceTags)
}

const (
	maxU64 = ^uint64(0)
	maxU32 = uint64(^uint32(0))
	maxU16 = uint64(^uint16(0))
	maxU8  = uint64(^uint8(0))
)

// ---------------------------------------------------------------------------------------------
// MessageBodyV1 (hive.md §2.5): strict.

// MessageBodyV1 is a message body in the clear.
type MessageBodyV1 struct {
	// Text is `text` (required).
	Text string
	// References is `references` (defaulted: absent decodes as empty; omitted when empty).
	References []MessageReferenceV1
}

// Validate is MessageBodyV1.validate(network) (§2.5): text (validate_text, 4000, required),
// `too many references`, then per reference its own check and, on swarm, `Swarm messages do
// not reference org tasks`.
func (b *MessageBodyV1) Validate(network NetworkKind) error {
	if err := ValidateText(b.Text, MaxMessageTextChars, "text", true); err != nil {
		return err
	}
	if len(b.References) > MaxMessageReferences {
		return verr("too many references")
	}
	for _, r := range b.References {
		if r == nil {
			return verr("references must not hold nil")
		}
		if err := r.Validate(); err != nil {
			return err
		}
		if _, task := r.(ReferenceTask); task && network == NetworkKindSwarm {
			return verr("Swarm messages do not reference org tasks")
		}
	}
	return nil
}

func (b *MessageBodyV1) decode(d *wire.Decoder) error {
	*b = MessageBodyV1{}
	seen := false
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "text":
			seen = true
			return decodeString(d, &b.Text)
		case "references":
			if ok, err := d.Null(); err != nil {
				return err
			} else if ok {
				return d.NullRequired()
			}
			return d.Array(func(i int) error {
				var r MessageReferenceV1
				if err := decodeReference(d, &r); err != nil {
					return err
				}
				b.References = append(b.References, r)
				return nil
			})
		}
		return d.Unknown()
	})
	if err == nil && !seen {
		err = d.Missing("text")
	}
	return err
}

func (b *MessageBodyV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("text", b.Text)
	if len(b.References) > 0 {
		e.Key("references")
		e.B = append(e.B, '[')
		for i, r := range b.References {
			if i > 0 {
				e.B = append(e.B, ',')
			}
			if r == nil {
				e.B = append(e.B, "null"...)
				e.SetErr(verr("references must not hold nil"))
				continue
			}
			r.appendJSON(e)
		}
		e.B = append(e.B, ']')
	}
	e.Close()
}

// MarshalJSON writes `{"text":…,"references":[…]}` (references omitted when empty).
func (b MessageBodyV1) MarshalJSON() ([]byte, error) {
	return marshalWith(64+len(b.Text), b.appendJSON)
}

// UnmarshalJSON decodes strictly (§0.2).
func (b *MessageBodyV1) UnmarshalJSON(data []byte) error {
	return document(data, "MessageBodyV1", b.decode)
}

func decodeOptBody(d *wire.Decoder, dst **MessageBodyV1) error {
	if ok, err := d.Null(); err != nil || ok {
		*dst = nil
		return err
	}
	b := new(MessageBodyV1)
	*dst = b
	return b.decode(d)
}

// ---------------------------------------------------------------------------------------------
// AgentMessageV1 (hive.md §2.6): the `message` frame, client → service, strict.

// AgentMessageV1 is a message an agent sends (`message`, C→S).
type AgentMessageV1 struct {
	// ClientMsgID is `client_msg_id`: client-chosen (a ULID by convention); a resend is a no-op.
	ClientMsgID string
	// Network is `network`.
	Network NetworkV1
	// Type is `type` (required: absent is a decode error).
	Type MessageType
	// From is `from`: the sending agent (bus agent id).
	From string
	// To is `to` (optional): one recipient; absent means everyone on the channel or swarm.
	To *string
	// ToInstance is `to_instance` (optional): the instance running `to`; org only, with `to`.
	ToInstance *string
	// ReplyTo is `reply_to` (optional): the gid answered or replied to.
	ReplyTo *string
	// Deadline is `deadline` (optional): questions only.
	Deadline *UtcTimestamp
	// Body is `body` (optional): the body in the clear.
	Body *MessageBodyV1
	// Sealed is `sealed` (optional): the sealed body (§3).
	Sealed *SealedBlobV1
}

var agentMessageFields = []string{"client_msg_id", "network", "type", "from", "to", "to_instance", "reply_to", "deadline", "body", "sealed"}

const agentMessageRequired = 1<<0 | 1<<1 | 1<<2 | 1<<3

// Validate is AgentMessageV1.validate() (§2.6), in exactly the spec's order.
func (m *AgentMessageV1) Validate() error {
	if err := ValidateID(m.ClientMsgID, "client_msg_id"); err != nil {
		return err
	}
	if m.Network == nil {
		return verr("network must be set")
	}
	if err := m.Network.Validate(); err != nil {
		return err
	}
	if err := ValidateID(m.From, "from"); err != nil {
		return err
	}
	if m.To != nil {
		if err := ValidateID(*m.To, "to"); err != nil {
			return err
		}
	}
	kind := m.Network.Kind()
	if m.ToInstance != nil {
		if err := ValidateID(*m.ToInstance, "to_instance"); err != nil {
			return err
		}
		if m.To == nil || kind != NetworkKindOrg {
			return verr("to_instance names the instance of `to` on an org network")
		}
	}
	if m.ReplyTo != nil {
		if err := ValidateID(*m.ReplyTo, "reply_to"); err != nil {
			return err
		}
	}
	switch {
	case !enumKnown(m.Type, messageTypes):
		return verr("unknown message type")
	case m.Type == MessageTypeAnswer && m.ReplyTo == nil:
		return verr("an answer replies to a question")
	case m.Type == MessageTypeQuestion:
	case m.Deadline != nil:
		return verr("only questions carry a deadline")
	}
	if m.Deadline != nil {
		if _, err := ParseTime(*m.Deadline); err != nil {
			return err
		}
	}
	switch {
	case m.Body != nil && m.Sealed == nil:
		return m.Body.Validate(kind)
	case m.Body == nil && m.Sealed != nil:
		if kind == NetworkKindSwarm {
			return verr("swarm messages are public to the swarm's workers")
		}
		if err := m.Sealed.Validate(); err != nil {
			return err
		}
		if m.Sealed.ContentSchema != SealedMessageSchema {
			return verr("sealed content must be " + SealedMessageSchema)
		}
		return nil
	}
	return verr("a message carries body or sealed")
}

// decodeMembers reads the members of the object being read; a member named skip (a frame's tag,
// already consumed) is passed over.
func (m *AgentMessageV1) decodeMembers(d *wire.Decoder, skip string) error {
	*m = AgentMessageV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "client_msg_id":
			seen |= 1 << 0
			return decodeString(d, &m.ClientMsgID)
		case "network":
			seen |= 1 << 1
			return decodeNetwork(d, &m.Network)
		case "type":
			seen |= 1 << 2
			t, err := enumDecode(d, messageTypes, MessageTypeUnknown)
			m.Type = t
			return err
		case "from":
			seen |= 1 << 3
			return decodeString(d, &m.From)
		case "to":
			return d.OptString(&m.To)
		case "to_instance":
			return d.OptString(&m.ToInstance)
		case "reply_to":
			return d.OptString(&m.ReplyTo)
		case "deadline":
			return decodeOptTimestamp(d, &m.Deadline)
		case "body":
			return decodeOptBody(d, &m.Body)
		case "sealed":
			return decodeOptSealed(d, &m.Sealed)
		}
		if skip != "" && string(name) == skip {
			return d.Skip()
		}
		return d.Unknown()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, agentMessageRequired, agentMessageFields)
}

func (m *AgentMessageV1) appendMembers(e *wire.Encoder) {
	e.Str("client_msg_id", m.ClientMsgID)
	appendNetwork(e, "network", m.Network)
	e.Str("type", enumWire(m.Type, messageTypes))
	e.Str("from", m.From)
	e.OptStr("to", m.To)
	e.OptStr("to_instance", m.ToInstance)
	e.OptStr("reply_to", m.ReplyTo)
	appendOptTimestamp(e, "deadline", m.Deadline)
	if m.Body != nil {
		e.Key("body")
		m.Body.appendJSON(e)
	}
	if m.Sealed != nil {
		e.Key("sealed")
		m.Sealed.appendJSON(e)
	}
}

// MarshalJSON writes the wire form (E1–E3). It does not validate (E5).
func (m AgentMessageV1) MarshalJSON() ([]byte, error) {
	return marshalWith(256, func(e *wire.Encoder) {
		e.Open()
		m.appendMembers(e)
		e.Close()
	})
}

// UnmarshalJSON decodes strictly (§0.2); call Validate afterwards.
func (m *AgentMessageV1) UnmarshalJSON(data []byte) error {
	return document(data, "AgentMessageV1", func(d *wire.Decoder) error { return m.decodeMembers(d, "") })
}

// ---------------------------------------------------------------------------------------------
// SenderV1 (hive.md §2.7): tagged by "kind", lenient, with fallback.

// SenderV1 is the sender of a delivered message: SenderAgent, SenderPerson, SenderSwarm or
// SenderUnknown.
type SenderV1 interface {
	// MarshalJSON writes the tagged wire form (SenderUnknown: `{"kind":"unknown"}`).
	MarshalJSON() ([]byte, error)
	appendJSON(e *wire.Encoder)
	isSenderV1()
}

// SenderAgent is `{"kind":"agent",…}`: an agent of the organization.
type SenderAgent struct {
	// Agent is `agent`, chosen by the sender (self-reported).
	Agent string
	// InstanceLabel is `instance_label`, chosen by the sender (self-reported).
	InstanceLabel string
	// InstanceID is `instance_id` (optional), set by the service; use it as `to_instance`.
	InstanceID *string
	// Owner is `owner` (optional), chosen by the sender (self-reported).
	Owner *string
	// Model is `model` (optional).
	Model *string
	// Mine is `mine`: the sending and receiving instances have the same owner.
	Mine bool
	// ProfileID is `profile_id` (optional): the agent's profile.
	ProfileID *string
}

// SenderPerson is `{"kind":"person","label":…}`: a person answering on the web.
type SenderPerson struct {
	// Label is `label`.
	Label string
}

// SenderSwarm is `{"kind":"swarm","handle":…,"reputation":N}`: a swarm participant, shown
// only by profile handle and swarm-scope reputation score.
type SenderSwarm struct {
	// Handle is `handle`.
	Handle string
	// Reputation is `reputation` (ReputationV1.score).
	Reputation uint64
}

// SenderUnknown is any other `kind`; its members are ignored and it encodes as
// `{"kind":"unknown"}` (E4).
type SenderUnknown struct{}

func (SenderAgent) isSenderV1()   {}
func (SenderPerson) isSenderV1()  {}
func (SenderSwarm) isSenderV1()   {}
func (SenderUnknown) isSenderV1() {}

func (s SenderAgent) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "agent")
	e.Str("agent", s.Agent)
	e.Str("instance_label", s.InstanceLabel)
	e.OptStr("instance_id", s.InstanceID)
	e.OptStr("owner", s.Owner)
	e.OptStr("model", s.Model)
	e.Bool("mine", s.Mine)
	e.OptStr("profile_id", s.ProfileID)
	e.Close()
}

func (s SenderPerson) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "person")
	e.Str("label", s.Label)
	e.Close()
}

func (s SenderSwarm) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "swarm")
	e.Str("handle", s.Handle)
	e.Uint("reputation", s.Reputation)
	e.Close()
}

func (SenderUnknown) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", "unknown")
	e.Close()
}

// MarshalJSON writes the tagged wire form.
func (s SenderAgent) MarshalJSON() ([]byte, error) { return marshalWith(128, s.appendJSON) }

// MarshalJSON writes the tagged wire form.
func (s SenderPerson) MarshalJSON() ([]byte, error) { return marshalWith(48, s.appendJSON) }

// MarshalJSON writes the tagged wire form.
func (s SenderSwarm) MarshalJSON() ([]byte, error) { return marshalWith(64, s.appendJSON) }

// MarshalJSON writes `{"kind":"unknown"}`.
func (s SenderUnknown) MarshalJSON() ([]byte, error) { return marshalWith(24, s.appendJSON) }

// DecodeSenderV1 decodes one SenderV1 document.
func DecodeSenderV1(data []byte) (SenderV1, error) {
	var s SenderV1
	err := document(data, "SenderV1", func(d *wire.Decoder) error { return decodeSender(d, &s) })
	if err != nil {
		return nil, err
	}
	return s, nil
}

var senderAgentFields = []string{"agent", "instance_label", "instance_id", "owner", "model", "mine", "profile_id"}

const senderAgentRequired = 1<<0 | 1<<1 | 1<<5

func decodeSender(d *wire.Decoder, dst *SenderV1) error {
	tag, st, err := d.FindTag("kind")
	if err != nil {
		return err
	}
	if st != wire.TagFound {
		return d.TagFault("kind", st, tag, nil)
	}
	switch tag {
	case "agent":
		var s SenderAgent
		var seen uint64
		err := d.Object(func(name []byte) error {
			switch string(name) {
			case "agent":
				seen |= 1 << 0
				return decodeString(d, &s.Agent)
			case "instance_label":
				seen |= 1 << 1
				return decodeString(d, &s.InstanceLabel)
			case "instance_id":
				return d.OptString(&s.InstanceID)
			case "owner":
				return d.OptString(&s.Owner)
			case "model":
				return d.OptString(&s.Model)
			case "mine":
				seen |= 1 << 5
				v, err := d.Bool()
				s.Mine = v
				return err
			case "profile_id":
				return d.OptString(&s.ProfileID)
			}
			return d.Skip()
		})
		if err == nil {
			err = checkRequired(d, seen, senderAgentRequired, senderAgentFields)
		}
		*dst = s
		return err
	case "person":
		var s SenderPerson
		seen := false
		err := d.Object(func(name []byte) error {
			if string(name) == "label" {
				seen = true
				return decodeString(d, &s.Label)
			}
			return d.Skip()
		})
		if err == nil && !seen {
			err = d.Missing("label")
		}
		*dst = s
		return err
	case "swarm":
		var s SenderSwarm
		var seen uint64
		err := d.Object(func(name []byte) error {
			switch string(name) {
			case "handle":
				seen |= 1 << 0
				return decodeString(d, &s.Handle)
			case "reputation":
				seen |= 1 << 1
				v, err := d.Uint(maxU64)
				s.Reputation = v
				return err
			}
			return d.Skip()
		})
		if err == nil {
			err = checkRequired(d, seen, 3, []string{"handle", "reputation"})
		}
		*dst = s
		return err
	}
	// Unknown kind: the remaining members are ignored (the scan in FindTag checked them).
	*dst = SenderUnknown{}
	return d.Skip()
}

func appendSender(e *wire.Encoder, name string, s SenderV1) {
	e.Key(name)
	if s == nil {
		SenderUnknown{}.appendJSON(e)
		return
	}
	s.appendJSON(e)
}

// ---------------------------------------------------------------------------------------------
// MessageDeliveryV1 (hive.md §2.8): `message.deliver`, service → client, lenient.

// MessageDeliveryV1 is a delivered message (`message.deliver`, S→C).
type MessageDeliveryV1 struct {
	// GID is `gid`: the global message id (opaque).
	GID string
	// Seq is `seq`: position on the channel (org) or swarm, gap-free.
	Seq uint64
	// Network is `network`.
	Network NetworkV1
	// Type is `type`.
	Type MessageType
	// From is `from`.
	From SenderV1
	// To is `to` (optional).
	To *string
	// ThreadID is `thread_id`: gid of the thread's first message.
	ThreadID string
	// ReplyTo is `reply_to` (optional).
	ReplyTo *string
	// Deadline is `deadline` (optional): the effective deadline.
	Deadline *UtcTimestamp
	// Body is `body` (optional).
	Body *MessageBodyV1
	// Sealed is `sealed` (optional).
	Sealed *SealedBlobV1
	// Trust is `trust`.
	Trust MessageTrust
	// ServerTime is `server_time`.
	ServerTime UtcTimestamp
	// ExpiresAt is `expires_at`: when the message goes (§8 S11).
	ExpiresAt UtcTimestamp
}

var deliveryFields = []string{"gid", "seq", "network", "type", "from", "to", "thread_id", "reply_to", "deadline", "body", "sealed", "trust", "server_time", "expires_at"}

const deliveryRequired = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<6 | 1<<11 | 1<<12 | 1<<13

// Validate is MessageDeliveryV1.validate() (§2.8), in the spec's order; it checks nothing else
// (no body, sealed, seq, type, to or reply_to checks, exactly as the compatibility target).
func (m *MessageDeliveryV1) Validate() error {
	if err := ValidateID(m.GID, "gid"); err != nil {
		return err
	}
	if err := ValidateID(m.ThreadID, "thread_id"); err != nil {
		return err
	}
	if m.Network == nil {
		return verr("network must be set")
	}
	if err := m.Network.Validate(); err != nil {
		return err
	}
	_, swarmSender := m.From.(SenderSwarm)
	if m.Network.Kind() == NetworkKindSwarm {
		if m.Trust != MessageTrustUntrusted {
			return verr("Swarm content is always untrusted")
		}
		if !swarmSender {
			return verr("Swarm senders appear only as a handle")
		}
	} else if swarmSender {
		return verr("org messages have org senders")
	}
	if (m.Body != nil) == (m.Sealed != nil) {
		return verr("a message carries body or sealed")
	}
	return nil
}

func (m *MessageDeliveryV1) decodeMembers(d *wire.Decoder, skip string) error {
	*m = MessageDeliveryV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "gid":
			seen |= 1 << 0
			return decodeString(d, &m.GID)
		case "seq":
			seen |= 1 << 1
			v, err := d.Uint(maxU64)
			m.Seq = v
			return err
		case "network":
			seen |= 1 << 2
			return decodeNetwork(d, &m.Network)
		case "type":
			seen |= 1 << 3
			t, err := enumDecode(d, messageTypes, MessageTypeUnknown)
			m.Type = t
			return err
		case "from":
			seen |= 1 << 4
			return decodeSender(d, &m.From)
		case "to":
			return d.OptString(&m.To)
		case "thread_id":
			seen |= 1 << 6
			return decodeString(d, &m.ThreadID)
		case "reply_to":
			return d.OptString(&m.ReplyTo)
		case "deadline":
			return decodeOptTimestamp(d, &m.Deadline)
		case "body":
			return decodeOptBody(d, &m.Body)
		case "sealed":
			return decodeOptSealed(d, &m.Sealed)
		case "trust":
			seen |= 1 << 11
			t, err := enumDecode(d, messageTrusts, MessageTrustUnknown)
			m.Trust = t
			return err
		case "server_time":
			seen |= 1 << 12
			return m.ServerTime.decode(d)
		case "expires_at":
			seen |= 1 << 13
			return m.ExpiresAt.decode(d)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, deliveryRequired, deliveryFields)
}

func (m *MessageDeliveryV1) appendMembers(e *wire.Encoder) {
	e.Str("gid", m.GID)
	e.Uint("seq", m.Seq)
	appendNetwork(e, "network", m.Network)
	e.Str("type", enumWire(m.Type, messageTypes))
	appendSender(e, "from", m.From)
	e.OptStr("to", m.To)
	e.Str("thread_id", m.ThreadID)
	e.OptStr("reply_to", m.ReplyTo)
	appendOptTimestamp(e, "deadline", m.Deadline)
	if m.Body != nil {
		e.Key("body")
		m.Body.appendJSON(e)
	}
	if m.Sealed != nil {
		e.Key("sealed")
		m.Sealed.appendJSON(e)
	}
	e.Str("trust", enumWire(m.Trust, messageTrusts))
	m.ServerTime.append(e, "server_time")
	m.ExpiresAt.append(e, "expires_at")
}

func (m *MessageDeliveryV1) appendJSON(e *wire.Encoder) {
	e.Open()
	m.appendMembers(e)
	e.Close()
}

// MarshalJSON writes the wire form (E1–E3).
func (m MessageDeliveryV1) MarshalJSON() ([]byte, error) { return marshalWith(384, m.appendJSON) }

// UnmarshalJSON decodes leniently (§0.2, §0.4); call Validate afterwards.
func (m *MessageDeliveryV1) UnmarshalJSON(data []byte) error {
	return document(data, "MessageDeliveryV1", func(d *wire.Decoder) error { return m.decodeMembers(d, "") })
}

// ---------------------------------------------------------------------------------------------
// MessageReceiptV1 (hive.md §2.9): `message.receipt`, client → service, strict.

// MessageReceiptV1 is a recipient's receipt (`message.receipt`, C→S).
type MessageReceiptV1 struct {
	// GID is `gid`.
	GID string
	// By is `by`: the receiving agent.
	By string
	// State is `state`.
	State MessageReceiptState
}

var receiptFields = []string{"gid", "by", "state"}

// Validate is MessageReceiptV1.validate() (§2.9).
func (r *MessageReceiptV1) Validate() error {
	if err := ValidateID(r.GID, "gid"); err != nil {
		return err
	}
	if err := ValidateID(r.By, "by"); err != nil {
		return err
	}
	if !enumKnown(r.State, receiptStates) {
		return verr("unknown receipt state")
	}
	return nil
}

func (r *MessageReceiptV1) decodeMembers(d *wire.Decoder, skip string, strict bool) error {
	*r = MessageReceiptV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "gid":
			seen |= 1 << 0
			return decodeString(d, &r.GID)
		case "by":
			seen |= 1 << 1
			return decodeString(d, &r.By)
		case "state":
			seen |= 1 << 2
			s, err := enumDecode(d, receiptStates, MessageReceiptStateUnknown)
			r.State = s
			return err
		}
		if (skip != "" && string(name) == skip) || !strict {
			return d.Skip()
		}
		return d.Unknown()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 7, receiptFields)
}

func (r *MessageReceiptV1) appendMembers(e *wire.Encoder) {
	e.Str("gid", r.GID)
	e.Str("by", r.By)
	e.Str("state", enumWire(r.State, receiptStates))
}

// MarshalJSON writes `{"gid":…,"by":…,"state":…}`.
func (r MessageReceiptV1) MarshalJSON() ([]byte, error) {
	return marshalWith(64, func(e *wire.Encoder) { e.Open(); r.appendMembers(e); e.Close() })
}

// UnmarshalJSON decodes strictly.
func (r *MessageReceiptV1) UnmarshalJSON(data []byte) error {
	return document(data, "MessageReceiptV1", func(d *wire.Decoder) error { return r.decodeMembers(d, "", true) })
}

// ---------------------------------------------------------------------------------------------
// Records the service sends (hive.md §2.10): lenient, no Validate.

// MessageStoredV1 is `message.stored` (S→C, to the sender): the message was stored.
type MessageStoredV1 struct {
	// ClientMsgID is `client_msg_id`.
	ClientMsgID string
	// GID is `gid`.
	GID string
	// ThreadID is `thread_id`.
	ThreadID string
	// Network is `network`.
	Network NetworkV1
	// Seq is `seq`: position on the channel or swarm.
	Seq uint64
	// ServerTime is `server_time`.
	ServerTime UtcTimestamp
	// ExpiresAt is `expires_at`.
	ExpiresAt UtcTimestamp
}

var storedFields = []string{"client_msg_id", "gid", "thread_id", "network", "seq", "server_time", "expires_at"}

func (m *MessageStoredV1) decodeMembers(d *wire.Decoder) error {
	*m = MessageStoredV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "client_msg_id":
			seen |= 1 << 0
			return decodeString(d, &m.ClientMsgID)
		case "gid":
			seen |= 1 << 1
			return decodeString(d, &m.GID)
		case "thread_id":
			seen |= 1 << 2
			return decodeString(d, &m.ThreadID)
		case "network":
			seen |= 1 << 3
			return decodeNetwork(d, &m.Network)
		case "seq":
			seen |= 1 << 4
			v, err := d.Uint(maxU64)
			m.Seq = v
			return err
		case "server_time":
			seen |= 1 << 5
			return m.ServerTime.decode(d)
		case "expires_at":
			seen |= 1 << 6
			return m.ExpiresAt.decode(d)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 1<<7-1, storedFields)
}

func (m *MessageStoredV1) appendMembers(e *wire.Encoder) {
	e.Str("client_msg_id", m.ClientMsgID)
	e.Str("gid", m.GID)
	e.Str("thread_id", m.ThreadID)
	appendNetwork(e, "network", m.Network)
	e.Uint("seq", m.Seq)
	m.ServerTime.append(e, "server_time")
	m.ExpiresAt.append(e, "expires_at")
}

// MarshalJSON writes the wire form.
func (m MessageStoredV1) MarshalJSON() ([]byte, error) {
	return marshalWith(256, func(e *wire.Encoder) { e.Open(); m.appendMembers(e); e.Close() })
}

// UnmarshalJSON decodes leniently.
func (m *MessageStoredV1) UnmarshalJSON(data []byte) error {
	return document(data, "MessageStoredV1", m.decodeMembers)
}

// MessageStatusV1 is `message.status` (S→C, to the sender): a recipient's receipt.
type MessageStatusV1 struct {
	// GID is `gid`.
	GID string
	// ClientMsgID is `client_msg_id`.
	ClientMsgID string
	// By is `by`: the recipient (agent id on org, handle on swarm).
	By string
	// State is `state`.
	State MessageReceiptState
	// ServerTime is `server_time`.
	ServerTime UtcTimestamp
}

var statusFields = []string{"gid", "client_msg_id", "by", "state", "server_time"}

func (m *MessageStatusV1) decodeMembers(d *wire.Decoder) error {
	*m = MessageStatusV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "gid":
			seen |= 1 << 0
			return decodeString(d, &m.GID)
		case "client_msg_id":
			seen |= 1 << 1
			return decodeString(d, &m.ClientMsgID)
		case "by":
			seen |= 1 << 2
			return decodeString(d, &m.By)
		case "state":
			seen |= 1 << 3
			s, err := enumDecode(d, receiptStates, MessageReceiptStateUnknown)
			m.State = s
			return err
		case "server_time":
			seen |= 1 << 4
			return m.ServerTime.decode(d)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 1<<5-1, statusFields)
}

func (m *MessageStatusV1) appendMembers(e *wire.Encoder) {
	e.Str("gid", m.GID)
	e.Str("client_msg_id", m.ClientMsgID)
	e.Str("by", m.By)
	e.Str("state", enumWire(m.State, receiptStates))
	m.ServerTime.append(e, "server_time")
}

// MarshalJSON writes the wire form.
func (m MessageStatusV1) MarshalJSON() ([]byte, error) {
	return marshalWith(160, func(e *wire.Encoder) { e.Open(); m.appendMembers(e); e.Close() })
}

// UnmarshalJSON decodes leniently.
func (m *MessageStatusV1) UnmarshalJSON(data []byte) error {
	return document(data, "MessageStatusV1", m.decodeMembers)
}

// TaskEventV1 is `task.event` (S→C), on the task's vault channel. It has no Validate (§2.10):
// a task event is never refused because of its `by`.
type TaskEventV1 struct {
	// Channel is `channel`.
	Channel string
	// Seq is `seq`: the channel's next position (§4.6).
	Seq uint64
	// Number is `number`: the task number in the vault.
	Number uint64
	// Event is `event`.
	Event TaskEventKind
	// State is `state`: the task state after the event (clients trust it over Event).
	State TaskState
	// By is `by` (optional): absent means the service itself.
	By *TaskActorV1
	// ServerTime is `server_time`.
	ServerTime UtcTimestamp
}

var taskEventFields = []string{"channel", "seq", "number", "event", "state", "by", "server_time"}

func (t *TaskEventV1) decodeMembers(d *wire.Decoder) error {
	*t = TaskEventV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "channel":
			seen |= 1 << 0
			return decodeString(d, &t.Channel)
		case "seq":
			seen |= 1 << 1
			v, err := d.Uint(maxU64)
			t.Seq = v
			return err
		case "number":
			seen |= 1 << 2
			v, err := d.Uint(maxU64)
			t.Number = v
			return err
		case "event":
			seen |= 1 << 3
			v, err := enumDecode(d, taskEventKinds, TaskEventKindUnknown)
			t.Event = v
			return err
		case "state":
			seen |= 1 << 4
			v, err := enumDecode(d, taskStates, TaskStateUnknown)
			t.State = v
			return err
		case "by":
			if ok, err := d.Null(); err != nil || ok {
				return err
			}
			t.By = new(TaskActorV1)
			return t.By.decode(d)
		case "server_time":
			seen |= 1 << 6
			return t.ServerTime.decode(d)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 1<<0|1<<1|1<<2|1<<3|1<<4|1<<6, taskEventFields)
}

func (t *TaskEventV1) appendMembers(e *wire.Encoder) {
	e.Str("channel", t.Channel)
	e.Uint("seq", t.Seq)
	e.Uint("number", t.Number)
	e.Str("event", enumWire(t.Event, taskEventKinds))
	e.Str("state", enumWire(t.State, taskStates))
	if t.By != nil {
		e.Key("by")
		t.By.appendJSON(e)
	}
	t.ServerTime.append(e, "server_time")
}

// MarshalJSON writes the wire form.
func (t TaskEventV1) MarshalJSON() ([]byte, error) {
	return marshalWith(224, func(e *wire.Encoder) { e.Open(); t.appendMembers(e); e.Close() })
}

// UnmarshalJSON decodes leniently.
func (t *TaskEventV1) UnmarshalJSON(data []byte) error {
	return document(data, "TaskEventV1", t.decodeMembers)
}

// ---------------------------------------------------------------------------------------------
// MessageListV1 (hive.md §2.11): the answer of GET /v1/messages, lenient.

// MessageListV1 is one page of message history.
type MessageListV1 struct {
	// Schema is `schema`: MessageListSchema.
	Schema string
	// Messages is `messages` (required), at most 200, ascending seq.
	Messages []MessageDeliveryV1
	// Next is `next` (optional): pass it as `after_gid` for the next page; absent at the end.
	Next *string
}

// Validate is MessageListV1.validate() (§2.11): the schema, then `too many messages in one
// page`, then each delivery's Validate in order.
func (l *MessageListV1) Validate() error {
	if err := RequireSchema(l.Schema, MessageListSchema); err != nil {
		return err
	}
	if len(l.Messages) > MaxMessagesPage {
		return verr("too many messages in one page")
	}
	for i := range l.Messages {
		if err := l.Messages[i].Validate(); err != nil {
			return err
		}
	}
	return nil
}

func (l *MessageListV1) decode(d *wire.Decoder) error {
	*l = MessageListV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "schema":
			seen |= 1 << 0
			return decodeString(d, &l.Schema)
		case "messages":
			seen |= 1 << 1
			l.Messages = []MessageDeliveryV1{}
			return d.Array(func(i int) error {
				l.Messages = append(l.Messages, MessageDeliveryV1{})
				return l.Messages[i].decodeMembers(d, "")
			})
		case "next":
			return d.OptString(&l.Next)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 3, []string{"schema", "messages", "next"})
}

func (l *MessageListV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("schema", l.Schema)
	e.Key("messages")
	e.B = append(e.B, '[')
	for i := range l.Messages {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		l.Messages[i].appendJSON(e)
	}
	e.B = append(e.B, ']')
	e.OptStr("next", l.Next)
	e.Close()
}

// MarshalJSON writes the wire form (`messages` always written).
func (l MessageListV1) MarshalJSON() ([]byte, error) {
	return marshalWith(64+384*len(l.Messages), l.appendJSON)
}

// UnmarshalJSON decodes leniently.
func (l *MessageListV1) UnmarshalJSON(data []byte) error {
	return document(data, "MessageListV1", l.decode)
}
