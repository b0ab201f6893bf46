package envelope_test

import (
	"fmt"

	"github.com/agentwire/agentwire/envelope"
)

// Decode returns every problem in the spec's order; First is the single message the
// compatibility target reports.
func ExampleDecode() {
	raw := []byte(`{"event_id":"e1","source":"bogus","source_event_id":"s1","topic":"",` +
		`"dedupe_key":"k","issued_at":1760000000000,"payload_summary":"hi","trace_id":"t1","in_reply_to":""}`)
	_, problems := envelope.Decode(raw)
	for _, p := range problems {
		fmt.Printf("%s: %s\n", p.Field, p.Message)
	}
	fmt.Println("first:", problems.First())
	// Output:
	// in_reply_to: in_reply_to must not be empty
	// topic: topic is required
	// source: source must be one of: agent, human, envoy, github, slack, whatsapp, ghostwispr, dispatch
	// first: in_reply_to must not be empty
}

func ExampleGithubPushSubject() {
	fmt.Println(envelope.GithubPushSubject("acme", "widgets", "branch", "feat/foo"))
	fmt.Println(envelope.GithubPushSubject("acme", "widgets", "tag", "v1.0.0"))
	// Output:
	// notifications.github.acme.widgets.push.branch.feat/foo
	// notifications.github.acme.widgets.push.tag.v1_0_0
}

func ExampleMatchSubject() {
	fmt.Println(envelope.MatchSubject("notifications.github.acme.widgets.>", "notifications.github.acme.widgets.pr.42"))
	fmt.Println(envelope.MatchSubject("notifications.github.acme.widgets.>", "notifications.github.acme.widgets"))
	// Output:
	// true
	// false
}

func ExampleMessageID() {
	e := envelope.Envelope{
		Source: envelope.SourceGithub, SourceEventID: "delivery-7", DedupeKey: "github.delivery-7",
		Topic: envelope.GithubResourceSubject("acme", "widgets", "pr", "42"),
	}
	fmt.Println(envelope.MessageID(e))
	// Output: github.delivery-7:notifications.github.acme.widgets.pr.42 true
}
