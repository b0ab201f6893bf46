package gen

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
)

// fixtureRE matches one fixture of ts/fixtures.ts: the marker line, an optional
// @ts-expect-error line, and the declaration whose initializer is the document's JSON on one
// line.
var fixtureRE = regexp.MustCompile(`(?m)^// fixture (valid|invalid) (.+)\n(// @ts-expect-error\n)?export const \w+: [\w\[\]]+ = (.*);$`)

// TestTSFixturesMatchCorpus checks ts/fixtures.ts (cross-check b, run by tsc in CI): every
// fixture is exactly the corpus document it names (compared as JSON values), "valid" fixtures
// are documents the corpus accepts and carry no @ts-expect-error, "invalid" ones are documents
// it refuses and carry one.
func TestTSFixturesMatchCorpus(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "ts/fixtures.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n// fixture "); n == 0 {
		t.Fatal("no fixtures")
	} else if m := len(fixtureRE.FindAllSubmatch(src, -1)); m != n {
		t.Fatalf("%d fixture markers, %d well-formed fixtures", n, m)
	}
	for _, m := range fixtureRE.FindAllSubmatch(src, -1) {
		kind, ref, expectErr, text := string(m[1]), string(m[2]), len(m[3]) > 0, m[4]
		t.Run(ref, func(t *testing.T) {
			got, err := jsonvalue.Parse(text, "fixture")
			if err != nil {
				t.Fatalf("fixture is not strict JSON: %v", err)
			}
			want, valid := corpusDocument(t, ref)
			if !bytes.Equal(canonical(t, got), canonical(t, want)) {
				t.Fatalf("fixture differs from %s", ref)
			}
			if valid != (kind == "valid") {
				t.Fatalf("fixture says %s, the corpus says valid=%v", kind, valid)
			}
			if expectErr != (kind == "invalid") {
				t.Fatalf("%s fixture: @ts-expect-error present=%v", kind, expectErr)
			}
		})
	}
}

// corpusDocument returns the document a fixture names: FILE#case (a case's text, for the tools
// corpus its arguments, for the hive corpus its document), FILE#line-N
// (an NDJSON line) or FILE (a whole JSON file), and whether the corpus calls it valid.
func corpusDocument(t *testing.T, ref string) (any, bool) {
	t.Helper()
	file, frag, _ := strings.Cut(ref, "#")
	raw, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	var text []byte
	valid := true
	switch {
	case frag == "":
		text = raw
	case strings.HasPrefix(frag, "line-"):
		n, err := strconv.Atoi(strings.TrimPrefix(frag, "line-"))
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(raw, []byte("\n"))
		if n < 1 || n > len(lines) {
			t.Fatalf("%s has no line %d", file, n)
		}
		text = lines[n-1]
	default:
		root, err := jsonvalue.ParseObject(raw, file)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, cv := range get[[]any](root, "cases") {
			c := cv.(*jsonvalue.Object)
			if get[string](c, "name") != frag {
				continue
			}
			found = true
			text = []byte(get[string](c, "text"))
			if a, ok := c.Get("arguments"); ok { // tools corpus
				text = []byte(a.(string))
			}
			hiveCorpus := c.Has("document") || c.Has("document_hex")
			if d, ok := c.Get("document"); ok { // hive corpus
				text = []byte(d.(string))
			}
			for _, k := range []string{"textHex", "document_hex"} {
				if h, ok := c.Get(k); ok {
					if text, err = hex.DecodeString(h.(string)); err != nil {
						t.Fatal(err)
					}
				}
			}
			exp := get[*jsonvalue.Object](c, "expect")
			if v, ok := c.Get("valid"); ok { // tools corpus
				valid = v == true
			} else if hiveCorpus { // hive corpus: {"valid": true} or a refusal
				v, _ := exp.Get("valid")
				valid = v == true
			} else if d, ok := exp.Get("decode"); ok { // envelope corpus
				valid = len(d.([]any)) == 0
			} else { // events corpus
				_, failed := exp.Get("error")
				valid = !failed
			}
		}
		if !found {
			t.Fatalf("%s has no case %s", file, frag)
		}
	}
	v, err := jsonvalue.Parse(text, ref)
	if err != nil {
		t.Fatal(err)
	}
	return v, valid
}

func canonical(t *testing.T, v any) []byte {
	t.Helper()
	b, err := jsonvalue.Canonicalize(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
