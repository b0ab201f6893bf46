package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/store"
)

// BusStream holds the bus lane: each stream's entries (messages, task events, publishes) and
// counter, and the index subjects that make gids, client_msg_ids and task proposals unique and
// find due questions, settling answers and expired entries.
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
	// busDuePrefix.<org>.<gid> marks an org question with a deadline until it is proposed,
	// settled by an answer or expired.
	busDuePrefix = "agentwire.busdue."
	// busAnsPrefix.<org>.<gid> records each answer replying to gid.
	busAnsPrefix = "agentwire.busans."
	// busExpPrefix.<m|p>.<hour> indexes the messages (m) and publishes (p) expiring in that
	// hour (unix seconds / 3600); each is the message right before its entry.
	busExpPrefix = "agentwire.busexp."
)

// Headers of the bus stream.
const (
	hdrSeq      = "Aw-Seq"      // an entry's stream seq
	hdrExp      = "Aw-Exp"      // an expiry index: the entry's ExpiresAt, unix ns
	hdrIdx      = "Aw-Idx"      // an expiry index: how far back the batch's other index messages are
	hdrGID      = "Aw-Gid"      // an expiry index of a message: its gid (its receipts go with it)
	hdrDeadline = "Aw-Deadline" // a due index: the question's deadline, unix ns
	hdrTime     = "Aw-Time"     // a due or answer index: the message's server time, unix ns
	hdrTail     = "Aw-Tail"     // an answer index: the answer's stream
)

// streamTail is the <org-token>.<network>.<name-token> of a bus stream's subjects.
func streamTail(k store.StreamKey) string {
	org := "-"
	if k.Network == store.NetworkOrg {
		org = token(k.Org)
	}
	return org + "." + k.Network + "." + token(k.Name)
}

