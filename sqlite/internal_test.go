package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// gate blocks the writer inside OnCommit after the first group, so a test can queue requests
// behind it and then release them into one group.
type gate struct {
	mu      sync.Mutex
	commits []CommitInfo
	hold    chan struct{} // closed to release the first OnCommit
	held    chan struct{} // closed when the first OnCommit is waiting
	once    sync.Once
}

func newGate() *gate { return &gate{hold: make(chan struct{}), held: make(chan struct{})} }

func (g *gate) onCommit(c CommitInfo) {
	g.mu.Lock()
	g.commits = append(g.commits, c)
	first := len(g.commits) == 1
	g.mu.Unlock()
	if first {
		g.once.Do(func() { close(g.held) })
		<-g.hold
	}
}

func (g *gate) all() []CommitInfo {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]CommitInfo(nil), g.commits...)
}

func openGated(t *testing.T) (*Store, *gate) {
	t.Helper()
	g := newGate()
	s, err := Open(filepath.Join(t.TempDir(), DefaultFileName), Options{OnCommit: g.onCommit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, g
}

// waitQueued waits until n requests sit in the writer's queue.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(s.w.reqs) < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d requests queued", len(s.w.reqs), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func req(run string, expected int64, seqs ...int64) store.AppendRequest {
	last := seqs[len(seqs)-1]
	return store.AppendRequest{ExpectedLastLogicalSequence: expected, Events: storetest.Batch(run, seqs...),
		Snapshot: storetest.Snapshot(last, int64(len(seqs))), Status: "running"}
}

// TestGroupCommit: requests queued while the writer is busy share one transaction; inside it
// each caller is atomic on its own (refusals roll back only their savepoint), and requests for
// one run apply in queue order.
func TestGroupCommit(t *testing.T) {
	s, g := openGated(t)
	ctx := context.Background()
	// The first append commits alone and then holds the writer in OnCommit.
	first := make(chan error, 1)
	go func() {
		_, err := s.AppendRun(ctx, "o", "warm", req("warm", 0, 1))
		first <- err
	}()
	<-g.held

	type call struct {
		run string
		req store.AppendRequest
		ok  bool
	}
	calls := []call{
		{"a", req("a", 0, 1, 2), true},
		{"a", req("a", 2, 3), true},        // sees the previous caller's savepoint
		{"a", req("a", 2, 3), false},       // conflict: stale by then
		{"b", req("b", 0, 1, 2, 2), false}, // duplicate sequence
		{"b", req("b", 0, 1), true},        // unaffected by the refusal before it
		{"c", req("c", 5, 6), false},       // conflict on a new run
		{"d", req("d", 0, 1, 2, 3), true},  //
		{"warm", req("warm", 1, 2), true},  // the held run continues
		{"e", store.AppendRequest{Events: append(storetest.Batch("e", 1), storetest.Event("e", 2, "e-e1")), // duplicate ID
			Snapshot: []byte("x"), Status: "running"}, false},
	}
	results := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		// Queue strictly in order so that the group's order is the slice's.
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = s.AppendRun(ctx, "o", c.run, c.req)
		}()
		waitQueued(t, s, i+1)
	}
	close(g.hold)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, c := range calls {
		if (results[i] == nil) != c.ok {
			t.Errorf("call %d (%s): err %v, want ok=%v", i, c.run, results[i], c.ok)
		}
	}
	commits := g.all()
	if len(commits) != 2 {
		t.Fatalf("commits = %+v, want 2 (the first alone, then one group)", commits)
	}
	if c := commits[1]; c.Requests != len(calls) || c.Appended != 5 || c.Events != 2+1+1+3+1 || c.Err != nil {
		t.Fatalf("group commit = %+v", c)
	}
	for run, want := range map[string][]int64{"a": {1, 2, 3}, "b": {1}, "d": {1, 2, 3}, "warm": {1, 2}} {
		evs, err := s.ReadEvents(ctx, "o", run, 0, 100)
		if err != nil || len(evs) != len(want) {
			t.Fatalf("run %s: %d events, %v; want %v", run, len(evs), err, want)
		}
		for i, e := range evs {
			if e.LogicalSequence != want[i] {
				t.Fatalf("run %s event %d seq %d, want %d", run, i, e.LogicalSequence, want[i])
			}
		}
	}
	for _, run := range []string{"c", "e"} {
		if _, _, err := s.GetRun(ctx, "o", run); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("refused run %s exists: %v", run, err)
		}
	}
	// One update_seq per appended caller, in group order: a after b after ... in listing.
	page, err := s.ListRuns(ctx, "o", store.ListRunsQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range page.Runs {
		ids = append(ids, r.RunID)
	}
	if got := fmt.Sprint(ids); got != "[warm d b a]" {
		t.Fatalf("ListRuns order %s, want [warm d b a] (commit order, newest first)", got)
	}
	if !page.Runs[0].UpdatedAt.Equal(page.Runs[3].UpdatedAt) {
		t.Fatalf("one group, one commit instant: %v vs %v", page.Runs[0].UpdatedAt, page.Runs[3].UpdatedAt)
	}
}

