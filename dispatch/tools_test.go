package dispatch_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	ts "github.com/agentwire/agentwire/toolspec"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// suiteTable is dispatch-tools.md §6's table: name, strict flag and example, in suite order.
var suiteTable = []struct {
	name    string
	strict  bool
	example string
}{
	{"dispatch_issue", false, `{"project":"DSP","title":"Native workspace"}`},
	{"dispatch_issue_update", true, `{"issue":"DSP-1","status":"in_progress"}`},
	{"dispatch_ask", false, `{"issue":"DSP-1","question":"Ship this?"}`},
	{"dispatch_edit_ask", false, `{"ask":"01234567-0000-4000-8000-000000000001","question":"Ship the revised plan?"}`},
	{"dispatch_resolve_ask", false, `{"ask":"01234567-0000-4000-8000-000000000001","kind":"retracted","reason":"A newer question supersedes this one."}`},
	{"dispatch_resolve_comment", true, `{"comment":"01234567-0000-4000-8000-000000000001"}`},
	{"dispatch_follow", true, `{"ask":"01234567-0000-4000-8000-000000000001","action":"follow"}`},
	{"dispatch_comment", false, `{"issue":"DSP-1","body":"Looks good."}`},
	{"dispatch_suggest", false, `{"issue":"DSP-1","artifact":"spec","quote":"old wording","replace_with":"new wording"}`},
	{"dispatch_message", false, `{"issue":"DSP-1","body":"Implementation started."}`},
	{"dispatch_doc_edit", false, `{"issue":"DSP-1","artifact":"spec","ops":[{"op":"delete_column","block":"table-123","index":1}],"precondition":{"blocks":[{"id":"table-123","token":"sha256:current-table-token"}]}}`},
	{"dispatch_doc_read", false, `{"issue":"DSP-1"}`},
	{"dispatch_request_approval", false, `{"issue":"DSP-1"}`},
	{"dispatch_artifact", false, `{"issue":"DSP-1","name":"design.md","content":"# Design\n"}`},
	{"dispatch_read", false, `{"issue":"DSP-1"}`},
	{"dispatch_search", false, `{"query":"astrolabe"}`},
	{"dispatch_issues", false, `{"project":"AGENTC"}`},
	{"dispatch_architecture_sync", true, `{"project":"CORE"}`},
	{"dispatch_open_asks", true, `{}`},
	{"dispatch_whoami", true, `{}`},
}

// TestRegistry is conformance case 1: exactly the twenty names, in order, exact lookup.
func TestRegistry(t *testing.T) {
	names := dispatch.Names()
	if len(names) != len(suiteTable) {
		t.Fatalf("%d tools", len(names))
	}
	for i, row := range suiteTable {
		if names[i] != row.name {
			t.Errorf("tool %d: %s want %s", i+1, names[i], row.name)
		}
		s, ok := dispatch.Lookup(row.name)
		if !ok || s.Name() != row.name {
			t.Fatalf("lookup %s", row.name)
		}
		if s.Strict() != row.strict {
			t.Errorf("%s strict=%v", row.name, s.Strict())
		}
		if _, ok := dispatch.Lookup(strings.ToUpper(row.name)); ok {
			t.Error("lookup must be exact")
		}
		if s.Description() == "" {
			t.Errorf("%s has no description", row.name)
		}
		for _, f := range s.Arguments() {
			if f.Node.Description() == "" {
				t.Errorf("%s.%s has no description", row.name, f.Key)
			}
		}
	}
	if _, ok := dispatch.Lookup("dispatch_claim"); ok {
		t.Error("there is no dispatch_claim tool")
	}
}

// TestExamples is conformance case 2 and the §2.5 rule: every example is accepted by the strict
// parse and its Example line is `<tool>(<compact JSON>)` of the §6 table.
func TestExamples(t *testing.T) {
	for _, row := range suiteTable {
		s, _ := dispatch.Lookup(row.name)
		ex := s.Example()
		if _, problems := s.Parse(ex, ts.Strict); len(problems) > 0 {
			t.Errorf("%s example refused: %v", row.name, problems)
		}
		if _, problems := s.Parse(ex, ts.Lenient); len(problems) > 0 {
			t.Errorf("%s example refused (lenient): %v", row.name, problems)
		}
		want := "- Example: " + row.name + "(" + row.example + ")"
		if s.ExampleLine() != want {
			t.Errorf("%s:\n got %s\nwant %s", row.name, s.ExampleLine(), want)
		}
	}
}

