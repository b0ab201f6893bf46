package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

func TestServeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	badAuth := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(badAuth, []byte(`[{"org":"o"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	goodAuth := filepath.Join(dir, "good.json")
	if err := os.WriteFile(goodAuth, []byte(`[]`), 0o600); err != nil {
		t.Fatal(err)
	}
	data := "--data=" + filepath.Join(dir, "data")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"nats creds without nats", []string{"serve", data, "--store", "jetstream", "--nats-creds", "x.creds"}, nil, "agentwire: --nats-creds needs --nats"},
		{"replicas on the embedded server", []string{"serve", data, "--store", "jetstream", "--nats-replicas", "3"}, nil, "agentwire: --nats-replicas 3 needs --nats"},
		{"replicas from env", []string{"serve", data}, map[string]string{"AGENTWIRE_STORE": "jetstream", "AGENTWIRE_NATS_REPLICAS": "9"}, "agentwire: invalid --nats-replicas 9"},
		{"unknown store", []string{"serve", data, "--store", "redis"}, nil, `agentwire: unknown --store "redis"`},
		{"nats without jetstream", []string{"serve", data, "--nats", "nats://x"}, nil, "agentwire: --nats needs --store jetstream"},
		{"non-loopback in local mode", []string{"serve", data, "--addr", "0.0.0.0:0"}, nil, "agentwire: refusing to listen on 0.0.0.0:0"},
		{"all interfaces from env", []string{"serve", data}, map[string]string{"AGENTWIRE_ADDR": ":0"}, "agentwire: refusing to listen on :0"},
		{"bad log format", []string{"serve", data, "--log-format", "xml"}, nil, `agentwire: unknown --log-format "xml"`},
		{"bad log level", []string{"serve", data, "--log-level", "loud"}, nil, `agentwire: unknown --log-level "loud"`},
		{"bad max body", []string{"serve", data, "--max-body", "0"}, nil, "agentwire: invalid --max-body"},
		{"bad max body env", []string{"serve", data}, map[string]string{"AGENTWIRE_MAX_BODY": "lots"}, "agentwire: invalid --max-body"},
		{"bad max batch env", []string{"serve", data}, map[string]string{"AGENTWIRE_MAX_BATCH": "x"}, `agentwire: invalid AGENTWIRE_MAX_BATCH "x"`},
		{"bad auth file", []string{"serve", data, "--auth", badAuth}, nil, "agentwire: cannot use --auth: "},
		{"missing auth file", []string{"serve", data, "--auth", badAuth + ".nope"}, nil, "agentwire: cannot use --auth: "},
		{"bad bus pong", []string{"serve", data, "--bus-pong", "-1s"}, nil, "agentwire: invalid --bus-pong -1s"},
		{"bad bus ping env", []string{"serve", data}, map[string]string{"AGENTWIRE_BUS_PING": "often"}, `agentwire: invalid AGENTWIRE_BUS_PING "often"`},
		{"bad state cache", []string{"serve", data, "--state-cache", "lots"}, nil, "agentwire: invalid --state-cache"},
		{"negative state cache from env", []string{"serve", data}, map[string]string{"AGENTWIRE_STATE_CACHE": "-5MiB"}, "agentwire: invalid --state-cache"},
		{"allowed origin in local mode", []string{"serve", data, "--allow-origin", "https://viewer.example"}, nil, "agentwire: --allow-origin needs --auth"},
		{"allowed origin that is a host", []string{"serve", data, "--auth", goodAuth, "--allow-origin", "viewer.example"}, nil, `agentwire: invalid --allow-origin "viewer.example"`},
		{"allowed origin with a path from env", []string{"serve", data, "--auth", goodAuth}, map[string]string{"AGENTWIRE_ALLOW_ORIGIN": "https://a.example,https://b.example/app"}, `agentwire: invalid --allow-origin "https://b.example/app"`},
		{"positional argument", []string{"serve", "x"}, nil, "agentwire: agentwire serve takes 0 argument(s), got 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, out, errs := runCLI(t, "", tc.args...)
			if code != 2 || out != "" || !strings.HasPrefix(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
			}
		})
	}
}

func TestServeDefaults(t *testing.T) {
	f := newServeCmd().Flags()
	for name, want := range map[string]string{
		"addr": "127.0.0.1:7420", "data": "./agentwire-data", "store": "sqlite", "max-body": "4MiB",
		"max-event": "1MiB", "max-batch": "10000", "log-format": "text", "bus-ping": "30s", "bus-pong": "15s",
		"checkpoint-interval": "5s",
	} {
		if got := f.Lookup(name).DefValue; got != want {
			t.Errorf("--%s default %q, want %q", name, got, want)
		}
	}
	for _, tc := range []struct {
		in   string
		want int64
	}{{"4MiB", 4 << 20}, {"512KiB", 512 << 10}, {"1G", 1 << 30}, {"123", 123}, {"10B", 10}} {
		if got, err := parseSize(tc.in); err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v", tc.in, got, err)
		}
	}
	for _, bad := range []string{"", "-1", "0", "1.5MiB", "MiB", "99999999999G"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}

// syncBuffer is a goroutine-safe writer for the server's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var urlRE = regexp.MustCompile(`http://[0-9.:\[\]]+`)

// startServe runs the relay in process and returns its URL and a stop function that cancels it
// and returns runServe's error.
func startServe(t *testing.T, o serveOptions) (string, func() error, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs syncBuffer
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, o, &out, &errs) }()
	deadline := time.Now().Add(10 * time.Second)
	for !urlRE.MatchString(out.String()) {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve ended early: %v; stderr %s", err, errs.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("serve printed no URL")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not stop")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return urlRE.FindString(out.String()), stop, &errs
}

