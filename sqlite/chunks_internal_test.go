package sqlite

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// A large checkpoint is stored as chunks; chunks no published checkpoint uses (a crash before
// publishing) are deleted at the next Open; an inline checkpoint of AppendRun drops them all.
func TestCheckpointChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), DefaultFileName)
	ctx := context.Background()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	chunkRows := func(s *Store) int {
		t.Helper()
		var n int
		if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM run_checkpoint_chunks`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := s.AppendRun(ctx, "o", "r", req("r", 0, 1, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendRun(ctx, "o", "r", store.AppendRequest{ExpectedLastLogicalSequence: 2, Events: storetest.Batch("r", 3, 4, 5), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 2*CheckpointChunk/16+5) // 3 chunks
	if stored, err := s.PutCheckpoint(ctx, "o", "r", 4, big); err != nil || !stored {
		t.Fatalf("PutCheckpoint = %v, %v", stored, err)
	}
	if n := chunkRows(s); n != 3 {
		t.Fatalf("%d chunk rows, want 3", n)
	}
	// Half of a newer checkpoint, never published: what a crash between the calls leaves.
	orphan := &checkpointReq{opBase: newOpBase(ctx), org: "o", runID: "r", seq: 5, data: []byte("half"), chunk: 0}
	if err := s.submit(ctx, orphan, orphan.done); err != nil || orphan.obsolete {
		t.Fatalf("chunk write: %v (obsolete %v)", err, orphan.obsolete)
	}
	if snap, info, err := s.GetRun(ctx, "o", "r"); err != nil || info.SnapshotSequence != 4 || !bytes.Equal(snap, big) {
		t.Fatalf("GetRun with an unpublished chunk: %d bytes at %d, %v", len(snap), info.SnapshotSequence, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := chunkRows(s); n != 3 {
		t.Fatalf("after reopen %d chunk rows, want the 3 published ones", n)
	}
	if snap, info, err := s.GetRun(ctx, "o", "r"); err != nil || info.SnapshotSequence != 4 || !bytes.Equal(snap, big) {
		t.Fatalf("GetRun after reopen: %d bytes at %d, %v", len(snap), info.SnapshotSequence, err)
	}
	if _, err := s.AppendRun(ctx, "o", "r", req("r", 5, 6)); err != nil {
		t.Fatal(err)
	}
	if n := chunkRows(s); n != 0 {
		t.Fatalf("an inline checkpoint left %d chunk rows", n)
	}
	if snap, info, err := s.GetRun(ctx, "o", "r"); err != nil || info.SnapshotSequence != 6 || !bytes.Equal(snap, storetest.Snapshot(6, 1)) {
		t.Fatalf("GetRun after the inline checkpoint: %s at %d, %v", snap, info.SnapshotSequence, err)
	}
}
