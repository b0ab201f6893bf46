package client_test

import (
	"context"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/dispatch/client"
)

// BenchmarkCallMessage is one dispatch_message call end to end against a loopback server:
// validation, request encoding, the round trip, decoding and the result text.
func BenchmarkCallMessage(b *testing.B) {
	f := newFakeServer(b, jsonAnswer(201, `{"id":"dead0000-0000-4000-8000-000000000001","issue_key":"DSP-1","body":"b","deliveries":[],"created_at":"t"}`))
	c := newClient(f)
	args := []byte(`{"issue":"DSP-1","body":"Implementation started."}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CallJSON(ctx, dispatch.ToolMessage, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeErrorAnswer maps a PRECONDITION_FAILED answer to its error text.
func BenchmarkDecodeErrorAnswer(b *testing.B) {
	body := []byte(`{"error":"stale","code":"PRECONDITION_FAILED","current":{"document":"d2","blocks":[{"id":"b1","token":"y"}]},"mismatches":[{"scope":"block","block_id":"b1","expected":"x","current":"y"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := client.DecodeErrorAnswer("POST", "https://d.test/api/v1/artifacts/a/edits", 409, body, "tok"); err.Error() == "" {
			b.Fatal("empty")
		}
	}
}
