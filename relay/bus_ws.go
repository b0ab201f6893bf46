package relay

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/store"
)

// The `/v1/bus` WebSocket (relay.md §2 Bus; hive.md §4): one BusFrameV1 JSON text frame per
// WebSocket message, at most MAX_BUS_FRAME_BYTES (a larger one closes with 1009).
//
// A socket has three goroutines: the reader (the HTTP handler) decodes each client frame
// strictly and answers it; the pump reads the store for the streams the socket follows after
// each commit notification and queues `message.deliver`, `deliver` and `task.event` frames in
// seq order;
// the writer writes the queue. The queue holds Limits.SubscriberQueue frames: a socket whose
// live frames find it full has fallen that far behind and is disconnected (relay.md §3) with an
// `error` frame naming the last seq it got per channel, so it can resume with hello cursors;
// it never holds up a sender or another socket. A hello replay (H4) waits for room instead.
//
// The socket follows the org channels its agents announce and, implicitly, every swarm its
// token is a member of (hello announces channels only; a swarm is followed by membership).

// busPumpPage is how many stream entries one pump read takes.
const busPumpPage = 256

// pageMayContinue reports whether a stream page read with limit and the byte budget maxBytes
// (store.ReadQuery.MaxBytes) may have stopped before the stream's end: it is full, or the entry
// after it may not have fit the budget (no entry's data is larger than a bus frame).
func pageMayContinue(entries []store.StreamEntry, limit, maxBytes int) bool {
	if len(entries) >= limit {
		return true
	}
	if len(entries) == 0 {
		return false
	}
	size := 0
	for _, e := range entries {
		size += store.EntryBytes(e)
	}
	return size+hive.MaxBusFrameBytes > maxBytes
}

// outFrame is one queued frame; stream and seq are set for stream frames, so the writer can
// track the last delivered seq per stream, and close ends the socket after what came before.
type outFrame struct {
	data   []byte
	stream store.StreamKey
	seq    int64
	close  *closeReq
}

type closeReq struct {
	code   websocket.StatusCode
	reason string
}

// busSocket is one open `/v1/bus` WebSocket.
type busSocket struct {
	s      *Server
	p      *Principal
	conn   *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	out    chan outFrame
	wake   chan struct{}
	// queued is the bytes of the frames in out, bounded by Limits.SubscriberQueueBytes as
	// out is by Limits.SubscriberQueue (relay.md §3); room is signalled when the writer takes
	// a frame, for enqueue waiting on the byte bound.
	queued atomic.Int64
	room   chan struct{}

	// Pipelining (a store.MessageQueuer store): the reader queues each `message` in order and
	// goes on reading; answers carries its answer, and every reply sent while one is in flight
	// (pending > 0), to the answerer goroutine, which sends them in the order the frames came.
	// Its capacity (maxInFlight) bounds the messages one socket has in flight.
	answers chan answer
	pending atomic.Int32

	// mu guards the hello state; the reader holds it to change it, the pump to read streams.
	mu      sync.Mutex
	helloed bool
	agents  map[string]hive.BusAgentV1
	pairs   []announcement
	follows map[store.StreamKey]*follow

	dirtyMu sync.Mutex
	dirty   map[store.StreamKey]struct{}

	sentMu    sync.Mutex
	sent      map[string]struct{} // client_msg_ids sent on this socket (S10)
	sentOrder []string
	sentBytes int // the index's cost (sentCost), within maxSentBytes

	delMu     sync.Mutex
	delivered map[store.StreamKey]int64 // last seq written per stream

	cutOnce sync.Once

	// presMu guards presence: the last presence_update this socket sent per announced agent
	// and vault, for the snapshot of sockets that follow the vault later (bus_presence.go).
	// Lock order: mu, then presMu (of any socket).
	presMu   sync.Mutex
	presence map[presenceKey][]byte
}

type follow struct {
	cursor  int64
	channel string           // "" for a swarm
	src     *streamFollowers // the stream's shared tail
}

