package mcp_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwire/agentwire/dispatch/client"
	dmcp "github.com/agentwire/agentwire/dispatch/mcp"
	"github.com/agentwire/agentwire/jsonvalue"
)

// The test harness: a recorded Dispatch API on loopback (an httptest server that answers the
// scripted responses of a golden file in order and records every request), the golden calls
// of testdata/calls (one valid call per tool, request/answer pairs taken from the conformance
// corpus conformance/tools/http.json), and SDK client sessions over the SDK's own transports.

// testHost is the host context of the in-process sessions; the stdio sessions get the same
// through the environment, except the host name and the working directory, which are the
// machine's ({host} and {cwd} in the golden request bodies).
var testHost = client.Host{SessionID: "ses_1", Name: "devbox", Machine: "m1", Cwd: "/work/app", Tmux: "main", Pane: "%3", SessionTitle: "Fix the parser"}

const testToken = "tok_test"

// exchange is one scripted request/answer pair.
type exchange struct {
	method, path string
	query        *jsonvalue.Object // nil: the request has no query string
	body         any               // the JSON body as a value; hasBody false: no body
	hasBody      bool
	status       int
	contentType  string
	answer       string
}

// golden is one golden call: the arguments as raw JSON text, the exchanges it must make, and
// its result text and structured content.
type golden struct {
	file, tool, args string
	exchanges        []exchange
	text             string
	structured       any
	hasStructured    bool
}

func loadGoldens(t testing.TB) []golden {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "calls", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden calls: %v", err)
	}
	var out []golden
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonvalue.ParseObject(data, filepath.Base(f))
		if err != nil {
			t.Fatal(err)
		}
		g := golden{file: filepath.Base(f)}
		g.tool = str(doc, "tool")
		g.args = str(doc, "arguments")
		exs, _ := doc.Get("exchanges")
		for _, raw := range exs.([]any) {
			ex := raw.(*jsonvalue.Object)
			reqV, _ := ex.Get("request")
			respV, _ := ex.Get("response")
			req, resp := reqV.(*jsonvalue.Object), respV.(*jsonvalue.Object)
			e := exchange{method: str(req, "method"), path: str(req, "path"), answer: str(resp, "body"), contentType: "application/json"}
			if q, ok := req.Get("query"); ok {
				e.query = q.(*jsonvalue.Object)
			}
			e.body, e.hasBody = req.Get("body")
			st, _ := resp.Get("status")
			e.status = int(st.(float64))
			if ct := str(resp, "content_type"); ct != "" {
				e.contentType = ct
			}
			g.exchanges = append(g.exchanges, e)
		}
		rv, _ := doc.Get("result")
		res := rv.(*jsonvalue.Object)
		g.text = str(res, "text")
		g.structured, g.hasStructured = res.Get("structured")
		out = append(out, g)
	}
	return out
}

func str(o *jsonvalue.Object, key string) string {
	v, _ := o.Get(key)
	s, _ := v.(string)
	return s
}

// update makes TestCallGoldens write the structuredContent of golden calls that pin none yet
// (their texts and requests come from the conformance corpus and are never rewritten).
var update = flag.Bool("update", false, "write missing structuredContent into testdata/calls")

func writeStructured(t *testing.T, file string, v any) {
	t.Helper()
	p := filepath.Join("testdata", "calls", file)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonvalue.ParseObject(data, file)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := doc.Get("result")
	res.(*jsonvalue.Object).Set("structured", v)
	out := append(jsonvalue.AppendIndented(nil, doc, "  ", 0), '\n')
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// recorded is one request the Dispatch server received.
type recorded struct {
	method, path, rawQuery string
	header                 http.Header
	body                   []byte
}

// dispatchAPI is the recorded Dispatch API: it answers the loaded script in order and records
// every request; a request beyond the script is answered 418.
type dispatchAPI struct {
	*httptest.Server
	mu     sync.Mutex
	script []exchange
	got    []recorded
}

func newDispatchAPI(t testing.TB) *dispatchAPI {
	d := &dispatchAPI{}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		i := len(d.got)
		d.got = append(d.got, recorded{method: r.Method, path: r.URL.EscapedPath(), rawQuery: r.URL.RawQuery, header: r.Header.Clone(), body: body})
		var ex *exchange
		if i < len(d.script) {
			ex = &d.script[i]
		}
		d.mu.Unlock()
		if ex == nil {
			http.Error(w, "unscripted request", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", ex.contentType)
		w.WriteHeader(ex.status)
		_, _ = io.WriteString(w, ex.answer)
	}))
	t.Cleanup(d.Close)
	return d
}

// load replaces the script and forgets the recorded requests.
func (d *dispatchAPI) load(script []exchange) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.script, d.got = script, nil
}

func (d *dispatchAPI) requests() []recorded {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.got)
}

