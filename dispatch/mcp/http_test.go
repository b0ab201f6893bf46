package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwire/agentwire/dispatch"
	dmcp "github.com/agentwire/agentwire/dispatch/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// TestHTTPLocalRules: the streamable HTTP handler applies the relay's local-mode rules to every
// request before the SDK sees it: a non-loopback Host and a present non-loopback Origin are
// refused with 403, a POST body that is not application/json with 415, all with the relay's
// error body; loopback requests reach the SDK.
func TestHTTPLocalRules(t *testing.T) {
	srv := dmcp.New(newExec(""), dmcp.Options{})
	local := httptest.NewServer(srv.HTTPHandler(dmcp.HTTPOptions{}))
	defer local.Close()
	remote := httptest.NewServer(srv.HTTPHandler(dmcp.HTTPOptions{AllowRemote: true}))
	defer remote.Close()
	tests := []struct {
		name, method, host, origin, contentType string
		remote                                  bool
		status                                  int
		body                                    string // exact, "" = not checked (the SDK answered)
	}{
		{"rebinding host", "POST", "evil.test:80", "", "application/json", false, 403,
			`{"error":{"code":"forbidden","message":"Host \"evil.test:80\" is not a loopback name or address: agentwire dispatch mcp answers only localhost, 127.0.0.0/8 and [::1].","field":"Host"}}`},
		{"rebinding host on GET", "GET", "localhost.evil.test", "", "", false, 403,
			`{"error":{"code":"forbidden","message":"Host \"localhost.evil.test\" is not a loopback name or address: agentwire dispatch mcp answers only localhost, 127.0.0.0/8 and [::1].","field":"Host"}}`},
		{"foreign origin", "POST", "", "https://evil.test", "application/json", false, 403,
			`{"error":{"code":"forbidden","message":"Origin \"https://evil.test\" is not allowed: agentwire dispatch mcp answers only pages served from a loopback address.","field":"Origin"}}`},
		{"opaque origin", "POST", "", "null", "application/json", false, 403,
			`{"error":{"code":"forbidden","message":"Origin \"null\" is not allowed: agentwire dispatch mcp answers only pages served from a loopback address.","field":"Origin"}}`},
		{"foreign origin with allow-remote", "POST", "", "https://evil.test", "application/json", true, 403,
			`{"error":{"code":"forbidden","message":"Origin \"https://evil.test\" is not allowed: agentwire dispatch mcp answers only pages served from a loopback address.","field":"Origin"}}`},
		{"simple cross-site POST", "POST", "", "", "text/plain", false, 415,
			`{"error":{"code":"unsupported_media_type","message":"Content-Type must be application/json, got \"text/plain\".","field":"Content-Type"}}`},
		{"form POST", "POST", "", "", "application/x-www-form-urlencoded", false, 415,
			`{"error":{"code":"unsupported_media_type","message":"Content-Type must be application/json, got \"application/x-www-form-urlencoded\".","field":"Content-Type"}}`},
		{"no content type", "POST", "", "", "", false, 415,
			`{"error":{"code":"unsupported_media_type","message":"Content-Type must be application/json.","field":"Content-Type"}}`},
		{"malformed content type", "POST", "", "", "application/json; charset", false, 415,
			`{"error":{"code":"unsupported_media_type","message":"Content-Type \"application/json; charset\" is malformed.","field":"Content-Type"}}`},
		{"latin-1 JSON", "POST", "", "", "application/json; charset=latin1", false, 415,
			`{"error":{"code":"unsupported_media_type","message":"Content-Type charset must be utf-8, got \"latin1\".","field":"Content-Type"}}`},
		{"loopback", "POST", "", "", "application/json", false, 200, ""},
		{"loopback origin and charset", "POST", "localhost", "http://localhost:5173", "application/json; charset=utf-8", false, 200, ""},
		{"IPv6 loopback host", "POST", "[::1]:7421", "http://127.0.0.1:3000", "application/json", false, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := local.URL
			if tc.remote {
				base = remote.URL
			}
			var body io.Reader
			if tc.method == "POST" {
				body = strings.NewReader(initializeBody)
			}
			req, _ := http.NewRequest(tc.method, base+"/", body)
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, got, tc.status)
			}
			if tc.body != "" {
				if string(got) != tc.body+"\n" || resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("body %s (%s)", got, resp.Header.Get("Content-Type"))
				}
			}
		})
	}
}

// TestHTTPSession: the SDK's own client over the streamable HTTP transport lists the twenty
// tools, runs a golden call and gets a refusal as a tool result.
func TestHTTPSession(t *testing.T) {
	api := newDispatchAPI(t)
	srv := dmcp.New(newExec(api.URL), dmcp.Options{})
	hs := httptest.NewServer(srv.HTTPHandler(dmcp.HTTPOptions{}))
	defer hs.Close()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agentwire-test", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != 20 {
		t.Fatalf("list: %v", err)
	}
	repl := inProcessReplacer(api)
	for _, g := range loadGoldens(t) {
		if g.tool == dispatch.ToolMessage || g.tool == dispatch.ToolRead {
			t.Run(g.file, func(t *testing.T) { runGolden(t, cs, api, g, repl) })
		}
	}
	rc := refusalCases()[0]
	api.load(nil)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: rc.tool, Arguments: callArgs(rc.args)})
	if err != nil || !res.IsError || resultText(res) != rc.text {
		t.Fatalf("refusal: %v %+v", err, res)
	}
}
