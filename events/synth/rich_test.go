package synth_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jsonvalue"
)

// richSummary is what checkRich saw in a rich run.
type richSummary struct {
	types     map[events.EventType]int
	parts     map[string]int
	phases    int
	status    events.RunStatus
	toolError bool // a tool.failed with a code
	isError   bool // a tool.completed with isError true
	kinds     map[string]bool
}

// checkRich parses and reduces a rich run and checks the producer rules: eventId
// `<runId>:<logicalSequence>`, logicalSequence 1…n, sequence restarting at 1 in each new phase
// and increasing within it, increasing timestamps from the epoch.
func checkRich(t *testing.T, data []byte, n int, runID string) richSummary {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != n || !bytes.HasSuffix(data, []byte("\n")) {
		t.Fatalf("%d lines, want %d, each ending with LF", len(lines), n)
	}
	sum := richSummary{types: map[events.EventType]int{}, parts: map[string]int{}, kinds: map[string]bool{}}
	s := events.NewReducerState()
	var phase string
	var pseq int64
	var last time.Time
	for i, line := range lines {
		e, err := events.ParseEvent(line)
		if err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, line)
		}
		if s, err = events.Reduce(s, e); err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, line)
		}
		sum.types[e.Type()]++
		logical := int64(i + 1)
		if e.EventID() != runID+":"+strconv.FormatInt(logical, 10) || e.LogicalSequence() != logical || e.RunID() != runID {
			t.Fatalf("line %d: eventId %s logical %d", i+1, e.EventID(), e.LogicalSequence())
		}
		if e.PhaseID() != phase {
			phase, pseq = e.PhaseID(), 0
			sum.phases++
			if e.Type() != events.EventRunStarted {
				t.Fatalf("line %d: phase %d begins with %s", i+1, sum.phases, e.Type())
			}
		}
		pseq++
		if e.Sequence() != pseq {
			t.Fatalf("line %d: sequence %d, want %d in phase %d", i+1, e.Sequence(), pseq, sum.phases)
		}
		ts, err := time.Parse("2006-01-02T15:04:05.000Z", e.Timestamp())
		if err != nil || i == 0 && !ts.Equal(synth.Epoch) || i > 0 && !ts.After(last) {
			t.Fatalf("line %d: timestamp %q after %s (%v)", i+1, e.Timestamp(), last, err)
		}
		last = ts
		switch p := e.Payload().(type) {
		case events.ToolFailed:
			sum.toolError = sum.toolError || p.Error.Code != nil
		case events.ToolCompleted:
			sum.isError = sum.isError || p.Result.IsError != nil && *p.Result.IsError
		case events.InterruptRequired:
			sum.kinds[p.Interrupt.Kind] = true
		default:
			if _, ptr := p.(*events.ToolFailed); ptr {
				t.Fatal("payloads are values (events.Payload)")
			}
		}
		v, _ := jsonvalue.Parse(line, "event")
		countParts(v, sum.parts)
	}
	sum.status = s.Status()
	return sum
}

// countParts counts every content part (an object with a string "type" inside "part" or a
// "content" array) by its type.
func countParts(v any, into map[string]int) {
	switch x := v.(type) {
	case *jsonvalue.Object:
		for _, name := range []string{"part"} {
			if p, ok := x.Get(name); ok {
				if o, ok := p.(*jsonvalue.Object); ok {
					if typ, ok := o.Get("type"); ok {
						into[typ.(string)]++
					}
				}
			}
		}
		if c, ok := x.Get("content"); ok {
			if arr, ok := c.([]any); ok {
				for _, p := range arr {
					if o, ok := p.(*jsonvalue.Object); ok {
						if typ, ok := o.Get("type"); ok {
							into[typ.(string)]++
						}
					}
				}
			}
		}
	}
}

var allTypes = []events.EventType{
	events.EventRunStarted, events.EventMessageStarted, events.EventMessagePartDelta,
	events.EventMessageCompleted, events.EventToolCalled, events.EventToolProgress,
	events.EventToolCompleted, events.EventToolFailed, events.EventInterruptRequired,
	events.EventInterruptResolved, events.EventUsageUpdated,
}

var allParts = []string{"text", "reasoning", "image", "audio", "video", "file", "citation", "tool-call", "tool-result", "custom"}

