package jetstream

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// EmbeddedOptions configures the single-node server [OpenEmbedded] starts in process.
type EmbeddedOptions struct {
	// Listen, when true, also serves NATS clients on Host:Port (loopback and a random port by
	// default), so that other processes or store instances can share the server. Without it
	// the server accepts in-process connections only.
	Listen bool
	// Host and Port are the client listener's address when Listen is set; empty and 0 mean
	// 127.0.0.1 and a random free port.
	Host string
	Port int
	// Store configures the store opened over the server.
	Store Options
}

// EmbeddedDir is the directory under a data dir where the embedded server keeps its streams.
const EmbeddedDir = "nats"

// StartServer starts a single-node JetStream server that stores under dir/EmbeddedDir with
// file storage and an fsync for every write (sync_interval: always, relay.md §5.1.7: a 2xx means
// the write is on disk, as on SQLite). It returns once the server accepts connections.
func StartServer(dir string, o EmbeddedOptions) (*server.Server, error) {
	opts := &server.Options{
		ServerName:         "agentwire",
		JetStream:          true,
		StoreDir:           filepath.Join(dir, EmbeddedDir),
		SyncAlways:         true,
		SyncInterval:       2 * time.Minute, // unused with SyncAlways; set so no default overrides it
		JetStreamMaxMemory: -1,
		JetStreamMaxStore:  -1,
		NoLog:              true,
		NoSigs:             true,
		DontListen:         !o.Listen,
		Host:               o.Host,
		Port:               o.Port,
		MaxPayload:         1 << 20,
	}
	if o.Listen {
		if opts.Host == "" {
			opts.Host = "127.0.0.1"
		}
		if opts.Port == 0 {
			opts.Port = server.RANDOM_PORT
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("jetstream: embedded server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("jetstream: embedded server did not start within 30s")
	}
	return ns, nil
}

// OpenEmbedded starts a single-node server storing under dir (see [StartServer]) and opens a
// store over an in-process connection to it. The store owns the server: Close shuts it down
// after closing the store, so the data dir can be reopened by the next OpenEmbedded.
func OpenEmbedded(dir string, o EmbeddedOptions) (*Store, error) {
	ns, err := StartServer(dir, o)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Name("agentwire embedded"), nats.MaxReconnects(-1))
	if err != nil {
		ns.Shutdown()
		return nil, fmt.Errorf("jetstream: connect to the embedded server: %w", err)
	}
	so := o.Store
	if so.Replicas == 0 {
		so.Replicas = 1
	}
	// The embedded server is agentwire's alone: it owns ENVOY_NOTIFICATIONS.
	so.OwnEnvoyStream = true
	s, err := open(nc, so, ns)
	if err != nil {
		nc.Close()
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, err
	}
	return s, nil
}
