// Package relay is agentwire's HTTP relay (`agentwire serve`, spec relay.md): the transport
// that enforces the contracts. This package implements its three lanes — runs (relay.md §2
// Runs), the hive agent bus (§2 Bus: /v1/bus WebSocket, /v1/messages; hive.md §4 and §8
// S1–S21) and notifications (§2 Notifications: /v1/notifications; envelope.md) — with the auth
// model (§1), limits and backpressure (§3) and durability contract (§4) on any [store.Store].
//
// # Bus lane contract
//
//   - Requests are decoded strictly with package hive (S1): a decode failure or a refused
//     Validate answers 400 invalid_request with the message verbatim and the §5.4 field; every
//     bus error is the hive error body (`{"error":HiveErrorDetailV1}`), over HTTP and in the
//     socket's `error` frames. A missing token is 401 unauthorized, a token without bus.relay
//     403 forbidden_right.
//   - Networks are scoped to the token (S2): an org channel is a stream of the token's org (two
//     orgs using one channel text have two streams); a swarm is reachable only by the members the
//     auth file lists. A `reply_to`, `after_gid` or receipt `gid` outside the caller's network or
//     sight is answered exactly like an unknown one (S3: `reply_to names no message`).
//   - The store assigns `gid` (a ULID), the gap-free per-stream `seq`, keeps `client_msg_id`
//     idempotent per sending instance (S9) and filters what each instance sees (S20). The relay
//     binds recipients (S7: `to_instance`, the one other instance that announced `to` in the vault
//     within 24 h, or the replied message's instance), stamps `server_time`, the default question
//     deadline (S12) and `expires_at` (S11: Team 30 days, Personal 7 days, swarms never deleted
//     and reported 30 days ahead), and renders deliveries per viewer (S4–S6: `thread_id`, trust
//     `team` with the agent sender on org, `untrusted` with only a handle on a swarm, `mine`).
//     Sealed vaults come from the auth file's `sealed_vaults` (bus_sealed.go, S17): in a sealed
//     vault a clear body is refused (reason sealed_vault) and a `sealed` of another epoch too
//     (409, reason stale_epoch); elsewhere `sealed` is refused (reason not_sealed); ciphertext
//     is stored and relayed unread.
//   - A resent `client_msg_id` is answered from the store (BusStore.LookupClientMsg) before any
//     check that could fail now, so it gets the original `message.stored` even after a restart
//     (S9). Hello announcements and `ack` positions are stored (BusStore.RecordAnnouncements,
//     SetAck): S7's binding and S16's announced recipients read the store (pairs last seen
//     within 24 hours) together with the pairs of open sockets, and a restart changes neither.
//   - The `/v1/bus` WebSocket follows hello's rules (H1–H6); a socket follows the channels its
//     agents announce and every swarm its token belongs to, and reads each followed stream after
//     every commit notification, so deliveries come in seq order and never back to the sending
//     socket (S10). Receipts from an announced recipient agent (S16) reach the sender's sockets
//     as `message.status`, one per newly applied state. The relay pings every socket each
//     Config.BusPingInterval and closes one whose pong does not come within
//     Config.BusPingTimeout (a dead peer, or a client that stopped reading).
//   - `publish` (bus_publish.go): validated (§4.4), H5 on `from`, H6 on `channel`, stored on
//     the channel's one gap-free counter shared with `message.deliver` and `task.event`, answered
//     `published` (the original's for a resent client_msg_id, S9) and delivered as `deliver` to
//     every other socket following the channel (S10); a `private` one only to sockets, and in
//     catch-up instances, that announced its `to` on the channel. Retention as an org message
//     of the plan (S11). Catch-up and hello-cursor replay include `deliver` frames in seq order.
//   - `presence` (bus_presence.go): H5 on `agent_id`; one `presence_update` per vault of the
//     agent's channels to every other socket following a channel of that vault in the org.
//     Presence is live only: not sequenced, not stored, not replayed; a socket that starts
//     following a vault gets the last update of each other open socket there (a snapshot). A
//     closing socket (or a hello that drops an agent) announces its agents `offline` unless
//     another socket of the instance still announces them in the vault.
//   - Handoffs (bus_handoff.go): `handoff.offer` (H5 `from`, H6 `channel`, deadline after
//     server_time and ≤ 168 h ahead) is bound like a direct message (S7: the one other instance
//     that announced `to` in the vault within 24 h), stored per (org, handoff_id), relayed to
//     the bound instance's sockets announcing `to`, and redelivered after each of its hellos
//     announcing `to` until the deadline, when it lapses. `handoff.ack`/`handoff.reject` (H5
//     `by`) from the bound recipient settle it once (else 404 not_found or 409 invalid_state,
//     field `handoff_id`) and are relayed to the offering instance's sockets announcing `from`.
//     Error frames of handoff frames carry `handoff_id`. A `message` of type handoff binds
//     nothing (S19).
//   - GET /v1/bus/poll answers BusPollV1: at most 500 `message.deliver` and `task.event` frames
//     the instance's sockets would have received (the channels its stored announcements follow
//     and its swarms, visible to it, in seq order per stream), from its stored `ack` positions or
//     from the opaque `cursor` of the previous answer (project-defined: unpadded base64url of a
//     versioned binary list of (org channel or swarm, position) entries in ascending order,
//     accepted only in exactly the form the relay encodes; anything else is 400 invalid_request,
//     field `cursor`). A stream the cursor does not name starts at its `ack` position.
//   - A sweeper (Config.SweepInterval) deletes expired messages and envelopes and turns each org
//     question past its deadline without a settling answer into one task proposal, announced as
//     a `task.event` on its channel and listed by GET /v1/admin/task-proposals (S13).
//
// # Notification lane contract
//
//   - POST /v1/notifications validates with envelope.Decode and answers a refusal with every
//     problem (the error body's `problems`), checks that `topic` is a publishable subject under
//     `notifications.`, and stores the envelope with the next store sequence, deduplicated on
//     envelope.MessageID for 72 h (`{"duplicate":true,"seq":<original>}`). Only topics in
//     ENVOY_NOTIFICATIONS's subject list are stored (envelope.md §5.1); role lanes, fan-out
//     exceptions and other topics reach the subscribers connected at that moment, with seq 0.
//   - GET /v1/notifications/stream serves every stored envelope of the org matching any
//     `subject` pattern, once, in store order (`id:` = store sequence), from Last-Event-ID or the
//     start of the 72 h retention; with `session`, a dedupe key that session already got is
//     skipped. A key counts as delivered once the frame carrying it was written and flushed to
//     the session's stream; the keys of each flush are then recorded in the store
//     (NotificationStore.RecordSessionDeliveries, pruned after 72 h), so a session reconnecting
//     after a restart still skips them. A subscriber more than Limits.SubscriberQueue envelopes
//     behind is cut off with a final comment naming its last id; that is not a failed delivery
//     and creates no delivery exception (relay.md §2).
//
// # Runs lane contract
//
//   - POST /v1/runs/{runId}/events takes one event (application/json) or an NDJSON batch
//     (application/x-ndjson, ≤ 10,000 events). Every event is parsed with events.ParseEvent
//     (strict JSON, depth 128, exact messages), must carry the path's runId, and the batch is
//     folded in order into the run's reducer state (events.md §8) starting from the cached or
//     stored state (the stored checkpoint re-reduced with the stored events after it). The
//     accepted events and the new status (with a checkpoint for a run's first and terminal
//     batches; the others are written in the background, checkpoints.go) go to the store in
//     one AppendRun guarded by the state's last logical sequence, so the
//     batch is stored whole or not at all; a store conflict (another writer advanced the run)
//     reloads and re-reduces. Exact
//     duplicates are counted and never stored. The first failing event answers 400
//     (invalid_request) or 409 (conflict, a reducer refusal) with its 0-based `index` and the
//     contract's exact message; nothing of the batch is stored then.
//   - A 2xx answer is sent only after the store reports the batch durable (group-committed
//     fsync in the sqlite backend).
//   - GET /v1/runs/{runId}/events replays stored events after a cursor as NDJSON or, with
//     Accept: text/event-stream, as SSE (`id:` = logicalSequence, `event:` = type, `data:` =
//     the event JSON), then streams live events until the terminal event (or forever with
//     follow=true). A resumed stream (after=N or Last-Event-ID: N) yields exactly the events
//     with logicalSequence > N, in order, with no gap and no repeat.
//   - Live delivery is an in-process fan-out of pre-rendered frames, published in commit
//     order while the run's writer lock is held, into one bounded queue per subscriber
//     (relay.md §3: 1,024 frames). Publishing never blocks: a live subscriber whose queue
//     overflows is disconnected with a final SSE comment naming its last delivered cursor. Store
//     notifications (store.RunStore.Subscribe) cover writes this process did not make: a
//     subscriber that is notified and then sees no local frame re-reads the store from its
//     cursor, and a local frame that does not follow the subscriber's cursor does the same.
//   - Auth: without an [Auth] (local mode) every request acts as org `local` with every right;
//     with one, a bearer token is hashed with SHA-256 and compared in constant time; another
//     org's run answers 404 exactly like a missing one.
//
// # Token lifetime and TLS
//
// A token entry may carry `expires_at`; an expired token is unknown (401). [Server.SetAuth]
// replaces the auth file while the relay runs (`agentwire serve` calls it on SIGHUP and when
// the file changes); every open SSE stream and bus socket holds a grant that is re-checked then
// and every Config.AuthRecheck, and one whose token was removed, expired or lost the route's
// right ends (revoke.go). With Config.TLS, [Server.Serve] answers HTTPS and WSS.
//
// # Every request
//
// Before any route, the screen of guard.go applies relay.md §1's browser rules (a loopback
// `Host` in local mode against DNS rebinding; a present `Origin` must be loopback, the relay's
// own or listed by Config.AllowOrigins) and §2's request rules (head size, no
// Content-Encoding, paths in clean form, no repeated query parameter); each route then
// authenticates (401 missing or unknown token, 403 a token without the route's right, on every
// lane), requires its JSON media type on POST and refuses parameters it does not define.
//
// Errors use the one body of relay.md §2 ([Error]) on every answer, including unknown routes,
// wrong methods (405 with Allow), a bus request that is not a WebSocket handshake (426) and
// requests net/http refuses before any handler runs ([Server.Serve] rewrites those, wire.go).
package relay

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwire/agentwire/internal/localnet"
	"github.com/agentwire/agentwire/store"
)

