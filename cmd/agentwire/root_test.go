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
