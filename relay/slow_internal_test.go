package relay

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/sqlite"
)

// gatedWriter is an SSE client that stops reading after its first write until released: a
// stalled consumer.
type gatedWriter struct {
	mu      sync.Mutex
	header  http.Header
	out     strings.Builder
	writes  int
	first   chan struct{} // closed after the first write
	blocked chan struct{} // closed when a write is blocked on the gate
	gate    chan struct{} // closed to release
}

func (w *gatedWriter) Header() http.Header { return w.header }
func (w *gatedWriter) WriteHeader(int)     {}
func (w *gatedWriter) Flush()              {}
func (w *gatedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	n := w.writes
	w.mu.Unlock()
	if n == 2 {
		close(w.blocked)
		<-w.gate
	}
	w.mu.Lock()
	w.out.Write(b)
	w.mu.Unlock()
	if n == 1 {
		close(w.first)
	}
	return len(b), nil
}

func line(run string, n int, typ, payload string) []byte {
	if payload != "" {
		payload += ","
	}
	return fmt.Appendf(nil, `{"type":%q,%s"protocolVersion":1,"eventId":"e%d","runId":%q,"sessionId":"s","phaseId":"p","logicalSequence":%d,"sequence":%d,"timestamp":"t"}`,
		typ, payload, n, run, n, n)
}

// A live subscriber whose queue overflows is disconnected with a final comment naming its last
// delivered cursor, while the writer never waits for it; resuming from that cursor yields the
// rest.
func TestSlowConsumerDisconnected(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "a.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(Config{Store: st, Limits: Limits{SubscriberQueue: 4},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const run = "slow"
	if _, e := s.Append(ctx, LocalOrg, run, [][]byte{line(run, 1, "run.started", "")}); e != nil {
		t.Fatal(e)
	}
	if _, e := s.Append(ctx, LocalOrg, run, [][]byte{line(run, 2, "message.started", `"messageId":"m","role":"user"`)}); e != nil {
		t.Fatal(e)
	}
	w := &gatedWriter{header: http.Header{}, first: make(chan struct{}), blocked: make(chan struct{}), gate: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := httptest.NewRequest("GET", "/v1/runs/"+run+"/events", nil)
		req.Host = "127.0.0.1" // local mode answers loopback names only
		req.Header.Set("Accept", MediaSSE)
		s.Handler().ServeHTTP(w, req)
	}()
	<-w.first // replay of events 1–2 written; the stream is live
	if _, e := s.Append(ctx, LocalOrg, run, [][]byte{line(run, 3, "message.part.delta", `"messageId":"m","part":{"type":"text","text":"a"}`)}); e != nil {
		t.Fatal(e)
	}
	<-w.blocked // the subscriber is stuck writing event 3
	// The writer goes on at full speed: 4 frames fill the queue, the 5th overflows it.
	start := time.Now()
	for n := 4; n <= 12; n++ {
		if _, e := s.Append(ctx, LocalOrg, run, [][]byte{line(run, n, "message.part.delta", `"messageId":"m","part":{"type":"text","text":"b"}`)}); e != nil {
			t.Fatal(e)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("writer was held up %v", d)
	}
	close(w.gate)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("slow subscriber not disconnected")
	}
	out := w.out.String()
	if !strings.Contains(out, "id: 3\n") || strings.Contains(out, "id: 4\n") ||
		!strings.HasSuffix(out, ": agentwire: disconnected: subscriber queue of 4 frames (or 16777216 bytes) overflowed; last delivered id: 3 (resume with Last-Event-ID: 3)\n\n") {
		t.Fatalf("stream:\n%s", out)
	}

	// Resume from the named cursor: exactly events 4–12.
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	c := &Client{BaseURL: ts.URL}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var ids []string
	_ = c.Stream(sctx, run, StreamOptions{LastEventID: "3"}, func(f SSEFrame) error {
		if f.Comment == "" {
			ids = append(ids, f.ID)
		}
		if f.ID == "12" {
			return io.EOF
		}
		return nil
	})
	if strings.Join(ids, ",") != "4,5,6,7,8,9,10,11,12" {
		t.Fatalf("resumed ids %v", ids)
	}
}

// While a subscriber replays a long history, live frames overflowing its queue do not
// disconnect it: it keeps reading the store until it has caught up.
func TestOverflowDuringReplayIsNotFatal(t *testing.T) {
	f := newFanout()
	k := runKey{"o", "r"}
	sub := f.subscribe(k, 2, 1<<30)
	f.publish(k, []*frame{{seq: 1}, {seq: 2}})
	f.publish(k, []*frame{{seq: 3}})
	select {
	case <-sub.overflow:
	default:
		t.Fatal("no overflow signalled")
	}
	ovf := f.reset(sub)
	if got, gap, _ := f.take(sub, nil); len(got) != 0 || gap {
		t.Fatalf("queue not emptied: %d frames, gap %v", len(got), gap)
	}
	f.publish(k, []*frame{{seq: 4}})
	select {
	case <-ovf:
		t.Fatal("re-armed subscriber overflowed")
	default:
	}
	<-sub.wake
	if got, _, _ := f.take(sub, nil); len(got) != 1 || got[0].seq != 4 {
		t.Fatalf("got %v", got)
	}
	f.unsubscribe(k, sub)
	f.publish(k, []*frame{{seq: 5}}) // no subscriber: nothing to do, no panic
}

