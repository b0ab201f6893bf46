package relay

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the relay's Prometheus series (relay.md §2 Operations): requests by route and
// code, events ingested, duplicates, refusals by code, subscribers, fan-out lag and the store
// commit latency histogram. Each Metrics owns its registry, so several relays (tests) can
// live in one process.
type Metrics struct {
	reg *prometheus.Registry

	requests         *prometheus.CounterVec
	ingested         prometheus.Counter
	streamed         prometheus.Counter
	duplicates       prometheus.Counter
	refusals         *prometheus.CounterVec
	conflicts        prometheus.Counter
	subscribers      prometheus.Gauge
	slowDisconnects  prometheus.Counter
	fanoutLag        *countedHistogram
	commit           prometheus.Histogram
	commitEvents     prometheus.Histogram
	commitErrors     prometheus.Counter
	checkpoints      prometheus.Counter
	checkpointErrors prometheus.Counter

	// The store's WAL (the sqlite backend's background checkpointer).
	walCheckpoints      prometheus.Histogram
	walFrames           prometheus.Gauge
	walCheckpointErrors prometheus.Counter

	// The byte-bounded caches (relay.md §3).
	stateCacheBytes     prometheus.Gauge
	stateCacheRuns      prometheus.Gauge
	stateCacheEvictions prometheus.Counter

	revoked prometheus.Counter

	// Bus and notification lanes (relay.md §2 Operations: counted like the runs lane).
	envelopes  *prometheus.CounterVec
	messages   *prometheus.CounterVec
	busSockets prometheus.Gauge
	receipts   prometheus.Counter
	sweeps     *prometheus.CounterVec
}

// NewMetrics creates the relay's series on a fresh registry, together with the Go runtime
// and process collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentwire_http_requests_total",
			Help: "HTTP requests answered, by route pattern and status code.",
		}, []string{"route", "code"}),
		ingested: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentwire_run_events_ingested_total",
			Help: "Run events stored (validated, reduced and durably committed).",
		}),
		streamed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentwire_run_batches_streamed_total",
			Help: "Run batches stored through the streamed path (parsed and reduced while the store inserted them).",
		}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentwire_run_event_duplicates_total",
			Help: "Exact duplicate run events answered as no-ops.",
		}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentwire_run_event_refusals_total",
			Help: "Refused run-event requests, by error code.",
		}, []string{"code"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentwire_store_conflicts_total",
			Help: "Optimistic-concurrency conflicts met by the runs lane (each one retried).",
		}),
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentwire_sse_subscribers",
			Help: "Open SSE event streams.",
		}),
		slowDisconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentwire_sse_slow_disconnects_total",
			Help: "SSE subscribers disconnected because their queue overflowed.",
		}),
		fanoutLag: newCountedHistogram("agentwire_fanout_lag_seconds",
			"Time from a live event's commit to its SSE frame being written to a subscriber.",
			prometheus.ExponentialBuckets(0.0001, 2, 16)),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "agentwire_store_commit_seconds",
			Help:    "Store group-commit latency (BEGIN to durable COMMIT).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		commitEvents: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "agentwire_store_commit_events",
			Help:    "Events stored per group commit.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 9),
		}),
		commitErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentwire_store_commit_errors_total",
			Help: "Group commits that failed as a whole.",
		}),
		walCheckpoints: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "agentwire_store_wal_checkpoint_seconds",
			Help:    "Duration of the store's background WAL checkpoints (copy back into the database file and fsyncs).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		walFrames: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentwire_store_wal_frames",
			Help: "Frames in the store's WAL after its last background checkpoint (it starts again from 0 past about 4,096; growing beyond means readers hold it).",
		}),
		walCheckpointErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentwire_store_wal_checkpoint_errors_total",
			Help: "Background WAL checkpoints that failed.",
		}),
	}
	m.envelopes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentwire_envelopes_total",
		Help: "Envelopes published, by outcome: stored, duplicate (answered with the original seq) or live (topics outside ENVOY_NOTIFICATIONS's subject list, never stored).",
	}, []string{"outcome"})
	m.messages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentwire_bus_messages_total",
		Help: "Hive messages and publishes sent, by outcome: stored or replayed (a resent client_msg_id), publish_stored or publish_replayed.",
	}, []string{"outcome"})
	m.busSockets = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "agentwire_bus_sockets",
		Help: "Open bus WebSockets.",
	})
	m.receipts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agentwire_bus_receipt_states_total",
		Help: "Message receipt states newly applied (one message.status each).",
	})
	m.sweeps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentwire_sweeper_items_total",
		Help: "Items handled by the retention sweeper by kind: message, publish, handoff, envelope, task_proposal, announcement, session_key.",
	}, []string{"kind"})
	m.checkpoints = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agentwire_run_checkpoints_total",
		Help: "Run snapshot checkpoints written in the background (stored, or obsolete because a newer one was there).",
	})
	m.checkpointErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agentwire_run_checkpoint_errors_total",
		Help: "Background run checkpoints the store refused or failed to write (readers re-reduce more events until the next one).",
	})
	m.stateCacheBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "agentwire_state_cache_bytes",
		Help: "Estimated heap of the reducer states cached between batches (bounded by --state-cache).",
	})
	m.stateCacheRuns = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "agentwire_state_cache_runs",
		Help: "Runs whose reducer state is cached between batches.",
	})
	m.stateCacheEvictions = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agentwire_state_cache_evictions_total",
		Help: "Reducer states dropped to keep the cache within its byte budget (finished runs first); a dropped run is reloaded from its checkpoint on demand.",
	})
	m.revoked = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "agentwire_streams_revoked_total",
		Help: "Streams and bus sockets ended because their token was removed, expired or lost the right.",
	})
	reg.MustRegister(m.stateCacheBytes, m.stateCacheRuns, m.stateCacheEvictions, m.revoked)
	reg.MustRegister(m.checkpoints, m.checkpointErrors)
	reg.MustRegister(m.envelopes, m.messages, m.busSockets, m.receipts, m.sweeps)
	reg.MustRegister(m.requests, m.ingested, m.streamed, m.duplicates, m.refusals, m.conflicts, m.subscribers,
		m.slowDisconnects, m.fanoutLag, m.commit, m.commitEvents, m.commitErrors,
		m.walCheckpoints, m.walFrames, m.walCheckpointErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry the series live on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the Prometheus text exposition (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveCommit records one store group commit (the sqlite backend's OnCommit hook feeds it:
// `agentwire_store_commit_seconds`).
func (m *Metrics) ObserveCommit(d time.Duration, events int, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.commitErrors.Inc()
		return
	}
	m.commit.Observe(d.Seconds())
	m.commitEvents.Observe(float64(events))
}

// ObserveWALCheckpoint records one background WAL checkpoint of the store (the sqlite
// backend's OnWALCheckpoint hook feeds it): its duration and the WAL's size after it.
func (m *Metrics) ObserveWALCheckpoint(d time.Duration, frames int, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.walCheckpointErrors.Inc()
		return
	}
	m.walCheckpoints.Observe(d.Seconds())
	m.walFrames.Set(float64(frames))
}

func (m *Metrics) request(route string, code int) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
}
