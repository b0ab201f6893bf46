package hive

import (
	"encoding/json"
	"strconv"

	"github.com/agentwire/agentwire/hive/wire"
)

// Bus limits and schemas (hive.md §4).
const (
	// MaxBusFrameBytes is MAX_BUS_FRAME_BYTES: a larger WebSocket frame closes with 1009.
	MaxBusFrameBytes = 2097152
	// MaxPublishBodyBytes bounds the compact `body` of a publish frame.
	MaxPublishBodyBytes = 65536
	// MaxBusLeaseMs is MAX_BUS_LEASE_MS: the longest bus lease (a task claim is one).
	MaxBusLeaseMs = 900000
	// MaxBusReplay bounds a poll answer, a catch-up page and a hello cursor replay per channel.
	MaxBusReplay = 500
	// MaxHelloAgents bounds `agents` of hello.
	MaxHelloAgents = 64
	// MaxHelloCursors bounds `cursors` of hello.
	MaxHelloCursors = 1024
	// BusPollSchema is the `schema` of BusPollV1.
	BusPollSchema = "leanctx.hive.bus-poll/v1"
	// BusEventsSchema is the `schema` of BusEventsV1.
	BusEventsSchema = "leanctx.hive.bus-events/v1"
)

// Frame tags (hive.md §4.2).
const (
	TagHello          = "hello"
	TagPresence       = "presence"
	TagPublish        = "publish"
	TagAck            = "ack"
	TagPublished      = "published"
	TagDeliver        = "deliver"
	TagPresenceUpdate = "presence_update"
	// TagPresenceUpdateAlias is accepted by receivers as TagPresenceUpdate; never written.
	TagPresenceUpdateAlias = "presence.update"
	TagControl             = "control"
	TagHandoffOffer        = "handoff.offer"
	TagHandoffAck          = "handoff.ack"
	TagHandoffReject       = "handoff.reject"
	TagMessage             = "message"
	TagMessageStored       = "message.stored"
	TagMessageDeliver      = "message.deliver"
	TagMessageReceipt      = "message.receipt"
	TagMessageStatus       = "message.status"
	TagTaskEvent           = "task.event"
	TagError               = "error"
)

// FrameDirection says who sends a frame.
type FrameDirection int

// Frame directions.
const (
	// ClientToService frames are strict at the service.
	ClientToService FrameDirection = iota
	// ServiceToClient frames are lenient at the client.
	ServiceToClient
	// BothWays frames are strict at the service and lenient at the client.
	BothWays
)

// Side is the receiving side a frame is decoded for (hive.md §4.2).
type Side int

// Receiving sides.
const (
	// AtService decodes C→S and two-way frames strictly; any other tag is a decode error (the
	// service answers `error`, invalid_request, field `t`).
	AtService Side = iota
	// AtClient decodes S→C and two-way frames leniently; any other tag gives a nil frame and a
	// nil error: the client ignores it.
	AtClient
)

var frameDirections = map[string]FrameDirection{
	TagHello: ClientToService, TagPresence: ClientToService, TagPublish: ClientToService, TagAck: ClientToService,
	TagMessage: ClientToService, TagMessageReceipt: ClientToService,
	TagPublished: ServiceToClient, TagDeliver: ServiceToClient, TagPresenceUpdate: ServiceToClient,
	TagPresenceUpdateAlias: ServiceToClient, TagControl: ServiceToClient, TagMessageStored: ServiceToClient,
	TagMessageDeliver: ServiceToClient, TagMessageStatus: ServiceToClient, TagTaskEvent: ServiceToClient,
	TagError:        ServiceToClient,
	TagHandoffOffer: BothWays, TagHandoffAck: BothWays, TagHandoffReject: BothWays,
}

var (
	serviceTags = []string{TagHello, TagPresence, TagPublish, TagAck, TagHandoffOffer, TagHandoffAck, TagHandoffReject, TagMessage, TagMessageReceipt}
	allTags     = []string{TagHello, TagPresence, TagPublish, TagAck, TagPublished, TagDeliver, TagPresenceUpdate, TagControl, TagHandoffOffer, TagHandoffAck, TagHandoffReject, TagMessage, TagMessageStored, TagMessageDeliver, TagMessageReceipt, TagMessageStatus, TagTaskEvent, TagError}
)

// FrameTags returns the 18 frame tags in the order of hive.md §4.2.
func FrameTags() []string { return append([]string(nil), allTags...) }

// DirectionOf returns the direction of a frame tag and whether the tag is known
// (`presence.update` included).
func DirectionOf(tag string) (FrameDirection, bool) {
	d, ok := frameDirections[tag]
	return d, ok
}

// ---------------------------------------------------------------------------------------------
// Supporting enums (hive.md §4.3): any other string → Unknown.

// PresenceState is the `state` of presence frames.
type PresenceState string

// PresenceState values.
const (
	PresenceStateOnline  PresenceState = "online"
	PresenceStateBusy    PresenceState = "busy"
	PresenceStateIdle    PresenceState = "idle"
	PresenceStateOffline PresenceState = "offline"
	PresenceStateUnknown PresenceState = "unknown"
)

var presenceStates = []PresenceState{PresenceStateOnline, PresenceStateBusy, PresenceStateIdle, PresenceStateOffline}

// MarshalJSON writes the wire value.
func (s PresenceState) MarshalJSON() ([]byte, error) { return enumMarshal(s, presenceStates) }

// UnmarshalJSON reads a string; unknown strings give PresenceStateUnknown.
func (s *PresenceState) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "PresenceState", presenceStates, PresenceStateUnknown, s)
}

// BusPriority is the `priority` of publish and deliver frames.
type BusPriority string

// BusPriority values.
const (
	BusPriorityLow     BusPriority = "low"
	BusPriorityNormal  BusPriority = "normal"
	BusPriorityHigh    BusPriority = "high"
	BusPriorityUnknown BusPriority = "unknown"
)

var busPriorities = []BusPriority{BusPriorityLow, BusPriorityNormal, BusPriorityHigh}

// MarshalJSON writes the wire value.
func (p BusPriority) MarshalJSON() ([]byte, error) { return enumMarshal(p, busPriorities) }

// UnmarshalJSON reads a string; unknown strings give BusPriorityUnknown.
func (p *BusPriority) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "BusPriority", busPriorities, BusPriorityUnknown, p)
}

