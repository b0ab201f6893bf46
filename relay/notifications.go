package relay

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/store"
)

// Notification lane (relay.md §2 Notifications; envelope.md §2–§5).
//
// POST /v1/notifications validates an envelope with envelope.Decode (every problem, in the
// contract's order), checks that its topic is a publishable subject under `notifications.`,
// and stores it on its subject with the next store sequence, deduplicated on the transport
// message id of envelope.md §4.3 (`dedupe_key:topic` when the key names its event) for 72 h.
// Only topics in ENVOY_NOTIFICATIONS's subject list (envelope.md §5.1) are stored; every other
// topic — a role lane (`notifications.role.>` and its exception twin), a fan-out exception
// (§5.3), any other `notifications.*` subject — travels like the compatibility target's
// core-NATS publishes: never stored, answered `seq` 0, and delivered only to the subscribers
// connected at that moment, in an SSE frame without `id:`.
//
// GET /v1/notifications/stream serves SSE: every stored envelope of the org whose topic matches
// any `subject` pattern (envelope.MatchSubject), once, in store order, `id:` = store sequence,
// from Last-Event-ID (or from the start of the retention) on; with `session`, an envelope whose
// `dedupe_key` was already delivered to that session within the 72 h window is skipped. The
// stream reads the store after every commit notification, so a slow reader never holds up the
// writer or another reader; one that falls more than Limits.SubscriberQueue envelopes behind is
// disconnected with a final comment naming its last delivered id. Being cut for slowness is not
// a failed delivery (relay.md §2): it creates no delivery exception, since the reader resumes
// from its cursor and misses nothing stored.

// notifyPage is how many stored envelopes one store read examines while replaying.
const notifyPage = 512

// maxStreamSubjects bounds the `subject` patterns of one stream.
const maxStreamSubjects = 64

// NotificationsPrefix is the subject family every published topic must belong to (relay.md §2).
const NotificationsPrefix = "notifications."

// PublishResult is the 200 answer of POST /v1/notifications (relay.md §2):
// `{"duplicate":<bool>,"seq":<n>}`. Seq is the envelope's store sequence (the original's for a
// duplicate); it is 0 for an envelope outside ENVOY_NOTIFICATIONS's subject list (a role lane,
// a fan-out exception, …), which is relayed live and never stored.
type PublishResult struct {
	// Duplicate is `duplicate`.
	Duplicate bool
	// Seq is `seq`.
	Seq int64
}

