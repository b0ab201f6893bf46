package relay

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/store"
)

// Retention and deadlines of the bus lane (hive.md §8 S11, S12; relay.md §2 Bus).
const (
	// TeamRetention is an org message's lifetime on the Team plan (S11).
	TeamRetention = 30 * 24 * time.Hour
	// PersonalRetention is an org message's lifetime on the Personal plan (S11).
	PersonalRetention = 7 * 24 * time.Hour
	// SwarmRetentionBound is the lower bound reported as a swarm message's `expires_at` while
	// its swarm is open; the relay never deletes swarm messages (S11).
	SwarmRetentionBound = 30 * 24 * time.Hour
	// DefaultQuestionDeadline is an org's default question deadline (S12, relay.md §2).
	DefaultQuestionDeadline = 24 * time.Hour
	// MaxQuestionDeadline is MAX_QUESTION_DEADLINE_HOURS (168 h) ahead of server_time (S12).
	MaxQuestionDeadline = time.Duration(hive.MaxQuestionDeadlineHours) * time.Hour
)

// Refusal messages of the bus lane. The reply_to text is hive.md S3's; the others are
// project-defined (hive.md §5 gives no text for S17's sealed_vault, not_sealed and
// stale_epoch either).
const (
	MsgReplyToUnknown     = "reply_to names no message"
	MsgAfterGIDUnknown    = "after_gid names no message"
	MsgGIDUnknown         = "gid names no message"
	MsgSwarmUnknown       = "swarm_id names no swarm"
	MsgToInstanceUnknown  = "to_instance names no instance of the organization"
	MsgToInstanceConflict = "to_instance is not the instance of the replied message"
	MsgToUnknown          = "to names no agent announced in the vault within 24 hours"
	MsgToHandleUnknown    = "to names no handle in the swarm"
	MsgAmbiguousRecipient = "several instances run to"
	MsgNotSealed          = "the vault is not sealed"
	MsgSealedVault        = "the vault is sealed: send the body sealed"
	MsgStaleEpoch         = "sealed.epoch is not the vault's current epoch"
	MsgDeadlineRange      = "deadline must be after server_time and at most 168 hours ahead"
	MsgReceiptGIDMismatch = "gid must equal the gid of the path"
	MsgUnannouncedAgent   = " names no agent announced by hello on this socket"
	MsgHelloRequired      = "hello must be the first frame"
	MsgInstanceMismatch   = "instance_id is not the instance of the token"
	MsgChannelNotFollowed = "the socket does not follow channel"
	MsgAckBeyondLast      = "seq is beyond the last seq of the channel"
	MsgFrameNotRelayed    = " frames are not relayed by this service"
)

// visibleTo reports whether instance (org, inst) may see m (S20): broadcasts, and direct
// messages it sent or that are bound to it.
func visibleTo(m store.StoredMessage, org, inst string) bool {
	return m.ToInstance == "" || (m.ToOrg == org && m.ToInstance == inst) ||
		(m.SenderOrg == org && m.SenderInstance == inst)
}

// template decodes the delivery a stored message is rendered from (its Data, gid/seq/thread
// still empty), through the cache.
func (s *Server) template(m store.StoredMessage) (*cachedDelivery, error) {
	if c, ok := s.bus.cache.get(m.GID); ok {
		return c, nil
	}
	var d hive.MessageDeliveryV1
	if err := d.UnmarshalJSON(m.Data); err != nil {
		return nil, err
	}
	d.GID, d.Seq, d.ThreadID = m.GID, uint64(m.Seq), m.ThreadID
	c := &cachedDelivery{d: d, cost: deliveryCost(len(m.Data))}
	s.bus.cache.put(m.GID, c)
	return c, nil
}

// delivery renders a stored message as viewer sees it: `mine` is true iff the sending and
// viewing instances have the same (non-empty) owner (hive.md §2.7).
func (s *Server) delivery(m store.StoredMessage, viewer *Principal) (hive.MessageDeliveryV1, error) {
	c, err := s.template(m)
	if err != nil {
		return hive.MessageDeliveryV1{}, err
	}
	d := c.d
	if a, ok := d.From.(hive.SenderAgent); ok {
		a.Mine = a.Owner != nil && *a.Owner != "" && viewer.Owner == *a.Owner
		d.From = a
	}
	return d, nil
}