// TestGroupCommitSharesFsync: callers queued behind a busy writer are answered by one commit
// (which is what makes 8 concurrent writers cheaper than 8 serial fsyncs).
func TestGroupCommitSharesFsync(t *testing.T) {
	s, g := openGated(t)
	ctx := context.Background()
	go func() { _, _ = s.AppendRun(ctx, "o", "warm", req("warm", 0, 1)) }()
	<-g.held
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := fmt.Sprintf("r%d", i)
			_, errs[i] = s.AppendRun(ctx, "o", run, req(run, 0, 1, 2, 3))
		}()
	}
	waitQueued(t, s, n)
	close(g.hold)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if commits := g.all(); len(commits) != 2 || commits[1].Requests != n || commits[1].Appended != n || commits[1].Events != 3*n {
		t.Fatalf("commits = %+v, want the first alone then one of %d requests", commits, n)
	}
}

// TestGroupLimits: MaxGroupRequests and MaxGroupEvents split the queue into several groups.
func TestGroupLimits(t *testing.T) {
	for _, c := range []struct {
		name         string
		opts         Options
		batch, calls int
		wantGroups   []int
	}{
		{"requests", Options{MaxGroupRequests: 3}, 1, 7, []int{3, 3, 1}},
		{"events", Options{MaxGroupEvents: 10}, 4, 6, []int{3, 3}},      // 4+4 < 10, +4 → 12: stop
		{"big first", Options{MaxGroupEvents: 2}, 5, 3, []int{1, 1, 1}}, // the first is always taken
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGate()
			c.opts.OnCommit = g.onCommit
			s, err := Open(filepath.Join(t.TempDir(), DefaultFileName), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			go func() { _, _ = s.AppendRun(ctx, "o", "warm", req("warm", 0, 1)) }()
			<-g.held
			var wg sync.WaitGroup
			for i := range c.calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					run := fmt.Sprintf("r%d", i)
					if _, err := s.AppendRun(ctx, "o", run, req(run, 0, storetest.Seqs(1, c.batch)...)); err != nil {
						t.Error(err)
					}
				}()
				waitQueued(t, s, i+1)
			}
			close(g.hold)
			wg.Wait()
			commits := g.all()[1:]
			var sizes []int
			for _, cm := range commits {
				sizes = append(sizes, cm.Requests)
			}
			if fmt.Sprint(sizes) != fmt.Sprint(c.wantGroups) {
				t.Fatalf("groups %v, want %v", sizes, c.wantGroups)
			}
		})
	}
}

// TestUnexpectedErrorFailsWholeGroup: an SQLite error that is not a refusal (here SQLITE_FULL,
// which may roll back the transaction by itself) fails every caller of the group and stores
// nothing from it; the store works again once the cause is gone.
func TestUnexpectedErrorFailsWholeGroup(t *testing.T) {
	s, g := openGated(t)
	ctx := context.Background()
	go func() { _, _ = s.AppendRun(ctx, "o", "warm", req("warm", 0, 1)) }()
	<-g.held
	var pages int64
	if err := s.conn.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	// Cap the file at its current size: the next writes that need a new page fail.
	if _, err := s.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	big := req("big", 0, 1)
	big.Events[0].Data = make([]byte, 64<<10)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, r := range []struct {
		run string
		req store.AppendRequest
	}{{"small", req("small", 0, 1)}, {"big", big}, {"after", req("after", 0, 1)}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.AppendRun(ctx, "o", r.run, r.req)
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
	if c := g.all()[1]; c.Err == nil || c.Appended != 0 {
		t.Fatalf("group commit info %+v, want failure", c)
	}
	for _, run := range []string{"small", "big", "after"} {
		if _, _, err := s.GetRun(ctx, "o", run); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("run %s of a failed group exists: %v", run, err)
		}
	}
	if _, err := s.conn.ExecContext(ctx, "PRAGMA max_page_count = 4294967294"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendRun(ctx, "o", "big", big); err != nil {
		t.Fatalf("after the cause is gone: %v", err)
	}
	if _, err := s.AppendRun(ctx, "o", "warm", req("warm", 1, 2)); err != nil {
		t.Fatalf("after the cause is gone: %v", err)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	for _, n := range []int64{1, 2, 9, 10, 1 << 31, 1<<63 - 1} {
		c := encodeCursor(n)
		got, err := decodeCursor(c)
		if err != nil || got != n {
			t.Fatalf("decodeCursor(encodeCursor(%d)) = %d, %v", n, got, err)
		}
	}
}

// FuzzDecodeCursor: decodeCursor accepts exactly the strings encodeCursor makes; everything
// else is ErrInvalidCursor, and nothing panics.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{encodeCursor(1), encodeCursor(42), "", "x", "cnVucy52MS4w", "cnVucy52MS4tMQ", "cnVucy52MS4wMQ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		n, err := decodeCursor(c)
		if err != nil {
			if !errors.Is(err, store.ErrInvalidCursor) {
				t.Fatalf("decodeCursor(%q) error %v does not wrap ErrInvalidCursor", c, err)
			}
			return
		}
		if n <= 0 || encodeCursor(n) != c {
			t.Fatalf("decodeCursor(%q) = %d, which encodes as %q", c, n, encodeCursor(n))
		}
	})
}
