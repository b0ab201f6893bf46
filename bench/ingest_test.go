package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/storetest"

	_ "modernc.org/sqlite" // the raw ceiling uses the same driver
)

// runLength is how many events a writer puts in one run before it starts the next.
const runLength = 1000

// eventLine renders event n (1-based) of a bench run: run.started, message.started, then
// ~300-byte message.part.delta events (the sqlite benchmark's row size).
func eventLine(dst []byte, run string, n int64) []byte {
	const env = `"protocolVersion":1,"eventId":"%s:%d","runId":%q,"sessionId":"session-1","phaseId":"8707a01d-6329-483f-87df-1bd4a477b564","logicalSequence":%d,"sequence":%d,"timestamp":"2025-01-01T00:00:00.000Z"}`
	switch n {
	case 1:
		return fmt.Appendf(dst, `{"type":"run.started",`+env, run, n, run, n, n)
	case 2:
		return fmt.Appendf(dst, `{"type":"message.started","messageId":"msg-1","role":"assistant",`+env, run, n, run, n, n)
	}
	return fmt.Appendf(dst, `{"type":"message.part.delta","messageId":"msg-1","part":{"type":"text","text":"The quick brown fox jumps over the lazy dog, again and again."},`+env, run, n, run, n, n)
}

// writerState is one writer's position: its current run and next event.
type writerState struct {
	id   int
	runs int
	next int64
	run  string
}

// batch returns the next size events of the writer as lines, moving to a new run when the
// current one is full (a batch never spans two runs).
func (w *writerState) batch(size int) (string, [][]byte) {
	if w.run == "" || w.next+int64(size)-1 > runLength {
		w.runs++
		w.run = fmt.Sprintf("bench-w%d-r%d", w.id, w.runs)
		w.next = 1
	}
	lines := make([][]byte, size)
	for i := range lines {
		lines[i] = eventLine(nil, w.run, w.next)
		w.next++
	}
	return w.run, lines
}

var (
	batchSizes = []int{1, 100, 1000}
	writerSets = []int{1, 8, 64}
)

func BenchmarkIngest(b *testing.B) {
	for _, size := range batchSizes {
		for _, writers := range writerSets {
			for _, kind := range []string{"http", "direct", "raw"} {
				b.Run(fmt.Sprintf("batch=%d/writers=%d/%s", size, writers, kind), func(b *testing.B) {
					switch kind {
					case "http":
						benchHTTP(b, size, writers)
					case "direct":
						benchDirect(b, size, writers)
					default:
						benchRaw(b, size, writers)
					}
				})
			}
		}
	}
}

// parallel runs b.N batches split across writers (storetest.RunParallel), each writer with
// its own run state, and reports events/s.
func parallel(b *testing.B, writers, size int, op func(w *writerState) error) {
	b.Helper()
	states := make([]*writerState, writers)
	for i := range states {
		states[i] = &writerState{id: i}
	}
	storetest.RunParallel(b, writers, size, func(w int) error { return op(states[w]) })
}

func newRelay(b *testing.B) (*relay.Server, func()) {
	b.Helper()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := relay.New(relay.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return srv, func() {
		_ = srv.Shutdown(context.Background())
		_ = st.Close()
	}
}

// serveRelay is newRelay behind an HTTP server on loopback; stop closes both.
func serveRelay(b *testing.B) (*relay.Server, *httptest.Server, func()) {
	b.Helper()
	srv, closeRelay := newRelay(b)
	ts := httptest.NewServer(srv.Handler())
	return srv, ts, func() {
		ts.Close()
		closeRelay()
	}
}

func joinLines(lines [][]byte) []byte {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	out := make([]byte, 0, n)
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}

func benchHTTP(b *testing.B, size, writers int) {
	_, ts, stop := serveRelay(b)
	defer stop()
	// A 64 KiB write buffer, as the CLI's client has: a 1,000-event body (~400 KB) goes in
	// 64 KiB writes instead of net/http's default 4 KiB ones.
	tr := &http.Transport{MaxIdleConnsPerHost: writers, WriteBufferSize: 64 << 10}
	defer tr.CloseIdleConnections()
	c := &relay.Client{BaseURL: ts.URL, HTTP: &http.Client{Transport: tr}}
	ctx := context.Background()
	parallel(b, writers, size, func(w *writerState) error {
		run, lines := w.batch(size)
		res, err := c.Append(ctx, run, relay.MediaNDJSON, joinLines(lines))
		if err == nil && res.Accepted != size {
			err = fmt.Errorf("accepted %d of %d", res.Accepted, size)
		}
		return err
	})
}

func benchDirect(b *testing.B, size, writers int) {
	srv, closeRelay := newRelay(b)
	defer closeRelay()
	ctx := context.Background()
	parallel(b, writers, size, func(w *writerState) error {
		run, lines := w.batch(size)
		res, e := srv.Append(ctx, relay.LocalOrg, run, lines)
		if e != nil {
			return e
		}
		if res.Accepted != size {
			return fmt.Errorf("accepted %d of %d", res.Accepted, size)
		}
		return nil
	})
}

// benchRaw is the ceiling: the same event rows (run, seq, event_id, type, data) inserted with
// prepared INSERTs into a table shaped like the store's run_events, one BEGIN IMMEDIATE …
// COMMIT per batch, WAL with synchronous=FULL, on one connection that the writers take turns
// on (each batch pays its own fsync).
func benchRaw(b *testing.B, size, writers int) {
	path := filepath.Join(b.TempDir(), "raw.db")
	u := url.URL{Scheme: "file", Path: path}
	db, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE run_events (
		run      INTEGER NOT NULL,
		seq      INTEGER NOT NULL,
		event_id TEXT    NOT NULL,
		type     TEXT    NOT NULL,
		data     BLOB    NOT NULL,
		PRIMARY KEY (run, seq),
		UNIQUE (run, event_id)
	)`); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ins, err := conn.PrepareContext(ctx, `INSERT INTO run_events (run, seq, event_id, type, data) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	defer ins.Close()
	var mu sync.Mutex
	parallel(b, writers, size, func(w *writerState) error {
		// Rows are built the same way as the relay's request bodies, outside the lock.
		run, lines := w.batch(size)
		first := w.next - int64(size)
		runKey := int64(w.id)<<32 | int64(w.runs)
		mu.Lock()
		defer mu.Unlock()
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return err
		}
		for i, l := range lines {
			seq := first + int64(i)
			if _, err := ins.ExecContext(ctx, runKey, seq, fmt.Sprintf("%s:%d", run, seq), "message.part.delta", l); err != nil {
				_, _ = conn.ExecContext(ctx, "ROLLBACK")
				return err
			}
		}
		_, err := conn.ExecContext(ctx, "COMMIT")
		return err
	})
}

// TestBenchEventsAreValid keeps the generator honest: every bench run is accepted by the relay.
func TestBenchEventsAreValid(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "t.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := relay.New(relay.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w := &writerState{}
	for range 3 {
		run, lines := w.batch(400) // the third batch starts a new run
		if res, e := srv.Append(context.Background(), relay.LocalOrg, run, lines); e != nil || res.Accepted != 400 {
			t.Fatalf("%s: %+v %v", run, res, e)
		}
	}
}
