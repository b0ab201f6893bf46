package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwire/agentwire/store"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// DefaultFileName is the database file inside the relay's data directory (relay.md §1:
// `./agentwire-data/agentwire.db`).
const DefaultFileName = "agentwire.db"

// Defaults of [Options].
const (
	// DefaultReadConns is the reader pool size: enough for concurrent SSE replays on a small
	// machine; WAL readers never block the writer.
	DefaultReadConns = 4
	// DefaultMaxGroupRequests caps the AppendRun calls sharing one commit.
	DefaultMaxGroupRequests = 256
	// DefaultMaxGroupEvents is two full NDJSON batches (relay.md §3: ≤ 10,000 events each), so
	// one commit's latency stays bounded.
	DefaultMaxGroupEvents = 20000
	// DefaultBusyTimeout bounds lock waits (only WAL checkpoints can make them happen).
	DefaultBusyTimeout = 10 * time.Second
)

// Options tunes a [Store]. The zero value uses the defaults.
type Options struct {
	// ReadConns is the size of the query-only reader pool (default DefaultReadConns).
	ReadConns int

	// MaxGroupRequests caps how many queued write calls (AppendRun and the bus and
	// notification writes) share one transaction (default DefaultMaxGroupRequests).
	MaxGroupRequests int

	// MaxGroupEvents stops adding requests to a group once it holds this many events (default
	// DefaultMaxGroupEvents; a bus or notification write counts as one); the first request of
	// a group is always taken whatever its size.
	MaxGroupEvents int

	// BusyTimeout bounds how long a connection waits for a lock (default DefaultBusyTimeout).
	// With one writer per file it only matters around WAL checkpoints.
	BusyTimeout time.Duration

	// Now is the clock (default time.Now) for a run's createdAt/updatedAt, which the store
	// clamps so that updatedAt never decreases across commits, and for deciding that a bus
	// message has expired (store.BusStore: an expired message answers ErrNotFound). It is read
	// once per write group and once per bus read. A relay replaces it with its own
	// (store.Clocked), so a relay's clock is set once, in relay.Config.Now.
	Now func() time.Time

	// OnCommit, when set, is called by the writer goroutine after each group transaction
	// ends, successful or not (the relay's store commit latency histogram, relay.md §2
	// Operations). It must return quickly.
	OnCommit func(CommitInfo)

	// OnWALCheckpoint, when set, is called by the background WAL checkpointer after each
	// checkpoint it runs (the relay's WAL metrics). It must return quickly.
	OnWALCheckpoint func(WALCheckpointInfo)
}

// CommitInfo describes one group transaction, for [Options.OnCommit].
type CommitInfo struct {
	// Requests is the number of write calls in the group (of every lane); Appended how many
	// of them succeeded (committed, or answered without a change: a replay, a repeated
	// receipt); Events how many items they stored or deleted (run events, messages, receipts,
	// proposals, envelopes, expired rows).
	Requests, Appended, Events int
	// Duration is the time from BEGIN to the end of COMMIT (including the fsync).
	Duration time.Duration
	// Err is the error that failed the whole group, nil when it committed.
	Err error
}

// Store is the SQLite backend. It implements [store.Store]. Create it with [Open].
type Store struct {
	path string
	opts Options
	lock *fileLock
	// clock is the current clock (opts.Now until SetClock).
	clock atomic.Pointer[func() time.Time]

	wdb  *sql.DB   // the single write connection's pool (max 1)
	conn *sql.Conn // owned by the writer goroutine
	rdb  *sql.DB   // query-only readers
	w    *writer
	ckpt *walCheckpointer // WAL checkpoints beside the writer (walckpt.go)

	mu     sync.RWMutex // guards closed against the send on w.reqs
	closed bool

	runs, streams, envs store.Hub     // change notifications per lane
	tail                *streamTail   // the recent messages of each stream (streamtail.go)
	clientIDs           clientFilters // which S9 keys were never stored (clientfilter.go)
	// bg ends the background work (the filter's scans, the WAL checkpointer) at Close; bgWG
	// waits for it.
	bg     context.Context
	bgStop context.CancelFunc
	bgWG   sync.WaitGroup

	selRun, selEvents, selSnapshot *sql.Stmt
	selChunks                      *sql.Stmt
	rd                             readStmts // the bus and notification reads
}

var _ store.Store = (*Store)(nil) // every lane: runs, bus and notifications

