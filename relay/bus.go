package relay

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/store"
)

// Bus lane (relay.md §2 Bus; hive.md §4 and §8 S1–S21): hive messages over HTTP and the
// `/v1/bus` WebSocket, on the store's bus streams.
//
// What lives where. The store assigns `gid`, the gap-free per-stream `seq` and task numbers,
// keeps `client_msg_id` idempotent (S9), filters what each instance may see (S20) and expires
// messages (S11). The relay validates (S1), scopes every network to the token (S2: an org's
// channels are keyed by the token's org, a swarm is reachable only by its members from the auth
// file's `swarms`), binds recipients (S7), stamps `server_time`, deadlines (S12) and
// `expires_at`, and renders deliveries per viewer (S4–S6: thread, trust, sender, `mine`). Its
// in-memory state is only what a bus needs to be live: the announcements of `hello` (S7's
// "announced `to` in the vault within 24 hours"), the open sockets and which streams they
// follow. A socket follows a stream by reading the store after each commit notification of
// that stream, so delivery order is the store's seq order and visibility is the store's filter.

// annEntry is one (instance, agent, channel) announcement: how many open sockets announce it
// now, and when it was last announced or withdrawn.
type annEntry struct {
	live int
	last time.Time
}

type agentKey struct{ org, instance, agent string }

type vaultKey struct{ org, vault, agent string }

type instKey struct{ org, instance string }

// busLane is the bus's in-process state.
type busLane struct {
	mu sync.Mutex
	// agents: per announcing instance and agent, the channels announced.
	agents map[agentKey]map[string]*annEntry
	// byVault indexes agents by (org, vault_id, agent_id) → announcing instances.
	byVault map[vaultKey]map[string]struct{}
	// sockets: the open sockets that said hello, per instance (message.status goes to them).
	sockets map[instKey]map[*busSocket]struct{}
	// streams: the sockets following each stream, with its store subscription.
	streams map[store.StreamKey]*streamFollowers
	// all: every open socket (closed on shutdown).
	all map[*busSocket]struct{}
	// acks: the last acknowledged seq per instance and channel (hive.md §4.6 `ack`).
	acks map[instChannel]int64

	cache deliveryCache
}

type instChannel struct{ org, instance, channel string }

// maxSentIndex bounds busSocket.sent.
const maxSentIndex = 1 << 16

// announceWindow is how long an announcement binds a `to` after its socket is gone (S7).
const announceWindow = 24 * time.Hour

func newBusLane() *busLane {
	return &busLane{
		agents:  map[agentKey]map[string]*annEntry{},
		byVault: map[vaultKey]map[string]struct{}{},
		sockets: map[instKey]map[*busSocket]struct{}{},
		streams: map[store.StreamKey]*streamFollowers{},
		all:     map[*busSocket]struct{}{},
		acks:    map[instChannel]int64{},
		cache:   deliveryCache{m: map[string]*cachedDelivery{}},
	}
}

// announcement is one (agent, channel) pair of a hello.
type announcement struct{ agent, channel string }

// setAnnouncements replaces what one socket announces (H2): pairs no longer announced lose the
// socket (and are remembered as last seen now), new pairs gain it.
func (l *busLane) setAnnouncements(org, instance string, old, new []announcement, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range old {
		if e := l.agents[agentKey{org, instance, a.agent}][a.channel]; e != nil {
			e.live--
			e.last = now
		}
	}
	for _, a := range new {
		k := agentKey{org, instance, a.agent}
		chans := l.agents[k]
		if chans == nil {
			chans = map[string]*annEntry{}
			l.agents[k] = chans
		}
		e := chans[a.channel]
		if e == nil {
			e = &annEntry{}
			chans[a.channel] = e
		}
		e.live++
		e.last = now
		if _, vault, _, err := hive.ParseChannel(a.channel); err == nil {
			vk := vaultKey{org, vault, a.agent}
			insts := l.byVault[vk]
			if insts == nil {
				insts = map[string]struct{}{}
				l.byVault[vk] = insts
			}
			insts[instance] = struct{}{}
		}
	}
}

