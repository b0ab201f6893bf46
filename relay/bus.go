package relay

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/store"
)

// Bus lane (relay.md §2 Bus; hive.md §4 and §8 S1–S21): hive messages over HTTP and the
// `/v1/bus` WebSocket, on the store's bus streams.
//
// What lives where. The store assigns `gid`, the gap-free per-stream `seq` and task numbers,
// keeps `client_msg_id` idempotent (S9, and answers a resend's lookup), filters what each
// instance may see (S20), expires messages (S11), and holds the bus state a restart must not
// lose: hello announcements with the time each pair was last seen (S7's "announced `to` in the
// vault within 24 hours") and each instance's `ack` positions (§4.6, its position for poll).
// The relay validates (S1), scopes every network to the token (S2: an org's channels are keyed
// by the token's org, a swarm is reachable only by its members from the auth file's `swarms`),
// binds recipients (S7), stamps `server_time`, deadlines (S12) and `expires_at`, and renders
// deliveries per viewer (S4–S6: thread, trust, sender, `mine`).
//
// Its in-memory state is only about open sockets: which sockets are open per instance, which
// streams they follow, and the pairs they announce right now (live). A hello records its pairs
// in the store as it is applied, a withdrawal records them again as last seen then (marked
// dropped when a replacing hello no longer announces them, H2; not when the socket closed),
// and the sweeper records the live pairs every
// Config.SweepInterval, so the store's last-seen times are at most one sweep behind. Binding
// decisions and receipts ask the store (pairs seen within 24 hours) together with the live
// pairs, so they are exact while the relay runs and the same after a restart. A socket follows
// a stream by reading the store after each commit notification of that stream, so delivery
// order is the store's seq order and visibility is the store's filter.

type vaultKey struct{ org, vault, agent string }

type instKey struct{ org, instance string }

// busLane is the bus's in-process state.
type busLane struct {
	mu sync.Mutex
	// live: per instance, the (agent, channel) pairs its open sockets announce, each with the
	// number of sockets announcing it.
	live map[instKey]map[announcement]int
	// liveByVault indexes live by (org, vault_id, agent_id) → instance → live pairs.
	liveByVault map[vaultKey]map[string]int
	// sockets: the open sockets that said hello, per instance (message.status goes to them).
	sockets map[instKey]map[*busSocket]struct{}
	// streams: the sockets following each stream, with its store subscription.
	streams map[store.StreamKey]*streamFollowers
	// all: every open socket (closed on shutdown).
	all map[*busSocket]struct{}

	cache deliveryCache
	// tailBytes is the cost of every stream's tail (streamFollowers.bytes), within maxTailTotal.
	tailBytes atomic.Int64
	// readBytes is Limits.MaxReadBytes.
	readBytes int
}

// maxSentIndex and maxSentBytes bound busSocket.sent, the client_msg_ids a socket sent that
// its pump must not deliver back (S10): the oldest go first. An id is needed only until the
// pump has passed its message, milliseconds after it is stored; 1 MiB holds at least 3,300 ids
// of the 256-byte maximum, far more than a sender's pipelining window.
const (
	maxSentIndex = 1 << 16
	maxSentBytes = 1 << 20
)

// sentCost is what one id costs busSocket.sent: its bytes, the map entry and its order slot.
func sentCost(cmid string) int { return len(cmid) + 64 }

// announceWindow is how long an announcement binds a `to` after it was last seen (S7).
const announceWindow = 24 * time.Hour

func newBusLane() *busLane {
	return &busLane{
		live:        map[instKey]map[announcement]int{},
		liveByVault: map[vaultKey]map[string]int{},
		sockets:     map[instKey]map[*busSocket]struct{}{},
		streams:     map[store.StreamKey]*streamFollowers{},
		all:         map[*busSocket]struct{}{},
		cache:       deliveryCache{m: map[string]*cachedDelivery{}},
	}
}

// announcement is one (agent, channel) pair of a hello.
type announcement struct{ agent, channel string }

// vaultOf returns the vault_id of a validated channel.
func vaultOf(channel string) string {
	_, vault, _, _ := hive.ParseChannel(channel)
	return vault
}

// setLive replaces what one socket announces in the live state (H2): pairs no longer announced
// lose the socket, new pairs gain it.
func (l *busLane) setLive(org, instance string, old, new []announcement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ik := instKey{org, instance}
	pairs := l.live[ik]
	if pairs == nil {
		pairs = map[announcement]int{}
		l.live[ik] = pairs
	}
	for _, a := range old {
		if pairs[a] == 0 {
			continue
		}
		pairs[a]--
		if pairs[a] > 0 {
			continue
		}
		delete(pairs, a)
		vk := vaultKey{org, vaultOf(a.channel), a.agent}
		insts := l.liveByVault[vk]
		insts[instance]--
		if insts[instance] == 0 {
			delete(insts, instance)
			if len(insts) == 0 {
				delete(l.liveByVault, vk)
			}
		}
	}
	for _, a := range new {
		pairs[a]++
		if pairs[a] == 1 {
			vk := vaultKey{org, vaultOf(a.channel), a.agent}
			insts := l.liveByVault[vk]
			if insts == nil {
				insts = map[string]int{}
				l.liveByVault[vk] = insts
			}
			insts[instance]++
		}
	}
	if len(pairs) == 0 {
		delete(l.live, ik)
	}
}

