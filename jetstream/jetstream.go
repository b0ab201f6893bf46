package jetstream

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/store"
)

// Stream names.
const (
	// RunsStream holds every run's event chunks, checkpoint chunks and head records.
	RunsStream = "AGENTWIRE_RUNS"
)

// RelayStoreRecheck is the relay.Config.StoreRecheck to serve a relay on this store with. The
// relay's runs lane takes a wake-up that no frame of its own follows within StoreRecheck for a
// commit made elsewhere, and only then re-reads the store; on this store a wake-up of a commit
// by this instance is delivered before the relay publishes its frames, and its echo from the
// wake-up consumer is skipped, so a short wait costs no reads and keeps the latency of
// cross-relay fan-out low (the relay's default, 250 ms, suits one process).
const RelayStoreRecheck = 2 * time.Millisecond

// Options configures a [Store]. The zero value is usable.
type Options struct {
	// Replicas is the replica count of the streams the store creates (relay.md §5.1.7: a 2xx
	// is then a quorum acknowledgement; "quorum" holds only for 3 or more). 0 means 1. It
	// applies when a stream is created; an existing stream keeps its own.
	Replicas int

	// Now is the clock of run times (createdAt, updatedAt) and of bus expiry; nil is
	// time.Now.
	Now func() time.Time

	// Timeout bounds one JetStream API request; 0 means 10 s.
	Timeout time.Duration

	// EnvoyOrg is the org whose envelopes carry exactly the envelope.md §4.3 message ids, so
	// that they dedupe against Legion's own publishers, and to which an envelope stored
	// without an org header belongs (relay.md §5.1.4). Empty: none, and such envelopes are
	// skipped.
	EnvoyOrg string

	// OwnEnvoyStream lets the store create ENVOY_NOTIFICATIONS or bring it to envelope.md
	// §5.1; without it the store only checks the stream and refuses to open when it is
	// missing or differs.
	OwnEnvoyStream bool

	// ChunkBytes is the most payload bytes of one chunk message; 0 means the connection's
	// max payload less 16 KiB for headers (relay.md §5.1.2: "within the server's max payload
	// minus headroom").
	ChunkBytes int

	// RunCacheBytes bounds the run cache (heads, chunk indexes and event-ID fingerprint
	// sets); 0 means DefaultRunCacheBytes. See the package doc, "Memory".
	RunCacheBytes int64

	// BusCacheBytes bounds the bus cache (stream counters, recent entries and their gid and
	// client_msg_id keys); 0 means DefaultBusCacheBytes.
	BusCacheBytes int64

	// EnvelopeOrgs bounds the orgs whose last envelope sequence the store remembers; 0 means
	// DefaultEnvelopeOrgs.
	EnvelopeOrgs int

	// OnPublish, when set, is called after each atomic batch the store publishes (merged by
	// group commit) with the time from its first message to the stream's acknowledgement: the
	// relay's commit and publish latency series. It must not block.
	OnPublish func(PublishInfo)
}

// PublishInfo describes one atomic batch the store published.
type PublishInfo struct {
	// Stream is the JetStream stream written.
	Stream string
	// Messages is the number of messages of the batch, Events the run events they carry
	// (0 on other streams).
	Messages, Events int
	// Duration is the time from sending the batch's first message to its acknowledgement.
	Duration time.Duration
	// Err is the publish error, nil when the stream acknowledged the batch.
	Err error
}

