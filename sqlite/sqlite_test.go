package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func openIn(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.RunAll(t, func(t *testing.T, dir string) store.Store { return openIn(t, dir) })
}

// TestConformanceSmallGroups runs the suite again with groups of at most two requests and a
// single reader, so grouping boundaries and reader contention are exercised differently.
func TestConformanceSmallGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	storetest.RunAll(t, func(t *testing.T, dir string) store.Store {
		s, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{MaxGroupRequests: 2, ReadConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func appendOne(t *testing.T, s store.Store, org, run string, expected int64) store.RunInfo {
	t.Helper()
	info, err := s.AppendRun(context.Background(), org, run, store.AppendRequest{
		ExpectedLastLogicalSequence: expected, Events: storetest.Batch(run, expected+1),
		Snapshot: storetest.Snapshot(expected+1, expected+1), Status: "running",
	})
	if err != nil {
		t.Fatalf("AppendRun(%s/%s): %v", org, run, err)
	}
	return info
}

// TestNotifyBeforeReturn: in this backend the writer notifies before answering, so when
// AppendRun returns the run's subscribers already hold a wake-up, and no other run's do.
func TestNotifyBeforeReturn(t *testing.T) {
	s := openIn(t, t.TempDir())
	defer s.Close()
	ch, cancel := s.Subscribe("o", "r")
	defer cancel()
	otherRun, c2 := s.Subscribe("o", "r2")
	defer c2()
	otherOrg, c3 := s.Subscribe("p", "r")
	defer c3()
	if s.Subscribers() != 3 {
		t.Fatalf("Subscribers() = %d, want 3", s.Subscribers())
	}
	for i := range int64(3) {
		appendOne(t, s, "o", "r", i)
		select {
		case <-ch:
		default:
			t.Fatalf("append %d: no wake-up pending when AppendRun returned", i)
		}
	}
	// A refused batch commits nothing and wakes nobody.
	if _, err := s.AppendRun(context.Background(), "o", "r", store.AppendRequest{ExpectedLastLogicalSequence: 0,
		Events: storetest.Batch("r", 1), Snapshot: []byte("x"), Status: "running"}); !errors.Is(err, store.ErrConflict) {
		t.Fatal(err)
	}
	for name, c := range map[string]<-chan struct{}{"same run after refusal": ch, "other run": otherRun, "other org": otherOrg} {
		select {
		case <-c:
			t.Fatalf("%s: unexpected wake-up", name)
		default:
		}
	}
	cancel()
	if s.Subscribers() != 2 {
		t.Fatalf("Subscribers() after cancel = %d, want 2", s.Subscribers())
	}
}

// TestClockNeverGoesBack: a wall clock that jumps backwards does not make updatedAt decrease,
// so "newest first by updatedAt" and commit order agree.
func TestClockNeverGoesBack(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	ticks := []time.Duration{10 * time.Second, 5 * time.Second, 20 * time.Second, time.Second}
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		d := ticks[0]
		if len(ticks) > 1 {
			ticks = ticks[1:]
		}
		return base.Add(d)
	}
	s, err := sqlite.Open(filepath.Join(t.TempDir(), sqlite.DefaultFileName), sqlite.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []time.Time
	for i := range 4 {
		run := fmt.Sprintf("r%d", i)
		info := appendOne(t, s, "o", run, 0)
		if !info.CreatedAt.Equal(info.UpdatedAt) {
			t.Fatalf("new run: created %v updated %v", info.CreatedAt, info.UpdatedAt)
		}
		got = append(got, info.UpdatedAt)
	}
	want := []time.Time{base.Add(10 * time.Second), base.Add(10 * time.Second), base.Add(20 * time.Second), base.Add(20 * time.Second)}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Fatalf("updatedAt %d = %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	page, err := s.ListRuns(context.Background(), "o", store.ListRunsQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range page.Runs {
		ids = append(ids, r.RunID)
	}
	if fmt.Sprint(ids) != "[r3 r2 r1 r0]" {
		t.Fatalf("order %v, want commit order newest first", ids)
	}
	// The clamp survives a restart: the clock is stored with the data.
	s.Close()
	s2, err := sqlite.Open(s.Path(), sqlite.Options{Now: func() time.Time { return base }})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if info := appendOne(t, s2, "o", "r0", 1); !info.UpdatedAt.Equal(base.Add(20*time.Second)) || !info.CreatedAt.Equal(base.Add(10*time.Second)) {
		t.Fatalf("after restart with an earlier clock: %+v", info)
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	s := openIn(t, dir)
	if _, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{}); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openIn(t, dir) // released by Close
	s2.Close()
}

// rawDB opens the file with the plain driver, outside the store.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSchemaVersioning(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sqlite.DefaultFileName)
	s := openIn(t, dir)
	s.Close()
	db := rawDB(t, path)
	var version, appID int64
	var mode string
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA application_id").Scan(&appID); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if version != int64(sqlite.SchemaVersion()) || appID != sqlite.ApplicationID || mode != "wal" {
		t.Fatalf("user_version %d application_id %#x journal_mode %s; want %d %#x wal", version, appID, mode, sqlite.SchemaVersion(), sqlite.ApplicationID)
	}
	// The schema is pinned: changing it needs a new migration and a new golden file.
	rows, err := db.Query("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for rows.Next() {
		var typ, name, tbl, q string
		if err := rows.Scan(&typ, &name, &tbl, &q); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "-- %s %s on %s\n%s;\n\n", typ, name, tbl, q)
	}
	rows.Close()
	golden := filepath.Join("testdata", "schema.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if sb.String() != string(want) {
		t.Fatalf("schema differs from %s (run with -update after adding a migration):\n%s", golden, sb.String())
	}
	db.Close()

	for _, c := range []struct {
		name  string
		setup []string
		want  error
	}{
		{"newer schema", []string{"PRAGMA application_id = 1096239442", "PRAGMA user_version = 99"}, sqlite.ErrSchemaTooNew},
		{"other application", []string{"PRAGMA application_id = 7"}, sqlite.ErrNotAgentwire},
		{"unstamped tables", []string{"CREATE TABLE t (x)"}, sqlite.ErrNotAgentwire},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			db := rawDB(t, path)
			for _, q := range c.setup {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			if _, err := sqlite.Open(path, sqlite.Options{}); !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want %v", err, c.want)
			}
		})
	}
	t.Run("not a database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "x.db")
		if err := os.WriteFile(path, []byte(strings.Repeat("not sqlite ", 500)), 0o644); err != nil {
			t.Fatal(err)
		}
		if s, err := sqlite.Open(path, sqlite.Options{}); err == nil {
			s.Close()
			t.Fatal("Open accepted a file that is not a database")
		}
	})
	t.Run("path needing escapes", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a dir?with#odd%chars")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s := openIn(t, dir)
		appendOne(t, s, "o", "r", 0)
		s.Close()
		if _, err := os.Stat(filepath.Join(dir, sqlite.DefaultFileName)); err != nil {
			t.Fatalf("database not at the literal path: %v", err)
		}
	})
}

