package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/internal/gen"
)

func runSchemaCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestSchemaCommand(t *testing.T) {
	dir := t.TempDir()
	files, err := gen.Render()
	if err != nil {
		t.Fatal(err)
	}

	// Before anything is written, --check names every file as missing.
	code, out, errs := runSchemaCLI("schema", "--out", dir, "--check")
	if code != 1 || errs != "" || strings.Count(out, ": missing\n") != len(files) {
		t.Fatalf("check of an empty dir: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}

	// Writing renders exactly gen.Render's files, byte for byte.
	if code, out, errs := runSchemaCLI("schema", "--out", dir); code != 0 || out != "" || errs != "" {
		t.Fatalf("write: exit %d stdout %q stderr %q", code, out, errs)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil || !bytes.Equal(b, f.Data) {
			t.Fatalf("%s not written as rendered: %v", f.Path, err)
		}
	}
	if code, out, errs := runSchemaCLI("schema", "--check", "--out", dir); code != 0 || out != "" || errs != "" {
		t.Fatalf("check after write: exit %d stdout %q stderr %q", code, out, errs)
	}

	// A hand edit and a stale file are named; exit 1.
	edited := filepath.Join(dir, "ts", "envelope.gen.ts")
	if err := os.WriteFile(edited, []byte("// edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "schema", "gone.schema.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runSchemaCLI("schema", "--out", dir, "--check")
	if want := "schema/gone.schema.json: stale\nts/envelope.gen.ts: differs\n"; code != 1 || out != want || errs != "" {
		t.Fatalf("check after edit: exit %d\nstdout %q\nwant %q\nstderr %q", code, out, want, errs)
	}
}

func TestSchemaUsage(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"schema", "extra"},
		{"schema", "--bogus"},
		{"schema", "--out", blocker}, // schema/ cannot be created under a regular file
	} {
		code, out, errs := runSchemaCLI(args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "agentwire: ") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, code, out, errs)
		}
	}
}
