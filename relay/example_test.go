package relay_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
)

// A relay in local mode over a SQLite file: post a run as one NDJSON batch, replay it, and
// see a duplicate and a refusal answered.
func Example() {
	dir, _ := os.MkdirTemp("", "relay-example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	srv, err := relay.New(relay.Config{Store: st, Logger: quietLogger()})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Shutdown(context.Background())

	c := &relay.Client{BaseURL: ts.URL}
	ctx := context.Background()
	run := strings.Join([]string{
		`{"type":"run.started","protocolVersion":1,"eventId":"r:1","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
		`{"type":"message.started","messageId":"m","role":"assistant","protocolVersion":1,"eventId":"r:2","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":2,"sequence":2,"timestamp":"t"}`,
		`{"type":"message.part.delta","messageId":"m","part":{"type":"text","text":"Hello"},"protocolVersion":1,"eventId":"r:3","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":3,"sequence":3,"timestamp":"t"}`,
		`{"type":"run.completed","finishReason":"stop","content":[],"protocolVersion":1,"eventId":"r:4","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":4,"sequence":4,"timestamp":"t"}`,
	}, "\n")
	res, err := c.Append(ctx, "r", relay.MediaNDJSON, []byte(run))
	fmt.Printf("%+v %v\n", res, err)
	res, err = c.Append(ctx, "r", relay.MediaNDJSON, []byte(run))
	fmt.Printf("%+v %v\n", res, err)
	late := `{"type":"usage.updated","usage":{},"protocolVersion":1,"eventId":"r:5","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":5,"sequence":5,"timestamp":"t"}`
	_, err = c.Append(ctx, "r", relay.MediaJSON, []byte(late))
	fmt.Println(err)
	// Output:
	// {Accepted:4 Duplicates:0 LastLogicalSequence:4 Status:completed} <nil>
	// {Accepted:0 Duplicates:4 LastLogicalSequence:4 Status:completed} <nil>
	// conflict: Agent event cannot be applied after the run is terminal. (index 0)
}
