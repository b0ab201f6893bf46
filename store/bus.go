package store

import (
	"context"
	"slices"
	"time"
)

// Wire values the bus store keys on. They are the only hive.md words the store knows; every other
// hive rule (validation, binding, trust, rendering, who may read what) is the relay's.
const (
	// NetworkOrg is the `kind` of an organization's network (hive.md §2.3 NetworkV1 `org`): one
	// stream per channel of the org.
	NetworkOrg = "org"
	// NetworkSwarm is the `kind` of a swarm network (hive.md §2.3 NetworkV1 `swarm`): one stream
	// per `swarm_id`, shared by the members of every org taking part.
	NetworkSwarm = "swarm"

	// ReceiptDelivered and ReceiptRead are the MessageReceiptState values of hive.md §2.2, in
	// the only order a receipt may move (S16).
	ReceiptDelivered = "delivered"
	ReceiptRead      = "read"

	// MessageTypeAnswer is the hive.md §2.2 MessageType `answer`: a stored answer whose
	// `reply_to` is a pending question, stored before that question's deadline, keeps the
	// question from becoming a task (S13; see [BusStore.DueQuestions]).
	MessageTypeAnswer = "answer"
)

// MessageQueuer is implemented by a bus store that can take a message in call order and
// answer later, so one sender may have many messages in flight (a pipelining bus socket)
// while each stream still gives seq in the order they were sent.
type MessageQueuer interface {
	// QueueMessage is AppendMessage in two steps: the call queues m behind every write queued
	// before it returns (so messages queued one after the other on one stream take their seq
	// in that order) and wait blocks until the outcome is known, returning what AppendMessage
	// would. Arguments are checked first; a refused call returns a wait that answers the
	// refusal.
	QueueMessage(ctx context.Context, m MessageWrite) (wait func() (StoredMessage, bool, error))
}

