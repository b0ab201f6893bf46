package clustertest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

// singleRelay serves a relay over st on loopback.
func singleRelay(b *testing.B, st store.Store, recheck time.Duration) *node {
	srv, err := relay.New(relay.Config{Store: st, Logger: quietLogger(), SweepInterval: -1, StoreRecheck: recheck})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	n := &node{srv: srv, http: ts, client: &relay.Client{BaseURL: ts.URL, HTTP: ts.Client()}}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ts.CloseClientConnections()
		ts.Close()
		_ = st.Close()
	})
	return n
}

// BenchmarkClusterIngest measures durable ingest through the relays' HTTP API (NDJSON batches
// of 1, 100 and 1000 synthetic events, parsed, reduced and stored): 12 writers, each on its own
// run, spread over the relays, on SQLite, on the embedded single-node JetStream, and on the
// 3-node cluster (3 replicas) through 1 and through 3 relays. events/s = events acknowledged /
// elapsed. Everything (relays, NATS servers, writers) shares the machine's cores.
func BenchmarkClusterIngest(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		for _, kind := range []string{"sqlite", "embedded", "cluster-1relay", "cluster-3relays"} {
			b.Run(fmt.Sprintf("batch=%d/%s", batch, kind), func(b *testing.B) {
				var relays []*node
				switch kind {
				case "sqlite":
					st, err := sqlite.Open(filepath.Join(b.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
					if err != nil {
						b.Fatal(err)
					}
					relays = []*node{singleRelay(b, st, 0)}
				case "embedded":
					st, err := jetstream.OpenEmbedded(b.TempDir(), jetstream.EmbeddedOptions{})
					if err != nil {
						b.Fatal(err)
					}
					relays = []*node{singleRelay(b, st, jetstream.RelayStoreRecheck)}
				default:
					c := startCluster(b)
					relays = []*node{c.startRelay(0, jetstream.Options{})}
					if kind == "cluster-3relays" {
						relays = append(relays, c.startRelay(1, jetstream.Options{}), c.startRelay(2, jetstream.Options{}))
					}
				}
				clusterIngest(b, relays, batch, 12)
			})
		}
	}
}

func clusterIngest(b *testing.B, relays []*node, batch, writers int) {
	ctx := context.Background()
	perWriter := (b.N + writers - 1) / writers
	bodies := make([][][]byte, writers)
	for w := range writers {
		lines := synthLines(b, perWriter*batch+1, int64(w+1), fmt.Sprintf("bench-%d", w))
		for i := range perWriter {
			bodies[w] = append(bodies[w], ndjson(lines[i*batch:(i+1)*batch]))
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	b.ReportAllocs()
	b.ResetTimer()
	for w := range writers {
		wg.Go(func() {
			c := relays[w%len(relays)].client
			for i := 0; i < perWriter && next.Add(1) <= int64(b.N); i++ {
				if _, err := c.Append(ctx, fmt.Sprintf("bench-%d", w), relay.MediaNDJSON, bodies[w][i]); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)*float64(batch)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkClusterDeliver measures publish→deliver latency across relays on the 3-node cluster:
// one event at a time is posted through relay 0 while an SSE reader on relay 1 follows the run,
// and each event's latency is from the start of its POST to its frame's arrival (the next
// event is posted after the frame arrived). p50-ms and p99-ms are over b.N events.
func BenchmarkClusterDeliver(b *testing.B) {
	c := startCluster(b)
	relays := []*node{c.startRelay(0, jetstream.Options{}), c.startRelay(1, jetstream.Options{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	id := "deliver-" + strconv.Itoa(b.N)
	lines := synthLines(b, b.N+2, 7, id)
	if _, err := relays[0].client.Append(ctx, id, relay.MediaNDJSON, ndjson(lines[:1])); err != nil {
		b.Fatal(err)
	}
	arrived := make(chan time.Time, 1)
	go func() {
		_ = relays[1].client.Stream(ctx, id, relay.StreamOptions{After: 1, Follow: true}, func(f relay.SSEFrame) error {
			if f.Comment == "" {
				arrived <- time.Now()
			}
			return nil
		})
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, err := relays[0].client.Append(ctx, id, relay.MediaNDJSON, ndjson(lines[1+i:2+i])); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-arrived:
			lat = append(lat, at.Sub(start))
		case <-time.After(30 * time.Second):
			b.Fatalf("event %d not delivered across relays within 30s", i)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[min(int(p*float64(len(lat))), len(lat)-1)]) / 1e6 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
