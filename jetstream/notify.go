package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/store"
)

// Headers of an envelope agentwire stores on ENVOY_NOTIFICATIONS (relay.md §5.1.4: "the org
// travels in a header"). The org is written as its token, since an org may hold bytes a header
// value cannot.
const (
	hdrOrg      = "Aw-Org"
	hdrStoredAt = "Aw-Stored-At"
)

// SessionsBucket is the KV bucket of the dedupe keys delivered to notification stream sessions.
const SessionsBucket = "AGENTWIRE_SESSIONS"

// DefaultEnvelopeOrgs is the number of orgs whose last envelope sequence the store remembers
// when Options.EnvelopeOrgs is 0.
const DefaultEnvelopeOrgs = 4096

// envState is the notification lane's memory: the relay's stored-at clock, what the wake-up
// consumer has seen, and the last envelope sequence of at most Options.EnvelopeOrgs orgs
// (least recently seen dropped first; an org beyond them is found by a scan of the stream's
// headers).
type envState struct {
	mu       sync.Mutex
	cond     *sync.Cond
	clock    int64  // the last StoredAt this instance gave (relay.md §5.1.4: per relay)
	sends    uint64 // envelopes sent, for giving a duplicate's clock back
	seen     uint64 // the stream sequence of the last message the consumer delivered
	last     *lru   // org → sequence of its last envelope seen
	complete bool   // last holds every org seen (nothing was dropped)
}

// ensureEnvoyStream creates or checks ENVOY_NOTIFICATIONS (envelope.md §5.1; relay.md §5.1.4):
// an owner creates it or brings its subjects, max age and duplicate window to the rules; any
// other store only checks it and refuses to start when it is missing or differs.
func (s *Store) ensureEnvoyStream(ctx context.Context) (njs.Stream, error) {
	st, err := s.js.Stream(ctx, envelope.NotificationsStream)
	missing := errors.Is(err, njs.ErrStreamNotFound)
	if err != nil && !missing {
		return nil, fmt.Errorf("jetstream: stream %s: %w", envelope.NotificationsStream, err)
	}
	want := njs.StreamConfig{
		Name:       envelope.NotificationsStream,
		Subjects:   envelope.StreamSubjects(),
		Retention:  njs.LimitsPolicy,
		Storage:    njs.FileStorage,
		MaxAge:     envelope.DeliveryDuplicateWindow,
		Duplicates: envelope.DeliveryDuplicateWindow,
		Replicas:   s.opts.Replicas,
	}
	if missing {
		if !s.opts.OwnEnvoyStream {
			return nil, fmt.Errorf("jetstream: stream %s does not exist; create it with its owner (Envoy) or let this relay own it (--own-envoy-stream)", envelope.NotificationsStream)
		}
		if st, err = s.js.CreateStream(ctx, want); err != nil {
			return nil, fmt.Errorf("jetstream: create stream %s: %w", envelope.NotificationsStream, err)
		}
		return st, nil
	}
	have := st.CachedInfo().Config
	merged := envelope.MergeStreamSubjects(have.Subjects)
	if slices.Equal(merged, have.Subjects) && have.MaxAge == want.MaxAge && have.Duplicates == want.Duplicates {
		return st, nil
	}
	if !s.opts.OwnEnvoyStream {
		return nil, fmt.Errorf("jetstream: stream %s differs from envelope.md §5.1 (subjects %v, max age %v, duplicate window %v); let its owner fix it or let this relay own it (--own-envoy-stream)",
			envelope.NotificationsStream, have.Subjects, have.MaxAge, have.Duplicates)
	}
	cfg := have
	cfg.Subjects, cfg.MaxAge, cfg.Duplicates = merged, want.MaxAge, want.Duplicates
	if st, err = s.js.UpdateStream(ctx, cfg); err != nil {
		return nil, fmt.Errorf("jetstream: update stream %s: %w", envelope.NotificationsStream, err)
	}
	return st, nil
}