// Store is a [store.Store] on NATS JetStream. All methods are safe for concurrent use.
type Store struct {
	id    string // this instance, in the presence it publishes
	clock atomic.Pointer[func() time.Time]
	nc    *nats.Conn
	js    njs.JetStream
	ns    *server.Server // the embedded server the store owns, or nil
	opts  Options
	chunk int

	runs njs.Stream

	runHub store.Hub

	env      njs.Stream
	sessions njs.KeyValue
	envHub   store.Hub
	envs     envState

	bus            njs.Stream
	busState       njs.KeyValue
	busStateStream njs.Stream // the bucket's stream, for purging a message's receipts
	busHub         store.Hub
	busCache       busCache
	busLocks       [64]sync.Mutex
	lockSeed       maphash.Seed

	// life: every call holds it for reading; Close takes it for writing, so Close waits for the
	// calls under way and later calls see closed.
	life   sync.RWMutex
	closed bool

	watchers []njs.ConsumeContext
	statusCh chan nats.Status // the connection's status listener (watchConnection)

	cache     runCache
	runCommit *committer
	ownHeads  seqRing // heads this instance committed, whose wake-up echo is skipped
	ownBus    seqRing // bus entries this instance committed
	busCommit *committer
}

var _ store.Store = (*Store)(nil)

// Open opens a store over an established connection: it creates the agentwire streams it
// needs when they are missing and starts the wake-up consumers. The store does not own nc: Close
// leaves it open.
func Open(nc *nats.Conn, o Options) (*Store, error) {
	return open(nc, o, nil)
}

func open(nc *nats.Conn, o Options, ns *server.Server) (*Store, error) {
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Replicas < 0 || o.Replicas > 5 {
		return nil, fmt.Errorf("jetstream: %d replicas (1 to 5)", o.Replicas)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	js, err := njs.New(nc, njs.WithDefaultTimeout(o.Timeout))
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	s := &Store{nc: nc, js: js, ns: ns, opts: o, id: nats.NewInbox()}
	s.clock.Store(&o.Now)
	s.chunk = o.ChunkBytes
	if s.chunk <= 0 {
		s.chunk = int(nc.MaxPayload()) - 16<<10
	}
	if s.chunk < 1024 {
		return nil, fmt.Errorf("jetstream: chunk size %d is too small (max payload %d)", s.chunk, nc.MaxPayload())
	}
	if o.RunCacheBytes <= 0 {
		o.RunCacheBytes = DefaultRunCacheBytes
	}
	s.opts.RunCacheBytes = o.RunCacheBytes
	s.cache.init(o.RunCacheBytes)
	if o.BusCacheBytes <= 0 {
		o.BusCacheBytes = DefaultBusCacheBytes
	}
	s.opts.BusCacheBytes = o.BusCacheBytes
	s.busCache.init(o.BusCacheBytes)
	s.lockSeed = maphash.MakeSeed()
	ctx, cancel := context.WithTimeout(context.Background(), 4*o.Timeout)
	defer cancel()
	if s.runs, err = s.ensureStream(ctx, njs.StreamConfig{
		Name:               RunsStream,
		Subjects:           []string{runsPrefix + ">", runSnapPrefix + ">", runHeadPrefix + ">"},
		Retention:          njs.LimitsPolicy,
		Storage:            njs.FileStorage,
		Replicas:           o.Replicas,
		AllowAtomicPublish: true,
		AllowRollup:        true,
		Duplicates:         2 * time.Minute,
	}); err != nil {
		return nil, err
	}
	s.runCommit = newCommitter(s, RunsStream)
	if err := s.watch(ctx, s.runs, runHeadPrefix+">", &s.ownHeads, func(subject string) {
		if org, run, err := splitKey(subject, runHeadPrefix); err == nil {
			s.runHub.Notify(org, run)
		}
	}, s.runHub.NotifyAll); err != nil {
		s.abortOpen()
		return nil, err
	}
	if err := s.openBus(ctx); err != nil {
		s.abortOpen()
		return nil, err
	}
	if err := s.openEnvelopes(ctx); err != nil {
		s.abortOpen()
		return nil, err
	}
	s.watchConnection()
	return s, nil
}

// ensureStream creates the stream, or updates an existing one whose subjects or atomic-publish
// setting differ (keeping its replica count: relay.md §5.1.7, replicas apply at creation).
func (s *Store) ensureStream(ctx context.Context, cfg njs.StreamConfig) (njs.Stream, error) {
	st, err := s.js.Stream(ctx, cfg.Name)
	if errors.Is(err, njs.ErrStreamNotFound) {
		st, err = s.js.CreateStream(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("jetstream: create stream %s: %w", cfg.Name, err)
		}
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: stream %s: %w", cfg.Name, err)
	}
	have := st.CachedInfo().Config
	if slices.Equal(have.Subjects, cfg.Subjects) && have.AllowAtomicPublish && have.AllowRollup && !have.AllowDirect {
		return st, nil
	}
	cfg.Replicas = have.Replicas
	if st, err = s.js.UpdateStream(ctx, cfg); err != nil {
		return nil, fmt.Errorf("jetstream: update stream %s: %w", cfg.Name, err)
	}
	return st, nil
}

// watch starts the ordered consumer that turns committed messages on filter into wake-ups
// (relay.md §5.1.5: "one ordered JetStream consumer per stream per relay (committed messages
// only), never core subscriptions on the data subjects"). It sees headers only and starts after
// the stream's last message: a subscriber reads the store after subscribing. lost is called
// when the consumer may have missed messages (it lost its server: it is recreated from the last
// message it delivered, after a heartbeat of 1 s went missing twice), so that every subscriber
// of the lane re-reads.
func (s *Store) watch(ctx context.Context, st njs.Stream, filter string, own *seqRing, wake func(subject string), lost func()) error {
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("jetstream: wake-up consumer on %s: %w", filter, err)
	}
	// A start sequence rather than DeliverNew: a consumer recreated before it delivered
	// anything resumes from there instead of from its recreation.
	c, err := st.OrderedConsumer(ctx, njs.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  njs.DeliverByStartSequencePolicy,
		OptStartSeq:    info.State.LastSeq + 1,
		HeadersOnly:    true,
	})
	if err != nil {
		return fmt.Errorf("jetstream: wake-up consumer on %s: %w", filter, err)
	}
	cc, err := c.Consume(func(m njs.Msg) {
		// A commit of this instance woke its subscribers when it was acknowledged.
		if md, err := m.Metadata(); err == nil && own.take(md.Sequence.Stream) {
			return
		}
		wake(m.Subject())
	}, njs.PullHeartbeat(time.Second), njs.ConsumeErrHandler(func(njs.ConsumeContext, error) { lost() }))
	if err != nil {
		return fmt.Errorf("jetstream: wake-up consumer on %s: %w", filter, err)
	}
	s.watchers = append(s.watchers, cc)
	return nil
}

