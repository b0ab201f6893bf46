package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentwire/agentwire/internal/localnet"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
)

// screenCase is one request the screen or a route wrapper must refuse.
type screenCase struct {
	name, method, path string
	header             map[string]string
	body               string
}

const evil = "https://evil.example"

func upgradeHeaders(extra map[string]string) map[string]string {
	h := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket",
		"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

// Every refusal of local mode's browser rules (relay.md §1), the media and encoding rules and
// the one-body rule (§2), pinned in testdata/screen.golden: status, the headers that matter
// and the body. Afterwards nothing was stored.
func TestScreenRefusals(t *testing.T) {
	h := newHarness(t)
	run := simpleRun("screened", 3, false)
	events := string(ndjson(run))
	nd := map[string]string{"Content-Type": relay.MediaNDJSON}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	message := `{"client_msg_id":"c1","network":{"kind":"org","channel":"` + chGeneral + `"},"type":"note","from":"codex","body":{"text":"hi"}}`
	envelope := string(env("notifications.agent.ses_1", "agent", "e1", "k1"))
	cases := []screenCase{
		// DNS rebinding: a foreign name in Host.
		{"rebound host, runs write", "POST", "/v1/runs/screened/events", with(nd, "Host", "evil.example:7420"), events},
		{"rebound host, runs read", "GET", "/v1/runs", map[string]string{"Host": "evil.example"}, ""},
		{"rebound host, bus read", "GET", "/v1/messages?network=org&channel=" + chGeneral, map[string]string{"Host": "evil.example"}, ""},
		{"rebound host that resolves to loopback", "GET", "/healthz", map[string]string{"Host": "127.0.0.1.nip.io"}, ""},
		// Cross-site pages: a foreign Origin.
		{"foreign origin, runs write", "POST", "/v1/runs/screened/events", with(nd, "Origin", evil), events},
		{"foreign origin, message", "POST", "/v1/messages", with(jsonType, "Origin", evil), message},
		{"foreign origin, notification", "POST", "/v1/notifications", with(jsonType, "Origin", evil), envelope},
		{"foreign origin, notification stream with session", "GET", "/v1/notifications/stream?subject=notifications.>&session=ses_1", map[string]string{"Origin": evil, "Accept": relay.MediaSSE}, ""},
		{"foreign origin, bus socket", "GET", "/v1/bus", upgradeHeaders(map[string]string{"Origin": evil}), ""},
		{"opaque origin", "POST", "/v1/runs/screened/events", with(nd, "Origin", "null"), events},
		{"loopback name in a foreign origin", "GET", "/v1/runs", map[string]string{"Origin": "http://localhost.evil.example"}, ""},
		// "Simple" requests that need no preflight: no or a non-JSON media type.
		{"message as text/plain", "POST", "/v1/messages", map[string]string{"Content-Type": "text/plain"}, message},
		{"message without a type", "POST", "/v1/messages", nil, message},
		{"receipt as a form", "POST", "/v1/messages/01J0000000000000000000000/receipts", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `{"state":"read"}`},
		{"notification without a type", "POST", "/v1/notifications", nil, envelope},
		{"notification as multipart", "POST", "/v1/notifications", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, envelope},
		{"events as text/plain", "POST", "/v1/runs/screened/events", map[string]string{"Content-Type": "text/plain"}, events},
		{"two content types", "POST", "/v1/notifications", nil, envelope}, // set below: two values
		{"gzip body", "POST", "/v1/runs/screened/events", with(nd, "Content-Encoding", "gzip"), events},
		{"identity then gzip", "POST", "/v1/notifications", with(jsonType, "Content-Encoding", "identity, gzip"), envelope},
		// Paths and methods: the relay body, never a redirect.
		{"dot-dot path", "GET", "/v1/runs/../runs", nil, ""},
		{"dot path", "GET", "/v1/./runs", nil, ""},
		{"double slash", "GET", "//v1/runs", nil, ""},
		{"double slash inside", "POST", "/v1/runs//events", nd, events},
		{"unknown route", "GET", "/nosuch", nil, ""},
		{"trailing slash", "GET", "/v1/runs/", nil, ""},
		{"wrong method", "DELETE", "/v1/runs", nil, ""},
		{"wrong method on the bus", "PUT", "/v1/messages", jsonType, message},
		{"bus without upgrade", "GET", "/v1/bus", nil, ""},
		{"bus with an old socket version", "GET", "/v1/bus", upgradeHeaders(map[string]string{"Sec-WebSocket-Version": "8"}), ""},
		{"bus without a socket key", "GET", "/v1/bus", upgradeHeaders(map[string]string{"Sec-WebSocket-Key": ""}), ""},
		// Queries: malformed, repeated.
		{"repeated limit", "GET", "/v1/runs?limit=1&limit=2", nil, ""},
		{"repeated after", "GET", "/v1/runs/screened/events?after=1&after=2", nil, ""},
		{"repeated session", "GET", "/v1/notifications/stream?subject=notifications.>&session=a&session=b", nil, ""},
		{"repeated cursor", "GET", "/v1/bus/poll?cursor=AQA&cursor=AQA", nil, ""},
		{"malformed query", "GET", "/v1/runs?limit=%zz", nil, ""},
		{"unknown runs parameter", "GET", "/v1/runs?sort=asc", nil, ""},
		{"unknown events parameter", "GET", "/v1/runs/screened/events?before=3", nil, ""},
		// Ids are at most 512 bytes on every store (relay.md §5.1.1).
		{"run ID over the id limit", "POST", "/v1/runs/" + strings.Repeat("r", 513) + "/events", nd, events},
		{"run ID over the id limit, read", "GET", "/v1/runs/" + strings.Repeat("r", 513), nil, ""},
		// Values that are not echoed whole.
		{"huge Last-Event-ID", "GET", "/v1/runs/screened/events", map[string]string{"Accept": relay.MediaSSE, "Last-Event-ID": strings.Repeat("9", 100<<10)}, ""},
		{"huge content type", "POST", "/v1/runs/screened/events", map[string]string{"Content-Type": "application/" + strings.Repeat("x", 50<<10)}, events},
		{"huge origin", "GET", "/v1/runs", map[string]string{"Origin": "https://" + strings.Repeat("e", 50<<10) + ".example"}, ""},
	}
	var out strings.Builder
	for _, c := range cases {
		req, err := http.NewRequest(c.method, h.http.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range c.header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		if c.name == "two content types" {
			req.Header.Add("Content-Type", relay.MediaJSON)
			req.Header.Add("Content-Type", "text/plain")
		}
		resp, err := h.http.Client().Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); ct != relay.MediaJSON {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
		if loc := resp.Header.Get("Location"); loc != "" {
			t.Errorf("%s: redirect to %s", c.name, loc)
		}
		if len(body) > 400 {
			t.Errorf("%s: %d-byte body echoes the request: %.200s", c.name, len(body), body)
		}
		if _, err := relay.ParseErrorBody(resp.StatusCode, body); err != nil {
			t.Errorf("%s: not an error body (%v): %s", c.name, err, body)
		}
		fmt.Fprintf(&out, "== %s\n%d", c.name, resp.StatusCode)
		for _, k := range []string{"Allow", "Upgrade", "Sec-WebSocket-Version"} {
			if v := resp.Header.Get(k); v != "" {
				fmt.Fprintf(&out, " %s: %s", k, v)
			}
		}
		fmt.Fprintf(&out, "\n%s", body)
	}
	golden(t, "screen.golden", []byte(out.String()))

	// Nothing of the refused writes was kept.
	if code, _, body := h.do("GET", "/v1/runs/screened", "", nil, nil); code != 404 {
		t.Fatalf("refused run stored: %d %s", code, body)
	}
	if l := h.history("", "network=org&channel="+chGeneral); len(l.Messages) != 0 {
		t.Fatalf("refused message stored: %v", texts(l))
	}
	if got := h.publishOK("", []byte(envelope)); got.Seq != 1 {
		t.Fatalf("refused envelope stored: %+v", got)
	}
}

// The same requests from a loopback page (any port), with no Origin (a program), and over
// every loopback Host form pass the screen.
func TestScreenAdmitsLoopback(t *testing.T) {
	h := newHarness(t)
	port := h.http.Listener.Addr().(*net.TCPAddr).Port
	for i, c := range []map[string]string{
		{},
		{"Origin": "http://localhost:5173"},
		{"Origin": "http://127.0.0.1:" + fmt.Sprint(port)},
		{"Origin": "https://[::1]"},
		{"Host": fmt.Sprintf("localhost:%d", port)},
		{"Host": "127.0.0.2"},
		{"Host": "[::1]:1"},
	} {
		run := fmt.Sprintf("ok-%d", i)
		hdr := map[string]string{"Content-Type": relay.MediaNDJSON}
		for k, v := range c {
			hdr[k] = v
		}
		code, _, body := h.do("POST", "/v1/runs/"+run+"/events", "", hdr, ndjson(simpleRun(run, 3, false)))
		if code != 200 {
			t.Fatalf("%v: %d %s", c, code, body)
		}
	}
	// A loopback page may open the bus socket.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.http.URL, "http")+"/v1/bus",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://localhost:3000"}}})
	if err != nil {
		t.Fatalf("loopback origin socket: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	conn.CloseNow()
}

// A page on another site opening the bus socket gets no 101: the handshake is answered 403
// with the hive body, so it can neither say hello as `local` nor read or post anything.
func TestBrowserCannotOpenLocalBus(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, origin := range []string{evil, "null", "http://localhost.evil.example:7420"} {
		conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.http.URL, "http")+"/v1/bus",
			&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
		if err == nil {
			conn.CloseNow()
			t.Fatalf("%s: socket opened", origin)
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("%s: %v %v", origin, resp, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), `"code":"forbidden_right"`) || !strings.Contains(string(body), `"field":"Origin"`) {
			t.Fatalf("%s: %s", origin, body)
		}
	}
	if n := h.server.Metrics(); n == nil {
		t.Fatal("no metrics")
	}
	if l := h.history("", "network=org&channel="+chGeneral); len(l.Messages) != 0 {
		t.Fatalf("stored: %v", texts(l))
	}
}

// In auth mode a token does not make a foreign page's request acceptable; --allow-origin
// admits a listed origin with CORS headers and answers its preflight; the relay's own origin
// (its viewer, behind any name) passes.
func TestAuthModeOrigins(t *testing.T) {
	auth := authFile(t, tokenEntry("writer", "acme", "runs.write", "runs.read"))
	h := newHarness(t, withAuth(auth), func(c *relay.Config) {
		c.AllowOrigins = []string{"https://Viewer.Example:443/"}
	})
	post := func(run string, hdr map[string]string) (int, http.Header, []byte) {
		all := map[string]string{"Content-Type": relay.MediaNDJSON}
		for k, v := range hdr {
			all[k] = v
		}
		return h.do("POST", "/v1/runs/"+run+"/events", "writer", all, ndjson(simpleRun(run, 3, false)))
	}
	code, _, body := post("a", map[string]string{"Origin": evil})
	if e := errorBody(t, code, body); code != 403 || e.Code != relay.CodeForbidden || e.Message != `Origin "https://evil.example" is not allowed: list it with --allow-origin.` {
		t.Fatalf("foreign origin with a token: %d %s", code, body)
	}
	code, hdr, body := post("b", map[string]string{"Origin": "https://viewer.example"})
	if code != 200 || hdr.Get("Access-Control-Allow-Origin") != "https://viewer.example" || !strings.Contains(hdr.Get("Vary"), "Origin") {
		t.Fatalf("listed origin: %d %v %s", code, hdr, body)
	}
	code, hdr, _ = h.do("OPTIONS", "/v1/runs/b/events", "", map[string]string{"Origin": "https://viewer.example",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}, nil)
	if code != 204 || hdr.Get("Access-Control-Allow-Origin") != "https://viewer.example" ||
		!strings.Contains(hdr.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", code, hdr)
	}
	code, hdr, _ = h.do("OPTIONS", "/v1/runs/b/events", "", map[string]string{"Origin": evil, "Access-Control-Request-Method": "POST"}, nil)
	if code != 403 || hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("foreign preflight: %d %v", code, hdr)
	}
	// The relay's own origin under a public name (auth mode checks no Host).
	code, hdr, body = post("c", map[string]string{"Host": "relay.example", "Origin": "https://relay.example"})
	if code != 200 || hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("same origin: %d %v %s", code, hdr, body)
	}
	if code, _, body := h.do("GET", "/v1/runs/a", "writer", nil, nil); code != 404 {
		t.Fatalf("refused run stored: %d %s", code, body)
	}
	// Local mode takes no list: every request there has every right.
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "x.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := relay.New(relay.Config{Store: st, AllowOrigins: []string{"https://viewer.example"}}); err == nil {
		t.Fatal("AllowOrigins accepted without Auth")
	}
	if _, err := relay.New(relay.Config{Store: st, Auth: auth, AllowOrigins: []string{"viewer.example"}}); err == nil {
		t.Fatal("a host accepted as an origin")
	}
}