// Config configures a [Server]. Store is required. Every other zero value takes its default;
// a feature that can be turned off (Heartbeat, StateCache, CheckpointMinInterval,
// SweepInterval, BusPingInterval) is off with a negative value.
type Config struct {
	// Store persists the runs lane (and later the other lanes).
	Store store.Store
	// Auth is the parsed `--auth FILE`; nil means local mode (relay.md §1).
	Auth *Auth
	// Limits are relay.md §3's bounds.
	Limits Limits
	// TLS, when set, makes Serve answer HTTPS (and WSS) on its listener with this
	// configuration (`--tls-cert`/`--tls-key`; a GetCertificate that re-reads the pair lets a
	// certificate change without a restart). The relay speaks HTTP/1.1 over it.
	TLS *tls.Config
	// TrustProxy honours X-Forwarded-Proto and X-Forwarded-For from a TLS-terminating proxy in
	// front (`--trust-proxy`): logs name the forwarded client address and scheme, and an
	// Origin must match the forwarded scheme to count as the relay's own.
	TrustProxy bool
	// AllowOrigins lists the browser origins (`https://viewer.example:8443`) besides loopback
	// ones and the relay's own that may call the relay in auth mode (`--allow-origin`): their
	// requests pass the Origin check and get CORS headers, and their preflights are answered.
	// Local mode accepts none (every request there has every right), so New refuses a list
	// without Auth.
	AllowOrigins []string
	// Logger receives structured logs (default slog.Default()).
	Logger *slog.Logger
	// Metrics receives the series of GET /metrics (default NewMetrics()).
	Metrics *Metrics
	// Heartbeat is the SSE heartbeat-comment period (relay.md §2: 15 s; negative: none).
	Heartbeat time.Duration
	// WriteTimeout bounds one SSE write (a stalled client is cut after it; default 30 s).
	WriteTimeout time.Duration
	// StateCache is the byte budget of the reducer states kept in memory between batches, so
	// a batch does not reload the stored checkpoint and re-reduce the events after it
	// (`--state-cache`, default 256 MiB; negative: keep none). States are estimated from the
	// bytes that built them (state.go); finished runs leave first, and a run that left is
	// reloaded from its checkpoint on demand.
	StateCache int64
	// CheckpointEvery is how many events may be appended to a run after its last stored
	// checkpoint before the relay stores a new one (default 256). The reducer snapshot grows
	// with the run (events.md §8.1), so it is not rewritten with every batch: the relay stores
	// it with a run's first batch, with the batch that makes the run terminal, and with the
	// first batch that brings the events after the last checkpoint to CheckpointEvery or, for
	// long runs, to as many events as the last checkpoint covers (so the snapshot bytes
	// written over a run stay linear in its length). All but the first and the terminal one
	// are encoded and stored by a background goroutine after the batch has committed
	// (checkpoints.go), so a running run's requests never wait for its snapshot; reads
	// (GET /v1/runs/{runId}, loading a run's state) re-reduce the stored events after it.
	// 1 stores a checkpoint with every batch.
	CheckpointEvery int
	// CheckpointMinInterval is the least time (by Now) between two background checkpoints of
	// one run (default 5 s; negative: no minimum). A due checkpoint of a run that had one
	// more recently is written with the run's first batch after the interval, when the run
	// leaves the StateCache, or at Shutdown, whichever comes first: a run streaming thousands
	// of events a second does not write a multi-megabyte snapshot every few seconds of its
	// burst, which measured as the largest source of the SSE latency tail at 10k events/s.
	CheckpointMinInterval time.Duration
	// StoreRecheck is how long an SSE subscriber that got a store notification waits for the
	// matching in-process frame before it re-reads the store (default 250 ms).
	StoreRecheck time.Duration
	// Now is the relay's clock for bus `server_time`, deadlines and retention, envelope
	// publish times and the sweeper (default time.Now). A store that reads a clock itself
	// (store.Clocked: the sqlite backend) is given this one by New when it is set.
	Now func() time.Time
	// SweepInterval is the period of the retention sweeper (expired bus messages and
	// envelopes, questions past their deadline); default 1 minute, negative disables it
	// ([Server.Sweep] still runs one pass on demand).
	SweepInterval time.Duration
	// BusPingInterval is how often the relay pings each `/v1/bus` WebSocket (a WebSocket ping
	// control frame, answered by the client's WebSocket library while it reads); default 30 s,
	// negative disables the pings.
	BusPingInterval time.Duration
	// AuthRecheck is how often the open streams and sockets are checked against the auth
	// file (an expires_at that passed); a replaced file (SetAuth) is checked at once. Default
	// 1 s.
	AuthRecheck time.Duration
	// BusPingTimeout is how long a ping may wait for its pong; a socket that does not answer in
	// time (a dead peer, or a client that stopped reading) is closed. Default 15 s.
	BusPingTimeout time.Duration
	// Viewer serves the web viewer (package web): GET and HEAD requests for paths outside
	// /v1/, /healthz and /metrics that no route matches. nil = no viewer (those answer the JSON
	// 404 like any unknown route).
	Viewer http.Handler
}