// watchConnection wakes every subscriber of every lane each time the connection is
// re-established: the wake-up consumers may have missed commits while it was down.
func (s *Store) watchConnection() {
	ch := s.nc.StatusChanged(nats.CONNECTED)
	s.statusCh = ch
	go func() {
		for range ch {
			s.wakeAll()
		}
	}()
}

// wakeAll wakes every subscriber of every lane (a spurious wake-up costs a read).
func (s *Store) wakeAll() {
	s.runHub.NotifyAll()
	s.busHub.NotifyAll()
	s.envHub.NotifyAll()
}

// abortOpen undoes a failed open: the wake-up consumers and the committers stop.
func (s *Store) abortOpen() {
	s.stopWatchers()
	s.runCommit.close()
	if s.busCommit != nil {
		s.busCommit.close()
	}
}

func (s *Store) stopWatchers() {
	for _, w := range s.watchers {
		w.Stop()
	}
	s.watchers = nil
	if s.statusCh != nil {
		s.nc.RemoveStatusListener(s.statusCh)
		s.statusCh = nil
	}
}

// enter starts a call: it fails with store.ErrClosed after Close. The caller must call s.leave.
func (s *Store) enter() error {
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return store.ErrClosed
	}
	return nil
}

func (s *Store) leave() { s.life.RUnlock() }

var _ store.Clocked = (*Store)(nil)

// SetClock replaces the store's clock (Options.Now); a nil now changes nothing.
func (s *Store) SetClock(now func() time.Time) {
	if now != nil {
		s.clock.Store(&now)
	}
}

