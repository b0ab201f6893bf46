package bench

import (
	"context"
	"fmt"
	"github.com/agentwire/agentwire/internal/cputime"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwire/agentwire/relay"
)

// latencyCases are BenchmarkSSELatency's shapes: runs followed at once, SSE subscribers per
// run, and the fixed total publish rate in events/s (split evenly over the runs).
//
//   - 1 run × 100 subscribers at 1,000 and 10,000 events/s: the fan-out (at 10,000
//     events/s that is 1,000,000 deliveries/s, all on this machine's two cores, subscribers
//     included);
//   - 1 run × 10 subscribers at 10,000 events/s: the rate without the 100-way fan-out;
//   - 100 runs × 1 subscriber at 10,000 events/s in total: 100 subscribers each following its
//     own run (one agent UI per run), 10,000 deliveries/s.
var latencyCases = []struct{ runs, subscribers, rate int }{
	{1, 100, 1000}, {1, 100, 10000}, {1, 10, 10000}, {100, 1, 10000},
}

// BenchmarkSSELatency produces b.N events at a fixed total rate, spread over the runs, posts
// them with NDJSON POSTs over loopback HTTP (each run's producer posts, in order, whatever it
// has produced and not yet posted, one request at a time, since each answer waits for its
// durable commit) while SSE subscribers follow the runs, and reports the publish→deliver
// latency of every (event, subscriber) pair: from the event's production instant (so the
// producer's buffering while a post is in flight counts) to the subscriber having parsed its
// frame. Subscribers cut for falling behind (relay.md §3) resume from their last id and count
// in `resumes`. pub-p50/p99 measure the same deliveries from the instant the POST carrying the
// event was sent (publish → deliver without the producer's buffering: an event produced while
// the previous POST of its run is in flight waits for its answer, since one run's batches are
// posted in order). post-p50/p99 are the POST round trips.
func BenchmarkSSELatency(b *testing.B) {
	for _, c := range latencyCases {
		b.Run(fmt.Sprintf("runs=%d/subscribers=%d/rate=%d", c.runs, c.subscribers, c.rate), func(b *testing.B) {
			benchLatency(b, c.runs, c.subscribers, c.rate)
		})
	}
}

// latencyRun is one run of the latency bench: its events and their production instants.
type latencyRun struct {
	id     string
	lines  [][]byte
	sent   []atomic.Int64 // unix nanos when event seq was produced (index seq)
	posted []atomic.Int64 // unix nanos when the POST carrying event seq was sent
}

