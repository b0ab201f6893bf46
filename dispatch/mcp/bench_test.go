package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwire/agentwire/dispatch"
)

// BenchmarkMCPRefusal is a tools/call round trip of a refused call over the SDK's in-process
// transport: the client encodes the request, the server decodes it, the executor parses the raw
// arguments and renders the refusal, and the client decodes the result. The call is the
// 7-problem dispatch_issue call of package dispatch's BenchmarkRefusal (which times only the
// parse and the rendering of an already decoded value); run both in one go test run to read the
// MCP layer's own cost as their ratio:
//
//	go test -run='^$' -bench='Refusal$' -count=5 ./dispatch/ ./dispatch/mcp/
func BenchmarkMCPRefusal(b *testing.B) {
	cs := inProcess(b, newExec("http://127.0.0.1:1"))
	params := &sdk.CallToolParams{Name: dispatch.ToolIssue, Arguments: json.RawMessage(sevenProblems)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || !res.IsError {
			b.Fatal(err, res)
		}
	}
}
