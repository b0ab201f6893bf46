package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

const (
	clients      = 4   // concurrent ingesting clients
	eventsPerRun = 300 // events per run (more than relay.DefaultCheckpoint, so runs get a mid-run checkpoint); each client sends runs one after the other until told to finish
	kills        = 6   // SIGKILLs (relay.md: 5+)
)

// buildBinary compiles cmd/agentwire into dir.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the agentwire binary")
	}
	bin := filepath.Join(dir, "agentwire")
	out, err := exec.Command(goCmd, "build", "-o", bin, "github.com/agentwire/agentwire/cmd/agentwire").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// child is one running `agentwire serve`.
type child struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
	done   chan error
}

var urlRE = regexp.MustCompile(`http://[0-9.:\[\]]+`)

func startChild(t *testing.T, bin, dataDir string, backend ...string) *child {
	t.Helper()
	// No minimum interval between checkpoints: runs get their mid-run checkpoints within the
	// test's seconds, so kills land on them too.
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir, "--log-format", "json", "--log-level", "warn",
		"--checkpoint-interval", "0"}
	if len(backend) > 0 {
		args = append(args, "--store", backend[0])
	}
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // a test that fails early leaves no relay behind
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		close(lines)
	}()
	go func() { c.done <- cmd.Wait() }()
	select {
	case line, ok := <-lines:
		if !ok || !urlRE.MatchString(line) {
			_ = cmd.Process.Kill()
			t.Fatalf("serve printed %q; stderr %s", line, c.stderr.String())
		}
		c.url = urlRE.FindString(line)
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("serve did not start; stderr %s", c.stderr.String())
	}
	return c
}

// runPlan is one run a client sends: its lines, the canonical stored form of each event, and
// the batch boundaries.
type runPlan struct {
	id      string
	lines   [][]byte
	stored  [][]byte // each event's encoding, as the relay stores it
	batches []int    // end index (exclusive) of each batch
}

// progress is what the client knows about one run, read by the verifier under mu.
type progress struct {
	plan    *runPlan
	acked   int // events acknowledged (a prefix of the run)
	inDoubt int // end index of the batch in flight whose answer is unknown (0: none)
}

type tracker struct {
	mu   sync.Mutex
	runs map[string]*progress
}

func (tr *tracker) set(p *runPlan, f func(pr *progress)) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	pr := tr.runs[p.id]
	if pr == nil {
		pr = &progress{plan: p}
		tr.runs[p.id] = pr
	}
	f(pr)
}

func (tr *tracker) snapshot() map[string]progress {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make(map[string]progress, len(tr.runs))
	for k, v := range tr.runs {
		out[k] = *v
	}
	return out
}

func plan(client, k int, rng *rand.Rand) (*runPlan, error) {
	id := fmt.Sprintf("crash-c%d-r%d", client, k)
	data, err := synth.Bytes(eventsPerRun, int64(client*100000+k), id)
	if err != nil {
		return nil, err
	}
	p := &runPlan{id: id, lines: bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'})}
	for _, l := range p.lines {
		ev, err := events.ParseEvent(l)
		if err != nil {
			return nil, err
		}
		p.stored = append(p.stored, ev.AppendJSON(nil))
	}
	for end := 0; end < len(p.lines); {
		// One batch in six is long enough for the relay to stream it into the store (64+
		// events, parsed while the writer inserts): a kill can cut a stream half-inserted.
		size := 1 + rng.IntN(16)
		if rng.IntN(6) == 0 {
			size = 64 + rng.IntN(100)
		}
		end = min(end+size, len(p.lines))
		p.batches = append(p.batches, end)
	}
	return p, nil
}

// TestCrashRecovery is the crash test of issue 6 / relay.md §4.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills a child relay; skipped with -short")
	}
	// The same test on both stores: SQLite, and JetStream embedded in the child (relay.md §5).
	t.Run("sqlite", func(t *testing.T) {
		testCrashRecovery(t, "sqlite", func(dataDir string) (store.Store, error) {
			return sqlite.Open(filepath.Join(dataDir, sqlite.DefaultFileName), sqlite.Options{})
		})
	})
	t.Run("jetstream", func(t *testing.T) {
		testCrashRecovery(t, "jetstream", func(dataDir string) (store.Store, error) {
			return jetstream.OpenEmbedded(dataDir, jetstream.EmbeddedOptions{})
		})
	})
}