// openEnvelopes sets up the notification lane: the stream, the sessions bucket, the stored-at
// clock and the wake-up consumer, which replays every stored envelope's headers once at start
// to learn each org's last sequence.
func (s *Store) openEnvelopes(ctx context.Context) error {
	var err error
	if s.env, err = s.ensureEnvoyStream(ctx); err != nil {
		return err
	}
	if s.sessions, err = s.js.CreateOrUpdateKeyValue(ctx, njs.KeyValueConfig{
		Bucket: SessionsBucket, Storage: njs.FileStorage, Replicas: s.opts.Replicas, History: 1,
	}); err != nil {
		return fmt.Errorf("jetstream: bucket %s: %w", SessionsBucket, err)
	}
	if s.opts.EnvelopeOrgs <= 0 {
		s.opts.EnvelopeOrgs = DefaultEnvelopeOrgs
	}
	s.envs.last = newLRU(s.opts.EnvelopeOrgs)
	s.envs.complete = true
	s.envs.cond = sync.NewCond(&s.envs.mu)
	if m, err := s.env.GetLastMsgForSubject(ctx, ">"); err == nil {
		if at, ok := storedAt(m.Header); ok {
			s.envs.clock = at
		}
	} else if !errors.Is(err, njs.ErrMsgNotFound) {
		return fmt.Errorf("jetstream: stream %s: %w", envelope.NotificationsStream, err)
	}
	c, err := s.env.OrderedConsumer(ctx, njs.OrderedConsumerConfig{DeliverPolicy: njs.DeliverAllPolicy, HeadersOnly: true})
	if err != nil {
		return fmt.Errorf("jetstream: wake-up consumer on %s: %w", envelope.NotificationsStream, err)
	}
	cc, err := c.Consume(func(m njs.Msg) {
		md, err := m.Metadata()
		if err != nil {
			return
		}
		org, ok := s.envelopeOrg(m.Headers())
		s.envs.mu.Lock()
		if ok && s.envs.last.put(org, int64(md.Sequence.Stream)) {
			s.envs.complete = false
		}
		s.envs.seen = max(s.envs.seen, md.Sequence.Stream)
		s.envs.cond.Broadcast()
		s.envs.mu.Unlock()
		if ok {
			s.envHub.Notify(org, "")
		}
	}, njs.PullHeartbeat(time.Second), njs.ConsumeErrHandler(func(njs.ConsumeContext, error) { s.envHub.NotifyAll() }))
	if err != nil {
		return fmt.Errorf("jetstream: wake-up consumer on %s: %w", envelope.NotificationsStream, err)
	}
	s.watchers = append(s.watchers, cc)
	return nil
}

// envelopeOrg returns the org an envelope belongs to: its org header, or the --envoy-org for
// one published without it (by Legion's own publishers); ok false when it belongs to no org.
func (s *Store) envelopeOrg(h nats.Header) (string, bool) {
	tok := h.Get(hdrOrg)
	if tok == "" {
		return s.opts.EnvoyOrg, s.opts.EnvoyOrg != ""
	}
	org, err := untoken(tok)
	return org, err == nil
}

