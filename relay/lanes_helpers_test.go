package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
)

// fakeClock is a settable clock shared by the relay (Config.Now) and its sqlite store
// (Options.Now), so retention and dedupe windows are tested without waiting.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 10, 20, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func withClock(c *fakeClock) harnessOption {
	return func(cfg *relay.Config) { cfg.Now = c.Now }
}

func withoutSweeper() harnessOption { return func(cfg *relay.Config) { cfg.SweepInterval = -1 } }

// newClockHarness is newHarness with one fake clock for the relay and the store.
func newClockHarness(t testing.TB, clk *fakeClock, opts ...harnessOption) *harness {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, dir, st, append([]harnessOption{withClock(clk), withoutSweeper()}, opts...)...)
}

// Tokens of the two-org test world: org acme runs instances a1, a2 and a3 (a2 with another
// owner and the personal plan, a3 with a1's owner), org globex runs g1; a1 and g1 are members
// of swarm sw-1 as handles quiet-heron and bold-otter; a2 and a3 are in no swarm.
const (
	tokA1 = "token-acme-1"
	tokA2 = "token-acme-2"
	tokG1 = "token-globex-1"
	tokNo = "token-acme-norights"
	tokA3 = "token-acme-3"
)

func twoOrgAuth(t testing.TB) *relay.Auth {
	t.Helper()
	doc := fmt.Sprintf(`[
 {"token_sha256":%q,"org":"acme","instance_id":"inst_a1","instance_label":"laptop","owner":"Ana","swarms":[{"swarm_id":"sw-1","handle":"quiet-heron","reputation":3}],"rights":["bus.relay","notify.publish","notify.subscribe","admin"]},
 {"token_sha256":%q,"org":"acme","instance_id":"inst_a2","instance_label":"ci","owner":"Ben","plan":"personal","rights":["bus.relay","notify.publish","notify.subscribe"]},
 {"token_sha256":%q,"org":"globex","instance_id":"inst_g1","instance_label":"box","owner":"Gus","swarms":[{"swarm_id":"sw-1","handle":"bold-otter","reputation":1}],"rights":["bus.relay","notify.publish","notify.subscribe"]},
 {"token_sha256":%q,"org":"acme","instance_id":"inst_a9","instance_label":"ro","rights":["runs.read"]},
 {"token_sha256":%q,"org":"acme","instance_id":"inst_a3","instance_label":"desk","owner":"Ana","rights":["bus.relay"]}
]`, relay.HashToken(tokA1), relay.HashToken(tokA2), relay.HashToken(tokG1), relay.HashToken(tokNo), relay.HashToken(tokA3))
	a, err := relay.ParseAuth([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// env builds a valid envelope's JSON.
func env(topic string, source envelope.Source, sourceEventID, dedupeKey string) []byte {
	return envelope.Envelope{
		EventID:        envelope.NewEventID(),
		Source:         source,
		SourceEventID:  sourceEventID,
		Topic:          topic,
		DedupeKey:      dedupeKey,
		IssuedAt:       1760000000000,
		PayloadSummary: "summary of " + sourceEventID,
		Payload:        `{"n":"` + sourceEventID + `"}`,
		TraceID:        "trace-" + sourceEventID,
	}.AppendJSON(nil)
}

func (h *harness) publish(token string, body []byte) (int, []byte) {
	h.t.Helper()
	code, _, resp := h.do("POST", "/v1/notifications", token, map[string]string{"Content-Type": "application/json"}, body)
	return code, resp
}

func (h *harness) publishOK(token string, body []byte) relay.PublishResult {
	h.t.Helper()
	code, resp := h.publish(token, body)
	if code != 200 {
		h.t.Fatalf("publish: %d %s", code, resp)
	}
	r, err := relay.ParsePublishResult(resp)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// sseStream is an open notification stream read in the background.
type sseStream struct {
	t      testing.TB
	frames chan relay.SSEFrame
	cancel context.CancelFunc
	done   chan error
}

// openStream opens GET /v1/notifications/stream; it returns once the relay answered the
// headers (the subscription exists then).
func (h *harness) openStream(token, query, lastEventID string) *sseStream {
	h.t.Helper()
	return h.openSSE(token, "/v1/notifications/stream?"+query, lastEventID)
}

// openSSE opens any SSE route (path with its query); it returns once the relay answered the
// headers.
func (h *harness) openSSE(token, path, lastEventID string) *sseStream {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", h.http.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Accept", relay.MediaSSE)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := h.http.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
		h.t.Fatalf("stream %s: %d %s", path, resp.StatusCode, b.String())
	}
	s := &sseStream{t: h.t, frames: make(chan relay.SSEFrame, 4096), cancel: cancel, done: make(chan error, 1)}
	go func() {
		defer resp.Body.Close()
		s.done <- relay.ReadSSE(resp.Body, func(f relay.SSEFrame) error {
			f.Data = bytes.Clone(f.Data) // Data is valid only during the callback
			s.frames <- f
			return nil
		})
		close(s.frames)
	}()
	h.t.Cleanup(cancel)
	return s
}

// final returns the last comment of a stream that ends within timeout (it fails when the
// stream goes on).
func (s *sseStream) final(timeout time.Duration) string {
	s.t.Helper()
	deadline := time.After(timeout)
	last := ""
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				return last
			}
			if f.Comment != "" && f.Comment != "heartbeat" {
				last = f.Comment
			}
		case <-deadline:
			s.t.Fatalf("stream still open after %v", timeout)
		}
	}
}

// next returns the next non-comment frame, failing after a generous timeout.
func (s *sseStream) next() relay.SSEFrame {
	s.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				s.t.Fatal("stream ended")
			}
			if f.Comment != "" {
				continue
			}
			return f
		case <-timeout:
			s.t.Fatal("no frame within 10 s")
		}
	}
}

// waitSubscribers waits until the relay's open-stream gauge shows n (a closed client's handler
// has returned).
func (h *harness) waitSubscribers(n float64) {
	h.t.Helper()
	for i := 0; i < 1000; i++ {
		mfs, err := h.server.Metrics().Registry().Gather()
		if err != nil {
			h.t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "agentwire_sse_subscribers" && mf.GetMetric()[0].GetGauge().GetValue() == n {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("subscribers never reached %v", n)
}
