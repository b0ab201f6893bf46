package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/dispatch/client"
)

// TestDecodeErrorAnswer pins the error mapping of dispatch-tools.md §8.8: a JSON error object is
// a DispatchServiceError rendered `<CODE>: <message>` with its clauses, anything else a
// DispatchGatewayError with code `HTTP_<status>`.
func TestDecodeErrorAnswer(t *testing.T) {
	const u = "https://dispatch.test/api/v1/x"
	tests := []struct {
		name    string
		method  string
		status  int
		body    string
		service bool
		code    string
		message string
	}{
		{"code and error", "POST", 409, `{"error":"https://a.test is linked to DSP-9","code":"EXTERNAL_LINK_TAKEN"}`, true,
			"EXTERNAL_LINK_TAKEN", "EXTERNAL_LINK_TAKEN: https://a.test is linked to DSP-9"},
		{"error without code", "POST", 500, `{"error":"boom"}`, true, "HTTP_500", "HTTP_500: boom"},
		{"code without error", "GET", 404, `{"code":"NOT_FOUND"}`, true, "NOT_FOUND", "NOT_FOUND: Dispatch answered HTTP 404"},
		{"empty object", "GET", 418, ` {} `, true, "HTTP_418", "HTTP_418: Dispatch answered HTTP 418"},
		{"unknown members ignored", "GET", 400, `{"error":"bad","code":"INVALID_LIMIT","hint":{"x":1}}`, true, "INVALID_LIMIT", "INVALID_LIMIT: bad"},
		{"precondition clauses", "POST", 409, `{"error":"stale","code":"PRECONDITION_FAILED","current":{"document":"d2","blocks":[]},` +
			`"mismatches":[{"scope":"document","expected":"d1","current":"d2"},{"scope":"block","block_id":"b1","expected":"x","current":"y"},` +
			`{"scope":"block","block_id":"b2","expected":"x","current":null}]}`, true, "PRECONDITION_FAILED",
			"PRECONDITION_FAILED: stale; current document token d2; block b1 token is now y; block b2 is gone"},
		{"precondition without current", "POST", 409, `{"error":"stale","code":"PRECONDITION_FAILED"}`, true, "PRECONDITION_FAILED",
			"PRECONDITION_FAILED: stale"},
		{"target candidates", "POST", 400, `{"error":"ambiguous","code":"INVALID_OP","candidates":[{"from":1,"to":2,"context":"a \"b\""},{"from":3,"to":4,"context":"c"}]}`,
			true, "INVALID_OP", `INVALID_OP: ambiguous; candidates: "a \"b\"", "c"`},
		{"duplicate candidates are no target clause", "POST", 409, `{"error":"dup","code":"POSSIBLE_DUPLICATE","candidates":[{"key":"DSP-9","title":"t","status":"todo","snippet":"s","shared_terms":1,"href":"/issues/DSP-9"}]}`,
			true, "POSSIBLE_DUPLICATE", "POSSIBLE_DUPLICATE: dup"},
		{"HTML", "POST", 502, "<html>\n<body>Bad</body></html>", false, "HTTP_502",
			"Dispatch gateway error: POST " + u + " answered HTTP 502: <html> <body>Bad</body></html>. This is usually transient, but the request may have reached Dispatch: check the current state before retrying a write."},
		{"JSON array", "GET", 400, `[1]`, false, "HTTP_400", "Dispatch gateway error: GET " + u + " answered HTTP 400: [1]. Retrying will not help."},
		{"JSON string", "GET", 500, `"boom"`, false, "HTTP_500", `Dispatch gateway error: GET ` + u + ` answered HTTP 500: "boom". This is usually transient, but the request may have reached Dispatch: check the current state before retrying a write.`},
		{"error of the wrong type", "GET", 400, `{"error":42}`, false, "HTTP_400", `Dispatch gateway error: GET ` + u + ` answered HTTP 400: {"error":42}. Retrying will not help.`},
		{"truncated JSON", "GET", 503, `{"error":"x"`, false, "HTTP_503", `Dispatch gateway error: GET ` + u + ` answered HTTP 503: {"error":"x". This is usually transient, but the request may have reached Dispatch: check the current state before retrying a write.`},
		{"408", "GET", 408, ``, false, "HTTP_408", `Dispatch gateway error: GET ` + u + ` answered HTTP 408: (empty body). This is transient; retry after a short wait.`},
		{"token redacted", "GET", 401, "bad token tok_secret", false, "HTTP_401", `Dispatch gateway error: GET ` + u + ` answered HTTP 401: bad token [redacted]. Retrying will not help.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := client.DecodeErrorAnswer(tt.method, u, tt.status, []byte(tt.body), "tok_secret")
			var se *client.DispatchServiceError
			var ge *client.DispatchGatewayError
			if tt.service && !errors.As(err, &se) || !tt.service && !errors.As(err, &ge) {
				t.Fatalf("%T %v", err, err)
			}
			if client.ErrorCode(err) != tt.code {
				t.Errorf("code %q, want %q", client.ErrorCode(err), tt.code)
			}
			if err.Error() != tt.message {
				t.Errorf("message\n got %s\nwant %s", err.Error(), tt.message)
			}
		})
	}
}

// TestDuplicateCandidates decodes POSSIBLE_DUPLICATE candidates.
func TestDuplicateCandidates(t *testing.T) {
	err := client.DecodeErrorAnswer("POST", "u", 409, []byte(`{"code":"POSSIBLE_DUPLICATE","candidates":[{"key":"DSP-9","title":"t","status":"todo","snippet":"s","shared_terms":2,"href":"/issues/DSP-9"}]}`), "")
	se := err.(*client.DispatchServiceError)
	cands := se.DuplicateCandidates()
	if len(cands) != 1 || cands[0].Key != "DSP-9" || cands[0].SharedTerms != 2 {
		t.Fatalf("%+v", cands)
	}
	err = client.DecodeErrorAnswer("POST", "u", 409, []byte(`{"code":"POSSIBLE_DUPLICATE","candidates":{"x":1}}`), "")
	if got := err.(*client.DispatchServiceError).DuplicateCandidates(); got != nil {
		t.Fatalf("%+v", got)
	}
}

// TestExcerpt: the gateway excerpt collapses white space, redacts the token and cuts at 200
// UTF-16 code units without splitting a surrogate pair.
func TestExcerpt(t *testing.T) {
	long := strings.Repeat("a", 199) + "😀b"
	tests := []struct{ name, body, token, want string }{
		{"empty", "", "t", "(empty body)"},
		{"white space only", " \n\t ", "t", "(empty body)"},
		{"collapse", "  a \n\n b\t", "t", "a b"},
		{"redact", "x tok tokx", "tok", "x [redacted] [redacted]x"},
		{"redact before collapsing", "Bearer to\nk", "to\nk", "Bearer [redacted]"},
		{"no token", "tok", "", "tok"},
		{"exactly 200", strings.Repeat("é", 200), "", strings.Repeat("é", 200)},
		{"cut", strings.Repeat("x", 250), "", strings.Repeat("x", 200) + "…"},
		{"surrogate pair kept whole", long, "", strings.Repeat("a", 199) + "…"},
		{"invalid UTF-8", "a\xffb", "", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := client.Excerpt([]byte(tt.body), tt.token); got != tt.want {
				t.Errorf("got %q want %q", got, tt.want)
			}
		})
	}
}

// TestGatewayAdvice: 5xx transient but possibly applied, 408/429 retry later, else no retry.
func TestGatewayAdvice(t *testing.T) {
	transient := "This is usually transient, but the request may have reached Dispatch: check the current state before retrying a write."
	for status, want := range map[int]string{
		500: transient, 502: transient, 599: transient, 408: "This is transient; retry after a short wait.",
		429: "This is transient; retry after a short wait.", 200: "Retrying will not help.", 404: "Retrying will not help.",
		400: "Retrying will not help.", 600: "Retrying will not help.",
	} {
		if got := client.GatewayAdvice(status); got != want {
			t.Errorf("%d: %q", status, got)
		}
	}
}

// TestUnreachable: a transport failure names DISPATCH_URL and the transport error (§8.1).
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/"
	l.Close()
	c := client.New(client.Config{URL: base, Token: "t", Host: testHost})
	_, err = c.Call(context.Background(), dispatch.ToolWhoami, nil)
	if err == nil {
		t.Fatal("no error")
	}
	// nil arguments are JSON null: refused before any request.
	if !strings.Contains(err.Error(), "arguments must be an object, not null") {
		t.Fatalf("%v", err)
	}
	_, err = c.CallJSON(context.Background(), dispatch.ToolWhoami, nil)
	var ue *client.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("%T %v", err, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "Dispatch at "+base+" is unreachable: ") ||
		!strings.HasSuffix(msg, ". If the Dispatch URL changed, restart this agent process so it picks up the new configuration.") ||
		strings.Contains(msg, `Get "`) {
		t.Fatalf("%s", msg)
	}
}

// TestDeadline: a request past its deadline is a transport failure. The server blocks until the
// client gives up; no wall-clock value is asserted.
func TestDeadline(t *testing.T) {
	release := make(chan struct{})
	f := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer f.Close()
	defer close(release)
	c := client.New(client.Config{URL: f.URL, Token: "t", Timeout: 20 * time.Millisecond})
	_, err := c.Whoami(context.Background())
	var ue *client.UnreachableError
	if !errors.As(err, &ue) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%T %v", err, err)
	}
	if !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("%v", err)
	}
}
