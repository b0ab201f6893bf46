package relay

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// A bus socket's queue is bounded by bytes as well as by frames (relay.md §3): deliveries
// offered past the byte bound cut the socket as a slow consumer; replies wait for room, and a
// frame larger than the bound goes alone.
func TestBusSocketQueueBytes(t *testing.T) {
	newSock := func() *busSocket {
		s := &Server{limits: Limits{SubscriberQueue: 8, SubscriberQueueBytes: 1000}, metrics: NewMetrics(),
			log: slog.New(slog.NewTextHandler(io.Discard, nil)), shutdown: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		return &busSocket{s: s, p: LocalPrincipal(), ctx: ctx, cancel: cancel, out: make(chan outFrame, 8), room: make(chan struct{}, 1)}
	}
	frame := func(n int) outFrame { return outFrame{data: make([]byte, n)} }

	sock := newSock()
	for i := range 3 {
		if !sock.offer(frame(300)) {
			t.Fatalf("offer %d refused at %d queued bytes", i, sock.queued.Load())
		}
	}
	if sock.offer(frame(300)) {
		t.Fatal("a fourth 300-byte frame was queued past the 1,000-byte bound")
	}
	if q := sock.queued.Load(); q > 1000 {
		t.Fatalf("%d bytes accounted after the cut", q)
	}
	// The cut drained the queue and queued its error frame and close.
	var closing bool
	for len(sock.out) > 0 {
		if f := <-sock.out; f.close != nil {
			closing = true
		}
	}
	if !closing {
		t.Fatal("the slow socket was not closed")
	}

	// A frame larger than the bound goes alone; the next waits for the writer to take it.
	sock = newSock()
	if !sock.enqueue(frame(5000)) {
		t.Fatal("an oversized reply was refused on an empty queue")
	}
	done := make(chan bool)
	go func() { done <- sock.enqueue(frame(10)) }()
	select {
	case <-done:
		t.Fatal("a reply was queued behind 5,000 bytes")
	case <-time.After(50 * time.Millisecond):
	}
	f := <-sock.out // what the writer does
	sock.queued.Add(-int64(len(f.data)))
	sock.room <- struct{}{}
	if !<-done {
		t.Fatal("the waiting reply was not queued")
	}
	if q := sock.queued.Load(); q != 10 {
		t.Fatalf("%d bytes accounted, want 10", q)
	}
}