// Open opens (creating it if needed) the database at path, applies pending migrations,
// recovers the WAL of a previous crash, and starts the writer. The parent directory must exist.
func Open(path string, opts Options) (*Store, error) {
	if opts.ReadConns <= 0 {
		opts.ReadConns = DefaultReadConns
	}
	if opts.MaxGroupRequests <= 0 {
		opts.MaxGroupRequests = DefaultMaxGroupRequests
	}
	if opts.MaxGroupEvents <= 0 {
		opts.MaxGroupEvents = DefaultMaxGroupEvents
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	lock, err := lockFile(abs + ".lock")
	if err != nil {
		return nil, err
	}
	s := &Store{path: abs, opts: opts, lock: lock, tail: newStreamTail(tailBytes)}
	s.clock.Store(&opts.Now)
	if err := s.open(); err != nil {
		s.closeDBs()
		lock.release()
		return nil, err
	}
	return s, nil
}

// dsn builds a file: URI (so any path, even one with '?' or '#', reaches SQLite intact) with
// the driver's connection pragmas.
func dsn(path string, pragmas ...string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	if u.Path != "" && u.Path[0] != '/' { // a Windows drive path
		u.Path = "/" + u.Path
	}
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	return u.String() + "?" + q.Encode()
}

func (s *Store) open() error {
	ctx := context.Background()
	busy := fmt.Sprintf("busy_timeout(%d)", s.opts.BusyTimeout.Milliseconds())
	var err error
	// synchronous=FULL: in WAL mode the WAL is fsynced at every commit, so a returned commit
	// is durable (relay.md §4). NORMAL would only fsync at checkpoints.
	// The writer checkpoints only past walGuardPages; walCheckpointer does it before then.
	s.wdb, err = sql.Open("sqlite", dsn(s.path, busy, "journal_mode(WAL)", "synchronous(FULL)",
		fmt.Sprintf("wal_autocheckpoint(%d)", walGuardPages)))
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	s.conn, err = s.wdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	var mode string
	if err := s.conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("sqlite: open %s: journal_mode is %q, want wal", s.path, mode)
	}
	if err := migrate(ctx, s.conn); err != nil {
		return err
	}
	// Checkpoint chunks no published checkpoint uses: left by a crash before publishing.
	if _, err := s.conn.ExecContext(ctx, `DELETE FROM run_checkpoint_chunks WHERE NOT EXISTS (SELECT 1 FROM run_checkpoints c
		WHERE c.run = run_checkpoint_chunks.run AND c.seq = run_checkpoint_chunks.seq AND c.chunks > 0)`); err != nil {
		return fmt.Errorf("sqlite: open %s: drop orphan checkpoint chunks: %w", s.path, err)
	}
	s.w, err = newWriter(ctx, s)
	if err != nil {
		return err
	}

	s.rdb, err = sql.Open("sqlite", dsn(s.path, busy, "query_only(1)"))
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	s.rdb.SetMaxOpenConns(s.opts.ReadConns)
	s.rdb.SetMaxIdleConns(s.opts.ReadConns)
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		{&s.selRun, `SELECT id FROM runs WHERE org = ? AND run_id = ?`},
		{&s.selEvents, `SELECT seq, event_id, type, data FROM run_events WHERE run = ? AND seq > ? ORDER BY seq LIMIT ?`},
		{&s.selSnapshot, `SELECT r.id, r.status, r.created_at, r.updated_at, r.event_count, r.last_seq, c.seq, c.snapshot, c.chunks FROM runs r JOIN run_checkpoints c ON c.run = r.id WHERE r.org = ? AND r.run_id = ?`},
		{&s.selChunks, `SELECT idx, data FROM run_checkpoint_chunks WHERE run = ? AND seq = ? ORDER BY idx`},
	} {
		if *p.st, err = s.rdb.PrepareContext(ctx, p.q); err != nil {
			return fmt.Errorf("sqlite: prepare: %w", err)
		}
	}
	for _, p := range s.rd.defs() {
		if *p.st, err = s.rdb.PrepareContext(ctx, p.q); err != nil {
			return fmt.Errorf("sqlite: prepare %q: %w", p.q, err)
		}
	}
	if s.ckpt, err = openWALCheckpointer(s.path, busy, s.opts.OnWALCheckpoint); err != nil {
		return err
	}
	go s.w.run()
	s.bg, s.bgStop = context.WithCancel(context.Background())
	s.bgWG.Go(func() { s.ckpt.run(s.bg) })
	s.rebuildClientFilter()
	return nil
}

// SetClock replaces the store's clock (Options.Now) with now (store.Clocked): a relay gives
// the store its own, so the two never disagree.
func (s *Store) SetClock(now func() time.Time) {
	if now != nil {
		s.clock.Store(&now)
	}
}

// now reads the store's clock.
func (s *Store) now() time.Time { return (*s.clock.Load())() }

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Subscribers returns the number of live run subscriptions (relay metric `subscribers`).
func (s *Store) Subscribers() int { return s.runs.Subscribers() }

// Ping implements [store.Store.Ping] with a query on the reader pool.
func (s *Store) Ping(ctx context.Context) error {
	if s.isClosed() {
		return store.ErrClosed
	}
	var one int
	if err := s.rdb.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return s.readErr(err)
	}
	return nil
}

// Close implements [store.Store.Close]: it drains the write queue (every queued AppendRun is
// committed or refused as usual and answered), closes subscriptions, closes the connections
// (SQLite checkpoints the WAL when the last one closes) and releases the lock.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.w.reqs)
	close(s.w.bg)
	s.mu.Unlock()
	<-s.w.done
	s.bgStop()
	s.bgWG.Wait()
	s.runs.Close()
	s.streams.Close()
	s.envs.Close()
	err := s.closeDBs()
	s.lock.release()
	return err
}

func (s *Store) closeDBs() error {
	var errs []error
	all := []*sql.Stmt{s.selRun, s.selEvents, s.selSnapshot, s.selChunks}
	for _, d := range s.rd.defs() {
		all = append(all, *d.st)
	}
	for _, st := range all {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.w != nil {
		errs = append(errs, s.w.closeStmts())
	}
	if s.conn != nil {
		errs = append(errs, s.conn.Close())
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	return errors.Join(errs...)
}

func (s *Store) isClosed() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.closed
}

// readErr maps a reader-pool error: after Close it is ErrClosed whatever database/sql said.
func (s *Store) readErr(err error) error {
	if s.isClosed() {
		return store.ErrClosed
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("sqlite: read: %w", err)
}
