package relay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/relay"
)

// Resuming from every cursor of a finished run, by `after` and by Last-Event-ID, yields
// exactly the remaining events in order, then the stream ends (terminal event, no follow).
func TestSSEResumeFromEveryCursor(t *testing.T) {
	h := newHarness(t)
	const run = "resume"
	lines := synthLines(t, 45, 9, run)
	h.postOK(run, lines[:20]...)
	h.postOK(run, lines[20:]...)
	stored := h.storedEvents(relay.LocalOrg, run)
	for cursor := 0; cursor <= len(lines); cursor++ {
		for _, byHeader := range []bool{false, true} {
			opts := relay.StreamOptions{After: int64(cursor)}
			if byHeader {
				// Last-Event-ID wins over a stale `after` (an EventSource reconnect).
				opts = relay.StreamOptions{After: 3, LastEventID: strconv.Itoa(cursor)}
			}
			frames, _ := collectSSE(t, h.client, run, opts)
			if len(frames) != len(lines)-cursor {
				t.Fatalf("cursor %d (header %v): %d frames, want %d", cursor, byHeader, len(frames), len(lines)-cursor)
			}
			for i, f := range frames {
				seq := cursor + 1 + i
				ev, err := events.ParseEvent(f.Data)
				if err != nil {
					t.Fatal(err)
				}
				if f.ID != strconv.Itoa(seq) || f.Event != string(ev.Type()) || !bytes.Equal(f.Data, stored[seq-1]) {
					t.Fatalf("cursor %d frame %d: id %s event %s data %s", cursor, i, f.ID, f.Event, f.Data)
				}
			}
		}
	}
}

// A client that reduces the live SSE stream with the same reducer ends with the server's
// snapshot; several subscribers, batches of varying size, sent while they listen.
func TestSSELiveReduceMatchesSnapshot(t *testing.T) {
	h := newHarness(t)
	const run = "live"
	lines := synthLines(t, 400, 21, run)
	h.postOK(run, lines[0])

	const subs = 5
	var wg sync.WaitGroup
	states := make([]events.ReducerState, subs)
	ready := make(chan struct{}, subs)
	for i := range subs {
		wg.Go(func() {
			st := events.NewReducerState()
			first := true
			err := h.client.Stream(context.Background(), run, relay.StreamOptions{}, func(f relay.SSEFrame) error {
				if first {
					first = false
					ready <- struct{}{}
				}
				if f.Comment != "" {
					return nil
				}
				ev, err := events.ParseEvent(f.Data)
				if err != nil {
					return err
				}
				st, err = events.Reduce(st, ev)
				return err
			})
			if err != nil {
				t.Error(err)
			}
			states[i] = st
		})
	}
	for range subs {
		select {
		case <-ready: // each has replayed the first event
		case <-time.After(30 * time.Second):
			t.Fatal("a subscriber did not replay the first event")
		}
	}
	for i, size := 1, 1; i < len(lines); i, size = i+size, size*2%97+1 {
		h.postOK(run, lines[i:min(i+size, len(lines))]...)
	}
	wg.Wait()
	snap := h.checkSnapshot(relay.LocalOrg, run)
	code, _, body := h.do("GET", "/v1/runs/"+run, "", nil, nil)
	if code != 200 {
		t.Fatal(code)
	}
	served, _ := stripMeta(t, body)
	if !bytes.Equal(served, snap) {
		t.Fatalf("served snapshot differs from stored one")
	}
	for i, st := range states {
		if got := st.AppendJSON(nil); !bytes.Equal(got, snap) {
			t.Fatalf("subscriber %d state differs from the server snapshot:\n got %s\nwant %s", i, got, snap)
		}
	}
}

