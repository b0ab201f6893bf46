package conformance_test

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/dispatch/client"
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
		if base == "registry.json" || base == httpCorpusFile {
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
	t.Logf("%d tools cases in %d files", total, len(files)-2)
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

// ---- the executor against a fake Dispatch server: conformance/tools/http.json ----

// httpCorpusFile holds the [H] cases of dispatch-tools.md §10 (65–70) and agentwire's own
// executor cases (format in conformance/tools/README.md). Each case is replayed against a real
// httptest.Server on loopback that answers the scripted responses in order and records every
// request the client sends.
const httpCorpusFile = "http.json"

var (
	httpCaseMembers     = []string{"name", "spec_case", "tool", "config", "host", "subscribed", "files", "arguments", "exchanges", "unreachable", "result", "error"}
	httpRequestMembers  = []string{"method", "path", "query", "headers", "body", "multipart"}
	httpResponseMembers = []string{"status", "content_type", "body"}
	httpErrorKinds      = []string{"disabled", "input", "service", "gateway", "unreachable", "call"}
)

// recordedRequest is one request the fake server received.
type recordedRequest struct {
	method, path, rawQuery string
	query                  url.Values
	header                 http.Header
	body                   []byte
}

func TestToolsHTTP(t *testing.T) {
	doc := loadToolsFile(t, httpCorpusFile)
	v, _ := doc.Get("cases")
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		t.Fatal("http.json: cases must be a non-empty array")
	}
	covered := map[int]bool{}
	names := map[string]bool{}
	for _, raw := range list {
		c := raw.(*jsonvalue.Object)
		name, _ := toolsString(t, c, "name", httpCorpusFile)
		if names[name] {
			t.Fatalf("duplicate case name %q", name)
		}
		names[name] = true
		if n, ok := c.Get("spec_case"); ok {
			covered[int(n.(float64))] = true
		}
		t.Run(name, func(t *testing.T) { runHTTPCase(t, c) })
	}
	// Every [H] case of §10 (65–70) is in the corpus.
	for n := 65; n <= 70; n++ {
		if !covered[n] {
			t.Errorf("spec conformance case %d has no http case", n)
		}
	}
}

func httpObject(t *testing.T, v any, where string, allowed []string) *jsonvalue.Object {
	t.Helper()
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		t.Fatalf("%s must be an object", where)
	}
	for _, k := range o.Keys() {
		if !slices.Contains(allowed, k) {
			t.Fatalf("%s: unknown member %q", where, k)
		}
	}
	return o
}

// expand replaces the placeholders {base} (the client's DISPATCH_URL without trailing slash) and
// {files} (the case's file directory) in every string of an expected value.
func expand(v any, repl *strings.Replacer) any {
	switch x := v.(type) {
	case string:
		return repl.Replace(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expand(e, repl)
		}
		return out
	case *jsonvalue.Object:
		o := jsonvalue.NewObject(x.Len())
		for _, m := range x.Members() {
			o.Set(m.Name, expand(m.Value, repl))
		}
		return o
	}
	return v
}