func TestRichRuns(t *testing.T) {
	wantStatus := map[synth.Ending]events.RunStatus{
		synth.EndingCompleted: events.StatusCompleted, synth.EndingFailed: events.StatusFailed,
		synth.EndingCancelled: events.StatusCancelled,
	}
	terminal := map[synth.Ending]events.EventType{
		synth.EndingCompleted: events.EventRunCompleted, synth.EndingFailed: events.EventRunFailed,
		synth.EndingCancelled: events.EventRunCancelled,
	}
	min := synth.MinEventsFor(synth.ProfileRich)
	for _, n := range []int{min, min + 1, min + 2, 60, 250, 3000} {
		for _, seed := range []int64{-4, 0, 1, 2, 7, 1 << 40} {
			for _, ending := range []synth.Ending{synth.EndingBySeed, synth.EndingCompleted, synth.EndingFailed, synth.EndingCancelled} {
				t.Run(fmt.Sprintf("n%d-seed%d-%s", n, seed, ending), func(t *testing.T) {
					data, err := synth.BytesWith(n, seed, synth.Options{Profile: synth.ProfileRich, Ending: ending})
					if err != nil {
						t.Fatal(err)
					}
					sum := checkRich(t, data, n, synth.DefaultRunID(seed))
					want := ending
					if want == synth.EndingBySeed {
						want = []synth.Ending{synth.EndingCompleted, synth.EndingFailed, synth.EndingCancelled}[(seed%3+3)%3]
					}
					if sum.status != wantStatus[want] || sum.types[terminal[want]] != 1 {
						t.Fatalf("ending %s: status %s, types %v", want, sum.status, sum.types)
					}
					for _, typ := range allTypes {
						if sum.types[typ] == 0 {
							t.Errorf("no %s: %v", typ, sum.types)
						}
					}
					for _, p := range allParts {
						if sum.parts[p] == 0 {
							t.Errorf("no %s part: %v", p, sum.parts)
						}
					}
					if sum.phases != 3 || !sum.toolError || !sum.isError || !sum.kinds["tool-approval"] || !sum.kinds["custom"] {
						t.Errorf("phases %d, tool error %v, isError result %v, interrupt kinds %v", sum.phases, sum.toolError, sum.isError, sum.kinds)
					}
				})
			}
		}
	}
}

// TestRichCoversAllEndings: across seeds 0, 1, 2 (ending by seed) the three terminal events
// occur, so `events synth --profile rich` reaches each ending without --ending.
func TestRichCoversAllEndings(t *testing.T) {
	seen := map[string]bool{}
	for seed := int64(0); seed < 3; seed++ {
		data, err := synth.BytesWith(100, seed, synth.Options{Profile: synth.ProfileRich})
		if err != nil {
			t.Fatal(err)
		}
		last := data[bytes.LastIndexByte(data[:len(data)-1], '\n')+1:]
		e, err := events.ParseEvent(bytes.TrimSuffix(last, []byte("\n")))
		if err != nil {
			t.Fatal(err)
		}
		seen[string(e.Type())] = true
	}
	if len(seen) != 3 {
		t.Fatalf("endings of seeds 0-2: %v", seen)
	}
}

func TestRichDeterministicAndDistinct(t *testing.T) {
	o := synth.Options{Profile: synth.ProfileRich, Ending: synth.EndingCompleted, RunID: "r"}
	a, _ := synth.BytesWith(500, 3, o)
	var b bytes.Buffer
	if err := synth.GenerateWith(&b, 500, 3, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b.Bytes()) {
		t.Fatal("two calls differ")
	}
	c, _ := synth.BytesWith(500, 4, o)
	if bytes.Equal(a, c) {
		t.Fatal("seeds 3 and 4 give the same run")
	}
}

// TestDefaultProfileUnchanged: the default profile through GenerateWith is Generate's bytes.
func TestDefaultProfileUnchanged(t *testing.T) {
	for _, p := range []synth.Profile{"", synth.ProfileDefault} {
		for _, n := range []int{2, 60, 1000} {
			a, _ := synth.Bytes(n, 5, "x")
			b, err := synth.BytesWith(n, 5, synth.Options{Profile: p, RunID: "x", Ending: synth.EndingFailed})
			if err != nil || !bytes.Equal(a, b) {
				t.Fatalf("profile %q n=%d: differs from Generate (%v)", p, n, err)
			}
		}
	}
}

func TestRichErrors(t *testing.T) {
	min := synth.MinEventsFor(synth.ProfileRich)
	for _, tc := range []struct {
		n    int
		o    synth.Options
		want string
	}{
		{min - 1, synth.Options{Profile: synth.ProfileRich}, "synth: a rich run needs at least 42 events, got 41"},
		{100, synth.Options{Profile: "fancy"}, `synth: unknown profile "fancy" (want default or rich)`},
		{100, synth.Options{Profile: synth.ProfileRich, Ending: "paused"}, `synth: unknown ending "paused" (want completed, failed or cancelled)`},
		{1, synth.Options{}, "synth: a run needs at least 2 events, got 1"},
	} {
		var b bytes.Buffer
		err := synth.GenerateWith(&b, tc.n, 1, tc.o)
		if err == nil || err.Error() != tc.want || b.Len() != 0 {
			t.Errorf("n=%d %+v: err %v (want %q), %d bytes written", tc.n, tc.o, err, tc.want, b.Len())
		}
	}
}

// TestRichGolden pins the bytes of one rich run per ending.
func TestRichGolden(t *testing.T) {
	for _, ending := range []synth.Ending{synth.EndingCompleted, synth.EndingFailed, synth.EndingCancelled} {
		got, err := synth.BytesWith(80, 1, synth.Options{Profile: synth.ProfileRich, Ending: ending})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join("testdata", "rich-n80-seed1-"+string(ending)+".ndjson")
		if *update {
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
		if !strings.HasSuffix(string(got), "\n") {
			t.Fatal("no final LF")
		}
	}
}