// BusPrivacy is the `privacy` of publish and deliver frames.
type BusPrivacy string

// BusPrivacy values.
const (
	// BusPrivacyTeam: every follower of the channel; may be shown on the web.
	BusPrivacyTeam BusPrivacy = "team"
	// BusPrivacyPrivate: only `to`; never shown on the web.
	BusPrivacyPrivate BusPrivacy = "private"
	// BusPrivacyUnknown is any other string.
	BusPrivacyUnknown BusPrivacy = "unknown"
)

var busPrivacies = []BusPrivacy{BusPrivacyTeam, BusPrivacyPrivate}

// MarshalJSON writes the wire value.
func (p BusPrivacy) MarshalJSON() ([]byte, error) { return enumMarshal(p, busPrivacies) }

// UnmarshalJSON reads a string; unknown strings give BusPrivacyUnknown.
func (p *BusPrivacy) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "BusPrivacy", busPrivacies, BusPrivacyUnknown, p)
}

// ControlAction is the `action` of a control frame; every action ends leases (§4.3).
type ControlAction string

// ControlAction values.
const (
	ControlActionHold    ControlAction = "hold"
	ControlActionVeto    ControlAction = "veto"
	ControlActionStop    ControlAction = "stop"
	ControlActionUnknown ControlAction = "unknown" // ignored by clients
)

var controlActions = []ControlAction{ControlActionHold, ControlActionVeto, ControlActionStop}

// MarshalJSON writes the wire value.
func (a ControlAction) MarshalJSON() ([]byte, error) { return enumMarshal(a, controlActions) }

// UnmarshalJSON reads a string; unknown strings give ControlActionUnknown.
func (a *ControlAction) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "ControlAction", controlActions, ControlActionUnknown, a)
}

// ---------------------------------------------------------------------------------------------
// Supporting structs (hive.md §4.3).

// BusAgentV1 is an agent an instance runs and the channels it follows (`agents` of hello);
// strict.
type BusAgentV1 struct {
	// AgentID is `agent_id`.
	AgentID string
	// Role is `role`.
	Role string
	// Channels is `channels`: 1–256 channels.
	Channels []string
}

func (a *BusAgentV1) decode(d *wire.Decoder) error {
	*a = BusAgentV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "agent_id":
			seen |= 1
			return decodeString(d, &a.AgentID)
		case "role":
			seen |= 2
			return decodeString(d, &a.Role)
		case "channels":
			seen |= 4
			a.Channels = []string{}
			return decodeStringList(d, &a.Channels)
		}
		return d.Unknown()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 7, []string{"agent_id", "role", "channels"})
}

func decodeStringList(d *wire.Decoder, dst *[]string) error {
	return d.Array(func(i int) error {
		s, err := d.String()
		if err != nil {
			return err
		}
		*dst = append(*dst, s)
		return nil
	})
}

func appendStringList(e *wire.Encoder, name string, list []string) {
	e.Key(name)
	e.B = append(e.B, '[')
	for i, s := range list {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		e.B = wire.AppendString(e.B, s)
	}
	e.B = append(e.B, ']')
}

func (a *BusAgentV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("agent_id", a.AgentID)
	e.Str("role", a.Role)
	appendStringList(e, "channels", a.Channels)
	e.Close()
}

// PresenceProfileV1 is a self-reported profile (`profile` of presence frames). It is strict in
// a C→S presence frame and lenient in an S→C presence_update (project-defined: it follows its
// frame).
type PresenceProfileV1 struct {
	// DisplayName is `display_name` (optional).
	DisplayName *string
	// Model is `model` (optional).
	Model *string
	// Roles is `roles` (defaulted, omitted when empty).
	Roles []string
}

func (p *PresenceProfileV1) decode(d *wire.Decoder, strict bool) error {
	*p = PresenceProfileV1{}
	return d.Object(func(name []byte) error {
		switch string(name) {
		case "display_name":
			return d.OptString(&p.DisplayName)
		case "model":
			return d.OptString(&p.Model)
		case "roles":
			if ok, err := d.Null(); err != nil {
				return err
			} else if ok {
				return d.NullRequired()
			}
			return decodeStringList(d, &p.Roles)
		}
		if strict {
			return d.Unknown()
		}
		return d.Skip()
	})
}

func (p *PresenceProfileV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.OptStr("display_name", p.DisplayName)
	e.OptStr("model", p.Model)
	if len(p.Roles) > 0 {
		appendStringList(e, "roles", p.Roles)
	}
	e.Close()
}

// Validate is the profile part of the presence frame check (§4.4).
func (p *PresenceProfileV1) Validate() error {
	if p.DisplayName != nil {
		if err := ValidateText(*p.DisplayName, 64, "display_name", true); err != nil {
			return err
		}
	}
	if p.Model != nil {
		if err := ValidateID(*p.Model, "model"); err != nil {
			return err
		}
	}
	if len(p.Roles) > 16 {
		return verr("too many roles")
	}
	for _, r := range p.Roles {
		if err := ValidateID(r, "role"); err != nil {
			return err
		}
	}
	return nil
}

// BusCursor is one member of hello `cursors`: the last seq held on a channel.
type BusCursor struct {
	// Channel is the member name.
	Channel string
	// Seq is the member value.
	Seq uint64
}

// ---------------------------------------------------------------------------------------------
// BusFrameV1 (hive.md §4.2): tagged by "t".

// BusFrameV1 is one WebSocket frame. Every variant is a Frame* struct; decode with
// DecodeBusFrame, encode with MarshalJSON (the tag first, E2).
type BusFrameV1 interface {
	// Tag returns the frame's `t`.
	Tag() string
	// MarshalJSON writes `{"t":…,members…}`.
	MarshalJSON() ([]byte, error)
	appendMembers(e *wire.Encoder)
	isBusFrameV1()
}

// FrameHello is `hello` (C→S): the client's first frame; it announces the agents.
type FrameHello struct {
	// InstanceID is `instance_id`: must equal the socket token's instance (H3).
	InstanceID string
	// Agents is `agents`.
	Agents []BusAgentV1
	// Cursors is `cursors` (omitted when empty): the last seq held per channel, in document
	// order.
	Cursors []BusCursor
}

// FramePresence is `presence` (C→S).
type FramePresence struct {
	// AgentID is `agent_id`.
	AgentID string
	// State is `state`.
	State PresenceState
	// Profile is `profile` (optional).
	Profile *PresenceProfileV1
}

