package bench

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

// BenchmarkBusThroughput measures durable bus throughput, messages/s, in one run:
//
//   - store/writers=N: N goroutines calling AppendMessage on a SQLite store directly with the
//     rows the relay writes (the store's own ceiling);
//   - socket/senders=N/window=W: N WebSocket senders, each with up to W `message` frames in
//     flight (W = 1 waits for each answer before the next frame), and 10 listener sockets
//     following the channel (the senders follow another channel, so each message is
//     delivered 10 times; listeners read the message number from the frame's bytes without
//     decoding it, since in a deployment they do not share the relay's cores). An op is one
//     message answered (durable) and delivered to every listener; a listener cut for falling
//     behind (relay.md §3) resumes from the last seq it read, counted in `resumes`; p50/p99 count from the moment the frame was sent (with a window, that includes
//     the wait behind the sender's earlier frames), stored-p50/p99 from the moment its sender
//     read the message.stored answer (the fan-out alone; a delivery that came first counts 0);
//   - socket/senders=N/window=W/rate=R: the same at a fixed total rate of R messages/s (message
//     k is sent k/R after the start): the latencies below saturation, where the unpaced rows
//     measure them with every window full.
func BenchmarkBusThroughput(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("store/writers=%d", writers), func(b *testing.B) { benchAppendMessage(b, writers) })
	}
	for _, c := range []struct{ senders, window, rate int }{{1, 1, 0}, {8, 1, 0}, {1, 64, 0}, {8, 64, 0}, {8, 64, 2000}, {8, 64, 4000}} {
		name := fmt.Sprintf("socket/senders=%d/window=%d", c.senders, c.window)
		if c.rate > 0 {
			name += fmt.Sprintf("/rate=%d", c.rate)
		}
		b.Run(name, func(b *testing.B) { benchBusSockets(b, c.senders, c.window, c.rate) })
	}
}

// deliverPrefix and errorPrefix start the message.deliver and error frames the relay writes.
var deliverPrefix, errorPrefix = []byte(`{"t":"message.deliver"`), []byte(`{"t":"error"`)

// deliveredNumber returns the message number a message.deliver frame of the benchmark carries
// (its body text) and its seq, read without decoding the frame: the listeners share the two
// cores with the relay, and in a deployment their decoding is not the relay's cost. (The
// relay's own tests check every delivered frame's bytes.)
func deliveredNumber(raw []byte) (k int, seq uint64, ok bool) {
	if !bytes.HasPrefix(raw, deliverPrefix) {
		return 0, 0, false
	}
	member := func(name string) []byte {
		_, rest, found := bytes.Cut(raw, []byte(name))
		end := bytes.IndexAny(rest, `",}`)
		if !found || end < 0 {
			return nil
		}
		return rest[:end]
	}
	k, err := strconv.Atoi(string(member(`"text":"`)))
	if err != nil {
		return 0, 0, false
	}
	seq, err = strconv.ParseUint(string(member(`"seq":`)), 10, 64)
	return k, seq, err == nil
}

func busMessage(sender, k int) hive.AgentMessageV1 {
	return hive.AgentMessageV1{ClientMsgID: fmt.Sprintf("b%d-%d", sender, k), Network: hive.NetworkOrg{Channel: benchChannel},
		Type: hive.MessageTypeFinding, From: "sender-" + strconv.Itoa(sender), Body: &hive.MessageBodyV1{Text: strconv.Itoa(k)}}
}

func benchAppendMessage(b *testing.B, writers int) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	k := store.OrgStream(relay.LocalOrg, benchChannel)
	// The delivery the relay stores for a message of the socket benchmark.
	data, err := hive.MessageDeliveryV1{Network: hive.NetworkOrg{Channel: benchChannel}, Type: hive.MessageTypeFinding,
		From: hive.SenderAgent{Agent: "sender-0", InstanceLabel: "local", InstanceID: new("local")}, Body: &hive.MessageBodyV1{Text: "12345"},
		Trust: hive.MessageTrustTeam, ServerTime: hive.UtcTimestampOf(time.Now()), ExpiresAt: hive.UtcTimestampOf(time.Now().Add(time.Hour))}.MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				now := time.Now()
				if _, _, err := st.AppendMessage(context.Background(), store.MessageWrite{Stream: k, SenderOrg: relay.LocalOrg,
					SenderInstance: relay.LocalOrg, ClientMsgID: fmt.Sprintf("w%d-%d", w, i), Type: "finding",
					ServerTime: now, ExpiresAt: now.Add(time.Hour), Data: data}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "messages/s")
}

