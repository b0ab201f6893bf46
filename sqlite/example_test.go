package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

// Append a reduced batch with its snapshot, then read it back from a cursor.
func Example() {
	dir, err := os.MkdirTemp("", "agentwire-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx := context.Background()

	info, err := s.AppendRun(ctx, "local", "run-1", store.AppendRequest{
		ExpectedLastLogicalSequence: 0, // a new run
		Events: []store.Event{
			{LogicalSequence: 1, EventID: "run-1:1", Type: "run.started", Data: []byte(`{"type":"run.started"}`)},
			{LogicalSequence: 2, EventID: "run-1:2", Type: "run.completed", Data: []byte(`{"type":"run.completed"}`)},
		},
		Snapshot: []byte(`{"status":"completed"}`),
		Status:   "completed",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(info.RunID, info.Status, info.EventCount, info.LastLogicalSequence)

	events, err := s.ReadEvents(ctx, "local", "run-1", 1, 100)
	if err != nil {
		panic(err)
	}
	for _, e := range events {
		fmt.Printf("id: %d\nevent: %s\ndata: %s\n", e.LogicalSequence, e.Type, e.Data)
	}

	// Another org does not see the run.
	_, _, err = s.GetRun(ctx, "other-org", "run-1")
	fmt.Println(err)
	// Output:
	// run-1 completed 2 2
	// id: 2
	// event: run.completed
	// data: {"type":"run.completed"}
	// store: not found
}

// Store two messages on an org channel, resend the first one (idempotent), record receipts and
// read the channel's history.
func ExampleStore_AppendMessage() {
	dir, err := os.MkdirTemp("", "agentwire-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx := context.Background()
	general := store.OrgStream("local", "org:local/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general")
	now := time.Now()
	msg := func(gid, clientMsgID, replyTo string) store.MessageWrite {
		return store.MessageWrite{
			GID: gid, Stream: general, SenderOrg: "local", SenderInstance: "local", ClientMsgID: clientMsgID,
			Type: "question", ReplyTo: replyTo, ServerTime: now, ExpiresAt: now.Add(30 * 24 * time.Hour),
			Data: []byte(`{"body":{"text":"Which retry budget does payments use?"}}`),
		}
	}
	q, _, err := s.AppendMessage(ctx, msg("g-1", "01JBMSG1", ""))
	if err != nil {
		panic(err)
	}
	fmt.Println(q.GID, q.Seq, q.ThreadID)
	again, replayed, _ := s.AppendMessage(ctx, msg("g-other", "01JBMSG1", "")) // a resend
	fmt.Println(again.GID, again.Seq, replayed)
	a := msg("g-2", "01JBMSG2", "g-1")
	a.Type, a.ThreadID = store.MessageTypeAnswer, q.ThreadID
	ans, _, _ := s.AppendMessage(ctx, a)
	fmt.Println(ans.GID, ans.Seq, ans.ThreadID)

	applied, _ := s.AppendReceipt(ctx, general, "g-1", "codex-85", store.ReceiptRead, now)
	fmt.Println(applied)
	applied, _ = s.AppendReceipt(ctx, general, "g-1", "codex-85", store.ReceiptDelivered, now)
	fmt.Println(len(applied))

	history, _ := s.ReadMessages(ctx, general, store.ReadQuery{After: 0, Limit: 200, ThreadID: "g-1"})
	for _, m := range history {
		fmt.Println(m.Seq, m.GID)
	}
	// Another org's lookup of g-1 is the same 404 as an unknown gid.
	_, err = s.GetMessage(ctx, store.MessageScope{Org: "other"}, "g-1")
	fmt.Println(err)
	// Output:
	// g-1 1 g-1
	// g-1 1 true
	// g-2 2 g-1
	// [delivered read]
	// 0
	// 1 g-1
	// 2 g-2
	// store: not found
}

// Publish an envelope twice under its message id (the second is a duplicate answering the
// original's sequence), then resume a subscriber from a Last-Event-ID with a subject filter.
func ExampleStore_AppendEnvelope() {
	dir, err := os.MkdirTemp("", "agentwire-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx := context.Background()
	at := time.Date(2026, 10, 20, 12, 0, 0, 0, time.UTC)
	publish := func(topic, messageID string) {
		e, dup, err := s.AppendEnvelope(ctx, "local", store.EnvelopeWrite{
			Subject: topic, MessageID: messageID, StoredAt: at, Data: []byte(`{"topic":"` + topic + `"}`),
		}, 72*time.Hour)
		if err != nil {
			panic(err)
		}
		fmt.Printf(`{"duplicate":%v,"seq":%d}`+"\n", dup, e.Seq)
	}
	publish("notifications.github.acme.widgets.pr.42", "github.d-7:notifications.github.acme.widgets.pr.42")
	publish("notifications.slack.acme.general", "")
	publish("notifications.github.acme.widgets.pr.42", "github.d-7:notifications.github.acme.widgets.pr.42")
	publish("notifications.github.acme.widgets.pr.43", "github.d-8:notifications.github.acme.widgets.pr.43")

	page, _ := s.ReadEnvelopes(ctx, "local", store.EnvelopeQuery{
		After: 1, Limit: 100, Since: at.Add(-72 * time.Hour),
		Match: func(subject string) bool { return strings.HasPrefix(subject, "notifications.github.") },
	})
	for _, e := range page.Envelopes {
		fmt.Printf("id: %d\ndata: %s\n", e.Seq, e.Data)
	}
	fmt.Println(page.Next, page.More)
	// Output:
	// {"duplicate":false,"seq":1}
	// {"duplicate":false,"seq":2}
	// {"duplicate":true,"seq":1}
	// {"duplicate":false,"seq":3}
	// id: 3
	// data: {"topic":"notifications.github.acme.widgets.pr.43"}
	// 3 false
}
