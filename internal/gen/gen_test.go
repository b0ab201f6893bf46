package gen

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
)

// TestDrift is the drift test: the committed generated files are exactly a fresh render, and no
// stale generated file lies around. Fix a failure with `go generate ./...`.
func TestDrift(t *testing.T) {
	diffs, err := Check(repoRoot, rendered(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("%s: %s (run go generate ./...)", d.Path, d.Reason)
	}
}

// TestRenderDeterministic renders twice and compares.
func TestRenderDeterministic(t *testing.T) {
	a, b := rendered(t), rendered(t)
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("%s rendered differently the second time", a[i].Path)
		}
	}
}

// TestOutputRules checks envelope.md §6.4 on every rendered file: the header, LF endings, one
// trailing newline, 2-space indentation, no HTML escaping, and for schemas the header members
// in order with `$id` naming the file.
func TestOutputRules(t *testing.T) {
	files := rendered(t)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
		s := string(f.Data)
		if strings.Contains(s, "\r") || !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n") {
			t.Errorf("%s: want LF endings and exactly one trailing newline", f.Path)
		}
		if strings.Contains(s, "\t") {
			t.Errorf("%s: contains a tab", f.Path)
		}
		for _, line := range strings.Split(s, "\n") {
			if strings.TrimRight(line, " ") != line {
				t.Errorf("%s: trailing space in %q", f.Path, line)
				break
			}
			if indent := len(line) - len(strings.TrimLeft(line, " ")); indent%2 != 0 && !strings.HasPrefix(strings.TrimLeft(line, " "), "*") {
				t.Errorf("%s: odd indentation in %q", f.Path, line)
				break
			}
		}
		switch {
		case strings.HasSuffix(f.Path, ".gen.ts"):
			if !strings.HasPrefix(s, "// "+Header+"\n") {
				t.Errorf("%s: missing the header line", f.Path)
			}
		case strings.HasSuffix(f.Path, ".schema.json"):
			doc, err := jsonvalue.ParseObject(f.Data, f.Path)
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			if got := doc.Keys()[:4]; !slices.Equal(got, []string{"$comment", "$schema", "$id", "title"}) {
				t.Errorf("%s: leading members %q", f.Path, got)
			}
			wantID := IDBase + strings.TrimPrefix(f.Path, SchemaDir+"/")
			if c, _ := doc.Get("$comment"); c != Header {
				t.Errorf("%s: $comment %v", f.Path, c)
			}
			if id, _ := doc.Get("$id"); id != wantID {
				t.Errorf("%s: $id %v, want %s", f.Path, id, wantID)
			}
			if d, _ := doc.Get("$schema"); d != Dialect {
				t.Errorf("%s: $schema %v", f.Path, d)
			}
			if strings.Contains(s, `\u003c`) || strings.Contains(s, `\u0026`) || strings.Contains(s, `\u003e`) {
				t.Errorf("%s: HTML-escaped characters", f.Path)
			}
			again, err := EncodeSchema(doc)
			if err != nil || !bytes.Equal(again, f.Data) {
				t.Errorf("%s: not in the canonical indented form", f.Path)
			}
		default:
			t.Errorf("%s: unexpected generated path", f.Path)
		}
	}
	for _, c := range Contracts() {
		for _, want := range []string{SchemaPath(c.Name), TSPath(c.Name)} {
			if !slices.Contains(paths, want) {
				t.Errorf("contract %s did not render %s", c.Name, want)
			}
		}
	}
}

// TestEnvelopeSchemaExact pins envelope.md §6.2: the rendered schema equals the hand-written
// golden file of package envelope byte for byte (while that golden exists).
func TestEnvelopeSchemaExact(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join(repoRoot, "envelope/testdata/envelope.schema.json"))
	if os.IsNotExist(err) {
		t.Skip("envelope/testdata/envelope.schema.json retired; schema/envelope.schema.json is the golden")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rendered(t) {
		if f.Path == "schema/envelope.schema.json" && !bytes.Equal(f.Data, golden) {
			t.Fatalf("rendered envelope schema differs from envelope.md §6.2:\n%s", f.Data)
		}
	}
}

