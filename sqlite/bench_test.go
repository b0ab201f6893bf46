package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// benchEvent is a realistic message.part.delta line (about 300 bytes).
func benchEvent(run string, seq int64) store.Event {
	id := fmt.Sprintf("%s:%d", run, seq)
	return store.Event{
		LogicalSequence: seq,
		EventID:         id,
		Type:            "message.part.delta",
		Data: fmt.Appendf(nil, `{"type":"message.part.delta","messageId":"msg-1","part":{"type":"text","text":"The quick brown fox jumps over the lazy dog, again and again."},"protocolVersion":1,"eventId":%q,"runId":%q,"sessionId":"session-1","phaseId":"8707a01d-6329-483f-87df-1bd4a477b564","logicalSequence":%d,"sequence":%d,"timestamp":"2025-01-01T00:00:00.000Z"}`,
			id, run, seq, seq),
	}
}

// benchSnapshot stands in for the reducer state written with every batch (1 KiB).
var benchSnapshot = []byte(`{"status":"running","pad":"` + strings.Repeat("x", 1000) + `"}`)

var (
	benchBatches = []int{1, 100, 1000}
	benchWriters = []int{1, 8}
)

// BenchmarkIngest measures durable ingest on the same machine in the same run:
//
//   - store: AppendRun through the group-commit writer (events + 1 KiB snapshot + run row, one
//     transaction per group, WAL, synchronous=FULL);
//   - raw: the ceiling — the same event rows inserted with plain prepared INSERTs into a table
//     with the same schema as run_events, one BEGIN IMMEDIATE … COMMIT per batch, same WAL and
//     synchronous=FULL, on one connection (concurrent raw writers queue for it, each batch
//     paying its own fsync).
//
// Each op is one batch; each writer appends to its own run. events/s = batches × batch size /
// elapsed.
func BenchmarkIngest(b *testing.B) {
	// store and raw of one configuration run back to back, so that the shared machine's disk
	// noise hits both alike; compare medians over -count runs.
	for _, batch := range benchBatches {
		for _, writers := range benchWriters {
			for _, kind := range []string{"store", "raw"} {
				b.Run(fmt.Sprintf("batch=%d/writers=%d/%s", batch, writers, kind), func(b *testing.B) {
					op := newTarget(b, kind, batch, writers)
					storetest.RunParallel(b, writers, batch, op)
				})
			}
		}
	}
}

func newTarget(b *testing.B, kind string, batch, writers int) func(w int) error {
	if kind == "store" {
		return newStoreTarget(b, batch, writers)
	}
	return newRawTarget(b, batch, writers)
}

// newStoreTarget returns an op that appends one batch to writer w's run through the store.
func newStoreTarget(b *testing.B, batch, writers int) func(w int) error {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	last := make([]int64, writers)
	// Both kinds build their rows the same way inside the op (one reused slice per writer), so
	// the difference between them is storage work.
	events := make([][]store.Event, writers)
	for w := range writers {
		events[w] = make([]store.Event, batch)
	}
	return func(w int) error {
		run := fmt.Sprintf("run-%d", w)
		evs := events[w]
		for i := range evs {
			evs[i] = benchEvent(run, last[w]+1+int64(i))
		}
		_, err := s.AppendRun(ctx, "bench", run, store.AppendRequest{
			ExpectedLastLogicalSequence: last[w], Events: evs, Snapshot: benchSnapshot, Status: "running",
		})
		last[w] += int64(batch)
		return err
	}
}

