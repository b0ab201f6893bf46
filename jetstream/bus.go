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

	"github.com/agentwire/agentwire/store"
)

// BusStream holds the bus lane: each stream's entries (messages, task events, publishes) and
// counter, and the index subjects that make gids, client_msg_ids and task proposals unique.
const BusStream = "AGENTWIRE_BUS"

// BusStateBucket is the KV bucket of receipts, acks, handoffs and announcements (relay.md
// §5.1.3), each updated by revision.
const BusStateBucket = "AGENTWIRE_BUSSTATE"

// Subjects of AGENTWIRE_BUS (relay.md §5: agentwire.bus.<org-token>.<network>.<channel-token>;
// a swarm's org token is "-", §5.1.1).
const (
	busPrefix      = "agentwire.bus."
	busCtrPrefix   = "agentwire.busctr."
	busGIDPrefix   = "agentwire.busgid."
	busCmidPrefix  = "agentwire.buscmid."
	busTaskPrefix  = "agentwire.bustask."
	busVaultPrefix = "agentwire.busvault."
	busPropSubject = "agentwire.busprop"
)

// streamTail is the <org-token>.<network>.<name-token> of a bus stream's subjects.
func streamTail(k store.StreamKey) string {
	org := "-"
	if k.Network == store.NetworkOrg {
		org = token(k.Org)
	}
	return org + "." + k.Network + "." + token(k.Name)
}

// cmidSubject indexes a client_msg_id of an instance; kind "m" (messages) and "p" (publishes)
// are separate idempotency spaces.
func cmidSubject(kind, org, instance, cmid string) string {
	return busCmidPrefix + kind + "." + token(org) + "." + token(instance) + "." + token(cmid)
}

// busEntry is the payload of one stream position.
type busEntry struct {
	Msg  *store.StoredMessage `json:"msg,omitempty"`
	Task *store.TaskProposal  `json:"task,omitempty"`
	Pub  *store.StoredPublish `json:"pub,omitempty"`
}

// counter is the payload of a counter subject.
type counter struct {
	N int64 `json:"n"`
}

// viewEntry is one entry of the bus view and the stream sequences of its batch's index
// messages (deleted with it by the sweeper).
type viewEntry struct {
	e       store.StreamEntry
	seq     uint64
	indexes []uint64
	deleted bool
}

// busView is this instance's picture of the committed bus, fed by an ordered consumer over the
// whole stream (relay.md §5.1.5: committed messages only). Reads wait until it has caught up
// with the stream's last message; writes are decided by the server's guards, never by it.
type busView struct {
	mu      sync.Mutex
	cond    *sync.Cond
	seen    uint64
	subj    map[string]uint64 // guarded subject → stream sequence of its last message
	streams map[store.StreamKey]*streamView
	gids    map[string]*viewEntry
	cmids   map[string]*viewEntry // cmid subject → entry
	props   map[string]*viewEntry // org token + "." + question gid → task entry
	propIDs []*viewEntry          // by ID
	ctrN    map[string]int64      // counter subject → its value, read with its sequence in subj
}

type streamView struct {
	last    int64
	entries []*viewEntry // by seq
}

func (v *busView) init() {
	v.cond = sync.NewCond(&v.mu)
	v.subj = map[string]uint64{}
	v.streams = map[store.StreamKey]*streamView{}
	v.gids = map[string]*viewEntry{}
	v.cmids = map[string]*viewEntry{}
	v.props = map[string]*viewEntry{}
	v.ctrN = map[string]int64{}
}

// counterAt returns a counter subject's value and the guard for its next value.
func (v *busView) counterAt(subject string) (int64, uint64) { return v.ctrN[subject], v.subj[subject] }

func (v *busView) stream(k store.StreamKey) *streamView {
	sv := v.streams[k]
	if sv == nil {
		sv = &streamView{}
		v.streams[k] = sv
	}
	return sv
}

// pendingIndex collects the index messages of a batch until its entry arrives.
type pendingIndex struct {
	seqs []uint64
}