// TestCloseReleasesTheFile: after Close no connection is left open, so SQLite has copied the
// WAL into the database file and removed the -wal and -shm files. (Three of the writer's
// prepared statements used to stay open: the connection then outlived Close and left both.)
func TestCloseReleasesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), sqlite.DefaultFileName)
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendRun(context.Background(), "o", "r", store.AppendRequest{Events: storetest.Batch("r", 1, 2),
		Snapshot: storetest.Snapshot(2, 2), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Close: %v", suffix, err)
		}
	}
}

// TestCloseDrainsQueue: Close while writers are busy answers every queued call with its real
// outcome; afterwards calls get ErrClosed. What was acknowledged is exactly what is stored.
func TestCloseDrainsQueue(t *testing.T) {
	dir := t.TempDir()
	s := openIn(t, dir)
	const writers = 8
	acked := make([]int64, writers)
	var wg sync.WaitGroup
	started := make(chan struct{}, writers)
	for w := range writers {
		wg.Go(func() {
			run := fmt.Sprintf("r%d", w)
			for {
				_, err := s.AppendRun(context.Background(), "o", run, store.AppendRequest{
					ExpectedLastLogicalSequence: acked[w], Events: storetest.Batch(run, acked[w]+1),
					Snapshot: storetest.Snapshot(acked[w]+1, acked[w]+1), Status: "running",
				})
				if errors.Is(err, store.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("%s: %v", run, err)
					return
				}
				acked[w]++
				if acked[w] == 3 {
					started <- struct{}{}
				}
			}
		})
	}
	for range writers {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s2 := openIn(t, dir)
	defer s2.Close()
	for w := range writers {
		run := fmt.Sprintf("r%d", w)
		_, info, err := s2.GetRun(context.Background(), "o", run)
		if err != nil || info.LastLogicalSequence != acked[w] || info.EventCount != acked[w] {
			t.Fatalf("%s: stored %+v, %v; acknowledged %d", run, info, err, acked[w])
		}
	}
}

const (
	crashDirEnv  = "AGENTWIRE_SQLITE_CRASH_DIR"
	crashSeedEnv = "AGENTWIRE_SQLITE_CRASH_SEED"
	crashRuns    = 4
)

// crashEvent carries its batch's last sequence, so a half-applied batch is detectable.
func crashEvent(run string, seq, batchLast int64) store.Event {
	e := storetest.Event(run, seq, fmt.Sprintf("%s-e%d", run, seq))
	e.Data = fmt.Appendf(nil, `{"seq":%d,"batchLast":%d}`, seq, batchLast)
	return e
}

// TestCrashChild is the writer process of TestCrashRecovery; it does nothing unless started by
// it. It appends forever from several goroutines (distinct runs and one shared run with
// conflict retries) and prints "ack RUN LAST" after each acknowledged append.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("only runs as TestCrashRecovery's child")
	}
	seed, _ := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	s, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	var outMu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	writer := func(g int, run string) {
		rng := rand.New(rand.NewPCG(seed, uint64(g)))
		ctx := context.Background()
		for {
			_, info, err := s.GetRun(ctx, "o", run)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				fmt.Println("get:", err)
				os.Exit(3)
			}
			n := 1 + rng.IntN(20)
			last := info.LastLogicalSequence
			batch := make([]store.Event, n)
			for i := range batch {
				batch[i] = crashEvent(run, last+1+int64(i), last+int64(n))
			}
			_, err = s.AppendRun(ctx, "o", run, store.AppendRequest{
				ExpectedLastLogicalSequence: last, Events: batch,
				Snapshot: storetest.Snapshot(last+int64(n), info.EventCount+int64(n)), Status: "running",
			})
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			if err != nil {
				fmt.Println("append:", err)
				os.Exit(3)
			}
			outMu.Lock()
			fmt.Fprintf(out, "ack %s %d\n", run, last+int64(n))
			out.Flush() // the parent must see every ack the moment it is given
			outMu.Unlock()
		}
	}
	for g := range crashRuns {
		go writer(g, fmt.Sprintf("run-%d", g))
	}
	for g := range 3 {
		go writer(crashRuns+g, "shared")
	}
	// The bus lane: senders on an org channel and a swarm, each resending some of its own
	// messages (a resend must answer the original), printing "msg STREAM SEQ GID".
	sender := func(g int) {
		ctx := context.Background()
		k := crashStreams[g%len(crashStreams)]
		prev := ""
		for n := 0; ; n++ {
			id := fmt.Sprintf("r%d-g%d-%d", seed, g, n)
			if n%7 == 6 {
				id = prev
			}
			org := k.Org
			if org == "" {
				org = fmt.Sprintf("org-%d", g)
			}
			m, _, err := s.AppendMessage(ctx, storetest.Message(k, org, fmt.Sprintf("inst-%d", g), id))
			if err != nil {
				fmt.Println("message:", err)
				os.Exit(3)
			}
			prev = id
			outMu.Lock()
			fmt.Fprintf(out, "msg %d %d %s\n", g%len(crashStreams), m.Seq, m.GID)
			out.Flush()
			outMu.Unlock()
		}
	}
	for g := range crashSenders {
		go sender(g)
	}
	// The notification lane: publishers whose every fifth envelope repeats a message id (a
	// duplicate must answer the original's seq), printing "env SEQ MESSAGEID".
	publisher := func(g int) {
		ctx := context.Background()
		prev := ""
		for n := 0; ; n++ {
			id := fmt.Sprintf("r%d-p%d-%d", seed, g, n)
			if n%5 == 4 {
				id = prev
			}
			e, _, err := s.AppendEnvelope(ctx, "o", storetest.Envelope("notifications.agent.s", id, time.Now(), id), storetest.Window)
			if err != nil {
				fmt.Println("envelope:", err)
				os.Exit(3)
			}
			prev = id
			outMu.Lock()
			fmt.Fprintf(out, "env %d %s\n", e.Seq, id)
			out.Flush()
			outMu.Unlock()
		}
	}
	for g := range crashPublishers {
		go publisher(g)
	}
	// Bus publishes on the org stream, interleaved with the senders' messages on its one seq
	// counter: every sixth repeats the previous client_msg_id (a resend must answer the
	// original's seq), printing "pub SEQ CLIENTMSGID".
	framer := func(g int) {
		ctx := context.Background()
		prev := ""
		for n := 0; ; n++ {
			id := fmt.Sprintf("r%d-f%d-%d", seed, g, n)
			if n%6 == 5 {
				id = prev
			}
			p, _, err := s.AppendPublish(ctx, storetest.Publish(crashStreams[0], fmt.Sprintf("inst-f%d", g), id))
			if err != nil {
				fmt.Println("publish:", err)
				os.Exit(3)
			}
			prev = id
			outMu.Lock()
			fmt.Fprintf(out, "pub %d %s\n", p.Seq, id)
			out.Flush()
			outMu.Unlock()
		}
	}
	for g := range crashFramers {
		go framer(g)
	}
	select {} // killed by the parent
}