// handleBusSocket serves GET /v1/bus.
func (s *Server) handleBusSocket(w http.ResponseWriter, r *http.Request, p *Principal) {
	if e := checkUpgrade(w, r); e != nil {
		writeBusError(w, busFromRelay(e))
		return
	}
	if ok, e := s.openStream(); !ok {
		be := newBusError(hive.HiveErrorCodeRateLimited, "", "", e.Message)
		limit := uint64(s.limits.MaxStreams)
		be.Detail.Limit = &limit
		writeBusError(w, be)
		return
	}
	defer s.closeStream()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // a socket is long-lived; it bounds its own writes
	_ = rc.SetWriteDeadline(time.Time{})
	// The Origin rule ran in the screen (guard.go): loopback origins of any port, the relay's
	// own and the listed ones, which the library's same-host check cannot express.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered the handshake failure
	}
	conn.SetReadLimit(hive.MaxBusFrameBytes)
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	sock := &busSocket{
		s: s, p: p, conn: conn, ctx: ctx, cancel: cancel,
		out:       make(chan outFrame, s.limits.SubscriberQueue),
		wake:      make(chan struct{}, 1),
		room:      make(chan struct{}, 1),
		answers:   make(chan answer, maxInFlight),
		agents:    map[string]hive.BusAgentV1{},
		follows:   map[store.StreamKey]*follow{},
		dirty:     map[store.StreamKey]struct{}{},
		sent:      map[string]struct{}{},
		delivered: map[store.StreamKey]int64{},
	}
	// Ending the socket's context closes the connection, which ends a read or write in
	// progress: reads and writes then need no context each (one per frame cost a timer and
	// an AfterFunc registration per message).
	stopClosing := context.AfterFunc(ctx, func() { _ = conn.CloseNow() })
	defer stopClosing()
	if !s.bus.addSocket(sock) {
		_ = conn.Close(websocket.StatusGoingAway, "server shutting down")
		cancel()
		return
	}
	s.metrics.busSockets.Inc()
	g := s.holdGrant(p, RightBusRelay)
	defer s.dropGrant(g)
	if g != nil {
		go sock.revokeOn(g)
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		sock.writer()
	}()
	go sock.pump()
	go sock.answerer()
	if s.cfg.BusPingInterval > 0 {
		go sock.keepalive()
	}

	closing := sock.readLoop()
	if closing {
		// A protocol violation queued `error` and a close: let the writer send them.
		select {
		case <-writerDone:
		case <-time.After(s.cfg.WriteTimeout + 5*time.Second):
		}
	}
	cancel()
	<-writerDone
	_ = conn.CloseNow()
	sock.teardown()
	s.metrics.busSockets.Dec()
}

// revokeOn closes the socket with 1008 and the reason when its grant is revoked (revoke.go):
// the close goes after the frames already queued, or at once when the queue is full.
func (sock *busSocket) revokeOn(g *grant) {
	select {
	case <-sock.ctx.Done():
		return
	case <-g.end:
	}
	sock.s.log.LogAttrs(sock.ctx, slog.LevelInfo, "bus socket revoked", slog.String("instance", sock.p.InstanceID), slog.String("reason", g.reason))
	select {
	case sock.out <- outFrame{close: &closeReq{websocket.StatusPolicyViolation, g.reason}}:
	default:
		_ = sock.conn.Close(websocket.StatusPolicyViolation, g.reason)
		sock.cancel()
	}
}

// teardown unfollows every stream, withdraws the socket's announcements and announces its
// agents offline (bus_presence.go).
func (sock *busSocket) teardown() {
	s := sock.s
	sock.mu.Lock()
	defer sock.mu.Unlock()
	for k := range sock.follows {
		s.bus.unfollow(k, sock)
	}
	sock.follows = map[store.StreamKey]*follow{}
	// The withdrawn pairs were last seen now; a store closed meanwhile (shutdown) loses only
	// that refresh.
	if err := s.announce(sock.ctx, sock.p, sock.pairs, nil, true); err != nil && !errors.Is(err, store.ErrClosed) {
		s.log.LogAttrs(sock.ctx, slog.LevelWarn, "bus announcements not recorded", slog.String("error", err.Error()))
	}
	sock.pairs = nil
	sock.presenceGone(sock.agents)
	s.bus.removeSocket(sock)
}

