package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/relay"
)

// Benchmarks of the bus and notification lanes (issue 7), meant to be read beside
// BenchmarkIngest and BenchmarkSSELatency of the runs lane in the same `go test -bench . ./bench`
// run:
//
//   - hive messages end to end over real WebSockets are BenchmarkBusThroughput's (bus_test.go);
//   - BenchmarkNotifyLatency: envelopes published over HTTP on a fixed schedule (1,000/s) by 8
//     publishers while 10 SSE subscribers stream `notifications.agent.>`; reported: the
//     publish→stream latency p50/p99 of every (envelope, subscriber) pair, from the start of
//     its POST to the subscriber having parsed its frame, and published/s.

const benchChannel = "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/bench"

func percentile(all []time.Duration, p float64) float64 {
	slices.Sort(all)
	return float64(all[min(int(p*float64(len(all))), len(all)-1)].Microseconds()) / 1000
}

func BenchmarkNotifyLatency(b *testing.B) {
	const publishers, subscribers, rate = 8, 10, 1000
	_, ts, stop := serveRelay(b)
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: publishers + subscribers + 4}
	defer tr.CloseIdleConnections()
	client := &relay.Client{BaseURL: ts.URL, HTTP: &http.Client{Transport: tr}}

	n := b.N
	sent := make([]atomic.Int64, n)
	samples := make([][]time.Duration, subscribers)
	var ready, done sync.WaitGroup
	for i := range subscribers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			lat := make([]time.Duration, 0, n)
			first := true
			got := 0
			_ = client.StreamNotifications(ctx, relay.NotifyStreamOptions{Subjects: []string{"notifications.agent.>"}}, func(f relay.SSEFrame) error {
				if first { // the heartbeat-free stream's first frame is the warm-up envelope
					first = false
					ready.Done()
					return nil
				}
				if f.Comment != "" {
					return nil
				}
				e, ps := envelope.Decode(f.Data)
				if len(ps) > 0 {
					return ps.Err()
				}
				k, _ := strconv.Atoi(e.SourceEventID)
				lat = append(lat, time.Duration(time.Now().UnixNano()-sent[k].Load()))
				if got++; got == n {
					return errDone
				}
				return nil
			})
			samples[i] = lat
		}()
	}
	publish := func(k int, key string) {
		e := envelope.Envelope{EventID: envelope.NewEventID(), Source: envelope.SourceAgent, SourceEventID: strconv.Itoa(k),
			Topic: "notifications.agent.ses_" + strconv.Itoa(k%16), DedupeKey: key, IssuedAt: envelope.NowMillis(),
			PayloadSummary: "bench", TraceID: "t"}
		if _, err := client.PublishEnvelope(ctx, e.AppendJSON(nil)); err != nil {
			b.Error(err)
		}
	}
	publish(-1, "warm-up") // every subscriber gets it first: then all are live
	ready.Wait()

	interval := time.Second / rate
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range publishers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				time.Sleep(time.Until(start.Add(time.Duration(k) * interval))) // a fixed publish schedule
				sent[k].Store(time.Now().UnixNano())
				publish(k, "publish."+fmt.Sprintf("%032x", k))
			}
		})
	}
	wg.Wait()
	publishTime := time.Since(start)
	if !waitWithin(&done, 120*time.Second) {
		b.Fatal("subscribers did not receive every envelope")
	}
	b.StopTimer()
	var all []time.Duration
	for _, s := range samples {
		all = append(all, s...)
	}
	if len(all) != n*subscribers {
		b.Fatalf("%d deliveries, want %d", len(all), n*subscribers)
	}
	b.ReportMetric(percentile(all, 0.50), "p50-ms")
	b.ReportMetric(percentile(all, 0.99), "p99-ms")
	b.ReportMetric(float64(n)/publishTime.Seconds(), "published/s")
}