// apply folds one committed message into the view. v.mu must be held.
func (v *busView) apply(subject string, seq uint64, data []byte, pend *pendingIndex) {
	v.seen = max(v.seen, seq)
	switch {
	case len(subject) > len(busPrefix) && subject[:len(busPrefix)] == busPrefix:
		var e busEntry
		if json.Unmarshal(data, &e) != nil {
			return
		}
		ve := &viewEntry{seq: seq, indexes: pend.seqs}
		switch {
		case e.Msg != nil:
			ve.e = store.StreamEntry{Seq: e.Msg.Seq, Message: e.Msg}
			v.gids[e.Msg.GID] = ve
			v.cmids[cmidSubject("m", e.Msg.SenderOrg, e.Msg.SenderInstance, e.Msg.ClientMsgID)] = ve
			v.stream(e.Msg.Stream).add(ve)
		case e.Task != nil:
			ve.e = store.StreamEntry{Seq: e.Task.Seq, Task: e.Task}
			v.props[token(e.Task.Stream.Org)+"."+e.Task.QuestionGID] = ve
			v.propIDs = append(v.propIDs, ve)
			v.stream(e.Task.Stream).add(ve)
		case e.Pub != nil:
			ve.e = store.StreamEntry{Seq: e.Pub.Seq, Publish: e.Pub}
			v.cmids[cmidSubject("p", e.Pub.SenderOrg, e.Pub.SenderInstance, e.Pub.ClientMsgID)] = ve
			v.stream(e.Pub.Stream).add(ve)
		}
		*pend = pendingIndex{}
	default:
		v.subj[subject] = seq
		if strings.HasPrefix(subject, busGIDPrefix) || strings.HasPrefix(subject, busCmidPrefix) {
			// Index messages go with their entry; counters are never deleted.
			pend.seqs = append(pend.seqs, seq)
		}
		var c counter
		if len(data) > 0 && json.Unmarshal(data, &c) == nil {
			v.ctrN[subject] = c.N
		}
	}
}

func (sv *streamView) add(ve *viewEntry) {
	sv.last = max(sv.last, ve.e.Seq)
	sv.entries = append(sv.entries, ve)
	// Entries of one stream arrive in seq order (each batch is guarded by the stream's
	// counter); keep the order if they ever do not.
	for i := len(sv.entries) - 1; i > 0 && sv.entries[i-1].e.Seq > sv.entries[i].e.Seq; i-- {
		sv.entries[i-1], sv.entries[i] = sv.entries[i], sv.entries[i-1]
	}
}

// openBus sets up the bus lane: its stream, its KV bucket and the consumer feeding the view.
func (s *Store) openBus(ctx context.Context) error {
	var err error
	if s.bus, err = s.ensureStream(ctx, njs.StreamConfig{
		Name:               BusStream,
		Subjects:           []string{busPrefix + ">", busCtrPrefix + ">", busGIDPrefix + ">", busCmidPrefix + ">", busTaskPrefix + ">", busVaultPrefix + ">", busPropSubject},
		Retention:          njs.LimitsPolicy,
		Storage:            njs.FileStorage,
		Replicas:           s.opts.Replicas,
		AllowAtomicPublish: true,
		AllowRollup:        true,
		Duplicates:         2 * time.Minute,
	}); err != nil {
		return err
	}
	if s.busState, err = s.js.CreateOrUpdateKeyValue(ctx, njs.KeyValueConfig{
		Bucket: BusStateBucket, Storage: njs.FileStorage, Replicas: s.opts.Replicas, History: 1,
	}); err != nil {
		return fmt.Errorf("jetstream: bucket %s: %w", BusStateBucket, err)
	}
	s.view.init()
	c, err := s.bus.OrderedConsumer(ctx, njs.OrderedConsumerConfig{DeliverPolicy: njs.DeliverAllPolicy})
	if err != nil {
		return fmt.Errorf("jetstream: bus consumer: %w", err)
	}
	var pend pendingIndex
	cc, err := c.Consume(func(m njs.Msg) {
		md, err := m.Metadata()
		if err != nil {
			return
		}
		s.view.mu.Lock()
		var k *store.StreamKey
		if sub := m.Subject(); len(sub) > len(busPrefix) && sub[:len(busPrefix)] == busPrefix {
			var e busEntry
			if json.Unmarshal(m.Data(), &e) == nil {
				switch {
				case e.Msg != nil:
					k = &e.Msg.Stream
				case e.Task != nil:
					k = &e.Task.Stream
				case e.Pub != nil:
					k = &e.Pub.Stream
				}
			}
		}
		s.view.apply(m.Subject(), md.Sequence.Stream, m.Data(), &pend)
		s.view.cond.Broadcast()
		s.view.mu.Unlock()
		if k != nil {
			s.busHub.Notify(k.Org+"\x00"+k.Network, k.Name)
		}
	})
	if err != nil {
		return fmt.Errorf("jetstream: bus consumer: %w", err)
	}
	s.watchers = append(s.watchers, cc)
	return nil
}