// keepalive pings the socket every Config.BusPingInterval (the read loop, which always runs,
// takes the pongs) and closes it when a pong does not come within Config.BusPingTimeout: the
// peer is gone or has stopped reading, and its socket would otherwise hold its follows and
// announcements open forever. The close is immediate (no close handshake with a peer that does
// not answer); the read loop then ends and the socket is torn down as usual.
func (sock *busSocket) keepalive() {
	s := sock.s
	t := time.NewTicker(s.cfg.BusPingInterval)
	defer t.Stop()
	for {
		select {
		case <-sock.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(sock.ctx, s.cfg.BusPingTimeout)
		err := sock.conn.Ping(ctx)
		cancel()
		if err == nil {
			continue
		}
		if sock.ctx.Err() == nil {
			s.log.LogAttrs(sock.ctx, slog.LevelInfo, "bus socket did not answer a ping; closing",
				slog.String("instance", sock.p.InstanceID), slog.String("error", err.Error()))
			sock.cancel()
			_ = sock.conn.CloseNow()
		}
		return
	}
}

// readLoop reads and answers client frames until the socket ends. It returns true when it
// queued a closing `error` (a protocol violation).
func (sock *busSocket) readLoop() bool {
	for {
		typ, data, err := sock.conn.Read(context.Background()) // sock.ctx closes the connection
		if err != nil {
			return false
		}
		if typ != websocket.MessageText {
			sock.enqueue(outFrame{close: &closeReq{websocket.StatusUnsupportedData, "bus frames are JSON text frames"}})
			return true
		}
		if sock.handle(data) {
			return true
		}
	}
}

// maxInFlight bounds the messages one bus socket has in flight (sent, not yet answered); past
// it the reader waits, and TCP flow control slows the sender.
const maxInFlight = 64

// answer is one reply in the answerer's order: a frame to send as is, or the answer of a
// queued message, known once it is stored.
type answer struct {
	frame outFrame
	wait  func() []outFrame
}

// answerer sends the replies queued behind an in-flight message, in order (pipelining).
func (sock *busSocket) answerer() {
	for {
		select {
		case <-sock.ctx.Done():
			return
		case a := <-sock.answers:
			if a.wait == nil {
				sock.enqueueNow(a.frame)
			} else {
				for _, f := range a.wait() {
					sock.enqueueNow(f)
				}
			}
			sock.pending.Add(-1)
		}
	}
}

// queueMessage stores a checked message through the pipelining store: the write is queued
// now, in frame order (so a channel's seqs follow the frames), and its answer — message.stored
// or an error frame — goes out in order when it is durable. The reader waits only when
// maxInFlight messages are in flight.
func (sock *busSocket) queueMessage(q store.MessageQueuer, cmid *string, w store.MessageWrite) bool {
	s := sock.s
	wait := q.QueueMessage(context.WithoutCancel(sock.ctx), w)
	ans := answer{wait: func() []outFrame {
		stored, replayed, err := wait()
		rec, be := s.storedAnswer(sock.ctx, stored, replayed, err)
		var data []byte
		if be != nil {
			data, err = (hive.FrameError{ClientMsgID: cmid, Error: be.Detail}).MarshalJSON()
		} else {
			data, err = (hive.FrameMessageStored{Stored: rec}).MarshalJSON()
		}
		if err != nil {
			return nil
		}
		return []outFrame{{data: data}}
	}}
	sock.pending.Add(1)
	select {
	case sock.answers <- ans:
		return true
	case <-sock.ctx.Done():
		return false
	}
}

// enqueue queues a reply: behind the in-flight messages' answers when there are any
// (pipelining keeps replies in frame order), else at once (enqueueNow).
func (sock *busSocket) enqueue(f outFrame) bool {
	if sock.pending.Load() > 0 {
		sock.pending.Add(1)
		select {
		case sock.answers <- answer{frame: f}:
			return true
		case <-sock.ctx.Done():
			return false
		}
	}
	return sock.enqueueNow(f)
}

// enqueueNow queues a frame, waiting for room by count and by bytes (replies and hello
// replays: the reader waits, so a client cannot queue more than the bounds); false when the
// socket ended meanwhile. A frame larger than the byte bound goes alone.
func (sock *busSocket) enqueueNow(f outFrame) bool {
	n := int64(len(f.data))
	for {
		q := sock.queued.Load()
		if q == 0 || q+n <= sock.s.limits.SubscriberQueueBytes {
			if sock.queued.CompareAndSwap(q, q+n) {
				break
			}
			continue
		}
		select {
		case <-sock.room:
		case <-sock.ctx.Done():
			return false
		}
	}
	select {
	case sock.out <- f:
		return true
	case <-sock.ctx.Done():
		sock.queued.Add(-n)
		return false
	}
}

// offer queues a frame without waiting (deliveries, message.status from other goroutines); a
// socket whose queue is full, by count or by bytes, is disconnected as a slow consumer.
func (sock *busSocket) offer(f outFrame) bool {
	n := int64(len(f.data))
	if q := sock.queued.Add(n); q > sock.s.limits.SubscriberQueueBytes && q != n {
		sock.queued.Add(-n)
		sock.cut()
		return false
	}
	select {
	case sock.out <- f:
		return true
	default:
		sock.queued.Add(-n)
		sock.cut()
		return false
	}
}

// sendError queues an `error` frame (hive.md §4.2).
func (sock *busSocket) sendError(cmid *string, e *BusError) {
	f := hive.FrameError{ClientMsgID: cmid, Error: e.Detail}
	if data, err := f.MarshalJSON(); err == nil {
		sock.enqueue(outFrame{data: data})
	}
}

// violation queues `error` then a close with 1008 (H1, H3).
func (sock *busSocket) violation(e *BusError) bool {
	sock.sendError(nil, e)
	sock.enqueue(outFrame{close: &closeReq{websocket.StatusPolicyViolation, e.Detail.Message}})
	return true
}

// push queues a frame from another goroutine (message.status); a full queue disconnects the
// socket as a slow consumer.
func (sock *busSocket) push(data []byte) {
	sock.offer(outFrame{data: data})
}

// peekMember returns a string member of a JSON object text, if any (the tag of a frame that did
// not decode, or the client_msg_id of a refused message).
func peekMember(data []byte, name string) (string, bool) {
	v, err := jsonvalue.Parse(data, "frame")
	if err != nil {
		return "", false
	}
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return "", false
	}
	m, _ := obj.Get(name)
	str, ok := m.(string)
	return str, ok
}

