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
	"testing"
	"time"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

func testEnvelope(topic, id string) []byte {
	return envelope.Envelope{EventID: envelope.NewEventID(), Source: envelope.SourceAgent, SourceEventID: id,
		SourceSession: "ses_sender", Topic: topic, DedupeKey: "k-" + id, IssuedAt: 1760000000000,
		PayloadSummary: "s " + id, Payload: "p " + id, TraceID: "t"}.AppendJSON(nil)
}

// A notification subscriber that falls more than its queue behind is disconnected with a final
// comment naming its last delivered id; that creates no delivery exception (a reader cut for
// being slow is not a failed delivery, relay.md §2), the writer is never held up, and a resume
// delivers everything it missed.
func TestNotifySlowSubscriberCutOff(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "a.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(Config{Store: st, Limits: Limits{SubscriberQueue: 4}, SweepInterval: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w := &gatedWriter{header: http.Header{}, first: make(chan struct{}), blocked: make(chan struct{}), gate: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := httptest.NewRequest("GET", "/v1/notifications/stream?subject=notifications.agent.>&subject=notifications.github.>&session=ses_X", nil)
		req.Host = "127.0.0.1" // local mode answers loopback names only
		s.Handler().ServeHTTP(w, req)
	}()
	for {
		s.notify.mu.Lock()
		n := len(s.notify.subs[LocalOrg])
		s.notify.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	publish := func(topic, id string) {
		t.Helper()
		if _, e := s.PublishEnvelope(ctx, LocalOrg, testEnvelope(topic, id)); e != nil {
			t.Fatal(e)
		}
	}
	publish("notifications.agent.ses_9", "e1")
	<-w.first
	publish("notifications.agent.ses_9", "e2")
	<-w.blocked // stuck writing e2
	start := time.Now()
	for _, id := range []string{"e3", "e4", "e5", "e6", "e7", "e8"} {
		publish("notifications.agent.ses_9", id)
	}
	publish("notifications.github.acme.widgets.pr.1", "g1")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("publisher held up %v", d)
	}
	close(w.gate)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("slow subscriber not disconnected")
	}
	out := w.out.String()
	if !strings.Contains(out, "id: 2\n") || strings.Contains(out, "id: 3\n") ||
		!strings.HasSuffix(out, ": agentwire: disconnected: subscriber fell more than 4 envelopes (or 16777216 bytes) behind; last delivered id: 2 (resume with Last-Event-ID: 2)\n\n") {
		t.Fatalf("stream:\n%s", out)
	}
	// Being cut for slowness is not a failed delivery (relay.md §2): no delivery exception
	// was stored for what it missed (the store holds e1…e8 and g1, nothing after).
	page, err := st.ReadEnvelopes(ctx, LocalOrg, store.EnvelopeQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Envelopes) != 9 {
		for _, e := range page.Envelopes[min(9, len(page.Envelopes)):] {
			t.Errorf("stored after the cut: %s", e.Data)
		}
		t.Fatalf("%d envelopes stored, want 9", len(page.Envelopes))
	}
	// The session did not keep the undelivered keys: a resume delivers e3…e8 and g1.
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	c := &Client{BaseURL: ts.URL}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var ids []string
	_ = c.StreamNotifications(sctx, NotifyStreamOptions{Subjects: []string{"notifications.agent.ses_9", "notifications.github.>"}, Session: "ses_X", LastEventID: "2"},
		func(f SSEFrame) error {
			if f.Comment == "" {
				ids = append(ids, f.ID)
			}
			if f.ID == "9" {
				return io.EOF
			}
			return nil
		})
	if strings.Join(ids, ",") != "3,4,5,6,7,8,9" {
		t.Fatalf("resumed ids %v", ids)
	}
}

// The session key cache stays within its byte budget however many sessions and keys a client
// makes (relay.md §3): trim drops the oldest keys of the least recently used sessions first,
// and the accounting matches the keys held.
func TestSessionKeyBudget(t *testing.T) {
	l := newNotifyLane()
	now := time.Unix(1760000000, 0)
	key := func(s, i int) string { return fmt.Sprintf("s%d-%0200d", s, i) } // ~205-byte keys
	const sessions, perSession = 40, 5000                                   // 40 × 5,000 × ~270 B ≈ 54 MB, over the 32 MiB budget
	for s := range sessions {
		st := l.session("o", fmt.Sprint(s), now.Add(time.Duration(s)*time.Second))
		for i := range perSession {
			st.claim(key(s, i), now)
		}
		l.trim()
		if b := l.keyBytes.Load(); b > sessionKeyBudget {
			t.Fatalf("after session %d: %d accounted bytes, over the %d budget", s, b, sessionKeyBudget)
		}
	}
	var held int64
	for _, st := range l.sessions {
		for k := range st.keys {
			held += keyCost(k)
		}
	}
	if held != l.keyBytes.Load() {
		t.Fatalf("accounting %d, keys held %d", l.keyBytes.Load(), held)
	}
	// The most recent session kept its keys; the oldest lost theirs.
	if n := len(l.sessions[sessionKey{"o", fmt.Sprint(sessions - 1)}].keys); n != perSession {
		t.Fatalf("newest session holds %d keys", n)
	}
	if n := len(l.sessions[sessionKey{"o", "0"}].keys); n != 0 {
		t.Fatalf("oldest session holds %d keys", n)
	}
}
