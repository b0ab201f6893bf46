package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ApplicationID is the PRAGMA application_id stamped on every agentwire database ("AWIR").
// Open refuses a file that carries another application ID.
const ApplicationID = 0x41574952

// ErrSchemaTooNew is returned by Open for a database whose schema version (PRAGMA
// user_version) is beyond the migrations this binary knows: it was written by a newer
// agentwire, and downgrading in place is not supported.
var ErrSchemaTooNew = errors.New("sqlite: database schema is newer than this binary")

// ErrNotAgentwire is returned by Open for a file that is a SQLite database of something else.
var ErrNotAgentwire = errors.New("sqlite: not an agentwire database")

// migration is one schema step. Migrations are append-only: a released step is never edited,
// a change is a new step.
type migration struct {
	name  string
	stmts []string
}

// migrations is the ordered schema history; PRAGMA user_version = number applied.
var migrations = []migration{
	{
		name: "runs lane",
		stmts: []string{
			// One row per run. The snapshot is the last column so that listing, which reads
			// the columns before it, never walks the snapshot's overflow pages.
			`CREATE TABLE runs (
				id          INTEGER PRIMARY KEY,
				org         TEXT    NOT NULL,
				run_id      TEXT    NOT NULL,
				status      TEXT    NOT NULL,
				created_at  INTEGER NOT NULL, -- unix nanoseconds
				updated_at  INTEGER NOT NULL, -- unix nanoseconds, never decreasing across commits
				update_seq  INTEGER NOT NULL, -- store-wide commit order of the run's last append
				event_count INTEGER NOT NULL,
				last_seq    INTEGER NOT NULL, -- last stored logicalSequence
				snapshot    BLOB    NOT NULL,
				UNIQUE (org, run_id)
			)`,
			// ListRuns: newest first per org, with and without a status filter.
			`CREATE INDEX runs_by_update ON runs (org, update_seq)`,
			`CREATE INDEX runs_by_status ON runs (org, status, update_seq)`,
			// The events; run is runs.id. (run, seq) orders reads and makes cursors exact;
			// (run, event_id) refuses a reused event ID.
			`CREATE TABLE run_events (
				run      INTEGER NOT NULL,
				seq      INTEGER NOT NULL,
				event_id TEXT    NOT NULL,
				type     TEXT    NOT NULL,
				data     BLOB    NOT NULL,
				PRIMARY KEY (run, seq),
				UNIQUE (run, event_id)
			)`,
			// Store-wide counters kept by the single writer: the last update_seq issued and the
			// last commit time, so updated_at never goes back even if the wall clock does.
			`CREATE TABLE store_state (
				id         INTEGER PRIMARY KEY CHECK (id = 1),
				update_seq INTEGER NOT NULL,
				clock      INTEGER NOT NULL
			)`,
			`INSERT INTO store_state (id, update_seq, clock) VALUES (1, 0, 0)`,
		},
	},
	{
		name: "bus and notification lanes",
		stmts: []string{
			// One row per bus stream (hive.md §4.6): an org channel keyed by its org, a swarm by
			// its swarm_id alone (org ''). last_seq is the stream's counter, shared by its
			// messages and task events; rows are never deleted, so a seq is never reused.
			`CREATE TABLE bus_streams (
				id       INTEGER PRIMARY KEY,
				network  TEXT    NOT NULL, -- 'org' or 'swarm'
				org      TEXT    NOT NULL, -- '' for a swarm
				name     TEXT    NOT NULL, -- channel or swarm_id
				last_seq INTEGER NOT NULL,
				UNIQUE (network, org, name)
			)`,
			// The messages; stream is bus_streams.id. data is the last column so that the
			// index-driven reads of the columns before it never walk its overflow pages.
			`CREATE TABLE bus_messages (
				id              INTEGER PRIMARY KEY,
				gid             TEXT    NOT NULL UNIQUE, -- unique across networks (hive.md §1.7)
				stream          INTEGER NOT NULL,
				seq             INTEGER NOT NULL,
				sender_org      TEXT    NOT NULL,
				sender_instance TEXT    NOT NULL,
				client_msg_id   TEXT    NOT NULL,
				type            TEXT    NOT NULL,
				thread_id       TEXT    NOT NULL,
				reply_to        TEXT    NOT NULL, -- '' when none
				to_org          TEXT    NOT NULL, -- '' for a broadcast
				to_instance     TEXT    NOT NULL, -- '' for a broadcast
				deadline        INTEGER NOT NULL, -- unix nanoseconds, 0 when none
				pending         INTEGER NOT NULL, -- 1 while the question may become a task (S13)
				server_time     INTEGER NOT NULL, -- unix nanoseconds
				expires_at      INTEGER NOT NULL, -- unix nanoseconds, 0 = never
				data            BLOB    NOT NULL,
				UNIQUE (stream, seq),
				UNIQUE (sender_org, sender_instance, client_msg_id) -- S9
			)`,
			`CREATE INDEX bus_messages_by_thread ON bus_messages (stream, thread_id, seq)`,
			`CREATE INDEX bus_messages_by_expiry ON bus_messages (expires_at, id) WHERE expires_at > 0`,
			`CREATE INDEX bus_messages_due ON bus_messages (deadline, id) WHERE pending = 1`,
			// Receipt state per (message, recipient): 1 delivered, 2 read (S16).
			`CREATE TABLE bus_receipts (
				message      INTEGER NOT NULL, -- bus_messages.id
				recipient    TEXT    NOT NULL,
				state        INTEGER NOT NULL,
				delivered_at INTEGER NOT NULL, -- unix nanoseconds
				read_at      INTEGER NOT NULL, -- unix nanoseconds, 0 until read
				PRIMARY KEY (message, recipient)
			)`,
			// Task numbers per (org, vault), from 1 (hive.md §6).
			`CREATE TABLE task_counters (
				org         TEXT    NOT NULL,
				vault       TEXT    NOT NULL,
				last_number INTEGER NOT NULL,
				PRIMARY KEY (org, vault)
			)`,
			// Task proposals of questions past their deadline (S13), one per question; seq is
			// the position of the proposal's task.event on the question's stream.
			`CREATE TABLE task_proposals (
				id           INTEGER PRIMARY KEY,
				org          TEXT    NOT NULL,
				stream       INTEGER NOT NULL,
				vault        TEXT    NOT NULL,
				number       INTEGER NOT NULL,
				seq          INTEGER NOT NULL,
				question_gid TEXT    NOT NULL UNIQUE,
				created_at   INTEGER NOT NULL, -- unix nanoseconds
				data         BLOB    NOT NULL,
				UNIQUE (stream, seq),
				UNIQUE (org, vault, number)
			)`,
			`CREATE INDEX task_proposals_by_org ON task_proposals (org, id)`,
			// Envelopes in store order; seq is the store sequence (the SSE id:).
			`CREATE TABLE envelopes (
				seq        INTEGER PRIMARY KEY,
				org        TEXT    NOT NULL,
				subject    TEXT    NOT NULL,
				message_id TEXT    NOT NULL, -- '' when the envelope is never deduplicated
				stored_at  INTEGER NOT NULL, -- unix nanoseconds, never decreasing with seq
				data       BLOB    NOT NULL
			)`,
			`CREATE INDEX envelopes_by_org ON envelopes (org, seq)`,
			`CREATE INDEX envelopes_by_message_id ON envelopes (org, message_id, seq) WHERE message_id <> ''`,
			`CREATE INDEX envelopes_by_age ON envelopes (stored_at, seq)`,
			// The envelope counters: the last store sequence given and the last stored_at.
			`CREATE TABLE envelope_state (
				id       INTEGER PRIMARY KEY CHECK (id = 1),
				last_seq INTEGER NOT NULL,
				clock    INTEGER NOT NULL
			)`,
			`INSERT INTO envelope_state (id, last_seq, clock) VALUES (1, 0, 0)`,
		},
	},
	{
		name: "run checkpoints",
		stmts: []string{
			// The runs' checkpoints (store.AppendRequest.Snapshot), out of the runs row so that
			// the batches without a checkpoint never rewrite the snapshot's pages; run is
			// runs.id, seq the last logicalSequence the snapshot covers.
			`CREATE TABLE run_checkpoints (
				run      INTEGER PRIMARY KEY,
				seq      INTEGER NOT NULL,
				snapshot BLOB    NOT NULL
			)`,
			// Every snapshot stored so far was written with its run's last batch.
			`INSERT INTO run_checkpoints (run, seq, snapshot) SELECT id, last_seq, snapshot FROM runs`,
			`ALTER TABLE runs DROP COLUMN snapshot`,
		},
	},
	{
		name: "bus frames: publishes and handoffs",
		stmts: []string{
			// The publish frames of org channels (hive.md §4.2 `publish`, delivered as
			// `deliver`); stream is bus_streams.id and seq comes from its last_seq, shared with
			// the stream's messages and task events. private = 1 keeps the publish to viewers
			// that announced to_agent.
			`CREATE TABLE bus_publishes (
				id              INTEGER PRIMARY KEY,
				stream          INTEGER NOT NULL,
				seq             INTEGER NOT NULL,
				sender_org      TEXT    NOT NULL,
				sender_instance TEXT    NOT NULL,
				client_msg_id   TEXT    NOT NULL,
				to_agent        TEXT    NOT NULL, -- '' when none
				private         INTEGER NOT NULL,
				server_time     INTEGER NOT NULL, -- unix nanoseconds
				expires_at      INTEGER NOT NULL, -- unix nanoseconds, 0 = never
				data            BLOB    NOT NULL,
				UNIQUE (stream, seq),
				UNIQUE (sender_org, sender_instance, client_msg_id) -- S9
			)`,
			`CREATE INDEX bus_publishes_by_expiry ON bus_publishes (expires_at, id) WHERE expires_at > 0`,
			// Handoffs (hive.md §4.6), one per (org, handoff_id); state 0 offered, 1 acked,
			// 2 rejected. An offered one is redelivered to (to_instance, to_agent) until its
			// deadline; the row stays until expires_at, after the deadline.
			`CREATE TABLE bus_handoffs (
				id            INTEGER PRIMARY KEY,
				org           TEXT    NOT NULL,
				handoff_id    TEXT    NOT NULL,
				channel       TEXT    NOT NULL,
				from_instance TEXT    NOT NULL,
				from_agent    TEXT    NOT NULL,
				to_instance   TEXT    NOT NULL,
				to_agent      TEXT    NOT NULL,
				state         INTEGER NOT NULL,
				deadline      INTEGER NOT NULL, -- unix nanoseconds
				created_at    INTEGER NOT NULL, -- unix nanoseconds
				settled_at    INTEGER NOT NULL, -- unix nanoseconds, 0 while offered
				expires_at    INTEGER NOT NULL, -- unix nanoseconds, 0 = never
				data          BLOB    NOT NULL,
				UNIQUE (org, handoff_id)
			)`,
			`CREATE INDEX bus_handoffs_pending ON bus_handoffs (org, to_instance, to_agent, id) WHERE state = 0`,
			`CREATE INDEX bus_handoffs_by_expiry ON bus_handoffs (expires_at, id) WHERE expires_at > 0`,
		},
	},
	{
		name: "durable bus state and session dedupe",
		stmts: []string{
			// hello announcements (hive.md §4.5, S7): one row per (org, instance, agent,
			// channel), last_seen the last time it was announced or withdrawn; vault is the
			// channel's vault_id, the scope of S7's recipient binding.
			`CREATE TABLE bus_announcements (
				id        INTEGER PRIMARY KEY,
				org       TEXT    NOT NULL,
				instance  TEXT    NOT NULL,
				agent     TEXT    NOT NULL,
				channel   TEXT    NOT NULL,
				vault     TEXT    NOT NULL,
				last_seen INTEGER NOT NULL, -- unix nanoseconds
				dropped   INTEGER NOT NULL, -- 1 when a later hello no longer announced it (H2)
				UNIQUE (org, instance, agent, channel)
			)`,
			// S7: the instances that announced an agent in a vault, each once, in order.
			`CREATE INDEX bus_announcements_by_vault ON bus_announcements (org, vault, agent, instance, last_seen)`,
			`CREATE INDEX bus_announcements_by_age ON bus_announcements (last_seen, id)`,
			// ack positions (hive.md §4.6) per acknowledging instance and stream
			// (bus_streams.id); seq never goes down.
			`CREATE TABLE bus_acks (
				org      TEXT    NOT NULL,
				instance TEXT    NOT NULL,
				stream   INTEGER NOT NULL,
				seq      INTEGER NOT NULL,
				PRIMARY KEY (org, instance, stream)
			)`,
			// The dedupe keys delivered to each notification stream session (relay.md §2), with
			// the store sequence of the first delivery (0 for a role-lane envelope, never
			// stored); pruned with the 72 h retention.
			`CREATE TABLE notify_session_keys (
				id           INTEGER PRIMARY KEY,
				org          TEXT    NOT NULL,
				session      TEXT    NOT NULL,
				dedupe_key   TEXT    NOT NULL,
				seq          INTEGER NOT NULL,
				delivered_at INTEGER NOT NULL, -- unix nanoseconds
				UNIQUE (org, session, dedupe_key)
			)`,
			`CREATE INDEX notify_session_keys_by_age ON notify_session_keys (delivered_at, id)`,
		},
	},
	{
		name: "run checkpoints in chunks",
		stmts: []string{
			// A large checkpoint (PutCheckpoint) is written as chunks, each in a small
			// transaction of its own, then published by setting run_checkpoints.seq with
			// chunks = their number and an empty snapshot: no single commit writes megabytes
			// (checkpoint.go). Chunks of any other seq of the run are orphans (a newer
			// checkpoint was published, or a crash came before publishing) and are deleted.
			`CREATE TABLE run_checkpoint_chunks (
				run  INTEGER NOT NULL,
				seq  INTEGER NOT NULL,
				idx  INTEGER NOT NULL,
				data BLOB    NOT NULL,
				PRIMARY KEY (run, seq, idx)
			)`,
			`ALTER TABLE run_checkpoints ADD COLUMN chunks INTEGER NOT NULL DEFAULT 0`,
		},
	},
}

