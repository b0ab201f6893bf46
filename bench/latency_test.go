package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwire/agentwire/relay"
)

// latencyCases are BenchmarkSSELatency's (subscribers, fixed publish rate in events/s); the
// last one shows the 10k events/s rate without the 100-way fan-out.
var latencyCases = []struct{ subscribers, rate int }{{100, 1000}, {100, 10000}, {10, 10000}}

// BenchmarkSSELatency produces b.N events for one run at a fixed rate and publishes them with
// NDJSON POSTs over loopback HTTP while 100 SSE subscribers follow the run, and reports the
// publish→deliver latency of every (event, subscriber) pair: from the event's production
// instant to the subscriber having parsed its frame. Subscribers cut for
// falling behind (relay.md §3) resume from their last id and count in `resumes`.
func BenchmarkSSELatency(b *testing.B) {
	for _, c := range latencyCases {
		b.Run(fmt.Sprintf("subscribers=%d/rate=%d", c.subscribers, c.rate), func(b *testing.B) {
			benchLatency(b, c.subscribers, c.rate)
		})
	}
}

func benchLatency(b *testing.B, subscribers, rate int) {
	srv, closeRelay := newRelay(b)
	defer closeRelay()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: subscribers + 4, ReadBufferSize: 64 << 10}
	defer tr.CloseIdleConnections()
	client := &relay.Client{BaseURL: ts.URL, HTTP: &http.Client{Transport: tr}}

	total := b.N + 2 // run.started and message.started come first, untimed
	w := &writerState{id: 0}
	run, lines := w.batch(min(total, runLength))
	for len(lines) < total { // long benches: keep appending deltas to the same run
		lines = append(lines, eventLine(nil, run, int64(len(lines)+1)))
	}
	if _, e := srv.Append(ctx, relay.LocalOrg, run, lines[:2]); e != nil {
		b.Fatal(e)
	}
	sent := make([]atomic.Int64, total+1) // unix nanos when event seq was produced
	posts := 0
	var postDur []time.Duration

	var resumes atomic.Int64
	samples := make([][]time.Duration, subscribers)
	var ready, done sync.WaitGroup
	for i := range subscribers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			cursor := ""
			first := true
			lat := make([]time.Duration, 0, b.N)
			for {
				err := client.Stream(ctx, run, relay.StreamOptions{LastEventID: cursor, Follow: true}, func(f relay.SSEFrame) error {
					if f.Comment != "" {
						return nil
					}
					seq, _ := strconv.Atoi(f.ID)
					cursor = f.ID
					if seq == 2 && first {
						first = false
						ready.Done()
					}
					if seq > 2 {
						if at := sent[seq].Load(); at != 0 {
							lat = append(lat, time.Duration(time.Now().UnixNano()-at))
						}
					}
					if seq == total {
						return errDone
					}
					return nil
				})
				if err == errDone || ctx.Err() != nil {
					break
				}
				resumes.Add(1)
			}
			samples[i] = lat
		}()
	}
	ready.Wait()

	// Event seq is produced at start + (seq-3)/rate. One run's events must be posted in
	// order, one request at a time, and each answer waits for its durable commit; so the
	// publisher posts whatever has been produced and not yet posted, like a buffering producer.
	// Latency counts from the production instant, so it includes that buffering.
	interval := time.Second / time.Duration(rate)
	b.ResetTimer()
	start := time.Now()
	for i := 2; i < total; {
		produced := 2 + int(time.Since(start)/interval) + 1
		if produced <= i {
			time.Sleep(time.Until(start.Add(time.Duration(i-2) * interval)))
			continue
		}
		end := min(produced, total)
		for s := i + 1; s <= end; s++ {
			sent[s].Store(start.Add(time.Duration(s-3) * interval).UnixNano())
		}
		t0 := time.Now()
		if _, err := client.Append(ctx, run, relay.MediaNDJSON, joinLines(lines[i:end])); err != nil {
			b.Fatal(err)
		}
		postDur = append(postDur, time.Since(t0))
		posts++
		i = end
	}
	publishTime := time.Since(start)
	waitDone := make(chan struct{})
	go func() { done.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(60 * time.Second):
		b.Fatal("subscribers did not receive every event")
	}
	b.StopTimer()
	var all []time.Duration
	for _, s := range samples {
		all = append(all, s...)
	}
	slices.Sort(all)
	if len(all) == 0 {
		b.Fatal("no samples")
	}
	pct := func(p float64) float64 {
		return float64(all[min(int(p*float64(len(all))), len(all)-1)].Microseconds()) / 1000
	}
	slices.Sort(postDur)
	b.ReportMetric(float64(postDur[len(postDur)/2].Microseconds())/1000, "post-p50-ms")
	b.ReportMetric(float64(postDur[len(postDur)*99/100].Microseconds())/1000, "post-p99-ms")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/publishTime.Seconds(), "published/s")
	b.ReportMetric(float64(len(all))/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(resumes.Load()), "resumes")
	b.ReportMetric(float64(b.N)/float64(posts), "events/post")
}

var errDone = fmt.Errorf("done")