// BusStore persists the bus lane (relay.md §2 Bus; hive.md §4.6 and §8): hive messages on their
// streams with a gap-free `seq`, receipts, and the task proposals of questions whose deadline
// passed. The relay validates, binds and renders (S1–S21); the store assigns what has to be
// assigned inside the write transaction (`seq`, `gid` when asked, task numbers), enforces
// uniqueness, persists durably (a nil error means the write is on disk, relay.md §4) and
// notifies.
//
// Keys. A stream is a [StreamKey]: an org channel is keyed by the org that owns it and the
// channel, a swarm only by its `swarm_id`, so the two networks never share a sequence, a history
// or a thread (hive.md S2), and two orgs using the same channel text have two streams. Reads by
// stream take the key as is: the relay builds it from the token's org (org networks) or after
// checking swarm membership (swarm networks, relay.md §1 `swarms`). Reads by `gid` take a
// [MessageScope], and a message outside it answers [ErrNotFound] exactly like an unknown gid.
//
// Expiry. A message is visible while its ExpiresAt is after the backend's clock (zero ExpiresAt
// never expires). An expired message answers [ErrNotFound] at once, before the sweeper
// ([BusStore.ExpireMessages]) deletes it, and its `seq` is never given again.
type BusStore interface {
	// AppendMessage durably stores one message and, in the same transaction, gives it the
	// next `seq` of its stream: 1 for the first message of the stream, then each next integer,
	// with no gap and no reuse even under concurrent senders and across expiry (hive.md §4.6,
	// relay.md "seq is per channel or swarm, starts at 1 and has no gaps"). An empty m.GID is
	// minted as a ULID ([NewULID]); an empty m.ThreadID becomes the message's own gid (S4: a
	// message that starts its thread).
	//
	// Idempotency (S9): when a visible message with the same (m.SenderOrg, m.SenderInstance,
	// m.ClientMsgID) is stored, nothing is stored or assigned and that original is returned
	// with replayed true, whatever else m says. An expired original no longer counts: the send
	// is stored anew. A refused call stores nothing, so a resend after a refusal is processed
	// anew.
	//
	// Errors: invalid arguments (see [ValidateMessage]) wrap [ErrInvalid]; a caller-supplied
	// gid that a stored message already has is [ErrDuplicateGID].
	AppendMessage(ctx context.Context, m MessageWrite) (msg StoredMessage, replayed bool, err error)

	// LookupClientMsg returns the visible message that the instance (org, instance) stored
	// with `client_msg_id` clientMsgID, whatever its stream: the original that AppendMessage
	// replays for that key (S9). None, and an expired one, answer [ErrNotFound]. The relay
	// answers a resend with it before any check made at send time that could fail now (a
	// recipient binding, a deadline), so a resend gets the original values even after a
	// restart. Empty arguments wrap [ErrInvalid].
	LookupClientMsg(ctx context.Context, org, instance, clientMsgID string) (StoredMessage, error)

	// GetMessage returns the visible message with that `gid` if its stream is within scope.
	// Another org's message, a swarm outside scope.Swarms, an expired and an unknown gid all
	// answer the same [ErrNotFound] (relay.md §1; hive.md S3 and S11). For a `reply_to` or an
	// `after_gid` the relay then requires msg.Stream to equal the stream of the request and
	// answers the very same 404 otherwise (S2, S3, §2.11).
	GetMessage(ctx context.Context, scope MessageScope, gid string) (StoredMessage, error)

	// ReadMessages returns up to q.Limit visible messages of the stream with seq greater than
	// q.After, in seq order (history pages, hive.md §2.11). q.ThreadID keeps one thread;
	// q.Viewer keeps what that instance may see (S20). A stream nobody wrote to reads empty.
	ReadMessages(ctx context.Context, stream StreamKey, q ReadQuery) ([]StoredMessage, error)

	// ReadStream is ReadMessages interleaved with the stream's task events (the `task.event`
	// frames announcing proposals, which take the channel's next seq, hive.md §6.2 and S13) and
	// its visible publishes (the `deliver` frames, [BusFrameStore.AppendPublish]), in seq
	// order: the catch-up and hello-cursor replay of hive.md §4.1 and H4. Task events are
	// visible to every viewer; a publish as [PublishWrite.VisibleTo] says. Neither belongs to
	// a thread (q.ThreadID leaves them out).
	ReadStream(ctx context.Context, stream StreamKey, q ReadQuery) ([]StreamEntry, error)

	// StreamLastSeq returns the last seq given on the stream (0 when none): where a live
	// reader that wants no history starts. Expiry does not lower it.
	StreamLastSeq(ctx context.Context, stream StreamKey) (int64, error)

	// AppendReceipt records that recipient `by` reached state for the visible message `gid`
	// of stream (hive.md §2.9, S16) and returns the states that are new, in order: a state
	// never moves back and `read` implies `delivered`, so `read` first applies
	// [delivered read], `delivered` after `read` applies nothing, and a repeat applies
	// nothing (the relay sends one `message.status` per applied state). at is recorded with
	// each newly applied state. An unknown, expired or other-stream gid answers
	// [ErrNotFound]; a state other than ReceiptDelivered or ReceiptRead wraps [ErrInvalid].
	AppendReceipt(ctx context.Context, stream StreamKey, gid, by, state string, at time.Time) (applied []string, err error)

	// DueQuestions returns up to limit visible org-stream messages whose Deadline is set and
	// not after now, that have no task proposal, and that no answer settled: an answer is a
	// message of the same stream with Type [MessageTypeAnswer], ReplyTo the question's gid and
	// a ServerTime before the deadline (hive.md S13: "when an org question's deadline passes
	// without a stored answer"; a later answer does not undo the proposal). Oldest deadline
	// first. The relay's sweeper calls ProposeTask for each.
	DueQuestions(ctx context.Context, now time.Time, limit int) ([]StoredMessage, error)

	// ProposeTask stores the task proposal of the visible question p.QuestionGID of the org
	// stream p.Stream at most once per question (hive.md S13). When created, the proposal gets
	// the next task number of (org, p.Vault) (tasks are numbered per vault from 1, hive.md §6)
	// and the stream's next seq for its `task.event`, in the same transaction, and the question
	// leaves DueQuestions. When a proposal of that question exists it is returned with created
	// false and nothing is assigned, even once the question has expired. Otherwise an
	// unknown, expired or other-stream question answers [ErrNotFound]; a swarm stream wraps
	// [ErrInvalid] (in a swarm nothing happens).
	ProposeTask(ctx context.Context, p TaskProposalWrite) (proposal TaskProposal, created bool, err error)

	// ListTaskProposals returns up to q.Limit task proposals of the org with ID greater than
	// q.After, oldest first (the admin listing of the relay).
	ListTaskProposals(ctx context.Context, org string, q ProposalQuery) ([]TaskProposal, error)

	// ExpireMessages deletes up to limit messages whose ExpiresAt is set and not after now,
	// with their receipts, and returns how many it deleted: the retention sweeper (hive.md
	// S11, relay.md "expired messages are deleted by a sweeper and then answer 404"). Seq
	// values and task proposals stay.
	ExpireMessages(ctx context.Context, now time.Time, limit int) (int, error)

	// SubscribeStream has the semantics of [RunStore.Subscribe] for one stream: a wake-up
	// after each commit that stored a message, a task event or a publish on it.
	SubscribeStream(stream StreamKey) (notify <-chan struct{}, cancel func())

	// BusFrameStore holds the bus frames other than messages (publishes).
	BusFrameStore

	// RecordAnnouncements durably records that each of anns was seen at `at` (hive.md §4.5:
	// a `hello` announces agents and the channels they follow). An announcement is keyed by
	// (Org, Instance, Agent, Channel); one already recorded keeps the later of its LastSeen
	// and at, so a late or repeated write never makes it older, and takes the Dropped of the
	// write unless that write is older than what is stored. The relay records a hello's pairs
	// when it applies the hello, again when they are withdrawn (Dropped when a later hello
	// replaced them, H2; not Dropped when the socket closed) and periodically while a socket
	// keeps them, so LastSeen is when the pair was last announced. The LastSeen of anns is
	// ignored; an empty anns writes nothing. Empty fields or a zero at wrap [ErrInvalid].
	RecordAnnouncements(ctx context.Context, anns []Announcement, at time.Time) error

	// AnnouncedInstances returns, in ascending order and each once, the instances of org
	// with an announcement of agent on a channel of vault last seen at or after since: the
	// candidates of hive.md S7 ("the one other instance that announced `to` in the vault
	// within 24 hours", since = now − 24 h; a zero since keeps every one). Empty arguments
	// wrap [ErrInvalid].
	AnnouncedInstances(ctx context.Context, org, vault, agent string, since time.Time) ([]string, error)

	// Announcements returns the announcements of the instance (org, instance) last seen at or
	// after since, dropped ones included, ordered by Agent then Channel: what its sockets
	// follow (the channels of GET /v1/bus/poll, the announced recipient agents of S16); a zero
	// since keeps every one.
	Announcements(ctx context.Context, org, instance string, since time.Time) ([]Announcement, error)

	// ExpireAnnouncements deletes up to limit announcements last seen before cutoff and
	// returns how many: they bind nothing any more (the relay's sweeper, cutoff = now − 24 h).
	ExpireAnnouncements(ctx context.Context, cutoff time.Time, limit int) (int, error)

	// SetAck durably records that the instance (org, instance) acknowledged everything up to
	// seq on stream (hive.md §4.6 `ack`, which "becomes its position for poll") and returns
	// its position after the call: a position never goes down, so an ack at or below it
	// changes nothing and returns it. seq must be positive; a stream nobody wrote to answers
	// [ErrNotFound] and a seq beyond the stream's last seq wraps [ErrInvalid] (the relay
	// refuses both before calling).
	SetAck(ctx context.Context, org, instance string, stream StreamKey, seq int64) (int64, error)

	// Acks returns the positions SetAck recorded for the instance (org, instance), by
	// stream; a stream it never acknowledged is absent (its position is 0).
	Acks(ctx context.Context, org, instance string) (map[StreamKey]int64, error)
}

