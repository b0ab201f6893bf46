package store

import (
	"context"
	"fmt"
	"time"
)

// BusFrameStore persists the bus frames that are not hive messages (hive.md §4.2, §4.6): the
// `publish` frames of org channels, which take the channel's next seq and are delivered as
// `deliver` frames, and the handoffs (`handoff.offer`, completed by `handoff.ack` or refused by
// `handoff.reject`). It is part of [BusStore].
type BusFrameStore interface {
	// AppendPublish durably stores one publish and, in the same transaction, gives it the next
	// `seq` of its org stream, from the counter its messages and task events share (hive.md
	// §4.6: "one counter per channel is shared by deliver, message.deliver and task.event"):
	// gap-free and never reused, exactly as [BusStore.AppendMessage].
	//
	// Idempotency (hive.md S9, "publish/published behave the same"): when a visible publish
	// with the same (p.SenderOrg, p.SenderInstance, p.ClientMsgID) is stored, nothing is
	// stored or assigned and that original is returned with replayed true, whatever else p
	// says. Publishes and messages are separate idempotency spaces: a message and a publish
	// may carry the same client_msg_id. An expired original no longer counts. A refused call
	// stores nothing.
	//
	// Errors: invalid arguments (see [ValidatePublish]) wrap [ErrInvalid].
	AppendPublish(ctx context.Context, p PublishWrite) (pub StoredPublish, replayed bool, err error)

	// ExpirePublishes deletes up to limit publishes whose ExpiresAt is set and not after now
	// and returns how many it deleted (the retention sweeper; their seq values stay taken).
	// An expired publish is invisible to every read before it is deleted.
	ExpirePublishes(ctx context.Context, now time.Time, limit int) (int, error)

	// OfferHandoff durably stores a handoff offer in state [HandoffOffered], keyed by (h.Org,
	// h.HandoffID): a handoff_id names one handoff within its org. When a visible handoff with
	// that key is stored (whatever its state or deadline), nothing is stored and it is returned
	// with created false, whatever h says; the relay decides whether that is a resend. An
	// expired one no longer counts. Errors: invalid arguments (see [ValidateHandoff]) wrap
	// [ErrInvalid].
	OfferHandoff(ctx context.Context, h HandoffWrite) (stored Handoff, created bool, err error)

	// GetHandoff returns the visible handoff (org, handoffID). Another org's, an expired and an
	// unknown one answer the same [ErrNotFound].
	GetHandoff(ctx context.Context, org, handoffID string) (Handoff, error)

	// SettleHandoff moves the visible handoff (org, handoffID) from [HandoffOffered] to state
	// ([HandoffAcked] or [HandoffRejected]) at `at`, if `at` is before its Deadline, and returns
	// it with applied true. Otherwise (already settled, or lapsed: `at` not before the
	// deadline) nothing changes and the stored handoff is returned with applied false: of two
	// concurrent settlements exactly one applies. An unknown, other-org or expired handoff
	// answers [ErrNotFound]; another state or a zero time wraps [ErrInvalid].
	SettleHandoff(ctx context.Context, org, handoffID, state string, at time.Time) (h Handoff, applied bool, err error)

	// PendingHandoffs returns up to limit visible handoffs of org in [HandoffOffered] bound to
	// (toInstance, to) whose Deadline is after now, oldest offer first: what the relay
	// redelivers when that instance announces `to` (hive.md §4.6).
	PendingHandoffs(ctx context.Context, org, toInstance, to string, now time.Time, limit int) ([]Handoff, error)

	// ExpireHandoffs deletes up to limit handoffs whose ExpiresAt is set and not after now and
	// returns how many it deleted (the retention sweeper). An expired handoff is invisible to
	// every read before it is deleted, and its handoff_id is free again.
	ExpireHandoffs(ctx context.Context, now time.Time, limit int) (int, error)
}

// Handoff states (hive.md §4.6: a handoff completes only by `handoff.ack`, or is refused by
// `handoff.reject`; one that reaches its deadline unsettled has lapsed, which the relay reads
// from Deadline).
const (
	HandoffOffered  = "offered"
	HandoffAcked    = "acked"
	HandoffRejected = "rejected"
)

// HandoffWrite is a `handoff.offer` the relay has validated and bound to its recipient
// instance (hive.md §4.6, S7).
type HandoffWrite struct {
	// Org is the offering token's org; with HandoffID it is the handoff's key.
	Org string
	// HandoffID is the offer's `handoff_id`.
	HandoffID string
	// Channel is the offer's org channel.
	Channel string
	// FromInstance and From are the offering instance and agent (`from`).
	FromInstance, From string
	// ToInstance and To are the bound recipient instance (S7) and agent (`to`).
	ToInstance, To string
	// Deadline is the offer's `deadline`: it is redelivered until then, and lapses at it.
	Deadline time.Time
	// CreatedAt is when the offer was stored; it must not be zero.
	CreatedAt time.Time
	// ExpiresAt is when the record goes (after the deadline, so that a late ack or reject is
	// still told apart from an unknown handoff); zero keeps it.
	ExpiresAt time.Time
	// Data is the offer frame the relay relays, opaque to the store; it must not be empty.
	Data []byte
}

// Handoff is a stored handoff.
type Handoff struct {
	HandoffWrite
	// State is HandoffOffered, HandoffAcked or HandoffRejected.
	State string
	// SettledAt is when it was acked or rejected; zero while offered.
	SettledAt time.Time
}