// syncView waits until the view holds every message committed to the bus stream before the
// call (read from the leader).
func (s *Store) syncView(ctx context.Context) error {
	rctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	m, err := s.bus.GetLastMsgForSubject(rctx, ">")
	if errors.Is(err, njs.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jetstream: bus stream: %w", err)
	}
	stop := context.AfterFunc(rctx, func() {
		s.view.mu.Lock()
		s.view.cond.Broadcast()
		s.view.mu.Unlock()
	})
	defer stop()
	s.view.mu.Lock()
	defer s.view.mu.Unlock()
	for s.view.seen < m.Sequence {
		if err := rctx.Err(); err != nil {
			return fmt.Errorf("jetstream: the bus consumer is behind: %w", err)
		}
		s.view.cond.Wait()
	}
	return nil
}

// refresh reads the last sequence of each guarded subject from the leader into the view: after
// a refused guard (another relay wrote, or a sweeper deleted an index message, which the
// consumer never shows).
func (s *Store) refresh(ctx context.Context, subjects []string) error {
	for _, subj := range subjects {
		rctx, cancel := s.ctxTimeout(ctx)
		m, err := s.bus.GetLastMsgForSubject(rctx, subj)
		cancel()
		var seq uint64
		var c counter
		switch {
		case errors.Is(err, njs.ErrMsgNotFound):
		case err != nil:
			return fmt.Errorf("jetstream: bus guard: %w", err)
		default:
			seq = m.Sequence
			if len(m.Data) > 0 {
				_ = json.Unmarshal(m.Data, &c)
			}
		}
		s.view.mu.Lock()
		if seq == 0 {
			delete(s.view.subj, subj)
		} else {
			s.view.subj[subj] = seq
			if len(m.Data) > 0 {
				s.view.ctrN[subj] = c.N
			}
		}
		s.view.mu.Unlock()
	}
	return s.syncView(ctx)
}

// guarded is one message of a bus batch with the expected last sequence of its own subject.
type guarded struct {
	subject string
	data    []byte
}

// busBatch publishes the guarded messages (each guarded by its subject's last sequence in the
// view) and then the entry, as one atomic batch. v.mu must not be held.
func (s *Store) busBatch(ctx context.Context, gs []guarded, entrySubj string, entry []byte, expect map[string]uint64) (uint64, error) {
	msgs := make([]*nats.Msg, 0, len(gs)+1)
	for _, g := range gs {
		m := nats.NewMsg(g.subject)
		m.Data = g.data
		m.Header.Set(njs.ExpectedLastSubjSeqHeader, strconv.FormatUint(expect[g.subject], 10))
		msgs = append(msgs, m)
	}
	m := nats.NewMsg(entrySubj)
	m.Data = entry
	msgs = append(msgs, m)
	ctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	ack, err := jetstreamextPublish(ctx, s, msgs)
	if err != nil {
		return 0, err
	}
	return ack, nil
}

func (s *Store) busNow() time.Time { return s.opts.Now() }

func visibleAt(expires time.Time, now time.Time) bool { return expires.IsZero() || expires.After(now) }

func (ve *viewEntry) expires() time.Time {
	switch {
	case ve.e.Message != nil:
		return ve.e.Message.ExpiresAt
	case ve.e.Publish != nil:
		return ve.e.Publish.ExpiresAt
	}
	return time.Time{}
}

func (ve *viewEntry) visible(now time.Time) bool {
	return !ve.deleted && visibleAt(ve.expires(), now)
}

