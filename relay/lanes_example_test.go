package relay_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
)

// The bus and notification lanes of a local-mode relay: a hive message is stored with its
// gap-free seq and a resend is answered with the original; an envelope is stored with a store
// sequence and its repeat is a duplicate; an invalid envelope lists every problem.
func Example_lanes() {
	dir, _ := os.MkdirTemp("", "relay-lanes")
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

	channel := "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"
	m := hive.AgentMessageV1{ClientMsgID: "01JBMSG7Q3", Network: hive.NetworkOrg{Channel: channel},
		Type: hive.MessageTypeFinding, From: "claude-3e", Body: &hive.MessageBodyV1{Text: "found it"}}
	body, _ := m.MarshalJSON()
	first, _ := c.SendMessage(ctx, body)
	again, _ := c.SendMessage(ctx, body)
	fmt.Println(first.Seq, again.GID == first.GID)
	page, _ := c.ListMessages(ctx, url.Values{"network": {"org"}, "channel": {channel}})
	d := page.Messages[0]
	fmt.Println(len(page.Messages), d.Body.Text, d.Trust, d.ThreadID == d.GID)

	e := envelope.Envelope{EventID: "5d41402abc4b2a76b9719d911017c592", Source: envelope.SourceGithub, SourceEventID: "d-7",
		Topic: "notifications.github.acme.widgets.pr.42", DedupeKey: "github.d-7", IssuedAt: 1760000000000,
		PayloadSummary: "PR #42 opened", TraceID: "0af7651916cd43dd"}
	fmt.Println(c.PublishEnvelope(ctx, e.AppendJSON(nil)))
	fmt.Println(c.PublishEnvelope(ctx, e.AppendJSON(nil)))
	_, err = c.PublishEnvelope(ctx, []byte(`{"topic":"notifications.x","issued_at":1}`))
	for _, p := range err.(*relay.Error).Problems {
		fmt.Println(p.Field + ": " + p.Message)
	}
	// Output:
	// 1 true
	// 1 found it team true
	// {false 1} <nil>
	// {true 1} <nil>
	// event_id: event_id is required
	// source: source is required
	// source_event_id: source_event_id is required
	// dedupe_key: dedupe_key is required
	// payload_summary: payload_summary is required
	// trace_id: trace_id is required
}