// parseTail decodes a streamTail.
func parseTail(tail string) (store.StreamKey, error) {
	parts := strings.Split(tail, ".")
	if len(parts) != 3 {
		return store.StreamKey{}, fmt.Errorf("jetstream: bus subject tail %q", tail)
	}
	k := store.StreamKey{Network: parts[1]}
	var err error
	if k.Name, err = untoken(parts[2]); err != nil {
		return k, err
	}
	if parts[0] != "-" {
		if k.Org, err = untoken(parts[0]); err != nil {
			return k, err
		}
	}
	return k, nil
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

// openBus sets up the bus lane: its stream, its KV bucket, its committer and the wake-up
// consumer.
func (s *Store) openBus(ctx context.Context) error {
	var err error
	if s.bus, err = s.ensureStream(ctx, njs.StreamConfig{
		Name: BusStream,
		Subjects: []string{busPrefix + ">", busCtrPrefix + ">", busGIDPrefix + ">", busCmidPrefix + ">", busTaskPrefix + ">",
			busVaultPrefix + ">", busPropSubject, busDuePrefix + ">", busAnsPrefix + ">", busExpPrefix + ">"},
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
	if s.busStateStream, err = s.js.Stream(ctx, "KV_"+BusStateBucket); err != nil {
		return fmt.Errorf("jetstream: bucket %s: %w", BusStateBucket, err)
	}
	s.busCommit = newCommitter(s, BusStream)
	return s.watch(ctx, s.bus, busPrefix+">", &s.ownBus, func(subject string) {
		if k, err := parseTail(subject[len(busPrefix):]); err == nil {
			s.busHub.Notify(k.Org+"\x00"+k.Network, k.Name)
		}
	}, s.busHub.NotifyAll)
}

// streamLock serializes this instance's writes to a bus stream (striped by key), so that its
// own writers do not refuse each other's guards.
func (s *Store) streamLock(k store.StreamKey) *sync.Mutex {
	var h maphash.Hash
	h.SetSeed(s.lockSeed)
	h.WriteString(k.Network)
	h.WriteByte(0)
	h.WriteString(k.Org)
	h.WriteByte(0)
	h.WriteString(k.Name)
	return &s.busLocks[h.Sum64()%uint64(len(s.busLocks))]
}

func (s *Store) busNow() time.Time { return s.now() }

func visibleAt(expires time.Time, now time.Time) bool { return expires.IsZero() || expires.After(now) }

// lastOn reads the last message on subject from the stream leader; nil when none.
func (s *Store) lastOn(ctx context.Context, subject string) (*njs.RawStreamMsg, error) {
	rctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	m, err := s.bus.GetLastMsgForSubject(rctx, subject)
	if errors.Is(err, njs.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: bus: %w", err)
	}
	return m, nil
}

// readCounter reads a counter subject: its value and the guard of its next value.
func (s *Store) readCounter(ctx context.Context, subject string) (int64, uint64, error) {
	m, err := s.lastOn(ctx, subject)
	if err != nil || m == nil {
		return 0, 0, err
	}
	var c counter
	if len(m.Data) > 0 {
		if err := json.Unmarshal(m.Data, &c); err != nil {
			return 0, 0, fmt.Errorf("jetstream: counter %s: %w", subject, err)
		}
	}
	return c.N, m.Sequence, nil
}

// streamCounter returns the stream's counter and guard: cached, or read from the leader.
func (s *Store) streamCounter(ctx context.Context, k store.StreamKey) (int64, uint64, error) {
	if n, seq, ok := s.busCache.counter(k); ok {
		return n, seq, nil
	}
	n, seq, err := s.readCounter(ctx, busCtrPrefix+streamTail(k))
	if err == nil {
		s.busCache.setCounter(k, n, seq)
	}
	return n, seq, err
}

// decodeEntry decodes a bus entry message.
func decodeEntry(m *njs.RawStreamMsg) (*centry, error) {
	var e busEntry
	if err := json.Unmarshal(m.Data, &e); err != nil {
		return nil, fmt.Errorf("jetstream: bus entry at %d: %w", m.Sequence, err)
	}
	ce := &centry{pos: m.Sequence}
	switch {
	case e.Msg != nil:
		ce.e = store.StreamEntry{Seq: e.Msg.Seq, Message: e.Msg}
		ce.gid = e.Msg.GID
		ce.cmid = cmidSubject("m", e.Msg.SenderOrg, e.Msg.SenderInstance, e.Msg.ClientMsgID)
	case e.Task != nil:
		ce.e = store.StreamEntry{Seq: e.Task.Seq, Task: e.Task}
	case e.Pub != nil:
		ce.e = store.StreamEntry{Seq: e.Pub.Seq, Publish: e.Pub}
		ce.cmid = cmidSubject("p", e.Pub.SenderOrg, e.Pub.SenderInstance, e.Pub.ClientMsgID)
	default:
		return nil, fmt.Errorf("jetstream: bus entry at %d is empty", m.Sequence)
	}
	ce.bytes = entryBytes(ce.e, ce.gid, ce.cmid)
	return ce, nil
}

// entryAfter reads the entry of the batch whose index message is at idx: the first entry
// after it (a batch is stored contiguously, its entry last). nil when none. The caller checks
// that it is the indexed one: an index whose entry the sweeper deleted is followed by another
// batch's entry.
func (s *Store) entryAfter(ctx context.Context, idx uint64) (*centry, error) {
	m, err := s.getMsg(ctx, s.bus, idx+1, busPrefix+">")
	if err != nil {
		return nil, fmt.Errorf("jetstream: bus: %w", err)
	}
	if m == nil {
		return nil, nil
	}
	return decodeEntry(m)
}

// indexed returns the entry an index subject points at when match accepts it, and the index's
// stream sequence (0 when the subject is empty).
func (s *Store) indexed(ctx context.Context, subject string, match func(*centry) bool) (*centry, uint64, error) {
	m, err := s.lastOn(ctx, subject)
	if err != nil || m == nil {
		return nil, 0, err
	}
	ce, err := s.entryAfter(ctx, m.Sequence)
	if err != nil {
		return nil, 0, err
	}
	if ce == nil || !match(ce) {
		return nil, m.Sequence, nil
	}
	return ce, m.Sequence, nil
}

// messageByGID returns the visible message with that gid: cached, or through its index.
func (s *Store) messageByGID(ctx context.Context, gid string) (*store.StoredMessage, error) {
	now := s.busNow()
	if ce := s.busCache.gid(gid); ce != nil && ce.e.Message != nil {
		if ce.visible(now) {
			return ce.e.Message, nil
		}
		return nil, nil
	}
	ce, _, err := s.indexed(ctx, busGIDPrefix+token(gid), func(ce *centry) bool {
		return ce.e.Message != nil && ce.e.Message.GID == gid
	})
	if err != nil || ce == nil || !ce.visible(now) {
		return nil, err
	}
	return ce.e.Message, nil
}

// batchMsg is one message of a bus batch.
type batchMsg struct {
	subject string
	data    []byte
	guard   bool   // expected last subject sequence …
	expect  uint64 // … this one
	rollup  bool   // a counter: only its last message is kept
	hdr     [][2]string
}

func (b batchMsg) msg() *nats.Msg {
	m := nats.NewMsg(b.subject)
	m.Data = b.data
	if b.guard {
		m.Header.Set(njs.ExpectedLastSubjSeqHeader, strconv.FormatUint(b.expect, 10))
	}
	if b.rollup {
		m.Header.Set(njs.MsgRollup, njs.MsgRollupSubject)
	}
	for _, h := range b.hdr {
		m.Header.Set(h[0], h[1])
	}
	return m
}

// entryBatch builds the batch of one entry: the guarded and index messages, then, when the
// entry expires, its expiry index (kind m or p) naming the index messages to delete with it,
// then the entry. deletable says which of msgs go with the entry.
func entryBatch(msgs []batchMsg, deletable []bool, kind string, expires time.Time, gid string, entrySubj string, entry []byte, seq int64) []*nats.Msg {
	out := make([]*nats.Msg, 0, len(msgs)+2)
	for _, b := range msgs {
		out = append(out, b.msg())
	}
	if !expires.IsZero() {
		var back []string
		for i := range msgs {
			if deletable[i] {
				back = append(back, strconv.Itoa(len(msgs)-i))
			}
		}
		b := batchMsg{subject: busExpPrefix + kind + "." + strconv.FormatInt(expires.Unix()/3600, 10), hdr: [][2]string{
			{hdrExp, strconv.FormatInt(expires.UnixNano(), 10)}, {hdrIdx, strings.Join(back, ",")},
		}}
		if gid != "" {
			b.hdr = append(b.hdr, [2]string{hdrGID, gid})
		}
		out = append(out, b.msg())
	}
	e := nats.NewMsg(entrySubj)
	e.Data = entry
	e.Header.Set(hdrSeq, strconv.FormatInt(seq, 10))
	return append(out, e)
}

// AppendMessage stores the message with its stream's next seq in one atomic batch: the stream
// counter, the gid and client_msg_id indexes, each guarded by its subject's last sequence, the
// due or answer index of a question or an answer, the expiry index, then the entry (relay.md
// §5.1.3). The guards decide, not this instance: a refusal re-reads them from the leader.
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
	lock := s.streamLock(m.Stream)
	lock.Lock()
	defer lock.Unlock()
	cmid := cmidSubject("m", m.SenderOrg, m.SenderInstance, m.ClientMsgID)
	isCmid := func(ce *centry) bool {
		o := ce.e.Message
		return o != nil && o.SenderOrg == m.SenderOrg && o.SenderInstance == m.SenderInstance && o.ClientMsgID == m.ClientMsgID
	}
	if ce := s.busCache.cmid(cmid); ce != nil && isCmid(ce) && ce.visible(s.busNow()) {
		return *ce.e.Message, true, nil
	}
	ctr := busCtrPrefix + streamTail(m.Stream)
	gid := m.GID
	if gid == "" {
		gid = store.NewULID(m.ServerTime)
	}
	var expectGID, expectCmid uint64
	for attempt := 1; ; attempt++ {
		n, ctrSeq, err := s.streamCounter(ctx, m.Stream)
		if err != nil {
			return store.StoredMessage{}, false, err
		}
		sm := store.StoredMessage{MessageWrite: m, Seq: n + 1}
		sm.GID = gid
		if sm.ThreadID == "" {
			sm.ThreadID = gid
		}
		entry, _ := json.Marshal(busEntry{Msg: &sm})
		ctrData, _ := json.Marshal(counter{sm.Seq})
		parts := []batchMsg{
			{subject: ctr, data: ctrData, guard: true, expect: ctrSeq, rollup: true},
			{subject: busGIDPrefix + token(gid), guard: true, expect: expectGID},
			{subject: cmid, guard: true, expect: expectCmid},
		}
		deletable := []bool{false, true, true}
		if m.Stream.Network == store.NetworkOrg {
			if !m.Deadline.IsZero() {
				parts = append(parts, batchMsg{subject: busDuePrefix + token(m.Stream.Org) + "." + token(gid), hdr: [][2]string{
					{hdrDeadline, strconv.FormatInt(m.Deadline.UnixNano(), 10)}, {hdrTime, strconv.FormatInt(m.ServerTime.UnixNano(), 10)},
				}})
				deletable = append(deletable, true)
			}
			if m.Type == store.MessageTypeAnswer && m.ReplyTo != "" {
				parts = append(parts, batchMsg{subject: busAnsPrefix + token(m.Stream.Org) + "." + token(m.ReplyTo), hdr: [][2]string{
					{hdrTime, strconv.FormatInt(m.ServerTime.UnixNano(), 10)}, {hdrTail, streamTail(m.Stream)},
				}})
				deletable = append(deletable, true)
			}
		}
		msgs := entryBatch(parts, deletable, "m", m.ExpiresAt, gid, busPrefix+streamTail(m.Stream), entry, sm.Seq)
		last, err := s.busCommit.publish(ctx, msgs, 0)
		if err == nil {
			s.wrote(m.Stream, sm.Seq, last, last-uint64(len(msgs)-1), &centry{e: store.StreamEntry{Seq: sm.Seq, Message: &sm}, gid: gid, cmid: cmid})
			return sm, false, nil
		}
		s.busCache.forgetCounter(m.Stream)
		if !guardRefused(err) || attempt >= 1000 {
			return store.StoredMessage{}, false, fmt.Errorf("jetstream: append message: %w", err)
		}
		// Who refused? An original with the client_msg_id (replayed), a stored gid (a
		// duplicate, or a minted one to mint again), or only the counter (retried).
		now := s.busNow()
		ce, seq, err := s.indexed(ctx, cmid, isCmid)
		if err != nil {
			return store.StoredMessage{}, false, err
		}
		if ce != nil && ce.visible(now) {
			return *ce.e.Message, true, nil
		}
		expectCmid = seq
		ce, seq, err = s.indexed(ctx, busGIDPrefix+token(gid), func(ce *centry) bool { return ce.e.Message != nil && ce.e.Message.GID == gid })
		if err != nil {
			return store.StoredMessage{}, false, err
		}
		switch {
		case ce != nil && ce.visible(now) && m.GID == "":
			gid, expectGID = store.NewULID(m.ServerTime), 0
		case ce != nil && ce.visible(now):
			return store.StoredMessage{}, false, fmt.Errorf("%w %q", store.ErrDuplicateGID, gid)
		default:
			expectGID = seq
		}
		if err := backoff(ctx, attempt/4); err != nil {
			return store.StoredMessage{}, false, err
		}
	}
}

// wrote records an entry this instance committed at stream sequence pos (its counter at
// ctrPos) and wakes the stream's subscribers.
func (s *Store) wrote(k store.StreamKey, seq int64, pos, ctrPos uint64, ce *centry) {
	ce.pos = pos
	ce.bytes = entryBytes(ce.e, ce.gid, ce.cmid)
	s.busCache.setCounter(k, seq, ctrPos)
	s.busCache.add(k, seq-1, seq, []*centry{ce})
	s.ownBus.add(pos)
	s.busHub.Notify(k.Org+"\x00"+k.Network, k.Name)
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
	if err := s.enter(); err != nil {
		return store.StoredMessage{}, err
	}
	defer s.leave()
	now := s.busNow()
	isCmid := func(ce *centry) bool {
		o := ce.e.Message
		return o != nil && o.SenderOrg == org && o.SenderInstance == instance && o.ClientMsgID == clientMsgID
	}
	subj := cmidSubject("m", org, instance, clientMsgID)
	if ce := s.busCache.cmid(subj); ce != nil && isCmid(ce) && ce.visible(now) {
		return *ce.e.Message, nil
	}
	ce, _, err := s.indexed(ctx, subj, isCmid)
	if err != nil {
		return store.StoredMessage{}, err
	}
	if ce != nil && ce.visible(now) {
		return *ce.e.Message, nil
	}
	return store.StoredMessage{}, store.ErrNotFound
}

// GetMessage answers the visible message with that gid within scope.
func (s *Store) GetMessage(ctx context.Context, scope store.MessageScope, gid string) (store.StoredMessage, error) {
	if err := store.ValidateScope(scope, gid); err != nil {
		return store.StoredMessage{}, err
	}
	if err := s.enter(); err != nil {
		return store.StoredMessage{}, err
	}
	defer s.leave()
	m, err := s.messageByGID(ctx, gid)
	if err != nil {
		return store.StoredMessage{}, err
	}
	if m == nil || !scope.Includes(m.Stream) {
		return store.StoredMessage{}, store.ErrNotFound
	}
	return *m, nil
}

// entrySeq is an entry message's stream seq, from its header.
func entrySeq(m *njs.RawStreamMsg) (int64, error) {
	n, err := strconv.ParseInt(m.Header.Get(hdrSeq), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("jetstream: bus entry at %d: %s: %w", m.Sequence, hdrSeq, err)
	}
	return n, nil
}

// readEntries returns up to q.Limit visible entries of the stream after q.After that keep says
// to keep. It reads the stream's last entry from the leader, serves what the cache covers and
// reads the rest from the leader, from the first entry after the cursor (found by the cache or
// a binary search); the entries read join the cache.
func (s *Store) readEntries(ctx context.Context, k store.StreamKey, q store.ReadQuery, keep func(*centry) bool) ([]*centry, error) {
	if err := store.ValidateReadQuery(k, q); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	subj := busPrefix + streamTail(k)
	lm, err := s.lastOn(ctx, subj)
	if err != nil || lm == nil {
		return nil, err
	}
	last, err := entrySeq(lm)
	if err != nil || q.After >= last {
		return nil, err
	}
	now := s.busNow()
	var out []*centry
	size := 0
	take := func(ce *centry) bool {
		if ce.visible(now) && keep(ce) {
			n := store.EntryBytes(ce.e)
			if q.MaxBytes > 0 && len(out) > 0 && size+n > q.MaxBytes {
				return false // the byte budget: the page stops before this entry
			}
			size += n
			out = append(out, ce)
		}
		return len(out) < q.Limit
	}
	cached, ok, pos, after := s.busCache.covered(k, q.After, last)
	for _, ce := range cached {
		if !take(ce) {
			return out, nil
		}
	}
	if ok {
		return out, nil
	}
	var read []*centry
	switch {
	case pos != 0 && after == last-1:
		// Only the last entry is new: it was just read.
		ce, err := decodeEntry(lm)
		if err != nil {
			return nil, err
		}
		s.busCache.add(k, after, last, []*centry{ce})
		take(ce)
		return out, nil
	case pos != 0:
	case q.After == 0:
		pos, after = 1, 0
	default:
		after = q.After
		m, err := s.seekFirst(ctx, s.bus, subj, 1, lm.Sequence, func(m *njs.RawStreamMsg) (bool, error) {
			seq, err := entrySeq(m)
			return seq > after, err
		})
		if err != nil {
			return nil, fmt.Errorf("jetstream: read bus stream: %w", err)
		}
		if m == nil {
			return out, nil
		}
		pos = m.Sequence
	}
	more := true
	for more && pos <= lm.Sequence {
		m, err := s.getMsg(ctx, s.bus, pos, subj)
		if err != nil {
			return nil, fmt.Errorf("jetstream: read bus stream: %w", err)
		}
		if m == nil {
			break
		}
		pos = m.Sequence + 1
		ce, err := decodeEntry(m)
		if err != nil {
			return nil, err
		}
		read = append(read, ce)
		more = take(ce)
	}
	if n := len(read); n > 0 {
		s.busCache.add(k, after, read[n-1].e.Seq, read)
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
	ces, err := s.readEntries(ctx, k, q, func(ce *centry) bool {
		return ce.e.Message != nil && seesMessage(ce.e.Message, q)
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.StoredMessage, len(ces))
	for i, ce := range ces {
		out[i] = *ce.e.Message
	}
	return out, nil
}

// ReadStream pages the stream's visible messages, task events and publishes.
func (s *Store) ReadStream(ctx context.Context, k store.StreamKey, q store.ReadQuery) ([]store.StreamEntry, error) {
	ces, err := s.readEntries(ctx, k, q, func(ce *centry) bool {
		switch {
		case ce.e.Message != nil:
			return seesMessage(ce.e.Message, q)
		case ce.e.Task != nil:
			return q.ThreadID == ""
		case ce.e.Publish != nil:
			return q.ThreadID == "" && ce.e.Publish.VisibleTo(q.Viewer)
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.StreamEntry, len(ces))
	for i, ce := range ces {
		out[i] = ce.e
	}
	return out, nil
}

// StreamLastSeq reads the stream's counter from the leader.
func (s *Store) StreamLastSeq(ctx context.Context, k store.StreamKey) (int64, error) {
	if err := store.ValidateStream(k); err != nil {
		return 0, err
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	n, seq, err := s.readCounter(ctx, busCtrPrefix+streamTail(k))
	if err == nil && seq != 0 {
		s.busCache.setCounter(k, n, seq)
	}
	return n, err
}

// DueQuestions walks the due index (org questions with a deadline, until proposed, settled or
// expired) and keeps the limit oldest deadlines not after now; a question found proposed or
// settled leaves the index for good.
func (s *Store) DueQuestions(ctx context.Context, now time.Time, limit int) ([]store.StoredMessage, error) {
	if err := store.ValidateSweep(now, limit); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	clock := s.busNow()
	var due []store.StoredMessage
	less := func(a, b store.StoredMessage) int {
		if c := a.Deadline.Compare(b.Deadline); c != 0 {
			return c
		}
		return a.ServerTime.Compare(b.ServerTime)
	}
	for pos := uint64(1); ; {
		m, err := s.getMsg(ctx, s.bus, pos, busDuePrefix+">")
		if err != nil {
			return nil, fmt.Errorf("jetstream: due questions: %w", err)
		}
		if m == nil {
			break
		}
		pos = m.Sequence + 1
		deadline, err := strconv.ParseInt(m.Header.Get(hdrDeadline), 10, 64)
		if err != nil || deadline > now.UnixNano() {
			continue
		}
		key := m.Subject[len(busDuePrefix):]
		if t, err := s.lastOn(ctx, busTaskPrefix+key); err != nil {
			return nil, err
		} else if t != nil {
			s.purgeBus(ctx, m.Subject)
			continue
		}
		orgTok, gidTok, _ := strings.Cut(key, ".")
		gid, err := untoken(gidTok)
		if err != nil {
			continue
		}
		ce, err := s.entryAfter(ctx, m.Sequence)
		if err != nil {
			return nil, err
		}
		if ce == nil || ce.e.Message == nil || ce.e.Message.GID != gid {
			s.purgeBus(ctx, m.Subject) // its entry is gone
			continue
		}
		q := ce.e.Message
		if !ce.visible(clock) {
			continue
		}
		settled, err := s.settled(ctx, orgTok+"."+gidTok, streamTail(q.Stream), q.Deadline)
		if err != nil {
			return nil, err
		}
		if settled {
			s.purgeBus(ctx, m.Subject)
			continue
		}
		i, _ := slices.BinarySearchFunc(due, *q, less)
		if i < limit {
			due = slices.Insert(due, i, *q)
			if len(due) > limit {
				due = due[:limit]
			}
		}
	}
	return due, nil
}

// settled reports whether an answer of the question's stream replied to it before deadline.
func (s *Store) settled(ctx context.Context, key, tail string, deadline time.Time) (bool, error) {
	for pos := uint64(1); ; {
		m, err := s.getMsg(ctx, s.bus, pos, busAnsPrefix+key)
		if err != nil {
			return false, fmt.Errorf("jetstream: due questions: %w", err)
		}
		if m == nil {
			return false, nil
		}
		pos = m.Sequence + 1
		at, err := strconv.ParseInt(m.Header.Get(hdrTime), 10, 64)
		if err == nil && m.Header.Get(hdrTail) == tail && at < deadline.UnixNano() {
			return true, nil
		}
	}
}

// purgeBus removes every message on subject; a failure is left to the next sweep.
func (s *Store) purgeBus(ctx context.Context, subject string) {
	pctx, cancel := s.ctxTimeout(ctx)
	defer cancel()
	_ = s.bus.Purge(pctx, njs.WithPurgeSubject(subject))
}

// ProposeTask stores the proposal once per question: its index subject (guarded empty, holding
// the proposal), the vault's task counter, the store's proposal counter and the channel
// counter, then the `task.event` entry.
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
	if err := s.enter(); err != nil {
		return store.TaskProposal{}, false, err
	}
	defer s.leave()
	lock := s.streamLock(p.Stream)
	lock.Lock()
	defer lock.Unlock()
	key := token(p.Stream.Org) + "." + token(p.QuestionGID)
	taskSubj := busTaskPrefix + key
	vaultSubj := busVaultPrefix + token(p.Stream.Org) + "." + token(p.Vault)
	for attempt := 1; ; attempt++ {
		if t, err := s.lastOn(ctx, taskSubj); err != nil {
			return store.TaskProposal{}, false, err
		} else if t != nil {
			var tp store.TaskProposal
			if err := json.Unmarshal(t.Data, &tp); err != nil {
				return store.TaskProposal{}, false, fmt.Errorf("jetstream: task proposal: %w", err)
			}
			return tp, false, nil
		}
		q, err := s.messageByGID(ctx, p.QuestionGID)
		if err != nil {
			return store.TaskProposal{}, false, err
		}
		if q == nil || q.Stream != p.Stream {
			return store.TaskProposal{}, false, store.ErrNotFound
		}
		n, ctrSeq, err := s.streamCounter(ctx, p.Stream)
		if err != nil {
			return store.TaskProposal{}, false, err
		}
		vN, vSeq, err := s.readCounter(ctx, vaultSubj)
		if err != nil {
			return store.TaskProposal{}, false, err
		}
		pN, pSeq, err := s.readCounter(ctx, busPropSubject)
		if err != nil {
			return store.TaskProposal{}, false, err
		}
		tp := store.TaskProposal{TaskProposalWrite: p, ID: pN + 1, Number: vN + 1, Seq: n + 1}
		tpData, _ := json.Marshal(tp)
		entry, _ := json.Marshal(busEntry{Task: &tp})
		num, _ := json.Marshal(counter{tp.Number})
		id, _ := json.Marshal(counter{tp.ID})
		seq, _ := json.Marshal(counter{tp.Seq})
		parts := []batchMsg{
			{subject: taskSubj, data: tpData, guard: true},
			{subject: vaultSubj, data: num, guard: true, expect: vSeq, rollup: true},
			{subject: busPropSubject, data: id, guard: true, expect: pSeq, rollup: true},
			{subject: busCtrPrefix + streamTail(p.Stream), data: seq, guard: true, expect: ctrSeq, rollup: true},
		}
		msgs := entryBatch(parts, nil, "", time.Time{}, "", busPrefix+streamTail(p.Stream), entry, tp.Seq)
		last, err := s.busCommit.publish(ctx, msgs, 0)
		if err == nil {
			s.wrote(p.Stream, tp.Seq, last, last-1, &centry{e: store.StreamEntry{Seq: tp.Seq, Task: &tp}})
			// The question is no longer due.
			s.purgeBus(ctx, busDuePrefix+key)
			return tp, true, nil
		}
		s.busCache.forgetCounter(p.Stream)
		if !guardRefused(err) || attempt >= 1000 {
			return store.TaskProposal{}, false, fmt.Errorf("jetstream: propose task: %w", err)
		}
		if err := backoff(ctx, attempt/4); err != nil {
			return store.TaskProposal{}, false, err
		}
	}
}

// ListTaskProposals pages the org's proposals by ID: their index subjects hold them, in ID
// order (the store-wide counter guards each), from the first after the cursor (binary search).
func (s *Store) ListTaskProposals(ctx context.Context, org string, q store.ProposalQuery) ([]store.TaskProposal, error) {
	if err := store.ValidatePage(org, q.After, q.Limit); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	filter := busTaskPrefix + token(org) + ".*"
	lm, err := s.lastOn(ctx, filter)
	if err != nil || lm == nil {
		return nil, err
	}
	decode := func(m *njs.RawStreamMsg) (store.TaskProposal, error) {
		var tp store.TaskProposal
		if err := json.Unmarshal(m.Data, &tp); err != nil {
			return tp, fmt.Errorf("jetstream: task proposal at %d: %w", m.Sequence, err)
		}
		return tp, nil
	}
	first, err := s.seekFirst(ctx, s.bus, filter, 1, lm.Sequence, func(m *njs.RawStreamMsg) (bool, error) {
		tp, err := decode(m)
		return tp.ID > q.After, err
	})
	if err != nil || first == nil {
		return nil, err
	}
	var out []store.TaskProposal
	for pos := first.Sequence; len(out) < q.Limit; {
		m, err := s.getMsg(ctx, s.bus, pos, filter)
		if err != nil {
			return nil, fmt.Errorf("jetstream: task proposals: %w", err)
		}
		if m == nil {
			break
		}
		pos = m.Sequence + 1
		tp, err := decode(m)
		if err != nil {
			return nil, err
		}
		if tp.ID > q.After {
			out = append(out, tp)
		}
	}
	return out, nil
}

// victim is one expired entry the sweeper deletes: its expiry index and expiry time.
type victim struct {
	idx     *njs.RawStreamMsg
	expires int64
}

// expire deletes up to limit entries of kind (m or p) that expired by now, oldest first, with
// their index messages: it walks the expiry index one hour at a time from the oldest hour,
// keeping the limit oldest expiries (memory: limit). after runs for each deleted message's gid
// (its receipts go).
func (s *Store) expire(ctx context.Context, kind string, now time.Time, limit int, after func(gid string) error) (int, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	ictx, cancel := s.ctxTimeout(ctx)
	info, err := s.bus.Info(ictx, njs.WithSubjectFilter(busExpPrefix+kind+".*"))
	cancel()
	if err != nil {
		return 0, fmt.Errorf("jetstream: expire: %w", err)
	}
	var hours []int64
	for subj := range info.State.Subjects {
		h, err := strconv.ParseInt(subj[len(busExpPrefix)+len(kind)+1:], 10, 64)
		if err == nil && h*3600 <= now.Unix() {
			hours = append(hours, h)
		}
	}
	slices.Sort(hours)
	var victims []victim
	for _, h := range hours {
		if len(victims) == limit {
			break
		}
		room := limit - len(victims)
		var picked []victim
		subj := busExpPrefix + kind + "." + strconv.FormatInt(h, 10)
		for pos := uint64(1); ; {
			m, err := s.getMsg(ctx, s.bus, pos, subj)
			if err != nil {
				return 0, fmt.Errorf("jetstream: expire: %w", err)
			}
			if m == nil {
				break
			}
			pos = m.Sequence + 1
			exp, err := strconv.ParseInt(m.Header.Get(hdrExp), 10, 64)
			if err != nil || exp > now.UnixNano() {
				continue
			}
			i := sort.Search(len(picked), func(i int) bool { return picked[i].expires > exp })
			if i < room {
				picked = slices.Insert(picked, i, victim{m, exp})
				if len(picked) > room {
					picked = picked[:room]
				}
			}
		}
		victims = append(victims, picked...)
	}
	n := 0
	for _, v := range victims {
		gone, err := s.deleteEntry(ctx, v.idx)
		if err != nil {
			return n, err
		}
		if gid := v.idx.Header.Get(hdrGID); gid != "" && after != nil {
			if err := after(gid); err != nil {
				return n, err
			}
		}
		if !gone {
			n++
		}
	}
	return n, nil
}

// deleteEntry deletes the entry of an expiry index, then the index messages it names, then
// itself: a sweep cut short leaves the expiry index, and the next one finishes. It reports
// whether the entry was already gone.
func (s *Store) deleteEntry(ctx context.Context, idx *njs.RawStreamMsg) (bool, error) {
	del := func(seq uint64) (bool, error) {
		dctx, cancel := s.ctxTimeout(ctx)
		defer cancel()
		err := s.bus.DeleteMsg(dctx, seq)
		if errors.Is(err, njs.ErrMsgNotFound) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("jetstream: expire: %w", err)
		}
		return false, nil
	}
	gctx, cancel := s.ctxTimeout(ctx)
	em, err := s.bus.GetMsg(gctx, idx.Sequence+1)
	cancel()
	gone := true
	switch {
	case errors.Is(err, njs.ErrMsgNotFound):
	case err != nil:
		return false, fmt.Errorf("jetstream: expire: %w", err)
	case strings.HasPrefix(em.Subject, busPrefix):
		if gone, err = del(em.Sequence); err != nil {
			return false, err
		}
		if k, err := parseTail(em.Subject[len(busPrefix):]); err == nil {
			if seq, err := entrySeq(em); err == nil {
				s.busCache.deleted(k, seq)
			}
		}
	}
	for _, b := range strings.Split(idx.Header.Get(hdrIdx), ",") {
		back, err := strconv.ParseUint(b, 10, 64)
		if err != nil || back == 0 || back >= idx.Sequence {
			continue
		}
		if _, err := del(idx.Sequence - back); err != nil {
			return false, err
		}
	}
	if _, err := del(idx.Sequence); err != nil {
		return false, err
	}
	return gone, nil
}

// ExpireMessages deletes expired messages, their index messages and their receipts.
func (s *Store) ExpireMessages(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := store.ValidateSweep(now, limit); err != nil {
		return 0, err
	}
	return s.expire(ctx, "m", now, limit, func(gid string) error {
		pctx, cancel := s.ctxTimeout(ctx)
		defer cancel()
		err := s.busStateStream.Purge(pctx, njs.WithPurgeSubject("$KV."+BusStateBucket+".rcpt."+token(gid)+".>"))
		if err != nil {
			return fmt.Errorf("jetstream: expire receipts: %w", err)
		}
		return nil
	})
}

// SubscribeStream wakes after each commit on the stream, by any relay.
func (s *Store) SubscribeStream(k store.StreamKey) (<-chan struct{}, func()) {
	return s.busHub.Subscribe(k.Org+"\x00"+k.Network, k.Name)
}