// FramePublish is `publish` (C→S).
type FramePublish struct {
	// ClientMsgID is `client_msg_id`.
	ClientMsgID string
	// Channel is `channel`.
	Channel string
	// To is `to` (optional).
	To *string
	// From is `from`.
	From string
	// Kind is `kind`.
	Kind string
	// Priority is `priority`.
	Priority BusPriority
	// Privacy is `privacy`.
	Privacy BusPrivacy
	// Body is `body`: any JSON (required, may be null), kept as its compact E3 form with
	// numbers as written; nil encodes as null.
	Body json.RawMessage
}

// FrameAck is `ack` (C→S): everything up to Seq is acknowledged.
type FrameAck struct {
	// Channel is `channel`.
	Channel string
	// Seq is `seq`, from 1.
	Seq uint64
}

// FramePublished is `published` (S→C): the position of the sender's publish.
type FramePublished struct {
	ClientMsgID string       // `client_msg_id`
	Channel     string       // `channel`
	Seq         uint64       // `seq`
	ServerTime  UtcTimestamp // `server_time`
}

// FrameDeliver is `deliver` (S→C): a published frame for its followers.
type FrameDeliver struct {
	Seq        uint64          // `seq`
	Channel    string          // `channel`
	From       string          // `from` (agent id)
	To         *string         // `to` (optional)
	Kind       string          // `kind`
	Priority   BusPriority     // `priority`
	Privacy    BusPrivacy      // `privacy`
	Body       json.RawMessage // `body` (any JSON; nil encodes as null)
	ServerTime UtcTimestamp    // `server_time`
}

// FramePresenceUpdate is `presence_update` (S→C; `presence.update` accepted on decode).
type FramePresenceUpdate struct {
	AgentID    string             // `agent_id`
	InstanceID string             // `instance_id`
	Role       string             // `role`
	VaultID    string             // `vault_id`
	State      PresenceState      // `state`
	ServerTime UtcTimestamp       // `server_time`
	ProfileID  *string            // `profile_id` (optional)
	Profile    *PresenceProfileV1 // `profile` (optional)
}

// FrameControl is `control` (S→C): hold, veto or stop (§4.3).
type FrameControl struct {
	ControlID   string        // `control_id`
	TargetAgent *string       // `target_agent` (optional)
	TargetRef   *string       // `target_ref` (optional)
	Action      ControlAction // `action`
	Reason      string        // `reason`
	IssuedBy    string        // `issued_by`
	Seq         uint64        // `seq`: the organization's control stream
	ServerTime  UtcTimestamp  // `server_time`
}

// FrameHandoffOffer is `handoff.offer` (both ways).
type FrameHandoffOffer struct {
	HandoffID string       // `handoff_id`
	Channel   string       // `channel`
	From      string       // `from`
	To        string       // `to`
	BundleRef string       // `bundle_ref`
	Deadline  UtcTimestamp // `deadline`
}

// FrameHandoffAck is `handoff.ack` (both ways): the only way a handoff completes.
type FrameHandoffAck struct {
	HandoffID string // `handoff_id`
	By        string // `by`
}

// FrameHandoffReject is `handoff.reject` (both ways).
type FrameHandoffReject struct {
	HandoffID string // `handoff_id`
	By        string // `by`
	Reason    string // `reason`
}

// FrameMessage is `message` (C→S): an AgentMessageV1 flattened next to `t`.
type FrameMessage struct {
	// Message is the message, whose members sit next to `t`.
	Message AgentMessageV1
}

// FrameMessageStored is `message.stored` (S→C): a MessageStoredV1 flattened next to `t`.
type FrameMessageStored struct {
	// Stored is the record, whose members sit next to `t`.
	Stored MessageStoredV1
}

// FrameMessageDeliver is `message.deliver` (S→C): a MessageDeliveryV1 flattened next to `t`.
type FrameMessageDeliver struct {
	// Delivery is the delivery, whose members sit next to `t`.
	Delivery MessageDeliveryV1
}

// FrameMessageReceipt is `message.receipt` (C→S): a MessageReceiptV1 flattened next to `t`.
type FrameMessageReceipt struct {
	// Receipt is the receipt, whose members sit next to `t`.
	Receipt MessageReceiptV1
}

// FrameMessageStatus is `message.status` (S→C): a MessageStatusV1 flattened next to `t`.
type FrameMessageStatus struct {
	// Status is the status, whose members sit next to `t`.
	Status MessageStatusV1
}

// FrameTaskEvent is `task.event` (S→C): a TaskEventV1 flattened next to `t`.
type FrameTaskEvent struct {
	// Event is the task event, whose members sit next to `t`.
	Event TaskEventV1
}

// FrameError is `error` (S→C).
type FrameError struct {
	ClientMsgID *string           // `client_msg_id` (optional)
	HandoffID   *string           // `handoff_id` (optional)
	Error       HiveErrorDetailV1 // `error`
}

func (FrameHello) isBusFrameV1()          {}
func (FramePresence) isBusFrameV1()       {}
func (FramePublish) isBusFrameV1()        {}
func (FrameAck) isBusFrameV1()            {}
func (FramePublished) isBusFrameV1()      {}
func (FrameDeliver) isBusFrameV1()        {}
func (FramePresenceUpdate) isBusFrameV1() {}
func (FrameControl) isBusFrameV1()        {}
func (FrameHandoffOffer) isBusFrameV1()   {}
func (FrameHandoffAck) isBusFrameV1()     {}
func (FrameHandoffReject) isBusFrameV1()  {}
func (FrameMessage) isBusFrameV1()        {}
func (FrameMessageStored) isBusFrameV1()  {}
func (FrameMessageDeliver) isBusFrameV1() {}
func (FrameMessageReceipt) isBusFrameV1() {}
func (FrameMessageStatus) isBusFrameV1()  {}
func (FrameTaskEvent) isBusFrameV1()      {}
func (FrameError) isBusFrameV1()          {}

// Tag returns "hello".
func (FrameHello) Tag() string { return TagHello }

// Tag returns "presence".
func (FramePresence) Tag() string { return TagPresence }

// Tag returns "publish".
func (FramePublish) Tag() string { return TagPublish }

// Tag returns "ack".
func (FrameAck) Tag() string { return TagAck }

// Tag returns "published".
func (FramePublished) Tag() string { return TagPublished }