func benchLatency(b *testing.B, runs, subscribers, rate int) {
	srv, ts, stop := serveRelay(b)
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: runs*subscribers + runs + 4, ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	defer tr.CloseIdleConnections()
	client := &relay.Client{BaseURL: ts.URL, HTTP: &http.Client{Transport: tr}}

	perRun := (b.N + runs - 1) / runs
	rs := make([]*latencyRun, runs)
	for i := range rs {
		total := perRun + 2 // run.started and message.started come first, untimed
		w := &writerState{id: i}
		id, lines := w.batch(min(total, runLength))
		for len(lines) < total { // long benches: keep appending deltas to the same run
			lines = append(lines, eventLine(nil, id, int64(len(lines)+1)))
		}
		if _, e := srv.Append(ctx, relay.LocalOrg, id, lines[:2]); e != nil {
			b.Fatal(e)
		}
		rs[i] = &latencyRun{id: id, lines: lines, sent: make([]atomic.Int64, total+1), posted: make([]atomic.Int64, total+1)}
	}

	var resumes atomic.Int64
	samples := make([][]time.Duration, runs*subscribers)
	pubSamples := make([][]time.Duration, runs*subscribers)
	var ready, done sync.WaitGroup
	for i := range runs * subscribers {
		r := rs[i/subscribers]
		total := len(r.lines)
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			cursor := ""
			first := true
			lat := make([]time.Duration, 0, perRun)
			pub := make([]time.Duration, 0, perRun)
			for {
				err := client.Stream(ctx, r.id, relay.StreamOptions{LastEventID: cursor, Follow: true}, func(f relay.SSEFrame) error {
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
						if at := r.sent[seq].Load(); at != 0 {
							now := time.Now().UnixNano()
							lat = append(lat, time.Duration(now-at))
							pub = append(pub, time.Duration(now-r.posted[seq].Load()))
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
			samples[i], pubSamples[i] = lat, pub
		}()
	}
	ready.Wait()

	// In run r, event seq is produced at start + offset_r + (seq-3)/runRate, the runs' offsets
	// spreading their events evenly over each interval.
	interval := time.Second * time.Duration(runs) / time.Duration(rate)
	var postMu sync.Mutex
	var postDur []time.Duration
	posts := 0
	var producers sync.WaitGroup
	errs := make(chan error, runs)
	b.ResetTimer()
	cpu0, cpuOK := cputime.Process()
	start := time.Now()
	for ri, r := range rs {
		offset := interval * time.Duration(ri) / time.Duration(runs)
		producers.Go(func() {
			t0 := start.Add(offset)
			total := len(r.lines)
			var mine []time.Duration
			for i := 2; i < total; {
				produced := 2 + int(time.Since(t0)/interval) + 1
				if produced <= i {
					time.Sleep(time.Until(t0.Add(time.Duration(i-2) * interval)))
					continue
				}
				end := min(produced, total)
				for s := i + 1; s <= end; s++ {
					r.sent[s].Store(t0.Add(time.Duration(s-3) * interval).UnixNano())
				}
				p0 := time.Now()
				for s := i + 1; s <= end; s++ {
					r.posted[s].Store(p0.UnixNano())
				}
				if _, err := client.Append(ctx, r.id, relay.MediaNDJSON, joinLines(r.lines[i:end])); err != nil {
					errs <- err
					return
				}
				mine = append(mine, time.Since(p0))
				i = end
			}
			postMu.Lock()
			postDur = append(postDur, mine...)
			posts += len(mine)
			postMu.Unlock()
		})
	}
	producers.Wait()
	publishTime := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if !waitWithin(&done, 60*time.Second) {
		b.Fatal("subscribers did not receive every event")
	}
	b.StopTimer()
	cpu1, _ := cputime.Process()
	var all, pubAll []time.Duration
	for i, s := range samples {
		all = append(all, s...)
		pubAll = append(pubAll, pubSamples[i]...)
	}
	if len(all) == 0 || len(postDur) == 0 {
		b.Fatal("no samples")
	}
	ms := func(d []time.Duration, p float64) float64 {
		return float64(d[min(int(p*float64(len(d))), len(d)-1)].Microseconds()) / 1000
	}
	slices.Sort(all)
	slices.Sort(pubAll)
	slices.Sort(postDur)
	published := perRun * runs
	b.ReportMetric(ms(all, 0.50), "p50-ms")
	b.ReportMetric(ms(all, 0.99), "p99-ms")
	b.ReportMetric(ms(pubAll, 0.50), "pub-p50-ms")
	b.ReportMetric(ms(pubAll, 0.99), "pub-p99-ms")
	b.ReportMetric(ms(postDur, 0.50), "post-p50-ms")
	b.ReportMetric(ms(postDur, 0.99), "post-p99-ms")
	b.ReportMetric(float64(published)/publishTime.Seconds(), "published/s")
	b.ReportMetric(float64(len(all))/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(resumes.Load()), "resumes")
	if cpuOK {
		// CPU of the whole process (relay, producers and subscribers) per delivered frame:
		// unlike the latencies it hardly moves with the machine's other load.
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(len(all)), "cpu-ns/delivery")
	}
	b.ReportMetric(float64(published)/float64(posts), "events/post")
}

var errDone = fmt.Errorf("done")