// Defaults of [Config].
const (
	DefaultHeartbeat    = 15 * time.Second
	DefaultWriteTimeout = 30 * time.Second
	DefaultStateCache   = 256 << 20
	DefaultCheckpoint   = 256
	// DefaultCheckpointMinInterval is Config.CheckpointMinInterval's default.
	DefaultCheckpointMinInterval = 5 * time.Second
	DefaultStoreRecheck          = 250 * time.Millisecond
	DefaultSweepInterval         = time.Minute
	DefaultBusPingInterval       = 30 * time.Second
	DefaultBusPingTimeout        = 15 * time.Second
	// maxConflictRetries bounds how often one request reloads after store conflicts.
	maxConflictRetries = 16
)

// Server is the relay. Create it with [New]; serve it with [Server.Serve] or mount
// [Server.Handler]; stop it with [Server.Shutdown].
type Server struct {
	store store.Store
	// local is local mode (no Config.Auth); auth is the current auth file (nil in local
	// mode), replaced by SetAuth.
	local   bool
	auth    atomic.Pointer[Auth]
	limits  Limits
	log     *slog.Logger
	metrics *Metrics
	cfg     Config

	handler      http.Handler
	allowOrigins map[string]bool // Config.AllowOrigins, normalized
	runs         *runTable
	viewer       http.Handler // cfg.Viewer, counted by instrument
	// appending counts the Append calls in progress (stream.go streams a batch only alone).
	appending atomic.Int32
	// streams counts the open SSE streams and bus sockets (Limits.MaxStreams).
	streams atomic.Int64
	// grants are the open streams' authorizations; recheck asks the grant checker to run
	// now (revoke.go).
	grants  grants
	recheck chan struct{}
	fan     *fanout
	notify  *notifyLane
	bus     *busLane
	// presence relays bus presence to the other relays of the store (nil: one relay).
	presence     store.PresenceRelay
	presenceStop func()

	shutdownOnce sync.Once
	shutdown     chan struct{} // closed when Shutdown starts: SSE streams end cleanly

	ck         *checkpointer // checkpoints.go
	ckStopOnce sync.Once

	mu      sync.Mutex
	httpSrv *http.Server
}