// TestSchemasCompile is conformance case 3 and the must-show: every emitted schema declares
// $schema 2020-12 first, strict tools close the root, and santhosh-tekuri/jsonschema/v6 compiles
// it as a JSON Schema 2020-12 document.
func TestSchemasCompile(t *testing.T) {
	for _, row := range suiteTable {
		s, _ := dispatch.Lookup(row.name)
		sch := s.Schema()
		if k := sch.Keys(); k[0] != "$schema" || k[1] != "type" {
			t.Errorf("%s member order %v", row.name, k)
		}
		if v, _ := sch.Get("$schema"); v != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s $schema %v", row.name, v)
		}
		ap, has := sch.Get("additionalProperties")
		if row.strict != has || (has && ap != false) {
			t.Errorf("%s root additionalProperties=%v,%v", row.name, ap, has)
		}
		if _, err := compileSchema(s); err != nil {
			t.Errorf("%s: %v", row.name, err)
		}
	}
	// Nested strict objects still close themselves (dispatch_doc_edit ops items).
	s, _ := dispatch.Lookup("dispatch_doc_edit")
	b, _ := jsonvalue.Marshal(s.Schema())
	if !strings.Contains(string(b), `"type":"object","properties":{"op":`) ||
		!strings.Contains(string(b), `"attributes":{"description":"Client-owned typed attributes (retype)."}},"required":["op"],"additionalProperties":false}`) {
		t.Errorf("doc_edit op items must be strict: %s", b)
	}
}

