package jetstream

import (
	"context"
	"errors"
	"time"

	"github.com/agentwire/agentwire/store"
)

// errPending answers the lanes this backend does not implement yet.
var errPending = errors.New("jetstream: lane not implemented yet")

func (s *Store) AppendMessage(context.Context, store.MessageWrite) (store.StoredMessage, bool, error) {
	return store.StoredMessage{}, false, errPending
}
func (s *Store) LookupClientMsg(context.Context, string, string, string) (store.StoredMessage, error) {
	return store.StoredMessage{}, errPending
}
func (s *Store) GetMessage(context.Context, store.MessageScope, string) (store.StoredMessage, error) {
	return store.StoredMessage{}, errPending
}
func (s *Store) ReadMessages(context.Context, store.StreamKey, store.ReadQuery) ([]store.StoredMessage, error) {
	return nil, errPending
}
func (s *Store) ReadStream(context.Context, store.StreamKey, store.ReadQuery) ([]store.StreamEntry, error) {
	return nil, errPending
}
func (s *Store) StreamLastSeq(context.Context, store.StreamKey) (int64, error) { return 0, errPending }
func (s *Store) AppendReceipt(context.Context, store.StreamKey, string, string, string, time.Time) ([]string, error) {
	return nil, errPending
}
func (s *Store) DueQuestions(context.Context, time.Time, int) ([]store.StoredMessage, error) {
	return nil, errPending
}
func (s *Store) ProposeTask(context.Context, store.TaskProposalWrite) (store.TaskProposal, bool, error) {
	return store.TaskProposal{}, false, errPending
}
func (s *Store) ListTaskProposals(context.Context, string, store.ProposalQuery) ([]store.TaskProposal, error) {
	return nil, errPending
}
func (s *Store) ExpireMessages(context.Context, time.Time, int) (int, error) { return 0, errPending }
func (s *Store) SubscribeStream(store.StreamKey) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	close(ch)
	return ch, func() {}
}
func (s *Store) AppendPublish(context.Context, store.PublishWrite) (store.StoredPublish, bool, error) {
	return store.StoredPublish{}, false, errPending
}
func (s *Store) ExpirePublishes(context.Context, time.Time, int) (int, error) { return 0, errPending }
func (s *Store) OfferHandoff(context.Context, store.HandoffWrite) (store.Handoff, bool, error) {
	return store.Handoff{}, false, errPending
}
func (s *Store) GetHandoff(context.Context, string, string) (store.Handoff, error) {
	return store.Handoff{}, errPending
}
func (s *Store) SettleHandoff(context.Context, string, string, string, time.Time) (store.Handoff, bool, error) {
	return store.Handoff{}, false, errPending
}
func (s *Store) PendingHandoffs(context.Context, string, string, string, time.Time, int) ([]store.Handoff, error) {
	return nil, errPending
}
func (s *Store) ExpireHandoffs(context.Context, time.Time, int) (int, error) { return 0, errPending }
func (s *Store) RecordAnnouncements(context.Context, []store.Announcement, time.Time) error {
	return errPending
}
func (s *Store) AnnouncedInstances(context.Context, string, string, string, time.Time) ([]string, error) {
	return nil, errPending
}
func (s *Store) Announcements(context.Context, string, string, time.Time) ([]store.Announcement, error) {
	return nil, errPending
}
func (s *Store) ExpireAnnouncements(context.Context, time.Time, int) (int, error) {
	return 0, errPending
}
func (s *Store) SetAck(context.Context, string, string, store.StreamKey, int64) (int64, error) {
	return 0, errPending
}
func (s *Store) Acks(context.Context, string, string) (map[store.StreamKey]int64, error) {
	return nil, errPending
}