// taskEvent renders a stored task proposal's `task.event` (hive.md §2.10, S13).
func taskEvent(p store.TaskProposal) (hive.TaskEventV1, error) {
	var ev hive.TaskEventV1
	if err := ev.UnmarshalJSON(p.Data); err != nil {
		return ev, err
	}
	ev.Seq, ev.Number = uint64(p.Seq), uint64(p.Number)
	return ev, nil
}

// storedRecord is the MessageStoredV1 of a stored message (S9: a resend gets the original).
func (s *Server) storedRecord(m store.StoredMessage) (hive.MessageStoredV1, error) {
	c, err := s.template(m)
	if err != nil {
		return hive.MessageStoredV1{}, err
	}
	return hive.MessageStoredV1{
		ClientMsgID: m.ClientMsgID, GID: m.GID, ThreadID: m.ThreadID, Network: c.d.Network,
		Seq: uint64(m.Seq), ServerTime: c.d.ServerTime, ExpiresAt: c.d.ExpiresAt,
	}, nil
}

// senderName is the name a reply's `to` uses for m's sender: its agent (org) or handle (swarm).
func (s *Server) senderName(m store.StoredMessage) string {
	c, err := s.template(m)
	if err != nil {
		return ""
	}
	switch f := c.d.From.(type) {
	case hive.SenderAgent:
		return f.Agent
	case hive.SenderSwarm:
		return f.Handle
	}
	return ""
}

// SendMessage is POST /v1/messages without transport framing: it enforces hive.md §8 for one
// AgentMessageV1 of principal p, stores it durably and returns its MessageStoredV1 (the
// original's for a resent client_msg_id, S9). A refusal is a *[BusError]. The `message` frame
// takes the same path with its socket, which never receives the message back (S10).
func (s *Server) SendMessage(ctx context.Context, p *Principal, m *hive.AgentMessageV1) (hive.MessageStoredV1, error) {
	st, e := s.sendMessage(ctx, p, m, nil)
	if e != nil {
		return st, e
	}
	return st, nil
}

func (s *Server) sendMessage(ctx context.Context, p *Principal, m *hive.AgentMessageV1, sock *busSocket) (hive.MessageStoredV1, *BusError) {
	prep, be := s.prepareMessage(ctx, p, m, sock)
	if be != nil || prep.replay != nil {
		return deref0(prep.replay), be
	}
	stored, replayed, err := s.store.AppendMessage(context.WithoutCancel(ctx), prep.write)
	return s.storedAnswer(ctx, stored, replayed, err)
}

// preparedMessage is a message that passed every check of hive.md §8 made before it is
// stored: the write to make, or the original's record for a resent client_msg_id (S9).
type preparedMessage struct {
	write  store.MessageWrite
	replay *hive.MessageStoredV1
}

func deref0(r *hive.MessageStoredV1) hive.MessageStoredV1 {
	if r == nil {
		return hive.MessageStoredV1{}
	}
	return *r
}

// storedAnswer is the answer to a stored (or replayed) message: its MessageStoredV1, or the
// store's failure.
func (s *Server) storedAnswer(ctx context.Context, stored store.StoredMessage, replayed bool, err error) (hive.MessageStoredV1, *BusError) {
	if err != nil {
		return hive.MessageStoredV1{}, s.busStoreErr(ctx, "append message", err)
	}
	if replayed {
		s.metrics.messages.WithLabelValues("replayed").Inc()
	} else {
		s.metrics.messages.WithLabelValues("stored").Inc()
	}
	rec, err := s.storedRecord(stored)
	if err != nil {
		return hive.MessageStoredV1{}, s.busStoreErr(ctx, "render message", err)
	}
	return rec, nil
}

