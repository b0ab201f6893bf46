package relay_test

import (
	"bytes"
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

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// harness is a relay on a real loopback listener over a real SQLite file.
type harness struct {
	t      testing.TB
	dir    string
	store  *sqlite.Store
	server *relay.Server
	http   *httptest.Server
	client *relay.Client
}

type harnessOption func(*relay.Config)

func withAuth(a *relay.Auth) harnessOption { return func(c *relay.Config) { c.Auth = a } }
func withLimits(l relay.Limits) harnessOption {
	return func(c *relay.Config) { c.Limits = l }
}
func withHeartbeat(d time.Duration) harnessOption { return func(c *relay.Config) { c.Heartbeat = d } }

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
}

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, dir, st, opts...)
}

// newHarnessOn starts a second relay over an already open store (two relays, one store).
func newHarnessOn(t testing.TB, dir string, st *sqlite.Store, opts ...harnessOption) *harness {
	t.Helper()
	cfg := relay.Config{Store: st, Logger: quietLogger()}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := relay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Config.ReadTimeout = cfg.Limits.ReadTimeout // as Server.Serve sets it
	ts.Start()
	h := &harness{t: t, dir: dir, store: st, server: srv, http: ts,
		client: &relay.Client{BaseURL: ts.URL, HTTP: ts.Client()}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ts.CloseClientConnections()
		ts.Close()
		_ = st.Close()
	})
	return h
}

// jsonType is the header of a request whose body is one JSON document.
var jsonType = map[string]string{"Content-Type": relay.MediaJSON}

// do sends one request and returns status, headers and body.
func (h *harness) do(method, path, token string, header map[string]string, body []byte) (int, http.Header, []byte) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.http.URL+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.http.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

func (h *harness) post(runID, token string, lines ...[]byte) (int, []byte) {
	h.t.Helper()
	code, _, body := h.do("POST", "/v1/runs/"+runID+"/events", token,
		map[string]string{"Content-Type": relay.MediaNDJSON}, ndjson(lines))
	return code, body
}

func (h *harness) postOK(runID string, lines ...[]byte) relay.AppendResult {
	h.t.Helper()
	code, body := h.post(runID, "", lines...)
	if code != 200 {
		h.t.Fatalf("POST %s: %d %s", runID, code, body)
	}
	res, err := relay.ParseAppendResult(body)
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// storedEvents reads every stored event line of a run through the store API.
func (h *harness) storedEvents(org, runID string) [][]byte {
	h.t.Helper()
	return storedEvents(h.t, h.store, org, runID)
}

func storedEvents(t testing.TB, st store.RunStore, org, runID string) [][]byte {
	t.Helper()
	evs, err := st.ReadEvents(context.Background(), org, runID, 0, 1<<20)
	if err != nil {
		t.Fatalf("ReadEvents %s/%s: %v", org, runID, err)
	}
	out := make([][]byte, len(evs))
	for i, e := range evs {
		out[i] = e.Data
	}
	return out
}

// checkSnapshot asserts that the run's stored checkpoint re-reduced with the stored events
// after it equals re-reducing all its stored events (relay.md §4), that the checkpoint is the
// state of the events it claims to cover, and that GET /v1/runs/{runId}'s state is that
// snapshot; it returns the snapshot.
func (h *harness) checkSnapshot(org, runID string) []byte {
	h.t.Helper()
	return checkSnapshot(h.t, h.store, org, runID)
}

func checkSnapshot(t testing.TB, st store.RunStore, org, runID string) []byte {
	t.Helper()
	state, _, info := storetest.CheckCheckpoint(t, st, org, runID)
	cp, err := events.DecodeReducerState(state)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Status().IsTerminal() && info.SnapshotSequence != info.LastLogicalSequence {
		t.Fatalf("terminal run %s: checkpoint covers %d of %d", runID, info.SnapshotSequence, info.LastLogicalSequence)
	}
	return state
}

func reduceLines(t testing.TB, lines [][]byte) []byte { return storetest.ReduceLines(t, lines) }

func ndjson(lines [][]byte) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// synthLines returns a deterministic valid run of n events.
func synthLines(t testing.TB, n int, seed int64, runID string) [][]byte {
	t.Helper()
	data, err := synth.Bytes(n, seed, runID)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'})
}

// ev builds one event line; payload is the type's members as JSON text without braces.
func ev(runID string, logical, seq int64, typ, payload string) []byte {
	if payload != "" {
		payload += ","
	}
	return fmt.Appendf(nil, `{"type":%q,%s"protocolVersion":1,"eventId":"%s:%d","runId":%q,"sessionId":"s-1","phaseId":"p-1","logicalSequence":%d,"sequence":%d,"timestamp":"2025-01-01T00:00:00.000Z"}`,
		typ, payload, runID, logical, runID, logical, seq)
}

// simpleRun is start, message.started, n deltas, then (if terminal) run.completed.
func simpleRun(runID string, deltas int, terminal bool) [][]byte {
	lines := [][]byte{
		ev(runID, 1, 1, "run.started", ""),
		ev(runID, 2, 2, "message.started", `"messageId":"m","role":"assistant"`),
	}
	for i := range deltas {
		n := int64(3 + i)
		lines = append(lines, ev(runID, n, n, "message.part.delta", fmt.Sprintf(`"messageId":"m","part":{"type":"text","text":"t%d "}`, i)))
	}
	if terminal {
		n := int64(3 + deltas)
		lines = append(lines, ev(runID, n, n, "run.completed", `"finishReason":"stop","content":[]`))
	}
	return lines
}

// errorBody decodes a relay error body and fails on anything else.
func errorBody(t testing.TB, status int, body []byte) *relay.Error {
	t.Helper()
	e, err := relay.ParseErrorBody(status, body)
	if err != nil {
		t.Fatalf("not an error body (%v): %s", err, body)
	}
	return e
}

// stripMeta returns a GET /v1/runs/{runId} body without its meta member, re-encoded.
func stripMeta(t testing.TB, body []byte) (snapshot []byte, meta *jsonvalue.Object) {
	t.Helper()
	obj, err := jsonvalue.ParseObject(body, "run")
	if err != nil {
		t.Fatal(err)
	}
	m, ok := obj.Get("meta")
	if !ok {
		t.Fatalf("no meta in %s", body)
	}
	obj.Delete("meta")
	return jsonvalue.AppendEncoded(nil, obj), m.(*jsonvalue.Object)
}

// collectSSE opens an SSE stream and returns its event frames and comments once the relay
// ends it.
func collectSSE(t testing.TB, c *relay.Client, runID string, opts relay.StreamOptions) (frames []relay.SSEFrame, comments []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := c.Stream(ctx, runID, opts, func(f relay.SSEFrame) error {
		if f.Comment != "" {
			comments = append(comments, f.Comment)
		} else {
			f.Data = bytes.Clone(f.Data) // Data is valid only during the callback
			frames = append(frames, f)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("stream %s %+v: %v", runID, opts, err)
	}
	return frames, comments
}

func hasPrefixAny(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
