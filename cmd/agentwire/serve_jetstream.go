package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/store"
)

// relayStore is a store serve can run on and name in its first line.
type relayStore interface {
	store.Store
	Path() string
}

// jetstreamFlags are serve's flags of the jetstream store.
type jetstreamFlags struct {
	creds          string
	replicas       int
	ownEnvoyStream bool
	envoyOrg       string
}

func (j *jetstreamFlags) register(f *pflag.FlagSet) {
	f.StringVar(&j.creds, "nats-creds", "", "NATS credentials file for --nats")
	f.IntVar(&j.replicas, "nats-replicas", 0, "replicas of the streams the relay creates on --nats (0: 3 when the cluster has 3 or more servers, else 1)")
	f.BoolVar(&j.ownEnvoyStream, "own-envoy-stream", false, "create or update the ENVOY_NOTIFICATIONS stream on --nats instead of only checking it")
	f.StringVar(&j.envoyOrg, "envoy-org", "", "org whose envelopes dedupe against Legion's own publishers on ENVOY_NOTIFICATIONS, and to which envelopes without an org belong")
}

// natsMetrics are the series /metrics gains on the jetstream store: the publish-to-
// acknowledgement latency of every atomic batch by stream (the runs stream's batches also feed
// the relay's store commit histogram), publish errors, and the connection's reconnects and
// state.
type natsMetrics struct {
	relay   *relay.Metrics
	publish *prometheus.HistogramVec
	errors  *prometheus.CounterVec
}

func newNATSMetrics(m *relay.Metrics) *natsMetrics {
	n := &natsMetrics{
		relay: m,
		publish: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentwire_nats_publish_seconds",
			Help:    "Time from sending an atomic batch (or an envelope) to the stream's acknowledgement, by JetStream stream.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"stream"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentwire_nats_publish_errors_total",
			Help: "Atomic batches (or envelopes) the stream did not acknowledge, by JetStream stream.",
		}, []string{"stream"}),
	}
	m.Registry().MustRegister(n.publish, n.errors)
	return n
}

// observe is the store's publish hook.
func (n *natsMetrics) observe(p jetstream.PublishInfo) {
	if p.Stream == jetstream.RunsStream {
		n.relay.ObserveCommit(p.Duration, p.Events, p.Err)
	}
	if p.Err != nil {
		n.errors.WithLabelValues(p.Stream).Inc()
		return
	}
	n.publish.WithLabelValues(p.Stream).Observe(p.Duration.Seconds())
}

// watch adds the connection's series once the store is open.
func (n *natsMetrics) watch(nc *nats.Conn) {
	n.relay.Registry().MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "agentwire_nats_reconnects_total",
			Help: "Times the relay's NATS connection reconnected.",
		}, func() float64 { return float64(nc.Stats().Reconnects) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agentwire_nats_connected",
			Help: "1 while the relay's NATS connection is up, else 0.",
		}, func() float64 {
			if nc.IsConnected() {
				return 1
			}
			return 0
		}),
	)
}

// storeRecheck is the relay's StoreRecheck for the store kind: the jetstream store's (its
// wake-ups carry other relays' commits); 0, the relay's default, for sqlite.
func storeRecheck(kind string) time.Duration {
	if kind == "jetstream" {
		return jetstream.RelayStoreRecheck
	}
	return 0
}

// jetstreamStore is the jetstream store with what serve prints and the connection it owns.
type jetstreamStore struct {
	*jetstream.Store
	where string
	nc    *nats.Conn // closed after the store; nil for the embedded server, which the store owns
}

func (s *jetstreamStore) Path() string { return s.where }

func (s *jetstreamStore) Close() error {
	err := s.Store.Close()
	if s.nc != nil {
		s.nc.Close()
	}
	return err
}

// check refuses flag combinations that cannot work, before anything is opened.
func (j *jetstreamFlags) check(url string) error {
	switch {
	case j.replicas < 0 || j.replicas > 5:
		return fmt.Errorf("invalid --nats-replicas %d: want 0 to 5", j.replicas)
	case url == "" && j.creds != "":
		return fmt.Errorf("--nats-creds needs --nats")
	case url == "" && j.replicas > 1:
		return fmt.Errorf("--nats-replicas %d needs --nats: the embedded server is a single node", j.replicas)
	}
	return nil
}

// open opens the jetstream store: on the cluster at url, or, without one, on a single-node
// server embedded in the process that stores under dataDir.
func (j *jetstreamFlags) open(url, dataDir string, onPublish func(jetstream.PublishInfo)) (relayStore, error) {
	opts := jetstream.Options{EnvoyOrg: j.envoyOrg, OwnEnvoyStream: j.ownEnvoyStream, Replicas: j.replicas, OnPublish: onPublish}
	if url == "" {
		s, err := jetstream.OpenEmbedded(dataDir, jetstream.EmbeddedOptions{Store: opts})
		if err != nil {
			return nil, err
		}
		return &jetstreamStore{Store: s, where: filepath.Join(dataDir, jetstream.EmbeddedDir) + " (embedded NATS JetStream)"}, nil
	}
	return j.openWith(url, opts)
}

// openWith connects to the cluster at url and opens the store on it with opts (Replicas 0: 3
// when the cluster has 3 or more servers, else 1).
func (j *jetstreamFlags) openWith(url string, opts jetstream.Options) (relayStore, error) {
	copts := []nats.Option{nats.Name("agentwire relay"), nats.MaxReconnects(-1)}
	if j.creds != "" {
		copts = append(copts, nats.UserCredentials(j.creds))
	}
	nc, err := nats.Connect(url, copts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	if opts.Replicas == 0 {
		opts.Replicas = 1
		if len(nc.Servers()) >= 3 {
			opts.Replicas = 3
		}
	}
	s, err := jetstream.Open(nc, opts)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &jetstreamStore{Store: s, where: url + " (NATS JetStream)", nc: nc}, nil
}
