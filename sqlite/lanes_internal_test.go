package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// TestCrossLaneGroupCommit: writes of the three lanes queued behind a busy writer share one
// transaction and one fsync; each stays atomic on its own (a refused message rolls back only its
// savepoint, and gives its seq back), and the answers are those of sequential execution in queue
// order.
func TestCrossLaneGroupCommit(t *testing.T) {
	s, g := openGated(t)
	ctx := context.Background()
	k := store.OrgStream("o", storetest.ChannelGeneral)
	// Before the gate: a question with a known gid (its own group, then held in OnCommit, so
	// its answer only comes after the gate opens).
	first := make(chan error, 1)
	question := storetest.Message(k, "o", "i1", "q")
	question.GID, question.Type, question.Deadline = "q-gid", "question", time.Now().Add(-time.Minute)
	go func() {
		_, _, err := s.AppendMessage(ctx, question)
		first <- err
	}()
	<-g.held

	dupGID := storetest.Message(k, "o", "i1", "refused")
	type call struct {
		name string
		do   func() error
	}
	var (
		m1, m2, replay store.StoredMessage
		replayed       bool
		info           store.RunInfo
		env, envDup    store.StoredEnvelope
		dup            bool
		applied        []string
		prop           store.TaskProposal
		created        bool
	)
	calls := []call{
		{"run", func() (err error) { info, err = s.AppendRun(ctx, "o", "r", req("r", 0, 1, 2)); return }},
		{"message", func() (err error) { m1, _, err = s.AppendMessage(ctx, storetest.Message(k, "o", "i1", "m1")); return }},
		{"refused message", func() error {
			dupGID.GID = question.GID
			_, _, err := s.AppendMessage(ctx, dupGID)
			if !errors.Is(err, store.ErrDuplicateGID) {
				return errors.New("want ErrDuplicateGID, got " + errString(err))
			}
			return nil
		}},
		{"message after the refusal", func() (err error) { m2, _, err = s.AppendMessage(ctx, storetest.Message(k, "o", "i2", "m2")); return }},
		{"replay of a message of this group", func() (err error) {
			replay, replayed, err = s.AppendMessage(ctx, storetest.Message(k, "o", "i1", "m1"))
			return
		}},
		{"receipt", func() (err error) {
			applied, err = s.AppendReceipt(ctx, k, question.GID, "codex", store.ReceiptRead, time.Now())
			return
		}},
		{"proposal", func() (err error) {
			prop, created, err = s.ProposeTask(ctx, store.TaskProposalWrite{Stream: k, Vault: storetest.Vault, QuestionGID: question.GID, CreatedAt: time.Now(), Data: []byte("p")})
			return
		}},
		{"envelope", func() (err error) {
			env, _, err = s.AppendEnvelope(ctx, "o", storetest.Envelope("notifications.agent.s", "id", storetest.T0, ""), storetest.Window)
			return
		}},
		{"duplicate envelope of this group", func() (err error) {
			envDup, dup, err = s.AppendEnvelope(ctx, "o", storetest.Envelope("notifications.agent.s", "id", storetest.T0, "again"), storetest.Window)
			return
		}},
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.do()
		}()
		waitQueued(t, s, i+1)
	}
	close(g.hold)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", calls[i].name, err)
		}
	}
	commits := g.all()
	if len(commits) != 2 {
		t.Fatalf("commits = %+v, want the question alone, then one group", commits)
	}
	// Appended: all but the refusal; Events: run 2, messages 2, receipt, proposal, envelope.
	if c := commits[1]; c.Requests != len(calls) || c.Appended != len(calls)-1 || c.Events != 2+2+1+1+1 || c.Err != nil {
		t.Fatalf("group commit = %+v", c)
	}
	if info.LastLogicalSequence != 2 || m1.Seq != 2 || m2.Seq != 3 || !replayed || replay.GID != m1.GID ||
		!slices.Equal(applied, []string{store.ReceiptDelivered, store.ReceiptRead}) || !created || prop.Seq != 4 || prop.Number != 1 ||
		env.Seq != 1 || !dup || envDup.Seq != 1 {
		t.Fatalf("answers: run %+v m1 %d m2 %d replay %v/%s receipt %v proposal %v/%+v envelope %d dup %v/%d",
			info, m1.Seq, m2.Seq, replayed, replay.GID, applied, created, prop, env.Seq, dup, envDup.Seq)
	}
	ms, err := s.ReadMessages(ctx, k, store.ReadQuery{Limit: 10})
	if err != nil || len(ms) != 3 || ms[2].ClientMsgID != "m2" {
		t.Fatalf("stored messages: %d, %v", len(ms), err)
	}
	// A group that changes nothing (a replay alone) commits nothing and still answers.
	if _, replayed, err := s.AppendMessage(ctx, storetest.Message(k, "o", "i1", "m1")); err != nil || !replayed {
		t.Fatalf("lone replay: %v, %v", replayed, err)
	}
	if c := g.all()[2]; c.Requests != 1 || c.Appended != 1 || c.Events != 0 || c.Err != nil {
		t.Fatalf("lone replay commit info %+v", c)
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// TestUnexpectedErrorFailsMixedGroup: an SQLite failure in a group fails the callers of every
// lane in it, stores nothing and gives every seq back.
func TestUnexpectedErrorFailsMixedGroup(t *testing.T) {
	s, g := openGated(t)
	ctx := context.Background()
	k := store.OrgStream("o", storetest.ChannelGeneral)
	go func() { _, _ = s.AppendRun(ctx, "o", "warm", req("warm", 0, 1)) }()
	<-g.held
	var pages int64
	if err := s.conn.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	big := storetest.Message(k, "o", "i", "big")
	big.Data = make([]byte, 256<<10)
	calls := []func() error{
		func() error { _, _, err := s.AppendMessage(ctx, storetest.Message(k, "o", "i", "small")); return err },
		func() error {
			_, _, err := s.AppendEnvelope(ctx, "o", storetest.Envelope("notifications.agent.s", "", storetest.T0, ""), storetest.Window)
			return err
		},
		func() error { _, _, err := s.AppendMessage(ctx, big); return err },
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c()
		}()
		waitQueued(t, s, i+1)
	}
	close(g.hold)
	wg.Wait()
	for i, err := range errs {
		if err == nil || isRefusal(err) {
			t.Fatalf("caller %d: %v, want the group's SQLite error", i, err)
		}
	}
	if _, err := s.conn.ExecContext(ctx, "PRAGMA max_page_count = 4294967294"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.StreamLastSeq(ctx, k); err != nil || n != 0 {
		t.Fatalf("a failed group left stream seq %d, %v", n, err)
	}
	if n, err := s.LastEnvelopeSeq(ctx, "o"); err != nil || n != 0 {
		t.Fatalf("a failed group left envelope seq %d, %v", n, err)
	}
	m, _, err := s.AppendMessage(ctx, storetest.Message(k, "o", "i", "small"))
	if err != nil || m.Seq != 1 {
		t.Fatalf("after the cause is gone: seq %d, %v", m.Seq, err)
	}
	e, _, err := s.AppendEnvelope(ctx, "o", storetest.Envelope("notifications.agent.s", "", storetest.T0, ""), storetest.Window)
	if err != nil || e.Seq != 1 {
		t.Fatalf("after the cause is gone: envelope seq %d, %v", e.Seq, err)
	}
}

// TestMigrateFromRunsOnlySchema: a database written by the binary of the runs lane (schema
// version 1) opens with this binary, gains the bus and notification tables, and keeps its runs.
func TestMigrateFromRunsOnlySchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), DefaultFileName)
	// Version 1 exactly as that binary left it: its migration, its stamp, one run.
	db, err := sql.Open("sqlite", dsn(path, "journal_mode(WAL)"))
	if err != nil {
		t.Fatal(err)
	}
	stmts := append([]string{fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)}, migrations[0].stmts...)
	stmts = append(stmts,
		`INSERT INTO runs (org, run_id, status, created_at, updated_at, update_seq, event_count, last_seq, snapshot) VALUES ('o', 'r', 'running', 1, 1, 1, 3, 3, x'7b7d')`,
		`INSERT INTO run_events (run, seq, event_id, type, data) VALUES (1, 1, 'e1', 't', x'7b7d'), (1, 2, 'e2', 't', x'7b7d'), (1, 3, 'e3', 't', x'7b7d')`,
		`UPDATE store_state SET update_seq = 1, clock = 1`,
		`PRAGMA user_version = 1`)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var version int
	if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != SchemaVersion() || version < 2 {
		t.Fatalf("user_version %d, %v; want %d", version, err, SchemaVersion())
	}
	evs, err := s.ReadEvents(context.Background(), "o", "r", 0, 10)
	if err != nil || len(evs) != 3 {
		t.Fatalf("runs after migration: %d events, %v", len(evs), err)
	}
	// The snapshot of the runs row becomes the run's checkpoint, covering its last event.
	if snap, info, err := s.GetRun(context.Background(), "o", "r"); err != nil || string(snap) != "{}" || info.SnapshotSequence != 3 || info.LastLogicalSequence != 3 {
		t.Fatalf("checkpoint after migration: %q, %+v, %v", snap, info, err)
	}
	k := store.OrgStream("o", storetest.ChannelGeneral)
	if m, _, err := s.AppendMessage(context.Background(), storetest.Message(k, "o", "i", "c")); err != nil || m.Seq != 1 {
		t.Fatalf("bus after migration: %+v, %v", m, err)
	}
	if e, _, err := s.AppendEnvelope(context.Background(), "o", storetest.Envelope("notifications.agent.s", "", storetest.T0, ""), storetest.Window); err != nil || e.Seq != 1 {
		t.Fatalf("notifications after migration: %+v, %v", e, err)
	}
	if _, err := s.AppendRun(context.Background(), "o", "r", req("r", 3, 4)); err != nil {
		t.Fatalf("runs continue after migration: %v", err)
	}
}