func serveOpts(dir string) serveOptions {
	return serveOptions{addr: "127.0.0.1:0", data: dir, store: "sqlite", maxBody: "4MiB", maxEvent: "1MiB",
		maxBatch: relay.DefaultMaxBatch, logFormat: "json", logLevel: "info"}
}

func TestServeRunsAndStopsGracefully(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	url, stop, logs := startServe(t, serveOpts(dir))
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "{\"status\":\"ok\"}\n" {
		t.Fatalf("healthz %d %s", resp.StatusCode, body)
	}
	c := &relay.Client{BaseURL: url}
	run := strings.Join([]string{evStart, evMsg, evDelta, evDone}, "\n")
	if res, err := c.Append(context.Background(), "r", relay.MediaNDJSON, []byte(run)); err != nil || res.Accepted != 4 {
		t.Fatalf("%+v %v", res, err)
	}
	// An open follow stream gets a clean end on shutdown.
	streamDone := make(chan []string, 1)
	started := make(chan struct{})
	go func() {
		var comments []string
		once := sync.Once{}
		_ = c.Stream(context.Background(), "r", relay.StreamOptions{Follow: true}, func(f relay.SSEFrame) error {
			once.Do(func() { close(started) })
			if f.Comment != "" {
				comments = append(comments, f.Comment)
			}
			return nil
		})
		streamDone <- comments
	}()
	select {
	case <-started:
	case comments := <-streamDone:
		t.Fatalf("stream ended before its first frame (comments %q)", comments)
	case <-time.After(30 * time.Second):
		t.Fatal("stream delivered no frame")
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	select {
	case comments := <-streamDone:
		if len(comments) == 0 || !strings.HasPrefix(comments[len(comments)-1], "agentwire: server shutting down; last delivered id: 4") {
			t.Fatalf("comments %q", comments)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stream not ended")
	}
	if !strings.Contains(logs.String(), `"msg":"relay stopped"`) {
		t.Fatalf("logs: %s", logs.String())
	}
	// The store was closed (its lock released) and holds the run.
	st, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, info, err := st.GetRun(context.Background(), relay.LocalOrg, "r"); err != nil || info.EventCount != 4 || info.Status != "completed" {
		t.Fatalf("%+v %v", info, err)
	}
	if _, _, err := st.GetRun(context.Background(), "other", "r"); err != store.ErrNotFound {
		t.Fatal(err)
	}
}

func TestServeWithAuthFile(t *testing.T) {
	dir := t.TempDir()
	authPath := filepath.Join(dir, "auth.json")
	entry := `[{"token_sha256":"` + relay.HashToken("s3cret") + `","org":"acme","instance_id":"i1","instance_label":"CI","rights":["runs.write","runs.read"]}]`
	if err := os.WriteFile(authPath, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	o := serveOpts(filepath.Join(dir, "data"))
	o.auth = authPath
	url, _, _ := startServe(t, o)
	run := strings.Join([]string{evStart, evMsg}, "\n")
	if _, err := (&relay.Client{BaseURL: url}).Append(context.Background(), "r", relay.MediaNDJSON, []byte(run)); err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("no token: %v", err)
	}
	if res, err := (&relay.Client{BaseURL: url, Token: "s3cret"}).Append(context.Background(), "r", relay.MediaNDJSON, []byte(run)); err != nil || res.Accepted != 2 {
		t.Fatalf("%+v %v", res, err)
	}
}
