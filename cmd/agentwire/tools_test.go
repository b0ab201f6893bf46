package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
)

func runTools(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestToolsList(t *testing.T) {
	code, out, errs := runTools(t, "", "tools", "list")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d stderr %q", code, errs)
	}
	want := strings.Join(dispatch.Names(), "\n") + "\n"
	if out != want || strings.Count(out, "\n") != 20 || !strings.HasPrefix(out, "dispatch_issue\ndispatch_issue_update\n") ||
		!strings.HasSuffix(out, "dispatch_open_asks\ndispatch_whoami\n") {
		t.Errorf("list:\n%s", out)
	}
	if code, _, errs := runTools(t, "", "tools", "list", "x"); code != 2 || !strings.HasPrefix(errs, "agentwire: ") {
		t.Errorf("extra argument: exit %d %q", code, errs)
	}
}

func TestToolsSchema(t *testing.T) {
	code, out, _ := runTools(t, "", "tools", "schema", "dispatch_whoami")
	want := "{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n  \"type\": \"object\",\n  \"properties\": {},\n  \"additionalProperties\": false\n}\n"
	if code != 0 || out != want {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = runTools(t, "", "tools", "schema", "--all")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden, err := os.ReadFile(filepath.Join("..", "..", "dispatch", "testdata", "schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	if out != string(golden) {
		t.Error("schema --all differs from dispatch/testdata/schemas.json")
	}
	all, err := jsonvalue.ParseObject([]byte(out), "")
	if err != nil || strings.Join(all.Keys(), ",") != strings.Join(dispatch.Names(), ",") {
		t.Errorf("--all keys: %v", err)
	}
	for _, args := range [][]string{
		{"tools", "schema"},
		{"tools", "schema", "dispatch_nope"},
		{"tools", "schema", "dispatch_issue", "--all"},
		{"tools", "schema", "--bogus"},
		{"tools"},
		{"tools", "frob"},
	} {
		code, out, errs := runTools(t, "", args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "agentwire: ") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, code, out, errs)
		}
	}
}

func TestToolsCheck(t *testing.T) {
	cases := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"valid inline", "", []string{"dispatch_message", `{"issue":"DSP-1","body":"b"}`}, 0, "", ""},
		{"valid stdin dash", `{"query":"astrolabe"}`, []string{"dispatch_search", "-"}, 0, "", ""},
		{"valid stdin absent", `{}`, []string{"dispatch_whoami"}, 0, "", ""},
		{"empty stdin is an absent payload", "", []string{"dispatch_open_asks"}, 0, "", ""},
		{"refused Example A", "", []string{"dispatch_message", `{"issue":"DSP-1"}`}, 1,
			"dispatch_message was not called: 1 problem\n- body is required (string)\n- Allowed keys: issue, body, in_reply_to\n" +
				"- Example: dispatch_message({\"issue\":\"DSP-1\",\"body\":\"Implementation started.\"})\n", ""},
		{"refused non-object", "", []string{"dispatch_read", `"DSP-1"`}, 1,
			"dispatch_read was not called: 1 problem\n- arguments must be an object, not a string\n- Allowed keys: issue, project, artifact, ref\n" +
				"- Example: dispatch_read({\"issue\":\"DSP-1\"})\n", ""},
		{"strict mode refuses unknown keys on non-strict tools", `{"issue":"DSP-1","question":"Q","kind":"approval"}`, []string{"dispatch_ask"}, 1,
			"dispatch_ask was not called: 1 problem\n" +
				"- unknown field \"kind\"; allowed: issue, project, artifact, ref, question, options, multiple, urgency, anchor\n" +
				"- Allowed keys: issue, project, artifact, ref, question, options, multiple, urgency, anchor\n" +
				"- Example: dispatch_ask({\"issue\":\"DSP-1\",\"question\":\"Ship this?\"})\n", ""},
		{"malformed JSON", "", []string{"dispatch_issue", `{"project":`}, 2, "", "agentwire: arguments is not valid JSON text at byte offset 11.\n"},
		{"duplicate keys", "", []string{"dispatch_issue", `{"project":"A","project":"B"}`}, 2, "", ""},
		{"unknown tool", "", []string{"dispatch_claim", `{}`}, 2, "", ""},
		{"no tool", "", nil, 2, "", ""},
		{"too many args", "", []string{"dispatch_issue", "{}", "{}"}, 2, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runTools(t, c.stdin, append([]string{"tools", "check"}, c.args...)...)
			if code != c.code || out != c.stdout {
				t.Errorf("exit %d want %d\nstdout:\n%s\nwant:\n%s\nstderr %q", code, c.code, out, c.stdout, errs)
			}
			if c.code == 2 {
				if !strings.HasPrefix(errs, "agentwire: ") || strings.Count(errs, "\n") != 1 {
					t.Errorf("usage error stderr %q", errs)
				}
				if c.stderr != "" && errs != c.stderr {
					t.Errorf("stderr %q want %q", errs, c.stderr)
				}
			} else if errs != "" {
				t.Errorf("stderr %q", errs)
			}
		})
	}
}
