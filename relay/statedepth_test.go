package relay_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
)

// depthRuns returns the runs of the conformance corpus's depth.json: each one's events carry
// free JSON nested to the depth limit (128) in another member (events.md §3.3), so its reducer
// state nests up to three levels deeper. Each run gets its own run ID.
func depthRuns(t *testing.T) map[string][][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "conformance", "events", "depth.json"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := jsonvalue.ParseObject(data, "depth.json")
	if err != nil {
		t.Fatal(err)
	}
	list, _ := root.Get("cases")
	runs := map[string][][]byte{}
	for i, c := range list.([]any) {
		o := c.(*jsonvalue.Object)
		if op, _ := o.Get("op"); op != "reduce" {
			continue
		}
		runID := fmt.Sprintf("deep-%d", i)
		evs, _ := o.Get("events")
		var lines [][]byte
		for _, e := range evs.([]any) {
			lines = append(lines, []byte(strings.ReplaceAll(e.(string), `"runId":"run-deep"`, `"runId":"`+runID+`"`)))
		}
		runs[runID] = lines
	}
	if len(runs) < 20 {
		t.Fatalf("depth.json holds %d runs", len(runs))
	}
	return runs
}

// deepPrefix is how many of a depth.json run's events come up to and including its deep event
// (the one holding a hundred nested arrays).
func deepPrefix(t *testing.T, lines [][]byte) int {
	t.Helper()
	deep := bytes.Repeat([]byte("["), 100)
	for i, l := range lines {
		if bytes.Contains(l, deep) {
			return i + 1
		}
	}
	t.Fatal("no deep event in the run")
	return 0
}

// getSnapshot fetches GET /v1/runs/{runId} and returns its state (without `meta`), encoded. The
// body nests as deep as the state: it is parsed with 131.
func getSnapshot(t *testing.T, h *harness, runID string) []byte {
	t.Helper()
	code, _, body := h.do("GET", "/v1/runs/"+runID, "", nil, nil)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", runID, code, body)
	}
	v, err := jsonvalue.ParseDeep(body, "run", events.MaxStateDepth)
	if err != nil {
		t.Fatalf("GET %s: %v", runID, err)
	}
	o, ok := v.(*jsonvalue.Object)
	if !ok || !o.Has("meta") {
		t.Fatalf("GET %s: no meta: %.200s", runID, body)
	}
	o.Delete("meta")
	return jsonvalue.AppendEncoded(nil, o)
}

// sameEvents checks that got holds the events of want, in order, each an equal event.
func sameEvents(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, err := events.ParseEvent(got[i])
		if err != nil {
			t.Fatalf("%s: event %d: %v", what, i+1, err)
		}
		w, _ := events.ParseEvent(want[i])
		if g.Fingerprint() != w.Fingerprint() {
			t.Fatalf("%s: event %d differs:\n%.200s\n%.200s", what, i+1, got[i], want[i])
		}
	}
}

// TestRunStateAtDepthLimit: a run whose events carry free JSON nested to the depth limit, in
// each member that can carry it, reaches every client of a real relay over a real SQLite store:
// GET /v1/runs/{runId} answers its snapshot (nested deeper than any event), NDJSON and SSE
// reads give back its events, the checkpoint stored with the deep event decodes to its state,
// and after a restart the new relay loads that checkpoint, reduces the rest of the run onto it
// and answers the same snapshot (events.md §8.6, relay.md §2).
func TestRunStateAtDepthLimit(t *testing.T) {
	runs := depthRuns(t)
	h := newHarness(t)
	ctx := context.Background()
	rest := map[string][][]byte{}
	for runID, lines := range runs {
		// The first batch ends with the deep event: the run's first checkpoint is stored with
		// it, so it holds the deep value.
		n := deepPrefix(t, lines)
		if res := h.postOK(runID, lines[:n]...); res.Accepted != n {
			t.Fatalf("%s: accepted %d of %d", runID, res.Accepted, n)
		}
		rest[runID] = lines[n:]
		want := reduceLines(t, lines[:n])
		if got := getSnapshot(t, h, runID); !bytes.Equal(got, want) {
			t.Fatalf("%s: GET snapshot differs:\n got %.300s\nwant %.300s", runID, got, want)
		}
		snap, info, err := h.store.GetRun(ctx, "local", runID)
		if err != nil {
			t.Fatal(err)
		}
		if info.SnapshotSequence != int64(n) {
			t.Fatalf("%s: the checkpoint covers %d events, want %d", runID, info.SnapshotSequence, n)
		}
		st, err := events.DecodeReducerState(snap)
		if err != nil {
			t.Fatalf("%s: the stored checkpoint does not decode: %v", runID, err)
		}
		if !bytes.Equal(st.AppendJSON(nil), want) {
			t.Fatalf("%s: the stored checkpoint decodes to another state", runID)
		}
	}

	// Restart: a new relay over the same SQLite file loads each run from its checkpoint.
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := h.server.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	h.http.CloseClientConnections()
	h.http.Close()
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(h.dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h = newHarnessOn(t, h.dir, st)

	for runID, lines := range runs {
		if len(rest[runID]) > 0 {
			if res := h.postOK(runID, rest[runID]...); res.Accepted != len(rest[runID]) || res.Status != "completed" {
				t.Fatalf("%s: after the restart: %+v", runID, res)
			}
		} else if res := h.postOK(runID, lines...); res.Duplicates != len(lines) {
			t.Fatalf("%s: a re-sent run after the restart: %+v", runID, res)
		}
		want := reduceLines(t, lines)
		if got := getSnapshot(t, h, runID); !bytes.Equal(got, want) {
			t.Fatalf("%s: GET snapshot after the restart differs:\n got %.300s\nwant %.300s", runID, got, want)
		}
		snap, info, err := h.store.GetRun(ctx, "local", runID)
		if err != nil {
			t.Fatal(err)
		}
		if d, err := events.DecodeReducerState(snap); err != nil || info.SnapshotSequence != int64(len(lines)) || !bytes.Equal(d.AppendJSON(nil), want) {
			t.Fatalf("%s: the final checkpoint (covering %d) does not decode to the run's state (%v)", runID, info.SnapshotSequence, err)
		}
		got, err := h.client.ReadAllEvents(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, runID+" NDJSON", got, lines)
		var frames [][]byte
		if err := h.client.Stream(ctx, runID, relay.StreamOptions{}, func(f relay.SSEFrame) error {
			if f.Comment == "" {
				frames = append(frames, bytes.Clone(f.Data)) // Data is reused after fn returns
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		sameEvents(t, runID+" SSE", frames, lines)
	}
}
