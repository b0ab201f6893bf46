package store

import (
	"context"
	"fmt"
	"time"
)

// BusFrameStore persists the bus frames that are not hive messages (hive.md §4.2, §4.6): the
// `publish` frames of org channels, which take the channel's next seq and are delivered as
// `deliver` frames. It is part of [BusStore].
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