// New builds a relay over cfg.Store.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("relay: Config.Store is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	switch {
	case cfg.StateCache == 0:
		cfg.StateCache = DefaultStateCache
	case cfg.StateCache < 0:
		cfg.StateCache = 0
	}
	if cfg.CheckpointEvery <= 0 {
		cfg.CheckpointEvery = DefaultCheckpoint
	}
	switch {
	case cfg.CheckpointMinInterval == 0:
		cfg.CheckpointMinInterval = DefaultCheckpointMinInterval
	case cfg.CheckpointMinInterval < 0:
		cfg.CheckpointMinInterval = 0
	}
	if cfg.StoreRecheck <= 0 {
		cfg.StoreRecheck = DefaultStoreRecheck
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	} else if c, ok := cfg.Store.(store.Clocked); ok {
		c.SetClock(cfg.Now)
	}
	if cfg.SweepInterval == 0 {
		cfg.SweepInterval = DefaultSweepInterval
	}
	if cfg.BusPingInterval == 0 {
		cfg.BusPingInterval = DefaultBusPingInterval
	}
	if cfg.AuthRecheck <= 0 {
		cfg.AuthRecheck = DefaultAuthRecheck
	}
	if cfg.BusPingTimeout <= 0 {
		cfg.BusPingTimeout = DefaultBusPingTimeout
	}
	cfg.Limits = cfg.Limits.withDefaults()
	var allow map[string]bool
	if len(cfg.AllowOrigins) > 0 {
		if cfg.Auth == nil {
			return nil, errors.New("relay: Config.AllowOrigins needs Auth: without it every request has every right, so only loopback origins are accepted")
		}
		allow = map[string]bool{}
		for _, o := range cfg.AllowOrigins {
			norm, ok := localnet.NormalizeOrigin(o)
			if !ok {
				return nil, fmt.Errorf("relay: allowed origin %q is not an origin (scheme://host[:port], http or https, nothing after)", o)
			}
			allow[norm] = true
		}
	}
	s := &Server{
		store:        cfg.Store,
		local:        cfg.Auth == nil,
		limits:       cfg.Limits,
		log:          cfg.Logger,
		metrics:      cfg.Metrics,
		cfg:          cfg,
		runs:         newRunTable(cfg.StateCache),
		fan:          newFanout(),
		allowOrigins: allow,
		notify:       newNotifyLane(),
		bus:          newBusLane(),
		shutdown:     make(chan struct{}),
		grants:       grants{set: map[*grant]struct{}{}},
		recheck:      make(chan struct{}, 1),
	}
	s.bus.readBytes = s.limits.MaxReadBytes
	s.auth.Store(cfg.Auth)
	if cfg.Viewer != nil {
		s.viewer = s.instrument("viewer", cfg.Viewer)
	}
	s.handler = s.routes()
	s.runs.evicted = s.evicted
	s.runs.metrics = s.metrics
	s.fan.watch = s.watchStore
	s.startCheckpointer()
	s.startSweeper()
	s.startGrantChecker()
	s.startPresence()
	return s, nil
}