func (e *annEntry) fresh(now time.Time) bool {
	return e.live > 0 || now.Sub(e.last) < announceWindow
}

// announcedIn returns the instances of org, other than exclude, that announced agent on a
// channel of vault within the announce window (S7).
func (l *busLane) announcedIn(org, vault, agent, exclude string, now time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for inst := range l.byVault[vaultKey{org, vault, agent}] {
		if inst == exclude {
			continue
		}
		for ch, e := range l.agents[agentKey{org, inst, agent}] {
			if _, v, _, err := hive.ParseChannel(ch); err == nil && v == vault && e.fresh(now) {
				out = append(out, inst)
				break
			}
		}
	}
	return out
}

// announcedOn reports whether instance announced agent on channel within the window ("" channel:
// on any channel).
func (l *busLane) announcedOn(org, instance, agent, channel string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch, e := range l.agents[agentKey{org, instance, agent}] {
		if (channel == "" || ch == channel) && e.fresh(now) {
			return true
		}
	}
	return false
}

// prune forgets announcements past the window with no socket, and their index entries.
func (l *busLane) prune(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, chans := range l.agents {
		for ch, e := range chans {
			if !e.fresh(now) {
				delete(chans, ch)
			}
		}
		if len(chans) == 0 {
			delete(l.agents, k)
		}
	}
	for vk, insts := range l.byVault {
		for inst := range insts {
			if _, ok := l.agents[agentKey{vk.org, inst, vk.agent}]; !ok {
				delete(insts, inst)
			}
		}
		if len(insts) == 0 {
			delete(l.byVault, vk)
		}
	}
}

// register adds a socket that said hello to its instance's set.
func (l *busLane) register(sock *busSocket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := instKey{sock.p.Org, sock.p.InstanceID}
	m := l.sockets[k]
	if m == nil {
		m = map[*busSocket]struct{}{}
		l.sockets[k] = m
	}
	m[sock] = struct{}{}
}

func (l *busLane) addSocket(sock *busSocket) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.all == nil {
		return false // shut down
	}
	l.all[sock] = struct{}{}
	return true
}

// removeSocket forgets a closed socket everywhere.
func (l *busLane) removeSocket(sock *busSocket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.all, sock)
	k := instKey{sock.p.Org, sock.p.InstanceID}
	if m := l.sockets[k]; m != nil {
		delete(m, sock)
		if len(m) == 0 {
			delete(l.sockets, k)
		}
	}
}

// instanceSockets returns the open sockets of an instance.
func (l *busLane) instanceSockets(org, instance string) []*busSocket {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.sockets[instKey{org, instance}]
	out := make([]*busSocket, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	return out
}

// closeAll returns every open socket and refuses new ones (shutdown).
func (l *busLane) closeAll() []*busSocket {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*busSocket, 0, len(l.all))
	for s := range l.all {
		out = append(out, s)
	}
	l.all = nil
	return out
}

func (l *busLane) ack(org, instance, channel string, seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := instChannel{org, instance, channel}
	if seq > l.acks[k] {
		l.acks[k] = seq
	}
}

// streamFollowers are the sockets following one stream, woken by one store subscription. The
// stream's recent entries are read once per commit for all of them (the tail): a socket whose
// cursor lies within the tail takes its entries from there, filtered by what it may see (S20);
// one further behind reads the store itself.
type streamFollowers struct {
	sockets map[*busSocket]struct{}
	stop    chan struct{}

	mu sync.Mutex
	// tail holds every entry with from < seq ≤ last, ascending (the stream's complete recent
	// past, every viewer's entries); ok is false until the first read succeeded.
	tail []store.StreamEntry
	from int64
	last int64
	ok   bool
}

// maxTail bounds streamFollowers.tail.
const maxTail = 4096

// since returns the tail entries after cursor, and whether the tail covers cursor (otherwise
// the caller reads the store).
func (f *streamFollowers) since(cursor int64) ([]store.StreamEntry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ok || cursor < f.from || cursor > f.last {
		return nil, false
	}
	i := sort.Search(len(f.tail), func(i int) bool { return f.tail[i].Seq > cursor })
	return f.tail[i:len(f.tail):len(f.tail)], true
}

