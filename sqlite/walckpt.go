package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"
)

// WAL checkpoints off the writer.
//
// In WAL mode SQLite's default is that the connection whose COMMIT takes the WAL past 1,000
// pages copies the WAL's pages back into the database file and fsyncs it, inside that
// COMMIT: every few megabytes one group of callers waits for the copy (11 % of the writer's
// CPU with 1,000-event batches, and the long tail of commit latency). Here a goroutine with
// a connection of its own runs PASSIVE checkpoints after commits, at most one every
// walCheckpointGap, so the copy runs beside the writer. A PASSIVE checkpoint never waits for
// the writer or for readers; it copies what no reader still needs.
//
// The WAL file only starts again from its beginning when a write transaction begins with
// every frame copied, which a checkpointer on another connection rarely sees while writes
// keep coming. So the writer connection keeps SQLite's own checkpoint, at walGuardPages: the
// WAL grows to about that size, then the writer's COMMIT copies what the checkpointer has not
// yet (the commits since its last pass, at most about walCheckpointGap of them) and the next
// transaction starts the WAL again.
// If the checkpointer cannot keep up, the same guard bounds the WAL as before, only later.
// The WAL file can pass the guard by what is committed while a background checkpoint holds
// the checkpoint lock (the writer's attempt then finds it busy and the next commit tries
// again): with 1 MiB groups back to back it peaked at 17–28 MiB in the tests.
const (
	walGuardPages    = 4096 // 16 MiB of 4 KiB pages
	walCheckpointGap = 100 * time.Millisecond
)

// WALCheckpointInfo describes one checkpoint of the background checkpointer, for
// [Options.OnWALCheckpoint].
type WALCheckpointInfo struct {
	// Frames is the number of frames (pages) in the WAL when the checkpoint ended, Copied how
	// many of them are now in the database file: fewer while a reader still needs older
	// pages. The WAL starts again from frame 0 once it passes about 4,096 frames; a Frames
	// that keeps growing past that means readers hold it.
	Frames, Copied int
	// Duration is the time the checkpoint took (copy and fsyncs).
	Duration time.Duration
	// Err is the checkpoint's error, nil when it ran.
	Err error
}

// walCheckpointer owns the checkpoint connection; only its goroutine uses it.
type walCheckpointer struct {
	db   *sql.DB
	kick chan struct{}
	on   func(WALCheckpointInfo) // Options.OnWALCheckpoint
	runs atomic.Int64            // checkpoints run (tests)
}

func openWALCheckpointer(path, busy string, on func(WALCheckpointInfo)) (*walCheckpointer, error) {
	// synchronous=FULL: a checkpoint fsyncs the WAL before copying and the database after.
	db, err := sql.Open("sqlite", dsn(path, busy, "synchronous(FULL)"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return &walCheckpointer{db: db, kick: make(chan struct{}, 1), on: on}, nil
}

// poke asks for a checkpoint after a commit; it never blocks the writer.
func (c *walCheckpointer) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// run checkpoints after pokes until ctx ends. An error (a closed file, a full disk) is left
// to the writer, whose COMMITs meet the same file: the next poke tries again.
func (c *walCheckpointer) run(ctx context.Context) {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	gap := time.NewTimer(0)
	defer gap.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		var busy, log, copied int64
		start := time.Now()
		err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && busy != 0:
			// The writer's own checkpoint was running: nothing was done here.
		default:
			if err == nil {
				c.runs.Add(1)
			}
			if c.on != nil {
				c.on(WALCheckpointInfo{Frames: int(log), Copied: int(copied), Duration: time.Since(start), Err: err})
			}
		}
		gap.Reset(walCheckpointGap)
		select {
		case <-ctx.Done():
			return
		case <-gap.C:
		}
	}
}

func (c *walCheckpointer) close() error { return c.db.Close() }