// Metrics returns the server's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Handler returns the relay's HTTP handler (every route of relay.md §2: runs, bus,
// notifications and operations, plus the admin listing GET /v1/admin/task-proposals).
func (s *Server) Handler() http.Handler { return s.handler }

// Serve accepts connections on ln until [Server.Shutdown]; it then returns nil once every
// in-flight request has finished. Request reads are bounded by Limits.ReadTimeout (relay.md
// §3); SSE streams clear that deadline and bound each write instead.
func (s *Server) Serve(ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.limits.ReadTimeout,
		ReadTimeout:       s.limits.ReadTimeout,
		IdleTimeout:       2 * time.Minute,
		// The screen answers heads above Limits.MaxHeaderBytes with 431; net/http reads up to
		// twice that before it cuts the connection with its own 431 (rewritten, wire.go).
		MaxHeaderBytes: 2 * s.limits.MaxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.mu.Lock()
	if s.isShuttingDown() {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	s.httpSrv = srv
	s.mu.Unlock()
	if s.cfg.TLS != nil {
		// The canned-answer rewrite (wire.go) sits above TLS, where it sees plain text.
		cfg := s.cfg.TLS.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		ln = tls.NewListener(ln, cfg)
	}
	err := srv.Serve(wireListener{Listener: ln, maxHeader: s.limits.MaxHeaderBytes})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the relay gracefully (relay.md §1): SSE subscribers get a final comment and
// a clean end of stream, the listener stops accepting, and in-flight requests finish (each
// acknowledged write is durable). It returns when they have, or with ctx's error. It does not
// close the store: the caller closes it after Shutdown returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() {
		close(s.shutdown) // SSE streams end; bus sockets close with 1001
		s.bus.closeAll()
		if s.presenceStop != nil {
			s.presenceStop()
		}
	})
	s.mu.Lock()
	srv := s.httpSrv
	s.mu.Unlock()
	var err error
	if srv != nil {
		err = srv.Shutdown(ctx)
	}
	// In-flight requests are done: write the checkpoints they queued before the store closes,
	// then the due ones CheckpointMinInterval held back.
	err = errors.Join(err, s.stopCheckpointer(ctx))
	return errors.Join(err, s.writeDueCheckpoints(ctx))
}

