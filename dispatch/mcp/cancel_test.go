package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/dispatch/client"
)

// blockingAPI is a Dispatch server that never answers: each request reports that it started,
// then waits until its context ends (the client gave up on it) and reports that.
type blockingAPI struct {
	*httptest.Server
	started, ended chan struct{}
}

func newBlockingAPI(t testing.TB) *blockingAPI {
	b := &blockingAPI{started: make(chan struct{}, 8), ended: make(chan struct{}, 8)}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.started <- struct{}{}
		select {
		case <-r.Context().Done():
			b.ended <- struct{}{}
		case <-time.After(time.Minute):
		}
	}))
	t.Cleanup(b.Close)
	return b
}

// wait fails the test unless ch delivers within the timeout.
func wait(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

// TestCancellation: an MCP cancel of the call (the client's context ends, so the SDK sends
// notifications/cancelled) and a client that goes away (its connection closes under the
// session, as when a host process dies) both cancel the Dispatch request in flight: the
// Dispatch server sees its request context end.
func TestCancellation(t *testing.T) {
	t.Run("notifications/cancelled", func(t *testing.T) {
		api := newBlockingAPI(t)
		cs := inProcess(t, newExec(api.URL))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: dispatch.ToolWhoami})
			done <- err
		}()
		wait(t, api.started, "the Dispatch request")
		cancel()
		wait(t, api.ended, "the end of the Dispatch request")
		if err := <-done; err == nil {
			t.Error("a cancelled call returned a result")
		}
	})
	t.Run("closed client", func(t *testing.T) {
		api := newBlockingAPI(t)
		cs, log := inProcessRaw(t, newExec(api.URL))
		go func() { _, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: dispatch.ToolWhoami}) }()
		wait(t, api.started, "the Dispatch request")
		log.mu.Lock()
		conn := log.conn
		log.mu.Unlock()
		conn.Close()
		wait(t, api.ended, "the end of the Dispatch request")
	})
}

// deadlineRecorder is an http.RoundTripper that records the deadline of each request's
// context before sending it on the default transport.
type deadlineRecorder struct{ deadlines chan time.Duration }

func (d deadlineRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if dl, ok := r.Context().Deadline(); ok {
		d.deadlines <- time.Until(dl)
	} else {
		d.deadlines <- -1
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestDeadline: every Dispatch request of a call keeps the executor's 60-second deadline
// under the MCP request context; a Dispatch server slower than the deadline is a transport
// failure of §8.1, answered as an isError result.
func TestDeadline(t *testing.T) {
	api := newDispatchAPI(t)
	rec := deadlineRecorder{make(chan time.Duration, 1)}
	exec := client.New(client.Config{URL: api.URL, Token: testToken, Host: testHost, HTTPClient: &http.Client{Transport: rec}})
	api.load([]exchange{{method: "GET", path: "/api/v1/whoami", status: 200, contentType: "application/json", answer: `{"kind":"agent","owner":null}`}})
	res, err := inProcess(t, exec).CallTool(context.Background(), &sdk.CallToolParams{Name: dispatch.ToolWhoami})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if left := <-rec.deadlines; left <= dispatch.RequestDeadline-10*time.Second || left > dispatch.RequestDeadline {
		t.Errorf("deadline %v away, want %v", left, dispatch.RequestDeadline)
	}

	slow := newBlockingAPI(t)
	exec = client.New(client.Config{URL: slow.URL, Token: testToken, Host: testHost, Timeout: 50 * time.Millisecond})
	res, err = inProcess(t, exec).CallTool(context.Background(), &sdk.CallToolParams{Name: dispatch.ToolWhoami})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	want := "Dispatch at " + slow.URL + " is unreachable: context deadline exceeded. If the Dispatch URL changed, restart this agent process so it picks up the new configuration."
	if !res.IsError || resultText(res) != want {
		t.Errorf("isError %v text %q", res.IsError, resultText(res))
	}
}