// A head above Limits.MaxHeaderBytes is 431 in the relay body, whether the screen sees it or
// net/http cuts it before any handler runs (Server.Serve rewrites its canned answers); so are
// requests net/http refuses to parse. Raw requests over a real listener.
func TestWireAnswersUseTheBody(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := relay.New(relay.Config{Store: st, Logger: quietLogger(), Limits: relay.Limits{MaxHeaderBytes: 8 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	addr := ln.Addr().String()
	raw := func(req string) (int, string) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		go func() { _, _ = io.WriteString(c, req) }()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%.60q: %v", req, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if ct := resp.Header.Get("Content-Type"); ct != relay.MediaJSON {
			t.Fatalf("%.60q: Content-Type %q: %s", req, ct, body)
		}
		if _, err := relay.ParseErrorBody(resp.StatusCode, body); err != nil {
			t.Fatalf("%.60q: %v: %s", req, err, body)
		}
		return resp.StatusCode, string(body)
	}
	big := func(n int) string { return "X-Big: " + strings.Repeat("b", n) + "\r\n" }
	for _, c := range []struct {
		name, req string
		status    int
		msg       string
	}{
		{"head over the screen's limit", "GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n" + big(10<<10) + "\r\n", 431,
			"The request line and headers exceed the limit of 8192 bytes."},
		{"head over net/http's limit", "GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n" + big(64<<10) + "\r\n", 431,
			"The request line and headers exceed the limit of 8192 bytes."},
		{"no Host", "GET /v1/runs HTTP/1.1\r\n\r\n", 400, "The request is not valid HTTP: missing required Host header."},
		{"HTTP/1.0 without Host", "GET /v1/runs HTTP/1.0\r\n\r\n", 403,
			`Host "" is not a loopback name or address: without --auth the relay answers only localhost, 127.0.0.0/8 and [::1].`},
		{"bad header line", "GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n", 400, "The request is not valid HTTP: invalid header name."},
		{"bad request line", "GARBAGE\r\n\r\n", 400, "The request is not valid HTTP."},
		{"unknown transfer coding", "POST /v1/notifications HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: zip\r\n\r\n", 501,
			"The request's Transfer-Encoding is not supported."},
	} {
		status, body := raw(c.req)
		e, _ := relay.ParseErrorBody(status, []byte(body))
		if status != c.status || e.Message != c.msg {
			t.Errorf("%s: %d %s", c.name, status, body)
		}
	}
}

// FuzzScreen sends any HTTP/1.1 request net/http can parse to a local-mode relay. Whatever
// the request: every answer of 400 or more is an error body; nothing is accepted from a
// foreign Host or Origin, nor a POST without a JSON media type, nor a body with a
// Content-Encoding (relay.md §1–§2).
func FuzzScreen(f *testing.F) {
	ev := string(ndjson(simpleRun("fz", 1, false)))
	for _, seed := range []string{
		"POST /v1/runs/fz/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\n\r\n" + ev,
		"POST /v1/runs/fz/events HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/x-ndjson\r\n\r\n" + ev,
		"POST /v1/runs/fz/events HTTP/1.1\r\nHost: localhost\r\nOrigin: https://evil.example\r\nContent-Type: application/x-ndjson\r\n\r\n" + ev,
		"POST /v1/messages HTTP/1.1\r\nHost: [::1]:7420\r\nContent-Type: text/plain\r\n\r\n{}",
		"GET /v1/bus HTTP/1.1\r\nHost: localhost\r\nOrigin: null\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
		"GET /v1/runs/../runs?limit=1&limit=2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
		"POST /v1/notifications HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Encoding: gzip\r\nContent-Type: application/json\r\n\r\n{}",
		"OPTIONS /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost:3000\r\nAccess-Control-Request-Method: POST\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	h := newHarness(f)
	handler := h.server.Handler()
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return
		}
		if req.Header.Get("Upgrade") != "" || strings.Contains(req.URL.Path, "stream") || req.Header.Get("Accept") != "" {
			return // long-lived streams and socket upgrades are not single answers
		}
		req.RemoteAddr = "127.0.0.1:1"
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		code := rec.Code
		if code >= 400 {
			if _, err := relay.ParseErrorBody(code, rec.Body.Bytes()); err != nil {
				t.Fatalf("%d without an error body (%v): %q", code, err, rec.Body.Bytes())
			}
			return
		}
		foreignHost := !localnet.HostIsLoopback(req.Host)
		_, hasOrigin := req.Header["Origin"]
		foreignOrigin := hasOrigin && !localnet.OriginIsLoopback(req.Header.Get("Origin"))
		ct := req.Header.Get("Content-Type")
		if foreignHost || foreignOrigin {
			t.Fatalf("%d for Host %q Origin %q", code, req.Host, req.Header.Get("Origin"))
		}
		if req.Method == http.MethodPost && !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/x-ndjson") {
			t.Fatalf("POST with Content-Type %q answered %d", ct, code)
		}
		if ce := req.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(strings.TrimSpace(ce), "identity") {
			t.Fatalf("Content-Encoding %q answered %d", ce, code)
		}
	})
}