// openStream takes one of Limits.MaxStreams; false (and the 429 to answer) when all are open.
// The caller calls closeStream when the stream ends.
func (s *Server) openStream() (bool, *Error) {
	if s.streams.Add(1) > int64(s.limits.MaxStreams) {
		s.streams.Add(-1)
		return false, newError(CodeRateLimited, "The relay has %d streams open, its limit; try again later.", s.limits.MaxStreams)
	}
	return true, nil
}

func (s *Server) closeStream() { s.streams.Add(-1) }

// heartbeat returns the SSE heartbeat ticker's channel and its stop (a nil channel when
// Config.Heartbeat is negative: no heartbeats).
func (s *Server) heartbeat() (<-chan time.Time, func()) {
	if s.cfg.Heartbeat < 0 {
		return nil, func() {}
	}
	t := time.NewTicker(s.cfg.Heartbeat)
	return t.C, t.Stop
}

// now is the relay's clock (Config.Now).
func (s *Server) now() time.Time { return s.cfg.Now() }

func (s *Server) isShuttingDown() bool {
	select {
	case <-s.shutdown:
		return true
	default:
		return false
	}
}

// route is one authenticated route of relay.md §2: the right it needs, the media type a POST
// must declare (nil: none, a GET) and, where the wrapper checks them, the query parameters it
// defines (nil: the handler checks its own, as the bus and notification handlers do).
type route struct {
	pattern string
	right   Right
	media   *mediaRule
	params  []string
	h       func(http.ResponseWriter, *http.Request, *Principal)
}

