package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
)

// TestToolsList: tools/list has the twenty tools with their descriptions, input schemas equal
// to what `agentwire tools schema NAME` prints (compared on the raw bytes of the wire), and
// annotations only where a hint is true.
func TestToolsList(t *testing.T) {
	cs, log := inProcessRaw(t, newExec(""))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 20 {
		t.Fatalf("%d tools", len(res.Tools))
	}
	// The raw tools/list result, member order kept.
	var raw *jsonvalue.Object
	for _, r := range log.all() {
		if o, err := jsonvalue.ParseObject(r, "result"); err == nil && o.Has("tools") {
			raw = o
		}
	}
	if raw == nil {
		t.Fatal("no raw tools/list result")
	}
	rawTools, _ := raw.Get("tools")
	byName := map[string]*jsonvalue.Object{}
	for _, v := range rawTools.([]any) {
		o := v.(*jsonvalue.Object)
		name, _ := o.Get("name")
		byName[name.(string)] = o
	}
	for _, spec := range dispatch.Specs() {
		t.Run(spec.Name(), func(t *testing.T) {
			o := byName[spec.Name()]
			if o == nil {
				t.Fatal("not listed")
			}
			if d, _ := o.Get("description"); d != spec.Description() {
				t.Errorf("description %q", d)
			}
			// `agentwire tools schema NAME` prints AppendIndented(spec.Schema()) and a newline
			// (cmd/agentwire/tools.go; the stdio test runs the binary itself).
			want := string(jsonvalue.AppendIndented(nil, spec.Schema(), "  ", 0)) + "\n"
			schema, _ := o.Get("inputSchema")
			if got := string(jsonvalue.AppendIndented(nil, schema, "  ", 0)) + "\n"; got != want {
				t.Errorf("inputSchema\n got %s\nwant %s", got, want)
			}
			ann, hasAnn := o.Get("annotations")
			wantAnn := map[string]string{
				dispatch.ToolDocRead: `{"idempotentHint":false,"readOnlyHint":true}`, dispatch.ToolRead: `{"idempotentHint":false,"readOnlyHint":true}`,
				dispatch.ToolSearch: `{"idempotentHint":false,"readOnlyHint":true}`, dispatch.ToolIssues: `{"idempotentHint":false,"readOnlyHint":true}`,
				dispatch.ToolOpenAsks: `{"idempotentHint":false,"readOnlyHint":true}`, dispatch.ToolWhoami: `{"idempotentHint":false,"readOnlyHint":true}`,
				dispatch.ToolRequestApproval: `{"idempotentHint":true,"readOnlyHint":false}`,
			}[spec.Name()]
			switch {
			case wantAnn == "" && hasAnn:
				t.Errorf("annotations %v on a tool without a true hint", ann)
			case wantAnn != "":
				got, _ := jsonvalue.Marshal(ann)
				if string(got) != wantAnn {
					t.Errorf("annotations %s, want %s", got, wantAnn)
				}
			}
		})
	}
}

// TestCallGoldens: one valid call per tool through the SDK client over the in-process
// transport, against the recorded Dispatch API: every request exact, the result text exact,
// the details as structuredContent.
func TestCallGoldens(t *testing.T) {
	goldens := loadGoldens(t)
	if len(goldens) != 20 {
		t.Fatalf("%d golden calls", len(goldens))
	}
	api := newDispatchAPI(t)
	cs := inProcess(t, newExec(api.URL))
	repl := inProcessReplacer(api)
	seen := map[string]bool{}
	for _, g := range goldens {
		seen[g.tool] = true
		t.Run(g.file, func(t *testing.T) { runGolden(t, cs, api, g, repl) })
	}
	for _, name := range dispatch.Names() {
		if !seen[name] {
			t.Errorf("no golden call of %s", name)
		}
	}
}

// sevenProblems is the 7-problem dispatch_issue call of package dispatch's BenchmarkRefusal.
const sevenProblems = `{"project":1,"title":null,"force":"yes","labels":["","xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"],"priority":7.5,"components":{"mode":"all"}}`

// refusalCase is one refused call: the exact refusal text; no request may be sent.
type refusalCase struct {
	name, tool, args, text string
}