// handle answers one client frame; it returns true after a protocol violation (the socket is
// closing).
func (sock *busSocket) handle(data []byte) bool {
	s := sock.s
	f, err := hive.DecodeBusFrame(data, hive.AtService)
	sock.mu.Lock()
	helloed := sock.helloed
	sock.mu.Unlock()
	if !helloed {
		// H1: hello first.
		isHello := err == nil && f.Tag() == hive.TagHello
		if err != nil {
			tag, _ := peekMember(data, "t")
			isHello = tag == hive.TagHello
		}
		if !isHello {
			return sock.violation(newBusError(hive.HiveErrorCodeInvalidRequest, "t", hive.ReasonHelloRequired, MsgHelloRequired))
		}
		if err != nil {
			return sock.violation(validationError(err))
		}
	}
	if err != nil {
		var cmid, hid *string
		switch tag, _ := peekMember(data, "t"); tag {
		case hive.TagMessage, hive.TagPublish:
			if id, ok := peekMember(data, "client_msg_id"); ok {
				cmid = &id
			}
		case hive.TagHandoffOffer, hive.TagHandoffAck, hive.TagHandoffReject:
			if id, ok := peekMember(data, "handoff_id"); ok {
				hid = &id
			}
		}
		sock.sendFrameError(cmid, hid, validationError(err)) // S1; unknown and wrong-direction tags keep the socket open
		return false
	}
	switch f := f.(type) {
	case hive.FrameHello:
		return sock.hello(&f, !helloed)
	case hive.FrameMessage:
		m := f.Message
		cmid := &m.ClientMsgID
		if err := m.Validate(); err != nil {
			sock.sendError(cmid, validationError(err))
			return false
		}
		if !sock.announces(m.From, "") {
			sock.sendError(cmid, newBusError(hive.HiveErrorCodeInvalidRequest, "from", hive.ReasonUnannouncedAgent, "from"+MsgUnannouncedAgent))
			return false
		}
		if q, ok := s.store.(store.MessageQueuer); ok {
			prep, be := s.prepareMessage(sock.ctx, sock.p, &m, sock)
			switch {
			case be != nil:
				sock.sendError(cmid, be)
			case prep.replay != nil:
				if data, err := (hive.FrameMessageStored{Stored: *prep.replay}).MarshalJSON(); err == nil {
					sock.enqueue(outFrame{data: data})
				}
			default:
				sock.queueMessage(q, cmid, prep.write)
			}
			return false
		}
		rec, be := s.sendMessage(sock.ctx, sock.p, &m, sock)
		if be != nil {
			sock.sendError(cmid, be)
			return false
		}
		if data, err := (hive.FrameMessageStored{Stored: rec}).MarshalJSON(); err == nil {
			sock.enqueue(outFrame{data: data})
		}
	case hive.FrameMessageReceipt:
		r := f.Receipt
		if err := r.Validate(); err != nil {
			sock.sendError(nil, validationError(err))
			return false
		}
		if !sock.announces(r.By, "") {
			sock.sendError(nil, newBusError(hive.HiveErrorCodeInvalidRequest, "by", hive.ReasonUnannouncedAgent, "by"+MsgUnannouncedAgent))
			return false
		}
		if be := s.receipt(sock.ctx, sock.p, &r, sock); be != nil {
			sock.sendError(nil, be)
		}
	case hive.FrameAck:
		sock.ackFrame(&f)
	case hive.FramePublish:
		sock.publishFrame(&f)
	case hive.FramePresence:
		sock.presenceFrame(&f)
	case hive.FrameHandoffOffer:
		sock.handoffOffer(&f)
	case hive.FrameHandoffAck:
		sock.handoffReply(f.HandoffID, f.By, store.HandoffAcked, f)
	case hive.FrameHandoffReject:
		sock.handoffReply(f.HandoffID, f.By, store.HandoffRejected, f)
	default:
		sock.sendError(nil, newBusError(hive.HiveErrorCodeInvalidRequest, "t", "", f.Tag()+MsgFrameNotRelayed))
	}
	return false
}

