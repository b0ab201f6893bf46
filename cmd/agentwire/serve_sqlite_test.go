package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/relay"
)

// TestServeSQLiteStoreMetrics: with the default store, /metrics carries the store's commit
// series (fed by every group commit) and its WAL series (fed by the background checkpointer
// that follows commits).
func TestServeSQLiteStoreMetrics(t *testing.T) {
	url, _, _ := startServe(t, serveOpts(filepath.Join(t.TempDir(), "data")))
	c := &relay.Client{BaseURL: url}
	run := strings.Join([]string{evStart, evMsg, evDelta, evDone}, "\n")
	if res, err := c.Append(context.Background(), "r", relay.MediaNDJSON, []byte(run)); err != nil || res.Accepted != 4 {
		t.Fatalf("%+v %v", res, err)
	}
	value := func(metrics, series string) float64 {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(metrics)
		if m == nil {
			return -1
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("%s: %v", series, err)
		}
		return v
	}
	var metrics string
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		metrics = string(b)
		if value(metrics, "agentwire_store_wal_checkpoint_seconds_count") > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v := value(metrics, "agentwire_store_commit_events_sum"); v != 4 {
		t.Errorf("agentwire_store_commit_events_sum = %v, want 4", v)
	}
	if v := value(metrics, "agentwire_store_wal_checkpoint_seconds_count"); v < 1 {
		t.Errorf("agentwire_store_wal_checkpoint_seconds_count = %v: no checkpoint observed", v)
	}
	if v := value(metrics, "agentwire_store_wal_frames"); v < 1 {
		t.Errorf("agentwire_store_wal_frames = %v, want the frames of the commit", v)
	}
	if v := value(metrics, "agentwire_store_wal_checkpoint_errors_total"); v != 0 {
		t.Errorf("agentwire_store_wal_checkpoint_errors_total = %v", v)
	}
}