func storedAt(h nats.Header) (int64, bool) {
	v := h.Get(hdrStoredAt)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// msgID is the Nats-Msg-Id of an org's envelope (relay.md §5.1.4): the org token, a colon and
// the envelope.md §4.3 id, except for the --envoy-org, whose ids are exactly §4.3's.
func (s *Store) msgID(org, id string) string {
	if s.opts.EnvoyOrg != "" && org == s.opts.EnvoyOrg {
		return id
	}
	return token(org) + ":" + id
}

// DedupeWindowOnServerClock declares that this backend's envelope dedupe window is the
// stream's, kept by the NATS server on its own clock (relay.md §5.1.4): the window argument of
// AppendEnvelope and explicit StoredAt times do not move it, and a deleted envelope keeps
// deduplicating until its window ends. storetest skips the cases that need a settable clock.
func (s *Store) DedupeWindowOnServerClock() {}

// AppendEnvelope publishes the envelope on its topic with the org and stored-at headers and the
// Nats-Msg-Id of its dedupe rule; the stream's duplicate window answers duplicates.
func (s *Store) AppendEnvelope(ctx context.Context, org string, e store.EnvelopeWrite, window time.Duration) (store.StoredEnvelope, bool, error) {
	if err := store.ValidateEnvelope(org, e, window); err != nil {
		return store.StoredEnvelope{}, false, err
	}
	if err := checkID("org", org); err != nil {
		return store.StoredEnvelope{}, false, err
	}
	if _, ok := envelope.StreamSubjectFor(e.Subject); !ok {
		// Only the stream's own subjects are stored (relay.md §5.1.4); the relay relays
		// any other topic live.
		return store.StoredEnvelope{}, false, fmt.Errorf("%w: topic %q is not in the %s subject list", store.ErrInvalid, e.Subject, envelope.NotificationsStream)
	}
	if strings.ContainsAny(e.MessageID, "\r\n") {
		return store.StoredEnvelope{}, false, fmt.Errorf("%w: message id with a line break", store.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return store.StoredEnvelope{}, false, err
	}
	if err := s.enter(); err != nil {
		return store.StoredEnvelope{}, false, err
	}
	defer s.leave()
	m := nats.NewMsg(e.Subject)
	m.Data = e.Data
	m.Header.Set(hdrOrg, token(org))
	if e.MessageID != "" {
		m.Header.Set(njs.MsgIDHeader, s.msgID(org, e.MessageID))
	}
	// The stored-at clock is raised and the message sent under one lock, so that this relay's
	// envelopes reach the stream in the order of their times (one connection keeps the order);
	// the acknowledgement is awaited outside it.
	s.envs.mu.Lock()
	at := max(e.StoredAt.UnixNano(), s.envs.clock)
	m.Header.Set(hdrStoredAt, strconv.FormatInt(at, 10))
	start := time.Now()
	fut, err := s.js.PublishMsgAsync(m, njs.WithExpectStream(envelope.NotificationsStream))
	if err != nil {
		s.envs.mu.Unlock()
		return store.StoredEnvelope{}, false, fmt.Errorf("jetstream: publish envelope: %w", err)
	}
	prev := s.envs.clock
	s.envs.clock = at
	s.envs.sends++
	send := s.envs.sends
	s.envs.mu.Unlock()
	var ack *njs.PubAck
	timer := time.NewTimer(s.opts.Timeout)
	defer timer.Stop()
	select {
	case ack = <-fut.Ok():
	case err = <-fut.Err():
	case <-timer.C:
		err = errors.New("no acknowledgement within " + s.opts.Timeout.String())
	case <-ctx.Done():
		err = ctx.Err()
	}
	if h := s.opts.OnPublish; h != nil && ctx.Err() == nil {
		h(PublishInfo{Stream: envelope.NotificationsStream, Messages: 1, Duration: time.Since(start), Err: err})
	}
	if err != nil {
		return store.StoredEnvelope{}, false, fmt.Errorf("jetstream: publish envelope: %w", err)
	}
	if ack.Duplicate {
		// Nothing was stored: give the clock back unless a later send has used it.
		s.envs.mu.Lock()
		if s.envs.sends == send {
			s.envs.clock = prev
		}
		s.envs.mu.Unlock()
	}
	if ack.Duplicate {
		orig, err := s.envelopeAt(ctx, org, ack.Sequence)
		if err != nil {
			// Deleted by the sweeper, and still within its window on the server.
			orig = store.StoredEnvelope{EnvelopeWrite: e, Seq: int64(ack.Sequence)}
		}
		return orig, true, nil
	}
	out := e
	out.StoredAt = time.Unix(0, at)
	return store.StoredEnvelope{EnvelopeWrite: out, Seq: int64(ack.Sequence)}, false, nil
}

// envelopeAt reads the org's envelope at seq.
func (s *Store) envelopeAt(ctx context.Context, org string, seq uint64) (store.StoredEnvelope, error) {
	ctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	m, err := s.env.GetMsg(ctx, seq)
	if err != nil {
		return store.StoredEnvelope{}, err
	}
	e, o, ok := s.decodeEnvelope(m)
	if !ok || o != org {
		return store.StoredEnvelope{}, store.ErrNotFound
	}
	return e, nil
}

// decodeEnvelope turns a stream message into a stored envelope of its org.
func (s *Store) decodeEnvelope(m *njs.RawStreamMsg) (store.StoredEnvelope, string, bool) {
	org, ok := s.envelopeOrg(m.Header)
	if !ok {
		return store.StoredEnvelope{}, "", false
	}
	at, ok := storedAt(m.Header)
	if !ok {
		at = m.Time.UnixNano()
	}
	id := m.Header.Get(njs.MsgIDHeader)
	if p := token(org) + ":"; m.Header.Get(hdrOrg) != "" && !(s.opts.EnvoyOrg != "" && org == s.opts.EnvoyOrg) {
		id = strings.TrimPrefix(id, p)
	}
	return store.StoredEnvelope{
		EnvelopeWrite: store.EnvelopeWrite{Subject: m.Subject, MessageID: id, StoredAt: time.Unix(0, at), Data: m.Data},
		Seq:           int64(m.Sequence),
	}, org, true
}

// ReadEnvelopes walks the stream from q.After, skipping other orgs' envelopes.
func (s *Store) ReadEnvelopes(ctx context.Context, org string, q store.EnvelopeQuery) (store.EnvelopePage, error) {
	if err := store.ValidateEnvelopeQuery(org, q); err != nil {
		return store.EnvelopePage{}, err
	}
	if err := checkID("org", org); err != nil {
		return store.EnvelopePage{}, err
	}
	if err := s.enter(); err != nil {
		return store.EnvelopePage{}, err
	}
	defer s.leave()
	page := store.EnvelopePage{Next: q.After}
	examined, bytes := 0, 0
	for seq := uint64(q.After) + 1; ; {
		rctx, cancel := s.ctxTimeout(ctx)
		m, err := s.env.GetMsg(rctx, seq, njs.WithGetMsgSubject(">"))
		cancel()
		if errors.Is(err, njs.ErrMsgNotFound) {
			return page, nil
		}
		if err != nil {
			return store.EnvelopePage{}, fmt.Errorf("jetstream: read envelopes: %w", err)
		}
		seq = m.Sequence + 1
		e, o, ok := s.decodeEnvelope(m)
		if !ok || o != org {
			continue
		}
		if examined == q.Limit {
			page.More = true
			return page, nil
		}
		keep := (q.Since.IsZero() || !e.StoredAt.Before(q.Since)) && (q.Match == nil || q.Match(e.Subject))
		if keep && q.MaxBytes > 0 && len(page.Envelopes) > 0 && bytes+len(e.Data) > q.MaxBytes {
			// The byte budget stops the page before this envelope.
			page.More = true
			return page, nil
		}
		examined++
		page.Next = e.Seq
		if keep {
			page.Envelopes = append(page.Envelopes, e)
			bytes += len(e.Data)
		}
	}
}

// LastEnvelopeSeq waits until the wake-up consumer has seen the stream's last message and
// answers the org's last sequence it saw.
func (s *Store) LastEnvelopeSeq(ctx context.Context, org string) (int64, error) {
	if err := store.ValidatePage(org, 0, 1); err != nil {
		return 0, err
	}
	if err := checkID("org", org); err != nil {
		return 0, err
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	rctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	m, err := s.env.GetLastMsgForSubject(rctx, ">")
	if errors.Is(err, njs.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("jetstream: last envelope: %w", err)
	}
	stop := context.AfterFunc(rctx, func() {
		s.envs.mu.Lock()
		s.envs.cond.Broadcast()
		s.envs.mu.Unlock()
	})
	defer stop()
	s.envs.mu.Lock()
	for s.envs.seen < m.Sequence {
		if err := rctx.Err(); err != nil {
			s.envs.mu.Unlock()
			return 0, fmt.Errorf("jetstream: the wake-up consumer is behind: %w", err)
		}
		s.envs.cond.Wait()
	}
	seq, ok := s.envs.last.get(org)
	complete := s.envs.complete
	s.envs.mu.Unlock()
	if ok || complete {
		return seq, nil
	}
	return s.scanLastEnvelope(ctx, org, m.Sequence)
}

// scanLastEnvelope finds the org's last envelope up to stream sequence upTo by reading the
// stream's headers from its start (an org the bounded map dropped), and remembers it.
func (s *Store) scanLastEnvelope(ctx context.Context, org string, upTo uint64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*s.opts.Timeout)
	defer cancel()
	c, err := s.env.OrderedConsumer(ctx, njs.OrderedConsumerConfig{DeliverPolicy: njs.DeliverAllPolicy, HeadersOnly: true})
	if err != nil {
		return 0, fmt.Errorf("jetstream: last envelope: %w", err)
	}
	var last int64
	for done := false; !done; {
		batch, err := c.FetchNoWait(1000)
		if err != nil {
			return 0, fmt.Errorf("jetstream: last envelope: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return 0, fmt.Errorf("jetstream: last envelope: %w", err)
			}
			if md.Sequence.Stream > upTo {
				done = true
				break
			}
			if o, ok := s.envelopeOrg(m.Headers()); ok && o == org {
				last = int64(md.Sequence.Stream)
			}
			if md.Sequence.Stream == upTo || md.NumPending == 0 {
				done = true
			}
		}
		if err := batch.Error(); err != nil && !done {
			return 0, fmt.Errorf("jetstream: last envelope: %w", err)
		}
		if n == 0 {
			done = true
		}
	}
	if last > 0 {
		s.envs.mu.Lock()
		if cur, ok := s.envs.last.get(org); !ok || cur < last {
			s.envs.last.put(org, last)
		}
		s.envs.mu.Unlock()
	}
	return last, nil
}

// ExpireEnvelopes deletes envelopes of any org stored before cutoff, oldest stream position
// first. Only messages with an org header are deleted, never purged (relay.md §5.1.4). Stored
// times are ordered per relay only, so the walk goes on past younger envelopes and stops at the
// first message the server stored an hour or more after cutoff; anything older that it missed
// leaves with the stream's max age.
func (s *Store) ExpireEnvelopes(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.ValidateSweep(cutoff, limit); err != nil {
		return 0, err
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	n := 0
	for seq := uint64(1); n < limit; {
		rctx, cancel := s.ctxTimeout(ctx)
		m, err := s.env.GetMsg(rctx, seq, njs.WithGetMsgSubject(">"))
		cancel()
		if errors.Is(err, njs.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return n, fmt.Errorf("jetstream: expire envelopes: %w", err)
		}
		seq = m.Sequence + 1
		if m.Time.After(cutoff.Add(time.Hour)) {
			break
		}
		at, ok := storedAt(m.Header)
		if !ok || m.Header.Get(hdrOrg) == "" || at >= cutoff.UnixNano() {
			continue
		}
		dctx, cancel := s.ctxTimeout(ctx)
		err = s.env.DeleteMsg(dctx, m.Sequence)
		cancel()
		if err != nil && !errors.Is(err, njs.ErrMsgNotFound) {
			return n, fmt.Errorf("jetstream: expire envelopes: %w", err)
		}
		if err == nil {
			n++
		}
	}
	return n, nil
}

// SubscribeEnvelopes wakes after each envelope of the org committed by any relay.
func (s *Store) SubscribeEnvelopes(org string) (<-chan struct{}, func()) {
	return s.envHub.Subscribe(org, "")
}

// sessionKey is the KV key of one delivered dedupe key: <org>.<session>.<key> tokens.
func sessionKey(org, session, key string) string {
	return token(org) + "." + token(session) + "." + token(key)
}

type sessionValue struct {
	Seq int64 `json:"seq"`
	At  int64 `json:"at"` // unix nanoseconds
}

// RecordSessionDeliveries writes each key's first delivery in the window by revision (CAS), so
// two relays recording one key keep the same first delivery.
func (s *Store) RecordSessionDeliveries(ctx context.Context, org, session string, ds []store.SessionDelivery, at time.Time, window time.Duration) error {
	if err := store.ValidateSessionDeliveries(org, session, ds, at, window); err != nil {
		return err
	}
	if err := checkID("org", org); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	for _, d := range ds {
		key := sessionKey(org, session, d.DedupeKey)
		val, _ := json.Marshal(sessionValue{d.Seq, at.UnixNano()})
		for attempt := 1; ; attempt++ {
			rctx, cancel := s.ctxTimeout(ctx)
			e, err := s.sessions.Get(rctx, key)
			switch {
			case errors.Is(err, njs.ErrKeyNotFound):
				_, err = s.sessions.Create(rctx, key, val)
			case err != nil:
			default:
				var old sessionValue
				if json.Unmarshal(e.Value(), &old) == nil && at.UnixNano()-old.At < int64(window) {
					cancel()
					goto next
				}
				_, err = s.sessions.Update(rctx, key, val, e.Revision())
			}
			cancel()
			if err == nil {
				break
			}
			if attempt < 100 && (errors.Is(err, njs.ErrKeyExists) || guardRefused(err)) {
				continue
			}
			return fmt.Errorf("jetstream: record session delivery: %w", err)
		}
	next:
	}
	return nil
}

// SessionDeliveries reads each key of the session.
func (s *Store) SessionDeliveries(ctx context.Context, org, session string, keys []string, since time.Time) (map[string]store.SessionDelivery, error) {
	if err := store.ValidateSession(org, session, keys); err != nil {
		return nil, err
	}
	if err := checkID("org", org); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	out := map[string]store.SessionDelivery{}
	for _, k := range keys {
		if _, ok := out[k]; ok {
			continue
		}
		rctx, cancel := s.ctxTimeout(ctx)
		e, err := s.sessions.Get(rctx, sessionKey(org, session, k))
		cancel()
		if errors.Is(err, njs.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("jetstream: session deliveries: %w", err)
		}
		var v sessionValue
		if err := json.Unmarshal(e.Value(), &v); err != nil {
			return nil, fmt.Errorf("jetstream: session delivery %q: %w", k, err)
		}
		d := store.SessionDelivery{DedupeKey: k, Seq: v.Seq, DeliveredAt: time.Unix(0, v.At)}
		if !since.IsZero() && d.DeliveredAt.Before(since) {
			continue
		}
		out[k] = d
	}
	return out, nil
}

// ExpireSessionDeliveries walks the bucket's keys and deletes, by revision, the deliveries
// older than cutoff.
func (s *Store) ExpireSessionDeliveries(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.ValidateSweep(cutoff, limit); err != nil {
		return 0, err
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.expireKV(ctx, s.sessions, limit, func(v []byte) bool {
		var sv sessionValue
		return json.Unmarshal(v, &sv) == nil && sv.At < cutoff.UnixNano()
	})
}

// expireKV deletes, by revision, up to limit keys of kv whose value expired says is expired,
// reading the keys as the lister delivers them.
func (s *Store) expireKV(ctx context.Context, kv njs.KeyValue, limit int, expired func([]byte) bool) (int, error) {
	lctx, cancel := context.WithTimeout(ctx, 4*s.opts.Timeout)
	defer cancel()
	lister, err := kv.ListKeys(lctx)
	if err != nil {
		return 0, fmt.Errorf("jetstream: list %s: %w", kv.Bucket(), err)
	}
	defer lister.Stop()
	n := 0
	for k := range lister.Keys() {
		if n == limit {
			break
		}
		rctx, cancel := s.ctxTimeout(ctx)
		e, err := kv.Get(rctx, k)
		if err == nil && expired(e.Value()) {
			err = kv.Delete(rctx, k, njs.LastRevision(e.Revision()))
			if err == nil {
				n++
			}
		}
		cancel()
		if err != nil && !errors.Is(err, njs.ErrKeyNotFound) && !errors.Is(err, njs.ErrKeyExists) && !guardRefused(err) {
			return n, fmt.Errorf("jetstream: expire %s: %w", kv.Bucket(), err)
		}
	}
	return n, nil
}
