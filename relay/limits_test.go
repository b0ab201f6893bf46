package relay_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/relay"
)

// Every limit of relay.md §3 answers its status with the error body, and stores nothing.
func TestLimits(t *testing.T) {
	h := newHarness(t, withLimits(relay.Limits{MaxBody: 64 << 10, MaxEvent: 8 << 10, MaxBatch: 50}))
	const run = "limits"
	good := simpleRun(run, 3, false)
	big := ev(run, 6, 6, "message.part.delta", `"messageId":"m","part":{"type":"text","text":"`+strings.Repeat("x", 9<<10)+`"}`)
	deep := ev(run, 6, 6, "message.part.delta", `"messageId":"m","part":{"type":"custom","name":"d","data":`+strings.Repeat("[", 126)+strings.Repeat("]", 126)+`}`)
	tooDeep := ev(run, 6, 6, "message.part.delta", `"messageId":"m","part":{"type":"custom","name":"d","data":`+strings.Repeat("[", 127)+strings.Repeat("]", 127)+`}`)
	many := make([][]byte, 0, 51)
	many = append(many, good...)
	for len(many) < 51 {
		many = append(many, []byte(`{}`))
	}
	hugeBody := bytes.Repeat([]byte(" "), 65<<10)

	cases := []struct {
		name        string
		contentType string
		body        []byte
		status      int
		code        string
		msg         string
		index       int // -1: no index
		field       string
	}{
		{"body over limit", relay.MediaNDJSON, append(ndjson(good), hugeBody...), 413, relay.CodePayloadTooLarge,
			"Request body exceeds the limit of 65536 bytes.", -1, ""},
		{"event over limit", relay.MediaNDJSON, ndjson(append(append([][]byte{}, good...), big)), 413, relay.CodePayloadTooLarge,
			"Agent event exceeds the limit of 8192 bytes.", 5, ""},
		{"batch over limit", relay.MediaNDJSON, ndjson(many), 413, relay.CodePayloadTooLarge,
			"An NDJSON batch holds at most 50 events.", 50, ""},
		{"depth 129", relay.MediaNDJSON, ndjson(append(append([][]byte{}, good...), tooDeep)), 400, relay.CodeInvalidRequest,
			"Agent event.part.data" + strings.Repeat("[0]", 126) + " exceeds the maximum nesting depth of 128.", 5, ""},
		{"run ID differs from path", relay.MediaNDJSON, ndjson(append(append([][]byte{}, good...), ev("other", 6, 6, "run.completed", `"finishReason":"x","content":[]`))), 400, relay.CodeInvalidRequest,
			"Agent event.runId does not match the run ID of the request path.", 5, "runId"},
		{"no content type", "", ndjson(good), 415, relay.CodeUnsupportedMediaType,
			"Content-Type must be application/json (one event) or application/x-ndjson (a batch).", -1, "Content-Type"},
		{"text/plain", "text/plain", ndjson(good), 415, relay.CodeUnsupportedMediaType,
			`Content-Type must be application/json (one event) or application/x-ndjson (a batch), got "text/plain".`, -1, "Content-Type"},
		{"latin-1", "application/json; charset=iso-8859-1", good[0], 415, relay.CodeUnsupportedMediaType,
			`Content-Type charset must be utf-8, got "iso-8859-1".`, -1, "Content-Type"},
		{"empty batch", relay.MediaNDJSON, []byte("\n \r\n\t\n"), 400, relay.CodeInvalidRequest,
			"The request body holds no event.", -1, ""},
		{"two events as application/json", relay.MediaJSON, ndjson(good[:2]), 400, relay.CodeInvalidRequest,
			"Agent event is not valid JSON text at byte offset " + strconv.Itoa(len(good[0])+1) + ".", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.contentType != "" {
				hdr["Content-Type"] = tc.contentType
			}
			code, _, body := h.do("POST", "/v1/runs/"+run+"/events", "", hdr, tc.body)
			e := errorBody(t, code, body)
			if code != tc.status || e.Code != tc.code || e.Message != tc.msg || e.Field != tc.field {
				t.Fatalf("got %d %s", code, body)
			}
			if (tc.index < 0) == e.HasIndex || (tc.index >= 0 && e.Index != tc.index) {
				t.Fatalf("index: got %s", body)
			}
			if code, _, _ := h.do("GET", "/v1/runs/"+run, "", nil, nil); code != 404 {
				t.Fatalf("refused request stored something")
			}
		})
	}
	// Depth 128 and exactly the limits are accepted.
	ok := append(append([][]byte{}, good...), deep)
	if res := h.postOK(run, ok...); res.Accepted != 6 {
		t.Fatalf("%+v", res)
	}
	h.checkSnapshot(relay.LocalOrg, run)
	// The snapshot nests the deepest event's data past the decoder's depth, so the run's
	// state is served by re-reducing its events rather than from the checkpoint.
	code, _, body := h.do("GET", "/v1/runs/"+run, "", nil, nil)
	if code != 200 {
		t.Fatalf("GET deep run: %d %s", code, body)
	}
	// (Too deep for a strict parser too: compare the text before "meta".)
	if want := reduceLines(t, ok); !bytes.HasPrefix(body, append(want[:len(want)-1:len(want)-1], `,"meta":`...)) {
		t.Fatalf("GET deep run: snapshot differs from re-reducing its events")
	}
}

// The default batch limit is 10,000 events (relay.md §2); the 10,001st is refused before
// anything is parsed.
func TestDefaultBatchLimit(t *testing.T) {
	h := newHarness(t)
	body := bytes.Repeat([]byte("{}\n"), 10001)
	code, _, resp := h.do("POST", "/v1/runs/x/events", "", map[string]string{"Content-Type": relay.MediaNDJSON}, body)
	if e := errorBody(t, code, resp); code != 413 || e.Index != 10000 || e.Message != "An NDJSON batch holds at most 10000 events." {
		t.Fatalf("%d %s", code, resp)
	}
}

// Open streams are bounded (Limits.MaxStreams): SSE run and notification streams and bus
// sockets count together; one more is 429 in the lane's body, and a closed stream frees its
// place.
func TestMaxStreams(t *testing.T) {
	h := newHarness(t, withLimits(relay.Limits{MaxStreams: 2}))
	h.postOK("s", simpleRun("s", 3, true)...) // finished: its SSE stream ends after replay
	first := h.openStream("", "subject=notifications.>", "")
	h.openStream("", "subject=notifications.agent.>", "")
	code, _, body := h.do("GET", "/v1/runs/s/events", "", map[string]string{"Accept": relay.MediaSSE}, nil)
	if e := errorBody(t, code, body); code != 429 || e.Code != relay.CodeRateLimited {
		t.Fatalf("third stream: %d %s", code, body)
	}
	code, _, body = h.do("GET", "/v1/bus", "", upgradeHeaders(nil), nil)
	if code != 429 || !strings.Contains(string(body), `"code":"rate_limited","message":"The relay has 2 streams open, its limit; try again later.","limit":2`) {
		t.Fatalf("bus socket over the limit: %d %s", code, body)
	}
	// NDJSON reads are not streams.
	if code, _, body := h.do("GET", "/v1/runs/s/events", "", nil, nil); code != 200 {
		t.Fatalf("NDJSON read: %d %s", code, body)
	}
	first.cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, _ = h.do("GET", "/v1/runs/s/events", "", map[string]string{"Accept": relay.MediaSSE}, nil)
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream's place was not freed: %d", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