func runHTTPCase(t *testing.T, c *jsonvalue.Object) {
	for _, k := range c.Keys() {
		if !slices.Contains(httpCaseMembers, k) {
			t.Fatalf("unknown case member %q", k)
		}
	}
	tool, _ := toolsString(t, c, "tool", "case")
	args, ok := toolsString(t, c, "arguments", "case")
	if !ok {
		t.Fatal("arguments missing")
	}
	var exchanges []any
	if v, ok := c.Get("exchanges"); ok {
		exchanges, _ = v.([]any)
	}

	// The scripted responses, parsed before the server starts.
	type scripted struct {
		status   int
		ct, body string
	}
	responses := make([]scripted, len(exchanges))
	for i, raw := range exchanges {
		ex := httpObject(t, raw, "exchange", []string{"request", "response"})
		rv, _ := ex.Get("response")
		resp := httpObject(t, rv, "response", httpResponseMembers)
		responses[i].ct = "application/json"
		if s, ok := toolsString(t, resp, "content_type", "response"); ok {
			responses[i].ct = s
		}
		status, isNum := func() (float64, bool) { v, _ := resp.Get("status"); f, ok := v.(float64); return f, ok }()
		if !isNum {
			t.Fatal("response.status must be a number")
		}
		responses[i].status = int(status)
		responses[i].body, _ = toolsString(t, resp, "body", "response")
	}

	// The fake server: answers the scripted responses in order, records every request.
	var mu sync.Mutex
	var got []recordedRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		i := len(got)
		got = append(got, recordedRequest{method: r.Method, path: r.URL.EscapedPath(), rawQuery: r.URL.RawQuery,
			query: r.URL.Query(), header: r.Header.Clone(), body: body})
		mu.Unlock()
		if i >= len(responses) {
			http.Error(w, "unscripted request", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", responses[i].ct)
		w.WriteHeader(responses[i].status)
		_, _ = io.WriteString(w, responses[i].body)
	}))
	defer srv.Close()

	cfg := client.Config{URL: srv.URL, Token: "tok_test"}
	if uv, ok := c.Get("unreachable"); ok && uv == true {
		// A port nothing listens on: bind, then close.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cfg.URL = "http://" + l.Addr().String()
		l.Close()
	}
	if v, ok := c.Get("config"); ok {
		co := httpObject(t, v, "config", []string{"url", "url_suffix", "token"})
		if s, ok := toolsString(t, co, "url", "config"); ok {
			cfg.URL = s
		}
		if s, ok := toolsString(t, co, "url_suffix", "config"); ok {
			cfg.URL += s
		}
		if s, ok := toolsString(t, co, "token", "config"); ok {
			cfg.Token = s
		}
	}
	filesDir := t.TempDir()
	if v, ok := c.Get("files"); ok {
		fo, ok := v.(*jsonvalue.Object)
		if !ok {
			t.Fatal("files must be an object")
		}
		for _, m := range fo.Members() {
			if err := os.WriteFile(filepath.Join(filesDir, m.Name), []byte(m.Value.(string)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	repl := strings.NewReplacer("{base}", strings.TrimRight(cfg.URL, "/"), "{files}", filesDir)
	if v, ok := c.Get("host"); ok {
		ho := httpObject(t, v, "host", []string{"session_id", "host", "machine", "cwd", "tmux", "pane", "session_title", "legion_issue", "github_repo"})
		h := &cfg.Host
		fields := map[string]*string{"session_id": &h.SessionID, "host": &h.Name, "machine": &h.Machine, "cwd": &h.Cwd,
			"tmux": &h.Tmux, "pane": &h.Pane, "session_title": &h.SessionTitle, "legion_issue": &h.LegionIssue, "github_repo": &h.GitHubRepo}
		for _, m := range ho.Members() {
			s, ok := m.Value.(string)
			if !ok {
				t.Fatalf("host.%s must be a string", m.Name)
			}
			*fields[m.Name] = repl.Replace(s)
		}
	}
	if v, ok := c.Get("subscribed"); ok {
		var topics []string
		for _, s := range v.([]any) {
			topics = append(topics, s.(string))
		}
		cfg.Subscribed = func(topic string) bool { return slices.Contains(topics, topic) }
	}

	cl := client.New(cfg)
	result, err := cl.CallJSON(context.Background(), tool, []byte(repl.Replace(args)))

	// Outcome.
	rv, hasResult := c.Get("result")
	ev, hasError := c.Get("error")
	if hasResult == hasError {
		t.Fatal("a case has exactly one of result and error")
	}
	if hasResult {
		if err != nil {
			t.Fatalf("call failed: %v", err)
		}
		ro := httpObject(t, rv, "result", []string{"text", "details"})
		if text, ok := toolsString(t, ro, "text", "result"); ok && result.Text != repl.Replace(text) {
			t.Errorf("result text:\n got:\n%s\nwant:\n%s", result.Text, repl.Replace(text))
		}
		if want, ok := ro.Get("details"); ok && !jsonvalue.Equal(result.Details, expand(want, repl)) {
			g, _ := jsonvalue.Marshal(result.Details)
			w, _ := jsonvalue.Marshal(expand(want, repl))
			t.Errorf("details:\n got %s\nwant %s", g, w)
		}
	} else {
		eo := httpObject(t, ev, "error", []string{"kind", "code", "message", "message_prefix"})
		if err == nil {
			t.Fatalf("call succeeded: %q", result.Text)
		}
		kind, _ := toolsString(t, eo, "kind", "error")
		if !slices.Contains(httpErrorKinds, kind) {
			t.Fatalf("error kind %q", kind)
		}
		checkHTTPErrorKind(t, kind, err)
		if code, ok := toolsString(t, eo, "code", "error"); ok && client.ErrorCode(err) != code {
			t.Errorf("error code %q want %q", client.ErrorCode(err), code)
		}
		if msg, ok := toolsString(t, eo, "message", "error"); ok && err.Error() != repl.Replace(msg) {
			t.Errorf("error:\n got:\n%s\nwant:\n%s", err.Error(), repl.Replace(msg))
		}
		if msg, ok := toolsString(t, eo, "message_prefix", "error"); ok && !strings.HasPrefix(err.Error(), repl.Replace(msg)) {
			t.Errorf("error:\n got:\n%s\nwant prefix:\n%s", err.Error(), repl.Replace(msg))
		}
	}

	// Requests: exactly the scripted ones, in order, with their exact shapes.
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(exchanges) {
		var seen []string
		for _, r := range got {
			seen = append(seen, r.method+" "+r.path+"?"+r.rawQuery)
		}
		t.Fatalf("server received %d requests, the case scripts %d: %q", len(got), len(exchanges), seen)
	}
	for i, raw := range exchanges {
		ex := raw.(*jsonvalue.Object)
		qv, _ := ex.Get("request")
		want := httpObject(t, expand(qv, repl), "request", httpRequestMembers)
		checkHTTPRequest(t, i, got[i], want, cfg.Token)
	}
}

func checkHTTPErrorKind(t *testing.T, kind string, err error) {
	t.Helper()
	var ok bool
	switch kind {
	case "disabled":
		ok = errors.Is(err, dispatch.ErrDisabled)
	case "input":
		var e *toolspec.ToolInputError
		ok = errors.As(err, &e)
	case "service":
		var e *client.DispatchServiceError
		ok = errors.As(err, &e)
	case "gateway":
		var e *client.DispatchGatewayError
		ok = errors.As(err, &e)
	case "unreachable":
		var e *client.UnreachableError
		ok = errors.As(err, &e)
	case "call":
		var e *client.CallError
		ok = errors.As(err, &e)
	}
	if !ok {
		t.Errorf("error %T (%v) is not of kind %s", err, err, kind)
	}
}

func checkHTTPRequest(t *testing.T, i int, got recordedRequest, want *jsonvalue.Object, token string) {
	t.Helper()
	where := "request " + strconv.Itoa(i)
	method, _ := toolsString(t, want, "method", where)
	path, _ := toolsString(t, want, "path", where)
	if got.method != method || got.path != path {
		t.Errorf("%s: %s %s, want %s %s", where, got.method, got.path, method, path)
	}
	// §10 case 70, on every request of the corpus.
	if a := got.header.Get("Authorization"); a != "Bearer "+token {
		t.Errorf("%s: Authorization %q", where, a)
	}
	if a := got.header.Get("Accept"); a != "application/json" {
		t.Errorf("%s: Accept %q", where, a)
	}
	if qv, ok := want.Get("query"); ok {
		q := qv.(*jsonvalue.Object)
		if len(got.query) != q.Len() {
			t.Errorf("%s: query %q, want %d parameters", where, got.rawQuery, q.Len())
		}
		for _, m := range q.Members() {
			if vals := got.query[m.Name]; len(vals) != 1 || vals[0] != m.Value {
				t.Errorf("%s: query %s=%q, want %q (raw %q)", where, m.Name, vals, m.Value, got.rawQuery)
			}
		}
	} else if got.rawQuery != "" {
		t.Errorf("%s: unexpected query %q", where, got.rawQuery)
	}
	if hv, ok := want.Get("headers"); ok {
		for _, m := range hv.(*jsonvalue.Object).Members() {
			if m.Value == nil {
				if _, present := got.header[http.CanonicalHeaderKey(m.Name)]; present {
					t.Errorf("%s: header %s present", where, m.Name)
				}
			} else if g := got.header.Get(m.Name); g != m.Value {
				t.Errorf("%s: header %s %q, want %q", where, m.Name, g, m.Value)
			}
		}
	}
	ct := got.header.Get("Content-Type")
	switch {
	case want.Has("body"):
		wantBody, _ := want.Get("body")
		if ct != "application/json" {
			t.Errorf("%s: Content-Type %q", where, ct)
		}
		gotBody, err := jsonvalue.Parse(got.body, "body")
		if err != nil {
			t.Fatalf("%s: body is not strict JSON: %v: %s", where, err, got.body)
		}
		if !jsonvalue.Equal(gotBody, wantBody) {
			w, _ := jsonvalue.Marshal(wantBody)
			t.Errorf("%s: body\n got %s\nwant %s", where, got.body, w)
		}
	case want.Has("multipart"):
		checkMultipart(t, where, ct, got.body, want)
	default:
		if len(got.body) != 0 || ct != "" {
			t.Errorf("%s: unexpected body %q (Content-Type %q)", where, got.body, ct)
		}
	}
}

// checkMultipart compares a multipart/form-data body with the expected parts, in order: each
// `{name, value}` (a text field), `{name, json}` (a field holding JSON text) or
// `{name, filename, value}` (a file).
func checkMultipart(t *testing.T, where, ct string, body []byte, want *jsonvalue.Object) {
	t.Helper()
	mediaType, params, err := mime.ParseMediaType(ct)
	if err != nil || mediaType != "multipart/form-data" {
		t.Fatalf("%s: Content-Type %q", where, ct)
	}
	r := multipart.NewReader(strings.NewReader(string(body)), params["boundary"])
	pv, _ := want.Get("multipart")
	parts := pv.([]any)
	for i, raw := range parts {
		wp := httpObject(t, raw, where+" part", []string{"name", "value", "json", "filename"})
		p, err := r.NextPart()
		if err != nil {
			t.Fatalf("%s: part %d: %v", where, i, err)
		}
		data, _ := io.ReadAll(p)
		name, _ := toolsString(t, wp, "name", "part")
		if p.FormName() != name {
			t.Errorf("%s: part %d is %q, want %q", where, i, p.FormName(), name)
		}
		if fn, ok := toolsString(t, wp, "filename", "part"); ok && p.FileName() != fn {
			t.Errorf("%s: part %s filename %q, want %q", where, name, p.FileName(), fn)
		}
		if s, ok := toolsString(t, wp, "value", "part"); ok && string(data) != s {
			t.Errorf("%s: part %s = %q, want %q", where, name, data, s)
		}
		if jv, ok := wp.Get("json"); ok {
			g, err := jsonvalue.Parse(data, name)
			if err != nil || !jsonvalue.Equal(g, jv) {
				w, _ := jsonvalue.Marshal(jv)
				t.Errorf("%s: part %s = %s, want %s", where, name, data, w)
			}
		}
	}
	if _, err := r.NextPart(); err != io.EOF {
		t.Errorf("%s: more parts than expected", where)
	}
}
