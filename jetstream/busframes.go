package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentwire/agentwire/store"
)

// AppendPublish stores the publish like a message, in the publishes' own idempotency space:
// the stream counter and the client_msg_id index guarded, the expiry index, then the entry.
func (s *Store) AppendPublish(ctx context.Context, p store.PublishWrite) (store.StoredPublish, bool, error) {
	if err := store.ValidatePublish(p); err != nil {
		return store.StoredPublish{}, false, err
	}
	if err := checkStreamIDs(p.Stream); err != nil {
		return store.StoredPublish{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return store.StoredPublish{}, false, err
	}
	if err := s.enter(); err != nil {
		return store.StoredPublish{}, false, err
	}
	defer s.leave()
	lock := s.streamLock(p.Stream)
	lock.Lock()
	defer lock.Unlock()
	cmid := cmidSubject("p", p.SenderOrg, p.SenderInstance, p.ClientMsgID)
	isCmid := func(ce *centry) bool {
		o := ce.e.Publish
		return o != nil && o.SenderOrg == p.SenderOrg && o.SenderInstance == p.SenderInstance && o.ClientMsgID == p.ClientMsgID
	}
	if ce := s.busCache.cmid(cmid); ce != nil && isCmid(ce) && ce.visible(s.busNow()) {
		return *ce.e.Publish, true, nil
	}
	var expectCmid uint64
	for attempt := 1; ; attempt++ {
		n, ctrSeq, err := s.streamCounter(ctx, p.Stream)
		if err != nil {
			return store.StoredPublish{}, false, err
		}
		sp := store.StoredPublish{PublishWrite: p, Seq: n + 1}
		entry, _ := json.Marshal(busEntry{Pub: &sp})
		ctrData, _ := json.Marshal(counter{sp.Seq})
		parts := []batchMsg{
			{subject: busCtrPrefix + streamTail(p.Stream), data: ctrData, guard: true, expect: ctrSeq, rollup: true},
			{subject: cmid, guard: true, expect: expectCmid},
		}
		msgs := entryBatch(parts, []bool{false, true}, "p", p.ExpiresAt, "", busPrefix+streamTail(p.Stream), entry, sp.Seq)
		last, err := s.busCommit.publish(ctx, msgs, 0)
		if err == nil {
			s.wrote(p.Stream, sp.Seq, last, last-uint64(len(msgs)-1), &centry{e: store.StreamEntry{Seq: sp.Seq, Publish: &sp}, cmid: cmid})
			return sp, false, nil
		}
		s.busCache.forgetCounter(p.Stream)
		if !guardRefused(err) || attempt >= 1000 {
			return store.StoredPublish{}, false, fmt.Errorf("jetstream: append publish: %w", err)
		}
		ce, seq, err := s.indexed(ctx, cmid, isCmid)
		if err != nil {
			return store.StoredPublish{}, false, err
		}
		if ce != nil && ce.visible(s.busNow()) {
			return *ce.e.Publish, true, nil
		}
		expectCmid = seq
		if err := backoff(ctx, attempt/4); err != nil {
			return store.StoredPublish{}, false, err
		}
	}
}

// ExpirePublishes deletes expired publishes with their index messages.
func (s *Store) ExpirePublishes(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := store.ValidateSweep(now, limit); err != nil {
		return 0, err
	}
	return s.expire(ctx, "p", now, limit, nil)
}
