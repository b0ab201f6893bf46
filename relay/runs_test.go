package relay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/relay"
)

func TestAppendReadAndSnapshot(t *testing.T) {
	h := newHarness(t)
	lines := synthLines(t, 60, 7, "run-a")
	res := h.postOK("run-a", lines[:25]...)
	if res != (relay.AppendResult{Accepted: 25, LastLogicalSequence: 25, Status: "running"}) {
		t.Fatalf("first batch: %+v", res)
	}
	// One event as application/json.
	code, _, body := h.do("POST", "/v1/runs/run-a/events", "", map[string]string{"Content-Type": "application/json; charset=utf-8"}, lines[25])
	if code != 200 || string(body) != `{"accepted":1,"duplicates":0,"lastLogicalSequence":26,"status":"running"}`+"\n" {
		t.Fatalf("single event: %d %s", code, body)
	}
	res = h.postOK("run-a", lines[26:]...)
	if res != (relay.AppendResult{Accepted: 34, LastLogicalSequence: 60, Status: "completed"}) {
		t.Fatalf("last batch: %+v", res)
	}

	// GET /v1/runs/{runId}: the reducer snapshot plus meta.
	code, _, body = h.do("GET", "/v1/runs/run-a", "", nil, nil)
	if code != 200 {
		t.Fatalf("GET run: %d %s", code, body)
	}
	snap, meta := stripMeta(t, body)
	if want := reduceLines(t, lines); !bytes.Equal(snap, want) {
		t.Fatalf("snapshot:\n got %s\nwant %s", snap, want)
	}
	if got := meta.Keys(); strings.Join(got, ",") != "createdAt,updatedAt,eventCount" {
		t.Fatalf("meta members %v", got)
	}
	if n, _ := meta.Get("eventCount"); n != float64(60) {
		t.Fatalf("eventCount %v", n)
	}
	h.checkSnapshot(relay.LocalOrg, "run-a")

	// NDJSON read with cursor and limit: the stored event JSON, equal to what was sent.
	got, err := h.client.ReadEvents(context.Background(), "run-a", 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("read %d events", len(got))
	}
	for i, l := range got {
		a, _ := jsonvalue.Parse(l, "")
		b, _ := jsonvalue.Parse(lines[10+i], "")
		if !jsonvalue.Equal(a, b) {
			t.Fatalf("event %d: got %s want %s", 11+i, l, lines[10+i])
		}
	}
	all, err := h.client.ReadAllEvents(context.Background(), "run-a")
	if err != nil || len(all) != 60 {
		t.Fatalf("read all: %d %v", len(all), err)
	}
	code, _, body = h.do("GET", "/v1/runs/run-a/events?after=60", "", nil, nil)
	if code != 200 || len(body) != 0 {
		t.Fatalf("read at end: %d %q", code, body)
	}
}

// A refused event anywhere in a batch stores none of the batch (relay.md §2: atomically in
// order), for reducer refusals (409) and invalid events (400) alike.
func TestBatchAtomicity(t *testing.T) {
	const run = "atomic"
	base := simpleRun(run, 3, false) // logical 1..5
	cases := []struct {
		name   string
		fifth  []byte
		status int
		code   string
		msg    string
	}{
		{"reducer refusal", bytes.Replace(ev(run, 2, 6, "message.part.delta", `"messageId":"m","part":{"type":"text","text":"x"}`), []byte(`"atomic:2"`), []byte(`"other"`), 1),
			409, relay.CodeConflict, "Agent event logical sequence must increase monotonically."},
		{"unknown message", ev(run, 6, 6, "message.part.delta", `"messageId":"nope","part":{"type":"text","text":"x"}`),
			409, relay.CodeConflict, "Message delta has no started message."},
		{"invalid event", ev(run, 6, 6, "message.started", `"messageId":"m2","role":"system"`),
			400, relay.CodeInvalidRequest, "Agent event role is unsupported."},
		{"bad JSON", []byte(`{"type":"run.started",}`),
			400, relay.CodeInvalidRequest, "Agent event is not valid JSON text at byte offset 22."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			// A new run: the refused batch must not even create it.
			batch := append(append([][]byte{}, base[:4]...), tc.fifth)
			code, body := h.post(run, "", batch...)
			e := errorBody(t, code, body)
			if code != tc.status || e.Code != tc.code || e.Message != tc.msg || !e.HasIndex || e.Index != 4 {
				t.Fatalf("got %d %s", code, body)
			}
			if code, _, _ := h.do("GET", "/v1/runs/"+run, "", nil, nil); code != 404 {
				t.Fatalf("refused first batch created the run: %d", code)
			}
			// An existing run: a refused batch leaves it exactly as it was.
			h.postOK(run, base[0])
			before, _, _ := h.store.GetRun(context.Background(), relay.LocalOrg, run)
			code, body = h.post(run, "", batch[1:]...)
			e = errorBody(t, code, body)
			if code != tc.status || e.Message != tc.msg || e.Index != 3 {
				t.Fatalf("got %d %s", code, body)
			}
			after, info, _ := h.store.GetRun(context.Background(), relay.LocalOrg, run)
			if !bytes.Equal(before, after) || info.EventCount != 1 || len(h.storedEvents(relay.LocalOrg, run)) != 1 {
				t.Fatalf("refused batch changed the run: %d events", info.EventCount)
			}
			h.checkSnapshot(relay.LocalOrg, run)
		})
	}
}