// Tag returns "deliver".
func (FrameDeliver) Tag() string { return TagDeliver }

// Tag returns "presence_update" (the spelling a sender MUST write).
func (FramePresenceUpdate) Tag() string { return TagPresenceUpdate }

// Tag returns "control".
func (FrameControl) Tag() string { return TagControl }

// Tag returns "handoff.offer".
func (FrameHandoffOffer) Tag() string { return TagHandoffOffer }

// Tag returns "handoff.ack".
func (FrameHandoffAck) Tag() string { return TagHandoffAck }

// Tag returns "handoff.reject".
func (FrameHandoffReject) Tag() string { return TagHandoffReject }

// Tag returns "message".
func (FrameMessage) Tag() string { return TagMessage }

// Tag returns "message.stored".
func (FrameMessageStored) Tag() string { return TagMessageStored }

// Tag returns "message.deliver".
func (FrameMessageDeliver) Tag() string { return TagMessageDeliver }

// Tag returns "message.receipt".
func (FrameMessageReceipt) Tag() string { return TagMessageReceipt }

// Tag returns "message.status".
func (FrameMessageStatus) Tag() string { return TagMessageStatus }

// Tag returns "task.event".
func (FrameTaskEvent) Tag() string { return TagTaskEvent }

// Tag returns "error".
func (FrameError) Tag() string { return TagError }

func (f FrameHello) appendMembers(e *wire.Encoder) {
	e.Str("instance_id", f.InstanceID)
	e.Key("agents")
	e.B = append(e.B, '[')
	for i := range f.Agents {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		f.Agents[i].appendJSON(e)
	}
	e.B = append(e.B, ']')
	if len(f.Cursors) > 0 {
		e.Key("cursors")
		e.Open()
		for _, c := range f.Cursors {
			e.Uint(c.Channel, c.Seq)
		}
		e.Close()
	}
}

func (f FramePresence) appendMembers(e *wire.Encoder) {
	e.Str("agent_id", f.AgentID)
	e.Str("state", enumWire(f.State, presenceStates))
	if f.Profile != nil {
		e.Key("profile")
		f.Profile.appendJSON(e)
	}
}

func appendBody(e *wire.Encoder, body json.RawMessage) {
	e.Key("body")
	if len(body) == 0 {
		e.B = append(e.B, "null"...)
		return
	}
	compact, err := wire.Compact(body, "body")
	if err != nil {
		e.SetErr(err)
		return
	}
	e.B = append(e.B, compact...)
}

func (f FramePublish) appendMembers(e *wire.Encoder) {
	e.Str("client_msg_id", f.ClientMsgID)
	e.Str("channel", f.Channel)
	e.OptStr("to", f.To)
	e.Str("from", f.From)
	e.Str("kind", f.Kind)
	e.Str("priority", enumWire(f.Priority, busPriorities))
	e.Str("privacy", enumWire(f.Privacy, busPrivacies))
	appendBody(e, f.Body)
}

func (f FrameAck) appendMembers(e *wire.Encoder) {
	e.Str("channel", f.Channel)
	e.Uint("seq", f.Seq)
}

func (f FramePublished) appendMembers(e *wire.Encoder) {
	e.Str("client_msg_id", f.ClientMsgID)
	e.Str("channel", f.Channel)
	e.Uint("seq", f.Seq)
	f.ServerTime.append(e, "server_time")
}

func (f FrameDeliver) appendMembers(e *wire.Encoder) {
	e.Uint("seq", f.Seq)
	e.Str("channel", f.Channel)
	e.Str("from", f.From)
	e.OptStr("to", f.To)
	e.Str("kind", f.Kind)
	e.Str("priority", enumWire(f.Priority, busPriorities))
	e.Str("privacy", enumWire(f.Privacy, busPrivacies))
	appendBody(e, f.Body)
	f.ServerTime.append(e, "server_time")
}

func (f FramePresenceUpdate) appendMembers(e *wire.Encoder) {
	e.Str("agent_id", f.AgentID)
	e.Str("instance_id", f.InstanceID)
	e.Str("role", f.Role)
	e.Str("vault_id", f.VaultID)
	e.Str("state", enumWire(f.State, presenceStates))
	f.ServerTime.append(e, "server_time")
	e.OptStr("profile_id", f.ProfileID)
	if f.Profile != nil {
		e.Key("profile")
		f.Profile.appendJSON(e)
	}
}

func (f FrameControl) appendMembers(e *wire.Encoder) {
	e.Str("control_id", f.ControlID)
	e.OptStr("target_agent", f.TargetAgent)
	e.OptStr("target_ref", f.TargetRef)
	e.Str("action", enumWire(f.Action, controlActions))
	e.Str("reason", f.Reason)
	e.Str("issued_by", f.IssuedBy)
	e.Uint("seq", f.Seq)
	f.ServerTime.append(e, "server_time")
}

func (f FrameHandoffOffer) appendMembers(e *wire.Encoder) {
	e.Str("handoff_id", f.HandoffID)
	e.Str("channel", f.Channel)
	e.Str("from", f.From)
	e.Str("to", f.To)
	e.Str("bundle_ref", f.BundleRef)
	f.Deadline.append(e, "deadline")
}

func (f FrameHandoffAck) appendMembers(e *wire.Encoder) {
	e.Str("handoff_id", f.HandoffID)
	e.Str("by", f.By)
}

func (f FrameHandoffReject) appendMembers(e *wire.Encoder) {
	e.Str("handoff_id", f.HandoffID)
	e.Str("by", f.By)
	e.Str("reason", f.Reason)
}

func (f FrameMessage) appendMembers(e *wire.Encoder)        { f.Message.appendMembers(e) }
func (f FrameMessageStored) appendMembers(e *wire.Encoder)  { f.Stored.appendMembers(e) }
func (f FrameMessageDeliver) appendMembers(e *wire.Encoder) { f.Delivery.appendMembers(e) }
func (f FrameMessageReceipt) appendMembers(e *wire.Encoder) { f.Receipt.appendMembers(e) }
func (f FrameMessageStatus) appendMembers(e *wire.Encoder)  { f.Status.appendMembers(e) }
func (f FrameTaskEvent) appendMembers(e *wire.Encoder)      { f.Event.appendMembers(e) }