// refresh reads the entries committed after the tail's end.
func (f *streamFollowers) refresh(ctx context.Context, st store.BusStore, k store.StreamKey) {
	f.mu.Lock()
	ok, last := f.ok, f.last
	f.mu.Unlock()
	if !ok {
		head, err := st.StreamLastSeq(ctx, k)
		if err != nil {
			return
		}
		f.mu.Lock()
		f.from, f.last, f.ok = head, head, true
		f.mu.Unlock()
		return
	}
	for {
		entries, err := st.ReadStream(ctx, k, store.ReadQuery{After: last, Limit: busPumpPage})
		if err != nil || len(entries) == 0 {
			return
		}
		f.mu.Lock()
		f.tail = append(f.tail, entries...)
		f.last = entries[len(entries)-1].Seq
		if n := len(f.tail) - maxTail; n > 0 {
			f.from = f.tail[n-1].Seq
			f.tail = append([]store.StreamEntry(nil), f.tail[n:]...)
		}
		last = f.last
		f.mu.Unlock()
		if len(entries) < busPumpPage {
			return
		}
	}
}

// follow adds sock to the stream's followers and returns them; the first follower starts the
// stream's store subscription, whose every notification refreshes the tail and then marks the
// stream dirty on each follower.
func (l *busLane) follow(st store.BusStore, k store.StreamKey, sock *busSocket) *streamFollowers {
	l.mu.Lock()
	f := l.streams[k]
	if f == nil {
		notify, cancel := st.SubscribeStream(k)
		f = &streamFollowers{sockets: map[*busSocket]struct{}{}, stop: make(chan struct{})}
		l.streams[k] = f
		ctx, stopCtx := context.WithCancel(context.Background())
		go func() {
			defer cancel()
			defer stopCtx()
			for {
				select {
				case <-f.stop:
					return
				case _, ok := <-notify:
					if !ok {
						return
					}
					f.refresh(ctx, st, k)
					l.mu.Lock()
					for s := range f.sockets {
						s.markDirty(k)
					}
					l.mu.Unlock()
				}
			}
		}()
		// The tail starts at the head read after subscribing: nothing committed later is missed.
		f.refresh(ctx, st, k)
	}
	f.sockets[sock] = struct{}{}
	l.mu.Unlock()
	return f
}

// unfollow removes sock from the stream's followers; the last one stops the subscription.
func (l *busLane) unfollow(k store.StreamKey, sock *busSocket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.streams[k]; f != nil {
		delete(f.sockets, sock)
		if len(f.sockets) == 0 {
			close(f.stop)
			delete(l.streams, k)
		}
	}
}

// deliveryCache keeps recently rendered delivery templates by gid, so a message fanned out to
// many sockets is decoded once.
type deliveryCache struct {
	mu    sync.Mutex
	m     map[string]*cachedDelivery
	order []string
}

type cachedDelivery struct {
	d hive.MessageDeliveryV1

	mu     sync.Mutex
	frames [2][]byte // the message.deliver frame with `mine` false / true
}

const maxDeliveryCache = 8192

func (c *deliveryCache) get(gid string) (*cachedDelivery, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[gid]
	return d, ok
}