// Announcement is one (agent, channel) pair that an instance announced in a `hello` (hive.md
// §4.2 BusAgentV1, §4.5).
type Announcement struct {
	// Org and Instance are the announcing token's org and `instance_id`.
	Org, Instance string
	// Agent is the announced `agent_id`.
	Agent string
	// Channel is the followed org channel and Vault its `vault_id` (hive.md §1.6): S7 binds
	// a `to` within a vault.
	Channel, Vault string
	// LastSeen is when the pair was last announced (returned by reads; ignored by
	// RecordAnnouncements).
	LastSeen time.Time
	// Dropped is set when the instance's last word on the pair was a later hello that no
	// longer announces it (H2: "channels no longer followed stop"); a pair whose socket
	// merely closed is not dropped. S7 counts dropped pairs within the window all the same
	// ("announced within 24 hours").
	Dropped bool
}

// StreamKey names one bus sequence space (hive.md §4.6): a channel of an org, or a swarm.
type StreamKey struct {
	// Network is NetworkOrg or NetworkSwarm (NetworkV1 `kind`).
	Network string
	// Org is the org that owns an org channel: the token's org (relay.md §1 Auth), never the
	// org part of the channel text. It is empty for a swarm, whose stream belongs to no org.
	Org string
	// Name is the `channel` (org) or the `swarm_id` (swarm).
	Name string
}