// prepareMessage makes every check of hive.md §8 that comes before storing a message and
// builds its write (S1–S12, S17).
func (s *Server) prepareMessage(ctx context.Context, p *Principal, m *hive.AgentMessageV1, sock *busSocket) (preparedMessage, *BusError) {
	var none preparedMessage
	// S1: Validate, in the spec's order, with the §5.4 field.
	if err := m.Validate(); err != nil {
		return none, validationError(err)
	}
	scope := p.scope()
	// S9: a resend of a stored id is answered with the original from the store, before any
	// check that could have changed since (bindings, deadlines, swarm membership), even after
	// a restart. A concurrent first send that is stored between this lookup and AppendMessage
	// is still replayed by the store itself.
	switch orig, err := s.store.LookupClientMsg(ctx, p.Org, p.InstanceID, m.ClientMsgID); {
	case err == nil:
		rec, err := s.storedRecord(orig)
		if err != nil {
			return none, s.busStoreErr(ctx, "render message", err)
		}
		s.metrics.messages.WithLabelValues("replayed").Inc()
		return preparedMessage{replay: &rec}, nil
	case !errors.Is(err, store.ErrNotFound):
		return none, s.busStoreErr(ctx, "look up client_msg_id", err)
	}

	// S2: the network, scoped to the token.
	var stream store.StreamKey
	var vault string
	var sender hive.SenderV1
	var trust hive.MessageTrust
	switch n := m.Network.(type) {
	case hive.NetworkOrg:
		stream = store.OrgStream(p.Org, n.Channel)
		_, vault, _, _ = hive.ParseChannel(n.Channel)
		a := hive.SenderAgent{Agent: m.From, InstanceLabel: p.InstanceLabel, InstanceID: new(p.InstanceID)}
		if p.Owner != "" {
			a.Owner = new(p.Owner)
		}
		sender, trust = a, hive.MessageTrustTeam // S6
	case hive.NetworkSwarm:
		sw, ok := p.swarm(n.SwarmID)
		if !ok {
			return none, newBusError(hive.HiveErrorCodeNotFound, "network.swarm_id", "", MsgSwarmUnknown)
		}
		stream = store.SwarmStream(n.SwarmID)
		sender, trust = hive.SenderSwarm{Handle: sw.Handle, Reputation: reputation(sw.Reputation)}, hive.MessageTrustUntrusted // S5
	}
	// S17: sealed vaults (bus_sealed.go); a swarm message is never sealed (Validate).
	if stream.Network == store.NetworkOrg {
		if be := s.checkSealed(p, vault, m); be != nil {
			return none, be
		}
	}
	now := s.now().UTC().Truncate(time.Second)
	serverTime := hive.UtcTimestampOf(now)

	// S12: deadlines.
	var deadline *hive.UtcTimestamp
	var pending time.Time
	if m.Type == hive.MessageTypeQuestion {
		if m.Deadline != nil {
			t, _ := hive.ParseTime(*m.Deadline) // checked by Validate
			if !t.After(now) || t.After(now.Add(MaxQuestionDeadline)) {
				return none, newBusError(hive.HiveErrorCodeInvalidRequest, "deadline", "", MsgDeadlineRange)
			}
			deadline = m.Deadline
		} else if stream.Network == store.NetworkOrg {
			deadline = new(hive.UtcTimestampOf(now.Add(DefaultQuestionDeadline)))
		}
		if deadline != nil && stream.Network == store.NetworkOrg {
			pending, _ = hive.ParseTime(*deadline)
		}
	}

	// S3, S4: reply_to names a visible message of the same network; the reply joins its thread.
	var replied *store.StoredMessage
	var thread string
	if m.ReplyTo != nil {
		r, err := s.store.GetMessage(ctx, scope, *m.ReplyTo)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return none, s.busStoreErr(ctx, "get message", err)
		}
		if err != nil || r.Stream != stream || !visibleTo(r, p.Org, p.InstanceID) {
			return none, newBusError(hive.HiveErrorCodeNotFound, "reply_to", "", MsgReplyToUnknown)
		}
		replied, thread = &r, r.ThreadID
	}

	// S7: recipient binding.
	var toOrg, toInst string
	if m.To != nil {
		to := *m.To
		switch {
		case replied != nil && to == s.senderName(*replied):
			toOrg, toInst = replied.SenderOrg, replied.SenderInstance
			if m.ToInstance != nil && *m.ToInstance != toInst {
				return none, newBusError(hive.HiveErrorCodeNotFound, "to_instance", "", MsgToInstanceConflict)
			}
		case stream.Network == store.NetworkSwarm:
			members := s.swarmMembers(stream.Name, to)
			switch len(members) {
			case 0:
				return none, newBusError(hive.HiveErrorCodeNotFound, "to", "", MsgToHandleUnknown)
			case 1:
				toOrg, toInst = members[0].org, members[0].instance
			default:
				return none, newBusError(hive.HiveErrorCodeInvalidState, "to", hive.ReasonAmbiguousRecipient, MsgAmbiguousRecipient)
			}
		case m.ToInstance != nil:
			if !s.orgHasInstance(p.Org, *m.ToInstance) {
				return none, newBusError(hive.HiveErrorCodeNotFound, "to_instance", "", MsgToInstanceUnknown)
			}
			toOrg, toInst = p.Org, *m.ToInstance
		default:
			insts, err := s.announcedIn(ctx, p.Org, vault, to, p.InstanceID, now)
			if err != nil {
				return none, s.busStoreErr(ctx, "read announcements", err)
			}
			switch len(insts) {
			case 0:
				return none, newBusError(hive.HiveErrorCodeNotFound, "to", "", MsgToUnknown)
			case 1:
				toOrg, toInst = p.Org, insts[0]
			default:
				return none, newBusError(hive.HiveErrorCodeInvalidState, "to", hive.ReasonAmbiguousRecipient, MsgAmbiguousRecipient)
			}
		}
	}

	// S11: retention.
	var expires, storeExpires time.Time
	switch {
	case stream.Network == store.NetworkSwarm:
		expires = now.Add(SwarmRetentionBound) // reported lower bound; never deleted while open
	case p.Plan == "personal":
		expires, storeExpires = now.Add(PersonalRetention), now.Add(PersonalRetention)
	default:
		expires, storeExpires = now.Add(TeamRetention), now.Add(TeamRetention)
	}

	tmpl := hive.MessageDeliveryV1{
		Network: m.Network, Type: m.Type, From: sender, To: m.To, ReplyTo: m.ReplyTo, Deadline: deadline,
		Body: m.Body, Sealed: m.Sealed, Trust: trust, ServerTime: serverTime, ExpiresAt: hive.UtcTimestampOf(expires),
	}
	data, err := tmpl.MarshalJSON()
	if err != nil {
		return none, s.busStoreErr(ctx, "render message", err)
	}
	if sock != nil {
		sock.markSent(m.ClientMsgID)
	}
	return preparedMessage{write: store.MessageWrite{
		Stream: stream, SenderOrg: p.Org, SenderInstance: p.InstanceID, ClientMsgID: m.ClientMsgID,
		Type: string(m.Type), ThreadID: thread, ReplyTo: deref(m.ReplyTo), ToOrg: toOrg, ToInstance: toInst,
		Deadline: pending, ServerTime: now, ExpiresAt: storeExpires, Data: data,
	}}, nil
}

