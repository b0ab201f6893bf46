package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs the CLI in-process and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRootUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		errStart string
	}{
		{"bare prints help", nil, 0, ""},
		{"help flag", []string{"--help"}, 0, ""},
		{"unknown command", []string{"frobnicate"}, 2, "agentwire: "},
		{"unknown flag", []string{"--frob"}, 2, "agentwire: "},
		{"help", []string{"help"}, 0, ""},
		{"help for a command", []string{"help", "events"}, 0, ""},
		{"help for a subcommand", []string{"help", "events", "reduce"}, 0, ""},
		{"help for an unknown command", []string{"help", "nosuch"}, 2, "agentwire: unknown help topic \"nosuch\""},
		{"help for an unknown subcommand", []string{"help", "events", "nosuch"}, 2, "agentwire: unknown help topic \"events nosuch\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, errs)
			}
			if tc.code == 0 && !strings.Contains(out, "Usage:") {
				t.Fatalf("help not printed: %q", out)
			}
			if tc.errStart != "" && (!strings.HasPrefix(errs, tc.errStart) || strings.Count(errs, "\n") != 1) {
				t.Fatalf("stderr %q: want one line starting %q", errs, tc.errStart)
			}
		})
	}
}

func TestForEachLine(t *testing.T) {
	long := strings.Repeat("x", 200000)
	in := "a\n\n  \t\nb\r\n" + long + "\nlast"
	var got []string
	err := forEachLine(strings.NewReader(in), func(n int, line []byte) error {
		got = append(got, string(rune('0'+n))+":"+string(line[:min(len(line), 4)]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1:a", "4:b\r", "5:xxxx", "6:last"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestEmptyIDs: an id given as the empty string is a usage error naming it, never a silent
// fallback to the default (or to no value): a script that passes an unset variable learns so.
func TestEmptyIDs(t *testing.T) {
	const url = "http://127.0.0.1:1" // never reached: the check comes first
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"events", "synth", "--events", "3", "--run-id", ""}, "agentwire: --run-id must not be empty\n"},
		{[]string{"events", "synth", "--events", "3", "--run-id="}, "agentwire: --run-id must not be empty\n"},
		{[]string{"events", "tail", "", "--url", url}, "agentwire: RUN must not be empty\n"},
		{[]string{"bus", "send", "--channel", cliChannel, "--type", "offer", "--text", "t", "--client-msg-id", "", "--url", url}, "agentwire: --client-msg-id must not be empty\n"},
		{[]string{"bus", "send", "--channel", cliChannel, "--type", "offer", "--text", "t", "--to", "", "--url", url}, "agentwire: --to must not be empty\n"},
		{[]string{"bus", "send", "--channel", cliChannel, "--type", "offer", "--text", "t", "--to-instance", "", "--url", url}, "agentwire: --to-instance must not be empty\n"},
		{[]string{"bus", "send", "--channel", cliChannel, "--type", "offer", "--text", "t", "--reply-to", "", "--url", url}, "agentwire: --reply-to must not be empty\n"},
		{[]string{"bus", "send", "--channel", cliChannel, "--type", "offer", "--text", "t", "--from", "", "--url", url}, "agentwire: --from must not be empty\n"},
		{[]string{"bus", "send", "--swarm", "sw-1", "--channel", "", "--type", "offer", "--text", "t", "--url", url}, "agentwire: --channel must not be empty\n"},
		{[]string{"bus", "send", "--channel", cliChannel, "--swarm", "", "--type", "offer", "--text", "t", "--url", url}, "agentwire: --swarm must not be empty\n"},
		{[]string{"bus", "send", "--channel", cliChannel, "--type", "question", "--text", "t", "--deadline", "", "--url", url}, "agentwire: --deadline must not be empty\n"},
		{[]string{"bus", "listen", "--channel", cliChannel, "--instance", "", "--url", url}, "agentwire: --instance must not be empty\n"},
		{[]string{"bus", "listen", "--channel", cliChannel, "--agent", "", "--url", url}, "agentwire: --agent must not be empty\n"},
		{[]string{"notify", "stream", "--subject", "notifications.>", "--session", "", "--url", url}, "agentwire: --session must not be empty\n"},
		{[]string{"notify", "stream", "--subject", "notifications.>", "--last-event-id", "", "--url", url}, "agentwire: --last-event-id must not be empty\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, "", tc.args...)
			if code != 2 || out != "" || errs != tc.want {
				t.Fatalf("exit %d stdout %q stderr %q, want exit 2 and %q", code, out, errs, tc.want)
			}
		})
	}
}