// frameBytes is the size of each frame frames renders.
const frameBytes = 100

func frames(from, to int64) []*frame {
	var out []*frame
	for s := from; s <= to; s++ {
		out = append(out, &frame{seq: s, prev: s - 1, text: make([]byte, frameBytes)})
	}
	return out
}

// The feed's queue rule: a subscriber with frames already waiting is dropped when more than its
// queue limit would wait, by count or by bytes; one that has caught up takes even a batch
// longer than the limits, in maxTake pieces, and a batch longer than the ring sends it to the
// store (gap).
func TestFeedQueueRule(t *testing.T) {
	k := runKey{"o", "r"}
	for _, tc := range []struct {
		name    string
		bytes   int64      // the subscriber's byte bound (0: no bound to speak of)
		batches [][2]int64 // published one after the other, nothing taken in between
		dropped bool
		gap     bool
		taken   int // frames taken (all takes) when not dropped/gap
	}{
		{"one batch longer than the queue", 0, [][2]int64{{1, 3000}}, false, false, 3000},
		{"waiting plus next batch over the queue", 0, [][2]int64{{1, 10}, {11, 1025}}, true, false, 0},
		{"waiting plus next batch at the queue", 0, [][2]int64{{1, 10}, {11, 1024}}, false, false, 1024},
		{"batch longer than the ring", 0, [][2]int64{{1, feedRing + 5}}, false, true, 0},
		{"one batch over the byte bound", 50 * frameBytes, [][2]int64{{1, 100}}, false, false, 100},
		{"waiting plus next batch over the byte bound", 50 * frameBytes, [][2]int64{{1, 10}, {11, 51}}, true, false, 0},
		{"waiting plus next batch at the byte bound", 50 * frameBytes, [][2]int64{{1, 10}, {11, 50}}, false, false, 50},
		{"waiting bytes counted from the subscriber's position", 50 * frameBytes, [][2]int64{{1, 30}, {31, 40}, {41, 51}}, true, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFanout()
			if tc.bytes == 0 {
				tc.bytes = 1 << 40
			}
			sub := f.subscribe(k, 1024, tc.bytes)
			for _, b := range tc.batches {
				f.publish(k, frames(b[0], b[1]))
			}
			select {
			case <-sub.overflow:
				if !tc.dropped {
					t.Fatal("dropped")
				}
				return
			default:
				if tc.dropped {
					t.Fatal("not dropped")
				}
			}
			taken := 0
			want := int64(1)
			for {
				select {
				case <-sub.wake:
				default:
					if taken != tc.taken {
						t.Fatalf("took %d frames, want %d", taken, tc.taken)
					}
					if tc.gap {
						t.Fatal("no gap")
					}
					return
				}
				got, gap, _ := f.take(sub, nil)
				if gap {
					if !tc.gap {
						t.Fatal("unexpected gap")
					}
					return
				}
				if len(got) > maxTake {
					t.Fatalf("took %d > maxTake", len(got))
				}
				for _, fr := range got {
					if fr.seq != want {
						t.Fatalf("frame %d, want %d", fr.seq, want)
					}
					want++
				}
				taken += len(got)
			}
		})
	}
}

// Frames every subscriber has taken are released from the ring (they pin their batch buffer).
func TestFeedReleasesTakenFrames(t *testing.T) {
	f := newFanout()
	k := runKey{"o", "r"}
	a, b := f.subscribe(k, 1024, 1<<30), f.subscribe(k, 1024, 1<<30)
	f.publish(k, frames(1, 10))
	f.take(a, nil)
	f.publish(k, frames(11, 11)) // b still holds 1..10
	fd := a.feed
	held := func() (n int) {
		for _, fr := range fd.ring {
			if fr != nil {
				n++
			}
		}
		return n
	}
	if n := held(); n != 11 {
		t.Fatalf("held %d, want 11", n)
	}
	f.take(a, nil)
	f.take(b, nil)
	f.publish(k, frames(12, 12))
	if n := held(); n != 1 {
		t.Fatalf("held %d, want 1 (only the unread frame 12)", n)
	}
	f.unsubscribe(k, a)
	f.unsubscribe(k, b)
	if len(f.feeds) != 0 {
		t.Fatal("feed kept without subscribers")
	}
}