// reputation converts the auth file's reputation to the wire's u64 score.
func reputation(f float64) uint64 {
	if f <= 0 {
		return 0
	}
	return uint64(f)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// busStoreErr maps a store failure to 503 unavailable (shutdown, cancellation) or a logged
// 500 internal error. hive.md §5.2 has no 5xx code: the body's code is `unknown`, and clients
// act on the status.
func (s *Server) busStoreErr(ctx context.Context, op string, err error) *BusError {
	e := s.storeErr(ctx, op, err)
	return &BusError{Status: e.Status, Detail: hive.HiveErrorDetailV1{Code: hive.HiveErrorCodeUnknown, Message: e.Message}}
}

// Receipt is POST /v1/messages/{gid}/receipts (and the `message.receipt` frame) without
// transport framing (hive.md §2.9, S16): p's agent r.By reports r.State for message r.GID; each
// newly applied state is sent to the sender's sockets as `message.status`.
func (s *Server) Receipt(ctx context.Context, p *Principal, r *hive.MessageReceiptV1) error {
	if e := s.receipt(ctx, p, r, nil); e != nil {
		return e
	}
	return nil
}

func (s *Server) receipt(ctx context.Context, p *Principal, r *hive.MessageReceiptV1, sock *busSocket) *BusError {
	if err := r.Validate(); err != nil {
		return validationError(err)
	}
	notFound := newBusError(hive.HiveErrorCodeNotFound, "gid", "", MsgGIDUnknown)
	m, err := s.store.GetMessage(ctx, p.scope(), r.GID)
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return s.busStoreErr(ctx, "get message", err)
	}
	c, err := s.template(m)
	if err != nil {
		return s.busStoreErr(ctx, "render message", err)
	}
	now := s.now().UTC().Truncate(time.Second)
	// S16: only an announced recipient agent of the message.
	var channel string
	if n, ok := c.d.Network.(hive.NetworkOrg); ok {
		channel = n.Channel
	}
	announced := func(agent, ch string) (bool, error) {
		if sock != nil {
			return sock.announces(agent, ch), nil
		}
		return s.announcedOn(ctx, p.Org, p.InstanceID, agent, ch, now)
	}
	own := m.SenderOrg == p.Org && m.SenderInstance == p.InstanceID && s.senderName(m) == r.By
	switch {
	case own:
		return notFound
	case m.ToInstance != "" && (m.ToOrg != p.Org || m.ToInstance != p.InstanceID || c.d.To == nil):
		return notFound
	case m.ToInstance != "" && m.Stream.Network == store.NetworkOrg && *c.d.To != r.By:
		return notFound
	}
	switch ok, err := announced(r.By, channel); {
	case err != nil:
		return s.busStoreErr(ctx, "read announcements", err)
	case !ok:
		return notFound
	}
	by := r.By
	key := r.By
	if m.Stream.Network == store.NetworkSwarm {
		sw, _ := p.swarm(m.Stream.Name)
		by, key = sw.Handle, sw.Handle // S5: a swarm status names the recipient's handle
	}
	applied, err := s.store.AppendReceipt(context.WithoutCancel(ctx), m.Stream, m.GID, key, string(r.State), now)
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return s.busStoreErr(ctx, "append receipt", err)
	}
	for _, state := range applied {
		s.metrics.receipts.Inc()
		f := hive.FrameMessageStatus{Status: hive.MessageStatusV1{
			GID: m.GID, ClientMsgID: m.ClientMsgID, By: by, State: hive.MessageReceiptState(state), ServerTime: hive.UtcTimestampOf(now),
		}}
		data, err := f.MarshalJSON()
		if err != nil {
			continue
		}
		for _, so := range s.bus.instanceSockets(m.SenderOrg, m.SenderInstance) {
			so.push(data)
		}
	}
	return nil
}