// AppendMessage stores the message with its stream's next seq in one atomic batch: the stream
// counter, the gid index and the client_msg_id index, each guarded by its subject's last
// sequence, then the entry (relay.md §5.1.3).
func (s *Store) AppendMessage(ctx context.Context, m store.MessageWrite) (store.StoredMessage, bool, error) {
	if err := store.ValidateMessage(m); err != nil {
		return store.StoredMessage{}, false, err
	}
	if err := checkStreamIDs(m.Stream); err != nil {
		return store.StoredMessage{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return store.StoredMessage{}, false, err
	}
	if err := s.enter(); err != nil {
		return store.StoredMessage{}, false, err
	}
	defer s.leave()
	if err := s.syncView(ctx); err != nil {
		return store.StoredMessage{}, false, err
	}
	cmid := cmidSubject("m", m.SenderOrg, m.SenderInstance, m.ClientMsgID)
	ctr := busCtrPrefix + streamTail(m.Stream)
	gid := m.GID
	if gid == "" {
		gid = store.NewULID(m.ServerTime)
	}
	gidSubj := busGIDPrefix + token(gid)
	for attempt := 1; ; attempt++ {
		now := s.busNow()
		s.view.mu.Lock()
		if ve := s.view.cmids[cmid]; ve != nil && ve.e.Message != nil && ve.visible(now) {
			orig := *ve.e.Message
			s.view.mu.Unlock()
			return orig, true, nil
		}
		if ve := s.view.gids[gid]; ve != nil && ve.visible(now) || s.view.subj[gidSubj] != 0 && ve == nil {
			s.view.mu.Unlock()
			if m.GID == "" {
				gid = store.NewULID(m.ServerTime)
				gidSubj = busGIDPrefix + token(gid)
				continue
			}
			return store.StoredMessage{}, false, fmt.Errorf("%w %q", store.ErrDuplicateGID, gid)
		}
		n, ctrSeq := s.view.counterAt(ctr)
		seq := n + 1
		expect := map[string]uint64{ctr: ctrSeq, gidSubj: s.view.subj[gidSubj], cmid: s.view.subj[cmid]}
		s.view.mu.Unlock()
		sm := store.StoredMessage{MessageWrite: m, Seq: seq}
		sm.GID = gid
		if sm.ThreadID == "" {
			sm.ThreadID = gid
		}
		entry, _ := json.Marshal(busEntry{Msg: &sm})
		ctrData, _ := json.Marshal(counter{seq})
		_, err := s.busBatch(ctx, []guarded{{ctr, ctrData}, {gidSubj, nil}, {cmid, nil}}, busPrefix+streamTail(m.Stream), entry, expect)
		if err == nil {
			s.busHub.Notify(m.Stream.Org+"\x00"+m.Stream.Network, m.Stream.Name)
			return sm, false, nil
		}
		if !guardRefused(err) || attempt >= 1000 {
			return store.StoredMessage{}, false, fmt.Errorf("jetstream: append message: %w", err)
		}
		if err := s.refresh(ctx, []string{ctr, gidSubj, cmid}); err != nil {
			return store.StoredMessage{}, false, err
		}
		if err := backoff(ctx, attempt/4); err != nil {
			return store.StoredMessage{}, false, err
		}
	}
}

func checkStreamIDs(k store.StreamKey) error {
	if err := checkID("org", k.Org); err != nil {
		return err
	}
	field := "channel"
	if k.Network == store.NetworkSwarm {
		field = "swarm_id"
	}
	return checkID(field, k.Name)
}

// LookupClientMsg answers the visible message of the (org, instance, client_msg_id) key.
func (s *Store) LookupClientMsg(ctx context.Context, org, instance, clientMsgID string) (store.StoredMessage, error) {
	if err := store.ValidateClientKey(org, instance, clientMsgID); err != nil {
		return store.StoredMessage{}, err
	}
	if err := s.enterSynced(ctx); err != nil {
		return store.StoredMessage{}, err
	}
	defer s.leave()
	now := s.busNow()
	s.view.mu.Lock()
	defer s.view.mu.Unlock()
	if ve := s.view.cmids[cmidSubject("m", org, instance, clientMsgID)]; ve != nil && ve.e.Message != nil && ve.visible(now) {
		return *ve.e.Message, nil
	}
	return store.StoredMessage{}, store.ErrNotFound
}

// enterSynced enters a call and waits for the view to catch up with the stream.
func (s *Store) enterSynced(ctx context.Context) error {
	if err := s.enter(); err != nil {
		return err
	}
	if err := s.syncView(ctx); err != nil {
		s.leave()
		return err
	}
	return nil
}

// GetMessage answers the visible message with that gid within scope.
func (s *Store) GetMessage(ctx context.Context, scope store.MessageScope, gid string) (store.StoredMessage, error) {
	if err := store.ValidateScope(scope, gid); err != nil {
		return store.StoredMessage{}, err
	}
	if err := s.enterSynced(ctx); err != nil {
		return store.StoredMessage{}, err
	}
	defer s.leave()
	now := s.busNow()
	s.view.mu.Lock()
	defer s.view.mu.Unlock()
	if ve := s.view.gids[gid]; ve != nil && ve.e.Message != nil && ve.visible(now) && scope.Includes(ve.e.Message.Stream) {
		return *ve.e.Message, nil
	}
	return store.StoredMessage{}, store.ErrNotFound
}

// readEntries returns up to q.Limit visible entries of the stream after q.After that keep says
// to keep.
func (s *Store) readEntries(ctx context.Context, k store.StreamKey, q store.ReadQuery, keep func(*viewEntry) bool) ([]*viewEntry, error) {
	if err := store.ValidateReadQuery(k, q); err != nil {
		return nil, err
	}
	if err := s.enterSynced(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	now := s.busNow()
	s.view.mu.Lock()
	defer s.view.mu.Unlock()
	sv := s.view.streams[k]
	if sv == nil {
		return nil, nil
	}
	i, _ := slices.BinarySearchFunc(sv.entries, q.After, func(ve *viewEntry, after int64) int {
		if ve.e.Seq <= after {
			return -1
		}
		return 1
	})
	var out []*viewEntry
	for _, ve := range sv.entries[i:] {
		if len(out) == q.Limit {
			break
		}
		if ve.visible(now) && keep(ve) {
			out = append(out, ve)
		}
	}
	return out, nil
}

// seesMessage applies ReadQuery's thread and viewer filters to a message.
func seesMessage(m *store.StoredMessage, q store.ReadQuery) bool {
	if q.ThreadID != "" && m.ThreadID != q.ThreadID {
		return false
	}
	if v := q.Viewer; v != nil && m.ToInstance != "" {
		sender := m.SenderOrg == v.Org && m.SenderInstance == v.Instance
		bound := m.ToOrg == v.Org && m.ToInstance == v.Instance
		return sender || bound
	}
	return true
}

// ReadMessages pages the stream's visible messages.
func (s *Store) ReadMessages(ctx context.Context, k store.StreamKey, q store.ReadQuery) ([]store.StoredMessage, error) {
	ves, err := s.readEntries(ctx, k, q, func(ve *viewEntry) bool {
		return ve.e.Message != nil && seesMessage(ve.e.Message, q)
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.StoredMessage, len(ves))
	for i, ve := range ves {
		out[i] = *ve.e.Message
	}
	return out, nil
}

// ReadStream pages the stream's visible messages, task events and publishes.
func (s *Store) ReadStream(ctx context.Context, k store.StreamKey, q store.ReadQuery) ([]store.StreamEntry, error) {
	ves, err := s.readEntries(ctx, k, q, func(ve *viewEntry) bool {
		switch {
		case ve.e.Message != nil:
			return seesMessage(ve.e.Message, q)
		case ve.e.Task != nil:
			return q.ThreadID == ""
		case ve.e.Publish != nil:
			return q.ThreadID == "" && ve.e.Publish.VisibleTo(q.Viewer)
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.StreamEntry, len(ves))
	for i, ve := range ves {
		out[i] = ve.e
	}
	return out, nil
}

// StreamLastSeq answers the stream's counter.
func (s *Store) StreamLastSeq(ctx context.Context, k store.StreamKey) (int64, error) {
	if err := store.ValidateStream(k); err != nil {
		return 0, err
	}
	if err := s.enterSynced(ctx); err != nil {
		return 0, err
	}
	defer s.leave()
	s.view.mu.Lock()
	defer s.view.mu.Unlock()
	return s.view.ctrN[busCtrPrefix+streamTail(k)], nil
}

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
	if err := s.enterSynced(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	now := s.busNow()
	s.view.mu.Lock()
	ve := s.view.gids[gid]
	ok := ve != nil && ve.e.Message != nil && ve.visible(now) && ve.e.Message.Stream == k
	s.view.mu.Unlock()
	if !ok {
		return nil, store.ErrNotFound
	}
	var applied []string
	err := s.casKV(ctx, s.busState, receiptKey(gid, by), func(old []byte, exists bool) ([]byte, bool) {
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

// DueQuestions scans the view for org questions past their deadline with neither a proposal
// nor a settling answer.
func (s *Store) DueQuestions(ctx context.Context, now time.Time, limit int) ([]store.StoredMessage, error) {
	if err := store.ValidateSweep(now, limit); err != nil {
		return nil, err
	}
	if err := s.enterSynced(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	clock := s.busNow()
	s.view.mu.Lock()
	defer s.view.mu.Unlock()
	var due []store.StoredMessage
	for k, sv := range s.view.streams {
		if k.Network != store.NetworkOrg {
			continue
		}
		for _, ve := range sv.entries {
			m := ve.e.Message
			if m == nil || m.Deadline.IsZero() || m.Deadline.After(now) || !ve.visible(clock) {
				continue
			}
			if s.view.props[token(k.Org)+"."+m.GID] != nil {
				continue
			}
			settled := slices.ContainsFunc(sv.entries, func(a *viewEntry) bool {
				am := a.e.Message
				return am != nil && am.Type == store.MessageTypeAnswer && am.ReplyTo == m.GID && am.ServerTime.Before(m.Deadline)
			})
			if !settled {
				due = append(due, *m)
			}
		}
	}
	slices.SortFunc(due, func(a, b store.StoredMessage) int {
		if c := a.Deadline.Compare(b.Deadline); c != 0 {
			return c
		}
		return a.ServerTime.Compare(b.ServerTime)
	})
	if len(due) > limit {
		due = due[:limit]
	}
	return due, nil
}

// ProposeTask stores the proposal once per question: its index subject (guarded empty), the
// vault's task counter, the store's proposal counter and the channel counter, then the
// `task.event` entry.
func (s *Store) ProposeTask(ctx context.Context, p store.TaskProposalWrite) (store.TaskProposal, bool, error) {
	if err := store.ValidateProposal(p); err != nil {
		return store.TaskProposal{}, false, err
	}
	if err := checkStreamIDs(p.Stream); err != nil {
		return store.TaskProposal{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return store.TaskProposal{}, false, err
	}
	if err := s.enterSynced(ctx); err != nil {
		return store.TaskProposal{}, false, err
	}
	defer s.leave()
	pkey := token(p.Stream.Org) + "." + p.QuestionGID
	taskSubj := busTaskPrefix + token(p.Stream.Org) + "." + token(p.QuestionGID)
	vaultSubj := busVaultPrefix + token(p.Stream.Org) + "." + token(p.Vault)
	ctr := busCtrPrefix + streamTail(p.Stream)
	for attempt := 1; ; attempt++ {
		now := s.busNow()
		s.view.mu.Lock()
		if ve := s.view.props[pkey]; ve != nil {
			tp := *ve.e.Task
			s.view.mu.Unlock()
			return tp, false, nil
		}
		q := s.view.gids[p.QuestionGID]
		if q == nil || q.e.Message == nil || !q.visible(now) || q.e.Message.Stream != p.Stream {
			s.view.mu.Unlock()
			return store.TaskProposal{}, false, store.ErrNotFound
		}
		tp := store.TaskProposal{TaskProposalWrite: p, ID: s.view.ctrN[busPropSubject] + 1, Number: s.view.ctrN[vaultSubj] + 1, Seq: s.view.ctrN[ctr] + 1}
		expect := map[string]uint64{taskSubj: s.view.subj[taskSubj], vaultSubj: s.view.subj[vaultSubj], busPropSubject: s.view.subj[busPropSubject], ctr: s.view.subj[ctr]}
		s.view.mu.Unlock()
		entry, _ := json.Marshal(busEntry{Task: &tp})
		num, _ := json.Marshal(counter{tp.Number})
		id, _ := json.Marshal(counter{tp.ID})
		seq, _ := json.Marshal(counter{tp.Seq})
		_, err := s.busBatch(ctx, []guarded{{taskSubj, nil}, {vaultSubj, num}, {busPropSubject, id}, {ctr, seq}}, busPrefix+streamTail(p.Stream), entry, expect)
		if err == nil {
			s.busHub.Notify(p.Stream.Org+"\x00"+p.Stream.Network, p.Stream.Name)
			return tp, true, nil
		}
		if !guardRefused(err) || attempt >= 1000 {
			return store.TaskProposal{}, false, fmt.Errorf("jetstream: propose task: %w", err)
		}
		if err := s.refresh(ctx, []string{taskSubj, vaultSubj, busPropSubject, ctr}); err != nil {
			return store.TaskProposal{}, false, err
		}
		if err := backoff(ctx, attempt/4); err != nil {
			return store.TaskProposal{}, false, err
		}
	}
}

// ListTaskProposals pages the org's proposals by ID.
func (s *Store) ListTaskProposals(ctx context.Context, org string, q store.ProposalQuery) ([]store.TaskProposal, error) {
	if err := store.ValidatePage(org, q.After, q.Limit); err != nil {
		return nil, err
	}
	if err := s.enterSynced(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	s.view.mu.Lock()
	defer s.view.mu.Unlock()
	var out []store.TaskProposal
	for _, ve := range s.view.propIDs {
		if t := ve.e.Task; t.Stream.Org == org && t.ID > q.After {
			out = append(out, *t)
		}
	}
	slices.SortFunc(out, func(a, b store.TaskProposal) int { return int(a.ID - b.ID) })
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// expireEntries deletes up to limit expired entries that pick selects, with their index
// messages; the seq counters stay.
func (s *Store) expireEntries(ctx context.Context, now time.Time, limit int, pick func(*viewEntry) bool, after func(*viewEntry) error) (int, error) {
	if err := s.enterSynced(ctx); err != nil {
		return 0, err
	}
	defer s.leave()
	s.view.mu.Lock()
	var victims []*viewEntry
	for _, sv := range s.view.streams {
		for _, ve := range sv.entries {
			if !ve.deleted && pick(ve) {
				if exp := ve.expires(); !exp.IsZero() && !exp.After(now) {
					victims = append(victims, ve)
				}
			}
		}
	}
	s.view.mu.Unlock()
	slices.SortFunc(victims, func(a, b *viewEntry) int { return a.expires().Compare(b.expires()) })
	n := 0
	for _, ve := range victims {
		if n == limit {
			break
		}
		dctx, cancel := s.ctxTimeout(ctx)
		err := s.bus.DeleteMsg(dctx, ve.seq)
		for _, q := range ve.indexes {
			if err == nil {
				if e := s.bus.DeleteMsg(dctx, q); e != nil && !errors.Is(e, njs.ErrMsgNotFound) {
					err = e
				}
			}
		}
		cancel()
		gone := errors.Is(err, njs.ErrMsgNotFound)
		if err != nil && !gone {
			return n, fmt.Errorf("jetstream: expire: %w", err)
		}
		if after != nil {
			if err := after(ve); err != nil {
				return n, err
			}
		}
		s.view.mu.Lock()
		ve.deleted = true
		s.view.mu.Unlock()
		if !gone {
			n++
		}
	}
	return n, nil
}

// ExpireMessages deletes expired messages, their index messages and their receipts.
func (s *Store) ExpireMessages(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := store.ValidateSweep(now, limit); err != nil {
		return 0, err
	}
	return s.expireEntries(ctx, now, limit, func(ve *viewEntry) bool { return ve.e.Message != nil }, func(ve *viewEntry) error {
		entries, err := s.kvScan(ctx, s.busState, "rcpt."+token(ve.e.Message.GID)+".*")
		if err != nil {
			return err
		}
		for _, e := range entries {
			dctx, cancel := s.ctxTimeout(ctx)
			err := s.busState.Delete(dctx, e.Key())
			cancel()
			if err != nil && !errors.Is(err, njs.ErrKeyNotFound) {
				return fmt.Errorf("jetstream: expire receipts: %w", err)
			}
		}
		return nil
	})
}

// SubscribeStream wakes after each commit on the stream, by any relay.
func (s *Store) SubscribeStream(k store.StreamKey) (<-chan struct{}, func()) {
	return s.busHub.Subscribe(k.Org+"\x00"+k.Network, k.Name)
}

// kvScan returns the current entries of kv whose keys match filter, through one watcher.
func (s *Store) kvScan(ctx context.Context, kv njs.KeyValue, filter string) ([]njs.KeyValueEntry, error) {
	wctx, cancel := context.WithTimeout(ctx, 4*s.opts.Timeout)
	defer cancel()
	w, err := kv.WatchFiltered(wctx, []string{filter}, njs.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("jetstream: scan %s: %w", kv.Bucket(), err)
	}
	defer w.Stop()
	var out []njs.KeyValueEntry
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("jetstream: scan %s: watcher closed", kv.Bucket())
			}
			if e == nil {
				return out, nil
			}
			out = append(out, e)
		case <-wctx.Done():
			return nil, fmt.Errorf("jetstream: scan %s: %w", kv.Bucket(), wctx.Err())
		}
	}
}
