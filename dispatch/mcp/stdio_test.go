package mcp_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/internal/fuzzopt"
	"github.com/agentwire/agentwire/jsonvalue"
)

// The stdio tests run `agentwire dispatch mcp` as a built binary under the SDK's
// CommandTransport, the way an MCP host starts it.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// agentwireBinary builds cmd/agentwire once per test run into a temporary directory.
func agentwireBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentwire-mcp-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "agentwire")
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/agentwire/agentwire/cmd/agentwire")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

func TestMain(m *testing.M) {
	flag.Parse()
	fuzzopt.BoundMinimize() // FuzzMCPCall runs a session round trip per input
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// stdioSession starts the binary with DISPATCH_URL=url in a fresh working directory and
// connects an SDK client to it. It returns the session, the raw results log and the
// replacer of the golden placeholders for this process's host name and working directory.
func stdioSession(t *testing.T, url string) (*sdk.ClientSession, *rawLog, *strings.Replacer) {
	t.Helper()
	bin := agentwireBinary(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "dispatch", "mcp")
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "DISPATCH_") || strings.HasPrefix(k, "AGENTWIRE_") || k == "LEGION_ISSUE" || k == "TMUX_PANE" {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "DISPATCH_URL="+url, "DISPATCH_TOKEN="+testToken, "AGENTWIRE_SESSION_ID="+testHost.SessionID,
		"AGENTWIRE_MACHINE="+testHost.Machine, "AGENTWIRE_TMUX="+testHost.Tmux, "TMUX_PANE="+testHost.Pane,
		"AGENTWIRE_SESSION_TITLE="+testHost.SessionTitle)
	log := &rawLog{}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agentwire-test", Version: "1"}, nil).
		Connect(context.Background(), &rawTransport{&sdk.CommandTransport{Command: cmd}, log}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	host, _ := os.Hostname()
	return cs, log, strings.NewReplacer("{base}", url, "{host}", host, "{cwd}", dir)
}

// TestStdioBinary: the built binary over stdio lists the twenty tools with the schemas that
// `agentwire tools schema NAME` prints, runs one valid call per tool against the recorded
// Dispatch API, refuses bad calls with the exact refusal texts and maps Dispatch failures.
func TestStdioBinary(t *testing.T) {
	api := newDispatchAPI(t)
	cs, log, repl := stdioSession(t, api.URL)
	ctx := context.Background()

	t.Run("tools/list", func(t *testing.T) {
		list, err := cs.ListTools(ctx, nil)
		if err != nil || len(list.Tools) != 20 {
			t.Fatalf("list: %v", err)
		}
		var raw []any
		for _, r := range log.all() {
			if o, err := jsonvalue.ParseObject(r, "result"); err == nil && o.Has("tools") {
				v, _ := o.Get("tools")
				raw = v.([]any)
			}
		}
		schemas := map[string]any{}
		for _, v := range raw {
			o := v.(*jsonvalue.Object)
			name, _ := o.Get("name")
			schemas[name.(string)], _ = o.Get("inputSchema")
		}
		for _, name := range dispatch.Names() {
			want, err := exec.Command(agentwireBinary(t), "tools", "schema", name).Output()
			if err != nil {
				t.Fatal(err)
			}
			got := string(jsonvalue.AppendIndented(nil, schemas[name], "  ", 0)) + "\n"
			if got != string(want) {
				t.Errorf("%s: inputSchema\n got %s\nwant %s", name, got, want)
			}
		}
	})
	t.Run("goldens", func(t *testing.T) {
		for _, g := range loadGoldens(t) {
			t.Run(g.file, func(t *testing.T) { runGolden(t, cs, api, g, repl) })
		}
	})
	t.Run("refusals", func(t *testing.T) {
		for _, tc := range refusalCases() {
			t.Run(tc.name, func(t *testing.T) {
				api.load(nil)
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
				if err != nil || !res.IsError || resultText(res) != tc.text {
					t.Errorf("%v isError %v text\n got %q\nwant %q", err, res != nil && res.IsError, resultText(res), tc.text)
				}
				if n := len(api.requests()); n != 0 {
					t.Errorf("%d requests sent", n)
				}
			})
		}
	})
	t.Run("errors", func(t *testing.T) {
		for _, tc := range errorCases() {
			t.Run(tc.name, func(t *testing.T) {
				api.load(tc.answers)
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: dispatch.ToolWhoami})
				want := strings.ReplaceAll(tc.text, "{base}", api.URL)
				if err != nil || !res.IsError || resultText(res) != want {
					t.Errorf("%v text\n got %q\nwant %q", err, resultText(res), want)
				}
			})
		}
	})
}

// TestStdioUnreachable: the binary pointed at a port nothing listens on answers a call with
// the transport failure of §8.1.
func TestStdioUnreachable(t *testing.T) {
	url := closedURL(t)
	cs, _, _ := stdioSession(t, url)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: dispatch.ToolWhoami})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	checkUnreachable(t, res, url)
}

// TestStdioClosedClient: a host that goes away mid-call (its end of the pipes closes, as when
// the host process dies) cancels the Dispatch request in flight. (The SDK client's own
// ClientSession.Close waits for its calls in flight before it closes the pipes.)
func TestStdioClosedClient(t *testing.T) {
	api := newBlockingAPI(t)
	cs, log, _ := stdioSession(t, api.URL)
	go func() { _, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: dispatch.ToolWhoami}) }()
	wait(t, api.started, "the Dispatch request")
	log.mu.Lock()
	conn := log.conn
	log.mu.Unlock()
	go conn.Close()
	wait(t, api.ended, "the end of the Dispatch request")
}