// handlePostMessage serves POST /v1/messages: body AgentMessageV1 → 200 MessageStoredV1.
func (s *Server) handlePostMessage(w http.ResponseWriter, r *http.Request, p *Principal) {
	body, e := s.readBusBody(w, r)
	if e != nil {
		writeBusError(w, e)
		return
	}
	var m hive.AgentMessageV1
	if err := m.UnmarshalJSON(body); err != nil {
		writeBusError(w, validationError(err))
		return
	}
	rec, be := s.sendMessage(r.Context(), p, &m, nil)
	if be != nil {
		writeBusError(w, be)
		return
	}
	writeBusJSON(w, rec)
}

func writeBusJSON(w http.ResponseWriter, v interface{ MarshalJSON() ([]byte, error) }) {
	data, err := v.MarshalJSON()
	if err != nil {
		writeBusError(w, &BusError{Status: http.StatusInternalServerError, Detail: hive.HiveErrorDetailV1{Code: hive.HiveErrorCodeUnknown, Message: "Internal error."}})
		return
	}
	w.Header().Set("Content-Type", MediaJSON)
	_, _ = w.Write(append(data, '\n'))
}

// readBusBody reads a bus request body within the body limit.
func (s *Server) readBusBody(w http.ResponseWriter, r *http.Request) ([]byte, *BusError) {
	body, e := readBody(w, r, s.limits.MaxBody)
	if e != nil {
		be := newBusError(hive.HiveErrorCodeInvalidRequest, "", "", e.Message)
		if e.Code == CodePayloadTooLarge {
			be.Status = http.StatusRequestEntityTooLarge
			limit := uint64(s.limits.MaxBody)
			be.Detail.Limit = &limit
		}
		return nil, be
	}
	return body, nil
}