// AppendJSON appends the answer body.
func (r PublishResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"duplicate":`...)
	dst = strconv.AppendBool(dst, r.Duplicate)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, r.Seq, 10)
	return append(dst, "}\n"...)
}

// notifyLane holds the notification lane's in-process state: live subscribers (for envelopes
// that are never stored) and a bounded cache of the per-session dedupe keys, whose truth is the
// store (NotificationStore.RecordSessionDeliveries).
//
// When a key counts as delivered (project-defined): once the SSE frame carrying it has been
// written and flushed to that session's response without error. A stream claims a key in the
// cache before it writes the frame (so two streams of one session in this process never both
// deliver it), releases the claim when the write fails, and after a successful flush records
// every key of that flush in the store with one write (the store sequence of the envelope, 0 for
// a role-lane envelope, never stored). Before a page of envelopes is framed, the keys the cache
// does not know are looked up in the store, so a session reconnecting after a restart, or
// after its keys left the cache, still skips them. A relay that dies between a flush and that
// write delivers those keys once more: at least once, never lost.
type notifyLane struct {
	mu       sync.Mutex
	subs     map[string]map[*envSubscriber]struct{} // org → subscribers
	sessions map[sessionKey]*sessionState
	// keyBytes is the accounted size of every session's cached keys (keyCost each), bounded
	// by sessionKeyBudget: trim evicts the oldest keys of the least recently used sessions.
	keyBytes atomic.Int64
}

func newNotifyLane() *notifyLane {
	return &notifyLane{subs: map[string]map[*envSubscriber]struct{}{}, sessions: map[sessionKey]*sessionState{}}
}

// envSubscriber is one open notification stream.
type envSubscriber struct {
	match func(subject string) bool
	live  chan liveEnvelope // envelopes that are never stored (role lanes)
	// liveBytes is the bytes of the envelopes in live, bounded by
	// Limits.SubscriberQueueBytes as live is by Limits.SubscriberQueue.
	liveBytes atomic.Int64
	maxBytes  int64
	overflow  chan struct{} // closed when live overflowed
	dropped   bool
}

// liveEnvelope is a role-lane envelope relayed to the subscribers connected when it was
// published.
type liveEnvelope struct {
	topic string
	data  []byte
	env   envelope.Envelope
}

func (l *notifyLane) subscribe(org string, sub *envSubscriber) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.subs[org]
	if m == nil {
		m = map[*envSubscriber]struct{}{}
		l.subs[org] = m
	}
	m[sub] = struct{}{}
}

func (l *notifyLane) unsubscribe(org string, sub *envSubscriber) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.subs[org]; m != nil {
		delete(m, sub)
		if len(m) == 0 {
			delete(l.subs, org)
		}
	}
}

// publishLive offers a never-stored envelope to the org's matching subscribers; a subscriber
// whose queue is full is marked dropped (it is then disconnected, relay.md §3).
func (l *notifyLane) publishLive(org string, le liveEnvelope) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for sub := range l.subs[org] {
		if sub.dropped || !sub.match(le.topic) {
			continue
		}
		n := int64(len(le.data))
		if q := sub.liveBytes.Add(n); q > sub.maxBytes && q != n {
			sub.liveBytes.Add(-n)
			sub.dropped = true
			close(sub.overflow)
			continue
		}
		select {
		case sub.live <- le:
		default:
			sub.liveBytes.Add(-n)
			sub.dropped = true
			close(sub.overflow)
		}
	}
}

// sessionKey scopes a stream `session` by org (tokens scope everything, relay.md §1).
type sessionKey struct{ org, session string }

// sessionState caches the dedupe keys delivered to one session (relay.md §2: "envelopes
// already delivered to that session with the same dedupe_key are skipped"), for
// envelope.DeliveryDuplicateWindow and at most maxSessionKeys keys (the oldest go first; the
// store still has them).
type sessionState struct {
	lane  *notifyLane
	mu    sync.Mutex
	keys  map[string]time.Time
	order []string // insertion order, for eviction
	used  time.Time
}

// The session key cache's bounds (relay.md §3): at most maxSessions sessions of at most
// maxSessionKeys keys, and sessionKeyBudget bytes in all (a key costs its length plus
// keyOverhead for its map entry and order slot); the oldest keys of the least recently used
// sessions go first. The store keeps every key, so an evicted key costs a store lookup.
const (
	maxSessionKeys   = 65536
	maxSessions      = 4096
	sessionKeyBudget = 32 << 20
	keyOverhead      = 64
)

func keyCost(key string) int64 { return int64(len(key)) + keyOverhead }

func (l *notifyLane) session(org, session string, now time.Time) *sessionState {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := sessionKey{org, session}
	st := l.sessions[k]
	if st == nil {
		if len(l.sessions) >= maxSessions {
			// Forget the least recently used session.
			var oldest sessionKey
			var at time.Time
			first := true
			for key, s := range l.sessions {
				s.mu.Lock()
				u := s.used
				s.mu.Unlock()
				if first || u.Before(at) {
					oldest, at, first = key, u, false
				}
			}
			l.sessions[oldest].dropAll()
			delete(l.sessions, oldest)
		}
		st = &sessionState{lane: l, keys: map[string]time.Time{}}
		l.sessions[k] = st
	}
	st.mu.Lock()
	st.used = now
	st.mu.Unlock()
	return st
}

// claim records key as delivered to the session unless it already was (within the window);
// it reports whether the caller should deliver.
func (st *sessionState) claim(key string, now time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if at, ok := st.keys[key]; ok && now.Sub(at) < envelope.DeliveryDuplicateWindow {
		return false
	}
	st.putLocked(key, now)
	return true
}

// putLocked remembers key as delivered at `at`, evicting the oldest keys beyond the bound.
func (st *sessionState) putLocked(key string, at time.Time) {
	if _, ok := st.keys[key]; !ok {
		st.lane.keyBytes.Add(keyCost(key))
	}
	st.keys[key] = at
	st.order = append(st.order, key)
	for len(st.keys) > maxSessionKeys && len(st.order) > 0 {
		st.deleteLocked(st.order[0])
		st.order = st.order[1:]
	}
	if len(st.order) > 2*maxSessionKeys {
		st.order = append([]string(nil), st.order[len(st.order)-len(st.keys):]...)
	}
}

// deleteLocked forgets one key (st.mu held).
func (st *sessionState) deleteLocked(key string) {
	if _, ok := st.keys[key]; ok {
		delete(st.keys, key)
		st.lane.keyBytes.Add(-keyCost(key))
	}
}

// dropAll forgets every key of a session leaving the cache.
func (st *sessionState) dropAll() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for key := range st.keys {
		st.deleteLocked(key)
	}
	st.order = nil
}

// trim keeps the cached keys of every session within sessionKeyBudget: while over it, the
// least recently used session loses its oldest keys (down to seven eighths of the budget, so
// a busy lane does not trim on every key). Callers call it after adding keys, holding no
// session lock.
func (l *notifyLane) trim() {
	if l.keyBytes.Load() <= sessionKeyBudget {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	type byUse struct {
		st   *sessionState
		used time.Time
	}
	var order []byUse
	for _, st := range l.sessions {
		st.mu.Lock()
		order = append(order, byUse{st, st.used})
		st.mu.Unlock()
	}
	slices.SortFunc(order, func(a, b byUse) int { return a.used.Compare(b.used) })
	for _, o := range order {
		if l.keyBytes.Load() <= sessionKeyBudget/8*7 {
			return
		}
		st := o.st
		st.mu.Lock()
		for len(st.order) > 0 && l.keyBytes.Load() > sessionKeyBudget/8*7 {
			st.deleteLocked(st.order[0])
			st.order = st.order[1:]
		}
		st.mu.Unlock()
	}
}

// unknown returns the distinct non-empty keys the cache does not hold within the window.
func (st *sessionState) unknown(keys []string, now time.Time) []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []string
	seen := map[string]struct{}{}
	for _, k := range keys {
		if k == "" {
			continue
		}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		if at, ok := st.keys[k]; !ok || now.Sub(at) >= envelope.DeliveryDuplicateWindow {
			out = append(out, k)
		}
	}
	return out
}

// learn adds the deliveries the store knows to the cache (a key the cache holds within the
// window is left alone).
func (st *sessionState) learn(ds map[string]store.SessionDelivery, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for k, d := range ds {
		if at, ok := st.keys[k]; ok && now.Sub(at) < envelope.DeliveryDuplicateWindow {
			continue
		}
		st.putLocked(k, d.DeliveredAt)
	}
}

// release forgets keys whose delivery failed, so a resumed stream delivers them again
// (envelope.md §4.4: an attempt that failed and will be retried is removed).
func (st *sessionState) release(keys []string, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, k := range keys {
		if t, ok := st.keys[k]; ok && t.Equal(at) {
			st.deleteLocked(k)
		}
	}
}

// prune drops remembered keys older than the dedupe window and sessions with none left.
func (l *notifyLane) prune(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, st := range l.sessions {
		st.mu.Lock()
		for key, at := range st.keys {
			if now.Sub(at) >= envelope.DeliveryDuplicateWindow {
				st.deleteLocked(key)
			}
		}
		if len(st.order) > len(st.keys) {
			kept := st.order[:0]
			for _, key := range st.order {
				if _, ok := st.keys[key]; ok {
					kept = append(kept, key)
				}
			}
			st.order = kept
		}
		empty := len(st.keys) == 0 && now.Sub(st.used) >= envelope.DeliveryDuplicateWindow
		st.mu.Unlock()
		if empty {
			delete(l.sessions, k)
		}
	}
}

// handlePublishNotification serves POST /v1/notifications.
func (s *Server) handlePublishNotification(w http.ResponseWriter, r *http.Request, p *Principal) {
	body, e := readBody(w, r, s.limits.MaxBody)
	if e != nil {
		s.refuseNotify(w, e)
		return
	}
	res, e := s.publishBody(r.Context(), p.Org, body)
	if e != nil {
		s.refuseNotify(w, e)
		return
	}
	w.Header().Set("Content-Type", MediaJSON)
	_, _ = w.Write(res.AppendJSON(nil))
}

func (s *Server) refuseNotify(w http.ResponseWriter, e *Error) {
	s.metrics.refusals.WithLabelValues(e.Code).Inc()
	writeError(w, e)
}

// CheckPublishEnvelope is the ingress check of POST /v1/notifications without HTTP framing: the
// problems of envelope.Decode (wire checks, then struct checks, envelope.md §2.4), then the
// relay's publish checks — `topic` a publishable subject (envelope.md §3.2) under
// `notifications.` (relay.md §2), and no caller-supplied `dedupe_key` with the role-forward mark
// (envelope.md §4.4). It returns the decoded envelope and every problem found, in that order.
func CheckPublishEnvelope(body []byte) (envelope.Envelope, envelope.Problems) {
	// A decoding problem leaves env zero (envelope.Decode), and then neither check below
	// applies: a blank topic and an empty dedupe_key are already reported or pass.
	env, problems := envelope.Decode(body)
	if strings.TrimSpace(env.Topic) != "" {
		if err := envelope.ValidPublishSubject(env.Topic); err != nil {
			problems = append(problems, envelope.Problem{Field: "topic", Message: err.Error()})
		} else if !strings.HasPrefix(env.Topic, NotificationsPrefix) {
			problems = append(problems, envelope.Problem{Field: "topic", Message: MsgTopicNotNotifications})
		}
	}
	if envelope.IsRoleForwardDedupeKey(env.DedupeKey) {
		problems = append(problems, envelope.Problem{Field: "dedupe_key", Message: MsgForwardDedupeKey})
	}
	return env, problems
}

// Messages of the relay's publish checks (project-defined).
const (
	// MsgTopicNotNotifications refuses a topic outside the `notifications.` family.
	MsgTopicNotNotifications = "topic must be a subject under notifications."
	// MsgForwardDedupeKey refuses a caller-supplied dedupe_key with the role-forward mark
	// (envelope.md §4.4: "Ingress APIs MUST refuse a caller-supplied dedupe_key with that prefix").
	MsgForwardDedupeKey = "dedupe_key must not start with envoy.role.forward."
)

// problemsError turns a problem list into the 400 body: the messages joined by "; " as
// `message`, the first problem's field as `field`, and every problem under `problems`.
func problemsError(ps envelope.Problems) *Error {
	e := newError(CodeInvalidRequest, "%s", ps.Err().Error())
	e.Field = ps[0].Field
	e.Problems = make([]ErrorProblem, len(ps))
	for i, p := range ps {
		e.Problems[i] = ErrorProblem{Field: p.Field, Message: p.Message}
	}
	return e
}

// PublishEnvelope is POST /v1/notifications without HTTP framing: body is the envelope JSON of
// org's publisher. Success means the envelope is durably stored (or, for a topic the stream
// does not store, relayed to the subscribers connected now). A refusal is an *[Error] (the
// body the route would answer; use errors.As).
func (s *Server) PublishEnvelope(ctx context.Context, org string, body []byte) (PublishResult, error) {
	res, e := s.publishBody(ctx, org, body)
	if e != nil {
		return res, e
	}
	return res, nil
}

// publishBody is PublishEnvelope with the refusal's concrete type.
func (s *Server) publishBody(ctx context.Context, org string, body []byte) (PublishResult, *Error) {
	env, problems := CheckPublishEnvelope(body)
	if len(problems) > 0 {
		return PublishResult{}, problemsError(problems)
	}
	return s.publishEnvelope(ctx, org, env)
}

// publishEnvelope stores (or, on a role lane, relays) a checked envelope.
func (s *Server) publishEnvelope(ctx context.Context, org string, env envelope.Envelope) (PublishResult, *Error) {
	data := env.AppendJSON(nil)
	if _, stored := envelope.StreamSubjectFor(env.Topic); !stored {
		// Outside ENVOY_NOTIFICATIONS's subject list (a role lane, a fan-out exception, any
		// other notifications.* topic): never retained (envelope.md §5.1, §5.3, relay.md
		// §5.1.4), delivered to whoever listens now, answered seq 0.
		s.notify.publishLive(org, liveEnvelope{topic: env.Topic, data: data, env: env})
		s.metrics.envelopes.WithLabelValues("live").Inc()
		return PublishResult{}, nil
	}
	id, _ := envelope.MessageID(env)
	st, dup, err := s.store.AppendEnvelope(context.WithoutCancel(ctx), org, store.EnvelopeWrite{
		Subject: env.Topic, MessageID: id, StoredAt: s.now(), Data: data,
	}, envelope.DeliveryDuplicateWindow)
	if err != nil {
		return PublishResult{}, s.storeErr(ctx, "append envelope", err)
	}
	if dup {
		s.metrics.envelopes.WithLabelValues("duplicate").Inc()
	} else {
		s.metrics.envelopes.WithLabelValues("stored").Inc()
	}
	return PublishResult{Duplicate: dup, Seq: st.Seq}, nil
}

// streamQuery is a parsed GET /v1/notifications/stream request.
type streamQuery struct {
	subjects []string
	session  string
	after    int64
}

func parseStreamQuery(r *http.Request) (streamQuery, *Error) {
	var q streamQuery
	vals := r.URL.Query()
	for _, name := range slices.Sorted(maps.Keys(vals)) { // the first fault reported is stable
		values := vals[name]
		switch name {
		case "subject":
			for _, v := range values {
				if err := envelope.ValidSubscribeSubject(v); err != nil {
					return q, newError(CodeInvalidRequest, "%s", err.Error()).withField("subject")
				}
				q.subjects = append(q.subjects, v)
			}
		case "session":
			if len(values) != 1 {
				return q, newError(CodeInvalidRequest, "session must be given once.").withField("session")
			}
			if msg := checkSession(values[0]); msg != "" {
				return q, newError(CodeInvalidRequest, "%s", msg).withField("session")
			}
			q.session = values[0]
		default:
			return q, newError(CodeInvalidRequest, "Unknown query parameter %q.", clip(name)).withField(clip(name))
		}
	}
	if len(q.subjects) == 0 {
		return q, newError(CodeInvalidRequest, "At least one subject pattern is required.").withField("subject")
	}
	if len(q.subjects) > maxStreamSubjects {
		return q, newError(CodeInvalidRequest, "A stream takes at most %d subject patterns.", maxStreamSubjects).withField("subject")
	}
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		var e *Error
		if q.after, e = parseCursor("Last-Event-ID", strings.TrimSpace(v)); e != nil {
			return q, e
		}
	}
	return q, nil
}

// checkSession applies the opaque-identifier rule to a stream `session` (not blank, at most
// 256 bytes, valid UTF-8, no control characters); it returns the problem or "".
func checkSession(v string) string {
	switch {
	case strings.TrimSpace(v) == "":
		return "session must not be empty"
	case len(v) > 256:
		return "session exceeds the 256 byte limit"
	case !utf8.ValidString(v):
		return "session must be valid UTF-8"
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "session must not contain control characters"
	}
	return ""
}

// matcher returns the subscription's Match: a subject matching any pattern, once.
func matcher(patterns []string) func(string) bool {
	return func(subject string) bool {
		for _, p := range patterns {
			if envelope.MatchSubject(p, subject) {
				return true
			}
		}
		return false
	}
}

// envStream is one open GET /v1/notifications/stream response.
type envStream struct {
	s       *Server
	ctx     context.Context
	org     string
	q       streamQuery
	w       http.ResponseWriter
	rc      *http.ResponseController
	buf     []byte
	cursor  int64 // last delivered (or skipped) store sequence
	session *sessionState
	claimed []store.SessionDelivery // session keys claimed for the frames in buf
	claimAt time.Time
	behind  bool // a live read found more than the subscriber queue undelivered
}

// handleNotificationStream serves GET /v1/notifications/stream.
func (s *Server) handleNotificationStream(w http.ResponseWriter, r *http.Request, p *Principal) {
	q, e := parseStreamQuery(r)
	if e != nil {
		writeError(w, e)
		return
	}
	ctx := r.Context()
	if ok, e := s.openStream(); !ok {
		writeError(w, e)
		return
	}
	defer s.closeStream()
	g := s.holdGrant(p, RightNotifySubscribe)
	defer s.dropGrant(g)
	sub := &envSubscriber{match: matcher(q.subjects), live: make(chan liveEnvelope, s.limits.SubscriberQueue),
		maxBytes: s.limits.SubscriberQueueBytes, overflow: make(chan struct{})}
	// Subscribe before the first read so that nothing committed after it is missed.
	notify, cancel := s.store.SubscribeEnvelopes(p.Org)
	defer cancel()
	s.notify.subscribe(p.Org, sub)
	defer s.notify.unsubscribe(p.Org, sub)

	st := &envStream{s: s, ctx: ctx, org: p.Org, q: q, w: w, rc: http.NewResponseController(w), cursor: q.after, buf: make([]byte, 0, 4096)}
	if q.session != "" {
		st.session = s.notify.session(p.Org, q.session, s.now())
	}
	_ = st.rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", MediaSSE)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Transfer-Encoding", "identity") // one write per flush, as the runs lane (sse.go)
	w.WriteHeader(http.StatusOK)
	s.metrics.subscribers.Inc()
	defer s.metrics.subscribers.Dec()
	// Send the headers now: the client knows the subscription exists before any envelope.
	if err := st.rc.Flush(); err != nil {
		return
	}

	// Replay: read until the store has nothing more (a resume may be far behind; that is not
	// a slow consumer).
	if ok := st.drain(ctx, false); !ok {
		return
	}
	hbC, hbStop := s.heartbeat()
	defer hbStop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.shutdown:
			st.comment("agentwire: server shutting down; last delivered id: " + strconv.FormatInt(st.cursor, 10))
			_ = st.flush()
			return
		case <-g.ended():
			st.comment("agentwire: disconnected: " + g.reason + "; last delivered id: " + strconv.FormatInt(st.cursor, 10))
			_ = st.flush()
			return
		case <-sub.overflow:
			st.cutOff(ctx)
			return
		case le := <-sub.live:
			les := []liveEnvelope{le}
			taken := int64(len(le.data))
			for i := 0; i < 255; i++ {
				select {
				case le = <-sub.live:
					les = append(les, le)
					taken += int64(len(le.data))
					continue
				default:
				}
				break
			}
			sub.liveBytes.Add(-taken)
			if err := st.liveFrames(les); err != nil {
				return
			}
			if err := st.flush(); err != nil {
				return
			}
		case _, ok := <-notify:
			if !ok {
				st.comment("agentwire: store closed; last delivered id: " + strconv.FormatInt(st.cursor, 10))
				_ = st.flush()
				return
			}
			if ok := st.drain(ctx, true); !ok {
				if st.behind {
					st.cutOff(ctx)
				}
				return
			}
		case <-hbC:
			st.comment("heartbeat")
			if err := st.flush(); err != nil {
				return
			}
		}
	}
}

// drain reads stored envelopes after the cursor until the store has no more and writes them.
// In live mode a read that finds more undelivered matching envelopes than the subscriber queue
// holds means the reader fell behind: drain sets st.behind and returns false. It also returns
// false when writing fails or the store read fails.
func (st *envStream) drain(ctx context.Context, live bool) bool {
	s := st.s
	limit := notifyPage
	if live {
		limit = s.limits.SubscriberQueue + 1
	}
	for {
		page, err := s.store.ReadEnvelopes(ctx, st.org, store.EnvelopeQuery{
			After: st.cursor, Limit: limit, Since: s.now().Add(-envelope.DeliveryDuplicateWindow), Match: matcher(st.q.subjects),
			MaxBytes: readPageBytes,
		})
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				s.log.LogAttrs(ctx, slog.LevelWarn, "notification stream read failed", slog.String("error", err.Error()))
			}
			return false
		}
		if live && len(page.Envelopes) > s.limits.SubscriberQueue {
			st.behind = true // more than the queue holds: cut off, it resumes from its cursor
			return false
		}
		if err := st.storedFrames(page.Envelopes); err != nil {
			return false
		}
		st.cursor = page.Next
		if err := st.flush(); err != nil {
			return false
		}
		if !page.More || s.isShuttingDown() {
			return true
		}
	}
}

// storedFrames appends the SSE frames of stored envelopes (`id:` = store sequence), leaving out
// those whose dedupe key the session already got.
func (st *envStream) storedFrames(envs []store.StoredEnvelope) error {
	var keys []string
	if st.session != nil {
		keys = make([]string, len(envs))
		for i, e := range envs {
			if env, ps := envelope.Decode(e.Data); len(ps) == 0 {
				keys[i] = env.DedupeKey
			}
		}
		if err := st.prefetch(keys); err != nil {
			return err
		}
	}
	for i, e := range envs {
		if st.session != nil && keys[i] != "" && !st.claim(keys[i], e.Seq) {
			continue
		}
		st.buf = append(st.buf, "id: "...)
		st.buf = strconv.AppendInt(st.buf, e.Seq, 10)
		st.buf = append(st.buf, "\ndata: "...)
		st.buf = append(st.buf, e.Data...)
		st.buf = append(st.buf, "\n\n"...)
	}
	return nil
}

// liveFrames appends the frames of never-stored envelopes: no `id:`, so the client's
// Last-Event-ID stays on the last stored envelope.
func (st *envStream) liveFrames(les []liveEnvelope) error {
	if st.session != nil {
		keys := make([]string, len(les))
		for i, le := range les {
			keys[i] = le.env.DedupeKey
		}
		if err := st.prefetch(keys); err != nil {
			return err
		}
	}
	for _, le := range les {
		if st.session != nil && le.env.DedupeKey != "" && !st.claim(le.env.DedupeKey, 0) {
			continue
		}
		st.buf = append(st.buf, "data: "...)
		st.buf = append(st.buf, le.data...)
		st.buf = append(st.buf, "\n\n"...)
	}
	return nil
}

// prefetch looks up in the store the keys the session cache does not know and adds what was
// delivered within the window to the cache.
func (st *envStream) prefetch(keys []string) error {
	now := st.s.now()
	missing := st.session.unknown(keys, now)
	if len(missing) == 0 {
		return nil
	}
	found, err := st.s.store.SessionDeliveries(st.ctx, st.org, st.q.session, missing, now.Add(-envelope.DeliveryDuplicateWindow))
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			st.s.log.LogAttrs(st.ctx, slog.LevelWarn, "session dedupe read failed", slog.String("error", err.Error()))
		}
		return err
	}
	st.session.learn(found, now)
	return nil
}

// claim takes key for this stream's next flush; false when the session already got it.
func (st *envStream) claim(key string, seq int64) bool {
	if st.claimAt.IsZero() {
		st.claimAt = st.s.now()
	}
	if !st.session.claim(key, st.claimAt) {
		return false
	}
	st.claimed = append(st.claimed, store.SessionDelivery{DedupeKey: key, Seq: seq})
	return true
}

func (st *envStream) comment(text string) {
	st.buf = append(st.buf, ": "...)
	st.buf = append(st.buf, text...)
	st.buf = append(st.buf, "\n\n"...)
}

// flush writes the buffered frames within the write timeout. After a successful write the
// session keys claimed for them are delivered: they are recorded in the store (one write per
// flush). A failed write releases them, so that a resumed stream delivers them again.
func (st *envStream) flush() error {
	claimed, at := st.claimed, st.claimAt
	st.claimed, st.claimAt = nil, time.Time{}
	if len(st.buf) == 0 {
		return nil
	}
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.s.cfg.WriteTimeout))
	_, err := st.w.Write(st.buf)
	if err == nil {
		err = st.rc.Flush()
	}
	st.buf = st.buf[:0]
	if st.session == nil {
		return err
	}
	st.s.notify.trim() // the keys claimed and learned for this flush
	if len(claimed) == 0 {
		return err
	}
	if err != nil {
		keys := make([]string, len(claimed))
		for i, d := range claimed {
			keys[i] = d.DedupeKey
		}
		st.session.release(keys, at)
		return err
	}
	// The frames are out: a failure to record them leaves them in the cache only (this
	// process still skips them).
	if e := st.s.store.RecordSessionDeliveries(context.WithoutCancel(st.ctx), st.org, st.q.session, claimed, at,
		envelope.DeliveryDuplicateWindow); e != nil && !errors.Is(e, store.ErrClosed) {
		st.s.log.LogAttrs(st.ctx, slog.LevelWarn, "session dedupe keys not recorded", slog.String("error", e.Error()))
	}
	return nil
}

// cutOff ends a stream that fell more than the subscriber queue behind (relay.md §3): a final
// comment names the last delivered id, so the reader resumes from it. A reader cut for being
// slow is not a failed delivery (relay.md §2): nothing is lost, since everything it missed is
// stored and replayed on resume, so no delivery exception is published (one stalled reader
// would otherwise make the relay store one exception per envelope it missed — a write
// amplifier for any token with notify.subscribe).
func (st *envStream) cutOff(ctx context.Context) {
	s := st.s
	s.metrics.slowDisconnects.Inc()
	s.log.LogAttrs(ctx, slog.LevelWarn, "slow notification subscriber disconnected",
		slog.Int64("lastDeliveredId", st.cursor), slog.Int("queue", s.limits.SubscriberQueue))
	st.comment("agentwire: disconnected: subscriber fell more than " + strconv.Itoa(s.limits.SubscriberQueue) +
		" envelopes (or " + strconv.FormatInt(s.limits.SubscriberQueueBytes, 10) + " bytes) behind; last delivered id: " + strconv.FormatInt(st.cursor, 10) +
		" (resume with Last-Event-ID: " + strconv.FormatInt(st.cursor, 10) + ")")
	_ = st.flush()
}
