package store

import (
	"context"
	"time"
)

// NotificationStore persists the notification lane (relay.md §2 Notifications; envelope.md §4
// and §5): validated envelopes on their subject, in one store order, deduplicated on their
// transport message id. The relay validates, checks subjects, computes the message id
// (envelope.MessageID), matches subscription patterns and dedupes per SSE session; the store
// orders, dedupes by id, persists durably (a nil error means the write is on disk, relay.md §4),
// expires and notifies.
//
// Orgs. Envelopes are org-scoped like every other object of the relay (relay.md §1: "an
// envelope stream of another org is answered exactly as if it did not exist"): an org reads
// only its own envelopes, and dedupe is per org, so another org's publish never answers
// `duplicate` (which would tell it that the event exists elsewhere).
//
// Sequence. Seq is one store-wide sequence, the SSE `id:` (relay.md: "id: = store sequence"),
// as the ENVOY_NOTIFICATIONS stream of a JetStream backend has one (relay.md §5): the first
// stored envelope is 1 and each stored envelope, of any org, takes the next integer; a
// duplicate takes none; expiry never frees one. Within an org the sequence therefore increases
// strictly, in commit order, with gaps where other orgs' envelopes are: a reader resuming after
// any id misses nothing committed later. The gaps tell an org how many envelopes the store took
// meanwhile, never whose or what.
type NotificationStore interface {
	// AppendEnvelope durably stores e for org with the next store sequence. When e.MessageID
	// is not empty and the org's latest stored envelope with that id was stored less than
	// window before e.StoredAt (envelope.md §4.3; window is DeliveryDuplicateWindow, 72 h),
	// nothing is stored or assigned and that original is returned with duplicate true (the
	// relay answers `{"duplicate":true,"seq":<original>}`). An empty MessageID never
	// deduplicates. Dedupe only sees envelopes not yet expired, so a window longer than the
	// retention acts as the retention.
	//
	// The stored StoredAt never goes back: an e.StoredAt before the last stored one is raised
	// to it, so store order and time order agree (ExpireEnvelopes removes a prefix).
	AppendEnvelope(ctx context.Context, org string, e EnvelopeWrite, window time.Duration) (env StoredEnvelope, duplicate bool, err error)

	// ReadEnvelopes examines up to q.Limit of the org's stored envelopes with a sequence
	// greater than q.After, in order, and returns those stored at or after q.Since whose
	// subject q.Match accepts (SSE replay from Last-Event-ID within retention, and the live
	// tail). Page.Next is the sequence of the last envelope examined (q.After when none), the
	// cursor to continue from even when nothing matched; Page.More is true when the limit
	// stopped the examination (more follow). Matching is the caller's: Match is typically a closure over the
	// subscription's patterns with envelope.MatchSubject, so one envelope matching several
	// patterns is returned once.
	ReadEnvelopes(ctx context.Context, org string, q EnvelopeQuery) (EnvelopePage, error)

	// LastEnvelopeSeq returns the sequence of the org's last stored envelope (0 when none):
	// where a live subscriber without Last-Event-ID starts.
	LastEnvelopeSeq(ctx context.Context, org string) (int64, error)

	// ExpireEnvelopes deletes up to limit envelopes (of every org) stored before cutoff and
	// returns how many: the retention sweeper (envelope.md §5.1, max age 72 h). Sequences are
	// not reused, and a deleted envelope no longer deduplicates.
	ExpireEnvelopes(ctx context.Context, cutoff time.Time, limit int) (int, error)

	// SubscribeEnvelopes has the semantics of [RunStore.Subscribe] for the org's envelopes: a
	// wake-up after each commit that stored one of them.
	SubscribeEnvelopes(org string) (notify <-chan struct{}, cancel func())

	// RecordSessionDeliveries durably records that the dedupe keys of ds were delivered to the
	// stream `session` of org at `at` (relay.md §2: "with session, envelopes already delivered
	// to that session with the same dedupe_key are skipped"). The first delivery counts: a key
	// recorded for the session less than window before at keeps its Seq and time; one
	// recorded earlier than that is replaced. The DeliveredAt of ds is ignored; an empty ds
	// writes nothing. An empty org, session or key, a key that is not valid UTF-8, a negative
	// Seq, a zero at or a negative window wrap [ErrInvalid].
	RecordSessionDeliveries(ctx context.Context, org, session string, ds []SessionDelivery, at time.Time, window time.Duration) error

	// SessionDeliveries returns, by key, the deliveries recorded for the session of org whose
	// key is one of keys and whose time is at or after since (the relay passes now minus the
	// 72 h window); keys never delivered are absent. Keys follow RecordSessionDeliveries' rules.
	SessionDeliveries(ctx context.Context, org, session string, keys []string, since time.Time) (map[string]SessionDelivery, error)

	// ExpireSessionDeliveries deletes up to limit recorded deliveries (of every org and
	// session) older than cutoff and returns how many: the retention sweeper (72 h).
	ExpireSessionDeliveries(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// SessionDelivery is one dedupe key delivered to a notification stream session.
type SessionDelivery struct {
	// DedupeKey is the envelope's `dedupe_key` (envelope.md §1.1).
	DedupeKey string
	// Seq is the store sequence of the envelope that delivered the key first, 0 for an
	// envelope that is never stored (a role lane, envelope.md §5.1).
	Seq int64
	// DeliveredAt is when the key was first delivered (returned by reads; ignored by
	// RecordSessionDeliveries).
	DeliveredAt time.Time
}

// EnvelopeWrite is one validated envelope to store.
type EnvelopeWrite struct {
	// Subject is the envelope's `topic` (envelope.md §1.2, §3), the subject it is stored on;
	// it must not be empty.
	Subject string
	// MessageID is envelope.md §4.3 `MessageID(e)` (dedupe_key + ":" + topic when the key
	// names its event), empty when there is none: then the envelope is never deduplicated.
	MessageID string
	// StoredAt is the publish time: the start of its dedupe window and retention. It must not
	// be zero.
	StoredAt time.Time
	// Data is the envelope's encoded JSON (envelope.md §1.1), opaque to the store; it must not
	// be empty.
	Data []byte
}

// StoredEnvelope is a stored envelope with its store sequence.
type StoredEnvelope struct {
	EnvelopeWrite
	// Seq is the store sequence (the SSE `id:`).
	Seq int64
}

// EnvelopeQuery selects envelopes for [NotificationStore.ReadEnvelopes].
type EnvelopeQuery struct {
	// After is a sequence cursor (Last-Event-ID); it must be non-negative.
	After int64
	// Limit bounds how many envelopes are examined; it must be positive.
	Limit int
	// Since, when not zero, leaves out envelopes stored before it (the relay passes now minus
	// the retention, so a resume never replays beyond it even before the sweeper ran).
	Since time.Time
	// Match, when not nil, keeps only envelopes whose subject it accepts.
	Match func(subject string) bool
	// MaxBytes, when positive, also stops the page before the matching envelope that would
	// bring its envelopes' Data past MaxBytes (the first matching one is returned whatever its
	// size); More is then true and Next the last envelope examined before it (relay.md §3:
	// envelopes may be megabytes each, so a page of hundreds is bounded by bytes too).
	MaxBytes int
}

// EnvelopePage is one answer of [NotificationStore.ReadEnvelopes].
type EnvelopePage struct {
	// Envelopes are the matching envelopes, in sequence order.
	Envelopes []StoredEnvelope
	// Next is the sequence of the last envelope examined, or the query's After when none was.
	Next int64
	// More is true when the limit stopped the examination: more envelopes of the org follow
	// Next.
	More bool
}