// newRawTarget returns an op that inserts one batch of writer w's rows with plain INSERTs in
// one transaction on the single raw connection.
func newRawTarget(b *testing.B, batch, writers int) func(w int) error {
	path := filepath.Join(b.TempDir(), "raw.db")
	u := url.URL{Scheme: "file", Path: path}
	db, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		b.Fatal(err)
	}
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
	conn, err := db.Conn(ctx) // the one connection; writers take turns on it
	if err != nil {
		b.Fatal(err)
	}
	ins, err := conn.PrepareContext(ctx, `INSERT INTO run_events (run, seq, event_id, type, data) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ins.Close()
		conn.Close()
		db.Close()
	})
	var mu sync.Mutex
	last := make([]int64, writers)
	events := make([][]store.Event, writers)
	for w := range writers {
		events[w] = make([]store.Event, batch)
	}
	return func(w int) error {
		run := fmt.Sprintf("run-%d", w)
		evs := events[w]
		for i := range evs {
			evs[i] = benchEvent(run, last[w]+1+int64(i))
		}
		last[w] += int64(batch)
		mu.Lock()
		defer mu.Unlock()
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return err
		}
		for _, e := range evs {
			if _, err := ins.ExecContext(ctx, w, e.LogicalSequence, e.EventID, e.Type, e.Data); err != nil {
				_, _ = conn.ExecContext(ctx, "ROLLBACK")
				return err
			}
		}
		_, err := conn.ExecContext(ctx, "COMMIT")
		return err
	}
}

// BenchmarkIngestPaired gives the store/raw ratio on a noisy shared machine: every op is one
// round of the store (each writer appends perWriter batches) immediately followed by the same
// round on raw SQLite, so disk contention from neighbours hits both sides of the ratio alike.
// It reports both rates and ratio = store events/s ÷ raw events/s.
func BenchmarkIngestPaired(b *testing.B) {
	for _, batch := range benchBatches {
		for _, writers := range benchWriters {
			b.Run(fmt.Sprintf("batch=%d/writers=%d", batch, writers), func(b *testing.B) {
				perWriter := max(1, 50/batch)
				storeOp := newStoreTarget(b, batch, writers)
				rawOp := newRawTarget(b, batch, writers)
				round := func(op func(int) error) time.Duration {
					start := time.Now()
					var wg sync.WaitGroup
					for w := range writers {
						wg.Go(func() {
							for range perWriter {
								if err := op(w); err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
					return time.Since(start)
				}
				var storeTime, rawTime time.Duration
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					storeTime += round(storeOp)
					rawTime += round(rawOp)
				}
				b.StopTimer()
				events := float64(b.N * writers * perWriter * batch)
				storeRate, rawRate := events/storeTime.Seconds(), events/rawTime.Seconds()
				b.ReportMetric(storeRate, "store-events/s")
				b.ReportMetric(rawRate, "raw-events/s")
				b.ReportMetric(storeRate/rawRate, "ratio")
			})
		}
	}
}

// benchMessageData is a realistic stored hive message record (about 450 bytes: the validated
// message with its network, sender and body).
var benchMessageData = []byte(`{"client_msg_id":"01JBMSG7Q3","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":{"kind":"agent","agent":"claude-3e","instance_label":"laptop","instance_id":"inst_01jb8z9","owner":"Ana"},"deadline":"2026-10-21T12:00:00Z","body":{"text":"Which retry budget does payments use?","references":[{"kind":"task","number":7},{"kind":"commit","id":"9f2c1ab"}]},"trust":"team"}`)

// benchEnvelopeData is a realistic encoded envelope (about 400 bytes).
var benchEnvelopeData = []byte(`{"event_id":"5d41402abc4b2a76b9719d911017c592","source":"github","source_event_id":"d-7","topic":"notifications.github.acme.widgets.pr.42","dedupe_key":"github.d-7","issued_at":1760000000000,"payload_summary":"PR #42 opened","payload":"{\"action\":\"opened\",\"number\":42,\"title\":\"Retry budget for payments\"}","trace_id":"0af7651916cd43dd","sender":{"session_id":"s-1","machine":"ci"}}`)

// BenchmarkAppendMessage measures durable bus sends: each op is one AppendMessage (idempotency
// lookup, seq assignment on one shared channel, insert, group commit with fsync). With 8
// writers the sends share commits. events/s = messages per second.
func BenchmarkAppendMessage(b *testing.B) {
	for _, writers := range benchWriters {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			k := store.OrgStream("bench", "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general")
			counters := make([]int, writers)
			now := time.Now()
			storetest.RunParallel(b, writers, 1, func(w int) error {
				counters[w]++
				_, _, err := s.AppendMessage(context.Background(), store.MessageWrite{
					Stream: k, SenderOrg: "bench", SenderInstance: fmt.Sprintf("inst-%d", w),
					ClientMsgID: fmt.Sprintf("c-%d", counters[w]), Type: "question",
					ServerTime: now, ExpiresAt: now.Add(30 * 24 * time.Hour), Data: benchMessageData,
				})
				return err
			})
		})
	}
}

// BenchmarkAppendEnvelope measures durable notification publishes: each op is one
// AppendEnvelope with a message id (dedupe lookup, store sequence, insert, group commit with
// fsync). events/s = envelopes per second.
func BenchmarkAppendEnvelope(b *testing.B) {
	for _, writers := range benchWriters {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			counters := make([]int, writers)
			now := time.Now()
			storetest.RunParallel(b, writers, 1, func(w int) error {
				counters[w]++
				_, dup, err := s.AppendEnvelope(context.Background(), "bench", store.EnvelopeWrite{
					Subject:   "notifications.github.acme.widgets.pr.42",
					MessageID: fmt.Sprintf("github.d-%d-%d:notifications.github.acme.widgets.pr.42", w, counters[w]),
					StoredAt:  now, Data: benchEnvelopeData,
				}, 72*time.Hour)
				if dup {
					return fmt.Errorf("unexpected duplicate")
				}
				return err
			})
		})
	}
}

// BenchmarkBusReads measures the reader-pool calls of the bus lane's hot paths on a stream of
// 2,000 messages and 20 task events: the live pump's read of the newest entry (ReadStream after
// the last but one, viewer filter), a catch-up page (ReadStream, 256 entries), a history read
// (ReadMessages, thread filter), GetMessage, StreamLastSeq and LookupClientMsg. Each op is one
// call; `parallel` runs the pump read from 8 goroutines over the 4 pooled connections.
func BenchmarkBusReads(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	k := store.OrgStream("bench", "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general")
	now := time.Now()
	var gids []string
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 2000; i += 8 {
				m, _, err := s.AppendMessage(ctx, store.MessageWrite{
					Stream: k, SenderOrg: "bench", SenderInstance: "inst-1", ClientMsgID: fmt.Sprintf("c-%d", i),
					Type: "question", ThreadID: fmt.Sprintf("t-%d", i%10), ServerTime: now, ExpiresAt: now.Add(time.Hour),
					Deadline: now.Add(-time.Minute), Data: benchMessageData,
				})
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				gids = append(gids, m.GID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, gid := range gids[:20] {
		if _, _, err := s.ProposeTask(ctx, store.TaskProposalWrite{Stream: k, Vault: "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42",
			QuestionGID: gid, CreatedAt: now, Data: []byte(`{"event":"proposed"}`)}); err != nil {
			b.Fatal(err)
		}
	}
	last, err := s.StreamLastSeq(ctx, k)
	if err != nil || last != 2020 {
		b.Fatalf("last %d, %v", last, err)
	}
	viewer := &store.Viewer{Org: "bench", Instance: "inst-2"}
	scope := store.MessageScope{Org: "bench"}
	for _, c := range []struct {
		name string
		call func(i int) error
	}{
		{"pump", func(int) error {
			e, err := s.ReadStream(ctx, k, store.ReadQuery{After: last - 1, Limit: 256, Viewer: viewer})
			if err == nil && len(e) != 1 {
				err = fmt.Errorf("%d entries", len(e))
			}
			return err
		}},
		{"catchup256", func(i int) error {
			e, err := s.ReadStream(ctx, k, store.ReadQuery{After: int64(i % 1500), Limit: 256, Viewer: viewer})
			if err == nil && len(e) != 256 {
				err = fmt.Errorf("%d entries", len(e))
			}
			return err
		}},
		{"history", func(i int) error {
			_, err := s.ReadMessages(ctx, k, store.ReadQuery{After: int64(i % 1500), Limit: 20, ThreadID: "t-3", Viewer: viewer})
			return err
		}},
		{"get", func(i int) error { _, err := s.GetMessage(ctx, scope, gids[i%len(gids)]); return err }},
		{"lastseq", func(int) error { _, err := s.StreamLastSeq(ctx, k); return err }},
		{"lookup", func(i int) error {
			_, err := s.LookupClientMsg(ctx, "bench", "inst-1", fmt.Sprintf("c-%d", i%2000))
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := c.call(i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(2) // 2 × GOMAXPROCS goroutines
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.ReadStream(ctx, k, store.ReadQuery{After: last - 1, Limit: 256, Viewer: viewer}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
