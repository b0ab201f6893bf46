package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/relay"
)

// TestServeJetStreamEmbedded: --store jetstream without --nats embeds a server in the data dir;
// a run written before a restart is read back after it, /healthz answers while the store does.
func TestServeJetStreamEmbedded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	o := serveOpts(dir)
	o.store = "jetstream"
	url, stop, _ := startServe(t, o)
	health := func(url string) int {
		t.Helper()
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := health(url); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	c := &relay.Client{BaseURL: url}
	run := strings.Join([]string{evStart, evMsg, evDelta, evDone}, "\n")
	if res, err := c.Append(context.Background(), "r", relay.MediaNDJSON, []byte(run)); err != nil || res.Accepted != 4 {
		t.Fatalf("%+v %v", res, err)
	}
	// /metrics: the NATS publish latency by stream, the store commit histogram fed by the runs
	// stream's batches, and the connection's series.
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`agentwire_nats_publish_seconds_count{stream="AGENTWIRE_RUNS"} `,
		"agentwire_store_commit_seconds_count ",
		"agentwire_store_commit_events_sum 4\n",
		"agentwire_nats_reconnects_total 0\n",
		"agentwire_nats_connected 1\n",
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(string(metrics), "agentwire_store_commit_seconds_count 0\n") || strings.Contains(string(metrics), `agentwire_nats_publish_seconds_count{stream="AGENTWIRE_RUNS"} 0`) {
		t.Errorf("/metrics: no commit observed:\n%s", metrics)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	url, _, _ = startServe(t, o)
	if code := health(url); code != 200 {
		t.Fatalf("healthz after restart %d", code)
	}
	resp, err = http.Get(url + "/v1/runs/r")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"eventCount":4`) || !strings.Contains(string(body), `"status":"completed"`) {
		t.Fatalf("GET run after restart: %d %s", resp.StatusCode, body)
	}
	if fi, err := os.Stat(filepath.Join(dir, jetstream.EmbeddedDir, "jetstream")); err != nil || !fi.IsDir() {
		t.Fatalf("the embedded server stores outside the data dir: %v", err)
	}
}