// compileSchema compiles a spec's emitted schema with santhosh-tekuri/jsonschema/v6.
func compileSchema(s *ts.Spec) (*jsonschema.Schema, error) {
	text, err := jsonvalue.Marshal(s.Schema())
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "https://agentwire.test/" + s.Name() + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// shortened returns the schema with every description replaced by "…" (the §2.4 notation).
func shortened(v any) any {
	switch x := v.(type) {
	case *jsonvalue.Object:
		o := jsonvalue.NewObject(x.Len())
		for _, m := range x.Members() {
			if m.Name == "description" {
				if _, ok := m.Value.(string); ok {
					o.Set(m.Name, "…")
					continue
				}
			}
			o.Set(m.Name, shortened(m.Value))
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = shortened(e)
		}
		return out
	}
	return v
}

func compactSchema(t *testing.T, name string) string {
	t.Helper()
	s, ok := dispatch.Lookup(name)
	if !ok {
		t.Fatal(name)
	}
	b, err := jsonvalue.Marshal(shortened(s.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSchemaFragments compares the emitted schemas with the literal examples of §2.4 and the
// fragments of conformance case 4.
func TestSchemaFragments(t *testing.T) {
	follow := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"properties":{"ask":{"type":"string","description":"…"},` +
		`"action":{"type":"string","enum":["follow","unfollow"],"description":"…"}},` +
		`"required":["ask","action"],"additionalProperties":false}`
	if got := compactSchema(t, "dispatch_follow"); got != follow {
		t.Errorf("dispatch_follow:\n got %s\nwant %s", got, follow)
	}
	whoami := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{},"additionalProperties":false}`
	if got := compactSchema(t, "dispatch_whoami"); got != whoami {
		t.Errorf("dispatch_whoami: %s", got)
	}
	update := compactSchema(t, "dispatch_issue_update")
	for _, frag := range []string{
		`"labels":{"type":"array","items":{"type":"string","minLength":1,"maxLength":40},"maxItems":20,"description":"…"}`,
		`"components":{"type":"object","properties":{"mode":{"type":"string","enum":["inherit","explicit","none"],"description":"…"},` +
			`"ids":{"type":"array","items":{"type":"string","minLength":1},"minItems":1,"maxItems":50,"description":"…"},` +
			`"reason":{"type":"string","minLength":1,"description":"…"}},"required":["mode"],"description":"…"}`,
		`"required":["issue"],"additionalProperties":false}`,
	} {
		if !strings.Contains(update, frag) {
			t.Errorf("dispatch_issue_update lacks %s\n in %s", frag, update)
		}
	}
	issue := compactSchema(t, "dispatch_issue")
	for _, frag := range []string{
		`"priority":{"type":"integer","minimum":0,"maximum":3,"description":"…"}`,
		`"labels":{"type":"array","items":{"type":"string","minLength":1,"maxLength":40},"maxItems":20,"description":"…"}`,
		`"required":["project","title"]}`,
	} {
		if !strings.Contains(issue, frag) {
			t.Errorf("dispatch_issue lacks %s", frag)
		}
	}
	if strings.Contains(issue, "additionalProperties") {
		t.Error("a non-strict tool emits no additionalProperties")
	}
}

// TestSchemasGolden pins every emitted schema (testdata/schemas.json, the `tools schema --all`
// object).
func TestSchemasGolden(t *testing.T) {
	all := jsonvalue.NewObject(20)
	for _, s := range dispatch.Specs() {
		all.Set(s.Name(), s.Schema())
	}
	got, err := jsonvalue.MarshalIndent(all, "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "schemas.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("schemas differ from %s (run go test -update if the change is intended)", path)
	}
}

// TestDescriptions is conformance case 5 and the other description rules of §2.5 and §6.
func TestDescriptions(t *testing.T) {
	const phrase = "artifact id, slug, or filename"
	count := 0
	for _, s := range dispatch.Specs() {
		for _, f := range s.Arguments() {
			if f.Key == "artifact" {
				count++
				if !strings.Contains(f.Node.Description(), phrase) {
					t.Errorf("%s.artifact description lacks %q", s.Name(), phrase)
				}
			}
		}
	}
	if count != 7 {
		t.Errorf("%d tools declare artifact, want 7", count)
	}
	desc := func(name string) string { s, _ := dispatch.Lookup(name); return s.Description() }
	arg := func(name, key string) string {
		s, _ := dispatch.Lookup(name)
		for _, f := range s.Arguments() {
			if f.Key == key {
				return f.Node.Description()
			}
		}
		t.Fatalf("%s.%s", name, key)
		return ""
	}
	checks := []struct{ where, text, want string }{
		{"dispatch_read", desc("dispatch_read"), phrase},
		{"dispatch_ask", desc("dispatch_ask"), "quote anchor is pinned to its block"},
		{"dispatch_comment", desc("dispatch_comment"), "quote anchor is pinned to its block"},
		{"dispatch_issue", desc("dispatch_issue"), "409 POSSIBLE_DUPLICATE"},
		{"dispatch_issue", desc("dispatch_issue"), "force is true"},
		{"dispatch_issue", desc("dispatch_issue"), "Search first"},
		{"dispatch_ask.ref", arg("dispatch_ask", "ref"), `appended to the question as a "Ref:" line (unless the question already contains it) and rendered as a link`},
		{"dispatch_follow", desc("dispatch_follow"), "notifications.dispatch.issue.<KEY>.>"},
		{"dispatch_issue_update", desc("dispatch_issue_update"), "reopen"},
		{"dispatch_issue.spec", arg("dispatch_issue", "spec"), "Summary, New since we talked, Acceptance, Requirements, Design, Errors, Testing, Rejected"},
		{"dispatch_doc_edit", desc("dispatch_doc_edit"), "Summary, New since we talked, Acceptance, Requirements, Design, Errors, Testing, Rejected"},
		{"dispatch_issue.issue", arg("dispatch_issue_update", "issue"), "owner/repo#n"},
		{"dispatch_doc_read.project", arg("dispatch_doc_read", "project"), "Exactly one of issue and project is required"},
	}
	for _, c := range checks {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("%s description lacks %q", c.where, c.want)
		}
	}
}

func refusal(t *testing.T, tool, args string, mode ts.Mode) string {
	t.Helper()
	s, ok := dispatch.Lookup(tool)
	if !ok {
		t.Fatal(tool)
	}
	_, problems, err := s.ParseJSON([]byte(args), mode)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) == 0 {
		return ""
	}
	return s.Refusal(problems)
}

// TestRefusalExamples renders Examples A–D of §4 exactly.
func TestRefusalExamples(t *testing.T) {
	q850 := strings.Repeat("q", 850)
	cases := []struct{ name, tool, args, want string }{
		{"A", "dispatch_message", `{"issue":"DSP-1"}`, "dispatch_message was not called: 1 problem\n" +
			"- body is required (string)\n" +
			"- Allowed keys: issue, body, in_reply_to\n" +
			`- Example: dispatch_message({"issue":"DSP-1","body":"Implementation started."})`},
		{"B", "dispatch_issue_update", `{"issue":"DSP-1","status":"closed","priority":1,"rank":"a"}`,
			"dispatch_issue_update was not called: 3 problems\n" +
				`- status must be one of triage|icebox|backlog|todo|in_progress|testing|needs_review|retro|done; got "closed"` + "\n" +
				`- unknown field "priority"; allowed: issue, status, title, labels, external_links, route, parent, components` + "\n" +
				`- unknown field "rank"; allowed: issue, status, title, labels, external_links, route, parent, components` + "\n" +
				"- Allowed keys: issue, status, title, labels, external_links, route, parent, components\n" +
				`- Example: dispatch_issue_update({"issue":"DSP-1","status":"in_progress"})`},
		{"C", "dispatch_ask", `{"issue":"DSP-1","question":"` + q850 + `","options":[{"label":"Yes"},"No"],"urgency":"urgent","kind":"approval"}`,
			"dispatch_ask was not called: 4 problems\n" +
				"- question is 50 characters over the 800-character limit (850/800)\n" +
				"- options.1 must be an object {label, description?}, not a string\n" +
				`- urgency must be one of low|med|high|blocking; got "urgent"` + "\n" +
				`- unknown field "kind"; allowed: issue, project, artifact, ref, question, options, multiple, urgency, anchor` + "\n" +
				"- Allowed keys: issue, project, artifact, ref, question, options, multiple, urgency, anchor\n" +
				`- Example: dispatch_ask({"issue":"DSP-1","question":"Ship this?"})`},
		{"D", "dispatch_whoami", `{"verbose":true}`, "dispatch_whoami was not called: 1 problem\n" +
			`- unknown field "verbose"; allowed: none` + "\n" +
			"- Allowed keys: none\n" +
			"- Example: dispatch_whoami({})"},
	}
	for _, c := range cases {
		if got := refusal(t, c.tool, c.args, ts.Strict); got != c.want {
			t.Errorf("Example %s:\n got:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
}

// TestCrossFieldRules checks every rule of §5 on normalized values, including the clauses the
// conformance corpus does not reach.
func TestCrossFieldRules(t *testing.T) {
	obj := func(s string) *jsonvalue.Object {
		o, err := jsonvalue.ParseObject([]byte(s), "")
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	cases := []struct {
		rule string
		fn   func(*jsonvalue.Object) bool
		args string
		want bool
	}{
		{"OWNER(t,f) issue", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, true, false) }, `{"issue":"A-1"}`, true},
		{"OWNER(t,f) both", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, true, false) }, `{"issue":"A-1","project":"A"}`, false},
		{"OWNER(t,f) project no artifact", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, true, false) }, `{"project":"A"}`, false},
		{"OWNER(t,f) project artifact", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, true, false) }, `{"project":"A","artifact":"x"}`, true},
		{"OWNER(t,f) ref only", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, true, false) }, `{"ref":"dispatch://A-1"}`, true},
		{"OWNER(t,f) nothing", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, true, false) }, `{}`, false},
		{"OWNER(f,f) project alone", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, false, false) }, `{"project":"A"}`, true},
		{"OWNER(t,t) issue alone", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, true, true) }, `{"issue":"A-1"}`, false},
		{"OWNER(t,t) issue ref", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, true, true) }, `{"issue":"A-1","ref":"x"}`, true},
		{"OWNER non-string issue", func(o *jsonvalue.Object) bool { return dispatch.OwnerRule(o, true, false) }, `{"issue":1,"project":"A","artifact":"x"}`, true},
		{"COMMENT turn with ask", dispatch.CommentRule, `{"issue":"A-1","turn":"agent","reply_to_ask":"u"}`, true},
		{"COMMENT turn alone", dispatch.CommentRule, `{"issue":"A-1","turn":"agent"}`, false},
		{"DOC_EDIT document", dispatch.DocEditRule, `{"issue":"A-1","artifact":"s","precondition":{"document":"t"}}`, true},
		{"DOC_EDIT null precondition", dispatch.DocEditRule, `{"issue":"A-1","artifact":"s","precondition":null}`, false},
		{"DOC_EDIT both", dispatch.DocEditRule, `{"issue":"A-1","artifact":"s","precondition":{"document":"t","blocks":[]}}`, false},
		{"DOC_EDIT neither", dispatch.DocEditRule, `{"issue":"A-1","artifact":"s","precondition":{}}`, false},
		{"issue update components null", dispatch.IssueUpdateRule, `{"issue":"A-1","components":null}`, false},
		{"issue update route empty", dispatch.IssueUpdateRule, `{"issue":"A-1","route":""}`, true},
		{"edit ask multiple false", dispatch.EditAskRule, `{"ask":"x","multiple":false}`, true},
		{"edit ask nothing", dispatch.EditAskRule, `{"ask":"x"}`, false},
		{"ARTIFACT path", dispatch.ArtifactRule, `{"project":"A","name":"n","path":"p"}`, true},
		{"ARTIFACT both", dispatch.ArtifactRule, `{"project":"A","name":"n","path":"p","content":"c"}`, false},
	}
	for _, c := range cases {
		if got := c.fn(obj(c.args)); got != c.want {
			t.Errorf("%s %s = %v", c.rule, c.args, got)
		}
	}
}
