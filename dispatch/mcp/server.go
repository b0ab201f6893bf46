package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/dispatch/client"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/toolspec"
)

// DefaultName is the implementation name the server reports in its initialize answer.
const DefaultName = "agentwire-dispatch"

// MaxMessageBytes bounds one inbound JSON-RPC message (a stdio line, an HTTP request body): room
// for the inline content of an artifact as large as a file upload may be (25 MiB, §8.6) after
// JSON escaping. The SDK's own defaults (16 MiB for stdio, 4 MiB for HTTP) would cut such a
// call off as a transport failure instead of sending it.
const MaxMessageBytes = 64 << 20

// Options configures a [Server]. The zero value is usable.
type Options struct {
	// Name and Version are the implementation the server reports to MCP clients; empty Name is
	// [DefaultName], empty Version "dev".
	Name, Version string
	// Logger receives the SDK's log records; nil discards them.
	Logger *slog.Logger
}

// Server is the MCP server of the twenty Dispatch tools. Its calls run on one executor, which
// is safe for concurrent use; the server holds no other state.
type Server struct {
	exec *client.Client
	mcp  *sdk.Server
}

// New returns the server of the twenty tools, executing calls with exec. A disabled executor
// (blank DISPATCH_URL or DISPATCH_TOKEN) still lists its tools and answers every call with the
// disabled message of §8.1.
func New(exec *client.Client, opts Options) *Server {
	name, version := opts.Name, opts.Version
	if name == "" {
		name = DefaultName
	}
	if version == "" {
		version = "dev"
	}
	s := &Server{exec: exec}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: name, Version: version}, &sdk.ServerOptions{
		Instructions: "Dispatch tools: issues, documents, asks, comments and messages of a Dispatch server. " +
			"A refused call returns every problem at once with the allowed keys and an example; fix them all and call again.",
		Logger: opts.Logger,
	})
	for _, t := range Tools() {
		tool := t.Name
		s.mcp.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return s.Call(ctx, tool, req.Params.Arguments), nil
		})
	}
	return s
}

// MCP returns the SDK server, to run it on a transport of the caller's choice.
func (s *Server) MCP() *sdk.Server { return s.mcp }

// Run serves one MCP session on t until the client ends it or ctx is done.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error { return s.mcp.Run(ctx, t) }

// ServeIO serves one MCP session over newline-delimited JSON-RPC on r and w (stdio), lines up
// to [MaxMessageBytes], until r ends or ctx is done. A client that closes r cancels the calls
// in flight.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.mcp.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}, MaxLineLength: MaxMessageBytes})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// readOnly and idempotent name the tools whose MCP annotation hints are true: the tools that
// only read, and the one write the spec calls idempotent (§6.13: idempotent while a request
// is open).
var (
	readOnly = map[string]bool{
		dispatch.ToolDocRead: true, dispatch.ToolRead: true, dispatch.ToolSearch: true,
		dispatch.ToolIssues: true, dispatch.ToolOpenAsks: true, dispatch.ToolWhoami: true,
	}
	idempotent = map[string]bool{dispatch.ToolRequestApproval: true}
)

// Tools returns the MCP tool definitions of the suite, in suite order: name, description, the
// emitted JSON Schema as the input schema (compact, member order kept), and annotations where a
// hint is true.
func Tools() []*sdk.Tool {
	specs := dispatch.Specs()
	out := make([]*sdk.Tool, 0, len(specs))
	for _, spec := range specs {
		schema, err := jsonvalue.Marshal(spec.Schema())
		if err != nil {
			// The schemas are built from constant specs and always encode; a failure here is a
			// broken build, not a runtime condition.
			panic("dispatch/mcp: schema of " + spec.Name() + ": " + err.Error())
		}
		t := &sdk.Tool{Name: spec.Name(), Description: spec.Description(), InputSchema: json.RawMessage(schema)}
		switch {
		case readOnly[spec.Name()]:
			t.Annotations = &sdk.ToolAnnotations{ReadOnlyHint: true}
		case idempotent[spec.Name()]:
			t.Annotations = &sdk.ToolAnnotations{IdempotentHint: true}
		}
		out = append(out, t)
	}
	return out
}

// Call is the tools/call entry point: it runs one call of tool with the raw argument bytes of
// the JSON-RPC message (nil: the member was absent) and returns its tool result. It never
// fails: every refusal and failure is an isError result whose text is the refusal (§4) or the
// error (§8.1, §8.8).
func (s *Server) Call(ctx context.Context, tool string, args json.RawMessage) *sdk.CallToolResult {
	res, err := s.exec.CallJSON(ctx, tool, args)
	if err != nil {
		return errorResult(tool, err)
	}
	out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Text}}}
	if res.Details != nil {
		if data, err := jsonvalue.Marshal(res.Details); err == nil {
			out.StructuredContent = json.RawMessage(data)
		}
	}
	return out
}

// errorResult renders a failed call. A text the strict JSON layer refused is a refusal like
// any other (§4: header, the problem, allowed keys, example), its one problem the layer's
// message, so the model reads the same shape whatever was wrong.
func errorResult(tool string, err error) *sdk.CallToolResult {
	var jerr *jsonvalue.JSONValidationError
	if errors.As(err, &jerr) {
		if spec, ok := dispatch.Lookup(tool); ok {
			err = &toolspec.ToolInputError{Tool: tool, Spec: spec,
				Problems: toolspec.Problems{{Type: toolspec.ProblemExecutor, Message: jerr.Message}}}
		}
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
}
