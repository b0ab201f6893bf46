package relay

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/store"
)

// `publish` → `published` / `deliver` (hive.md §4.2, §4.4, §4.6, S9, S10, S20).
//
// A publish is validated (§4.4; the frame's own `channel` is field `channel`), must act for an
// agent this socket's hello announced (H5, field `from`) and name a channel the socket follows
// (H6, field `channel`). It is stored durably with the channel's next seq, from the one counter
// per channel that `message.deliver` and `task.event` share, and answered `published` with its
// position; a resent (instance, client_msg_id) stores nothing and answers the original
// `published` (S9; publishes and messages are separate idempotency spaces). Every other socket
// following the channel gets it as `deliver` in seq order through the same per-stream pump as
// messages, never the sending socket (S10). A `private` publish is visible only to sockets
// (and, in catch-up, instances) that announced its `to` on the channel — not even to the
// sender's other sockets unless they announced `to`; a `team` publish to every follower,
// whatever its `to`. The body is opaque JSON, kept as sent (compact). A publish expires like an
// org message of the token's plan (S11: Team 30 days, Personal 7 days); the sweeper deletes
// it, and its seq is never given again.

// sentPublishKey is the key under which busSocket.sent remembers a publish's client_msg_id (a
// client_msg_id holds no control character, so it never collides with a message's).
func sentPublishKey(cmid string) string { return "\x00publish\x00" + cmid }

// publishFrame answers one `publish` frame.
func (sock *busSocket) publishFrame(f *hive.FramePublish) {
	cmid := &f.ClientMsgID
	if err := f.Validate(); err != nil {
		sock.sendError(cmid, frameValidationError(err))
		return
	}
	if !sock.announces(f.From, "") { // H5
		sock.sendError(cmid, newBusError(hive.HiveErrorCodeInvalidRequest, "from", hive.ReasonUnannouncedAgent, "from"+MsgUnannouncedAgent))
		return
	}
	if !sock.followsChannel(f.Channel) { // H6
		sock.sendError(cmid, newBusError(hive.HiveErrorCodeInvalidRequest, "channel", "", MsgChannelNotFollowed))
		return
	}
	out, be := sock.s.publish(sock.ctx, sock.p, f, sock)
	if be != nil {
		sock.sendError(cmid, be)
		return
	}
	if data, err := out.MarshalJSON(); err == nil {
		sock.enqueue(outFrame{data: data})
	}
}

// followsChannel reports whether the socket follows the org channel.
func (sock *busSocket) followsChannel(channel string) bool {
	sock.mu.Lock()
	defer sock.mu.Unlock()
	_, ok := sock.follows[store.OrgStream(sock.p.Org, channel)]
	return ok
}

// publish stores a validated publish of principal p and returns its `published` (the
// original's for a resent client_msg_id). sock, when set, is the sending socket (S10).
func (s *Server) publish(ctx context.Context, p *Principal, f *hive.FramePublish, sock *busSocket) (hive.FramePublished, *BusError) {
	now := s.now().UTC().Truncate(time.Second)
	expires := now.Add(TeamRetention)
	if p.Plan == "personal" {
		expires = now.Add(PersonalRetention)
	}
	tmpl := hive.FrameDeliver{Channel: f.Channel, From: f.From, To: f.To, Kind: f.Kind, Priority: f.Priority,
		Privacy: f.Privacy, Body: f.Body, ServerTime: hive.UtcTimestampOf(now)}
	data, err := tmpl.MarshalJSON()
	if err != nil {
		return hive.FramePublished{}, s.busStoreErr(ctx, "render publish", err)
	}
	if sock != nil {
		sock.markSent(sentPublishKey(f.ClientMsgID))
	}
	stored, replayed, err := s.store.AppendPublish(context.WithoutCancel(ctx), store.PublishWrite{
		Stream: store.OrgStream(p.Org, f.Channel), SenderOrg: p.Org, SenderInstance: p.InstanceID, ClientMsgID: f.ClientMsgID,
		To: deref(f.To), Private: f.Privacy == hive.BusPrivacyPrivate, ServerTime: now, ExpiresAt: expires, Data: data,
	})
	if err != nil {
		return hive.FramePublished{}, s.busStoreErr(ctx, "append publish", err)
	}
	if replayed {
		s.metrics.messages.WithLabelValues("publish_replayed").Inc()
	} else {
		s.metrics.messages.WithLabelValues("publish_stored").Inc()
	}
	return hive.FramePublished{ClientMsgID: stored.ClientMsgID, Channel: stored.Stream.Name, Seq: uint64(stored.Seq),
		ServerTime: hive.UtcTimestampOf(stored.ServerTime)}, nil
}

// deliverPrefix is how a stored publish's `deliver` record starts (E2: the tag first, then
// `seq`, stored as 0 until the store assigns it).
var deliverPrefix = []byte(`{"t":"deliver","seq":0,`)

// deliverData renders a stored publish's `deliver` frame: the stored record with its seq
// spliced in (it is the same for every viewer).
func deliverData(pub *store.StoredPublish) ([]byte, error) {
	if bytes.HasPrefix(pub.Data, deliverPrefix) {
		out := make([]byte, 0, len(pub.Data)+20)
		out = append(out, `{"t":"deliver","seq":`...)
		out = strconv.AppendInt(out, pub.Seq, 10)
		out = append(out, ',')
		return append(out, pub.Data[len(deliverPrefix):]...), nil
	}
	f, err := deliverFrame(pub)
	if err != nil {
		return nil, err
	}
	return f.MarshalJSON()
}