// SchemaVersion is the schema version this binary writes: the number of migrations.
func SchemaVersion() int { return len(migrations) }

// migrate brings the database on conn to SchemaVersion in one IMMEDIATE transaction, after
// checking that it is an agentwire database.
func migrate(ctx context.Context, conn *sql.Conn) (err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("sqlite: begin migration: %w", err)
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	var appID, version, objects int64
	if err := conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return fmt.Errorf("sqlite: read application_id: %w", err)
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("sqlite: read user_version: %w", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&objects); err != nil {
		return fmt.Errorf("sqlite: read schema: %w", err)
	}
	switch {
	case appID != 0 && appID != ApplicationID:
		return fmt.Errorf("%w (application_id %#x)", ErrNotAgentwire, appID)
	case appID == 0 && objects > 0:
		// Tables but no stamp: somebody else's database.
		return fmt.Errorf("%w (unstamped database with %d schema objects)", ErrNotAgentwire, objects)
	case version > int64(len(migrations)):
		return fmt.Errorf("%w: version %d, this binary knows %d", ErrSchemaTooNew, version, len(migrations))
	}
	if appID == 0 {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)); err != nil {
			return fmt.Errorf("sqlite: stamp application_id: %w", err)
		}
	}
	for v := int(version); v < len(migrations); v++ {
		m := migrations[v]
		for _, q := range m.stmts {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("sqlite: migration %d (%s): %w", v+1, m.name, err)
			}
		}
	}
	if version != int64(len(migrations)) {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
			return fmt.Errorf("sqlite: set user_version: %w", err)
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("sqlite: commit migration: %w", err)
	}
	return nil
}
