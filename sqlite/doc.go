// Package sqlite is the embedded default backend of the relay's [store.Store] (relay.md §1:
// `--store sqlite`, data in `<data dir>/agentwire.db`), built on modernc.org/sqlite (pure Go, no
// cgo).
//
// # Durability
//
// The database runs in WAL mode with synchronous=FULL: a commit fsyncs the WAL before it
// returns, so when AppendRun returns nil the batch survives a crash or a power cut (relay.md
// §4). A run's events, its snapshot, its status and counters and the store-wide update sequence
// are written in one transaction, so after `kill -9` a batch is either wholly present or wholly
// absent.
//
// # Group commit
//
// All writes go through one writer goroutine that owns the only write connection. AppendRun
// queues its request and waits. The writer takes the first queued request plus whatever else is
// queued at that moment (up to Options.MaxGroupRequests requests and about
// Options.MaxGroupEvents events), runs them in one transaction, each inside its own SAVEPOINT,
// and commits once: concurrent callers share one fsync. A caller whose batch is refused
// (conflict, duplicate, out of order) is rolled back to its savepoint alone; the others still
// commit. An unexpected SQLite error (I/O, disk full) rolls back the whole transaction and
// every caller of that group gets the error: none of them is acknowledged. Callers are
// answered only after COMMIT has returned.
//
// # Readers
//
// Reads (ReadEvents, GetRun, ListRuns, Ping) use a separate pool of query-only connections.
// In WAL mode they never wait for the writer and always see a committed state.
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
// change notifications, which are in process only (store.RunStore.Subscribe). The kernel
// releases the lock when the process dies, so a restart after a crash just works.
package sqlite