// ValidateHandoff checks the preconditions of [BusFrameStore.OfferHandoff].
func ValidateHandoff(h HandoffWrite) error {
	switch {
	case badID(h.Org):
		return idError("org", h.Org)
	case h.HandoffID == "":
		return fmt.Errorf("%w: empty handoff_id", ErrInvalid)
	case h.Channel == "":
		return fmt.Errorf("%w: empty channel", ErrInvalid)
	case h.FromInstance == "" || h.From == "":
		return fmt.Errorf("%w: empty offering instance or agent", ErrInvalid)
	case h.ToInstance == "" || h.To == "":
		return fmt.Errorf("%w: empty recipient instance or agent", ErrInvalid)
	case h.Deadline.IsZero():
		return fmt.Errorf("%w: zero deadline", ErrInvalid)
	case h.CreatedAt.IsZero():
		return fmt.Errorf("%w: zero creation time", ErrInvalid)
	case !h.ExpiresAt.IsZero() && h.ExpiresAt.Before(h.Deadline):
		return fmt.Errorf("%w: handoff expires before its deadline", ErrInvalid)
	case len(h.Data) == 0:
		return fmt.Errorf("%w: empty data", ErrInvalid)
	}
	return nil
}

// ValidateHandoffKey checks an org and a handoff_id.
func ValidateHandoffKey(org, handoffID string) error {
	switch {
	case badID(org):
		return idError("org", org)
	case handoffID == "":
		return fmt.Errorf("%w: empty handoff_id", ErrInvalid)
	}
	return nil
}

// ValidateSettle checks the arguments of [BusFrameStore.SettleHandoff].
func ValidateSettle(org, handoffID, state string, at time.Time) error {
	if err := ValidateHandoffKey(org, handoffID); err != nil {
		return err
	}
	switch {
	case state != HandoffAcked && state != HandoffRejected:
		return fmt.Errorf("%w: handoff state %q is neither %q nor %q", ErrInvalid, state, HandoffAcked, HandoffRejected)
	case at.IsZero():
		return fmt.Errorf("%w: zero settle time", ErrInvalid)
	}
	return nil
}

// ValidatePending checks the arguments of [BusFrameStore.PendingHandoffs].
func ValidatePending(org, toInstance, to string, now time.Time, limit int) error {
	switch {
	case org == "" || toInstance == "" || to == "":
		return fmt.Errorf("%w: empty org, instance or agent", ErrInvalid)
	case now.IsZero():
		return fmt.Errorf("%w: zero time", ErrInvalid)
	case limit <= 0:
		return fmt.Errorf("%w: limit %d is not positive", ErrInvalid, limit)
	}
	return nil
}

// PublishWrite is a `publish` frame the relay has validated and stamped (hive.md §4.2, §4.4).
type PublishWrite struct {
	// Stream is the publish's org channel (publishes exist on org networks only).
	Stream StreamKey
	// SenderOrg and SenderInstance are the sending token's org and `instance_id`; with
	// ClientMsgID (the frame's `client_msg_id`) they are the idempotency key. SenderOrg must
	// equal Stream.Org.
	SenderOrg, SenderInstance, ClientMsgID string
	// To is the frame's `to` agent, empty when absent.
	To string
	// Private is true for privacy `private`: the publish is visible only to viewers whose
	// [Viewer].Agents include To (hive.md §4.3 "private (only `to`)"); To must then be set.
	Private bool
	// ServerTime is the publish's `server_time`; it must not be zero.
	ServerTime time.Time
	// ExpiresAt is when the publish goes; zero keeps it.
	ExpiresAt time.Time
	// Data is the record the relay renders the `deliver` frame from, opaque to the store; the
	// relay fills in `seq` from StoredPublish. It must not be empty.
	Data []byte
}

// StoredPublish is a stored publish with its stream position.
type StoredPublish struct {
	PublishWrite
	// Seq is the stream position assigned by AppendPublish.
	Seq int64
}

// ValidatePublish checks the preconditions of [BusFrameStore.AppendPublish] that need no
// stored state.
func ValidatePublish(p PublishWrite) error {
	if err := ValidateStream(p.Stream); err != nil {
		return err
	}
	switch {
	case p.Stream.Network != NetworkOrg:
		return fmt.Errorf("%w: publish on a %s stream", ErrInvalid, p.Stream.Network)
	case p.SenderOrg == "":
		return fmt.Errorf("%w: empty sender org", ErrInvalid)
	case p.SenderInstance == "":
		return fmt.Errorf("%w: empty sender instance", ErrInvalid)
	case p.ClientMsgID == "":
		return fmt.Errorf("%w: empty client_msg_id", ErrInvalid)
	case p.SenderOrg != p.Stream.Org:
		return fmt.Errorf("%w: sender org %q writes to a stream of org %q", ErrInvalid, p.SenderOrg, p.Stream.Org)
	case p.Private && p.To == "":
		return fmt.Errorf("%w: private publish without a recipient", ErrInvalid)
	case p.ServerTime.IsZero():
		return fmt.Errorf("%w: zero server time", ErrInvalid)
	case len(p.Data) == 0:
		return fmt.Errorf("%w: empty data", ErrInvalid)
	}
	return nil
}

// VisibleTo reports whether viewer may see the publish: every viewer (and a nil one, which
// sees everything) sees a team publish; a private one only a viewer whose Agents include To.
func (p *PublishWrite) VisibleTo(viewer *Viewer) bool {
	if viewer == nil || !p.Private {
		return true
	}
	for _, a := range viewer.Agents {
		if a == p.To {
			return true
		}
	}
	return false
}
