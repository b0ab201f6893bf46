package bench

import (
	"context"
	"fmt"
	"net/http/httptest"
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
//     following the channel. An op is one message answered (durable) and delivered to every
//     listener; p50/p99 count from the moment the frame was sent (with a window, that includes
//     the wait behind the sender's earlier frames), stored-p50/p99 from the moment its sender
//     read the message.stored answer (the fan-out alone; a delivery that came first counts 0).
func BenchmarkBusThroughput(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("store/writers=%d", writers), func(b *testing.B) { benchAppendMessage(b, writers) })
	}
	for _, c := range []struct{ senders, window int }{{1, 1}, {8, 1}, {1, 64}, {8, 64}} {
		b.Run(fmt.Sprintf("socket/senders=%d/window=%d", c.senders, c.window), func(b *testing.B) {
			benchBusSockets(b, c.senders, c.window)
		})
	}
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

func benchBusSockets(b *testing.B, senders, window int) {
	const listeners = 10
	srv, closeRelay := newRelay(b)
	defer closeRelay()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &relay.Client{BaseURL: ts.URL, HTTP: ts.Client()}
	hello := func(c *relay.BusConn, agent string) {
		f := hive.FrameHello{InstanceID: relay.LocalOrg, Agents: []hive.BusAgentV1{{AgentID: agent, Role: "bench", Channels: []string{benchChannel}}}}
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
	for i := range listeners {
		c, err := client.DialBus(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseNow()
		hello(c, "listener-"+strconv.Itoa(i))
		delivered.Add(1)
		go func() {
			defer delivered.Done()
			lat, fan := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
			for len(lat) < n {
				f, _, err := c.Recv(ctx)
				if err != nil {
					return
				}
				if d, ok := f.(hive.FrameMessageDeliver); ok {
					k, _ := strconv.Atoi(d.Delivery.Body.Text)
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
		hello(c, "sender-"+strconv.Itoa(i)) // other senders' deliveries reach it too; skipped
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
					f, raw, err := c.Recv(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					if f.Tag() == hive.TagMessageDeliver {
						continue
					}
					if f.Tag() != hive.TagMessageStored {
						b.Errorf("message %d: %s", k, raw)
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
				slots <- struct{}{}
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
	waitDone := make(chan struct{})
	go func() { delivered.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(120 * time.Second):
		b.Fatal("listeners did not receive every message")
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
}