func testCrashRecovery(t *testing.T, backend string, open func(dataDir string) (store.Store, error)) {
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	dataDir := filepath.Join(dir, "data")
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTWIRE_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (AGENTWIRE_CRASH_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	var url atomic.Pointer[string] // the live child's URL
	// pause is held shared by each client request and exclusively by the controller while it
	// restarts and verifies, so that verification sees a quiet store.
	var pause sync.RWMutex
	tr := &tracker{runs: map[string]*progress{}}
	var requests, failures atomic.Int64
	stop := make(chan struct{})
	var finish atomic.Bool // clients complete their current run, then return
	var wg sync.WaitGroup
	httpClient := &http.Client{Timeout: 20 * time.Second}
	for c := range clients {
		crng := rand.New(rand.NewPCG(seed, uint64(c)+2))
		wg.Go(func() {
			for k := 0; !finish.Load(); k++ {
				p, err := plan(c, k, crng)
				if err != nil {
					t.Error(err)
					return
				}
				start := 0
				for _, end := range p.batches {
					body := bytes.Join(p.lines[start:end], []byte{'\n'})
					for {
						select {
						case <-stop:
							return
						default:
						}
						pause.RLock()
						u := url.Load()
						tr.set(p, func(pr *progress) { pr.inDoubt = end })
						requests.Add(1)
						cl := &relay.Client{BaseURL: *u, HTTP: httpClient}
						res, err := cl.Append(context.Background(), p.id, relay.MediaNDJSON, body)
						if err == nil {
							tr.set(p, func(pr *progress) { pr.acked, pr.inDoubt = end, 0 })
						}
						pause.RUnlock()
						if err != nil {
							var e *relay.Error
							if errors.As(err, &e) && e.Status != http.StatusServiceUnavailable {
								t.Errorf("run %s batch ending %d refused: %v", p.id, end, err)
								return
							}
							failures.Add(1) // the relay died under us: resend the same batch
							time.Sleep(5 * time.Millisecond)
							continue
						}
						if res.Accepted+res.Duplicates != end-start {
							t.Errorf("run %s batch ending %d: %+v", p.id, end, res)
							return
						}
						break
					}
					start = end
				}
			}
		})
	}
	// paused says whether the controller holds pause. A failing check ends the test with it
	// held: the deferred stop then releases it, so the clients see stop instead of waiting for
	// pause forever (and startChild's cleanup kills the child).
	paused := false
	defer func() {
		close(stop)
		if paused {
			pause.Unlock()
		}
		wg.Wait()
	}()

	verifyClient := &relay.Client{HTTP: httpClient}
	var inDoubtStored, inDoubtLost int // batches cut by a kill: committed before it, or not
	verify := func(round int, childURL string) (stored int) {
		t.Helper()
		verifyClient.BaseURL = childURL
		for id, pr := range tr.snapshot() {
			p := pr.plan
			lines, err := verifyClient.ReadAllEvents(context.Background(), id)
			if err != nil {
				var e *relay.Error
				if errors.As(err, &e) && e.Status == http.StatusNotFound && pr.acked == 0 {
					continue // nothing acknowledged and the in-doubt first batch was lost
				}
				t.Fatalf("round %d: read %s: %v", round, id, err)
			}
			n := len(lines)
			// Acknowledged events are all there; beyond them only the whole in-doubt batch.
			if n != pr.acked && !(pr.inDoubt > 0 && n == pr.inDoubt) {
				t.Fatalf("round %d: run %s has %d stored events; acknowledged %d, in doubt up to %d", round, id, n, pr.acked, pr.inDoubt)
			}
			// Exactly once and in order: the stored events are the run's first n events.
			for i, l := range lines {
				if !bytes.Equal(l, p.stored[i]) {
					t.Fatalf("round %d: run %s event %d:\n got %s\nwant %s", round, id, i, l, p.stored[i])
				}
			}
			// The served snapshot (the stored checkpoint re-reduced with the events after it)
			// equals re-reducing all the stored events.
			obj, err := verifyClient.GetRun(context.Background(), id)
			if err != nil {
				t.Fatalf("round %d: get %s: %v", round, id, err)
			}
			meta, _ := obj.Get("meta")
			obj.Delete("meta")
			st := events.NewReducerState()
			for _, l := range lines {
				ev, err := events.ParseEvent(l)
				if err != nil {
					t.Fatal(err)
				}
				if st, err = events.Reduce(st, ev); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := jsonvalue.AppendEncoded(nil, obj), st.AppendJSON(nil); !bytes.Equal(got, want) {
				t.Fatalf("round %d: run %s snapshot differs from re-reducing its %d events", round, id, n)
			}
			if c, _ := meta.(*jsonvalue.Object).Get("eventCount"); c != float64(n) {
				t.Fatalf("round %d: run %s meta.eventCount %v, stored %d", round, id, c, n)
			}
			stored += n
			if pr.inDoubt > 0 && pr.inDoubt != pr.acked {
				if n == pr.inDoubt {
					inDoubtStored++
				} else {
					inDoubtLost++
				}
			}
		}
		return stored
	}

	start := time.Now()
	streamed := 0.0 // batches the children stored through the streamed path
	pause.Lock()
	paused = true
	for round := 1; round <= kills; round++ {
		c := startChild(t, bin, dataDir, backend)
		if round > 1 {
			n := verify(round, c.url)
			t.Logf("restart %d: %d events verified, %d requests so far, %d cut by kills", round-1, n, requests.Load(), failures.Load())
		}
		u := c.url
		url.Store(&u)
		paused = false
		pause.Unlock()
		time.Sleep(time.Duration(100+rng.IntN(500)) * time.Millisecond)
		streamed += scrapeCounter(t, c.url, "agentwire_run_batches_streamed_total")
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := <-c.done; err == nil {
			t.Fatal("killed relay exited cleanly")
		}
		pause.Lock() // in-flight requests to the dead child fail fast
		paused = true
	}
	// Last restart: verify, let the clients finish, verify again, then stop gracefully.
	c := startChild(t, bin, dataDir, backend)
	n := verify(kills+1, c.url)
	t.Logf("restart %d: %d events verified", kills, n)
	u := c.url
	url.Store(&u)
	paused = false
	pause.Unlock()
	finish.Store(true)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(60 * time.Second):
		t.Fatal("clients did not finish")
	}
	n = verify(kills+2, c.url)
	streamed += scrapeCounter(t, c.url, "agentwire_run_batches_streamed_total")
	runs := tr.snapshot()
	if want := len(runs) * eventsPerRun; n != want {
		t.Fatalf("final: %d events stored in %d runs, want %d", n, len(runs), want)
	}
	for id, pr := range runs {
		if pr.acked != eventsPerRun {
			t.Fatalf("run %s: %d acknowledged", id, pr.acked)
		}
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("graceful stop: %v; stderr %s", err, c.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("relay did not stop on SIGTERM")
	}
	checkCheckpoints(t, func() (store.Store, error) { return open(dataDir) })
	t.Logf("%d kills, %d events in %d runs, %d requests (%d cut by kills) in %v; in-doubt batches found wholly stored %d times, wholly absent %d times",
		kills, n, len(runs), requests.Load(), failures.Load(), time.Since(start).Round(time.Millisecond), inDoubtStored, inDoubtLost)
	if failures.Load() == 0 {
		t.Error("no request was ever cut by a kill: the kills missed the ingest")
	}
	t.Logf("%.0f batches went through the streamed path", streamed)
	// SQLite streams a batch into the open transaction part by part, so a kill must meet that
	// path. JetStream buffers a streamed batch and publishes it as one atomic batch at its end
	// (jetstream/doc.go): there is no partial write for a kill to meet, and its slower ingest
	// leaves a long batch rarely alone in flight, the streaming condition.
	if streamed == 0 && backend == "sqlite" {
		t.Error("no batch went through the streamed path: the kills never met it")
	}
}

// scrapeCounter reads one counter from the relay's /metrics (0 when it cannot be read: a
// scrape racing the kill must not fail the test).
func scrapeCounter(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

// checkCheckpoints opens the stopped relay's database and checks every run's stored checkpoint
// (store.RunStore.GetRun): it is the reducer state of the stored events up to the sequence it
// claims to cover, re-reducing the events after it gives the state of all the stored events,
// and a terminal run's checkpoint covers its last event.
func checkCheckpoints(t *testing.T, open func() (store.Store, error)) {
	t.Helper()
	st, err := open()
	if err != nil {
		t.Fatalf("open the stopped relay's store: %v", err)
	}
	defer st.Close()
	ctx := context.Background()
	var runs []store.RunInfo
	for cursor := ""; ; {
		page, err := st.ListRuns(ctx, relay.LocalOrg, store.ListRunsQuery{Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, page.Runs...)
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	mid := 0
	for _, r := range runs {
		snap, info, err := st.GetRun(ctx, relay.LocalOrg, r.RunID)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := st.ReadEvents(ctx, relay.LocalOrg, r.RunID, 0, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		full, atCheckpoint := events.NewReducerState(), events.ReducerState{}
		for _, e := range stored {
			ev, err := events.ParseEvent(e.Data)
			if err != nil {
				t.Fatal(err)
			}
			if full, err = events.Reduce(full, ev); err != nil {
				t.Fatal(err)
			}
			if e.LogicalSequence == info.SnapshotSequence {
				atCheckpoint = full
			}
		}
		if !bytes.Equal(snap, atCheckpoint.AppendJSON(nil)) {
			t.Fatalf("run %s: checkpoint at %d differs from re-reducing the events up to it", r.RunID, info.SnapshotSequence)
		}
		cp, err := events.DecodeReducerState(snap)
		if err != nil {
			t.Fatalf("run %s: checkpoint: %v", r.RunID, err)
		}
		for _, e := range stored {
			if e.LogicalSequence <= info.SnapshotSequence {
				continue
			}
			ev, _ := events.ParseEvent(e.Data)
			if cp, err = events.Reduce(cp, ev); err != nil {
				t.Fatalf("run %s: re-reducing after the checkpoint: %v", r.RunID, err)
			}
		}
		if !bytes.Equal(cp.AppendJSON(nil), full.AppendJSON(nil)) {
			t.Fatalf("run %s: checkpoint at %d plus the events after it differs from re-reducing all %d events", r.RunID, info.SnapshotSequence, len(stored))
		}
		if full.Status().IsTerminal() && info.SnapshotSequence != info.LastLogicalSequence {
			t.Fatalf("run %s: terminal, but its checkpoint covers %d of %d", r.RunID, info.SnapshotSequence, info.LastLogicalSequence)
		}
		if info.SnapshotSequence > 1 && info.SnapshotSequence < info.LastLogicalSequence {
			mid++
		}
	}
	t.Logf("checkpoints of %d runs verified (%d not at the run's end)", len(runs), mid)
}
