package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// TestWALCheckpointedBesideTheWriter: committed pages reach the database file while the WAL
// is still far below the writer's own checkpoint threshold (so the checkpointer copied them),
// and while writes keep coming the WAL file stays near that threshold (the writer's guard
// starts it again) instead of growing with the data.
func TestWALCheckpointedBesideTheWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), DefaultFileName)
	var mu sync.Mutex
	var seen []WALCheckpointInfo
	s, err := Open(path, Options{OnWALCheckpoint: func(ci WALCheckpointInfo) {
		mu.Lock()
		seen = append(seen, ci)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	const eventBytes, perBatch = 16 << 10, 64 // 1 MiB a batch
	pad := bytes.Repeat([]byte("x"), eventBytes)
	var last int64
	appendBatch := func() {
		t.Helper()
		events := storetest.Batch("r", storetest.Seqs(last+1, perBatch)...)
		for i := range events {
			events[i].Data = append(events[i].Data[:len(events[i].Data)-1:len(events[i].Data)-1], `,"pad":"`...)
			events[i].Data = append(append(events[i].Data, pad...), `"}`...)
		}
		req := store.AppendRequest{ExpectedLastLogicalSequence: last, Events: events, Status: "running"}
		if last == 0 {
			req.Snapshot = storetest.Snapshot(perBatch, perBatch)
		}
		if _, err := s.AppendRun(context.Background(), "org", "r", req); err != nil {
			t.Fatal(err)
		}
		last += perBatch
	}

	before := size(path)
	appendBatch() // ~1 MiB of WAL: a sixteenth of the guard
	if wal := size(path + "-wal"); wal >= walGuardPages*4096/4 {
		t.Fatalf("WAL is %d bytes after one batch", wal)
	}
	deadline := time.Now().Add(20 * time.Second)
	for size(path) < before+eventBytes*perBatch/2 {
		if time.Now().After(deadline) {
			t.Fatalf("database file %d → %d bytes: the batch was not checkpointed (%d checkpoints)", before, size(path), s.ckpt.runs.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}

	const written = 96 // MiB: six times the guard
	for range written {
		appendBatch()
	}
	// The WAL file keeps its largest size: the guard, plus the groups committed while a
	// background checkpoint held the checkpoint lock (the writer's own checkpoint then
	// finds it busy and tries again at the next commit). Here, 1 MiB groups back to back,
	// that was 16.3–28.3 MiB over 100 runs, some under CPU load. Without the writer's restart
	// it would hold all that was written.
	if wal, max := size(path+"-wal"), int64(walGuardPages*4096*3); wal > max {
		t.Fatalf("WAL file reached %d bytes while writing %d MiB (bound %d)", wal, written, max)
	} else {
		t.Logf("WAL file reached %d bytes", wal)
	}
	if s.ckpt.runs.Load() == 0 {
		t.Fatal("no checkpoint ran")
	}
	// Every checkpoint was reported, with the WAL it left (0 frames when the writer had just
	// started it again).
	mu.Lock()
	defer mu.Unlock()
	if int64(len(seen)) != s.ckpt.runs.Load() {
		t.Fatalf("%d checkpoints reported, %d ran", len(seen), s.ckpt.runs.Load())
	}
	for _, ci := range seen {
		if ci.Err != nil || ci.Frames < 0 || ci.Copied < 0 || ci.Copied > ci.Frames || ci.Duration <= 0 {
			t.Fatalf("checkpoint reported as %+v", ci)
		}
	}
}