// The first failing event wins: a reducer refusal before an invalid event is the answer.
func TestFirstFailureWins(t *testing.T) {
	h := newHarness(t)
	const run = "first"
	lines := [][]byte{
		ev(run, 1, 1, "run.started", ""),
		ev(run, 2, 2, "message.part.delta", `"messageId":"m","part":{"type":"text","text":"x"}`), // 409
		[]byte(`not json`), // 400, later
	}
	code, body := h.post(run, "", lines...)
	e := errorBody(t, code, body)
	if code != 409 || e.Index != 1 || e.Message != "Message delta has no started message." {
		t.Fatalf("got %d %s", code, body)
	}
	lines[1] = ev(run, 2, 2, "message.started", `"messageId":"m","role":"user"`)
	code, body = h.post(run, "", lines...)
	e = errorBody(t, code, body)
	if code != 400 || e.Index != 2 || e.Message != "Agent event is not valid JSON text at byte offset 1." {
		t.Fatalf("got %d %s", code, body)
	}
}

func TestDuplicateBatchReplay(t *testing.T) {
	h := newHarness(t)
	const run = "dups"
	lines := synthLines(t, 40, 3, run)
	first := h.postOK(run, lines[:30]...)
	_, info1, _ := h.store.GetRun(context.Background(), relay.LocalOrg, run)

	// The same batch again: every event a duplicate, nothing stored, same answer otherwise.
	again := h.postOK(run, lines[:30]...)
	if again != (relay.AppendResult{Accepted: 0, Duplicates: 30, LastLogicalSequence: 30, Status: first.Status}) {
		t.Fatalf("replay: %+v", again)
	}
	_, info2, _ := h.store.GetRun(context.Background(), relay.LocalOrg, run)
	if info2 != info1 {
		t.Fatalf("replay changed the run: %+v → %+v", info1, info2)
	}
	// Overlapping batch: 10 duplicates then 10 new events; a duplicate inside the batch too.
	overlap := append(append([][]byte{}, lines[20:40]...), lines[39])
	res := h.postOK(run, overlap...)
	if res != (relay.AppendResult{Accepted: 10, Duplicates: 11, LastLogicalSequence: 40, Status: "completed"}) {
		t.Fatalf("overlap: %+v", res)
	}
	// A duplicate ID with different data is a refusal, not a duplicate.
	changed := bytes.Replace(lines[5], []byte(`"timestamp":"`), []byte(`"timestamp":"x`), 1)
	code, body := h.post(run, "", changed)
	if e := errorBody(t, code, body); code != 409 || e.Message != "Agent event ID was reused for different event data." || e.Index != 0 {
		t.Fatalf("changed duplicate: %d %s", code, body)
	}
	// Replay after the terminal event is still a no-op (events.md §8.3 step 3).
	if res := h.postOK(run, lines...); res.Duplicates != 40 || res.Accepted != 0 {
		t.Fatalf("full replay: %+v", res)
	}
	if n := len(h.storedEvents(relay.LocalOrg, run)); n != 40 {
		t.Fatalf("stored %d events", n)
	}
	h.checkSnapshot(relay.LocalOrg, run)
}

