package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runGen(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenerator(t *testing.T) {
	dir := t.TempDir()
	steps := []struct {
		name   string
		args   []string
		code   int
		stdout func(string) bool
	}{
		{"check before generating: every file missing", []string{"-root", dir, "-check"}, 1,
			func(s string) bool { return strings.Contains(s, "schema/envelope.schema.json: missing\n") }},
		{"generate", []string{"-root", dir}, 0, func(s string) bool { return s == "" }},
		{"check after generating", []string{"-root", dir, "-check"}, 0, func(s string) bool { return s == "" }},
	}
	for _, st := range steps {
		code, out, errs := runGen(st.args...)
		if code != st.code || !st.stdout(out) {
			t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", st.name, code, out, errs)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "schema", "events.schema.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runGen("-check", "-root", dir)
	if code != 1 || out != "schema/events.schema.json: differs\n" || !strings.Contains(errs, "go generate") {
		t.Fatalf("check after an edit: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
}

// TestCommitted is the drift test from the command's side: the committed tree is up to date.
func TestCommitted(t *testing.T) {
	if code, out, errs := runGen("-check"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-bogus"}, {"extra"}, {"-root", "/dev/null/x"}} {
		code, out, errs := runGen(args...)
		if code != 2 || out != "" || errs == "" {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, code, out, errs)
		}
	}
}
