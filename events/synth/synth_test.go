package synth_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
)

var update = flag.Bool("update", false, "rewrite testdata/*.ndjson")

// check parses and reduces a generated run and verifies the producer rules of cli.md
// `events synth` and events.md §11. It returns the types seen.
func check(t *testing.T, data []byte, n int, runID string) map[events.EventType]int {
	t.Helper()
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Fatal("output must end with LF")
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	types := map[events.EventType]int{}
	s := events.NewReducerState()
	var phase string
	var last time.Time
	for i, line := range lines {
		e, err := events.ParseEvent(line)
		if err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, line)
		}
		if s, err = events.Reduce(s, e); err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, line)
		}
		types[e.Type()]++
		seq := int64(i + 1)
		if e.EventID() != runID+":"+strconv.FormatInt(seq, 10) || e.LogicalSequence() != seq || e.Sequence() != seq || e.RunID() != runID {
			t.Fatalf("line %d: eventId %s logical %d sequence %d", i+1, e.EventID(), e.LogicalSequence(), e.Sequence())
		}
		if i == 0 {
			phase = e.PhaseID()
			if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(phase) {
				t.Fatalf("phaseId %q is not a v4 UUID", phase)
			}
		} else if e.PhaseID() != phase {
			t.Fatalf("line %d: second phase %s", i+1, e.PhaseID())
		}
		ts, err := time.Parse("2006-01-02T15:04:05.000Z", e.Timestamp())
		if err != nil {
			t.Fatalf("line %d: timestamp %q: %v", i+1, e.Timestamp(), err)
		}
		if i == 0 && !ts.Equal(synth.Epoch) || i > 0 && !ts.After(last) {
			t.Fatalf("line %d: timestamp %s after %s", i+1, ts, last)
		}
		last = ts
	}
	if first, _ := events.ParseEvent(lines[0]); first.Type() != events.EventRunStarted {
		t.Fatal("first event must be run.started")
	}
	if s.Status() != events.StatusCompleted {
		t.Fatalf("final status %s", s.Status())
	}
	return types
}

func TestGenerateValidRuns(t *testing.T) {
	for _, n := range []int{2, 3, 4, 5, 6, 7, 9, 12, 13, 14, 17, 25, 50, 101, 777} {
		for _, seed := range []int64{-3, 0, 1, 2, 5, 42, 1 << 40} {
			t.Run(fmt.Sprintf("n%d-seed%d", n, seed), func(t *testing.T) {
				data, err := synth.Bytes(n, seed, "")
				if err != nil {
					t.Fatal(err)
				}
				check(t, data, n, synth.DefaultRunID(seed))
			})
		}
	}
}

func TestGenerateMinimal(t *testing.T) {
	data, err := synth.Bytes(2, 1, "r")
	if err != nil {
		t.Fatal(err)
	}
	types := check(t, data, 2, "r")
	if types[events.EventRunStarted] != 1 || types[events.EventRunCompleted] != 1 {
		t.Fatalf("n=2 types %v", types)
	}
}

// TestGenerateMix checks that a long run has the mix of the issue: messages with text and
// reasoning deltas, completed messages of every role, tool calls with progress, results and
// errors, an interrupt and its resolution, usage updates.
func TestGenerateMix(t *testing.T) {
	data, err := synth.Bytes(3000, 7, "mix")
	if err != nil {
		t.Fatal(err)
	}
	types := check(t, data, 3000, "mix")
	for _, typ := range []events.EventType{
		events.EventRunStarted, events.EventMessageStarted, events.EventMessagePartDelta,
		events.EventMessageCompleted, events.EventToolCalled, events.EventToolProgress,
		events.EventToolCompleted, events.EventToolFailed, events.EventInterruptRequired,
		events.EventInterruptResolved, events.EventUsageUpdated, events.EventRunCompleted,
	} {
		if types[typ] == 0 {
			t.Errorf("no %s event in a 3000-event run: %v", typ, types)
		}
	}
	if types[events.EventMessagePartDelta] < 3000/2 {
		t.Errorf("deltas should dominate a long run: %v", types)
	}
	for _, part := range []string{`"type":"reasoning"`, `"type":"tool-call"`, `"type":"tool-result"`, `"role":"user"`, `"role":"tool"`} {
		if !bytes.Contains(data, []byte(part)) {
			t.Errorf("no %s in a 3000-event run", part)
		}
	}
	// The interrupt shows up as soon as a run is long enough to hold one tool call.
	for seed := int64(0); seed < 20; seed++ {
		data, _ := synth.Bytes(20, seed, "")
		if !bytes.Contains(data, []byte(`"interrupt.required"`)) || !bytes.Contains(data, []byte(`"interrupt.resolved"`)) {
			t.Errorf("seed %d: a 20-event run has no interrupt", seed)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	for _, n := range []int{2, 10, 500} {
		a, _ := synth.Bytes(n, 11, "")
		var b bytes.Buffer
		if err := synth.Generate(&b, n, 11, ""); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b.Bytes()) {
			t.Fatalf("n=%d: two calls differ", n)
		}
		c, _ := synth.Bytes(n, 12, "run-11")
		if n > 2 && bytes.Equal(a, c) {
			t.Fatalf("n=%d: seeds 11 and 12 give the same run", n)
		}
	}
}

// TestGenerateGolden pins the output bytes, so that a change of the generator is deliberate.
func TestGenerateGolden(t *testing.T) {
	for _, tc := range []struct {
		n    int
		seed int64
	}{{2, 1}, {60, 1}} {
		got, err := synth.Bytes(tc.n, tc.seed, "")
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join("testdata", fmt.Sprintf("n%d-seed%d.ndjson", tc.n, tc.seed))
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("output differs from %s", file)
		}
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write(p []byte) (int, error) { return 0, w.err }

func TestGenerateErrors(t *testing.T) {
	for _, n := range []int{-1, 0, 1} {
		var b bytes.Buffer
		if err := synth.Generate(&b, n, 1, ""); err == nil || b.Len() != 0 {
			t.Errorf("n=%d: err %v, %d bytes written", n, err, b.Len())
		}
	}
	boom := errors.New("boom")
	if err := synth.Generate(failingWriter{boom}, 100000, 1, ""); !errors.Is(err, boom) {
		t.Errorf("write error: %v", err)
	}
	if err := synth.Generate(failingWriter{boom}, 2, 1, ""); !errors.Is(err, boom) {
		t.Errorf("write error on flush: %v", err)
	}
}

func BenchmarkGenerate100k(b *testing.B) {
	b.ReportAllocs()
	var size int
	for b.Loop() {
		data, err := synth.Bytes(100_000, 1, "")
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.SetBytes(int64(size))
}
