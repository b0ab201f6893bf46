package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/store"
)

// receipt is the KV value of one recipient's receipt of one message.
type receipt struct {
	Delivered int64 `json:"delivered,omitempty"`
	Read      int64 `json:"read,omitempty"`
}

func receiptKey(gid, by string) string { return "rcpt." + token(gid) + "." + token(by) }

// AppendReceipt moves the recipient's receipt forward in the bus state bucket by revision.
func (s *Store) AppendReceipt(ctx context.Context, k store.StreamKey, gid, by, state string, at time.Time) ([]string, error) {
	if err := store.ValidateReceipt(k, gid, by, state, at); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	m, err := s.messageByGID(ctx, gid)
	if err != nil {
		return nil, err
	}
	if m == nil || m.Stream != k {
		return nil, store.ErrNotFound
	}
	var applied []string
	err = s.casKV(ctx, s.busState, receiptKey(gid, by), func(old []byte, exists bool) ([]byte, bool) {
		var r receipt
		if exists {
			_ = json.Unmarshal(old, &r)
		}
		applied = nil
		if r.Delivered == 0 {
			r.Delivered = at.UnixNano()
			applied = append(applied, store.ReceiptDelivered)
		}
		if state == store.ReceiptRead && r.Read == 0 {
			r.Read = at.UnixNano()
			applied = append(applied, store.ReceiptRead)
		}
		if len(applied) == 0 {
			return nil, false
		}
		b, _ := json.Marshal(r)
		return b, true
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// casKV reads key, lets change compute the new value (write false: leave it) and writes it by
// revision, retrying when another writer got there first.
func (s *Store) casKV(ctx context.Context, kv njs.KeyValue, key string, change func(old []byte, exists bool) ([]byte, bool)) error {
	for attempt := 1; ; attempt++ {
		rctx, cancel := s.ctxTimeout(ctx)
		e, err := kv.Get(rctx, key)
		exists := err == nil
		if err != nil && !errors.Is(err, njs.ErrKeyNotFound) {
			cancel()
			return fmt.Errorf("jetstream: %s: %w", kv.Bucket(), err)
		}
		var old []byte
		if exists {
			old = e.Value()
		}
		val, write := change(old, exists)
		if !write {
			cancel()
			return nil
		}
		if exists {
			_, err = kv.Update(rctx, key, val, e.Revision())
		} else {
			_, err = kv.Create(rctx, key, val)
		}
		cancel()
		if err == nil {
			return nil
		}
		if attempt < 1000 && (errors.Is(err, njs.ErrKeyExists) || guardRefused(err)) {
			continue
		}
		return fmt.Errorf("jetstream: %s: %w", kv.Bucket(), err)
	}
}

// kvScan calls fn with each current entry of kv whose key matches filter, through one
// watcher, as they arrive (memory: one entry).
func (s *Store) kvScan(ctx context.Context, kv njs.KeyValue, filter string, fn func(njs.KeyValueEntry) error) error {
	wctx, cancel := context.WithTimeout(ctx, 4*s.opts.Timeout)
	defer cancel()
	w, err := kv.WatchFiltered(wctx, []string{filter}, njs.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("jetstream: scan %s: %w", kv.Bucket(), err)
	}
	defer w.Stop()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("jetstream: scan %s: watcher closed", kv.Bucket())
			}
			if e == nil {
				return nil
			}
			if err := fn(e); err != nil {
				return err
			}
		case <-wctx.Done():
			return fmt.Errorf("jetstream: scan %s: %w", kv.Bucket(), wctx.Err())
		}
	}
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
	clock := s.busNow()
	var out []store.Handoff
	byCreated := func(a, b store.Handoff) int { return a.CreatedAt.Compare(b.CreatedAt) }
	err := s.kvScan(ctx, s.busState, "ho."+token(org)+".*", func(e njs.KeyValueEntry) error {
		var h store.Handoff
		if json.Unmarshal(e.Value(), &h) != nil {
			return nil
		}
		if h.State == store.HandoffOffered && h.ToInstance == toInstance && h.To == to && h.Deadline.After(now) && visibleAt(h.ExpiresAt, clock) {
			// Keep the limit oldest offers.
			i, _ := slices.BinarySearchFunc(out, h, byCreated)
			if i < limit {
				out = slices.Insert(out, i, h)
				if len(out) > limit {
					out = out[:limit]
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
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
	n := 0
	errDone := errors.New("done")
	err := s.kvScan(ctx, s.busState, filter, func(e njs.KeyValueEntry) error {
		if n == limit {
			return errDone
		}
		if !expired(e.Value()) {
			return nil
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
			return fmt.Errorf("jetstream: expire: %w", err)
		}
		return nil
	})
	if err != nil && err != errDone {
		return n, err
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
	var out []store.Announcement
	err := s.kvScan(ctx, s.busState, filter, func(e njs.KeyValueEntry) error {
		var v announcement
		if json.Unmarshal(e.Value(), &v) != nil {
			return nil
		}
		if !since.IsZero() && v.LastSeen < since.UnixNano() {
			return nil
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
		if errors.Join(errs[:]...) == nil {
			out = append(out, a)
		}
		return nil
	})
	return out, err
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
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	last, _, err := s.readCounter(ctx, busCtrPrefix+streamTail(k))
	if err != nil {
		return 0, err
	}
	if last == 0 {
		return 0, store.ErrNotFound
	}
	if seq > last {
		return 0, fmt.Errorf("%w: ack %d beyond the stream's last seq %d", store.ErrInvalid, seq, last)
	}
	pos := seq
	err = s.casKV(ctx, s.busState, ackKey(org, instance, k), func(old []byte, exists bool) ([]byte, bool) {
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
	out := map[store.StreamKey]int64{}
	err := s.kvScan(ctx, s.busState, prefix+">", func(e njs.KeyValueEntry) error {
		k, err := parseTail(e.Key()[len(prefix):])
		if err != nil {
			return nil
		}
		if n, err := strconv.ParseInt(string(e.Value()), 10, 64); err == nil {
			out[k] = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
