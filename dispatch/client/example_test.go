package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/agentwire/agentwire/dispatch/client"
)

// A tool call runs the executor pipeline: validation (a refused call sends nothing), the
// tool's requests, and the result text of dispatch-tools.md §8.9.
func Example() {
	// A Dispatch server that accepts a message.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"dead0000-0000-4000-8000-000000000001","issue_key":"DSP-1","body":"Implementation started.","deliveries":[],"created_at":"2026-01-08T00:00:00Z"}`)
	}))
	defer srv.Close()

	c := client.New(client.Config{URL: srv.URL, Token: "tok", Host: client.Host{SessionID: "ses_1", Name: "devbox"}})
	ctx := context.Background()
	res, err := c.CallJSON(ctx, "dispatch_message", []byte(`{"issue":"DSP-1","body":"Implementation started."}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)

	_, err = c.CallJSON(ctx, "dispatch_message", []byte(`{"issue":"DSP-1"}`))
	fmt.Println(err)
	// Output:
	// Posted message dead0000-0000-4000-8000-000000000001 (dispatch://DSP-1/message/dead0000-0000-4000-8000-000000000001) (not subscribed to DSP-1; envoy_subscribe notifications.dispatch.issue.DSP-1.> for every event on it)
	// dispatch_message was not called: 1 problem
	// - body is required (string)
	// - Allowed keys: issue, body, in_reply_to
	// - Example: dispatch_message({"issue":"DSP-1","body":"Implementation started."})
}

// Service errors render `<CODE>: <message>`; clients branch on the code.
func ExampleDecodeErrorAnswer() {
	err := client.DecodeErrorAnswer("PATCH", "https://dispatch.test/api/v1/issues/DSP-1", 409,
		[]byte(`{"error":"https://a.test is linked to DSP-9","code":"EXTERNAL_LINK_TAKEN"}`), "tok")
	fmt.Println(client.ErrorCode(err))
	fmt.Println(err)
	// Output:
	// EXTERNAL_LINK_TAKEN
	// EXTERNAL_LINK_TAKEN: https://a.test is linked to DSP-9
}
