package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/relay"
)

func synthRun(t *testing.T, n int, seed int64, runID string) string {
	t.Helper()
	data, err := synth.Bytes(n, seed, runID)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestEventsSendAndTail(t *testing.T) {
	url, _, _ := startServe(t, serveOpts(filepath.Join(t.TempDir(), "data")))
	run := synthRun(t, 57, 3, "run-3")

	code, out, errs := runCLI(t, run, "events", "send", "-", "--url", url, "--batch", "10")
	if code != 0 || errs != "" || out != "run run-3: accepted 57, duplicates 0, lastLogicalSequence 57, status completed\n" {
		t.Fatalf("send: exit %d out %q err %q", code, out, errs)
	}
	// A re-send is all duplicates.
	code, out, _ = runCLI(t, run, "events", "send", "--url", url)
	if code != 0 || out != "run run-3: accepted 0, duplicates 57, lastLogicalSequence 57, status completed\n" {
		t.Fatalf("re-send: exit %d out %q", code, out)
	}

	// tail --snapshot prints exactly what `events reduce` prints for the same events.
	_, reduced, _ := runCLI(t, run, "events", "reduce")
	code, out, errs = runCLI(t, "", "events", "tail", "run-3", "--url", url, "--snapshot")
	if code != 0 || errs != "" || out != reduced {
		t.Fatalf("tail --snapshot: exit %d err %q\n got %s\nwant %s", code, errs, out, reduced)
	}

	// The live view, against a golden file.
	code, out, errs = runCLI(t, "", "events", "tail", "run-3", "--url", url)
	if code != 0 || errs != "" {
		t.Fatalf("tail: exit %d err %q", code, errs)
	}
	golden := filepath.Join("testdata", "tail-synth-57-seed-3.golden")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Fatalf("tail view:\n%s\nwant:\n%s", out, want)
	}

	// From a cursor, tail shows only later events.
	code, out, _ = runCLI(t, "", "events", "tail", "run-3", "--url", url, "--after", "56")
	if code != 0 || out != "run completed: stop\nstatus completed, 57 events, lastLogicalSequence 57\n" {
		t.Fatalf("tail --after: exit %d out %q", code, out)
	}

	code, _, errs = runCLI(t, "", "events", "tail", "nope", "--url", url)
	if code != 1 || errs != "agentwire: run nope not found\n" {
		t.Fatalf("missing run: exit %d err %q", code, errs)
	}
}

// A tail started while the run is still being written follows it live to its end.
func TestEventsTailLive(t *testing.T) {
	url, _, _ := startServe(t, serveOpts(filepath.Join(t.TempDir(), "data")))
	lines := strings.SplitAfter(synthRun(t, 300, 8, "live"), "\n")
	if code, out, errs := runCLI(t, strings.Join(lines[:100], ""), "events", "send", "--url", url); code != 0 {
		t.Fatalf("%d %s %s", code, out, errs)
	}
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run([]string{"events", "tail", "live", "--url", url, "--snapshot"}, strings.NewReader(""), &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	for i := 100; i < len(lines); i += 25 {
		if code, out, errs := runCLI(t, strings.Join(lines[i:min(i+25, len(lines))], ""), "events", "send", "--url", url, "--batch", "5"); code != 0 {
			t.Fatalf("%d %s %s", code, out, errs)
		}
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("events tail did not reach the end of the live run")
	}
	_, reduced, _ := runCLI(t, strings.Join(lines, ""), "events", "reduce")
	if r.code != 0 || r.out != reduced {
		t.Fatalf("tail: exit %d err %q\n got %s", r.code, r.err, r.out)
	}
}

func TestEventsSendRefusals(t *testing.T) {
	url, _, _ := startServe(t, serveOpts(filepath.Join(t.TempDir(), "data")))
	// Line 4 (after a blank line) is a reducer refusal; with batches of 10 the whole batch is
	// refused atomically and nothing is stored.
	in := evStart + "\n" + evMsg + "\n\n" + strings.Replace(evDelta, `"messageId":"m"`, `"messageId":"x"`, 1) + "\n" + evDone + "\n"
	code, out, errs := runCLI(t, in, "events", "send", "--url", url)
	if code != 1 || errs != "" || out != "line 4: Message delta has no started message.\n" {
		t.Fatalf("exit %d out %q err %q", code, out, errs)
	}
	// With batches of 1 the lines before it are stored and summarised.
	code, out, _ = runCLI(t, in, "events", "send", "--url", url, "--batch", "1")
	if code != 1 || out != "line 4: Message delta has no started message.\nrun r: accepted 2, duplicates 0, lastLogicalSequence 2, status running\n" {
		t.Fatalf("exit %d out %q", code, out)
	}
	// A line that is not an event is reported like `events validate` does; what came before
	// is sent first.
	code, out, _ = runCLI(t, evDelta+"\n{\"a\":1,\"a\":2}\n", "events", "send", "--url", url)
	if code != 1 || out != "line 2: Agent event contains duplicate member name \"a\".\nrun r: accepted 1, duplicates 0, lastLogicalSequence 3, status running\n" {
		t.Fatalf("exit %d out %q", code, out)
	}
	// Usage errors.
	for _, args := range [][]string{
		{"events", "send", "--url", url, "--batch", "0"},
		{"events", "send", "--url", url, "--batch", "10001"},
		{"events", "send", "--url", "ftp://x"},
		{"events", "send", filepath.Join(t.TempDir(), "missing.ndjson"), "--url", url},
		{"events", "tail", "--url", url},
		{"events", "tail", "r", "--url", url, "--after", "-1"},
	} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || !strings.HasPrefix(errs, "agentwire: ") {
			t.Fatalf("%v: exit %d err %q", args, code, errs)
		}
	}
	// An unreachable relay is exit 1 with one line.
	code, _, errs = runCLI(t, evStart+"\n", "events", "send", "--url", "http://127.0.0.1:1")
	if code != 1 || !strings.HasPrefix(errs, "agentwire: relay request failed: ") {
		t.Fatalf("unreachable: exit %d err %q", code, errs)
	}
}