// now reads the store's clock.
func (s *Store) now() time.Time { return (*s.clock.Load())() }

// Conn returns the store's NATS connection (its statistics, status and reconnects).
func (s *Store) Conn() *nats.Conn { return s.nc }

// Ping reports whether the connection is up and the store's streams answer (relay.md §2:
// GET /healthz).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if st := s.nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("jetstream: connection %s", st)
	}
	if _, err := s.runs.Info(ctx); err != nil {
		return fmt.Errorf("jetstream: stream %s: %w", RunsStream, err)
	}
	if _, err := s.bus.Info(ctx); err != nil {
		return fmt.Errorf("jetstream: stream %s: %w", BusStream, err)
	}
	if _, err := s.env.Info(ctx); err != nil {
		return fmt.Errorf("jetstream: stream %s: %w", envelope.NotificationsStream, err)
	}
	return nil
}

// Close waits for the calls under way, stops the wake-up consumers, closes every subscription
// channel and, for a store opened by OpenEmbedded, closes the connection and shuts the server
// down. It is idempotent.
func (s *Store) Close() error {
	s.life.Lock()
	if s.closed {
		s.life.Unlock()
		return nil
	}
	s.closed = true
	s.life.Unlock()
	s.stopWatchers()
	s.runCommit.close()
	if s.busCommit != nil {
		s.busCommit.close()
	}
	s.runHub.Close()
	s.envHub.Close()
	s.busHub.Close()
	if s.ns != nil {
		s.nc.Close()
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
	}
	return nil
}

// ctxTimeout bounds a request made on the caller's behalf by the store's API timeout when ctx
// has no deadline of its own.
func (s *Store) ctxTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.opts.Timeout)
}

// CacheStats reports the store's in-memory structures against their budgets (package doc,
// "Memory").
type CacheStats struct {
	// RunBytes is what the run cache accounts now, RunPeak the most it ever did, RunLimit
	// its budget (Options.RunCacheBytes), Runs the run states it holds.
	RunBytes, RunPeak, RunLimit int64
	Runs                        int
	// BusBytes, BusPeak and BusLimit are the same for the bus cache (Options.BusCacheBytes),
	// Streams the bus streams it holds.
	BusBytes, BusPeak, BusLimit int64
	Streams                     int
	// EnvelopeOrgs is the number of orgs whose last envelope sequence is remembered, at most
	// EnvelopeOrgsLimit (Options.EnvelopeOrgs).
	EnvelopeOrgs, EnvelopeOrgsLimit int
}

// CacheStats returns the store's cache accounting.
func (s *Store) CacheStats() CacheStats {
	var cs CacheStats
	cs.RunBytes, cs.RunPeak, cs.RunLimit, cs.Runs = s.cache.stats()
	cs.BusBytes, cs.BusPeak, cs.BusLimit, cs.Streams = s.busCache.stats()
	s.envs.mu.Lock()
	cs.EnvelopeOrgs, cs.EnvelopeOrgsLimit = s.envs.last.len(), s.opts.EnvelopeOrgs
	s.envs.mu.Unlock()
	return cs
}

// seqRing remembers the stream sequences of the last 1,024 messages this instance committed
// and woke its subscribers for, so that the wake-up consumer skips their echo.
type seqRing struct {
	mu   sync.Mutex
	ring [1024]uint64
	set  map[uint64]struct{}
	i    int
}

func (r *seqRing) add(seq uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set == nil {
		r.set = make(map[uint64]struct{}, len(r.ring))
	}
	if old := r.ring[r.i]; old != 0 {
		delete(r.set, old)
	}
	r.ring[r.i] = seq
	r.set[seq] = struct{}{}
	r.i = (r.i + 1) % len(r.ring)
}

// take reports whether seq was added, and forgets it.
func (r *seqRing) take(seq uint64) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.set[seq]; ok {
		delete(r.set, seq)
		return true
	}
	return false
}
