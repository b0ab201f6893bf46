package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentwire/agentwire/internal/localnet"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/web"
)

func init() { register(newServeCmd) }

// serveOptions are the flags of relay.md §1 (each with an AGENTWIRE_* environment equivalent).
type serveOptions struct {
	addr      string
	data      string
	store     string
	nats      string
	auth      string
	maxBody   string
	maxEvent  string
	maxBatch  int
	logFormat string
	logLevel  string
	busPing   time.Duration
	busPong   time.Duration
	ckptMin   time.Duration
	origins   []string
	js        jetstreamFlags
	noViewer  bool
	stateMem  string
	streams   int
	tlsCert   string
	tlsKey    string
	trustPrx  bool
}

// serveEnv maps each flag to its environment variable; an explicitly given flag wins.
var serveEnv = map[string]string{
	"addr":       "AGENTWIRE_ADDR",
	"data":       "AGENTWIRE_DATA",
	"store":      "AGENTWIRE_STORE",
	"nats":       "AGENTWIRE_NATS",
	"auth":       "AGENTWIRE_AUTH",
	"max-body":   "AGENTWIRE_MAX_BODY",
	"max-event":  "AGENTWIRE_MAX_EVENT",
	"max-batch":  "AGENTWIRE_MAX_BATCH",
	"log-format": "AGENTWIRE_LOG_FORMAT",
	"log-level":  "AGENTWIRE_LOG_LEVEL",
	"bus-ping":   "AGENTWIRE_BUS_PING",
	"bus-pong":   "AGENTWIRE_BUS_PONG",
	// The least time between two background checkpoints of one run.
	"checkpoint-interval": "AGENTWIRE_CHECKPOINT_INTERVAL",
	"allow-origin":        "AGENTWIRE_ALLOW_ORIGIN",
	"state-cache":         "AGENTWIRE_STATE_CACHE",
	"max-streams":         "AGENTWIRE_MAX_STREAMS",
	"tls-cert":            "AGENTWIRE_TLS_CERT",
	"tls-key":             "AGENTWIRE_TLS_KEY",
	"trust-proxy":         "AGENTWIRE_TRUST_PROXY",
	// The jetstream store (serve_jetstream.go).
	"nats-creds":       "AGENTWIRE_NATS_CREDS",
	"nats-replicas":    "AGENTWIRE_NATS_REPLICAS",
	"own-envoy-stream": "AGENTWIRE_OWN_ENVOY_STREAM",
	"envoy-org":        "AGENTWIRE_ENVOY_ORG",
	"no-viewer":        "AGENTWIRE_NO_VIEWER",
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the relay: runs (SSE), bus (WebSocket) and notification lanes on an embedded SQLite store or on NATS JetStream",
		Long: `Run the agentwire relay.

With no flags it stores its data in ./agentwire-data (SQLite file agentwire.db), listens on
127.0.0.1:7420 in local mode (no tokens, org "local", loopback only) and prints its URL.
Every flag has an AGENTWIRE_* environment equivalent (AGENTWIRE_ADDR, AGENTWIRE_DATA, …);
a flag given on the command line wins. SIGINT or SIGTERM stops it gracefully.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyEnv(cmd.Flags(), serveEnv); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:7420", "listen address (local mode only binds loopback)")
	f.StringVar(&o.data, "data", "./agentwire-data", "data directory (SQLite file agentwire.db inside)")
	f.StringVar(&o.store, "store", "sqlite", "store backend: sqlite or jetstream")
	f.StringVar(&o.nats, "nats", "", "NATS URL of an external JetStream cluster (with --store jetstream)")
	f.StringVar(&o.auth, "auth", "", "auth file: a JSON list of hashed bearer tokens, or {\"tokens\": [...], \"sealed_vaults\": [{org, vault_id, epoch}]}; without it the relay runs in local mode")
	f.StringVar(&o.maxBody, "max-body", "4MiB", "largest request body (bytes, or with KiB/MiB/GiB)")
	f.StringVar(&o.maxEvent, "max-event", "1MiB", "largest single event (bytes, or with KiB/MiB/GiB)")
	f.IntVar(&o.maxBatch, "max-batch", relay.DefaultMaxBatch, "most events in one NDJSON request")
	f.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.DurationVar(&o.busPing, "bus-ping", relay.DefaultBusPingInterval, "how often each bus WebSocket is pinged (0 or negative: never)")
	f.DurationVar(&o.busPong, "bus-pong", relay.DefaultBusPingTimeout, "how long a bus ping waits for its pong before the socket is closed (0: the default)")
	f.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate (chain) to serve HTTPS and WSS with, with --tls-key; re-read on SIGHUP")
	f.StringVar(&o.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	f.BoolVar(&o.trustPrx, "trust-proxy", false, "a TLS-terminating proxy is in front: honour its X-Forwarded-Proto and X-Forwarded-For in logs and origin checks")
	f.IntVar(&o.streams, "max-streams", relay.DefaultMaxStreams, "most SSE streams and bus WebSockets open at once; more are answered 429")
	f.StringVar(&o.stateMem, "state-cache", "256MiB", "memory for run states kept between batches (bytes, or with KiB/MiB/GiB; 0: keep none); finished runs are dropped first and reloaded on demand")
	f.StringSliceVar(&o.origins, "allow-origin", nil, "with --auth: a browser origin (https://host[:port]) besides loopback ones and the relay's own whose pages may call the relay; repeat or separate with commas")
	f.BoolVar(&o.noViewer, "no-viewer", false, "do not serve the web viewer at / (the API stays under /v1/)")
	f.DurationVar(&o.ckptMin, "checkpoint-interval", relay.DefaultCheckpointMinInterval, "least time between two background checkpoints of one run (0 or negative: no minimum)")
	o.js.register(f)
	return cmd
}

// applyEnv sets every flag that was not given explicitly from its environment variable.
func applyEnv(flags *pflag.FlagSet, env map[string]string) error {
	for name, variable := range env {
		f := flags.Lookup(name)
		if f == nil || f.Changed {
			continue
		}
		if v, ok := os.LookupEnv(variable); ok && v != "" {
			if err := flags.Set(name, v); err != nil {
				return usageError("invalid %s %q: %v", variable, v, err)
			}
		}
	}
	return nil
}

// parseSize parses a byte count with an optional binary suffix (KiB, MiB, GiB; K, M, G too).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%q is not a positive size", s)
	}
	return n * mult, nil
}

// runServe runs the relay until ctx ends, then shuts it down gracefully: SSE streams end,
// in-flight requests finish, the store is flushed and closed.
func runServe(ctx context.Context, o serveOptions, stdout, stderr io.Writer) error {
	switch o.store {
	case "sqlite":
		if o.nats != "" {
			return usageError("--nats needs --store jetstream")
		}
	case "jetstream":
		if err := o.js.check(o.nats); err != nil {
			return usageError("%v", err)
		}
	default:
		return usageError("unknown --store %q (want sqlite or jetstream)", o.store)
	}
	if o.busPong < 0 {
		return usageError("invalid --bus-pong %v: a pong timeout cannot be negative", o.busPong)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usageError("unknown --log-level %q (want debug, info, warn or error)", o.logLevel)
	}
	var handler slog.Handler
	switch o.logFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})
	case "json":
		handler = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level})
	default:
		return usageError("unknown --log-format %q (want text or json)", o.logFormat)
	}
	log := slog.New(handler)
	maxBody, err := parseSize(o.maxBody)
	if err != nil {
		return usageError("invalid --max-body: %v", err)
	}
	maxEvent, err := parseSize(o.maxEvent)
	if err != nil || maxEvent > 1<<31 {
		return usageError("invalid --max-event: %q is not a positive size below 2GiB", o.maxEvent)
	}
	// relay.Config.StateCache: 0 is the default, negative keeps none.
	var stateCache int64
	switch strings.TrimSpace(o.stateMem) {
	case "":
	case "0":
		stateCache = -1
	default:
		if stateCache, err = parseSize(o.stateMem); err != nil {
			return usageError("invalid --state-cache: %v", err)
		}
	}
	if o.streams < 0 {
		return usageError("invalid --max-streams %d: must be positive", o.streams)
	}
	if o.maxBatch <= 0 {
		return usageError("invalid --max-batch %d: must be positive", o.maxBatch)
	}
	var auth *relay.Auth
	if o.auth != "" {
		if auth, err = relay.LoadAuth(o.auth); err != nil {
			return usageError("cannot use --auth: %v", err)
		}
	}
	if len(o.origins) > 0 && auth == nil {
		return usageError("--allow-origin needs --auth: without it every request has every right, so only pages served from loopback may call the relay")
	}
	for _, origin := range o.origins {
		if _, ok := localnet.NormalizeOrigin(origin); !ok {
			return usageError("invalid --allow-origin %q: want scheme://host[:port] with http or https and nothing after", origin)
		}
	}
	if err := relay.CheckListenAddress(o.addr, auth != nil); err != nil {
		return usageError("%v", err)
	}
	var certs *certReloader
	switch {
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return usageError("--tls-cert and --tls-key go together")
	case o.tlsCert != "":
		if certs, err = newCertReloader(o.tlsCert, o.tlsKey); err != nil {
			return usageError("cannot use --tls-cert/--tls-key: %v", err)
		}
	}
	if err := os.MkdirAll(o.data, 0o750); err != nil {
		return usageError("cannot create data directory: %v", err)
	}

	var viewer http.Handler
	if !o.noViewer {
		v, err := web.Handler()
		if err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		viewer = v
	}
	metrics := relay.NewMetrics()
	var st relayStore
	if o.store == "jetstream" {
		nm := newNATSMetrics(metrics)
		if st, err = o.js.open(o.nats, o.data, nm.observe); err == nil {
			nm.watch(st.(*jetstreamStore).Conn())
		}
	} else {
		st, err = sqlite.Open(filepath.Join(o.data, sqlite.DefaultFileName), sqlite.Options{
			OnCommit: func(ci sqlite.CommitInfo) {
				metrics.ObserveCommit(ci.Duration, ci.Events, ci.Err)
			},
			OnWALCheckpoint: func(ci sqlite.WALCheckpointInfo) {
				metrics.ObserveWALCheckpoint(ci.Duration, ci.Frames, ci.Err)
			},
		})
	}
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("cannot open store: %v", err)}
	}
	srv, err := relay.New(relay.Config{
		Store:        st,
		Auth:         auth,
		Limits:       relay.Limits{MaxBody: maxBody, MaxEvent: int(maxEvent), MaxBatch: o.maxBatch, MaxStreams: o.streams},
		TLS:          tlsConfig(certs),
		TrustProxy:   o.trustPrx,
		AllowOrigins: o.origins,
		StateCache:   stateCache,
		Logger:       log,
		Metrics:      metrics,
		// relay.Config: 0 means the default, a negative interval no pings.
		BusPingInterval: pingInterval(o.busPing),
		// 0 or less on the command line means no minimum (in relay.Config 0 is the default).
		CheckpointMinInterval: pingInterval(o.ckptMin),
		BusPingTimeout:        o.busPong,
		Viewer:                viewer,
		StoreRecheck:          storeRecheck(o.store),
	})
	if err != nil {
		_ = st.Close()
		return &exitError{code: 1, msg: err.Error()}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		_ = st.Close()
		return &exitError{code: 1, msg: fmt.Sprintf("cannot listen: %v", err)}
	}
	url := "http://" + ln.Addr().String()
	if certs != nil {
		url = "https://" + ln.Addr().String()
	}
	mode := "local mode"
	if auth != nil {
		mode = fmt.Sprintf("auth file %s, %d tokens", o.auth, auth.Len())
	}
	fmt.Fprintf(stdout, "agentwire relay serving %s (data %s, %s)\n", url, st.Path(), mode)
	log.Info("relay started", "url", url, "store", o.store, "db", st.Path(), "auth", auth != nil)
	if auth != nil && certs == nil && !o.trustPrx && !loopbackAddr(o.addr) {
		log.Warn("bearer tokens travel in clear text: serve HTTPS with --tls-cert and --tls-key, or put a TLS-terminating proxy in front and pass --trust-proxy", "addr", o.addr)
	}
	if auth != nil || certs != nil {
		wctx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go watchReloads(wctx, srv, o.auth, certs, log)
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	log.Info("relay shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shutErr := srv.Shutdown(sctx)
	if serveErr == nil {
		serveErr = <-served
	}
	closeErr := st.Close()
	if err := errors.Join(serveErr, shutErr, closeErr); err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("relay stopped with an error: %v", err)}
	}
	log.Info("relay stopped")
	return nil
}

// tlsConfig is the relay's TLS configuration, nil without --tls-cert.
func tlsConfig(c *certReloader) *tls.Config {
	if c == nil {
		return nil
	}
	return c.config()
}

// loopbackAddr reports whether a listen address binds loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pingInterval maps a duration flag where 0 (or less) means "off" (--bus-ping,
// --checkpoint-interval) to the relay.Config field, where 0 means the default and negative
// means off.
func pingInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