func benchBusSockets(b *testing.B, senders, window, rate int) {
	const listeners = 10
	_, ts, stop := serveRelay(b)
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &relay.Client{BaseURL: ts.URL, HTTP: ts.Client()}
	hello := func(c *relay.BusConn, agent, channel string) {
		f := hive.FrameHello{InstanceID: relay.LocalOrg, Agents: []hive.BusAgentV1{{AgentID: agent, Role: "bench", Channels: []string{channel}}}}
		if err := c.Send(ctx, f); err != nil {
			b.Fatal(err)
		}
		if err := c.SendRaw(ctx, []byte(`{"t":"sync"}`)); err != nil {
			b.Fatal(err)
		}
		if f, _, err := c.Recv(ctx); err != nil || f.Tag() != hive.TagError {
			b.Fatalf("hello sync: %v", err)
		}
	}
	n := b.N
	sent, stored := make([]atomic.Int64, n), make([]atomic.Int64, n)
	samples, fanout := make([][]time.Duration, listeners), make([][]time.Duration, listeners)
	var delivered sync.WaitGroup
	var resumes atomic.Int64
	progress := make([]atomic.Int64, listeners) // deliveries each listener read
	for i := range listeners {
		c, err := client.DialBus(ctx)
		if err != nil {
			b.Fatal(err)
		}
		hello(c, "listener-"+strconv.Itoa(i), benchChannel)
		delivered.Add(1)
		go func() {
			defer delivered.Done()
			defer func() { _ = c.CloseNow() }()
			lat, fan := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
			var last uint64 // the seq of the last delivery read
			for len(lat) < n {
				raw, err := c.RecvRaw(ctx)
				if err != nil || bytes.HasPrefix(raw, errorPrefix) {
					// Cut for falling behind (relay.md §3): resume after the last seq read,
					// as the error frame says.
					if ctx.Err() != nil {
						return
					}
					_ = c.CloseNow()
					if c, err = client.DialBus(ctx); err != nil {
						return
					}
					resumes.Add(1)
					resume := hive.FrameHello{InstanceID: relay.LocalOrg, Agents: []hive.BusAgentV1{{AgentID: "listener-" + strconv.Itoa(i), Role: "bench", Channels: []string{benchChannel}}},
						Cursors: []hive.BusCursor{{Channel: benchChannel, Seq: last}}}
					if err := c.Send(ctx, resume); err != nil {
						return
					}
					continue
				}
				if k, seq, ok := deliveredNumber(raw); ok && seq > last {
					last = seq
					progress[i].Add(1)
					now := time.Now().UnixNano()
					lat = append(lat, time.Duration(now-sent[k].Load()))
					if at := stored[k].Load(); at != 0 && now > at {
						fan = append(fan, time.Duration(now-at))
					} else {
						fan = append(fan, 0)
					}
				}
			}
			samples[i], fanout[i] = lat, fan
		}()
	}
	conns := make([]*relay.BusConn, senders)
	for i := range conns {
		c, err := client.DialBus(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseNow()
		// A sender follows a channel of its own (an announced agent may post anywhere in its
		// org): the benchmark's channel is delivered to its 10 listeners only.
		hello(c, "sender-"+strconv.Itoa(i), benchChannel+"-senders")
		conns[i] = c
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for i, c := range conns {
		slots := make(chan struct{}, window)
		mine := make(chan int, n) // the message numbers this sender sent, in order
		wg.Go(func() {            // answers, in frame order
			for k := range mine {
				for {
					raw, err := c.RecvRaw(ctx)
					if err != nil {
						b.Errorf("sender %d, message %d: %v", i, k, err)
						cancel() // the senders and listeners stop too
						return
					}
					f, err := hive.DecodeBusFrame(raw, hive.AtClient)
					if err == nil && f != nil && f.Tag() == hive.TagPresenceUpdate {
						continue
					}
					if err != nil || f == nil || f.Tag() != hive.TagMessageStored {
						b.Errorf("sender %d, message %d: %s", i, k, raw)
						cancel()
						return
					}
					stored[k].Store(time.Now().UnixNano())
					break
				}
				<-slots
			}
		})
		wg.Go(func() {
			defer close(mine)
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				if rate > 0 { // message k is due k/rate after the start
					time.Sleep(time.Until(start.Add(time.Duration(k) * time.Second / time.Duration(rate))))
				}
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
				sent[k].Store(time.Now().UnixNano())
				if err := c.Send(ctx, hive.FrameMessage{Message: busMessage(i, k)}); err != nil {
					b.Error(err)
					return
				}
				mine <- k
			}
		})
	}
	wg.Wait()
	answered := time.Since(start)
	if !waitWithin(&delivered, 120*time.Second) {
		got := make([]int64, listeners)
		for i := range got {
			got[i] = progress[i].Load()
		}
		b.Fatalf("listeners did not receive every message: %d of %d each, %d resumes", got, n, resumes.Load())
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var all, fan []time.Duration
	for i := range samples {
		all, fan = append(all, samples[i]...), append(fan, fanout[i]...)
	}
	if len(all) != n*listeners {
		b.Fatalf("%d deliveries, want %d", len(all), n*listeners)
	}
	b.ReportMetric(float64(n)/answered.Seconds(), "messages/s")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(percentile(all, 0.50), "p50-ms")
	b.ReportMetric(percentile(all, 0.99), "p99-ms")
	b.ReportMetric(percentile(fan, 0.50), "stored-p50-ms")
	b.ReportMetric(percentile(fan, 0.99), "stored-p99-ms")
	b.ReportMetric(float64(resumes.Load()), "resumes")
}
