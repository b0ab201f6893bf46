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
	if err := os.WriteFile(filepath.Join(dir, "schema", "gone.schema.json"), []byte(`{"$comment":"`+gen.Header+`"}`+"\n"), 0o644); err != nil {
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

// TestSchemaForeignFiles: `schema --out DIR` never overwrites or removes a file that lacks the
// generated-file header. At a path it would write, such a file is a usage error naming it and
// nothing is written; elsewhere it is left alone (and --check does not call it stale).
func TestSchemaForeignFiles(t *testing.T) {
	files, err := gen.Render()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string // slash-separated, under DIR
		data    string
		refused bool
	}{
		{"own typescript at a rendered path", "ts/envelope.gen.ts", "export type Mine = 1;\n", true},
		{"own schema at a rendered path", "schema/events.schema.json", `{"title":"mine"}`, true},
		{"own schema at another path", "schema/mine.schema.json", "{}\n", false},
		{"own typescript at another path", "ts/mine.gen.ts", "// mine\n", false},
		{"a stale generated file is removed", "schema/gone.schema.json", `{"$comment":"` + gen.Header + `"}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, filepath.FromSlash(tc.path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runSchemaCLI("schema", "--out", dir)
			got, readErr := os.ReadFile(p)
			switch {
			case tc.refused:
				want := "agentwire: refusing to overwrite " + p + ": it lacks the generated-file header (" + gen.Header + "); nothing was written\n"
				if code != 2 || out != "" || errs != want {
					t.Fatalf("exit %d stdout %q stderr %q, want %q", code, out, errs, want)
				}
				if string(got) != tc.data {
					t.Fatal("the file was changed")
				}
				for _, f := range files {
					if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path))); err == nil && f.Path != tc.path {
						t.Fatalf("%s was written before the refusal", f.Path)
					}
				}
			case strings.Contains(tc.data, gen.Header):
				if code != 0 || readErr == nil {
					t.Fatalf("exit %d %q; the stale file is still there: %v", code, errs, readErr)
				}
			default:
				if code != 0 || out != "" || errs != "" || string(got) != tc.data {
					t.Fatalf("exit %d stdout %q stderr %q; file now %q", code, out, errs, got)
				}
				if code, out, _ := runSchemaCLI("schema", "--out", dir, "--check"); code != 0 || out != "" {
					t.Fatalf("--check names a file that is not generated: exit %d %q", code, out)
				}
			}
		})
	}
}