func (f FrameError) appendMembers(e *wire.Encoder) {
	e.OptStr("client_msg_id", f.ClientMsgID)
	e.OptStr("handoff_id", f.HandoffID)
	e.Key("error")
	f.Error.appendJSON(e)
}

func appendFrame(e *wire.Encoder, f BusFrameV1) {
	e.Open()
	e.Str("t", f.Tag())
	f.appendMembers(e)
	e.Close()
}

func marshalFrame(f BusFrameV1) ([]byte, error) {
	return marshalWith(256, func(e *wire.Encoder) { appendFrame(e, f) })
}

// MarshalJSON writes the frame, `t` first.
func (f FrameHello) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FramePresence) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first; Body must be valid JSON.
func (f FramePublish) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameAck) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FramePublished) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first; Body must be valid JSON.
func (f FrameDeliver) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame with `"t":"presence_update"` first.
func (f FramePresenceUpdate) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameControl) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameHandoffOffer) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameHandoffAck) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameHandoffReject) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameMessage) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameMessageStored) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameMessageDeliver) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameMessageReceipt) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameMessageStatus) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameTaskEvent) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// MarshalJSON writes the frame, `t` first.
func (f FrameError) MarshalJSON() ([]byte, error) { return marshalFrame(f) }

// ---------------------------------------------------------------------------------------------
// Decoding.