// Writes made by another relay over the same store reach a subscriber through the store's
// notification (no local frame arrives), after the recheck delay.
func TestSSEStoreNotificationFromAnotherWriter(t *testing.T) {
	a := newHarness(t, func(c *relay.Config) { c.StoreRecheck = 20 * time.Millisecond })
	b := newHarnessOn(t, a.dir, a.store)
	const run = "elsewhere"
	lines := simpleRun(run, 20, true)
	a.postOK(run, lines[0])
	got := make(chan []string, 1)
	started := make(chan struct{})
	go func() {
		var ids []string
		once := sync.Once{}
		_ = a.client.Stream(context.Background(), run, relay.StreamOptions{}, func(f relay.SSEFrame) error {
			once.Do(func() { close(started) })
			if f.Comment == "" {
				ids = append(ids, f.ID)
			}
			return nil
		})
		got <- ids
	}()
	select {
	case <-started:
	case ids := <-got:
		t.Fatalf("stream ended before its first frame (ids %v)", ids)
	case <-time.After(30 * time.Second):
		t.Fatal("stream delivered no frame")
	}
	for i := 1; i < len(lines); i += 4 {
		b.postOK(run, lines[i:min(i+4, len(lines))]...)
	}
	select {
	case ids := <-got:
		if len(ids) != len(lines) || ids[len(ids)-1] != strconv.Itoa(len(lines)) {
			t.Fatalf("ids %v", ids)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("stream did not end")
	}
}

func TestSSEFollowHeartbeatAndShutdown(t *testing.T) {
	h := newHarness(t, withHeartbeat(30*time.Millisecond))
	const run = "follow"
	h.postOK(run, simpleRun(run, 1, true)...)
	var frames []relay.SSEFrame
	var comments []string
	done := make(chan error, 1)
	go func() {
		done <- h.client.Stream(context.Background(), run, relay.StreamOptions{Follow: true}, func(f relay.SSEFrame) error {
			if f.Comment != "" {
				comments = append(comments, f.Comment)
				if f.Comment == "heartbeat" && len(comments) == 2 {
					go h.server.Shutdown(context.Background())
				}
				return nil
			}
			f.Data = bytes.Clone(f.Data) // Data is valid only during the callback
			frames = append(frames, f)
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("stream did not end on shutdown")
	}
	// follow=true kept the stream open past the terminal event until shutdown.
	if len(frames) != 4 || comments[0] != "heartbeat" || !hasPrefixAny(comments, "agentwire: server shutting down; last delivered id: 4") {
		t.Fatalf("frames %d comments %q", len(frames), comments)
	}
}

// An SSE stream is not cut by the request read timeout (relay.md §3: 30 s by default).
func TestSSEOutlivesReadTimeout(t *testing.T) {
	h := newHarness(t, withLimits(relay.Limits{ReadTimeout: 250 * time.Millisecond}), withHeartbeat(40*time.Millisecond))
	const run = "long"
	lines := simpleRun(run, 1, true)
	h.postOK(run, lines[:3]...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ids []string
	sent := false
	err := h.client.Stream(ctx, run, relay.StreamOptions{}, func(f relay.SSEFrame) error {
		if f.Comment == "heartbeat" && !sent {
			sent = true
			go func() {
				time.Sleep(800 * time.Millisecond) // well past the read timeout
				// A fresh connection: idle keep-alive ones are closed by the read timeout, and
				// on a loaded machine even a fresh one may miss the short deadline: retry.
				c := &relay.Client{BaseURL: h.http.URL, HTTP: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
				// (A retry of an applied batch is a duplicate; the stream's end is what counts.)
				for range 20 {
					if _, err := c.Append(ctx, run, relay.MediaNDJSON, ndjson(lines[3:])); err == nil || ctx.Err() != nil {
						return
					}
				}
			}()
		}
		if f.Comment == "" {
			ids = append(ids, f.ID)
		}
		return nil
	})
	if err != nil || strings.Join(ids, ",") != "1,2,3,4" {
		t.Fatalf("ids %v err %v", ids, err)
	}
}

func TestReadSSE(t *testing.T) {
	in := "id: 1\nevent: a\ndata: x\n\n: hello\r\nid:2\r\nevent:b\r\ndata:y\r\ndata: z\r\n\r\nretry: 5\n\ndata: tail-without-blank"
	var got []string
	err := relay.ReadSSE(strings.NewReader(in), func(f relay.SSEFrame) error {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", f.ID, f.Event, f.Data, f.Comment))
		return nil
	})
	want := []string{"1|a|x|", "|||hello", "2|b|y\nz|"}
	if err != nil || strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("got %q err %v", got, err)
	}
	// Byte-at-a-time reads split every line and CRLF pair across reads: same frames.
	var slow []string
	_ = relay.ReadSSE(iotest.OneByteReader(strings.NewReader(in)), func(f relay.SSEFrame) error {
		slow = append(slow, fmt.Sprintf("%s|%s|%s|%s", f.ID, f.Event, f.Data, f.Comment))
		return nil
	})
	if strings.Join(slow, ";") != strings.Join(want, ";") {
		t.Fatalf("one-byte reads: %q", slow)
	}
	stop := errors.New("stop")
	if err := relay.ReadSSE(strings.NewReader(in), func(relay.SSEFrame) error { return stop }); err != stop {
		t.Fatal(err)
	}
}

// An SSE response is not chunked: its frames are the raw body, and the connection closes after
// the stream (so one flush is one write and one wake-up of the subscriber).
func TestSSEIsNotChunked(t *testing.T) {
	h := newHarness(t)
	const run = "plain"
	lines := synthLines(t, 5, 2, run)
	h.postOK(run, lines...)
	req, err := http.NewRequestWithContext(t.Context(), "GET", h.http.URL+"/v1/runs/"+run+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", relay.MediaSSE)
	resp, err := h.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if len(resp.TransferEncoding) != 0 || !resp.Close || resp.ContentLength != -1 {
		t.Fatalf("transfer encoding %q, close %v, length %d", resp.TransferEncoding, resp.Close, resp.ContentLength)
	}
	n := 0
	if err := relay.ReadSSE(resp.Body, func(f relay.SSEFrame) error {
		if f.Comment == "" {
			n++
		}
		return nil
	}); err != nil || n != len(lines) {
		t.Fatalf("%d frames, %v", n, err)
	}
}

// A live subscriber ends, naming its last delivered id, when the store closes under it.
func TestSSEStoreClosed(t *testing.T) {
	h := newHarness(t)
	const run = "closing"
	lines := simpleRun(run, 3, false)
	h.postOK(run, lines...)
	comments := make(chan string, 1)
	caughtUp := make(chan struct{})
	go func() {
		_ = h.client.Stream(context.Background(), run, relay.StreamOptions{Follow: true}, func(f relay.SSEFrame) error {
			if f.Comment != "" {
				comments <- f.Comment
				return errDoneTest
			}
			if f.ID == strconv.Itoa(len(lines)) {
				close(caughtUp)
			}
			return nil
		})
	}()
	select {
	case <-caughtUp:
	case <-time.After(20 * time.Second):
		t.Fatal("the subscriber never caught up")
	}
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-comments:
		if want := "agentwire: store closed; last delivered id: " + strconv.Itoa(len(lines)); c != want {
			t.Fatalf("comment %q, want %q", c, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream did not end when the store closed")
	}
}

var errDoneTest = errors.New("done")