// check compares the recorded requests with the script: method, escaped path, decoded query,
// the JSON body as a value (after replacing {host} and {cwd} in the expected one), the bearer
// token and Accept on every request.
func (d *dispatchAPI) check(t *testing.T, script []exchange, repl *strings.Replacer) {
	t.Helper()
	got := d.requests()
	if len(got) != len(script) {
		t.Errorf("%d requests, want %d", len(got), len(script))
	}
	for i := 0; i < len(got) && i < len(script); i++ {
		g, w := got[i], script[i]
		if g.method != w.method || g.path != w.path {
			t.Errorf("request %d: %s %s, want %s %s", i, g.method, g.path, w.method, w.path)
		}
		if g.header.Get("Authorization") != "Bearer "+testToken || g.header.Get("Accept") != "application/json" {
			t.Errorf("request %d headers %v", i, g.header)
		}
		if w.query == nil {
			if g.rawQuery != "" {
				t.Errorf("request %d: query %q, want none", i, g.rawQuery)
			}
		} else {
			q := queryValues(g.rawQuery)
			if q.Len() != w.query.Len() || !jsonvalue.Equal(q, w.query) {
				qs, _ := jsonvalue.Marshal(w.query)
				t.Errorf("request %d: query %q, want %s", i, g.rawQuery, qs)
			}
		}
		if !w.hasBody {
			if len(g.body) != 0 {
				t.Errorf("request %d: body %s, want none", i, g.body)
			}
			continue
		}
		wantText, _ := jsonvalue.Marshal(w.body)
		want, _ := jsonvalue.Parse([]byte(repl.Replace(string(wantText))), "want")
		gotV, err := jsonvalue.Parse(g.body, "body")
		if err != nil || !jsonvalue.Equal(gotV, want) {
			t.Errorf("request %d body\n got %s\nwant %s", i, g.body, repl.Replace(string(wantText)))
		}
	}
}

// queryValues decodes a raw query into an object of strings (the corpus's form).
func queryValues(raw string) *jsonvalue.Object {
	o := jsonvalue.NewObject(4)
	if raw == "" {
		return o
	}
	for _, kv := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(kv, "=")
		k, _ = unescape(k)
		v, _ = unescape(v)
		o.Set(k, v)
	}
	return o
}

func unescape(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s)+0 && i+2 <= len(s)-1 {
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return s, false
			}
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

// resultText joins the text contents of a tool result.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured returns the structured content of a result as a jsonvalue value (nil when none).
func structured(t testing.TB, res *sdk.CallToolResult) any {
	t.Helper()
	if res.StructuredContent == nil {
		return nil
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonvalue.Parse(data, "structuredContent")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// callArgs is the CallTool arguments for a raw JSON text: absent when empty.
func callArgs(args string) any {
	if strings.TrimSpace(args) == "" {
		return nil
	}
	return json.RawMessage(args)
}

// runGolden runs one golden call on a session and checks everything it pins.
func runGolden(t *testing.T, cs *sdk.ClientSession, api *dispatchAPI, g golden, repl *strings.Replacer) {
	t.Helper()
	api.load(g.exchanges)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: g.tool, Arguments: callArgs(repl.Replace(g.args))})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	if res.IsError {
		t.Errorf("isError: %s", resultText(res))
	}
	if got, want := resultText(res), repl.Replace(g.text); got != want {
		t.Errorf("text\n got %q\nwant %q", got, want)
	}
	got := structured(t, res)
	if got != nil && !g.hasStructured && *update {
		writeStructured(t, g.file, got)
		g.structured, g.hasStructured = got, true
	}
	if got == nil {
		t.Error("no structuredContent")
	} else if !g.hasStructured {
		t.Errorf("%s pins no structuredContent (go test -run TestCallGoldens -update writes it)", g.file)
	} else if g.hasStructured && !jsonvalue.Equal(got, g.structured) {
		gs, _ := jsonvalue.Marshal(got)
		ws, _ := jsonvalue.Marshal(g.structured)
		t.Errorf("structuredContent\n got %s\nwant %s", gs, ws)
	}
	api.check(t, g.exchanges, repl)
}

// inProcess connects an SDK client to a server of exec over the SDK's in-memory transports.
func inProcess(t testing.TB, exec *client.Client) *sdk.ClientSession {
	t.Helper()
	cs, _ := inProcessRaw(t, exec)
	return cs
}

// inProcessRaw is inProcess that also records every response result the client reads and
// keeps the client's connection.
func inProcessRaw(t testing.TB, exec *client.Client) (*sdk.ClientSession, *rawLog) {
	t.Helper()
	srv := dmcp.New(exec, dmcp.Options{})
	st, ct := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := &rawLog{}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agentwire-test", Version: "1"}, nil).Connect(ctx, &rawTransport{ct, log}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs, log
}

// rawTransport records the raw result of every response the client reads, to compare the
// exact bytes of the wire (the SDK decodes results into Go maps, which lose member order).
type rawTransport struct {
	sdk.Transport
	log *rawLog
}

type rawLog struct {
	mu      sync.Mutex
	results []json.RawMessage
	conn    sdk.Connection // the client's connection, to close it under the session
}

func (l *rawLog) all() []json.RawMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.results)
}

func (t *rawTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.log.mu.Lock()
	t.log.conn = c
	t.log.mu.Unlock()
	return &rawConn{Connection: c, log: t.log}, nil
}

type rawConn struct {
	sdk.Connection
	log *rawLog
}

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && err == nil {
		c.log.mu.Lock()
		c.log.results = append(c.log.results, slices.Clone(r.Result))
		c.log.mu.Unlock()
	}
	return m, err
}

// inProcessReplacer fills the golden placeholders for the in-process host.
func inProcessReplacer(api *dispatchAPI) *strings.Replacer {
	return strings.NewReplacer("{base}", api.URL, "{host}", testHost.Name, "{cwd}", testHost.Cwd)
}

func newExec(url string) *client.Client {
	return client.New(client.Config{URL: url, Token: testToken, Host: testHost})
}

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// checkUnreachable checks the transport failure text of §8.1 for a refused connection.
func checkUnreachable(t *testing.T, res *sdk.CallToolResult, url string) {
	t.Helper()
	want := "Dispatch at " + url + " is unreachable: dial tcp " + strings.TrimPrefix(url, "http://") +
		": connect: connection refused. If the Dispatch URL changed, restart this agent process so it picks up the new configuration."
	if !res.IsError || resultText(res) != want {
		t.Errorf("isError %v text\n got %q\nwant %q", res.IsError, resultText(res), want)
	}
}
