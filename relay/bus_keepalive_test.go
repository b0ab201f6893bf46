package relay_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/relay"
)

func withBusPing(interval, timeout time.Duration) harnessOption {
	return func(c *relay.Config) { c.BusPingInterval, c.BusPingTimeout = interval, timeout }
}

// Keepalive: the relay pings every bus socket; a client that keeps reading answers (its
// WebSocket library sends the pongs) and stays open across many ping intervals, while a client
// that stops reading never answers and is closed.
func TestBusKeepalive(t *testing.T) {
	const interval, timeout = 50 * time.Millisecond, 500 * time.Millisecond
	h := newHarness(t, withBusPing(interval, timeout))
	reader := h.dialBus("", "reader")
	reader.hello("local", []agentSpec{{"reader", []string{chGeneral}}})

	// The reader reads continuously in the background from now on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	frames := make(chan hive.BusFrameV1, 16)
	readErr := make(chan error, 1)
	go func() {
		for {
			f, _, err := reader.c.Recv(ctx)
			if err != nil {
				readErr <- err
				return
			}
			if _, ok := f.(hive.FramePresenceUpdate); ok {
				continue // the other sockets' presence (the stalled one goes offline)
			}
			frames <- f
		}
	}()
	stalled := h.dialBus("", "stalled")
	stalled.hello("local", []agentSpec{{"stalled", []string{chGeneral}}})

	// The stalled client never reads again: it is closed after a missed pong.
	h.waitBusSockets(1)

	// The reader outlives many more intervals (twice the timeout) and still gets deliveries.
	time.Sleep(2 * timeout)
	select {
	case err := <-readErr:
		t.Fatalf("the reading client was closed: %v", err)
	default:
	}
	sender := h.dialBus("", "sender")
	sender.hello("local", []agentSpec{{"sender", []string{chGeneral}}})
	sender.sendMsg(msg("k-1", orgNet(chGeneral), hive.MessageTypeFinding, "sender", "still here"))
	sender.expectStored()
	select {
	case f := <-frames:
		d, ok := f.(hive.FrameMessageDeliver)
		if !ok || d.Delivery.Body.Text != "still here" {
			t.Fatalf("reader got %T %+v", f, f)
		}
	case err := <-readErr:
		t.Fatalf("the reading client was closed: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery to the reading client")
	}
	// The stalled client finds its socket closed when it reads at last.
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	for {
		if _, _, err := stalled.c.Recv(rctx); err != nil {
			if rctx.Err() != nil {
				t.Fatal("the stalled client's socket is still open")
			}
			break
		}
	}
}