// announces reports whether an agent announced by this socket's hello is agent, following
// channel (any channel when channel is "").
func (sock *busSocket) announces(agent, channel string) bool {
	sock.mu.Lock()
	defer sock.mu.Unlock()
	a, ok := sock.agents[agent]
	if !ok {
		return false
	}
	if channel == "" {
		return true
	}
	for _, c := range a.Channels {
		if c == channel {
			return true
		}
	}
	return false
}

// hello applies a hello frame (§4.4 checks, H2–H4).
func (sock *busSocket) hello(f *hive.FrameHello, first bool) bool {
	s := sock.s
	if err := f.Validate(); err != nil {
		if first {
			return sock.violation(validationError(err))
		}
		sock.sendError(nil, validationError(err))
		return false
	}
	if f.InstanceID != sock.p.InstanceID { // H3
		return sock.violation(newBusError(hive.HiveErrorCodeUnauthorized, "instance_id", hive.ReasonInstanceMismatch, MsgInstanceMismatch))
	}
	agents := map[string]hive.BusAgentV1{}
	var pairs []announcement
	want := map[store.StreamKey]string{}
	for _, a := range f.Agents {
		agents[a.AgentID] = a
		for _, ch := range a.Channels {
			pairs = append(pairs, announcement{a.AgentID, ch})
			want[store.OrgStream(sock.p.Org, ch)] = ch
		}
	}
	for _, sw := range sock.p.Swarms {
		want[store.SwarmStream(sw.SwarmID)] = ""
	}
	cursors := map[string]int64{}
	for _, c := range f.Cursors {
		cursors[c.Channel] = int64(c.Seq)
	}

	sock.mu.Lock()
	defer sock.mu.Unlock()
	// H2: the new set replaces the old one.
	for k := range sock.follows {
		if _, ok := want[k]; !ok {
			s.bus.unfollow(k, sock)
			delete(sock.follows, k)
		}
	}
	// The live state changes at once; the store records the pairs (S7 after a restart). A
	// store failure is reported on the socket, and the hello still applies.
	if err := s.announce(sock.ctx, sock.p, sock.pairs, pairs, false); err != nil {
		sock.sendError(nil, s.busStoreErr(sock.ctx, "record announcements", err))
	}
	gone := sock.agents
	sock.agents, sock.pairs = agents, pairs
	sock.presenceGone(gone)
	sock.prunePresence(agents)
	if !sock.helloed {
		sock.helloed = true
		s.bus.register(sock)
	}
	// Newly followed streams start at their head; a cursor replays up to 500 visible entries
	// after it first (H4). Follow before reading the head, so no commit falls between.
	keys := make([]store.StreamKey, 0, len(want))
	for k := range want {
		if _, ok := sock.follows[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
	for _, k := range keys {
		src := s.bus.follow(s.store, k, sock)
		head, err := s.store.StreamLastSeq(sock.ctx, k)
		if err != nil {
			s.bus.unfollow(k, sock)
			sock.sendError(nil, s.busStoreErr(sock.ctx, "stream head", err))
			continue
		}
		fl := &follow{cursor: head, channel: want[k], src: src}
		if c, ok := cursors[fl.channel]; ok && fl.channel != "" && c < head {
			// Up to MaxBusReplay entries, read in pages within MaxReadBytes.
			for replayed, after := 0, c; replayed < hive.MaxBusReplay; {
				limit := hive.MaxBusReplay - replayed
				entries, err := s.store.ReadStream(sock.ctx, k, store.ReadQuery{After: after, Limit: limit, Viewer: sock.viewerOn(fl.channel), MaxBytes: s.limits.MaxReadBytes})
				if err != nil {
					sock.sendError(nil, s.busStoreErr(sock.ctx, "replay", err))
					break
				}
				for _, e := range entries {
					after, replayed = e.Seq, replayed+1
					data, err := sock.render(e)
					if err != nil {
						continue
					}
					if !sock.enqueue(outFrame{data: data, stream: k, seq: e.Seq}) {
						return false
					}
					fl.cursor = max(fl.cursor, e.Seq)
				}
				if !pageMayContinue(entries, limit, s.limits.MaxReadBytes) {
					break
				}
			}
		}
		sock.follows[k] = fl
	}
	sock.markDirty(store.StreamKey{}) // catch up with anything committed during the replay
	sock.handoffsOnHello()            // redeliver the pending offers to the announced agents
	var vaults []string
	for _, k := range keys {
		if k.Network == store.NetworkOrg {
			vaults = append(vaults, k.Name)
		}
	}
	sock.presenceSnapshot(vaultsOf(vaults)) // who is in the vaults it now follows
	return false
}

func (sock *busSocket) viewer() *store.Viewer {
	return &store.Viewer{Org: sock.p.Org, Instance: sock.p.InstanceID}
}

// render encodes one stream entry as this socket's viewer sees it. A message's frame depends on
// the viewer only through `mine`, so both encodings are kept with its cached template.
func (sock *busSocket) render(e store.StreamEntry) ([]byte, error) {
	if e.Publish != nil {
		return deliverData(e.Publish)
	}
	if e.Message == nil {
		f, err := sock.s.entryFrame(e, sock.p)
		if err != nil {
			return nil, err
		}
		return f.MarshalJSON()
	}
	c, err := sock.s.template(*e.Message)
	if err != nil {
		return nil, err
	}
	d, err := sock.s.delivery(*e.Message, sock.p)
	if err != nil {
		return nil, err
	}
	mine := 0
	if a, ok := d.From.(hive.SenderAgent); ok && a.Mine {
		mine = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frames[mine] == nil {
		data, err := (hive.FrameMessageDeliver{Delivery: d}).MarshalJSON()
		if err != nil {
			return nil, err
		}
		c.frames[mine] = data
	}
	return c.frames[mine], nil
}

// ackFrame applies `ack` (hive.md §4.6, H6).
func (sock *busSocket) ackFrame(f *hive.FrameAck) {
	if err := f.Validate(); err != nil {
		e := validationError(err)
		if strings.HasPrefix(err.Error(), "channel ") {
			field := "channel" // a frame's own channel (§5.4)
			e.Detail.Field = &field
		} else if err.Error() == "seq starts at 1" {
			field := "seq"
			e.Detail.Field = &field
		}
		sock.sendError(nil, e)
		return
	}
	k := store.OrgStream(sock.p.Org, f.Channel)
	sock.mu.Lock()
	_, following := sock.follows[k]
	sock.mu.Unlock()
	if !following {
		sock.sendError(nil, newBusError(hive.HiveErrorCodeInvalidRequest, "channel", "", MsgChannelNotFollowed))
		return
	}
	last, err := sock.s.store.StreamLastSeq(sock.ctx, k)
	if err != nil {
		sock.sendError(nil, sock.s.busStoreErr(sock.ctx, "stream head", err))
		return
	}
	if int64(f.Seq) > last {
		sock.sendError(nil, newBusError(hive.HiveErrorCodeInvalidRequest, "seq", "", MsgAckBeyondLast))
		return
	}
	// Durable before the next frame is read: the position survives a restart (poll).
	if _, err := sock.s.store.SetAck(context.WithoutCancel(sock.ctx), sock.p.Org, sock.p.InstanceID, k, int64(f.Seq)); err != nil {
		if errors.Is(err, store.ErrInvalid) { // beyond the last seq, as checked above
			sock.sendError(nil, newBusError(hive.HiveErrorCodeInvalidRequest, "seq", "", MsgAckBeyondLast))
			return
		}
		sock.sendError(nil, sock.s.busStoreErr(sock.ctx, "record ack", err))
	}
}

// markSent records a client_msg_id this socket sends, before it is stored, so the pump never
// delivers it back (S10).
func (sock *busSocket) markSent(cmid string) {
	sock.sentMu.Lock()
	defer sock.sentMu.Unlock()
	if _, ok := sock.sent[cmid]; ok {
		return
	}
	sock.sent[cmid] = struct{}{}
	sock.sentOrder = append(sock.sentOrder, cmid)
	sock.sentBytes += sentCost(cmid)
	for len(sock.sentOrder) > 1 && (len(sock.sentOrder) > maxSentIndex || sock.sentBytes > maxSentBytes) {
		old := sock.sentOrder[0]
		delete(sock.sent, old)
		sock.sentBytes -= sentCost(old)
		sock.sentOrder[0] = ""
		sock.sentOrder = sock.sentOrder[1:]
	}
}

func (sock *busSocket) ownSend(m *store.StoredMessage) bool {
	if m.SenderOrg != sock.p.Org || m.SenderInstance != sock.p.InstanceID {
		return false
	}
	sock.sentMu.Lock()
	defer sock.sentMu.Unlock()
	_, ok := sock.sent[m.ClientMsgID]
	return ok
}

// markDirty records that stream k has new commits and wakes the pump (the zero key wakes it
// to look at every followed stream).
func (sock *busSocket) markDirty(k store.StreamKey) {
	sock.dirtyMu.Lock()
	sock.dirty[k] = struct{}{}
	sock.dirtyMu.Unlock()
	select {
	case sock.wake <- struct{}{}:
	default:
	}
}

// pump reads the followed streams after each wake-up and queues their frames.
func (sock *busSocket) pump() {
	for {
		select {
		case <-sock.ctx.Done():
			return
		case <-sock.wake:
		}
		sock.dirtyMu.Lock()
		dirty := sock.dirty
		sock.dirty = map[store.StreamKey]struct{}{}
		sock.dirtyMu.Unlock()
		if !sock.pumpStreams(dirty) {
			return
		}
	}
}

func (sock *busSocket) pumpStreams(dirty map[store.StreamKey]struct{}) bool {
	s := sock.s
	sock.mu.Lock()
	defer sock.mu.Unlock()
	_, all := dirty[store.StreamKey{}]
	for k, fl := range sock.follows {
		if _, ok := dirty[k]; !ok && !all {
			continue
		}
		for {
			entries, fromTail := fl.src.since(fl.cursor)
			if !fromTail {
				var err error
				entries, err = s.store.ReadStream(sock.ctx, k, store.ReadQuery{After: fl.cursor, Limit: busPumpPage, Viewer: sock.viewerOn(fl.channel), MaxBytes: s.limits.MaxReadBytes})
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						s.log.LogAttrs(sock.ctx, slog.LevelWarn, "bus stream read failed", slog.String("error", err.Error()))
					}
					return false
				}
			}
			for _, e := range entries {
				if sock.hidden(e) { // S10, S20 (the tail holds every viewer's entries)
					fl.cursor = e.Seq
					continue
				}
				data, err := sock.render(e)
				if err != nil {
					s.log.LogAttrs(sock.ctx, slog.LevelError, "bus entry not renderable", slog.String("error", err.Error()))
					fl.cursor = e.Seq
					continue
				}
				if !sock.offer(outFrame{data: data, stream: k, seq: e.Seq}) {
					return false
				}
				fl.cursor = e.Seq
			}
			if fromTail || !pageMayContinue(entries, busPumpPage, s.limits.MaxReadBytes) {
				break
			}
		}
	}
	return true
}

// cut disconnects a socket whose queue is full (relay.md §3): the queued frames are dropped
// and an `error` frame (rate_limited, limit = the queue) names the last seq written per
// channel, then the socket closes with 1008.
func (sock *busSocket) cut() {
	sock.cutOnce.Do(func() {
		s := sock.s
		s.metrics.slowDisconnects.Inc()
		for {
			select {
			case <-sock.out:
				continue
			default:
			}
			break
		}
		sock.delMu.Lock()
		parts := make([]string, 0, len(sock.delivered))
		for k, seq := range sock.delivered {
			parts = append(parts, k.Name+"="+strconv.FormatInt(seq, 10))
		}
		sock.delMu.Unlock()
		sort.Strings(parts)
		msg := "The socket fell more than " + strconv.Itoa(s.limits.SubscriberQueue) +
			" frames (or " + strconv.FormatInt(s.limits.SubscriberQueueBytes, 10) + " bytes) behind; last delivered seq per channel: " + strings.Join(parts, ", ") + ". Reconnect with these hello cursors."
		limit := uint64(s.limits.SubscriberQueue)
		e := newBusError(hive.HiveErrorCodeRateLimited, "", "", msg)
		e.Detail.Limit = &limit
		s.log.LogAttrs(sock.ctx, slog.LevelWarn, "slow bus socket disconnected", slog.String("instance", sock.p.InstanceID),
			slog.String("delivered", strings.Join(parts, ", ")))
		if data, err := (hive.FrameError{Error: e.Detail}).MarshalJSON(); err == nil {
			select {
			case sock.out <- outFrame{data: data}:
			default:
			}
		}
		select {
		case sock.out <- outFrame{close: &closeReq{websocket.StatusPolicyViolation, "slow consumer"}}:
		default:
			sock.cancel()
		}
	})
}

// writer writes queued frames, each within the write timeout, and ends the socket on a close
// request, a failed write or shutdown.
func (sock *busSocket) writer() {
	s := sock.s
	// A write that takes longer than WriteTimeout ends the socket (its context closes the
	// connection, which ends the write); one timer, re-armed for each frame.
	timedOut := time.AfterFunc(time.Hour, sock.cancel)
	timedOut.Stop()
	defer timedOut.Stop()
	for {
		select {
		case <-sock.ctx.Done():
			return
		case <-s.shutdown:
			_ = sock.conn.Close(websocket.StatusGoingAway, "server shutting down")
			sock.cancel()
			return
		case f := <-sock.out:
			sock.queued.Add(-int64(len(f.data)))
			select {
			case sock.room <- struct{}{}:
			default:
			}
			if f.close != nil {
				_ = sock.conn.Close(f.close.code, f.close.reason)
				sock.cancel()
				return
			}
			timedOut.Reset(s.cfg.WriteTimeout)
			err := sock.conn.Write(context.Background(), websocket.MessageText, f.data)
			if !timedOut.Stop() && err == nil {
				err = context.DeadlineExceeded // the timer fired: the socket is ending
			}
			if err != nil {
				sock.cancel()
				return
			}
			if f.stream != (store.StreamKey{}) {
				sock.delMu.Lock()
				sock.delivered[f.stream] = f.seq
				sock.delMu.Unlock()
			}
		}
	}
}