// The crash child's bus streams and lane writers.
var crashStreams = []store.StreamKey{store.OrgStream("o", storetest.ChannelGeneral), store.SwarmStream("sw-1")}

// crashFramers publish bus frames (AppendPublish) on crashStreams[0].
const crashSenders, crashPublishers, crashFramers = 4, 2, 2

// TestCrashRecovery kills a writing child process with SIGKILL at random moments, five times,
// and after each kill checks on the same file: every acknowledged event is present exactly
// once, no batch is half-applied, and each run's snapshot matches its stored events; on the bus
// streams, messages and publishes share one gap-free seq and every acknowledged one is stored
// once at its acknowledged seq (checkCrashLanes); the notification sequence likewise.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("AGENTWIRE_CRASH_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (AGENTWIRE_CRASH_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	acked := map[string]int64{}
	ackedMsgs := make([]map[string]int64, len(crashStreams)) // per stream: gid → seq
	for i := range ackedMsgs {
		ackedMsgs[i] = map[string]int64{}
	}
	ackedEnvs := map[string]int64{} // message id → seq
	ackedPubs := map[string]int64{} // publish client_msg_id → seq (on crashStreams[0])
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		// The child's seed names its ids: distinct per round.
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, fmt.Sprintf("%s=%d", crashSeedEnv, seed+uint64(round)))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		record := func(line string) {
			var run, gid, id string
			var last, seq int64
			var stream int
			switch {
			case strings.HasPrefix(line, "msg "):
				if _, err := fmt.Sscanf(line, "msg %d %d %s", &stream, &seq, &gid); err != nil {
					t.Errorf("child said %q", line)
					return
				}
				if prev, ok := ackedMsgs[stream][gid]; ok && prev != seq {
					t.Errorf("gid %s acknowledged at seq %d and %d", gid, prev, seq)
				}
				ackedMsgs[stream][gid] = seq
			case strings.HasPrefix(line, "env "):
				if _, err := fmt.Sscanf(line, "env %d %s", &seq, &id); err != nil {
					t.Errorf("child said %q", line)
					return
				}
				if prev, ok := ackedEnvs[id]; ok && prev != seq {
					t.Errorf("envelope %s acknowledged at seq %d and %d", id, prev, seq)
				}
				ackedEnvs[id] = seq
			case strings.HasPrefix(line, "pub "):
				if _, err := fmt.Sscanf(line, "pub %d %s", &seq, &id); err != nil {
					t.Errorf("child said %q", line)
					return
				}
				if prev, ok := ackedPubs[id]; ok && prev != seq {
					t.Errorf("publish %s acknowledged at seq %d and %d", id, prev, seq)
				}
				ackedPubs[id] = seq
			default:
				if _, err := fmt.Sscanf(line, "ack %s %d", &run, &last); err != nil {
					t.Errorf("child said %q", line)
					return
				}
				if last > acked[run] {
					acked[run] = last
				}
			}
		}
		// Let it get going, then kill it at a random moment.
		first, ok := <-lines
		if !ok {
			t.Fatalf("round %d: child ended before its first ack", round)
		}
		record(first)
		killAt := time.After(time.Duration(10+rng.IntN(150)) * time.Millisecond)
	read:
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("round %d: child ended on its own", round)
				}
				record(line)
			case <-killAt:
				break read
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for line := range lines { // acks written before the kill still count
			record(line)
		}
		_ = cmd.Wait()

		s := openIn(t, dir)
		ctx := context.Background()
		runs := []string{"shared"}
		for g := range crashRuns {
			runs = append(runs, fmt.Sprintf("run-%d", g))
		}
		total := 0
		for _, run := range runs {
			snap, info, err := s.GetRun(ctx, "o", run)
			if errors.Is(err, store.ErrNotFound) && acked[run] == 0 {
				continue
			}
			if err != nil {
				t.Fatalf("round %d: GetRun(%s): %v", round, run, err)
			}
			evs, err := s.ReadEvents(ctx, "o", run, 0, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			total += len(evs)
			if info.LastLogicalSequence < acked[run] {
				t.Fatalf("round %d: %s stored up to %d, but %d was acknowledged", round, run, info.LastLogicalSequence, acked[run])
			}
			if int64(len(evs)) != info.EventCount || string(snap) != string(storetest.Snapshot(info.LastLogicalSequence, info.EventCount)) {
				t.Fatalf("round %d: %s: %d events, meta %+v, snapshot %s", round, run, len(evs), info, snap)
			}
			for i, e := range evs {
				var seq, batchLast int64
				if _, err := fmt.Sscanf(string(e.Data), `{"seq":%d,"batchLast":%d}`, &seq, &batchLast); err != nil {
					t.Fatal(err)
				}
				if e.LogicalSequence != int64(i+1) || seq != e.LogicalSequence || batchLast < seq || batchLast > info.LastLogicalSequence {
					t.Fatalf("round %d: %s event %d: seq %d data %s (last %d): gap, repeat or half-applied batch", round, run, i, e.LogicalSequence, e.Data, info.LastLogicalSequence)
				}
			}
		}
		messages, publishes, envelopes := checkCrashLanes(t, s, round, ackedMsgs, ackedPubs, ackedEnvs)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d events, %d messages, %d publishes, %d envelopes stored; acknowledged %v, %d gids, %d publishes, %d envelope ids",
			round, total, messages, publishes, envelopes, acked, len(ackedMsgs[0])+len(ackedMsgs[1]), len(ackedPubs), len(ackedEnvs))
	}
}

