package store

import (
	"context"
	"time"
)

// This file sketches the storage of the two lanes of the next issue (relay.md §2 Bus and
// Notifications) so that the runs-lane design above is checked against them. Nothing here is
// implemented yet and the shapes may still change when the lanes are built; what is fixed is
// the division of labour, the same as for runs: the relay validates and decides (hive.md §8,
// envelope.md §2–§4), the store assigns what must be assigned inside the write transaction
// (sequences), enforces uniqueness, persists durably and notifies.
//
// How a JetStream backend is expected to map the three lanes (relay.md §5): a run is the
// subject agentwire.runs.<runId-token>; AppendRun publishes the batch and its snapshot as one
// atomic batch guarded by the expected last subject sequence, which yields the ConflictError
// when another relay advanced the run; a bus stream is agentwire.bus.<network>.<channel-token>
// with the same guarded publish giving the gap-free seq; envelopes go to ENVOY_NOTIFICATIONS
// with Nats-Msg-Id (envelope.md §4.3) so the stream's duplicate window does the 72 h dedupe;
// the Subscribe methods map to core NATS subscriptions on those subjects, which is how
// fan-out crosses relays.

// BusStore persists hive messages (relay.md §2 Bus; hive.md §4.6 and §8). A backend that
// implements it returns it from the same value as its [Store].
//
// Sketch: not implemented in this issue.
type BusStore interface {
	// AppendMessage stores one message and, in the same transaction, assigns the next `seq`
	// of its stream: 1 for the first message, then each next integer, never reused, no gaps
	// even under concurrent senders (hive.md §4.6, relay.md "seq is per channel or swarm,
	// starts at 1 and has no gaps"). Idempotency (hive.md §8 S9): when (org,
	// m.SenderInstance, m.ClientMsgID) is already stored and unexpired, nothing is stored or
	// assigned and the original message is returned with replayed true. A refusal stores
	// nothing, so a resend after a refusal is processed anew.
	AppendMessage(ctx context.Context, org string, m MessageWrite) (msg StoredMessage, replayed bool, err error)

	// GetMessage returns one message by `gid`; an expired message, or one of another org,
	// answers [ErrNotFound] (hive.md §8 S3, S11: a foreign or expired reply_to is a 404
	// identical to an unknown one). Network checks (S2) are the relay's.
	GetMessage(ctx context.Context, org, gid string) (StoredMessage, error)

	// ReadMessages returns up to limit unexpired messages of one stream with seq greater
	// than after, in seq order (history pages and catch-up, hive.md §2.11, §4.6). With a
	// non-empty threadID only that thread is returned. Visibility (S20) is filtered by the
	// relay.
	ReadMessages(ctx context.Context, org string, stream StreamKey, threadID string, after int64, limit int) ([]StoredMessage, error)

	// AppendReceipt records receipt state for (gid, by) (hive.md §8 S16): a state never moves
	// back and `read` implies `delivered`, so applied lists the states that are new, in order
	// (`delivered` before `read`); a duplicate applies nothing. An unknown or expired gid
	// answers [ErrNotFound].
	AppendReceipt(ctx context.Context, org, gid, by, state string, at time.Time) (applied []string, err error)

	// ProposeTask stores the task proposal of an org question whose deadline passed (hive.md
	// §8 S13) at most once per question gid; created is false when it already existed.
	ProposeTask(ctx context.Context, org, questionGID string, data []byte) (created bool, err error)

	// ExpireMessages deletes up to limit messages whose ExpiresAt is not after now and
	// returns how many it deleted (the retention sweeper, S11). Seq values are not reused.
	ExpireMessages(ctx context.Context, now time.Time, limit int) (int, error)

	// SubscribeStream has the semantics of [RunStore.Subscribe] for one bus stream.
	SubscribeStream(org string, stream StreamKey) (notify <-chan struct{}, cancel func())
}

// StreamKey names one bus sequence space (hive.md §4.6): a channel of an org network or a
// swarm (hive.md §2.3 NetworkV1 `kind`).
type StreamKey struct {
	// Network is "org" or "swarm".
	Network string
	// Name is the channel (org network) or the `swarm_id` (swarm network).
	Name string
}

// MessageWrite is a message the relay has validated and bound (hive.md §8 S1–S8, S12).
type MessageWrite struct {
	// GID is the relay-assigned `gid` (a ULID, relay.md).
	GID string
	// Stream is the message's network and channel or swarm.
	Stream StreamKey
	// SenderInstance is the sending token's `instance_id`; ClientMsgID the message's
	// `client_msg_id` (S9 scope).
	SenderInstance, ClientMsgID string
	// ThreadID is the `thread_id` the relay set (S4); ReplyTo the replied `gid`, if any.
	ThreadID, ReplyTo string
	// ToInstance is the bound recipient instance of a direct message (S7), empty for a
	// broadcast.
	ToInstance string
	// ServerTime and ExpiresAt are the message's `server_time` and `expires_at` (S11).
	ServerTime, ExpiresAt time.Time
	// Data is the stored record the relay delivers; its `seq` is filled in from
	// StoredMessage.Seq when delivered.
	Data []byte
}

// StoredMessage is a stored hive message with its assigned `seq`.
type StoredMessage struct {
	MessageWrite
	// Seq is the stream sequence assigned at AppendMessage (hive.md §4.6).
	Seq int64
}

// NotificationStore persists envelopes (relay.md §2 Notifications; envelope.md §4–§5). A
// backend that implements it returns it from the same value as its [Store].
//
// Sketch: not implemented in this issue.
type NotificationStore interface {
	// PublishEnvelope stores one envelope on its subject and assigns the next store sequence
	// of the org (one global order, the SSE `id:`). When e.MessageID is not empty (the
	// transport message id of envelope.md §4.3, present iff the dedupe key names its event)
	// and an envelope with the same id was stored within window (72 h,
	// DeliveryDuplicateWindow), nothing is stored and the original sequence is returned with
	// duplicate true.
	PublishEnvelope(ctx context.Context, org string, e EnvelopeWrite, window time.Duration) (seq int64, duplicate bool, err error)

	// ReadEnvelopes returns up to limit stored envelopes of the org with sequence greater
	// than after, in order (SSE replay from Last-Event-ID within retention). Pattern matching
	// and per-session dedupe are the relay's.
	ReadEnvelopes(ctx context.Context, org string, after int64, limit int) ([]StoredEnvelope, error)

	// ExpireEnvelopes deletes envelopes stored before cutoff (max age 72 h, envelope.md §5.1)
	// and returns how many. Sequences are not reused.
	ExpireEnvelopes(ctx context.Context, cutoff time.Time) (int, error)

	// SubscribeEnvelopes has the semantics of [RunStore.Subscribe] for the org's envelopes.
	SubscribeEnvelopes(org string) (notify <-chan struct{}, cancel func())
}

// EnvelopeWrite is one validated envelope to store.
type EnvelopeWrite struct {
	// Subject is the envelope's `topic` (envelope.md §1.2), a publishable subject under
	// `notifications.`.
	Subject string
	// MessageID is envelope.md §4.3 `MessageID(e)`, empty when the key does not name its
	// event (then the envelope is never deduplicated).
	MessageID string
	// Data is the envelope's encoded JSON (envelope.md §1.1).
	Data []byte
	// StoredAt is the publish time, the start of its retention and dedupe window.
	StoredAt time.Time
}

// StoredEnvelope is a stored envelope with its store sequence.
type StoredEnvelope struct {
	EnvelopeWrite
	// Seq is the org's store sequence (the SSE `id:`).
	Seq int64
}