// liveIn returns the instances of org whose open sockets announce agent on a channel of vault.
func (l *busLane) liveIn(org, vault, agent string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.liveByVault[vaultKey{org, vault, agent}]))
	for inst := range l.liveByVault[vaultKey{org, vault, agent}] {
		out = append(out, inst)
	}
	return out
}

// livePairs returns the pairs the open sockets of instance announce.
func (l *busLane) livePairs(org, instance string) []announcement {
	l.mu.Lock()
	defer l.mu.Unlock()
	pairs := l.live[instKey{org, instance}]
	out := make([]announcement, 0, len(pairs))
	for a := range pairs {
		out = append(out, a)
	}
	return out
}

// allLive returns every live pair as a store announcement (the sweeper's refresh).
func (l *busLane) allLive() []store.Announcement {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []store.Announcement
	for ik, pairs := range l.live {
		for a := range pairs {
			out = append(out, store.Announcement{Org: ik.org, Instance: ik.instance, Agent: a.agent, Channel: a.channel, Vault: vaultOf(a.channel)})
		}
	}
	return out
}

// announce applies a change of what one socket of p announces (old replaced by new) to the
// live state and records every pair involved in the store as seen now: the new pairs are
// announced now, the withdrawn ones were last seen now. A pair a later hello no longer
// announces is recorded as dropped (H2: its channel stops); when the socket closes (closing),
// its pairs are not: the instance still follows them (GET /v1/bus/poll).
func (s *Server) announce(ctx context.Context, p *Principal, old, new []announcement, closing bool) error {
	s.bus.setLive(p.Org, p.InstanceID, old, new)
	keep := make(map[announcement]bool, len(old)+len(new)) // pair → dropped
	for _, a := range old {
		keep[a] = !closing
	}
	for _, a := range new {
		keep[a] = false
	}
	anns := make([]store.Announcement, 0, len(keep))
	for a, dropped := range keep {
		anns = append(anns, store.Announcement{Org: p.Org, Instance: p.InstanceID, Agent: a.agent, Channel: a.channel,
			Vault: vaultOf(a.channel), Dropped: dropped})
	}
	return s.store.RecordAnnouncements(context.WithoutCancel(ctx), anns, s.now())
}

// announcedIn returns, sorted, the instances of org other than exclude that announced agent
// on a channel of vault within the announce window (S7): the pairs the store saw since
// now − 24 h and the pairs open sockets announce now.
func (s *Server) announcedIn(ctx context.Context, org, vault, agent, exclude string, now time.Time) ([]string, error) {
	stored, err := s.store.AnnouncedInstances(ctx, org, vault, agent, now.Add(-announceWindow))
	if err != nil {
		return nil, err
	}
	all := append(stored, s.bus.liveIn(org, vault, agent)...)
	slices.Sort(all)
	all = slices.Compact(all)
	return slices.DeleteFunc(all, func(inst string) bool { return inst == exclude }), nil
}

// announcedOn reports whether instance announced agent on channel ("" channel: on any
// channel) within the announce window, in the store or on an open socket (S16 over HTTP).
func (s *Server) announcedOn(ctx context.Context, org, instance, agent, channel string, now time.Time) (bool, error) {
	for _, a := range s.bus.livePairs(org, instance) {
		if a.agent == agent && (channel == "" || a.channel == channel) {
			return true, nil
		}
	}
	anns, err := s.store.Announcements(ctx, org, instance, now.Add(-announceWindow))
	if err != nil {
		return false, err
	}
	for _, a := range anns {
		if a.Agent == agent && (channel == "" || a.Channel == channel) {
			return true, nil
		}
	}
	return false, nil
}