// routes builds the mux. Every request passes the screen (guard.go); every route goes through
// instrument (metrics, logs) and, except the operations routes, through authentication, its
// media rule and its parameter list.
func (s *Server) routes() http.Handler {
	api := http.NewServeMux()
	for _, rt := range []route{
		{"POST /v1/runs/{runId}/events", RightRunsWrite, mediaEvents, []string{}, s.handleAppend},
		{"GET /v1/runs/{runId}/events", RightRunsRead, nil, []string{"after", "limit", "follow"}, s.handleReadEvents},
		{"GET /v1/runs/{runId}", RightRunsRead, nil, []string{}, s.handleGetRun},
		{"GET /v1/runs", RightRunsRead, nil, []string{"status", "limit", "cursor"}, s.handleListRuns},
		{"POST /v1/notifications", RightNotifyPublish, mediaEnvelope, []string{}, s.handlePublishNotification},
		{"GET /v1/notifications/stream", RightNotifySubscribe, nil, nil, s.handleNotificationStream},
		{"GET /v1/admin/task-proposals", RightAdmin, nil, []string{"after", "limit"}, s.handleListProposals},
		{"GET /v1/bus", RightBusRelay, nil, []string{}, s.handleBusSocket},
		{"POST /v1/messages", RightBusRelay, mediaJSONBody, []string{}, s.handlePostMessage},
		{"GET /v1/messages", RightBusRelay, nil, nil, s.handleListMessages},
		{"POST /v1/messages/{gid}/receipts", RightBusRelay, mediaJSONBody, []string{}, s.handlePostReceipt},
		{"GET /v1/bus/channels/{channel}/events", RightBusRelay, nil, nil, s.handleCatchUp},
		{"GET /v1/bus/poll", RightBusRelay, nil, nil, s.handleBusPoll},
	} {
		api.Handle(rt.pattern, s.instrument(rt.pattern, s.guarded(rt)))
	}
	api.Handle("GET /healthz", s.instrument("GET /healthz", http.HandlerFunc(s.handleHealth)))
	api.Handle("GET /metrics", s.instrument("GET /metrics", s.metrics.Handler()))

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.screen(w, r) {
			return
		}
		h, pattern := api.Handler(r)
		if pattern != "" {
			api.ServeHTTP(w, r) // ServeHTTP (not h) sets the path values
			return
		}
		if s.cfg.Viewer != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
			!strings.HasPrefix(r.URL.Path, "/v1/") && r.URL.Path != "/healthz" && r.URL.Path != "/metrics" {
			s.viewer.ServeHTTP(w, r)
			return
		}
		// No route: let the mux decide between 404 and 405 (with its Allow header), then
		// answer with the lane's error body.
		probe := &statusProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		e := newError(CodeNotFound, "No route for %s %s.", clip(r.Method), clip(r.URL.Path))
		if probe.code == http.StatusMethodNotAllowed {
			e = newError(CodeInvalidRequest, "Method %s is not allowed on %s.", clip(r.Method), clip(r.URL.Path)).withStatus(http.StatusMethodNotAllowed)
			if allow := probe.header.Get("Allow"); allow != "" {
				w.Header().Set("Allow", allow)
			}
		}
		s.metrics.request("unmatched", e.Status)
		writeRefusal(w, r, e)
	})
}