func (c *deliveryCache) put(gid string, d *cachedDelivery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[gid]; !ok {
		c.order = append(c.order, gid)
	}
	c.m[gid] = d
	for len(c.order) > maxDeliveryCache {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

// ---------------------------------------------------------------------------------------------
// Errors of the bus lane: the hive error body (hive.md §5; relay.md §2 "for the bus lane the
// body is exactly the hive error body").

// BusError is a refusal of the bus lane (hive.md §5): the HTTP status it travels with and the
// hive error detail, which is the body `{"error":…}` over HTTP and the `error` member of an
// `error` frame on the socket. [Server.SendMessage] and [Server.Receipt] return it.
type BusError struct {
	// Status is the HTTP status (the code's, hive.md §5.2; 413 for an oversized body, 5xx for a
	// store failure).
	Status int
	// Detail is the hive error detail.
	Detail hive.HiveErrorDetailV1
}

// Error returns "<code>: <message>".
func (e *BusError) Error() string { return string(e.Detail.Code) + ": " + e.Detail.Message }

// newBusError builds a refusal; field and reason may be empty.
func newBusError(code hive.HiveErrorCode, field, reason, message string) *BusError {
	d := hive.HiveErrorDetailV1{Code: code, Message: message}
	if field != "" {
		d.Field = &field
	}
	if reason != "" {
		d.Reason = &reason
	}
	return &BusError{Status: code.HTTPStatus(), Detail: d}
}

// validationError is the 400 of a refused decode or Validate (S1, §5.4).
func validationError(err error) *BusError {
	return &BusError{Status: http.StatusBadRequest, Detail: hive.NewValidationFailure(err)}
}

// body renders `{"error":{…}}` and a final LF.
func (e *BusError) body() []byte {
	b, _ := hive.HiveErrorBody{Error: e.Detail}.MarshalJSON()
	return append(b, '\n')
}

func writeBusError(w http.ResponseWriter, e *BusError) {
	h := w.Header()
	h.Set("Content-Type", MediaJSON)
	h.Set("X-Content-Type-Options", "nosniff")
	if e.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="agentwire"`)
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.body())
}

// handleBus registers an authenticated bus route (right bus.relay) whose errors are hive
// bodies: a missing or unknown token is 401 unauthorized, a token without the right 403
// forbidden_right (hive.md §5.2).
func (s *Server) handleBus(mux *http.ServeMux, pattern string, h func(http.ResponseWriter, *http.Request, *Principal)) {
	mux.Handle(pattern, s.instrument(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := LocalPrincipal()
		if s.auth != nil {
			var e *Error
			if p, e = s.auth.authenticate(r); e != nil {
				writeBusError(w, newBusError(hive.HiveErrorCodeUnauthorized, "", "", e.Message))
				return
			}
		}
		if !p.Has(RightBusRelay) {
			writeBusError(w, newBusError(hive.HiveErrorCodeForbiddenRight, "", "", "The token does not grant the right bus.relay."))
			return
		}
		h(w, r, p)
	})))
}

// Auth lookups of the bus lane.

// orgHasInstance reports whether instance is an instance of org: a token of the auth file, or
// the local instance in local mode (S7 `to_instance`).
func (s *Server) orgHasInstance(org, instance string) bool {
	if s.auth == nil {
		return org == LocalOrg && instance == LocalOrg
	}
	for _, t := range s.auth.tokens {
		if t.principal.Org == org && t.principal.InstanceID == instance {
			return true
		}
	}
	return false
}

// swarmMember is one participant of a swarm: its instance and its handle and reputation there.
type swarmMember struct {
	org, instance string
	swarm         Swarm
}

// swarmMembers returns the distinct instances that are members of swarmID whose handle is
// handle (every member when handle is "").
func (s *Server) swarmMembers(swarmID, handle string) []swarmMember {
	if s.auth == nil {
		return nil
	}
	var out []swarmMember
	seen := map[instKey]bool{}
	for _, t := range s.auth.tokens {
		p := t.principal
		for _, sw := range p.Swarms {
			k := instKey{p.Org, p.InstanceID}
			if sw.SwarmID == swarmID && (handle == "" || sw.Handle == handle) && !seen[k] {
				seen[k] = true
				out = append(out, swarmMember{org: p.Org, instance: p.InstanceID, swarm: sw})
			}
		}
	}
	return out
}

// swarm returns the principal's membership of swarmID.
func (p *Principal) swarm(swarmID string) (Swarm, bool) {
	for _, sw := range p.Swarms {
		if sw.SwarmID == swarmID {
			return sw, true
		}
	}
	return Swarm{}, false
}

// scope is what the principal may reach by gid: its org's channels and its swarms.
func (p *Principal) scope() store.MessageScope {
	sc := store.MessageScope{Org: p.Org}
	for _, sw := range p.Swarms {
		sc.Swarms = append(sc.Swarms, sw.SwarmID)
	}
	return sc
}