// followedChannels returns, sorted, the org channels the instance's agents follow: announced
// within the announce window and not dropped by a later hello (stored), or by an open socket
// now (GET /v1/bus/poll).
func (s *Server) followedChannels(ctx context.Context, org, instance string, now time.Time) ([]string, error) {
	anns, err := s.store.Announcements(ctx, org, instance, now.Add(-announceWindow))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range anns {
		if !a.Dropped {
			out = append(out, a.Channel)
		}
	}
	for _, a := range s.bus.livePairs(org, instance) {
		out = append(out, a.channel)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
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
	// bytes is the tail's cost (tailCost); total, shared by every stream of the lane, is the
	// sum over all of them.
	bytes int64
	total *atomic.Int64
}

// The tails are bounded by count and by bytes (relay.md §3): at most maxTail entries and
// maxTailBytes per stream, and maxTailTotal over every followed stream. Past a bound a stream's
// oldest entries go first (a follower behind the tail reads the store instead); a sealed
// message can be over a megabyte, so the count alone would allow gigabytes.
const (
	maxTail       = 4096
	maxTailBytes  = 8 << 20
	maxTailTotal  = 64 << 20
	tailEntryCost = 256 // a StreamEntry and its message's fields besides Data
)

// tailCost is what an entry costs a tail: its data and tailEntryCost.
func tailCost(e store.StreamEntry) int64 {
	n := tailEntryCost
	switch {
	case e.Message != nil:
		n += len(e.Message.Data)
	case e.Publish != nil:
		n += len(e.Publish.Data)
	case e.Task != nil:
		n += len(e.Task.Data)
	}
	return int64(n)
}

// trimLocked drops the tail's oldest entries when it is past a bound (f.mu held): down to
// three quarters of it, so that a full tail is copied once every quarter of its length, not at
// every commit.
func (f *streamFollowers) trimLocked() {
	if len(f.tail) <= maxTail && f.bytes <= maxTailBytes && f.total.Load() <= maxTailTotal {
		return
	}
	n, drop := 0, int64(0)
	for n < len(f.tail) && (len(f.tail)-n > maxTail*3/4 || f.bytes-drop > maxTailBytes*3/4 ||
		f.total.Load()-drop > maxTailTotal-maxTailBytes/4) {
		drop += tailCost(f.tail[n])
		n++
	}
	if n == 0 {
		return // empty: the other streams hold the total
	}
	f.from = f.tail[n-1].Seq
	// A new array, so the dropped entries are released (a follower may still range over the
	// old one); room for the next quarter, so appends do not copy it again.
	kept := make([]store.StreamEntry, len(f.tail)-n, maxTail+busPumpPage)
	copy(kept, f.tail[n:])
	f.tail = kept
	f.bytes -= drop
	f.total.Add(-drop)
}

// release gives the tail's bytes back to the lane's total (the stream is no longer followed).
func (f *streamFollowers) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total.Add(-f.bytes)
	f.tail, f.bytes, f.from = nil, 0, f.last
}

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
func (f *streamFollowers) refresh(ctx context.Context, st store.BusStore, k store.StreamKey, maxBytes int) {
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
		entries, err := st.ReadStream(ctx, k, store.ReadQuery{After: last, Limit: busPumpPage, MaxBytes: maxBytes})
		if err != nil || len(entries) == 0 {
			return
		}
		f.mu.Lock()
		f.tail = append(f.tail, entries...)
		f.last = entries[len(entries)-1].Seq
		var added int64
		for _, e := range entries {
			added += tailCost(e)
		}
		f.bytes += added
		f.total.Add(added)
		f.trimLocked()
		last = f.last
		f.mu.Unlock()
		if !pageMayContinue(entries, busPumpPage, maxBytes) {
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
		f = &streamFollowers{sockets: map[*busSocket]struct{}{}, stop: make(chan struct{}), total: &l.tailBytes}
		l.streams[k] = f
		ctx, stopCtx := context.WithCancel(context.Background())
		go func() {
			defer cancel()
			defer stopCtx()
			defer f.release()
			for {
				select {
				case <-f.stop:
					return
				case _, ok := <-notify:
					if !ok {
						return
					}
					f.refresh(ctx, st, k, l.readBytes)
					l.mu.Lock()
					for s := range f.sockets {
						s.markDirty(k)
					}
					l.mu.Unlock()
				}
			}
		}()
		// The tail starts at the head read after subscribing: nothing committed later is missed.
		f.refresh(ctx, st, k, l.readBytes)
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
	bytes int64 // sum of cost over m
}

type cachedDelivery struct {
	d    hive.MessageDeliveryV1
	cost int64 // estimated heap: the decoded delivery and its two frames, each about its data

	mu     sync.Mutex
	frames [2][]byte // the message.deliver frame with `mine` false / true
}

// The delivery cache's bounds (relay.md §3): maxDeliveryCache deliveries and
// maxDeliveryCacheBytes of their estimated heap, the oldest leaving first.
const (
	maxDeliveryCache      = 8192
	maxDeliveryCacheBytes = 16 << 20
)

// deliveryCost is the estimated heap of a cached delivery decoded from n bytes of stored data.
func deliveryCost(n int) int64 { return 3*int64(n) + 512 }

func (c *deliveryCache) get(gid string) (*cachedDelivery, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[gid]
	return d, ok
}

func (c *deliveryCache) put(gid string, d *cachedDelivery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[gid]; ok {
		c.bytes -= old.cost
	} else {
		c.order = append(c.order, gid)
	}
	c.m[gid] = d
	c.bytes += d.cost
	for len(c.order) > 0 && (len(c.order) > maxDeliveryCache || c.bytes > maxDeliveryCacheBytes) {
		if old, ok := c.m[c.order[0]]; ok {
			c.bytes -= old.cost
			delete(c.m, c.order[0])
		}
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

// Auth lookups of the bus lane.

// orgHasInstance reports whether instance is an instance of org: a token of the auth file, or
// the local instance in local mode (S7 `to_instance`).
func (s *Server) orgHasInstance(org, instance string) bool {
	if s.local {
		return org == LocalOrg && instance == LocalOrg
	}
	for _, t := range s.auth.Load().tokens {
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
	if s.local {
		return nil
	}
	var out []swarmMember
	seen := map[instKey]bool{}
	for _, t := range s.auth.Load().tokens {
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