// guarded is a route's handler behind authentication (401 for a missing or unknown token,
// 403 for a token without the right), its media rule (415) and its parameter list (400), in
// the route lane's error body (bus routes: hive bodies, hive.md §5.2).
func (s *Server) guarded(rt route) http.Handler {
	bus := isBusPath(strings.Fields(rt.pattern)[1])
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, e := s.authorize(r, rt.right)
		if e == nil && rt.media != nil {
			_, e = rt.media.check(r)
		}
		if e == nil && rt.params != nil {
			e = onlyParams(r, rt.params, bus)
		}
		if id := r.PathValue("runId"); e == nil && len(id) > store.MaxIDBytes {
			// relay.md §5.1.1: the same limit on every store.
			e = newError(CodeInvalidRequest, "Run ID exceeds the %d-byte limit.", store.MaxIDBytes).withField("runId")
		}
		if e != nil {
			if bus {
				writeBusError(w, busFromRelay(e))
				return
			}
			if e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden {
				s.metrics.refusals.WithLabelValues(e.Code).Inc()
			}
			writeError(w, e)
			return
		}
		rt.h(w, r, p)
	})
}

// authorize authenticates the request (local mode: the local principal) and checks that it
// holds right: 401 for a missing or unknown token, 403 forbidden for a token without the
// right, the same on every lane (relay.md §2).
func (s *Server) authorize(r *http.Request, right Right) (*Principal, *Error) {
	p := LocalPrincipal()
	if !s.local {
		var e *Error
		if p, e = s.auth.Load().authenticate(r, s.now()); e != nil {
			return nil, e
		}
	}
	if !p.Has(right) {
		return nil, newError(CodeForbidden, "The token does not grant the right %s.", right).withField("rights")
	}
	return p, nil
}

// instrument counts the request by route and status and logs it at debug level.
func (s *Server) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			s.metrics.request(route, code)
			if s.log.Enabled(r.Context(), slog.LevelDebug) {
				client, scheme := s.clientOf(r)
				s.log.LogAttrs(r.Context(), slog.LevelDebug, "request",
					slog.String("method", r.Method), slog.String("route", route),
					slog.String("path", r.URL.Path), slog.Int("status", code),
					slog.String("client", client), slog.String("scheme", scheme),
					slog.Duration("duration", time.Since(start)))
			}
		}()
		h.ServeHTTP(sw, r)
	})
}

// clientOf returns the request's client address and scheme: the connection's, or with
// Config.TrustProxy the first X-Forwarded-For address and X-Forwarded-Proto when present.
func (s *Server) clientOf(r *http.Request) (client, scheme string) {
	client, scheme = r.RemoteAddr, "http"
	if s.cfg.TLS != nil || r.TLS != nil {
		scheme = "https"
	}
	if s.cfg.TrustProxy {
		if f := r.Header.Get("X-Forwarded-For"); f != "" {
			first, _, _ := strings.Cut(f, ",")
			client = strings.TrimSpace(first)
		}
		if p := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto"))); p == "http" || p == "https" {
			scheme = p
		}
	}
	return client, scheme
}

// handleHealth answers GET /healthz: 200 when the store answers (relay.md §2 Operations).
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		writeError(w, newError(CodeUnavailable, "The store does not answer."))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{\"status\":\"ok\"}\n"))
}

// statusWriter records the status code for metrics and logs. It keeps Flush and the
// ResponseController deadlines reachable through Unwrap.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// statusProbe captures what the mux's own 404/405 handler would answer.
type statusProbe struct {
	header http.Header
	code   int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(code int)        { p.code = code }
