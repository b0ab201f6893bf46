package relay

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/store"
)

// Handoffs (hive.md §4.6 "Handoffs", S7, S19).
//
// `handoff.offer`: validated (§4.4), H5 on `from`, H6 on `channel` (the socket must follow it),
// then bound to one recipient instance exactly like a direct message without `to_instance`
// (S7): the one other instance that announced `to` in the channel's vault within 24 hours;
// none → 404 not_found, field `to`; several → 409 invalid_state, field `to`, reason
// ambiguous_recipient. The deadline must be after server_time and at most 168 hours ahead
// (project-defined, as question deadlines; 400 invalid_request, field `deadline`). The offer is
// stored durably and relayed as sent to every socket of the bound instance that announces
// `to`; success answers nothing. Until its deadline it is redelivered after every hello (so at
// every connect) of that instance that announces `to` — at least once: a socket that says hello
// while the offer is relayed may get it twice, and clients drop repeats by handoff_id. At the
// deadline it lapses: no more redelivery, and an ack or reject is refused.
//
// A handoff_id names one handoff within the org (project-defined). Offering it again from the
// same instance with the same members is a no-op; from another instance or with other members
// it is 409 invalid_state, field `handoff_id`.
//
// `handoff.ack` / `handoff.reject`: validated, H5 on `by`; the handoff must be offered to the
// caller (the bound instance, `by` = `to`), else 404 not_found, field `handoff_id` (an unknown,
// other org's or other recipient's handoff answers the same). A handoff already acked or
// rejected, or past its deadline, is 409 invalid_state, field `handoff_id`. The first applies
// durably (of two concurrent ones exactly one) and is relayed as sent to every socket of the
// offering instance announcing `from` that is open at that moment (live only: the outcome is
// not redelivered). Every error frame of a handoff frame carries its `handoff_id`.
//
// S19: a `message` of type `handoff` binds and completes nothing; only these frames do. The
// record is kept until the deadline plus the org's retention (S11: Team 30 days, Personal 7).

// Refusal messages of handoffs (project-defined).
const (
	MsgHandoffUnknown = "handoff_id names no handoff offered to by"
	MsgHandoffSettled = "the handoff was already acknowledged or rejected"
	MsgHandoffLapsed  = "the handoff lapsed at its deadline"
	MsgHandoffTaken   = "handoff_id names another handoff"
)

// sendFrameError queues an `error` frame with the request's client_msg_id or handoff_id.
func (sock *busSocket) sendFrameError(cmid, handoffID *string, e *BusError) {
	f := hive.FrameError{ClientMsgID: cmid, HandoffID: handoffID, Error: e.Detail}
	if data, err := f.MarshalJSON(); err == nil {
		sock.enqueue(outFrame{data: data})
	}
}

// handoffOffer answers one `handoff.offer` frame.
func (sock *busSocket) handoffOffer(f *hive.FrameHandoffOffer) {
	hid := &f.HandoffID
	if err := f.Validate(); err != nil {
		sock.sendFrameError(nil, hid, frameValidationError(err))
		return
	}
	if !sock.announces(f.From, "") { // H5
		sock.sendFrameError(nil, hid, newBusError(hive.HiveErrorCodeInvalidRequest, "from", hive.ReasonUnannouncedAgent, "from"+MsgUnannouncedAgent))
		return
	}
	if !sock.followsChannel(f.Channel) { // H6
		sock.sendFrameError(nil, hid, newBusError(hive.HiveErrorCodeInvalidRequest, "channel", "", MsgChannelNotFollowed))
		return
	}
	if be := sock.s.offerHandoff(sock.ctx, sock.p, f); be != nil {
		sock.sendFrameError(nil, hid, be)
	}
}

// offerHandoff binds, stores and relays a validated offer of principal p.
func (s *Server) offerHandoff(ctx context.Context, p *Principal, f *hive.FrameHandoffOffer) *BusError {
	data, err := f.MarshalJSON()
	if err != nil {
		return s.busStoreErr(ctx, "render handoff", err)
	}
	repeated := func(h store.Handoff) *BusError {
		if h.FromInstance == p.InstanceID && bytes.Equal(h.Data, data) {
			return nil // the same offer again: a no-op
		}
		return newBusError(hive.HiveErrorCodeInvalidState, "handoff_id", "", MsgHandoffTaken)
	}
	h, err := s.store.GetHandoff(ctx, p.Org, f.HandoffID)
	switch {
	case err == nil:
		return repeated(h)
	case !errors.Is(err, store.ErrNotFound):
		return s.busStoreErr(ctx, "get handoff", err)
	}
	now := s.now().UTC().Truncate(time.Second)
	deadline, _ := hive.ParseTime(f.Deadline) // checked while decoding
	if !deadline.After(now) || deadline.After(now.Add(MaxQuestionDeadline)) {
		return newBusError(hive.HiveErrorCodeInvalidRequest, "deadline", "", MsgDeadlineRange)
	}
	_, vault, _, _ := hive.ParseChannel(f.Channel)
	// S7 without to_instance: the one other instance that announced `to` in the vault.
	insts, err := s.announcedIn(ctx, p.Org, vault, f.To, p.InstanceID, now)
	if err != nil {
		return s.busStoreErr(ctx, "announced instances", err)
	}
	switch len(insts) {
	case 0:
		return newBusError(hive.HiveErrorCodeNotFound, "to", "", MsgToUnknown)
	case 1:
	default:
		return newBusError(hive.HiveErrorCodeInvalidState, "to", hive.ReasonAmbiguousRecipient, MsgAmbiguousRecipient)
	}
	retention := TeamRetention
	if p.Plan == "personal" {
		retention = PersonalRetention
	}
	h, created, err := s.store.OfferHandoff(context.WithoutCancel(ctx), store.HandoffWrite{
		Org: p.Org, HandoffID: f.HandoffID, Channel: f.Channel, FromInstance: p.InstanceID, From: f.From,
		ToInstance: insts[0], To: f.To, Deadline: deadline, CreatedAt: now, ExpiresAt: deadline.Add(retention), Data: data,
	})
	if err != nil {
		return s.busStoreErr(ctx, "offer handoff", err)
	}
	if !created {
		return repeated(h) // a concurrent offer of the same id won
	}
	s.relayToAgent(p.Org, insts[0], f.To, data)
	return nil
}