// handlePostReceipt serves POST /v1/messages/{gid}/receipts: body MessageReceiptV1 → 204.
func (s *Server) handlePostReceipt(w http.ResponseWriter, r *http.Request, p *Principal) {
	body, e := s.readBusBody(w, r)
	if e != nil {
		writeBusError(w, e)
		return
	}
	var rc hive.MessageReceiptV1
	if err := rc.UnmarshalJSON(body); err != nil {
		writeBusError(w, validationError(err))
		return
	}
	if err := rc.Validate(); err != nil {
		writeBusError(w, validationError(err))
		return
	}
	if rc.GID != r.PathValue("gid") {
		writeBusError(w, newBusError(hive.HiveErrorCodeInvalidRequest, "gid", "", MsgReceiptGIDMismatch))
		return
	}
	if be := s.receipt(r.Context(), p, &rc, nil); be != nil {
		writeBusError(w, be)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// historyQuery is a parsed GET /v1/messages request (hive.md §2.11).
type historyQuery struct {
	stream   store.StreamKey
	network  hive.NetworkV1
	threadID string
	afterGID string
	limit    int
}

func (s *Server) parseHistoryQuery(r *http.Request, p *Principal) (historyQuery, *BusError) {
	var q historyQuery
	bad := func(field, msg string) *BusError {
		return newBusError(hive.HiveErrorCodeInvalidRequest, field, "", msg)
	}
	vals := r.URL.Query()
	for _, name := range slices.Sorted(maps.Keys(vals)) { // the first fault reported is stable
		v := vals[name]
		switch name {
		case "network", "channel", "swarm_id", "thread_id", "after_gid", "limit":
			if len(v) != 1 {
				return q, bad(name, name+" must be given once")
			}
		default:
			return q, bad(clip(name), "unknown query parameter "+clip(name))
		}
	}
	network, hasNet := vals["network"]
	switch {
	case !hasNet:
		return q, bad("network", "network is required")
	case network[0] == string(hive.NetworkKindOrg):
		if _, ok := vals["swarm_id"]; ok {
			return q, bad("swarm_id", "swarm_id is not a parameter of network=org")
		}
		ch, ok := vals["channel"]
		if !ok {
			return q, bad("channel", "network=org needs channel")
		}
		if err := hive.ValidateChannel(ch[0]); err != nil {
			return q, bad("channel", err.Error())
		}
		q.stream, q.network = store.OrgStream(p.Org, ch[0]), hive.NetworkOrg{Channel: ch[0]}
	case network[0] == string(hive.NetworkKindSwarm):
		if _, ok := vals["channel"]; ok {
			return q, bad("channel", "channel is not a parameter of network=swarm")
		}
		id, ok := vals["swarm_id"]
		if !ok {
			return q, bad("swarm_id", "network=swarm needs swarm_id")
		}
		if err := hive.ValidateID(id[0], "swarm_id"); err != nil {
			return q, bad("swarm_id", err.Error())
		}
		if _, member := p.swarm(id[0]); !member {
			return q, newBusError(hive.HiveErrorCodeNotFound, "swarm_id", "", MsgSwarmUnknown)
		}
		q.stream, q.network = store.SwarmStream(id[0]), hive.NetworkSwarm{SwarmID: id[0]}
	default:
		return q, bad("network", "network must be org or swarm")
	}
	if v, ok := vals["thread_id"]; ok {
		if err := hive.ValidateID(v[0], "thread_id"); err != nil {
			return q, bad("thread_id", err.Error())
		}
		q.threadID = v[0]
	}
	if v, ok := vals["after_gid"]; ok {
		if err := hive.ValidateID(v[0], "after_gid"); err != nil {
			return q, bad("after_gid", err.Error())
		}
		q.afterGID = v[0]
	}
	q.limit = hive.MaxMessagesPage
	if v, ok := vals["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > hive.MaxMessagesPage || v[0][0] == '+' {
			e := bad("limit", "limit must be an integer from 1 to 200")
			l := uint64(hive.MaxMessagesPage)
			e.Detail.Limit = &l
			return q, e
		}
		q.limit = n
	}
	return q, nil
}

// handleListMessages serves GET /v1/messages: one MessageListV1 page of what the caller sees.
func (s *Server) handleListMessages(w http.ResponseWriter, r *http.Request, p *Principal) {
	ctx := r.Context()
	q, be := s.parseHistoryQuery(r, p)
	if be != nil {
		writeBusError(w, be)
		return
	}
	var after int64
	if q.afterGID != "" {
		m, err := s.store.GetMessage(ctx, p.scope(), q.afterGID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			writeBusError(w, s.busStoreErr(ctx, "get message", err))
			return
		}
		if err != nil || m.Stream != q.stream || !visibleTo(m, p.Org, p.InstanceID) {
			writeBusError(w, newBusError(hive.HiveErrorCodeNotFound, "after_gid", "", MsgAfterGIDUnknown))
			return
		}
		after = m.Seq
	}
	rq := store.ReadQuery{After: after, Limit: q.limit + 1, ThreadID: q.threadID, Viewer: &store.Viewer{Org: p.Org, Instance: p.InstanceID},
		MaxBytes: s.limits.MaxReadBytes}
	msgs, err := s.store.ReadMessages(ctx, q.stream, rq)
	if err != nil {
		writeBusError(w, s.busStoreErr(ctx, "read messages", err))
		return
	}
	list := hive.MessageListV1{Schema: hive.MessageListSchema, Messages: make([]hive.MessageDeliveryV1, 0, min(len(msgs), q.limit))}
	more := len(msgs) > q.limit
	if !more && pageMayContinue(messageEntries(msgs), q.limit+1, rq.MaxBytes) {
		// The byte budget may have stopped the page: one more message says whether any follows.
		rq.After, rq.Limit = msgs[len(msgs)-1].Seq, 1
		next, err := s.store.ReadMessages(ctx, q.stream, rq)
		if err != nil {
			writeBusError(w, s.busStoreErr(ctx, "read messages", err))
			return
		}
		more = len(next) > 0
	}
	if more {
		msgs = msgs[:min(len(msgs), q.limit)]
		list.Next = new(msgs[len(msgs)-1].GID)
	}
	for _, m := range msgs {
		d, err := s.delivery(m, p)
		if err != nil {
			writeBusError(w, s.busStoreErr(ctx, "render message", err))
			return
		}
		list.Messages = append(list.Messages, d)
	}
	writeBusJSON(w, list)
}

// handleCatchUp serves GET /v1/bus/channels/{channel}/events (hive.md §4.1): the caller's
// visible `message.deliver`, `deliver` and `task.event` frames of an org channel with seq >
// after_seq.
func (s *Server) handleCatchUp(w http.ResponseWriter, r *http.Request, p *Principal) {
	channel := r.PathValue("channel")
	bad := func(field, msg string) {
		writeBusError(w, newBusError(hive.HiveErrorCodeInvalidRequest, field, "", msg))
	}
	if err := hive.ValidateChannel(channel); err != nil {
		bad("channel", err.Error())
		return
	}
	vals := r.URL.Query()
	var after int64
	limit := hive.MaxBusReplay
	for _, name := range slices.Sorted(maps.Keys(vals)) { // the first fault reported is stable
		v := vals[name]
		switch name {
		case "after_seq":
			n, err := strconv.ParseInt(v[0], 10, 64)
			if len(v) != 1 || err != nil || n < 0 || v[0][0] == '+' {
				bad("after_seq", "after_seq must be a non-negative integer")
				return
			}
			after = n
		case "limit":
			n, err := strconv.Atoi(v[0])
			if len(v) != 1 || err != nil || n < 1 || n > hive.MaxBusReplay || v[0][0] == '+' {
				e := newBusError(hive.HiveErrorCodeInvalidRequest, "limit", "", "limit must be an integer from 1 to 500")
				l := uint64(hive.MaxBusReplay)
				e.Detail.Limit = &l
				writeBusError(w, e)
				return
			}
			limit = n
		default:
			bad(clip(name), "unknown query parameter "+clip(name))
			return
		}
	}
	stream := store.OrgStream(p.Org, channel)
	viewer, err := s.catchUpViewer(r.Context(), p, channel)
	if err != nil {
		writeBusError(w, s.busStoreErr(r.Context(), "announcements", err))
		return
	}
	rq := store.ReadQuery{After: after, Limit: limit + 1, Viewer: viewer, MaxBytes: s.limits.MaxReadBytes}
	entries, err := s.store.ReadStream(r.Context(), stream, rq)
	if err != nil {
		writeBusError(w, s.busStoreErr(r.Context(), "read stream", err))
		return
	}
	out := hive.BusEventsV1{Schema: hive.BusEventsSchema, Channel: channel, Events: make([]hive.BusFrameV1, 0, min(len(entries), limit))}
	more := len(entries) > limit
	if !more && pageMayContinue(entries, limit+1, rq.MaxBytes) {
		// The byte budget may have stopped the page: one more entry says whether any follows.
		rq.After, rq.Limit = entries[len(entries)-1].Seq, 1
		next, err := s.store.ReadStream(r.Context(), stream, rq)
		if err != nil {
			writeBusError(w, s.busStoreErr(r.Context(), "read stream", err))
			return
		}
		more = len(next) > 0
	}
	if more {
		entries = entries[:min(len(entries), limit)]
		out.NextAfterSeq = new(uint64(entries[len(entries)-1].Seq))
	}
	for _, e := range entries {
		f, err := s.entryFrame(e, p)
		if err != nil {
			writeBusError(w, s.busStoreErr(r.Context(), "render", err))
			return
		}
		out.Events = append(out.Events, f)
	}
	writeBusJSON(w, out)
}

// entryFrame renders one stream position for viewer p.
func (s *Server) entryFrame(e store.StreamEntry, p *Principal) (hive.BusFrameV1, error) {
	if e.Task != nil {
		ev, err := taskEvent(*e.Task)
		return hive.FrameTaskEvent{Event: ev}, err
	}
	if e.Publish != nil {
		return deliverFrame(e.Publish)
	}
	d, err := s.delivery(*e.Message, p)
	return hive.FrameMessageDeliver{Delivery: d}, err
}

// handleListProposals serves GET /v1/admin/task-proposals?after=&limit= (right admin): the
// org's task proposals of questions past their deadline (S13), oldest first:
// `{"proposals":[{"id":N,"question_gid":"…","vault_id":"…","task_event":{TaskEventV1}}],"next"?:"N"}`.
func (s *Server) handleListProposals(w http.ResponseWriter, r *http.Request, p *Principal) {
	q := r.URL.Query()
	var after int64
	if v := q.Get("after"); v != "" {
		var e *Error
		if after, e = parseCursor("after", v); e != nil {
			writeError(w, e)
			return
		}
	}
	limit, e := parseLimit(q.Get("limit"), DefaultListLimit, MaxListLimit)
	if e != nil {
		writeError(w, e)
		return
	}
	props, err := s.store.ListTaskProposals(r.Context(), p.Org, store.ProposalQuery{After: after, Limit: limit})
	if err != nil {
		writeError(w, s.storeErr(r.Context(), "list task proposals", err))
		return
	}
	out := []byte(`{"proposals":[`)
	for i, pr := range props {
		ev, err := taskEvent(pr)
		if err != nil {
			writeError(w, s.storeErr(r.Context(), "render task proposal", err))
			return
		}
		data, err := ev.MarshalJSON()
		if err != nil {
			writeError(w, s.storeErr(r.Context(), "render task proposal", err))
			return
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"id":`...)
		out = strconv.AppendInt(out, pr.ID, 10)
		out = append(out, `,"question_gid":`...)
		out = jsonvalue.AppendQuote(out, pr.QuestionGID)
		out = append(out, `,"vault_id":`...)
		out = jsonvalue.AppendQuote(out, pr.Vault)
		out = append(out, `,"task_event":`...)
		out = append(out, data...)
		out = append(out, '}')
	}
	out = append(out, ']')
	if len(props) == limit {
		out = append(out, `,"next":`...)
		out = jsonvalue.AppendQuote(out, strconv.FormatInt(props[len(props)-1].ID, 10))
	}
	out = append(out, "}\n"...)
	w.Header().Set("Content-Type", MediaJSON)
	_, _ = w.Write(out)
}

// sweepBus is the bus lane's part of a sweep: expired messages are deleted (S11), each org
// question past its deadline without a settling answer becomes one task proposal announced as a
// `task.event` on its channel (S13), and stale announcements are forgotten.
func (s *Server) sweepBus(ctx context.Context, now time.Time) error {
	for {
		n, err := s.store.ExpireMessages(ctx, now, sweepBatch)
		if err != nil {
			return err
		}
		s.metrics.sweeps.WithLabelValues("message").Add(float64(n))
		if n < sweepBatch {
			break
		}
	}
	for {
		due, err := s.store.DueQuestions(ctx, now, 100)
		if err != nil {
			return err
		}
		for _, q := range due {
			_, vault, _, err := hive.ParseChannel(q.Stream.Name)
			if err != nil {
				return err
			}
			ev := hive.TaskEventV1{Channel: q.Stream.Name, Event: hive.TaskEventKindProposed, State: hive.TaskStateProposed,
				ServerTime: hive.UtcTimestampOf(now)}
			data, err := ev.MarshalJSON()
			if err != nil {
				return err
			}
			_, created, err := s.store.ProposeTask(ctx, store.TaskProposalWrite{
				Stream: q.Stream, Vault: vault, QuestionGID: q.GID, CreatedAt: now, Data: data,
			})
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if created {
				s.metrics.sweeps.WithLabelValues("task_proposal").Inc()
			}
		}
		if len(due) < 100 {
			break
		}
	}
	// Announcements: the live pairs are seen now; what nobody announced for 24 hours binds
	// nothing any more.
	if err := s.store.RecordAnnouncements(ctx, s.bus.allLive(), now); err != nil {
		return err
	}
	for {
		n, err := s.store.ExpireAnnouncements(ctx, now.Add(-announceWindow), sweepBatch)
		if err != nil {
			return err
		}
		s.metrics.sweeps.WithLabelValues("announcement").Add(float64(n))
		if n < sweepBatch {
			break
		}
	}
	return nil
}

// messageEntries views messages as stream entries (pageMayContinue).
func messageEntries(msgs []store.StoredMessage) []store.StreamEntry {
	out := make([]store.StreamEntry, len(msgs))
	for i := range msgs {
		out[i] = store.StreamEntry{Seq: msgs[i].Seq, Message: &msgs[i]}
	}
	return out
}
