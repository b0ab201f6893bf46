package relay_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/internal/testcerts"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
)

// With Config.TLS the relay serves HTTPS and WSS on a real listener: events posted and read
// back, an SSE stream, a bus socket and a notification, with a client that trusts only the
// test's CA (one that does not is refused); a request net/http refuses still gets the relay
// body over TLS.
func TestTLS(t *testing.T) {
	ca, err := testcerts.NewCA("agentwire test CA")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.ServerTLS(7)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := relay.New(relay.Config{Store: st, Logger: quietLogger(),
		TLS: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}})
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
	clientTLS := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	c := &relay.Client{BaseURL: "https://" + ln.Addr().String(),
		HTTP: &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	run := simpleRun("tls", 3, true)
	if res, err := c.Append(ctx, "tls", relay.MediaNDJSON, ndjson(run)); err != nil || res.Accepted != len(run) {
		t.Fatalf("append over HTTPS: %+v %v", res, err)
	}
	var ids []string
	if err := c.Stream(ctx, "tls", relay.StreamOptions{}, func(f relay.SSEFrame) error {
		if f.ID != "" {
			ids = append(ids, f.ID)
		}
		return nil
	}); err != nil && err != io.EOF {
		t.Fatalf("SSE over HTTPS: %v", err)
	}
	if len(ids) != len(run) {
		t.Fatalf("SSE over HTTPS delivered %v", ids)
	}
	conn, err := c.DialBus(ctx)
	if err != nil {
		t.Fatalf("WSS: %v", err)
	}
	if err := conn.Send(ctx, hive.FrameHello{InstanceID: relay.LocalOrg, Agents: []hive.BusAgentV1{}}); err != nil {
		t.Fatal(err)
	}
	_ = conn.CloseNow()
	if _, err := c.PublishEnvelope(ctx, env("notifications.agent.s", "agent", "tls", "k")); err != nil {
		t.Fatalf("notification over HTTPS: %v", err)
	}
	// A client that does not trust the CA is refused by TLS itself.
	plain := &relay.Client{BaseURL: c.BaseURL, HTTP: &http.Client{}}
	if _, err := plain.GetRun(ctx, "tls"); err == nil {
		t.Fatal("a client without the CA was served")
	}
	// net/http's own refusals are the relay body over TLS too.
	tc, err := tls.Dial("tcp", ln.Addr().String(), clientTLS)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	_, _ = io.WriteString(tc, "GET /v1/runs HTTP/1.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if e, err := relay.ParseErrorBody(resp.StatusCode, body); err != nil || resp.StatusCode != 400 || e.Message != "The request is not valid HTTP: missing required Host header." {
		t.Fatalf("canned answer over TLS: %d %s", resp.StatusCode, body)
	}
}