// Concurrent writers of one run, each sending the whole run in batches: exactly one copy of
// every event is stored and the snapshot is the reduction of the stored events.
func TestConcurrentWritersOneRun(t *testing.T) {
	h := newHarness(t)
	const run = "race"
	lines := synthLines(t, 300, 11, run)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, dups := 0, 0
	for w := range 4 {
		wg.Go(func() {
			size := 10 + 7*w
			for i := 0; i < len(lines); i += size {
				res, err := h.client.Append(context.Background(), run, relay.MediaNDJSON, ndjson(lines[i:min(i+size, len(lines))]))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				accepted += res.Accepted
				dups += res.Duplicates
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if accepted != 300 || dups != 900 {
		t.Fatalf("accepted %d duplicates %d", accepted, dups)
	}
	h.checkSnapshot(relay.LocalOrg, run)
}

// Two relays over one store: each one's cached state goes stale when the other writes, so
// the store's optimistic check refuses the append and the relay reloads and retries.
func TestConflictRetryAcrossRelays(t *testing.T) {
	a := newHarness(t)
	b := newHarnessOn(t, a.dir, a.store)
	const run = "two-relays"
	lines := simpleRun(run, 77, true) // 80 events, deltas only: a stale state reduces them without refusal
	for i := 0; i < len(lines); i += 10 {
		h := a
		if (i/10)%2 == 1 {
			h = b
		}
		res := h.postOK(run, lines[i:i+10]...)
		if res.Accepted != 10 || res.LastLogicalSequence != int64(i+10) {
			t.Fatalf("batch %d: %+v", i/10, res)
		}
	}
	a.checkSnapshot(relay.LocalOrg, run)
	for name, h := range map[string]*harness{"a": a, "b": b} {
		m := scrape(t, h)
		if strings.Contains(m, "agentwire_store_conflicts_total 0\n") || !strings.Contains(m, "agentwire_store_conflicts_total") {
			t.Fatalf("relay %s met no store conflict", name)
		}
	}
}

func TestListRuns(t *testing.T) {
	h := newHarness(t)
	for i := range 5 {
		run := fmt.Sprintf("list-%d", i)
		h.postOK(run, simpleRun(run, 1, i%2 == 0)...)
	}
	var all []string
	cursor := ""
	for {
		path := "/v1/runs?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		code, _, body := h.do("GET", path, "", nil, nil)
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		obj, err := jsonvalue.ParseObject(body, "")
		if err != nil {
			t.Fatal(err)
		}
		runs, _ := obj.Get("runs")
		for _, r := range runs.([]any) {
			ro := r.(*jsonvalue.Object)
			if strings.Join(ro.Keys(), ",") != "runId,status,updatedAt,eventCount" {
				t.Fatalf("run entry %s", jsonvalue.AppendEncoded(nil, ro))
			}
			id, _ := ro.Get("runId")
			all = append(all, id.(string))
		}
		next, ok := obj.Get("next")
		if !ok {
			break
		}
		cursor = next.(string)
	}
	if strings.Join(all, ",") != "list-4,list-3,list-2,list-1,list-0" {
		t.Fatalf("order %v", all)
	}
	code, _, body := h.do("GET", "/v1/runs?status=completed", "", nil, nil)
	if code != 200 || strings.Count(string(body), `"status":"completed"`) != 3 || strings.Contains(string(body), "running") {
		t.Fatalf("status filter: %s", body)
	}
	for _, bad := range []struct{ q, field string }{
		{"status=paused", "status"}, {"limit=0", "limit"}, {"limit=1001", "limit"}, {"limit=x", "limit"}, {"cursor=zzz", "cursor"},
	} {
		code, _, body := h.do("GET", "/v1/runs?"+bad.q, "", nil, nil)
		if e := errorBody(t, code, body); code != 400 || e.Code != relay.CodeInvalidRequest || e.Field != bad.field {
			t.Fatalf("%s: %d %s", bad.q, code, body)
		}
	}
}

func TestReadEventsParameters(t *testing.T) {
	h := newHarness(t)
	h.postOK("p", simpleRun("p", 2, true)...)
	for _, tc := range []struct {
		path   string
		header map[string]string
		status int
		field  string
	}{
		{"/v1/runs/p/events?after=-1", nil, 400, "after"},
		{"/v1/runs/p/events?after=01", nil, 400, "after"},
		{"/v1/runs/p/events?after=x", nil, 400, "after"},
		{"/v1/runs/p/events?limit=10001", nil, 400, "limit"},
		{"/v1/runs/p/events?limit=10000", nil, 200, ""},
		{"/v1/runs/p/events", map[string]string{"Accept": relay.MediaSSE, "Last-Event-ID": "abc"}, 400, "Last-Event-ID"},
		{"/v1/runs/p/events?follow=maybe", map[string]string{"Accept": relay.MediaSSE}, 400, "follow"},
		{"/v1/runs/missing/events", nil, 404, ""},
		{"/v1/runs/missing/events", map[string]string{"Accept": relay.MediaSSE}, 404, ""},
		{"/v1/runs/missing", nil, 404, ""},
	} {
		code, _, body := h.do("GET", tc.path, "", tc.header, nil)
		if code != tc.status {
			t.Fatalf("%s: %d %s", tc.path, code, body)
		}
		if code != 200 {
			if e := errorBody(t, code, body); e.Field != tc.field {
				t.Fatalf("%s: field %q", tc.path, e.Field)
			}
		}
	}
}

func TestRoutesAndOperations(t *testing.T) {
	h := newHarness(t)
	code, _, body := h.do("GET", "/healthz", "", nil, nil)
	if code != 200 || string(body) != "{\"status\":\"ok\"}\n" {
		t.Fatalf("healthz %d %s", code, body)
	}
	code, _, body = h.do("GET", "/nope", "", nil, nil)
	if e := errorBody(t, code, body); code != 404 || e.Code != relay.CodeNotFound {
		t.Fatalf("unknown route %d %s", code, body)
	}
	code, hdr, body := h.do("DELETE", "/v1/runs/x", "", nil, nil)
	if e := errorBody(t, code, body); code != 405 || e.Code != relay.CodeInvalidRequest || !strings.Contains(hdr.Get("Allow"), "GET") {
		t.Fatalf("wrong method %d %v %s", code, hdr, body)
	}
	h.postOK("m", simpleRun("m", 1, false)...)
	h.postOK("m", simpleRun("m", 1, false)...)
	h.post("m", "", []byte("{"))
	metrics := scrape(t, h)
	for _, want := range []string{
		`agentwire_http_requests_total{code="200",route="POST /v1/runs/{runId}/events"} 2`,
		`agentwire_run_events_ingested_total 3`,
		`agentwire_run_event_duplicates_total 3`,
		`agentwire_run_event_refusals_total{code="invalid_request"} 1`,
		`agentwire_store_commit_seconds_bucket`,
		`agentwire_sse_subscribers 0`,
		`agentwire_fanout_lag_seconds_count`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func scrape(t testing.TB, h *harness) string {
	t.Helper()
	code, _, body := h.do("GET", "/metrics", "", nil, nil)
	if code != 200 {
		t.Fatalf("metrics %d", code)
	}
	return string(body)
}

// Events with gaps in logical sequence and a new phase are stored and served as they are.
func TestGapsAndPhases(t *testing.T) {
	h := newHarness(t)
	const run = "gaps"
	lines := [][]byte{
		ev(run, 1, 1, "run.started", ""),
		ev(run, 5, 2, "message.started", `"messageId":"m","role":"assistant"`),
		bytes.Replace(ev(run, 9, 1, "message.part.delta", `"messageId":"m","part":{"type":"text","text":"a"}`), []byte(`"p-1"`), []byte(`"p-2"`), 1),
		ev(run, 20, 2, "run.completed", `"finishReason":"stop","content":[]`),
	}
	lines[3] = bytes.Replace(lines[3], []byte(`"p-1"`), []byte(`"p-2"`), 1)
	res := h.postOK(run, lines...)
	if res.LastLogicalSequence != 20 || res.Status != "completed" {
		t.Fatalf("%+v", res)
	}
	for _, after := range []int64{0, 1, 2, 5, 7, 9, 19, 20, 21} {
		frames, _ := collectSSE(t, h.client, run, relay.StreamOptions{After: after})
		var ids []string
		for _, f := range frames {
			ids = append(ids, f.ID)
		}
		var want []string
		for _, l := range []int64{1, 5, 9, 20} {
			if l > after {
				want = append(want, strconv.FormatInt(l, 10))
			}
		}
		if strings.Join(ids, ",") != strings.Join(want, ",") {
			t.Fatalf("after %d: ids %v want %v", after, ids, want)
		}
	}
	h.checkSnapshot(relay.LocalOrg, run)
}

// withCheckpointEvery sets CheckpointEvery, with no minimum interval between checkpoints.
func withCheckpointEvery(k int) harnessOption {
	return func(c *relay.Config) { c.CheckpointEvery, c.CheckpointMinInterval = k, -1 }
}

// TestCheckpoints: the relay stores a checkpoint with a run's first batch and, in the
// background after the batch's commit, once
// max(CheckpointEvery, checkpointed events) events have been appended since the last one, and with the terminal batch; GET
// /v1/runs/{runId} always answers the state of all the stored events. Two relays share the
// store and take turns, so each batch is reduced from a state loaded as checkpoint + tail.
func TestCheckpoints(t *testing.T) {
	lines := synthLines(t, 60, 11, "run-c")
	for _, c := range []struct {
		every, batch int
	}{
		{1, 7}, {2, 1}, {5, 1}, {5, 7}, {16, 3}, {256, 4}, {256, 60},
	} {
		t.Run(fmt.Sprintf("every=%d/batch=%d", c.every, c.batch), func(t *testing.T) {
			a := newHarness(t, withCheckpointEvery(c.every))
			b := newHarnessOn(t, a.dir, a.store, withCheckpointEvery(c.every))
			checkpoint := 0
			for i, n := 0, 0; n < len(lines); i++ {
				end := min(n+c.batch, len(lines))
				h := a
				if i%2 == 1 {
					h = b
				}
				res := h.postOK("run-c", lines[n:end]...)
				// Checkpoints after the first are written in the background.
				if err := h.server.FlushCheckpoints(t.Context()); err != nil {
					t.Fatal(err)
				}
				terminal := res.Status == "completed" || res.Status == "failed" || res.Status == "cancelled"
				if n == 0 || terminal || end-checkpoint >= max(c.every, checkpoint) {
					checkpoint = end
				}
				n = end
				_, info, err := a.store.GetRun(context.Background(), relay.LocalOrg, "run-c")
				if err != nil || info.SnapshotSequence != int64(checkpoint) || info.LastLogicalSequence != int64(n) {
					t.Fatalf("after %d events: %+v, %v; want checkpoint at %d", n, info, err, checkpoint)
				}
				snap := a.checkSnapshot(relay.LocalOrg, "run-c")
				code, _, body := h.do("GET", "/v1/runs/run-c", "", nil, nil)
				if code != 200 {
					t.Fatalf("GET run: %d %s", code, body)
				}
				if got, meta := stripMeta(t, body); !bytes.Equal(got, snap) {
					t.Fatalf("after %d events GET differs from re-reducing:\n got %s\nwant %s", n, got, snap)
				} else if cnt, _ := meta.Get("eventCount"); cnt != float64(n) {
					t.Fatalf("eventCount %v, want %d", cnt, n)
				}
			}
			if checkpoint != len(lines) {
				t.Fatalf("the terminal batch stored no checkpoint (last at %d)", checkpoint)
			}
		})
	}
}

// Shutdown writes the background checkpoints still queued before it returns (the store is
// closed after it), and a checkpoint never changes what a reader gets.
func TestShutdownWritesQueuedCheckpoints(t *testing.T) {
	h := newHarness(t, withCheckpointEvery(10))
	lines := synthLines(t, 200, 5, "run-s")
	before := h.checkSnapshot
	for n := 0; n < 150; n += 15 {
		h.postOK("run-s", lines[n:n+15]...)
	}
	want := before(relay.LocalOrg, "run-s") // checkpoint + tail re-reduced = all 150 events
	if err := h.server.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, info, err := h.store.GetRun(t.Context(), relay.LocalOrg, "run-s")
	if err != nil {
		t.Fatal(err)
	}
	// Due once max(10, covered) events follow the last one: with batches of 15 the
	// checkpoints are at 15 (first batch), 30, 60 and 120 (queued by the batch ending there).
	if info.SnapshotSequence != 120 {
		t.Fatalf("after Shutdown the checkpoint covers %d events, want 120", info.SnapshotSequence)
	}
	if got := h.checkSnapshot(relay.LocalOrg, "run-s"); !bytes.Equal(got, want) {
		t.Fatal("the state read back changed with the checkpoint")
	}
}

// A long batch is parsed in parts concurrently; the answer is the sequential one: the first
// faulty event's index and message whatever part it is in, nothing stored, and a valid batch
// accepted whole in order.
func TestLongBatchFirstFault(t *testing.T) {
	h := newHarness(t)
	const run = "long"
	lines := synthLines(t, 400, 3, run)
	bad := []byte("{")
	wrongRun := bytes.Replace(lines[10], []byte(`"runId":"long"`), []byte(`"runId":"other"`), 1)
	for _, c := range []struct {
		name   string
		faults map[int][]byte
		index  int
		msg    string
	}{
		{"fault in the first part", map[int][]byte{5: bad}, 5, "Agent event is not valid JSON text at byte offset 1."},
		{"fault in the last part", map[int][]byte{390: bad}, 390, "Agent event is not valid JSON text at byte offset 1."},
		{"two faults, two parts", map[int][]byte{350: bad, 120: wrongRun}, 120, "Agent event.runId does not match the run ID of the request path."},
		{"fault at a part boundary", map[int][]byte{200: bad, 199: bad}, 199, "Agent event is not valid JSON text at byte offset 1."},
	} {
		t.Run(c.name, func(t *testing.T) {
			batch := slices.Clone(lines)
			for i, l := range c.faults {
				batch[i] = l
			}
			code, body := h.post(run, "", batch...)
			e := errorBody(t, code, body)
			if code != 400 || e.Index != c.index || e.Message != c.msg {
				t.Fatalf("%d index %d %q; want 400 index %d %q", code, e.Index, e.Message, c.index, c.msg)
			}
			if code, _, _ := h.do("GET", "/v1/runs/"+run, "", nil, nil); code != 404 {
				t.Fatalf("a refused batch left the run behind (GET %d)", code)
			}
		})
	}
	res := h.postOK(run, lines...)
	if res.Accepted != len(lines) || res.LastLogicalSequence != int64(len(lines)) {
		t.Fatalf("valid long batch: %+v", res)
	}
	if got := h.storedEvents(relay.LocalOrg, run); len(got) != len(lines) {
		t.Fatalf("%d events stored, want %d", len(got), len(lines))
	}
	h.checkSnapshot(relay.LocalOrg, run)
}

// TestCheckpointMinInterval: a due background checkpoint waits until CheckpointMinInterval
// has passed since the run's last one, and is then written with the run's next batch; one
// still held back is queued when the run leaves the state cache, or written at Shutdown.
func TestCheckpointMinInterval(t *testing.T) {
	clock := newFakeClock()
	runM, other := simpleRun("run-m", 150, false), simpleRun("other", 150, false)
	cost := func(lines [][]byte) int64 {
		n := relay.DecodedCost(0)
		for _, l := range lines {
			n += relay.ReducedCost(len(l))
		}
		return n
	}
	h := newHarness(t, withClock(clock), func(c *relay.Config) {
		// Room for run-m's 80 events, not with other's first 10 too: other's first batch
		// evicts run-m.
		c.CheckpointEvery, c.CheckpointMinInterval, c.StateCache = 10, time.Minute, cost(runM[:80])+cost(other[:10])-1
	})
	ctx := t.Context()
	covered := func(run string) int64 {
		t.Helper()
		if err := h.server.FlushCheckpoints(ctx); err != nil {
			t.Fatal(err)
		}
		_, info, err := h.store.GetRun(ctx, relay.LocalOrg, run)
		if err != nil {
			t.Fatal(err)
		}
		return info.SnapshotSequence
	}
	for _, step := range []struct {
		run     string
		lines   [][]byte
		advance time.Duration
		want    map[string]int64 // run → sequence its checkpoint covers afterwards
	}{
		{"run-m", runM[:10], 0, map[string]int64{"run-m": 10}},   // the first batch's own
		{"run-m", runM[10:20], 0, map[string]int64{"run-m": 10}}, // due, held back
		{"run-m", runM[20:30], 0, map[string]int64{"run-m": 10}}, // still held back
		{"run-m", runM[30:40], time.Minute, map[string]int64{"run-m": 40}},
		{"run-m", runM[40:80], 0, map[string]int64{"run-m": 40}},             // due again, held back
		{"other", other[:10], 0, map[string]int64{"run-m": 80, "other": 10}}, // run-m evicted
		{"other", other[10:30], 0, map[string]int64{"other": 10}},
	} {
		clock.Advance(step.advance)
		h.postOK(step.run, step.lines...)
		for run, want := range step.want {
			if got := covered(run); got != want {
				t.Fatalf("after %s's events up to %d: %s's checkpoint covers %d, want %d", step.run,
					len(step.lines), run, got, want)
			}
		}
	}
	before := h.checkSnapshot(relay.LocalOrg, "other")
	if err := h.server.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_, info, err := h.store.GetRun(ctx, relay.LocalOrg, "other")
	if err != nil || info.SnapshotSequence != 30 {
		t.Fatalf("after Shutdown the held-back checkpoint of other covers %d (%v), want 30", info.SnapshotSequence, err)
	}
	if after := h.checkSnapshot(relay.LocalOrg, "other"); !bytes.Equal(before, after) {
		t.Fatal("a checkpoint changed what a reader gets")
	}
}

// Append and PublishEnvelope return a nil error interface on success and an *relay.Error on a
// refusal (no nil-pointer-in-interface trap).
func TestProgrammaticRefusalsAreErrors(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	if _, err := h.server.Append(ctx, relay.LocalOrg, "p", simpleRun("p", 1, false)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	_, err := h.server.Append(ctx, relay.LocalOrg, "p", [][]byte{[]byte(`{}`)})
	var e *relay.Error
	if !errors.As(err, &e) || e.Status != 400 || !e.HasIndex {
		t.Fatalf("Append refusal: %#v", err)
	}
	if _, err := h.server.PublishEnvelope(ctx, relay.LocalOrg, env("notifications.agent.s", "agent", "x", "k")); err != nil {
		t.Fatalf("PublishEnvelope: %v", err)
	}
	if _, err := h.server.PublishEnvelope(ctx, relay.LocalOrg, []byte(`{}`)); !errors.As(err, &e) || len(e.Problems) == 0 {
		t.Fatalf("PublishEnvelope refusal: %#v", err)
	}
}

// Reads are paged by bytes as well as by count (relay.md §3): a run of large events (more
// than a page's byte budget in all) is read back whole as NDJSON with one large limit, replayed
// whole over SSE, and loaded whole into a cold reducer state.
func TestLargeEventsPaged(t *testing.T) {
	h := newHarness(t, func(c *relay.Config) { c.StateCache = -1 }) // every batch loads the run
	const n = 40                                                    // 40 × 200 KB: 8 MB, two pages
	text := strings.Repeat("y", 200<<10)
	lines := [][]byte{ev("big", 1, 1, "run.started", ""), ev("big", 2, 2, "message.started", `"messageId":"m","role":"assistant"`)}
	for i := range n {
		seq := int64(i + 3)
		lines = append(lines, ev("big", seq, seq, "message.part.delta", `"messageId":"m","part":{"type":"text","text":"`+text+`"}`))
	}
	for i := 0; i < len(lines); i += 10 {
		h.postOK("big", lines[i:min(i+10, len(lines))]...)
	}
	code, _, body := h.do("GET", "/v1/runs/big/events?limit=10000", "", nil, nil)
	if code != 200 || !bytes.Equal(body, ndjson(lines)) {
		t.Fatalf("NDJSON read: %d, %d bytes of %d", code, len(body), len(ndjson(lines)))
	}
	end := ev("big", n+3, n+3, "run.completed", `"finishReason":"done","content":[]`)
	h.postOK("big", end) // loaded cold, through every page
	stream := h.openSSE("", "/v1/runs/big/events", "")
	for i := range n + 3 {
		if f := stream.next(); f.ID != strconv.Itoa(i+1) {
			t.Fatalf("SSE frame %d has id %s", i, f.ID)
		}
	}
	h.checkSnapshot(relay.LocalOrg, "big")
}