func TestEventsClientToken(t *testing.T) {
	dir := t.TempDir()
	authPath := filepath.Join(dir, "auth.json")
	entry := `[{"token_sha256":"` + relay.HashToken("tok") + `","org":"acme","instance_id":"i1","instance_label":"CI","rights":["admin"]}]`
	if err := os.WriteFile(authPath, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	o := serveOpts(filepath.Join(dir, "data"))
	o.auth = authPath
	url, _, _ := startServe(t, o)
	in := strings.Join([]string{evStart, evMsg, evDelta, evDone}, "\n")
	code, _, errs := runCLI(t, in, "events", "send", "--url", url)
	if code != 1 || errs != "agentwire: relay refused the request (401 unauthorized): A bearer token is required.\n" {
		t.Fatalf("no token: exit %d err %q", code, errs)
	}
	if code, out, errs := runCLI(t, in, "events", "send", "--url", url, "--token", "tok"); code != 0 || !strings.Contains(out, "accepted 4") {
		t.Fatalf("--token: exit %d out %q err %q", code, out, errs)
	}
	t.Setenv("AGENTWIRE_TOKEN", "tok")
	t.Setenv("AGENTWIRE_URL", url)
	if code, out, errs := runCLI(t, "", "events", "tail", "r"); code != 0 || !strings.HasSuffix(out, "status completed, 4 events, lastLogicalSequence 4\n") {
		t.Fatalf("env token: exit %d out %q err %q", code, out, errs)
	}
}

// TestEventsDepthLimitRelay: the runs of the corpus's depth.json (free JSON nested 128 levels)
// go through a relay and come back whole: `events send` stores them, `events tail --snapshot`
// prints the state `events reduce` prints, and the live view shows each event.
func TestEventsDepthLimitRelay(t *testing.T) {
	url, _, _ := startServe(t, serveOpts(filepath.Join(t.TempDir(), "data")))
	for i, c := range depthCases(t, "reduce") {
		in, _ := depthRun(t, c)
		runID := fmt.Sprintf("deep-%d", i)
		in = strings.ReplaceAll(in, `"runId":"run-deep"`, `"runId":"`+runID+`"`)
		n := strings.Count(in, "\n")
		code, out, errs := runCLI(t, in, "events", "send", "--url", url)
		if want := fmt.Sprintf("run %s: accepted %d, duplicates 0, lastLogicalSequence %d, status ", runID, n, n); code != 0 || errs != "" || !strings.HasPrefix(out, want) {
			t.Fatalf("%s: send: exit %d out %q err %q", caseString(c, "name"), code, out, errs)
		}
		_, reduced, _ := runCLI(t, in, "events", "reduce")
		code, out, errs = runCLI(t, "", "events", "tail", runID, "--url", url, "--snapshot")
		if code != 0 || errs != "" || out != reduced {
			t.Fatalf("%s: tail --snapshot: exit %d err %q\n got %.300s\nwant %.300s", caseString(c, "name"), code, errs, out, reduced)
		}
		code, out, errs = runCLI(t, "", "events", "tail", runID, "--url", url)
		if code != 0 || errs != "" || !strings.HasSuffix(out, fmt.Sprintf(", %d events, lastLogicalSequence %d\n", n, n)) {
			t.Fatalf("%s: tail: exit %d err %q out %q", caseString(c, "name"), code, errs, out)
		}
	}
}