// TestCheck covers Write and Check: a fresh tree has no difference; a changed, a deleted and a
// stale file are each reported; Write restores the tree and removes the stale files only.
func TestCheck(t *testing.T) {
	files := rendered(t)
	dir := t.TempDir()
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	if diffs, err := Check(dir, files); err != nil || len(diffs) != 0 {
		t.Fatalf("fresh tree: %v %v", diffs, err)
	}
	changed, deleted := files[0].Path, files[len(files)-1].Path
	// A hand edit below the header (the file is still generated, only out of date).
	if err := os.WriteFile(filepath.Join(dir, changed), append(slices.Clone(files[0].Data), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, deleted)); err != nil {
		t.Fatal(err)
	}
	stale := map[string]string{
		"schema/old.schema.json": `{"$comment":"` + Header + `"}` + "\n",
		"ts/old.gen.ts":          "// " + Header + "\nexport type Old = string;\n",
	}
	// Files that are not generated are neither reported nor removed: another name, or a
	// generated-looking name without the header.
	foreign := map[string]string{
		"ts/fixtures.ts":          "x\n",
		"schema/mine.schema.json": "{}\n",
		"ts/mine.gen.ts":          "// mine\n",
		"schema/late.schema.json": `{"title":"t","$comment":"` + Header + `"}` + "\n",
	}
	for _, m := range []map[string]string{stale, foreign} {
		for p, data := range m {
			if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	diffs, err := Check(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	want := []Difference{{changed, "differs"}, {deleted, "missing"}, {"schema/old.schema.json", "stale"}, {"ts/old.gen.ts", "stale"}}
	slices.SortFunc(want, func(a, b Difference) int { return strings.Compare(a.Path, b.Path) })
	if !slices.Equal(diffs, want) {
		t.Fatalf("Check = %v, want %v", diffs, want)
	}
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	if diffs, err := Check(dir, files); err != nil || len(diffs) != 0 {
		t.Fatalf("after Write the tree is fresh again: %v %v", diffs, err)
	}
	for p, data := range foreign {
		if got, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(got) != data {
			t.Fatalf("Write changed %s, which is not generated: %v", p, err)
		}
	}
	for p := range stale {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Fatalf("Write kept the stale %s", p)
		}
	}
}

// TestWriteForeignFile: a file at a rendered path that lacks the generated-file header is never
// overwritten: Write refuses, naming it, before it changes anything.
func TestWriteForeignFile(t *testing.T) {
	files := rendered(t)
	for _, tc := range []struct {
		name, path, data string
	}{
		{"typescript without header", files[len(files)-1].Path, "export type Mine = 1;\n"},
		{"schema without $comment", files[0].Path, "{}\n"},
		{"schema with the header later", files[0].Path, `{"title":"x","$comment":"` + Header + `"}`},
		{"schema that is not JSON", files[0].Path, "// " + Header + "\n"},
		{"typescript with the header on line 2", files[len(files)-1].Path, "\n// " + Header + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			stale := filepath.Join(dir, "ts", "old.gen.ts")
			if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(stale, []byte("// "+Header+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.FromSlash(tc.path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			err := Write(dir, files)
			var fe *ForeignFileError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("Write = %v, want a ForeignFileError for %s", err, tc.path)
			}
			if got, _ := os.ReadFile(p); string(got) != tc.data {
				t.Fatal("the foreign file was changed")
			}
			if _, err := os.Stat(stale); err != nil {
				t.Fatal("Write removed a stale file before refusing")
			}
			for _, f := range files {
				if f.Path == tc.path {
					continue
				}
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path))); err == nil {
					t.Fatalf("Write wrote %s before refusing", f.Path)
				}
			}
		})
	}
}

// TestCheckEmptyRoot reports every file missing when nothing was generated yet.
func TestCheckEmptyRoot(t *testing.T) {
	files := rendered(t)
	diffs, err := Check(t.TempDir(), files)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != len(files) {
		t.Fatalf("%d differences for %d files", len(diffs), len(files))
	}
	for _, d := range diffs {
		if d.Reason != "missing" {
			t.Fatalf("%v", d)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(); err != nil {
			b.Fatal(err)
		}
	}
}
