package relay_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/store"
)

// FuzzAppendBatch drives POST /v1/runs/{runId}/events with arbitrary bodies (as one event or
// as an NDJSON batch) against a real SQLite store. Whatever the input: the handler does not
// panic; it answers 200 with a valid result or the relay's error body; a refusal stores
// nothing (the run's snapshot and events are byte-identical before and after); a success
// stores exactly `accepted` events; and the stored snapshot always equals re-reducing the
// stored events. Runs persist across inputs, so later inputs meet existing state.
func FuzzAppendBatch(f *testing.F) {
	good := synthLines(f, 30, 4, "fz")
	f.Add("fz", true, ndjson(good[:10]))
	f.Add("fz", true, ndjson(good[10:]))
	f.Add("fz", true, ndjson(append(append([][]byte{}, good[:3]...), []byte(`{"type":"run.started"}`))))
	f.Add("fz", false, good[0])
	f.Add("fz", true, []byte("\r\n\n \t\n"))
	f.Add("fz", true, []byte(`{"a":1,"a":2}`))
	f.Add("other", true, ndjson(good[:2]))
	f.Add("r2", true, ndjson(simpleRun("r2", 2, true)))
	f.Add("r2", true, ndjson(simpleRun("r2", 3, true)))
	long := synthLines(f, 150, 5, "long") // ≥ 64 events: the streamed path (stream.go)
	f.Add("long", true, ndjson(long[:120]))
	f.Add("long", true, ndjson(long[60:]))
	f.Add("r3", false, []byte("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["))

	h := newHarness(f, withLimits(relay.Limits{MaxBody: 256 << 10, MaxEvent: 64 << 10, MaxBatch: 200}))
	handler := h.server.Handler()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, runID string, nd bool, body []byte) {
		if runID == "" || !utf8.ValidString(runID) {
			return
		}
		before, beforeInfo, beforeErr := h.store.GetRun(ctx, relay.LocalOrg, runID)
		req := httptest.NewRequest("POST", "/v1/runs/"+url.PathEscape(runID)+"/events", bytes.NewReader(body))
		req.Host = "127.0.0.1" // local mode answers loopback names only
		if nd {
			req.Header.Set("Content-Type", relay.MediaNDJSON)
		} else {
			req.Header.Set("Content-Type", relay.MediaJSON)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		after, afterInfo, afterErr := h.store.GetRun(ctx, relay.LocalOrg, runID)
		if rec.Code != 200 {
			if _, err := relay.ParseErrorBody(rec.Code, rec.Body.Bytes()); err != nil {
				t.Fatalf("status %d without an error body: %v %q", rec.Code, err, rec.Body.Bytes())
			}
			if !bytes.Equal(before, after) || beforeInfo != afterInfo || (beforeErr == nil) != (afterErr == nil) {
				t.Fatalf("refused request (%d %s) changed the run", rec.Code, rec.Body.Bytes())
			}
			return
		}
		res, err := relay.ParseAppendResult(rec.Body.Bytes())
		if err != nil {
			t.Fatalf("200 with a bad body: %v %q", err, rec.Body.Bytes())
		}
		if afterErr != nil {
			if res.Accepted != 0 || !errors.Is(afterErr, store.ErrNotFound) {
				t.Fatalf("accepted %d but run unreadable: %v", res.Accepted, afterErr)
			}
			return
		}
		if afterInfo.EventCount != beforeInfo.EventCount+int64(res.Accepted) || afterInfo.LastLogicalSequence != res.LastLogicalSequence || afterInfo.Status != res.Status {
			t.Fatalf("result %+v, run %+v → %+v", res, beforeInfo, afterInfo)
		}
		if res.Accepted > 0 {
			checkSnapshot(t, h.store, relay.LocalOrg, runID)
		}
	})
}