// handoffReply answers one `handoff.ack` (state acked) or `handoff.reject` (state rejected)
// frame; f is the frame to relay.
func (sock *busSocket) handoffReply(handoffID, by, state string, f hive.BusFrameV1) {
	hid := &handoffID
	if err := hive.ValidateFrame(f); err != nil {
		sock.sendFrameError(nil, hid, frameValidationError(err))
		return
	}
	if !sock.announces(by, "") { // H5
		sock.sendFrameError(nil, hid, newBusError(hive.HiveErrorCodeInvalidRequest, "by", hive.ReasonUnannouncedAgent, "by"+MsgUnannouncedAgent))
		return
	}
	if be := sock.s.settleHandoff(sock.ctx, sock.p, handoffID, by, state, f); be != nil {
		sock.sendFrameError(nil, hid, be)
	}
}

// settleHandoff applies an ack or reject by p's agent `by` and relays it to the offering
// instance.
func (s *Server) settleHandoff(ctx context.Context, p *Principal, handoffID, by, state string, f hive.BusFrameV1) *BusError {
	notFound := newBusError(hive.HiveErrorCodeNotFound, "handoff_id", "", MsgHandoffUnknown)
	h, err := s.store.GetHandoff(ctx, p.Org, handoffID)
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return s.busStoreErr(ctx, "get handoff", err)
	}
	if h.ToInstance != p.InstanceID || h.To != by {
		return notFound
	}
	settled := newBusError(hive.HiveErrorCodeInvalidState, "handoff_id", "", MsgHandoffSettled)
	lapsed := newBusError(hive.HiveErrorCodeInvalidState, "handoff_id", "", MsgHandoffLapsed)
	now := s.now().UTC()
	switch {
	case h.State != store.HandoffOffered:
		return settled
	case !now.Before(h.Deadline):
		return lapsed
	}
	h, applied, err := s.store.SettleHandoff(context.WithoutCancel(ctx), p.Org, handoffID, state, now)
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return s.busStoreErr(ctx, "settle handoff", err)
	}
	if !applied {
		if h.State != store.HandoffOffered {
			return settled
		}
		return lapsed
	}
	data, err := f.MarshalJSON()
	if err != nil {
		return s.busStoreErr(ctx, "render handoff", err)
	}
	s.relayToAgent(p.Org, h.FromInstance, h.From, data)
	return nil
}

// relayToAgent pushes a frame to every open socket of (org, instance) whose hello announces
// agent.
func (s *Server) relayToAgent(org, instance, agent string, data []byte) {
	for _, so := range s.bus.instanceSockets(org, instance) {
		if so.announces(agent, "") {
			so.push(data)
		}
	}
}

// handoffsOnHello queues, after a hello was applied (sock.mu held), every pending offer to an
// agent the hello announces, oldest first, at most MaxBusReplay per agent.
func (sock *busSocket) handoffsOnHello() {
	s := sock.s
	now := s.now().UTC()
	agents := make([]string, 0, len(sock.agents))
	for id := range sock.agents {
		agents = append(agents, id)
	}
	slices.Sort(agents)
	for _, agent := range agents {
		pending, err := s.store.PendingHandoffs(sock.ctx, sock.p.Org, sock.p.InstanceID, agent, now, hive.MaxBusReplay)
		if err != nil {
			sock.sendError(nil, s.busStoreErr(sock.ctx, "pending handoffs", err))
			return
		}
		for _, h := range pending {
			if !sock.enqueue(outFrame{data: h.Data}) {
				return
			}
		}
	}
}

// sweepHandoffs deletes the handoffs past their retention.
func (s *Server) sweepHandoffs(ctx context.Context, now time.Time) error {
	for {
		n, err := s.store.ExpireHandoffs(ctx, now, sweepBatch)
		if err != nil {
			return err
		}
		s.metrics.sweeps.WithLabelValues("handoff").Add(float64(n))
		if n < sweepBatch {
			return nil
		}
	}
}
