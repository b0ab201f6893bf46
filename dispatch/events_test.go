package dispatch_test

import (
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
)

func envelope(typ, payload string) string {
	return `{"id":7,"issue_key":"DSP-1","seq":3,"actor":{"kind":"session","id":"ses_1"},"notify":true,"created_at":"2026-01-01T00:00:00Z","type":"` +
		typ + `","payload":` + payload + `,"future_member":{"x":1}}`
}

const askPayload = `{"id":"` + u1 + `","issue_key":"DSP-1","block_id":null,"author":{"kind":"session","id":"s"},"kind":"question","question":"Q",` +
	`"options":[{"label":"A"}],"multiple":false,"urgency":"med","anchor":null,"state":"open","answer":null,"created_at":"t","edited_at":null`

// TestParseEvent covers conformance cases 71–73 of dispatch-tools.md §10 and the envelope rule
// of §9.10.
func TestParseEvent(t *testing.T) {
	edited := `{"id":"` + u1 + `","issue_key":null,"artifact_id":"a1","author":{"kind":"session","id":"s"},"kind":"question","question":"Q2",` +
		`"options":[],"multiple":true,"urgency":"high","anchor":null,"state":"open","answer":null,"opened_event_id":4,"created_at":"t","edited_at":"t2",` +
		`"previous":{"question":"Q","options":[{"label":"A"}],"multiple":false,"urgency":"med"},"edited_by":{"kind":"session","id":"s"}}`
	cases := []struct {
		name, frame, err string
	}{
		{"71 delivery shout", envelope("message.delivery", `{"message_id":"m","attempt":1,"delivery":"shout","session_id":"s","title":"t","state":"sent"}`),
			`message.delivery payload.delivery must be one of aside|btw|steer; got "shout"`},
		{"71 aside", envelope("message.delivery", `{"message_id":"m","attempt":1,"delivery":"aside","session_id":"s","title":"t","state":"sent"}`), ""},
		{"71 btw", envelope("message.delivery", `{"message_id":"m","attempt":1,"delivery":"btw","session_id":"s","title":"t","state":"sent"}`), ""},
		{"71 steer", envelope("message.delivery", `{"message_id":"m","attempt":1,"delivery":"steer","session_id":"s","title":"t","state":"failed","error":"x"}`), ""},
		{"comment.delivery shout", envelope("comment.delivery", `{"comment_id":"c","target":"t","attempt":1,"delivery":"shout","session_id":null,"state":"sent","reply_id":null}`),
			`comment.delivery payload.delivery must be one of aside|btw|steer; got "shout"`},
		{"comment mention shout", envelope("comment.created", `{"id":"c","body":"b","mentions":[{"target":"t","delivery":"shout","session_id":null}]}`),
			`comment.created payload.mentions.0.delivery must be one of aside|btw|steer; got "shout"`},
		{"message deliveries shout", envelope("message.created", `{"id":"m","body":"b","deliveries":[{"delivery":"steer"},{"delivery":"shout"}]}`),
			`message.created payload.deliveries.1.delivery must be one of aside|btw|steer; got "shout"`},
		{"72 ask.opened without opened_event_id", envelope("ask.opened", askPayload+`}`), "ask.opened payload.opened_event_id must be a positive integer"},
		{"72 ask.opened opened_event_id 0", envelope("ask.opened", askPayload+`,"opened_event_id":0}`), "ask.opened payload.opened_event_id must be a positive integer"},
		{"72 ask.opened opened_event_id 1.5", envelope("ask.opened", askPayload+`,"opened_event_id":1.5}`), "ask.opened payload.opened_event_id must be a positive integer"},
		{"72 ask.opened", envelope("ask.opened", askPayload+`,"opened_event_id":9}`), ""},
		{"72 ask.opened with previous", envelope("ask.opened", askPayload+`,"opened_event_id":9,"previous":{}}`), "ask.opened payload must not carry previous or edited_by"},
		{"ask.answered with edited_by", envelope("ask.answered", askPayload+`,"opened_event_id":9,"edited_by":{}}`), "ask.answered payload must not carry previous or edited_by"},
		{"ask options null", envelope("ask.resolved", strings.Replace(askPayload, `"options":[{"label":"A"}]`, `"options":null`, 1)+`,"opened_event_id":9}`), "ask.resolved payload.options must be an array"},
		{"72 ask.edited document-owned", strings.Replace(envelope("ask.edited", edited), `"issue_key":"DSP-1"`, `"issue_key":null`, 1), ""},
		{"72 ask.edited without previous", envelope("ask.edited", strings.Replace(edited, `"previous":{"question":"Q","options":[{"label":"A"}],"multiple":false,"urgency":"med"},`, "", 1)),
			"ask.edited payload.previous must be an object"},
		{"ask.edited previous without urgency", envelope("ask.edited", strings.Replace(edited, `,"urgency":"med"}`, `}`, 1)), "ask.edited payload.previous.urgency must be a string"},
		{"ask.edited without edited_by", envelope("ask.edited", strings.Replace(edited, `,"edited_by":{"kind":"session","id":"s"}`, ``, 1)), "ask.edited payload.edited_by must be an object"},
		{"73 block.invalid", envelope("block.invalid", `{"block_id":"b","version":3,"reason":"bad","disturbed_by":{"kind":"user","id":"u"}}`), ""},
		{"73 comment.reopened", envelope("comment.reopened", `{"id":"c","body":"b","artifact_name":"spec"}`), ""},
		{"73 comment.edited", envelope("comment.edited", `{"id":"c","body":"b2","artifact_name":"spec","mentions":[{"target":"@a","delivery":"btw","session_id":"s"}],"deliveries":[{"comment_id":"c","delivery":"aside","attempt":1,"state":"sent"}]}`), ""},
		{"73 child.added", envelope("child.added", `{"child_key":"DSP-2"}`), ""},
		{"73 child.removed", envelope("child.removed", `{"child_key":"DSP-2"}`), ""},
		{"unknown type kept", envelope("future.kind", `{"anything":[1]}`), ""},
		{"issue_key missing", `{"type":"x","actor":{"kind":"user"},"payload":{}}`, "issue_key is required"},
		{"issue_key number", `{"issue_key":1,"type":"x","actor":{"kind":"user"},"payload":{}}`, "issue_key must be a string or null"},
		{"type missing", `{"issue_key":null,"actor":{"kind":"user"},"payload":{}}`, "type must be a string"},
		{"actor kind missing", `{"issue_key":null,"type":"x","actor":{"id":"u"},"payload":{}}`, "actor.kind must be a string"},
		{"actor id number", `{"issue_key":null,"type":"x","actor":{"kind":"user","id":1},"payload":{}}`, "actor.id must be a string"},
		{"payload array", `{"issue_key":null,"type":"x","actor":{"kind":"user"},"payload":[]}`, "payload must be an object"},
		{"minimal envelope", `{"issue_key":null,"type":"x","actor":{"kind":"system"},"payload":{}}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := dispatch.ParseEvent([]byte(c.frame))
			if c.err == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if _, err := e.DecodePayload(); err != nil {
					t.Fatalf("payload: %v", err)
				}
				return
			}
			if err == nil || err.Error() != "dispatch event: "+c.err {
				t.Fatalf("got %v\nwant dispatch event: %s", err, c.err)
			}
		})
	}
	if _, err := dispatch.ParseEvent([]byte(`{"issue_key":null,"issue_key":null}`)); err == nil {
		t.Error("strict JSON: duplicate names")
	}
}

// TestDecodeEventPayloads is conformance case 73: labels and priority (0 and null) are kept;
// comment mentions and deliveries are kept; typed payloads decode.
func TestDecodeEventPayloads(t *testing.T) {
	for _, prio := range []string{"0", "null"} {
		e, err := dispatch.ParseEvent([]byte(envelope("issue.updated", `{"key":"DSP-1","title":"T","status":"todo","priority":`+prio+`,"labels":["ui","perf"],"references_changed":true}`)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.DecodePayload()
		if err != nil {
			t.Fatal(err)
		}
		issue := p.(*dispatch.IssueEventPayload)
		if strings.Join(issue.Labels, ",") != "ui,perf" || (prio == "0") != (issue.Priority != nil) || (issue.Priority != nil && *issue.Priority != 0) {
			t.Errorf("priority %s: %+v", prio, issue.Issue)
		}
		if e.ID != 7 || e.Seq != 3 || !e.Notify || *e.IssueKey != "DSP-1" || e.Actor.ID != "ses_1" || !e.Raw.Has("future_member") {
			t.Errorf("envelope %+v", e.DispatchEvent)
		}
	}
	e, _ := dispatch.ParseEvent([]byte(envelope("comment.created", `{"id":"c","body":"b","artifact_name":"spec","ask_waiting_on":"agent",`+
		`"mentions":[{"target":"@a","delivery":"btw","session_id":null}],"deliveries":[{"comment_id":"c","target":"@a","attempt":2,"delivery":"btw","state":"pending"}]}`)))
	p, err := e.DecodePayload()
	if err != nil {
		t.Fatal(err)
	}
	c := p.(*dispatch.CommentEventPayload)
	if len(c.Mentions) != 1 || c.Mentions[0].Delivery != dispatch.DeliveryBtw || len(c.Deliveries) != 1 || c.Deliveries[0].Attempt != 2 || c.AskWaitingOn != dispatch.TurnAgent {
		t.Errorf("%+v", c)
	}
	e, _ = dispatch.ParseEvent([]byte(envelope("child.added", `{"child_key":"DSP-2"}`)))
	if p, _ := e.DecodePayload(); p.(*dispatch.ChildEventPayload).ChildKey != "DSP-2" {
		t.Error("child.added")
	}
	e, _ = dispatch.ParseEvent([]byte(envelope("ask.opened", askPayload+`,"opened_event_id":9}`)))
	if p, _ := e.DecodePayload(); p.(*dispatch.AskEventPayload).OpenedEventID != 9 || !p.(*dispatch.AskEventPayload).BlockID.IsNull() {
		t.Error("ask.opened keeps opened_event_id and a null block_id")
	}
	e, _ = dispatch.ParseEvent([]byte(envelope("subscription.removed", `{"session_id":"s","by":{"kind":"user","id":"u"},"topics":["a.>"],"request_event_id":41}`)))
	if p, _ := e.DecodePayload(); p.(*dispatch.SubscriptionRemovedPayload).RequestEventID != 41 {
		t.Error("subscription.removed")
	}
	if got := dispatch.IssueTopic("DSP-1", dispatch.EventAskOpened); got != "notifications.dispatch.issue.DSP-1.ask.opened" {
		t.Error(got)
	}
	if got := dispatch.DocumentTopic("CORE", "roadmap", dispatch.EventArtifactVersion); got != "notifications.dispatch.document.CORE.roadmap.artifact.version" {
		t.Error(got)
	}
}

// TestSearchAndMessageTypes is conformance case 74.
func TestSearchAndMessageTypes(t *testing.T) {
	var r dispatch.SearchResult
	if err := dispatch.Decode([]byte(`{"kind":"comment","owner":{"kind":"issue","key":"DSP-1","title":"T","status":"todo"},"id":"c","snippet":"s","rank":1,"href":"/issues/DSP-1"}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Issue != nil || r.Owner.Kind != dispatch.OwnerIssue || r.Owner.Key != "DSP-1" {
		t.Errorf("%+v", r)
	}
	var m dispatch.Message
	if err := dispatch.Decode([]byte(`{"id":"m","issue_key":null,"author":{"kind":"session","id":"s"},"body":"hi","deliveries":[],"created_at":"t"}`), &m); err != nil {
		t.Fatal(err)
	}
	if m.IssueKey != nil || m.Target.Present() || m.Deliveries == nil {
		t.Errorf("%+v", m)
	}
}