// OrgStream is the stream of channel in org.
func OrgStream(org, channel string) StreamKey {
	return StreamKey{Network: NetworkOrg, Org: org, Name: channel}
}

// SwarmStream is the stream of the swarm swarmID.
func SwarmStream(swarmID string) StreamKey {
	return StreamKey{Network: NetworkSwarm, Name: swarmID}
}

// MessageScope is what a caller may reach by `gid`: the org-network messages of its org and the
// messages of the swarms it belongs to (from the auth file's `swarms`).
type MessageScope struct {
	// Org is the token's org; empty reaches no org network.
	Org string
	// Swarms are the swarm ids the token is a member of.
	Swarms []string
}

// Includes reports whether a message of stream is within the scope.
func (s MessageScope) Includes(stream StreamKey) bool {
	switch stream.Network {
	case NetworkOrg:
		return s.Org != "" && stream.Org == s.Org
	case NetworkSwarm:
		return slices.Contains(s.Swarms, stream.Name)
	}
	return false
}

// MessageWrite is a message the relay has validated, bound and stamped (hive.md §8 S1–S12).
type MessageWrite struct {
	// GID is the message's `gid`. Empty asks the store to mint a ULID; a caller that mints
	// its own must keep it unique and never reuse one (hive.md §1.7).
	GID string
	// Stream is the message's network and channel or swarm.
	Stream StreamKey
	// SenderOrg and SenderInstance are the sending token's org and `instance_id`; with
	// ClientMsgID (the message's `client_msg_id`) they are the idempotency key (S9). On an org
	// stream SenderOrg must equal Stream.Org.
	SenderOrg, SenderInstance, ClientMsgID string
	// Type is the message `type` (hive.md §2.2), kept for the S13 rule.
	Type string
	// ThreadID is the `thread_id` (S4); empty means the message's own gid.
	ThreadID string
	// ReplyTo is the replied `gid`, empty when none.
	ReplyTo string
	// ToOrg and ToInstance are the bound recipient instance of a direct message (S7), both
	// empty for a broadcast. On an org stream ToOrg equals Stream.Org. They drive
	// ReadQuery.Viewer.
	ToOrg, ToInstance string
	// Deadline, when not zero, makes the message a pending question for S13 (see
	// DueQuestions); org streams only. The delivered `deadline` lives in Data.
	Deadline time.Time
	// ServerTime is the message's `server_time`; it must not be zero.
	ServerTime time.Time
	// ExpiresAt is when the message goes (S11); zero keeps it until set otherwise (an open
	// swarm, whose messages must not be deleted).
	ExpiresAt time.Time
	// Data is the stored record the relay renders deliveries from, opaque to the store; the
	// relay fills in `gid`, `seq` and `thread_id` from StoredMessage. It must not be empty.
	Data []byte
}

