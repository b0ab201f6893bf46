package conformance_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/toolspec"
)

// The tools corpus: conformance/tools/*.json (format in conformance/tools/README.md), replayed
// against packages toolspec and dispatch.
const toolsDir = "tools"

// toolCaseMembers are the members a tools case may carry, in the README's order.
var toolCaseMembers = []string{"name", "spec_case", "tool", "mode", "host", "arguments", "valid", "problems", "normalized", "refusal"}

func loadToolsFile(t *testing.T, name string) *jsonvalue.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(toolsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonvalue.ParseObject(data, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc
}

func toolsString(t *testing.T, o *jsonvalue.Object, key, where string) (string, bool) {
	t.Helper()
	v, ok := o.Get(key)
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		t.Fatalf("%s: %s must be a string", where, key)
	}
	return s, true
}

func TestToolsCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(toolsDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	covered := map[int]bool{}
	total := 0
	for _, path := range files {
		base := filepath.Base(path)
		if base == "registry.json" {
			continue
		}
		doc := loadToolsFile(t, base)
		cases, ok := doc.Get("cases")
		list, isList := cases.([]any)
		if !ok || !isList || len(list) == 0 {
			t.Fatalf("%s: cases must be a non-empty array", base)
		}
		for i, raw := range list {
			c, ok := raw.(*jsonvalue.Object)
			if !ok {
				t.Fatalf("%s case %d is not an object", base, i)
			}
			total++
			if n, ok := c.Get("spec_case"); ok {
				covered[int(n.(float64))] = true
			}
			runToolsCase(t, base, i, c)
		}
	}
	// Every [S], [L] and [X] case of dispatch-tools.md §10 (6–64, except 54, the configuration
	// check, which has no arguments) is in the corpus.
	for n := 6; n <= 64; n++ {
		if n == 54 {
			continue
		}
		if !covered[n] {
			t.Errorf("spec conformance case %d has no corpus case", n)
		}
	}
	t.Logf("%d tools cases in %d files", total, len(files)-1)
}

func runToolsCase(t *testing.T, file string, i int, c *jsonvalue.Object) {
	name, _ := toolsString(t, c, "name", file)
	where := file + ": " + name
	for _, k := range c.Keys() {
		if !slices.Contains(toolCaseMembers, k) {
			t.Errorf("%s: unknown case member %q", where, k)
		}
	}
	tool, _ := toolsString(t, c, "tool", where)
	modeText, _ := toolsString(t, c, "mode", where)
	args, ok := toolsString(t, c, "arguments", where)
	if !ok {
		t.Fatalf("%s: arguments missing", where)
	}
	validV, _ := c.Get("valid")
	valid, isBool := validV.(bool)
	if !isBool {
		t.Fatalf("%s: valid must be a boolean", where)
	}
	var mode toolspec.Mode
	var host *dispatch.HostContext
	switch modeText {
	case "strict":
		mode = toolspec.Strict
	case "lenient":
		mode = toolspec.Lenient
	case "executor":
		hv, ok := c.Get("host")
		ho, isObj := hv.(*jsonvalue.Object)
		if !ok || !isObj {
			t.Fatalf("%s: an executor case needs a host object", where)
		}
		host = &dispatch.HostContext{}
		for _, m := range ho.Members() {
			val, isStr := m.Value.(string)
			if !isStr {
				t.Fatalf("%s: host.%s must be a string", where, m.Name)
			}
			switch m.Name {
			case "dispatch_url":
				host.DispatchURL = val
			case "legion_issue":
				host.LegionIssue = val
			case "github_repo":
				host.GitHubRepo = val
			default:
				t.Fatalf("%s: unknown host member %q", where, m.Name)
			}
		}
	default:
		t.Fatalf("%s: mode %q", where, modeText)
	}
	if _, hasHost := c.Get("host"); hasHost && host == nil {
		t.Fatalf("%s: host is only for executor cases", where)
	}
	spec, found := dispatch.Lookup(tool)
	if !found {
		t.Fatalf("%s: unknown tool %s", where, tool)
	}
	t.Run(strings.TrimSuffix(file, ".json")+"/"+name, func(t *testing.T) {
		var normalized *jsonvalue.Object
		var problems toolspec.Problems
		var err error
		if host != nil {
			var v any = jsonvalue.NewObject(0)
			if strings.TrimSpace(args) != "" {
				v, err = jsonvalue.Parse([]byte(args), "arguments")
			}
			if err == nil {
				normalized, problems = dispatch.ValidateCall(spec, v, *host)
			}
		} else {
			normalized, problems, err = spec.ParseJSON([]byte(args), mode)
		}
		if err != nil {
			t.Fatalf("arguments text refused by the strict JSON layer: %v", err)
		}
		if valid != (len(problems) == 0) {
			t.Fatalf("valid=%v, got problems %q", valid, problems.Lines())
		}
		var want []string
		if pv, ok := c.Get("problems"); ok {
			for _, p := range pv.([]any) {
				want = append(want, p.(string))
			}
		}
		if got := problems.Lines(); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("problems:\n got %q\nwant %q", got, want)
		}
		if text, ok := toolsString(t, c, "refusal", where); ok {
			if got := spec.Refusal(problems); got != text {
				t.Errorf("refusal:\n got:\n%s\nwant:\n%s", got, text)
			}
		}
		if text, ok := toolsString(t, c, "normalized", where); ok {
			got, err := jsonvalue.Marshal(normalized)
			if err != nil || string(got) != text {
				t.Errorf("normalized %s want %s (%v)", got, text, err)
			}
		}
	})
}