func refusalCases() []refusalCase {
	golden, err := os.ReadFile("testdata/refusal-7-problems.txt")
	if err != nil {
		panic(err)
	}
	issueTail := "\n- Allowed keys: project, title, parent, external, force, spec, labels, priority, assignee, components\n" +
		`- Example: dispatch_issue({"project":"DSP","title":"Native workspace"})`
	whoamiTail := "\n- Allowed keys: none\n- Example: dispatch_whoami({})"
	return []refusalCase{
		{"seven problems", dispatch.ToolIssue, sevenProblems, strings.TrimSuffix(string(golden), "\n")},
		{"example A", dispatch.ToolMessage, `{"issue":"DSP-1"}`, "dispatch_message was not called: 1 problem\n- body is required (string)\n" +
			"- Allowed keys: issue, body, in_reply_to\n- Example: dispatch_message({\"issue\":\"DSP-1\",\"body\":\"Implementation started.\"})"},
		{"duplicate member names", dispatch.ToolIssue, `{"project":"DSP","title":"a","title":"b"}`,
			"dispatch_issue was not called: 1 problem\n- arguments contains duplicate member name \"title\"." + issueTail},
		{"invalid UTF-8", dispatch.ToolIssue, "{\"project\":\"DSP\",\"title\":\"\xff\"}",
			"dispatch_issue was not called: 1 problem\n- arguments.title contains invalid UTF-8." + issueTail},
		{"unpaired surrogate", dispatch.ToolIssue, `{"project":"DSP","title":"\ud800"}`,
			"dispatch_issue was not called: 1 problem\n- arguments.title contains an unpaired surrogate." + issueTail},
		{"number beyond the double range", dispatch.ToolIssue, `{"project":"DSP","title":"T","priority":1e400}`,
			"dispatch_issue was not called: 1 problem\n- arguments.priority must contain only finite JSON numbers." + issueTail},
		{"nesting beyond 128 levels", dispatch.ToolWhoami, `{"a":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
			"dispatch_whoami was not called: 1 problem\n- arguments.a" + strings.Repeat("[0]", 127) + " exceeds the maximum nesting depth of 128." + whoamiTail},
		{"null payload", dispatch.ToolWhoami, `null`, "dispatch_whoami was not called: 1 problem\n- arguments must be an object, not null" + whoamiTail},
		{"non-object payload", dispatch.ToolWhoami, `"DSP-1"`, "dispatch_whoami was not called: 1 problem\n- arguments must be an object, not a string" + whoamiTail},
		{"unknown field", dispatch.ToolWhoami, `{"verbose":true}`, "dispatch_whoami was not called: 1 problem\n- unknown field \"verbose\"; allowed: none" + whoamiTail},
	}
}

// TestRefusals: refused calls are isError results with exactly the refusal text of §4, never
// protocol errors, and send nothing; texts the strict JSON layer refuses (duplicate names,
// invalid UTF-8, depth, …) reach it byte for byte and are refused with its messages.
func TestRefusals(t *testing.T) {
	api := newDispatchAPI(t)
	cs := inProcess(t, newExec(api.URL))
	for _, tc := range refusalCases() {
		t.Run(tc.name, func(t *testing.T) {
			api.load(nil)
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatalf("protocol error: %v", err)
			}
			if !res.IsError || resultText(res) != tc.text {
				t.Errorf("isError %v text\n got %q\nwant %q", res.IsError, resultText(res), tc.text)
			}
			if res.StructuredContent != nil {
				t.Errorf("structuredContent on a refusal: %v", res.StructuredContent)
			}
			if n := len(api.requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// errorCase is a call the Dispatch side fails (§8.8) or that runs disabled (§8.1).
type errorCase struct {
	name    string
	answers []exchange
	text    string // with {base}
}

func errorCases() []errorCase {
	whoami := func(status int, ct, body string) []exchange {
		return []exchange{{method: "GET", path: "/api/v1/whoami", status: status, contentType: ct, answer: body}}
	}
	return []errorCase{
		{"service error", whoami(409, "application/json", `{"error":"https://a.test is linked to DSP-9","code":"EXTERNAL_LINK_TAKEN"}`),
			"EXTERNAL_LINK_TAKEN: https://a.test is linked to DSP-9"},
		{"service error without code", whoami(500, "application/json", `{"error":"boom"}`), "HTTP_500: boom"},
		{"gateway error", whoami(502, "text/html", "<html><body>Bad   gateway</body></html>"),
			"Dispatch gateway error: GET {base}/api/v1/whoami answered HTTP 502: <html><body>Bad gateway</body></html>. " +
				"This is usually transient, but the request may have reached Dispatch: check the current state before retrying a write."},
	}
}

// TestErrors: service and gateway failures are isError results with the §8.8 text; an
// unreachable server fails with the transport text of §8.1; a disabled configuration still
// lists the tools and answers every call with the disabled message.
func TestErrors(t *testing.T) {
	api := newDispatchAPI(t)
	cs := inProcess(t, newExec(api.URL))
	for _, tc := range errorCases() {
		t.Run(tc.name, func(t *testing.T) {
			api.load(tc.answers)
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: dispatch.ToolWhoami})
			if err != nil {
				t.Fatalf("protocol error: %v", err)
			}
			want := strings.ReplaceAll(tc.text, "{base}", api.URL)
			if !res.IsError || resultText(res) != want {
				t.Errorf("isError %v text\n got %q\nwant %q", res.IsError, resultText(res), want)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		url := closedURL(t)
		res, err := inProcess(t, newExec(url)).CallTool(context.Background(), &sdk.CallToolParams{Name: dispatch.ToolWhoami, Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatalf("protocol error: %v", err)
		}
		checkUnreachable(t, res, url)
	})
	t.Run("disabled", func(t *testing.T) {
		cs := inProcess(t, newExec(""))
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(list.Tools) != 20 {
			t.Fatalf("list: %v", err)
		}
		for _, args := range []string{`{}`, `{"verbose":true}`, `{"a":1,"a":2}`} {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: dispatch.ToolWhoami, Arguments: json.RawMessage(args)})
			if err != nil || !res.IsError || resultText(res) != "Dispatch is disabled; resolve both DISPATCH_URL and DISPATCH_TOKEN" {
				t.Errorf("%s: %v %+v", args, err, res)
			}
		}
	})
}
