// Package sqlite is the embedded default backend of the relay's [store.Store] (relay.md §1:
// `--store sqlite`, data in `<data dir>/agentwire.db`), built on modernc.org/sqlite (pure Go, no
// cgo). It implements the three lanes: runs ([store.RunStore]), the bus ([store.BusStore]) and
// notifications ([store.NotificationStore]).
//
// # Durability
//
// The database runs in WAL mode with synchronous=FULL: a commit fsyncs the WAL before it
// returns, so when AppendRun returns nil the batch survives a crash or a power cut (relay.md
// §4). A run's events, its status and counters, its checkpoint when the batch carries one
// (table run_checkpoints, apart from the runs row so that a batch without one never rewrites
// the snapshot's pages) and the store-wide update sequence are written in one transaction, so
// after `kill -9` a batch is either wholly present or wholly absent.
//
// # Group commit
//
// All writes of every lane (AppendRun, AppendMessage, AppendReceipt, ProposeTask,
// RecordAnnouncements, SetAck, AppendEnvelope, RecordSessionDeliveries and the expiry sweeps)
// go through one writer goroutine that owns the only
// write connection, so a run batch, a message and an envelope arriving together share one
// transaction and one fsync. A call queues its request and waits. The writer takes the first queued request plus whatever else is
// queued at that moment (up to Options.MaxGroupRequests requests and about
// Options.MaxGroupEvents events), runs them in one transaction, each inside its own SAVEPOINT,
// and commits once: concurrent callers share one fsync. A caller whose batch is refused
// (conflict, duplicate, out of order) is rolled back to its savepoint alone; the others still
// commit. An unexpected SQLite error (I/O, disk full) rolls back the whole transaction and
// every caller of that group gets the error: none of them is acknowledged. Callers are
// answered only after COMMIT has returned.
//
// AppendRunStream ([store.StreamAppender]) is one op of a group like AppendRun, except that
// it inserts each part of its batch as the caller delivers it, so the caller's parsing and
// the inserts overlap; the ops queued behind it wait until its End part. Checkpoint writes
// (PutCheckpoint, in CheckpointChunk pieces) go on a background lane: each runs alone in a
// group, only when no other write waits or once the lane has waited 20 ms, so an append never
// queues behind megabytes of snapshot. The writer keeps the runs rows it has read or written
// (runCache): an append to a known run does not read its row or checkpoint sequence again.
//
// WAL checkpoints (copying committed pages back into the database file) run on a connection
// of their own after commits, at most every 100 ms (walckpt.go), not inside a COMMIT; the
// writer checkpoints itself only once the WAL passes 16 MiB, which is when the WAL file
// starts again from its beginning.
//
// # Sequences
//
// What must be assigned is assigned inside the write transaction, from counters stored in the
// database: a stream's `seq` (bus_streams.last_seq, shared by its messages, task events and
// publishes), the envelope store sequence (envelope_state.last_seq), task numbers per vault. A
// refused call rolls back to its savepoint and gives its values back; a committed one keeps
// them, and counter rows are never deleted, so the sequences have no gaps, survive a crash
// exactly as committed, and are never reused after expiry. A `gid` the caller leaves empty is
// minted as a ULID ([store.NewULID]).
//
// # Time
//
// Options.Now decides when a bus message, publish or handoff has expired (it is then invisible
// to every read before the sweeper deletes it). Envelope times are the caller's, raised so that they never go
// back (envelope_state.clock): sequence order and time order agree, and ExpireEnvelopes removes
// a prefix.
//
// # Readers
//
// Reads (ReadEvents, GetRun, ListRuns, GetMessage, ReadMessages, ReadStream, DueQuestions,
// ListTaskProposals, ReadEnvelopes, Ping, …) use a separate pool of query-only connections. In
// WAL mode they never wait for the writer and always see a committed state; ReadStream reads
// messages and task events in one read transaction so that its page is one snapshot —
// unless the stream tail can answer it: after COMMIT the writer hands each stored message to
// the tail (streamtail.go), which keeps each stream's recent messages, complete after a
// cursor, so the relay's fan-out read after every commit costs no transaction (8 MiB and 1,024
// messages per stream at most; a task event, a publish or a deleted message makes it forget).
// Whether a client_msg_id was stored (S9: LookupClientMsg, and the writer's own check) is
// answered "no" by a Bloom filter of the stored keys when it can (clientfilter.go: no false
// "no"; at most 32 MiB), so a new message costs no lookup query. The bus and
// notification reads are prepared once at Open and stay prepared on each pooled connection (see
// readStmts), and none binds a value the query planner inspects, so no read parses or plans its
// SQL again after a connection's first use.
//
// # Schema
//
// The schema is versioned in code: migrations is an ordered list, PRAGMA user_version records
// how many have been applied, and Open applies the missing ones in one transaction. A database
// written by a newer binary (user_version beyond the list) is refused rather than guessed at,
// and so is a file that is not an agentwire database (PRAGMA application_id).
//
// # One process per file
//
// Open takes an exclusive advisory lock on `<path>.lock` (on systems with flock), so a second
// relay on the same data directory fails at start instead of silently missing the first one's
// change notifications, which are in process only (store.RunStore.Subscribe,
// SubscribeStream, SubscribeEnvelopes). The kernel
// releases the lock when the process dies, so a restart after a crash just works.
package sqlite