// TestToolsRegistry replays conformance/tools/registry.json: conformance cases 1–4 of
// dispatch-tools.md §10 (names and order, strict flags, refusal lines, emitted schemas).
func TestToolsRegistry(t *testing.T) {
	doc := loadToolsFile(t, "registry.json")
	v, _ := doc.Get("tools")
	tools, _ := v.([]any)
	names := dispatch.Names()
	if len(tools) != len(names) {
		t.Fatalf("registry lists %d tools, suite has %d", len(tools), len(names))
	}
	for i, raw := range tools {
		row := raw.(*jsonvalue.Object)
		name, _ := toolsString(t, row, "name", "registry")
		if names[i] != name {
			t.Errorf("tool %d is %s, registry says %s", i+1, names[i], name)
			continue
		}
		spec, _ := dispatch.Lookup(name)
		strict, _ := row.Get("strict")
		if spec.Strict() != strict {
			t.Errorf("%s strict %v", name, spec.Strict())
		}
		if s, _ := toolsString(t, row, "allowed_keys", name); spec.AllowedKeysLine() != s {
			t.Errorf("%s: %s want %s", name, spec.AllowedKeysLine(), s)
		}
		if s, _ := toolsString(t, row, "example", name); spec.ExampleLine() != s {
			t.Errorf("%s: %s want %s", name, spec.ExampleLine(), s)
		}
		wantSchema, _ := row.Get("schema")
		got := toolsShortenDescriptions(spec.Schema())
		if !jsonvalue.Equal(got, wantSchema) {
			g, _ := jsonvalue.Marshal(got)
			w, _ := jsonvalue.Marshal(wantSchema)
			t.Errorf("%s schema:\n got %s\nwant %s", name, g, w)
		}
		// Member order is part of the contract (§2.4): compare the compact texts too.
		g, _ := jsonvalue.Marshal(got)
		w, _ := jsonvalue.Marshal(wantSchema)
		if string(g) != string(w) {
			t.Errorf("%s schema member order differs", name)
		}
	}
}

// toolsShortenDescriptions replaces every description string with "…" (descriptions are
// implementation prose; the corpus pins structure only).
func toolsShortenDescriptions(v any) any {
	switch x := v.(type) {
	case *jsonvalue.Object:
		o := jsonvalue.NewObject(x.Len())
		for _, m := range x.Members() {
			if _, isStr := m.Value.(string); isStr && m.Name == "description" {
				o.Set(m.Name, "…")
				continue
			}
			o.Set(m.Name, toolsShortenDescriptions(m.Value))
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toolsShortenDescriptions(e)
		}
		return out
	}
	return v
}