// DecodeBusFrame decodes one frame as side receives it (§4.2): at the service, C→S and two-way
// frames strictly and any other tag as a decode error; at the client, S→C and two-way frames
// leniently and any other tag as (nil, nil), an ignored frame.
func DecodeBusFrame(data []byte, side Side) (BusFrameV1, error) {
	var f BusFrameV1
	err := document(data, "BusFrameV1", func(d *wire.Decoder) error {
		var err error
		f, err = decodeFrame(d, side, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// DecodeBusFrameByTag decodes one frame as its receiving side would (cli.md `bus-frame`): C→S
// and two-way tags strictly as at the service, S→C tags leniently as at the client; an unknown
// tag is a decode error.
func DecodeBusFrameByTag(data []byte) (BusFrameV1, error) {
	var f BusFrameV1
	err := document(data, "BusFrameV1", func(d *wire.Decoder) error {
		var err error
		f, err = decodeFrame(d, AtService, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

func decodeFrame(d *wire.Decoder, side Side, byTag bool) (BusFrameV1, error) {
	tag, st, err := d.FindTag("t")
	if err != nil {
		return nil, err
	}
	if st != wire.TagFound {
		return nil, d.TagFault("t", st, tag, nil)
	}
	dir, known := frameDirections[tag]
	if byTag && known && dir == ServiceToClient {
		side = AtClient
	}
	switch {
	case !known && side == AtService && byTag:
		return nil, d.TagFault("t", st, tag, allTags)
	case side == AtService && known && dir == ServiceToClient:
		return nil, d.FailMember("t", "names a service-to-client frame: "+wire.AppendQuoted(tag))
	case side == AtService && !known:
		return nil, d.TagFault("t", st, tag, serviceTags)
	case side == AtClient && (!known || dir == ClientToService):
		return nil, d.Skip()
	}
	strict := side == AtService
	switch tag {
	case TagHello:
		var f FrameHello
		err := decodeHello(d, &f)
		return f, err
	case TagPresence:
		var f FramePresence
		return decodePresence(d, &f)
	case TagPublish:
		var f FramePublish
		return decodePublish(d, &f)
	case TagAck:
		var f FrameAck
		var seen uint64
		err := frameObject(d, true, func(name string) (bool, error) {
			switch name {
			case "channel":
				seen |= 1
				return true, decodeString(d, &f.Channel)
			case "seq":
				seen |= 2
				v, err := d.Uint(maxU64)
				f.Seq = v
				return true, err
			}
			return false, nil
		})
		if err == nil {
			err = checkRequired(d, seen, 3, []string{"channel", "seq"})
		}
		return f, err
	case TagMessage:
		var f FrameMessage
		err := f.Message.decodeMembers(d, "t")
		return f, err
	case TagMessageReceipt:
		var f FrameMessageReceipt
		err := f.Receipt.decodeMembers(d, "t", true)
		return f, err
	case TagHandoffOffer:
		return decodeHandoffOffer(d, strict)
	case TagHandoffAck, TagHandoffReject:
		return decodeHandoffReply(d, tag, strict)
	case TagPublished:
		return decodePublished(d)
	case TagDeliver:
		return decodeDeliver(d)
	case TagPresenceUpdate, TagPresenceUpdateAlias:
		return decodePresenceUpdate(d)
	case TagControl:
		return decodeControl(d)
	case TagMessageStored:
		var f FrameMessageStored
		err := f.Stored.decodeMembers(d)
		return f, err
	case TagMessageDeliver:
		var f FrameMessageDeliver
		err := f.Delivery.decodeMembers(d, "t")
		return f, err
	case TagMessageStatus:
		var f FrameMessageStatus
		err := f.Status.decodeMembers(d)
		return f, err
	case TagTaskEvent:
		var f FrameTaskEvent
		err := f.Event.decodeMembers(d)
		return f, err
	case TagError:
		return decodeErrorFrame(d)
	}
	return nil, d.TagFault("t", st, tag, allTags)
}

// frameObject iterates a frame's members: the tag `t` is passed over, fn handles known members
// (returning handled=false for others), and other members are refused when strict, else
// skipped.
func frameObject(d *wire.Decoder, strict bool, fn func(name string) (bool, error)) error {
	return d.Object(func(name []byte) error {
		if string(name) == "t" {
			return d.Skip()
		}
		handled, err := fn(string(name))
		if handled || err != nil {
			return err
		}
		if strict {
			return d.Unknown()
		}
		return d.Skip()
	})
}

func decodeHello(d *wire.Decoder, f *FrameHello) error {
	var seen uint64
	err := frameObject(d, true, func(name string) (bool, error) {
		switch name {
		case "instance_id":
			seen |= 1
			return true, decodeString(d, &f.InstanceID)
		case "agents":
			seen |= 2
			f.Agents = []BusAgentV1{}
			return true, d.Array(func(i int) error {
				f.Agents = append(f.Agents, BusAgentV1{})
				return f.Agents[i].decode(d)
			})
		case "cursors":
			if ok, err := d.Null(); err != nil || ok {
				return true, err
			}
			return true, d.Object(func(ch []byte) error {
				v, err := d.Uint(maxU64)
				f.Cursors = append(f.Cursors, BusCursor{Channel: string(ch), Seq: v})
				return err
			})
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 3, []string{"instance_id", "agents", "cursors"})
}

func decodePresence(d *wire.Decoder, f *FramePresence) (BusFrameV1, error) {
	var seen uint64
	err := frameObject(d, true, func(name string) (bool, error) {
		switch name {
		case "agent_id":
			seen |= 1
			return true, decodeString(d, &f.AgentID)
		case "state":
			seen |= 2
			s, err := enumDecode(d, presenceStates, PresenceStateUnknown)
			f.State = s
			return true, err
		case "profile":
			if ok, err := d.Null(); err != nil || ok {
				return true, err
			}
			f.Profile = new(PresenceProfileV1)
			return true, f.Profile.decode(d, true)
		}
		return false, nil
	})
	if err == nil {
		err = checkRequired(d, seen, 3, []string{"agent_id", "state", "profile"})
	}
	return *f, err
}

func decodeRequiredBody(d *wire.Decoder, dst *json.RawMessage) error {
	raw, err := d.Capture()
	*dst = raw
	return err
}

func decodePublish(d *wire.Decoder, f *FramePublish) (BusFrameV1, error) {
	var seen uint64
	err := frameObject(d, true, func(name string) (bool, error) {
		switch name {
		case "client_msg_id":
			seen |= 1 << 0
			return true, decodeString(d, &f.ClientMsgID)
		case "channel":
			seen |= 1 << 1
			return true, decodeString(d, &f.Channel)
		case "to":
			return true, d.OptString(&f.To)
		case "from":
			seen |= 1 << 3
			return true, decodeString(d, &f.From)
		case "kind":
			seen |= 1 << 4
			return true, decodeString(d, &f.Kind)
		case "priority":
			seen |= 1 << 5
			p, err := enumDecode(d, busPriorities, BusPriorityUnknown)
			f.Priority = p
			return true, err
		case "privacy":
			seen |= 1 << 6
			p, err := enumDecode(d, busPrivacies, BusPrivacyUnknown)
			f.Privacy = p
			return true, err
		case "body":
			seen |= 1 << 7
			return true, decodeRequiredBody(d, &f.Body)
		}
		return false, nil
	})
	if err == nil {
		err = checkRequired(d, seen, 1<<0|1<<1|1<<3|1<<4|1<<5|1<<6|1<<7, []string{"client_msg_id", "channel", "to", "from", "kind", "priority", "privacy", "body"})
	}
	return *f, err
}

func decodeHandoffOffer(d *wire.Decoder, strict bool) (BusFrameV1, error) {
	var f FrameHandoffOffer
	var seen uint64
	err := frameObject(d, strict, func(name string) (bool, error) {
		switch name {
		case "handoff_id":
			seen |= 1 << 0
			return true, decodeString(d, &f.HandoffID)
		case "channel":
			seen |= 1 << 1
			return true, decodeString(d, &f.Channel)
		case "from":
			seen |= 1 << 2
			return true, decodeString(d, &f.From)
		case "to":
			seen |= 1 << 3
			return true, decodeString(d, &f.To)
		case "bundle_ref":
			seen |= 1 << 4
			return true, decodeString(d, &f.BundleRef)
		case "deadline":
			seen |= 1 << 5
			return true, f.Deadline.decode(d)
		}
		return false, nil
	})
	if err == nil {
		err = checkRequired(d, seen, 1<<6-1, []string{"handoff_id", "channel", "from", "to", "bundle_ref", "deadline"})
	}
	return f, err
}

func decodeHandoffReply(d *wire.Decoder, tag string, strict bool) (BusFrameV1, error) {
	var id, by, reason string
	var seen uint64
	reject := tag == TagHandoffReject
	err := frameObject(d, strict, func(name string) (bool, error) {
		switch name {
		case "handoff_id":
			seen |= 1
			return true, decodeString(d, &id)
		case "by":
			seen |= 2
			return true, decodeString(d, &by)
		case "reason":
			if !reject {
				return false, nil
			}
			seen |= 4
			return true, decodeString(d, &reason)
		}
		return false, nil
	})
	if reject {
		if err == nil {
			err = checkRequired(d, seen, 7, []string{"handoff_id", "by", "reason"})
		}
		return FrameHandoffReject{HandoffID: id, By: by, Reason: reason}, err
	}
	if err == nil {
		err = checkRequired(d, seen, 3, []string{"handoff_id", "by"})
	}
	return FrameHandoffAck{HandoffID: id, By: by}, err
}

func decodePublished(d *wire.Decoder) (BusFrameV1, error) {
	var f FramePublished
	var seen uint64
	err := frameObject(d, false, func(name string) (bool, error) {
		switch name {
		case "client_msg_id":
			seen |= 1
			return true, decodeString(d, &f.ClientMsgID)
		case "channel":
			seen |= 2
			return true, decodeString(d, &f.Channel)
		case "seq":
			seen |= 4
			v, err := d.Uint(maxU64)
			f.Seq = v
			return true, err
		case "server_time":
			seen |= 8
			return true, f.ServerTime.decode(d)
		}
		return false, nil
	})
	if err == nil {
		err = checkRequired(d, seen, 15, []string{"client_msg_id", "channel", "seq", "server_time"})
	}
	return f, err
}

func decodeDeliver(d *wire.Decoder) (BusFrameV1, error) {
	var f FrameDeliver
	var seen uint64
	err := frameObject(d, false, func(name string) (bool, error) {
		switch name {
		case "seq":
			seen |= 1 << 0
			v, err := d.Uint(maxU64)
			f.Seq = v
			return true, err
		case "channel":
			seen |= 1 << 1
			return true, decodeString(d, &f.Channel)
		case "from":
			seen |= 1 << 2
			return true, decodeString(d, &f.From)
		case "to":
			return true, d.OptString(&f.To)
		case "kind":
			seen |= 1 << 4
			return true, decodeString(d, &f.Kind)
		case "priority":
			seen |= 1 << 5
			p, err := enumDecode(d, busPriorities, BusPriorityUnknown)
			f.Priority = p
			return true, err
		case "privacy":
			seen |= 1 << 6
			p, err := enumDecode(d, busPrivacies, BusPrivacyUnknown)
			f.Privacy = p
			return true, err
		case "body":
			seen |= 1 << 7
			return true, decodeRequiredBody(d, &f.Body)
		case "server_time":
			seen |= 1 << 8
			return true, f.ServerTime.decode(d)
		}
		return false, nil
	})
	if err == nil {
		err = checkRequired(d, seen, 1<<9-1-1<<3, []string{"seq", "channel", "from", "to", "kind", "priority", "privacy", "body", "server_time"})
	}
	return f, err
}

func decodePresenceUpdate(d *wire.Decoder) (BusFrameV1, error) {
	var f FramePresenceUpdate
	var seen uint64
	err := frameObject(d, false, func(name string) (bool, error) {
		switch name {
		case "agent_id":
			seen |= 1 << 0
			return true, decodeString(d, &f.AgentID)
		case "instance_id":
			seen |= 1 << 1
			return true, decodeString(d, &f.InstanceID)
		case "role":
			seen |= 1 << 2
			return true, decodeString(d, &f.Role)
		case "vault_id":
			seen |= 1 << 3
			return true, decodeString(d, &f.VaultID)
		case "state":
			seen |= 1 << 4
			s, err := enumDecode(d, presenceStates, PresenceStateUnknown)
			f.State = s
			return true, err
		case "server_time":
			seen |= 1 << 5
			return true, f.ServerTime.decode(d)
		case "profile_id":
			return true, d.OptString(&f.ProfileID)
		case "profile":
			if ok, err := d.Null(); err != nil || ok {
				return true, err
			}
			f.Profile = new(PresenceProfileV1)
			return true, f.Profile.decode(d, false)
		}
		return false, nil
	})
	if err == nil {
		err = checkRequired(d, seen, 1<<6-1, []string{"agent_id", "instance_id", "role", "vault_id", "state", "server_time"})
	}
	return f, err
}

func decodeControl(d *wire.Decoder) (BusFrameV1, error) {
	var f FrameControl
	var seen uint64
	err := frameObject(d, false, func(name string) (bool, error) {
		switch name {
		case "control_id":
			seen |= 1 << 0
			return true, decodeString(d, &f.ControlID)
		case "target_agent":
			return true, d.OptString(&f.TargetAgent)
		case "target_ref":
			return true, d.OptString(&f.TargetRef)
		case "action":
			seen |= 1 << 3
			a, err := enumDecode(d, controlActions, ControlActionUnknown)
			f.Action = a
			return true, err
		case "reason":
			seen |= 1 << 4
			return true, decodeString(d, &f.Reason)
		case "issued_by":
			seen |= 1 << 5
			return true, decodeString(d, &f.IssuedBy)
		case "seq":
			seen |= 1 << 6
			v, err := d.Uint(maxU64)
			f.Seq = v
			return true, err
		case "server_time":
			seen |= 1 << 7
			return true, f.ServerTime.decode(d)
		}
		return false, nil
	})
	if err == nil {
		err = checkRequired(d, seen, 1<<0|1<<3|1<<4|1<<5|1<<6|1<<7, []string{"control_id", "target_agent", "target_ref", "action", "reason", "issued_by", "seq", "server_time"})
	}
	return f, err
}

func decodeErrorFrame(d *wire.Decoder) (BusFrameV1, error) {
	var f FrameError
	seen := false
	err := frameObject(d, false, func(name string) (bool, error) {
		switch name {
		case "client_msg_id":
			return true, d.OptString(&f.ClientMsgID)
		case "handoff_id":
			return true, d.OptString(&f.HandoffID)
		case "error":
			seen = true
			return true, f.Error.decode(d)
		}
		return false, nil
	})
	if err == nil && !seen {
		err = d.Missing("error")
	}
	return f, err
}

// ---------------------------------------------------------------------------------------------
// Frame validation (hive.md §4.4).

// Validate checks a hello frame (§4.4).
func (f *FrameHello) Validate() error {
	if err := ValidateID(f.InstanceID, "instance_id"); err != nil {
		return err
	}
	if len(f.Agents) > MaxHelloAgents {
		return verr("too many agents")
	}
	for i, a := range f.Agents {
		if err := ValidateID(a.AgentID, "agent_id"); err != nil {
			return err
		}
		if err := ValidateID(a.Role, "role"); err != nil {
			return err
		}
		if len(a.Channels) < 1 || len(a.Channels) > 256 {
			return verr("an agent follows 1-256 channels")
		}
		for _, c := range a.Channels {
			if err := ValidateChannel(c); err != nil {
				return err
			}
		}
		for _, b := range f.Agents[:i] {
			if b.AgentID == a.AgentID {
				return verr("duplicate agent_id")
			}
		}
	}
	if len(f.Cursors) > MaxHelloCursors {
		return verr("too many cursors")
	}
	for _, c := range f.Cursors {
		if err := ValidateChannel(c.Channel); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks a presence frame (§4.4).
func (f *FramePresence) Validate() error {
	if err := ValidateID(f.AgentID, "agent_id"); err != nil {
		return err
	}
	if !enumKnown(f.State, presenceStates) {
		return verr("unknown presence state")
	}
	if f.Profile != nil {
		return f.Profile.Validate()
	}
	return nil
}

// Validate checks a publish frame (§4.4).
func (f *FramePublish) Validate() error {
	if err := ValidateID(f.ClientMsgID, "client_msg_id"); err != nil {
		return err
	}
	if err := ValidateChannel(f.Channel); err != nil {
		return err
	}
	if err := ValidateID(f.From, "from"); err != nil {
		return err
	}
	if f.To != nil {
		if err := ValidateID(*f.To, "to"); err != nil {
			return err
		}
	}
	if err := ValidateID(f.Kind, "kind"); err != nil {
		return err
	}
	if !enumKnown(f.Priority, busPriorities) {
		return verr("unknown priority")
	}
	if !enumKnown(f.Privacy, busPrivacies) {
		return verr("unknown privacy")
	}
	if f.Privacy == BusPrivacyPrivate && f.To == nil {
		return verr("private frames name a recipient")
	}
	size := 4 // null
	if len(f.Body) > 0 {
		compact, err := wire.Compact(f.Body, "body")
		if err != nil {
			return verr("body must be JSON")
		}
		size = len(compact)
	}
	if size > MaxPublishBodyBytes {
		return verr("body exceeds the " + strconv.Itoa(MaxPublishBodyBytes) + " byte limit")
	}
	return nil
}

// Validate checks an ack frame (§4.4).
func (f *FrameAck) Validate() error {
	if err := ValidateChannel(f.Channel); err != nil {
		return err
	}
	if f.Seq == 0 {
		return verr("seq starts at 1")
	}
	return nil
}

// Validate checks a handoff.offer frame (§4.4).
func (f *FrameHandoffOffer) Validate() error {
	if err := ValidateID(f.HandoffID, "handoff_id"); err != nil {
		return err
	}
	if err := ValidateChannel(f.Channel); err != nil {
		return err
	}
	if err := ValidateID(f.From, "from"); err != nil {
		return err
	}
	if err := ValidateID(f.To, "to"); err != nil {
		return err
	}
	return ValidateID(f.BundleRef, "bundle_ref")
}

// Validate checks a handoff.ack frame (§4.4).
func (f *FrameHandoffAck) Validate() error {
	if err := ValidateID(f.HandoffID, "handoff_id"); err != nil {
		return err
	}
	return ValidateID(f.By, "by")
}

// Validate checks a handoff.reject frame (§4.4).
func (f *FrameHandoffReject) Validate() error {
	if err := ValidateID(f.HandoffID, "handoff_id"); err != nil {
		return err
	}
	if err := ValidateID(f.By, "by"); err != nil {
		return err
	}
	return ValidateText(f.Reason, 1000, "reason", true)
}

// ValidateFrame applies the §4.4 checks of f's variant: hello, presence, publish, ack, the
// handoff frames, and Validate of the wrapped AgentMessageV1, MessageReceiptV1 or
// MessageDeliveryV1. The other S→C frames have no checks (nil).
func ValidateFrame(f BusFrameV1) error {
	switch x := f.(type) {
	case FrameHello:
		return x.Validate()
	case FramePresence:
		return x.Validate()
	case FramePublish:
		return x.Validate()
	case FrameAck:
		return x.Validate()
	case FrameHandoffOffer:
		return x.Validate()
	case FrameHandoffAck:
		return x.Validate()
	case FrameHandoffReject:
		return x.Validate()
	case FrameMessage:
		return x.Message.Validate()
	case FrameMessageReceipt:
		return x.Receipt.Validate()
	case FrameMessageDeliver:
		return x.Delivery.Validate()
	}
	return nil
}

// ---------------------------------------------------------------------------------------------
// Poll and catch-up answers (hive.md §4.1, project-defined): lenient.

// BusPollV1 answers `GET /v1/bus/poll`: at most 500 frames the socket would have received.
type BusPollV1 struct {
	// Schema is `schema`: BusPollSchema.
	Schema string
	// Frames is `frames`, decoded as at the client; frames a client ignores are dropped.
	Frames []BusFrameV1
	// Cursor is `cursor`: opaque, passed back next time.
	Cursor string
}

// Validate checks the schema (§1.4).
func (p *BusPollV1) Validate() error { return RequireSchema(p.Schema, BusPollSchema) }

func decodeClientFrames(d *wire.Decoder, dst *[]BusFrameV1) error {
	*dst = []BusFrameV1{}
	return d.Array(func(i int) error {
		f, err := decodeFrame(d, AtClient, false)
		if err == nil && f != nil {
			*dst = append(*dst, f)
		}
		return err
	})
}

func appendFrames(e *wire.Encoder, name string, frames []BusFrameV1) {
	e.Key(name)
	e.B = append(e.B, '[')
	for i, f := range frames {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		if f == nil {
			e.B = append(e.B, "null"...)
			e.SetErr(verr("frames must not hold nil"))
			continue
		}
		appendFrame(e, f)
	}
	e.B = append(e.B, ']')
}

func (p *BusPollV1) decode(d *wire.Decoder) error {
	*p = BusPollV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "schema":
			seen |= 1
			return decodeString(d, &p.Schema)
		case "frames":
			seen |= 2
			return decodeClientFrames(d, &p.Frames)
		case "cursor":
			seen |= 4
			return decodeString(d, &p.Cursor)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 7, []string{"schema", "frames", "cursor"})
}

// MarshalJSON writes `{"schema":…,"frames":[…],"cursor":…}`.
func (p BusPollV1) MarshalJSON() ([]byte, error) {
	return marshalWith(256, func(e *wire.Encoder) {
		e.Open()
		e.Str("schema", p.Schema)
		appendFrames(e, "frames", p.Frames)
		e.Str("cursor", p.Cursor)
		e.Close()
	})
}

// UnmarshalJSON decodes leniently.
func (p *BusPollV1) UnmarshalJSON(data []byte) error { return document(data, "BusPollV1", p.decode) }

// BusEventsV1 answers the channel catch-up route: deliver, message.deliver and task.event
// frames with seq > after_seq, ascending.
type BusEventsV1 struct {
	// Schema is `schema`: BusEventsSchema.
	Schema string
	// Channel is `channel`.
	Channel string
	// Events is `events`, decoded as at the client.
	Events []BusFrameV1
	// NextAfterSeq is `next_after_seq` (optional): present iff more events exist.
	NextAfterSeq *uint64
}

// Validate checks the schema (§1.4).
func (p *BusEventsV1) Validate() error { return RequireSchema(p.Schema, BusEventsSchema) }

func (p *BusEventsV1) decode(d *wire.Decoder) error {
	*p = BusEventsV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "schema":
			seen |= 1
			return decodeString(d, &p.Schema)
		case "channel":
			seen |= 2
			return decodeString(d, &p.Channel)
		case "events":
			seen |= 4
			return decodeClientFrames(d, &p.Events)
		case "next_after_seq":
			return d.OptUint(&p.NextAfterSeq, maxU64)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 7, []string{"schema", "channel", "events"})
}

// MarshalJSON writes `{"schema":…,"channel":…,"events":[…],"next_after_seq":N}`.
func (p BusEventsV1) MarshalJSON() ([]byte, error) {
	return marshalWith(256, func(e *wire.Encoder) {
		e.Open()
		e.Str("schema", p.Schema)
		e.Str("channel", p.Channel)
		appendFrames(e, "events", p.Events)
		e.OptUint("next_after_seq", p.NextAfterSeq)
		e.Close()
	})
}

// UnmarshalJSON decodes leniently.
func (p *BusEventsV1) UnmarshalJSON(data []byte) error {
	return document(data, "BusEventsV1", p.decode)
}