// deliverFrame decodes a stored publish's `deliver` frame and sets its seq.
func deliverFrame(pub *store.StoredPublish) (hive.FrameDeliver, error) {
	f, err := hive.DecodeBusFrame(pub.Data, hive.AtClient)
	if err != nil {
		return hive.FrameDeliver{}, err
	}
	d, ok := f.(hive.FrameDeliver)
	if !ok {
		return hive.FrameDeliver{}, hive.NewValidationError("stored publish is not a deliver frame")
	}
	d.Seq = uint64(pub.Seq)
	return d, nil
}

// hidden reports whether the socket must not get stream entry e (sock.mu held): its own sends
// (S10) and what its instance or agents may not see (S20: direct messages of others, private
// publishes to agents it did not announce on the channel).
func (sock *busSocket) hidden(e store.StreamEntry) bool {
	switch {
	case e.Message != nil:
		return sock.ownSend(e.Message) || !visibleTo(*e.Message, sock.p.Org, sock.p.InstanceID)
	case e.Publish != nil:
		pub := e.Publish
		if pub.SenderOrg == sock.p.Org && pub.SenderInstance == sock.p.InstanceID {
			sock.sentMu.Lock()
			_, own := sock.sent[sentPublishKey(pub.ClientMsgID)]
			sock.sentMu.Unlock()
			if own {
				return true
			}
		}
		return pub.Private && !sock.announcesLocked(pub.To, pub.Stream.Name)
	}
	return false
}

// announcesLocked is announces with sock.mu held.
func (sock *busSocket) announcesLocked(agent, channel string) bool {
	a, ok := sock.agents[agent]
	if !ok {
		return false
	}
	for _, c := range a.Channels {
		if c == channel {
			return true
		}
	}
	return false
}

// viewerOn is the store viewer of this socket on a followed stream (sock.mu held): its instance,
// and the agents it announced on the channel (private publishes).
func (sock *busSocket) viewerOn(channel string) *store.Viewer {
	v := sock.viewer()
	if channel == "" {
		return v
	}
	for id, a := range sock.agents {
		for _, c := range a.Channels {
			if c == channel {
				v.Agents = append(v.Agents, id)
				break
			}
		}
	}
	return v
}

// catchUpViewer is the viewer of GET /v1/bus/channels/{channel}/events: the caller's instance
// and the agents it announced on the channel within the announce window (hive.md S20: "catch-up
// returns exactly what the caller can see").
func (s *Server) catchUpViewer(ctx context.Context, p *Principal, channel string) (*store.Viewer, error) {
	agents, err := s.agentsOn(ctx, p.Org, p.InstanceID, channel, s.now())
	if err != nil {
		return nil, err
	}
	return &store.Viewer{Org: p.Org, Instance: p.InstanceID, Agents: agents}, nil
}

// agentsOn returns, sorted and each once, the agents instance announced on channel within the
// announce window: stored announcements (dropped ones included, as for S7) and open sockets.
func (s *Server) agentsOn(ctx context.Context, org, instance, channel string, now time.Time) ([]string, error) {
	var out []string
	for _, a := range s.bus.livePairs(org, instance) {
		if a.channel == channel {
			out = append(out, a.agent)
		}
	}
	anns, err := s.store.Announcements(ctx, org, instance, now.Add(-announceWindow))
	if err != nil {
		return nil, err
	}
	for _, a := range anns {
		if a.Channel == channel {
			out = append(out, a.Agent)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// frameValidationError is the 400 of a refused bus frame (S1): as validationError, with the
// §4.4 members of the frame as `field` where §5.4 has no row (a frame's own `channel` is
// `channel`, §5.4).
func frameValidationError(err error) *BusError {
	e := validationError(err)
	if _, decode := err.(*hive.DecodeError); decode {
		return e
	}
	if f := frameField(err.Error()); f != "" {
		e.Detail.Field = &f
	}
	return e
}

// frameField maps a frame validation message (§4.4) to its member.
func frameField(msg string) string {
	switch msg {
	case "unknown priority":
		return "priority"
	case "unknown privacy":
		return "privacy"
	case "private frames name a recipient":
		return "to"
	case "body exceeds the 65536 byte limit":
		return "body"
	case "unknown presence state":
		return "state"
	case "too many roles":
		return "profile.roles"
	case "seq starts at 1":
		return "seq"
	}
	for _, p := range []struct{ prefix, field string }{
		{"channel ", "channel"}, {"handoff_id ", "handoff_id"}, {"agent_id ", "agent_id"}, {"kind ", "kind"},
		{"bundle_ref ", "bundle_ref"}, {"reason ", "reason"}, {"display_name ", "profile.display_name"},
		{"model ", "profile.model"}, {"role ", "profile.roles"},
	} {
		if strings.HasPrefix(msg, p.prefix) {
			return p.field
		}
	}
	return ""
}

// sweepBusFrames is the sweeper's part for the bus frames: expired publishes and handoffs are
// deleted.
func (s *Server) sweepBusFrames(ctx context.Context, now time.Time) error {
	if err := s.sweepHandoffs(ctx, now); err != nil {
		return err
	}
	for {
		n, err := s.store.ExpirePublishes(ctx, now, sweepBatch)
		if err != nil {
			return err
		}
		s.metrics.sweeps.WithLabelValues("publish").Add(float64(n))
		if n < sweepBatch {
			return nil
		}
	}
}
