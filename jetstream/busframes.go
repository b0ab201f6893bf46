package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/agentwire/agentwire/store"
)

// jetstreamextPublish publishes msgs as one atomic batch and returns the last one's sequence.
func jetstreamextPublish(ctx context.Context, s *Store, msgs []*nats.Msg) (uint64, error) {
	if len(msgs) > maxBatchMsgs {
		return 0, fmt.Errorf("%w: the batch needs %d messages, more than the %d of one atomic batch", store.ErrInvalid, len(msgs), maxBatchMsgs)
	}
	ack, err := jetstreamext.PublishMsgBatch(ctx, s.js, msgs, jetstreamext.BatchFlowControl{AckFirst: false, AckTimeout: s.opts.Timeout})
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// AppendPublish stores the publish like a message, in the publishes' own idempotency space.
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
	if err := s.enterSynced(ctx); err != nil {
		return store.StoredPublish{}, false, err
	}
	defer s.leave()
	cmid := cmidSubject("p", p.SenderOrg, p.SenderInstance, p.ClientMsgID)
	ctr := busCtrPrefix + streamTail(p.Stream)
	for attempt := 1; ; attempt++ {
		now := s.busNow()
		s.view.mu.Lock()
		if ve := s.view.cmids[cmid]; ve != nil && ve.e.Publish != nil && ve.visible(now) {
			orig := *ve.e.Publish
			s.view.mu.Unlock()
			return orig, true, nil
		}
		n, ctrSeq := s.view.counterAt(ctr)
		seq := n + 1
		expect := map[string]uint64{ctr: ctrSeq, cmid: s.view.subj[cmid]}
		s.view.mu.Unlock()
		sp := store.StoredPublish{PublishWrite: p, Seq: seq}
		entry, _ := json.Marshal(busEntry{Pub: &sp})
		ctrData, _ := json.Marshal(counter{seq})
		_, err := s.busBatch(ctx, []guarded{{ctr, ctrData}, {cmid, nil}}, busPrefix+streamTail(p.Stream), entry, expect)
		if err == nil {
			s.busHub.Notify(p.Stream.Org+"\x00"+p.Stream.Network, p.Stream.Name)
			return sp, false, nil
		}
		if !guardRefused(err) || attempt >= 1000 {
			return store.StoredPublish{}, false, fmt.Errorf("jetstream: append publish: %w", err)
		}
		if err := s.refresh(ctx, []string{ctr, cmid}); err != nil {
			return store.StoredPublish{}, false, err
		}
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
	return s.expireEntries(ctx, now, limit, func(ve *viewEntry) bool { return ve.e.Publish != nil }, nil)
}

func handoffKey(org, id string) string { return "ho." + token(org) + "." + token(id) }

// OfferHandoff creates the handoff in the bus state bucket, or answers the visible one.
func (s *Store) OfferHandoff(ctx context.Context, h store.HandoffWrite) (store.Handoff, bool, error) {
	if err := store.ValidateHandoff(h); err != nil {
		return store.Handoff{}, false, err
	}
	if err := checkID("org", h.Org); err != nil {
		return store.Handoff{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return store.Handoff{}, false, err
	}
	if err := s.enter(); err != nil {
		return store.Handoff{}, false, err
	}
	defer s.leave()
	now := s.busNow()
	var out store.Handoff
	created := false
	err := s.casKV(ctx, s.busState, handoffKey(h.Org, h.HandoffID), func(old []byte, exists bool) ([]byte, bool) {
		if exists {
			var cur store.Handoff
			if json.Unmarshal(old, &cur) == nil && visibleAt(cur.ExpiresAt, now) {
				out, created = cur, false
				return nil, false
			}
		}
		out, created = store.Handoff{HandoffWrite: h, State: store.HandoffOffered}, true
		b, _ := json.Marshal(out)
		return b, true
	})
	if err != nil {
		return store.Handoff{}, false, err
	}
	return out, created, nil
}

// GetHandoff reads the visible handoff.
func (s *Store) GetHandoff(ctx context.Context, org, handoffID string) (store.Handoff, error) {
	if err := store.ValidateHandoffKey(org, handoffID); err != nil {
		return store.Handoff{}, err
	}
	if err := s.enter(); err != nil {
		return store.Handoff{}, err
	}
	defer s.leave()
	return s.getHandoff(ctx, org, handoffID)
}

func (s *Store) getHandoff(ctx context.Context, org, handoffID string) (store.Handoff, error) {
	rctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	e, err := s.busState.Get(rctx, handoffKey(org, handoffID))
	if errors.Is(err, njs.ErrKeyNotFound) {
		return store.Handoff{}, store.ErrNotFound
	}
	if err != nil {
		return store.Handoff{}, fmt.Errorf("jetstream: handoff: %w", err)
	}
	var h store.Handoff
	if err := json.Unmarshal(e.Value(), &h); err != nil {
		return store.Handoff{}, fmt.Errorf("jetstream: handoff: %w", err)
	}
	if !visibleAt(h.ExpiresAt, s.busNow()) {
		return store.Handoff{}, store.ErrNotFound
	}
	return h, nil
}

// SettleHandoff moves an offered handoff to its final state by revision: of two concurrent
// settlements exactly one applies.
func (s *Store) SettleHandoff(ctx context.Context, org, handoffID, state string, at time.Time) (store.Handoff, bool, error) {
	if err := store.ValidateSettle(org, handoffID, state, at); err != nil {
		return store.Handoff{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return store.Handoff{}, false, err
	}
	if err := s.enter(); err != nil {
		return store.Handoff{}, false, err
	}
	defer s.leave()
	now := s.busNow()
	var out store.Handoff
	applied, missing := false, false
	err := s.casKV(ctx, s.busState, handoffKey(org, handoffID), func(old []byte, exists bool) ([]byte, bool) {
		var h store.Handoff
		if !exists || json.Unmarshal(old, &h) != nil || !visibleAt(h.ExpiresAt, now) {
			missing = true
			return nil, false
		}
		missing = false
		out, applied = h, false
		if h.State != store.HandoffOffered || !at.Before(h.Deadline) {
			return nil, false
		}
		h.State, h.SettledAt = state, at
		out, applied = h, true
		b, _ := json.Marshal(h)
		return b, true
	})
	if err != nil {
		return store.Handoff{}, false, err
	}
	if missing {
		return store.Handoff{}, false, store.ErrNotFound
	}
	return out, applied, nil
}

// PendingHandoffs scans the org's handoffs.
func (s *Store) PendingHandoffs(ctx context.Context, org, toInstance, to string, now time.Time, limit int) ([]store.Handoff, error) {
	if err := store.ValidatePending(org, toInstance, to, now, limit); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	entries, err := s.kvScan(ctx, s.busState, "ho."+token(org)+".*")
	if err != nil {
		return nil, err
	}
	clock := s.busNow()
	var out []store.Handoff
	for _, e := range entries {
		var h store.Handoff
		if json.Unmarshal(e.Value(), &h) != nil {
			continue
		}
		if h.State == store.HandoffOffered && h.ToInstance == toInstance && h.To == to && h.Deadline.After(now) && visibleAt(h.ExpiresAt, clock) {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b store.Handoff) int { return a.CreatedAt.Compare(b.CreatedAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ExpireHandoffs deletes, by revision, the handoffs whose ExpiresAt has passed.
func (s *Store) ExpireHandoffs(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := store.ValidateSweep(now, limit); err != nil {
		return 0, err
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.expireScan(ctx, "ho.>", limit, func(v []byte) bool {
		var h store.Handoff
		return json.Unmarshal(v, &h) == nil && !h.ExpiresAt.IsZero() && !h.ExpiresAt.After(now)
	})
}

// expireScan deletes, by revision, up to limit bus state entries under filter that expired
// says are expired.
func (s *Store) expireScan(ctx context.Context, filter string, limit int, expired func([]byte) bool) (int, error) {
	entries, err := s.kvScan(ctx, s.busState, filter)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if n == limit {
			break
		}
		if !expired(e.Value()) {
			continue
		}
		dctx, cancel := s.ctxTimeout(ctx)
		err := s.busState.Delete(dctx, e.Key(), njs.LastRevision(e.Revision()))
		cancel()
		switch {
		case err == nil:
			n++
		case errors.Is(err, njs.ErrKeyNotFound) || errors.Is(err, njs.ErrKeyExists) || guardRefused(err):
			// Another relay's sweeper or a writer got there first.
		default:
			return n, fmt.Errorf("jetstream: expire: %w", err)
		}
	}
	return n, nil
}

// announcement is the KV value of one (instance, agent, channel) announcement.
type announcement struct {
	Vault    string `json:"vault"`
	LastSeen int64  `json:"lastSeen"`
	Dropped  bool   `json:"dropped"`
}

func annKey(org, instance, agent, channel string) string {
	return "ann." + token(org) + "." + token(instance) + "." + token(agent) + "." + token(channel)
}

// RecordAnnouncements writes each announcement by revision, keeping the later LastSeen.
func (s *Store) RecordAnnouncements(ctx context.Context, anns []store.Announcement, at time.Time) error {
	if err := store.ValidateAnnouncements(anns, at); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	for _, a := range anns {
		err := s.casKV(ctx, s.busState, annKey(a.Org, a.Instance, a.Agent, a.Channel), func(old []byte, exists bool) ([]byte, bool) {
			v := announcement{Vault: a.Vault, LastSeen: at.UnixNano(), Dropped: a.Dropped}
			if exists {
				var cur announcement
				if json.Unmarshal(old, &cur) == nil && cur.LastSeen > v.LastSeen {
					// An older write keeps the stored time and flag.
					return nil, false
				}
			}
			b, _ := json.Marshal(v)
			return b, true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// scanAnnouncements returns the announcements under filter seen at or after since.
func (s *Store) scanAnnouncements(ctx context.Context, filter string, since time.Time) ([]store.Announcement, error) {
	entries, err := s.kvScan(ctx, s.busState, filter)
	if err != nil {
		return nil, err
	}
	var out []store.Announcement
	for _, e := range entries {
		var v announcement
		if json.Unmarshal(e.Value(), &v) != nil {
			continue
		}
		if !since.IsZero() && v.LastSeen < since.UnixNano() {
			continue
		}
		var toks [5]string
		key := e.Key()
		for i := range toks {
			j := 0
			for j < len(key) && key[j] != '.' {
				j++
			}
			toks[i] = key[:j]
			if j < len(key) {
				key = key[j+1:]
			}
		}
		a := store.Announcement{Vault: v.Vault, LastSeen: time.Unix(0, v.LastSeen), Dropped: v.Dropped}
		var errs [4]error
		a.Org, errs[0] = untoken(toks[1])
		a.Instance, errs[1] = untoken(toks[2])
		a.Agent, errs[2] = untoken(toks[3])
		a.Channel, errs[3] = untoken(toks[4])
		if errors.Join(errs[:]...) != nil {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// AnnouncedInstances lists the org's instances that announced agent in vault since.
func (s *Store) AnnouncedInstances(ctx context.Context, org, vault, agent string, since time.Time) ([]string, error) {
	if err := store.ValidateAnnouncedQuery(org, vault, agent); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	anns, err := s.scanAnnouncements(ctx, "ann."+token(org)+".*."+token(agent)+".*", since)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range anns {
		if a.Vault == vault && !slices.Contains(out, a.Instance) {
			out = append(out, a.Instance)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Announcements lists the instance's announcements since, by agent then channel.
func (s *Store) Announcements(ctx context.Context, org, instance string, since time.Time) ([]store.Announcement, error) {
	if err := store.ValidateInstance(org, instance); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	anns, err := s.scanAnnouncements(ctx, "ann."+token(org)+"."+token(instance)+".*.*", since)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(anns, func(a, b store.Announcement) int {
		if a.Agent != b.Agent {
			if a.Agent < b.Agent {
				return -1
			}
			return 1
		}
		if a.Channel < b.Channel {
			return -1
		}
		if a.Channel > b.Channel {
			return 1
		}
		return 0
	})
	return anns, nil
}

// ExpireAnnouncements deletes the announcements last seen before cutoff.
func (s *Store) ExpireAnnouncements(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.ValidateSweep(cutoff, limit); err != nil {
		return 0, err
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.expireScan(ctx, "ann.>", limit, func(v []byte) bool {
		var a announcement
		return json.Unmarshal(v, &a) == nil && a.LastSeen < cutoff.UnixNano()
	})
}

func ackKey(org, instance string, k store.StreamKey) string {
	return "ack." + token(org) + "." + token(instance) + "." + streamTail(k)
}

// SetAck raises the instance's position on the stream by revision.
func (s *Store) SetAck(ctx context.Context, org, instance string, k store.StreamKey, seq int64) (int64, error) {
	if err := store.ValidateAck(org, instance, k, seq); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.enterSynced(ctx); err != nil {
		return 0, err
	}
	defer s.leave()
	s.view.mu.Lock()
	last := s.view.ctrN[busCtrPrefix+streamTail(k)]
	s.view.mu.Unlock()
	if last == 0 {
		return 0, store.ErrNotFound
	}
	if seq > last {
		return 0, fmt.Errorf("%w: ack %d beyond the stream's last seq %d", store.ErrInvalid, seq, last)
	}
	pos := seq
	err := s.casKV(ctx, s.busState, ackKey(org, instance, k), func(old []byte, exists bool) ([]byte, bool) {
		pos = seq
		if exists {
			if cur, err := strconv.ParseInt(string(old), 10, 64); err == nil && cur >= seq {
				pos = cur
				return nil, false
			}
		}
		return []byte(strconv.FormatInt(seq, 10)), true
	})
	if err != nil {
		return 0, err
	}
	return pos, nil
}

// Acks lists the instance's positions.
func (s *Store) Acks(ctx context.Context, org, instance string) (map[store.StreamKey]int64, error) {
	if err := store.ValidateInstance(org, instance); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	prefix := "ack." + token(org) + "." + token(instance) + "."
	entries, err := s.kvScan(ctx, s.busState, prefix+">")
	if err != nil {
		return nil, err
	}
	out := map[store.StreamKey]int64{}
	for _, e := range entries {
		var orgTok, network, nameTok string
		rest := e.Key()[len(prefix):]
		if _, err := fmt.Sscanf(dotsToSpaces(rest), "%s %s %s", &orgTok, &network, &nameTok); err != nil {
			continue
		}
		k := store.StreamKey{Network: network}
		var err error
		if k.Name, err = untoken(nameTok); err != nil {
			continue
		}
		if orgTok != "-" {
			if k.Org, err = untoken(orgTok); err != nil {
				continue
			}
		}
		n, err := strconv.ParseInt(string(e.Value()), 10, 64)
		if err != nil {
			continue
		}
		out[k] = n
	}
	return out, nil
}

func dotsToSpaces(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '.' {
			b[i] = ' '
		}
	}
	return string(b)
}