// StoredMessage is a stored hive message: the write as stored (GID and ThreadID filled in) and
// its `seq`.
type StoredMessage struct {
	MessageWrite
	// Seq is the stream position assigned by AppendMessage (hive.md §4.6).
	Seq int64
}

// Viewer is one instance reading a stream (hive.md S20).
type Viewer struct {
	// Org and Instance are the reading token's org and `instance_id`.
	Org, Instance string
	// Agents are the agents the viewer announced on the stream: a private publish is visible
	// only to a viewer that announced its `to` ([PublishWrite.VisibleTo]). Messages ignore it.
	Agents []string
}

// ReadQuery selects messages of one stream for [BusStore.ReadMessages] and
// [BusStore.ReadStream].
type ReadQuery struct {
	// After is a seq cursor: only entries with a greater seq; it must be non-negative.
	After int64
	// Limit bounds the entries returned; it must be positive.
	Limit int
	// ThreadID, when not empty, keeps only the messages of that `thread_id`.
	ThreadID string
	// Viewer, when set, keeps broadcasts and the direct messages the viewer sent or that are
	// bound to it (S20: "a direct message reaches only the bound recipient instance and the
	// sender").
	Viewer *Viewer
	// MaxBytes, when positive, also stops the page before the entry that would bring the Data
	// of its entries past MaxBytes; the first entry is returned whatever its size. A page of
	// 500 sealed messages of a megabyte would otherwise be half a gigabyte (relay.md §3: what
	// a reader makes the relay hold is bounded by bytes). A page stopped this way has fewer
	// than Limit entries although more follow: read on after its last entry.
	MaxBytes int
}

// EntryBytes is what an entry counts against [ReadQuery.MaxBytes]: its Data.
func EntryBytes(e StreamEntry) int {
	switch {
	case e.Message != nil:
		return len(e.Message.Data)
	case e.Publish != nil:
		return len(e.Publish.Data)
	case e.Task != nil:
		return len(e.Task.Data)
	}
	return 0
}

// TaskProposalWrite is the task proposal of a question past its deadline (hive.md S13).
type TaskProposalWrite struct {
	// Stream is the question's org channel; the `task.event` takes its next seq.
	Stream StreamKey
	// Vault is the channel's `vault_id`; tasks are numbered per (org, vault).
	Vault string
	// QuestionGID is the question's `gid`; one proposal per question.
	QuestionGID string
	// CreatedAt is the proposal's `server_time`; it must not be zero.
	CreatedAt time.Time
	// Data is the proposal record the relay renders (the `task.event` and the admin listing
	// entry); the relay fills in `number` and `seq` from TaskProposal. It must not be empty.
	Data []byte
}

// TaskProposal is a stored task proposal.
type TaskProposal struct {
	TaskProposalWrite
	// ID orders the store's proposals (the ListTaskProposals cursor), from 1.
	ID int64
	// Number is the task `number` in the vault, from 1 (hive.md §2.10 TaskEventV1).
	Number int64
	// Seq is the channel position of the proposal's `task.event` (hive.md §6.2).
	Seq int64
}

// ProposalQuery selects one page of [BusStore.ListTaskProposals].
type ProposalQuery struct {
	// After is a TaskProposal.ID cursor; it must be non-negative.
	After int64
	// Limit bounds the page; it must be positive.
	Limit int
}

// StreamEntry is one position of a stream: a message, a task event or a publish (exactly one
// is set).
type StreamEntry struct {
	// Seq is the position.
	Seq int64
	// Message is set for a `message.deliver` entry.
	Message *StoredMessage
	// Task is set for a `task.event` entry.
	Task *TaskProposal
	// Publish is set for a `deliver` entry.
	Publish *StoredPublish
}