// checkCrashLanes checks the bus and notification lanes after a kill: each stream's entries
// (ReadStream: messages and publishes on one counter) have seqs 1..n without a gap or repeat and
// n is the stream's last seq, every acknowledged gid and publish is stored once at its
// acknowledged seq, a client_msg_id is stored at most once per sender and kind, and ReadMessages
// gives exactly the stream's messages; the envelope sequence is 1..n without a gap, every
// acknowledged envelope is stored at its acknowledged seq, and a message id is stored once.
func checkCrashLanes(t *testing.T, s store.Store, round int, ackedMsgs []map[string]int64, ackedPubs, ackedEnvs map[string]int64) (messages, publishes, envelopes int) {
	t.Helper()
	ctx := context.Background()
	for i, k := range crashStreams {
		es, err := s.ReadStream(ctx, k, store.ReadQuery{Limit: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		gids, pubs, clients := map[string]int64{}, map[string]int64{}, map[string]bool{}
		var ms []*store.StoredMessage
		for j, e := range es {
			var key string
			switch {
			case e.Message != nil && e.Message.Seq == e.Seq:
				m := e.Message
				key = "msg/" + m.SenderOrg + "/" + m.SenderInstance + "/" + m.ClientMsgID
				gids[m.GID] = m.Seq
				ms = append(ms, m)
			case e.Publish != nil && e.Publish.Seq == e.Seq:
				p := e.Publish
				key = "pub/" + p.SenderOrg + "/" + p.SenderInstance + "/" + p.ClientMsgID
				pubs[p.ClientMsgID] = p.Seq
			default:
				t.Fatalf("round %d: stream %d entry %d: %+v", round, i, j, e)
			}
			if e.Seq != int64(j+1) {
				t.Fatalf("round %d: stream %d entry %d has seq %d: gap or repeat", round, i, j, e.Seq)
			}
			if clients[key] {
				t.Fatalf("round %d: stream %d stores %s twice", round, i, key)
			}
			clients[key] = true
		}
		messages += len(ms)
		publishes += len(pubs)
		for gid, seq := range ackedMsgs[i] {
			if gids[gid] != seq {
				t.Fatalf("round %d: stream %d: acknowledged gid %s at seq %d, stored at %d", round, i, gid, seq, gids[gid])
			}
		}
		if i == 0 {
			for id, seq := range ackedPubs {
				if pubs[id] != seq {
					t.Fatalf("round %d: stream %d: acknowledged publish %s at seq %d, stored at %d", round, i, id, seq, pubs[id])
				}
			}
		}
		if last, err := s.StreamLastSeq(ctx, k); err != nil || last != int64(len(es)) {
			t.Fatalf("round %d: stream %d last seq %d (%v), %d entries", round, i, last, err, len(es))
		}
		hist, err := s.ReadMessages(ctx, k, store.ReadQuery{Limit: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != len(ms) {
			t.Fatalf("round %d: stream %d: ReadMessages gives %d messages, ReadStream %d", round, i, len(hist), len(ms))
		}
		for j, m := range hist {
			if m.GID != ms[j].GID || m.Seq != ms[j].Seq {
				t.Fatalf("round %d: stream %d message %d: ReadMessages %s/%d, ReadStream %s/%d", round, i, j, m.GID, m.Seq, ms[j].GID, ms[j].Seq)
			}
		}
	}
	stored := map[string]int64{}
	for after := int64(0); ; {
		p, err := s.ReadEnvelopes(ctx, "o", store.EnvelopeQuery{After: after, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Envelopes {
			envelopes++
			if e.Seq != int64(envelopes) {
				t.Fatalf("round %d: envelope %d has seq %d: gap or repeat", round, envelopes, e.Seq)
			}
			if _, dup := stored[e.MessageID]; dup {
				t.Fatalf("round %d: message id %s stored twice", round, e.MessageID)
			}
			stored[e.MessageID] = e.Seq
		}
		if !p.More {
			break
		}
		after = p.Next
	}
	for id, seq := range ackedEnvs {
		if stored[id] != seq {
			t.Fatalf("round %d: acknowledged envelope %s at seq %d, stored at %d", round, id, seq, stored[id])
		}
	}
	return messages, publishes, envelopes
}
