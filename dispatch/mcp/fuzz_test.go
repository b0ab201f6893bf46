package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwire/agentwire/dispatch"
	dmcp "github.com/agentwire/agentwire/dispatch/mcp"
)

// FuzzMCPCall feeds arbitrary argument bytes to the tools/call entry point. Server.Call (what
// the SDK's low-level handler runs on the raw `arguments` of the message) must answer every
// byte string with a tool result, never a protocol error, and the same text twice. When the
// bytes are a JSON text the SDK carries (valid JSON syntax, invalid UTF-8 and duplicate names
// included, nesting within the SDK's message limit), the same call through the SDK client over
// the in-process transport must also be a tool result with the same text: the SDK neither
// refuses nor rewrites the arguments before our strict parse. The executor points at a port
// nothing listens on, so an accepted call ends as the deterministic transport failure.
func FuzzMCPCall(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `"DSP-1"`, `[]`, `{"issue":"DSP-1"}`, sevenProblems,
		`{"project":"DSP","title":"a","title":"b"}`, "{\"title\":\"\xff\"}", `{"title":"\ud800"}`,
		`{"priority":1e400}`, `{"a":` + strings.Repeat("[", 140) + strings.Repeat("]", 140) + `}`,
		`{"issue":"DSP-1","question":"Q","options":[{"label":"Yes"},"No"],"urgency":"urgent","kind":"approval"}`,
		`{"ask":"01234567-0000-4000-8000-000000000001","action":"follow"}`, `{"query":"a"}`, `{"a":1`, `{} {}`,
	} {
		for tool := range 3 {
			f.Add(uint8(tool*7), []byte(seed))
		}
	}
	exec := newExec(closedURL(f))
	srv := dmcp.New(exec, dmcp.Options{})
	cs := inProcess(f, exec)
	names := dispatch.Names()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, pick uint8, args []byte) {
		tool := names[int(pick)%len(names)]
		var raw json.RawMessage
		if args != nil {
			raw = args
		}
		first := srv.Call(ctx, tool, raw)
		again := srv.Call(ctx, tool, raw)
		if first == nil || len(first.Content) != 1 || resultText(first) == "" {
			t.Fatalf("no result: %+v", first)
		}
		if resultText(first) != resultText(again) || first.IsError != again.IsError {
			t.Fatalf("not deterministic:\n%q\n%q", resultText(first), resultText(again))
		}
		if !first.IsError {
			t.Fatalf("a call against a closed port succeeded: %q", resultText(first))
		}
		if len(strings.TrimSpace(string(args))) == 0 || !json.Valid(args) || nesting(args) > sdkMessageDepth-2 {
			return
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("protocol error for %q: %v", args, err)
		}
		if resultText(res) != resultText(first) || !res.IsError {
			t.Fatalf("over MCP:\n%q\ndirect:\n%q", resultText(res), resultText(first))
		}
	})
}

// sdkMessageDepth is the nesting limit the SDK's JSON decoder puts on a whole JSON-RPC message
// (its internal json package); the arguments sit two levels down (message, params).
const sdkMessageDepth = 1000

// nesting returns the deepest nesting of objects and arrays in a JSON text.
func nesting(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
