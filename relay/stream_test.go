package relay_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

// sequentialOnly hides the store's StreamAppender: a relay on it takes the sequential path.
type sequentialOnly struct{ store.Store }

// countingStreams counts the AppendRunStream calls the relay makes.
type countingStreams struct {
	*sqlite.Store
	streams atomic.Int64
}

func (c *countingStreams) AppendRunStream(ctx context.Context, org, runID string, s store.AppendStream) (store.RunInfo, error) {
	c.streams.Add(1)
	return c.Store.AppendRunStream(ctx, org, runID, s)
}

// twin is one side of TestStreamedAppendMatchesSequential: a store and three relays on it
// (b writes behind a's back; c starts with a cold cache).
type twin struct {
	st      store.Store
	servers [3]*relay.Server
}

func newTwin(t testing.TB, st store.Store, raw *sqlite.Store, limits relay.Limits) *twin {
	tw := &twin{st: st}
	for i := range tw.servers {
		srv, err := relay.New(relay.Config{Store: st, Logger: quietLogger(), Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		tw.servers[i] = srv
	}
	t.Cleanup(func() {
		for _, srv := range tw.servers {
			_ = srv.Shutdown(context.Background())
		}
		_ = raw.Close()
	})
	return tw
}

func (tw *twin) post(server int, runID string, lines [][]byte) (int, []byte) {
	req := httptest.NewRequest("POST", "/v1/runs/"+runID+"/events", bytes.NewReader(ndjson(lines)))
	req.Host = "127.0.0.1" // local mode answers loopback names only
	req.Header.Set("Content-Type", relay.MediaNDJSON)
	rec := httptest.NewRecorder()
	tw.servers[server].Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// TestStreamedAppendMatchesSequential posts the same long batches to a relay whose store
// streams (the batch parsed, reduced and inserted in overlapping parts) and to one whose store
// does not, and requires the same answer, byte for byte, and the same stored run after every
// step: accepted batches, replays (all duplicates, partly duplicates), refusals in the first
// and in later parts (parse fault, runId mismatch, oversized event, reducer refusal), a cache
// made stale by another relay on the same store, and a cold cache.
func TestStreamedAppendMatchesSequential(t *testing.T) {
	const runID = "st"
	run := synthLines(t, 600, 7, runID)
	limits := relay.Limits{MaxEvent: 8 << 10}
	big := fmt.Appendf(nil, `{"pad":%q}`, strings.Repeat("x", 9<<10))
	with := func(lo, hi int, f func(lines [][]byte)) [][]byte {
		lines := append([][]byte(nil), run[lo:hi]...)
		if f != nil {
			f(lines)
		}
		return lines
	}
	steps := []struct {
		name   string
		server int
		lines  [][]byte
	}{
		{"first batch", 0, with(0, 100, nil)},
		{"replay: all duplicates", 0, with(0, 100, nil)},
		{"half duplicates", 0, with(50, 180, nil)},
		{"written by another relay", 1, with(180, 200, nil)},
		{"stale cache", 0, with(200, 300, nil)},
		{"parse fault in a later part", 0, with(300, 400, func(l [][]byte) { l[90] = []byte(`{"type":`) })},
		{"runId mismatch", 0, with(300, 400, func(l [][]byte) { l[80] = bytes.Replace(l[80], []byte(`"runId":"st"`), []byte(`"runId":"other"`), 1) })},
		{"oversized event", 0, with(300, 400, func(l [][]byte) { l[66] = big })},
		{"reducer refusal in a later part", 0, with(300, 400, func(l [][]byte) { l[70], l[71] = l[71], l[70] })},
		{"refusal in the first part", 0, with(300, 400, func(l [][]byte) { l[3] = []byte(`[]`) })},
		{"cold cache refusal", 2, with(300, 400, func(l [][]byte) { l[75], l[76] = l[76], l[75] })},
		{"cold cache duplicates", 2, with(0, 100, nil)},
		{"duplicates then a fault", 2, with(250, 350, func(l [][]byte) { l[99] = []byte(`{}`) })},
		{"rest of the run", 0, with(300, 600, nil)},
		{"whole run replayed", 0, with(0, 600, nil)},
	}

	var sides [2]*twin
	counting := &countingStreams{}
	for i := range sides {
		raw, err := sqlite.Open(filepath.Join(t.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var st store.Store = sequentialOnly{raw}
		if i == 0 {
			counting.Store = raw
			st = counting
		}
		sides[i] = newTwin(t, st, raw, limits)
	}
	ctx := context.Background()
	for _, step := range steps {
		code0, body0 := sides[0].post(step.server, runID, step.lines)
		code1, body1 := sides[1].post(step.server, runID, step.lines)
		if code0 != code1 || !bytes.Equal(body0, body1) {
			t.Fatalf("%s: streamed %d %s, sequential %d %s", step.name, code0, body0, code1, body1)
		}
		t.Logf("%s: %d %s", step.name, code0, bytes.TrimSpace(body0))
		snap0, info0, err0 := sides[0].st.GetRun(ctx, relay.LocalOrg, runID)
		snap1, info1, err1 := sides[1].st.GetRun(ctx, relay.LocalOrg, runID)
		if err0 != nil || err1 != nil {
			t.Fatalf("%s: GetRun: %v, %v", step.name, err0, err1)
		}
		if !bytes.Equal(snap0, snap1) || info0.LastLogicalSequence != info1.LastLogicalSequence || info0.EventCount != info1.EventCount || info0.Status != info1.Status {
			t.Fatalf("%s: stored runs differ: %+v vs %+v", step.name, info0, info1)
		}
		ev0, ev1 := storedEvents(t, sides[0].st, relay.LocalOrg, runID), storedEvents(t, sides[1].st, relay.LocalOrg, runID)
		if !bytes.Equal(bytes.Join(ev0, nil), bytes.Join(ev1, nil)) {
			t.Fatalf("%s: stored events differ (%d vs %d)", step.name, len(ev0), len(ev1))
		}
		checkSnapshot(t, sides[0].st, relay.LocalOrg, runID)
	}
	if n := counting.streams.Load(); n < int64(len(steps))-3 {
		t.Fatalf("the streaming relay streamed %d of %d long batches", n, len(steps))
	}
	if got := storedEvents(t, sides[0].st, relay.LocalOrg, runID); !bytes.Equal(bytes.Join(got, []byte{'\n'}), bytes.Join(run, []byte{'\n'})) {
		t.Fatalf("the streamed run is not the posted run (%d events)", len(got))
	}
}

// FuzzStreamedMatchesSequential posts each input as an NDJSON batch to a relay whose store
// streams and to one whose store does not, and requires the same answer, byte for byte, and
// the same stored run. The input's lines are used as they are; the seeds are long batches
// (the streamed path starts at 64 events) with faults at various places, and runs persist
// across inputs, so later inputs meet existing state (duplicates, conflicts with stored
// events).
func FuzzStreamedMatchesSequential(f *testing.F) {
	run := synthLines(f, 300, 11, "fz")
	f.Add(ndjson(run[:100]))
	f.Add(ndjson(run[50:200]))
	broken := append([][]byte(nil), run[100:200]...)
	broken[70] = []byte(`{"type":"message.part.delta"}`)
	f.Add(ndjson(broken))
	swapped := append([][]byte(nil), run[100:200]...)
	swapped[3], swapped[90] = swapped[90], swapped[3]
	f.Add(ndjson(swapped))
	f.Add(ndjson(run[200:]))

	var sides [2]*twin
	for i := range sides {
		raw, err := sqlite.Open(filepath.Join(f.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
		if err != nil {
			f.Fatal(err)
		}
		var st store.Store = raw
		if i == 1 {
			st = sequentialOnly{raw}
		}
		sides[i] = newTwin(f, st, raw, relay.Limits{MaxEvent: 8 << 10})
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, body []byte) {
		lines := bytes.Split(bytes.TrimSuffix(body, []byte{'\n'}), []byte{'\n'})
		code0, body0 := sides[0].post(0, "fz", lines)
		code1, body1 := sides[1].post(0, "fz", lines)
		if code0 != code1 || !bytes.Equal(body0, body1) {
			t.Fatalf("streamed %d %s, sequential %d %s", code0, body0, code1, body1)
		}
		snap0, info0, err0 := sides[0].st.GetRun(ctx, relay.LocalOrg, "fz")
		snap1, info1, err1 := sides[1].st.GetRun(ctx, relay.LocalOrg, "fz")
		if (err0 == nil) != (err1 == nil) || !bytes.Equal(snap0, snap1) || info0.LastLogicalSequence != info1.LastLogicalSequence || info0.EventCount != info1.EventCount || info0.Status != info1.Status {
			t.Fatalf("stored runs differ: %+v %v vs %+v %v", info0, err0, info1, err1)
		}
	})
}
