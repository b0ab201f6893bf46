package relay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentwire/agentwire/relay"
)

// tokenEntryUntil is tokenEntry with an expires_at.
func tokenEntryUntil(token, org string, until time.Time, rights ...string) string {
	e := tokenEntry(token, org, rights...)
	return strings.TrimSuffix(e, "}") + fmt.Sprintf(`,"expires_at":%q}`, until.UTC().Format(time.RFC3339))
}

// A token entry may carry expires_at (relay.md §1 "Token lifetime"): before it the token
// works, from it on the token is unknown (401, the same answer as a token never issued).
func TestTokenExpiry(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, withClock(clock), withAuth(authFile(t,
		tokenEntryUntil("soon", "acme", clock.Now().Add(time.Hour), "runs.read", "runs.write"),
		tokenEntry("forever", "acme", "runs.read"))))
	if code, _, body := h.do("GET", "/v1/runs", "soon", nil, nil); code != 200 {
		t.Fatalf("before expiry: %d %s", code, body)
	}
	clock.Advance(time.Hour)
	code, hdr, body := h.do("GET", "/v1/runs", "soon", nil, nil)
	if e := errorBody(t, code, body); code != 401 || e.Message != "The bearer token is not valid." || hdr.Get("WWW-Authenticate") == "" {
		t.Fatalf("at expiry: %d %s", code, body)
	}
	if code, _, body := h.do("GET", "/v1/runs", "forever", nil, nil); code != 200 {
		t.Fatalf("a token without expires_at: %d %s", code, body)
	}
	for _, bad := range []string{`"tomorrow"`, `"2026-13-01T00:00:00Z"`, `""`, `1767225600`} {
		entry := strings.TrimSuffix(tokenEntry("x", "acme", "runs.read"), "}") + `,"expires_at":` + bad + `}`
		if _, err := relay.ParseAuth([]byte("[" + entry + "]")); err == nil {
			t.Errorf("expires_at %s accepted", bad)
		}
	}
}

// A token that is removed from the auth file, expires or loses the right its stream needs
// ends what it opened (SSE: a final comment with the reason and the last delivered cursor;
// bus WebSocket: close 1008 with the reason) within a few seconds; the streams of other
// tokens go on.
func TestRevokedTokensEndTheirStreams(t *testing.T) {
	clock := newFakeClock()
	until := clock.Now().Add(time.Hour)
	entries := map[string]string{
		"removed":  tokenEntry("removed", "acme", "runs.read", "runs.write", "bus.relay", "notify.subscribe"),
		"demoted":  tokenEntry("demoted", "acme", "runs.read"),
		"expiring": tokenEntryUntil("expiring", "acme", until, "runs.read"),
		"kept":     tokenEntry("kept", "acme", "runs.read", "runs.write"),
	}
	file := func(names ...string) *relay.Auth {
		var es []string
		for _, n := range names {
			es = append(es, entries[n])
		}
		return authFile(t, es...)
	}
	h := newHarness(t, withClock(clock), withAuth(file("removed", "demoted", "expiring", "kept")),
		func(c *relay.Config) { c.AuthRecheck = 20 * time.Millisecond })
	run := simpleRun("live", 3, false)
	if code, body := h.post("live", "kept", run[:3]...); code != 200 {
		t.Fatalf("post: %d %s", code, body)
	}
	removedRun := h.openSSE("removed", "/v1/runs/live/events", "")
	removedEnv := h.openSSE("removed", "/v1/notifications/stream?subject=notifications.>", "")
	demoted := h.openSSE("demoted", "/v1/runs/live/events", "")
	expiring := h.openSSE("expiring", "/v1/runs/live/events", "")
	kept := h.openSSE("kept", "/v1/runs/live/events", "")
	for _, s := range []*sseStream{removedRun, demoted, expiring, kept} {
		for range 3 {
			s.next()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sock, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.http.URL, "http")+"/v1/bus",
		&websocket.DialOptions{HTTPHeader: map[string][]string{"Authorization": {"Bearer removed"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.CloseNow()

	// The auth file is replaced: "removed" is gone, "demoted" keeps only bus.relay.
	entries["demoted"] = tokenEntry("demoted", "acme", "bus.relay")
	if err := h.server.SetAuth(file("demoted", "expiring", "kept")); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		s    *sseStream
		want string
	}{
		"removed run stream":          {removedRun, "agentwire: disconnected: the token was removed from the auth file; last delivered id: 3"},
		"removed notification stream": {removedEnv, "agentwire: disconnected: the token was removed from the auth file; last delivered id: 0"},
		"demoted run stream":          {demoted, "agentwire: disconnected: the token no longer grants the right runs.read; last delivered id: 3"},
	} {
		if got := c.s.final(5 * time.Second); got != c.want {
			t.Errorf("%s ended with %q, want %q", name, got, c.want)
		}
	}
	_, _, err = sock.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != "the token was removed from the auth file" {
		t.Fatalf("bus socket: %v", err)
	}
	// Expiry passes on the relay's clock.
	clock.Advance(time.Hour)
	if got := expiring.final(5 * time.Second); got != "agentwire: disconnected: the token expired at "+until.UTC().Format(time.RFC3339)+"; last delivered id: 3" {
		t.Errorf("expiring stream ended with %q", got)
	}
	// The kept token's stream goes on, and its new requests work.
	if code, body := h.post("live", "kept", run[3:]...); code != 200 {
		t.Fatalf("post after reload: %d %s", code, body)
	}
	if f := kept.next(); f.ID != "4" {
		t.Fatalf("kept stream got %q", f.ID)
	}
	if code, _, _ := h.do("GET", "/v1/runs", "removed", nil, nil); code != 401 {
		t.Fatalf("a removed token's new request: %d", code)
	}
	if code, _, _ := h.do("GET", "/v1/runs", "demoted", nil, nil); code != 403 {
		t.Fatalf("a demoted token's new request: %d", code)
	}
}

// A relay started in local mode stays in it.
func TestSetAuthLocalMode(t *testing.T) {
	h := newHarness(t)
	if err := h.server.SetAuth(authFile(t, tokenEntry("t", "acme", "admin"))); err == nil {
		t.Fatal("SetAuth switched a local-mode relay to tokens")
	}
}
