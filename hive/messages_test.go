package hive

import (
	"strings"
	"testing"
)

const testChannel = "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"

func ptr[T any](v T) *T { return &v }

// question is M of hive.md §9, built in Go.
func question() AgentMessageV1 {
	return AgentMessageV1{
		ClientMsgID: "01JBMSG",
		Network:     NetworkOrg{Channel: testChannel},
		Type:        MessageTypeQuestion,
		From:        "claude-3e",
		Body:        &MessageBodyV1{Text: "Which retry budget does payments use?"},
	}
}

func testSealed() *SealedBlobV1 {
	return &SealedBlobV1{
		ContentSchema: SealedMessageSchema,
		Epoch:         3,
		Nonce:         "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX",
		Ciphertext:    "KCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OTw==",
	}
}

func TestAgentMessageValidate(t *testing.T) {
	swarm := NetworkSwarm{SwarmID: "sw-1"}
	tasks := func(n int) []MessageReferenceV1 {
		r := make([]MessageReferenceV1, n)
		for i := range r {
			r[i] = ReferenceTask{Number: uint64(i + 1)}
		}
		return r
	}
	tests := []struct {
		name string
		edit func(m *AgentMessageV1)
		want string
	}{
		{"M is valid", func(m *AgentMessageV1) {}, ""},
		{"blank client_msg_id", func(m *AgentMessageV1) { m.ClientMsgID = "   " }, "client_msg_id must not be empty"},
		{"nil network", func(m *AgentMessageV1) { m.Network = nil }, "network must be set"},
		{"bad channel", func(m *AgentMessageV1) { m.Network = NetworkOrg{Channel: "org:org_acme/general"} }, "channel must be org:<org>/vault:<vault_id>/<name>"},
		{"blank swarm_id", func(m *AgentMessageV1) { m.Network = NetworkSwarm{SwarmID: " "} }, "swarm_id must not be empty"},
		{"swarm_id before from", func(m *AgentMessageV1) { m.Network = NetworkSwarm{}; m.From = "" }, "swarm_id must not be empty"},
		{"from of 257 bytes", func(m *AgentMessageV1) { m.From = strings.Repeat("a", 257) }, "from exceeds the 256 byte limit"},
		{"from of 128 x é", func(m *AgentMessageV1) { m.From = strings.Repeat("é", 128) }, ""},
		{"from with BEL", func(m *AgentMessageV1) { m.From = "a\u0007b" }, "from must not contain control characters"},
		{"blank to", func(m *AgentMessageV1) { m.To = ptr(" ") }, "to must not be empty"},
		{"to_instance without to", func(m *AgentMessageV1) { m.ToInstance = ptr("inst_1") }, "to_instance names the instance of `to` on an org network"},
		{"empty to_instance without to", func(m *AgentMessageV1) { m.ToInstance = ptr("") }, "to_instance must not be empty"},
		{"empty to_instance with to", func(m *AgentMessageV1) { m.To = ptr("codex-85"); m.ToInstance = ptr("") }, "to_instance must not be empty"},
		{"to_instance on a swarm", func(m *AgentMessageV1) { m.Network = swarm; m.To = ptr("h"); m.ToInstance = ptr("inst_1") }, "to_instance names the instance of `to` on an org network"},
		{"to_instance with to on org", func(m *AgentMessageV1) { m.To = ptr("codex-85"); m.ToInstance = ptr("inst_1") }, ""},
		{"empty reply_to on an answer", func(m *AgentMessageV1) { m.Type = MessageTypeAnswer; m.ReplyTo = ptr("") }, "reply_to must not be empty"},
		{"unknown type", func(m *AgentMessageV1) { m.Type = MessageTypeUnknown }, "unknown message type"},
		{"type outside the set", func(m *AgentMessageV1) { m.Type = "poll" }, "unknown message type"},
		{"unknown type with deadline", func(m *AgentMessageV1) { m.Type = "poll"; m.Deadline = ptr(MustUtcTimestamp("2026-10-21T12:00:00Z")) }, "unknown message type"},
		{"answer without reply_to", func(m *AgentMessageV1) { m.Type = MessageTypeAnswer }, "an answer replies to a question"},
		{"answer without reply_to or body", func(m *AgentMessageV1) { m.Type = MessageTypeAnswer; m.Body = nil }, "an answer replies to a question"},
		{"answer with reply_to", func(m *AgentMessageV1) { m.Type = MessageTypeAnswer; m.ReplyTo = ptr("g-1") }, ""},
		{"answer with deadline", func(m *AgentMessageV1) {
			m.Type = MessageTypeAnswer
			m.ReplyTo = ptr("g-1")
			m.Deadline = ptr(MustUtcTimestamp("2026-10-21T12:00:00Z"))
		}, "only questions carry a deadline"},
		{"offer with deadline", func(m *AgentMessageV1) {
			m.Type = MessageTypeOffer
			m.Deadline = ptr(MustUtcTimestamp("2026-10-21T12:00:00Z"))
		}, "only questions carry a deadline"},
		{"finding with deadline", func(m *AgentMessageV1) {
			m.Type = MessageTypeFinding
			m.Deadline = ptr(MustUtcTimestamp("2026-10-21T12:00:00Z"))
		}, "only questions carry a deadline"},
		{"handoff with deadline", func(m *AgentMessageV1) {
			m.Type = MessageTypeHandoff
			m.Deadline = ptr(MustUtcTimestamp("2026-10-21T12:00:00Z"))
		}, "only questions carry a deadline"},
		{"question with deadline", func(m *AgentMessageV1) { m.Deadline = ptr(MustUtcTimestamp("2028-02-29T23:59:59Z")) }, ""},
		{"question with a zero deadline", func(m *AgentMessageV1) { m.Deadline = &UtcTimestamp{} }, "UtcTimestamp must use canonical YYYY-MM-DDTHH:MM:SSZ syntax"},
		{"question with a hand-built invalid deadline", func(m *AgentMessageV1) { m.Deadline = &UtcTimestamp{s: "2026-02-29T12:00:00Z"} }, "UtcTimestamp contains an invalid calendar or clock value"},
		{"body and sealed", func(m *AgentMessageV1) { m.Sealed = testSealed() }, "a message carries body or sealed"},
		{"neither body nor sealed", func(m *AgentMessageV1) { m.Body = nil }, "a message carries body or sealed"},
		{"sealed on org", func(m *AgentMessageV1) { m.Body = nil; m.Sealed = testSealed() }, ""},
		{"sealed on a swarm", func(m *AgentMessageV1) { m.Network = swarm; m.Body = nil; m.Sealed = testSealed() }, "swarm messages are public to the swarm's workers"},
		{"sealed draft on a swarm", func(m *AgentMessageV1) {
			m.Network = swarm
			m.Body = nil
			m.Sealed = testSealed()
			m.Sealed.ContentSchema = "leanctx.hive.sealed-draft/v1"
		}, "swarm messages are public to the swarm's workers"},
		{"sealed draft on org", func(m *AgentMessageV1) {
			m.Body = nil
			m.Sealed = testSealed()
			m.Sealed.ContentSchema = "leanctx.hive.sealed-draft/v1"
		}, "sealed content must be leanctx.hive.sealed-message/v1"},
		{"sealed blob checked before content", func(m *AgentMessageV1) {
			m.Body = nil
			m.Sealed = testSealed()
			m.Sealed.ContentSchema = "leanctx.hive.sealed-draft/v1"
			m.Sealed.Epoch = 0
		}, "sealed epochs start at 1"},
		{"empty text", func(m *AgentMessageV1) { m.Body.Text = "" }, "text must not be empty"},
		{"4000 x é", func(m *AgentMessageV1) { m.Body.Text = strings.Repeat("é", 4000) }, ""},
		{"4001 x a", func(m *AgentMessageV1) { m.Body.Text = strings.Repeat("a", 4001) }, "text exceeds the 4000 character limit"},
		{"text with LF and TAB", func(m *AgentMessageV1) { m.Body.Text = "a\nb\tc" }, ""},
		{"text with BEL", func(m *AgentMessageV1) { m.Body.Text = "bell\u0007" }, "text must not contain control characters"},
		{"swarm message referencing an org task", func(m *AgentMessageV1) {
			m.Network = swarm
			m.Body.References = []MessageReferenceV1{ReferenceTask{Number: 7}}
		}, "Swarm messages do not reference org tasks"},
		{"swarm task 0", func(m *AgentMessageV1) {
			m.Network = swarm
			m.Body.References = []MessageReferenceV1{ReferenceTask{}}
		}, "numbers start at 1"},
		{"proposal 0", func(m *AgentMessageV1) { m.Body.References = []MessageReferenceV1{ReferenceProposal{}} }, "numbers start at 1"},
		{"commit of 5", func(m *AgentMessageV1) { m.Body.References = []MessageReferenceV1{ReferenceCommit{ID: "abc12"}} }, "commit references are 7-64 hex"},
		{"commit uppercase", func(m *AgentMessageV1) { m.Body.References = []MessageReferenceV1{ReferenceCommit{ID: "ABCDEF1"}} }, "commit references are 7-64 hex"},
		{"commit of 64", func(m *AgentMessageV1) {
			m.Body.References = []MessageReferenceV1{ReferenceCommit{ID: strings.Repeat("a", 64)}}
		}, ""},
		{"commit of 65", func(m *AgentMessageV1) {
			m.Body.References = []MessageReferenceV1{ReferenceCommit{ID: strings.Repeat("a", 65)}}
		}, "commit references are 7-64 hex"},
		{"blank fact id", func(m *AgentMessageV1) { m.Body.References = []MessageReferenceV1{ReferenceFact{ID: " "}} }, "reference id must not be empty"},
		{"empty handoff_id", func(m *AgentMessageV1) { m.Body.References = []MessageReferenceV1{ReferenceHandoff{}} }, "handoff_id must not be empty"},
		{"16 references", func(m *AgentMessageV1) { m.Body.References = tasks(16) }, ""},
		{"17 references", func(m *AgentMessageV1) { m.Body.References = tasks(17) }, "too many references"},
		{"count before references", func(m *AgentMessageV1) {
			m.Body.References = append([]MessageReferenceV1{ReferenceCommit{ID: "zz"}}, tasks(16)...)
		}, "too many references"},
		{"text before count", func(m *AgentMessageV1) { m.Body.Text = ""; m.Body.References = tasks(17) }, "text must not be empty"},
		{"own check before swarm check", func(m *AgentMessageV1) {
			m.Network = swarm
			m.Body.References = []MessageReferenceV1{ReferenceCommit{ID: "zz"}, ReferenceTask{Number: 7}}
		}, "commit references are 7-64 hex"},
		{"swarm check in array order", func(m *AgentMessageV1) {
			m.Network = swarm
			m.Body.References = []MessageReferenceV1{ReferenceTask{Number: 7}, ReferenceCommit{ID: "zz"}}
		}, "Swarm messages do not reference org tasks"},
		{"nil reference", func(m *AgentMessageV1) { m.Body.References = []MessageReferenceV1{nil} }, "references must not hold nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := question()
			tc.edit(&m)
			if got := errText(m.Validate()); got != tc.want {
				t.Fatalf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

// delivery returns O (org) or D (swarm) of hive.md §2.12.
func delivery(swarm bool) MessageDeliveryV1 {
	if swarm {
		return MessageDeliveryV1{
			GID: "g-9", Seq: 3, Network: NetworkSwarm{SwarmID: "sw-1"}, Type: MessageTypeFinding,
			From: SenderSwarm{Handle: "quiet-heron", Reputation: 1}, ThreadID: "g-9",
			Body: &MessageBodyV1{Text: "found"}, Trust: MessageTrustUntrusted,
			ServerTime: MustUtcTimestamp("2026-10-20T12:00:00Z"), ExpiresAt: MustUtcTimestamp("2026-11-20T12:00:00Z"),
		}
	}
	return MessageDeliveryV1{
		GID: "g-1", Seq: 41, Network: NetworkOrg{Channel: testChannel}, Type: MessageTypeQuestion,
		From:     SenderAgent{Agent: "claude-3e", InstanceLabel: "laptop", InstanceID: ptr("inst_01jb8z9"), Owner: ptr("Ana")},
		ThreadID: "g-1", Deadline: ptr(MustUtcTimestamp("2026-10-21T12:00:00Z")),
		Body:  &MessageBodyV1{Text: "Which retry budget does payments use?"},
		Trust: MessageTrustTeam, ServerTime: MustUtcTimestamp("2026-10-20T12:00:00Z"), ExpiresAt: MustUtcTimestamp("2026-11-19T12:00:00Z"),
	}
}

func TestMessageDeliveryValidate(t *testing.T) {
	tests := []struct {
		name  string
		swarm bool
		edit  func(m *MessageDeliveryV1)
		want  string
	}{
		{"O is valid", false, func(m *MessageDeliveryV1) {}, ""},
		{"D is valid", true, func(m *MessageDeliveryV1) {}, ""},
		{"blank gid", false, func(m *MessageDeliveryV1) { m.GID = " "; m.ThreadID = "" }, "gid must not be empty"},
		{"empty thread_id", false, func(m *MessageDeliveryV1) { m.ThreadID = "" }, "thread_id must not be empty"},
		{"gid over 256 bytes", true, func(m *MessageDeliveryV1) { m.GID = strings.Repeat("g", 257) }, "gid exceeds the 256 byte limit"},
		{"thread_id with control", true, func(m *MessageDeliveryV1) { m.ThreadID = "t\x00" }, "thread_id must not contain control characters"},
		{"bad channel", false, func(m *MessageDeliveryV1) { m.Network = NetworkOrg{Channel: "org:org_acme/general"} }, "channel must be org:<org>/vault:<vault_id>/<name>"},
		{"swarm trust team", true, func(m *MessageDeliveryV1) { m.Trust = MessageTrustTeam }, "Swarm content is always untrusted"},
		{"swarm trust unknown", true, func(m *MessageDeliveryV1) { m.Trust = MessageTrustUnknown }, "Swarm content is always untrusted"},
		{"swarm agent sender", true, func(m *MessageDeliveryV1) { m.From = SenderAgent{Agent: "codex-85", InstanceLabel: "ci"} }, "Swarm senders appear only as a handle"},
		{"swarm unknown sender", true, func(m *MessageDeliveryV1) { m.From = SenderUnknown{} }, "Swarm senders appear only as a handle"},
		{"swarm nil sender", true, func(m *MessageDeliveryV1) { m.From = nil }, "Swarm senders appear only as a handle"},
		{"trust before sender", true, func(m *MessageDeliveryV1) { m.Trust = MessageTrustTeam; m.From = SenderPerson{Label: "Ana"} }, "Swarm content is always untrusted"},
		{"org swarm sender", false, func(m *MessageDeliveryV1) { m.From = SenderSwarm{Handle: "quiet-heron", Reputation: 1} }, "org messages have org senders"},
		{"org untrusted person", false, func(m *MessageDeliveryV1) { m.Trust = MessageTrustUntrusted; m.From = SenderPerson{Label: "Ana"} }, ""},
		{"org unknown trust and sender", false, func(m *MessageDeliveryV1) { m.Trust = "partner"; m.From = SenderUnknown{} }, ""},
		{"body and sealed", true, func(m *MessageDeliveryV1) { m.Sealed = testSealed() }, "a message carries body or sealed"},
		{"neither", true, func(m *MessageDeliveryV1) { m.Body = nil }, "a message carries body or sealed"},
		{"sealed swarm delivery is not checked", true, func(m *MessageDeliveryV1) { m.Body = nil; m.Sealed = &SealedBlobV1{} }, ""},
		{"body content is not checked", true, func(m *MessageDeliveryV1) {
			m.Body = &MessageBodyV1{References: []MessageReferenceV1{ReferenceTask{}}}
		}, ""},
		{"unchecked members", true, func(m *MessageDeliveryV1) {
			m.Seq = 0
			m.To = ptr("")
			m.ReplyTo = ptr("")
			m.Type = "poll"
			m.Deadline = ptr(MustUtcTimestamp("2026-10-21T12:00:00Z"))
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := delivery(tc.swarm)
			tc.edit(&m)
			if got := errText(m.Validate()); got != tc.want {
				t.Fatalf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMessageReceiptValidate(t *testing.T) {
	tests := []struct {
		r    MessageReceiptV1
		want string
	}{
		{MessageReceiptV1{GID: "g-1", By: "codex-85", State: MessageReceiptStateRead}, ""},
		{MessageReceiptV1{GID: "g-1", By: "codex-85", State: MessageReceiptStateDelivered}, ""},
		{MessageReceiptV1{GID: "g-1", By: "codex-85", State: MessageReceiptStateUnknown}, "unknown receipt state"},
		{MessageReceiptV1{GID: "g-1", By: "", State: MessageReceiptStateRead}, "by must not be empty"},
		{MessageReceiptV1{GID: "", By: "", State: "seen"}, "gid must not be empty"},
		{MessageReceiptV1{GID: "g-1", By: strings.Repeat("b", 257), State: MessageReceiptStateRead}, "by exceeds the 256 byte limit"},
	}
	for i, tc := range tests {
		if got := errText(tc.r.Validate()); got != tc.want {
			t.Errorf("%d: %q, want %q", i, got, tc.want)
		}
	}
}

func TestMessageListValidate(t *testing.T) {
	page := func(n int) []MessageDeliveryV1 {
		l := make([]MessageDeliveryV1, n)
		for i := range l {
			l[i] = delivery(true)
		}
		return l
	}
	bad := delivery(true)
	bad.Trust = MessageTrustTeam
	tests := []struct {
		name string
		l    MessageListV1
		want string
	}{
		{"empty page", MessageListV1{Schema: MessageListSchema}, ""},
		{"200 deliveries", MessageListV1{Schema: MessageListSchema, Messages: page(200), Next: ptr("g-9")}, ""},
		{"more than 200 messages in a list page", MessageListV1{Schema: MessageListSchema, Messages: page(201)}, "too many messages in one page"},
		{"schema before count", MessageListV1{Schema: "leanctx.hive.message-list/v2", Messages: page(201)}, "schema must be leanctx.hive.message-list/v1"},
		{"each delivery in order", MessageListV1{Schema: MessageListSchema, Messages: []MessageDeliveryV1{delivery(true), bad}}, "Swarm content is always untrusted"},
	}
	for _, tc := range tests {
		if got := errText(tc.l.Validate()); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSealedBlobValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(s *SealedBlobV1)
		want string
	}{
		{"valid", func(s *SealedBlobV1) {}, ""},
		{"other area", func(s *SealedBlobV1) { s.ContentSchema = "leanctx.hive.knowledge-revision/v12" }, ""},
		{"empty content_schema", func(s *SealedBlobV1) { s.ContentSchema = "" }, "content_schema must not be empty"},
		{"Leanctx", func(s *SealedBlobV1) { s.ContentSchema = "Leanctx" }, "content_schema must be leanctx.hive.<area>/v<n>"},
		{"v0", func(s *SealedBlobV1) { s.ContentSchema = "leanctx.hive.sealed-message/v0" }, "content_schema must be leanctx.hive.<area>/v<n>"},
		{"v01", func(s *SealedBlobV1) { s.ContentSchema = "leanctx.hive.sealed-message/v01" }, "content_schema must be leanctx.hive.<area>/v<n>"},
		{"trailing newline", func(s *SealedBlobV1) { s.ContentSchema = "leanctx.hive.sealed-message/v1\n" }, "content_schema must not contain control characters"},
		{"epoch 0", func(s *SealedBlobV1) { s.Epoch = 0 }, "sealed epochs start at 1"},
		{"nonce of 12 bytes", func(s *SealedBlobV1) { s.Nonce = "AAECAwQFBgcICQoL" }, "nonce must decode to 24 bytes"},
		{"URL-safe nonce", func(s *SealedBlobV1) { s.Nonce = "-_--AAECAwQFBgcICQoLDA0ODxAREhMU" }, "nonce must be standard padded base64"},
		{"empty ciphertext", func(s *SealedBlobV1) { s.Ciphertext = "" }, "ciphertext must not be empty"},
		{"ciphertext under the tag", func(s *SealedBlobV1) { s.Ciphertext = "AAECAwQFBgcICQoLDA0O" }, "ciphertext is shorter than the 16 byte tag"},
		{"ciphertext of 16 bytes", func(s *SealedBlobV1) { s.Ciphertext = "AAECAwQFBgcICQoLDA0ODw==" }, ""},
		{"ciphertext too long", func(s *SealedBlobV1) { s.Ciphertext = strings.Repeat("A", 4*349526) }, "ciphertext exceeds the 1048576 byte limit"},
		{"ciphertext at the limit", func(s *SealedBlobV1) { s.Ciphertext = strings.Repeat("A", 4*349525) + "AA==" }, ""},
		{"ciphertext one over the limit", func(s *SealedBlobV1) { s.Ciphertext = strings.Repeat("A", 4*349525) + "AAA=" }, "ciphertext exceeds the 1048576 byte limit"},
	}
	for _, tc := range tests {
		s := testSealed()
		tc.edit(s)
		if got := errText(s.Validate()); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNetworkAndReferences(t *testing.T) {
	if NetworkKindOf(nil) != NetworkKindUnknown || NetworkKindOf(NetworkOrg{}) != NetworkKindOrg || NetworkKindOf(NetworkSwarm{}) != NetworkKindSwarm {
		t.Fatal("NetworkKindOf")
	}
	body := MessageBodyV1{Text: "x", References: []MessageReferenceV1{ReferenceTask{Number: 1}}}
	if body.Validate(NetworkKindOrg) != nil || errText(body.Validate(NetworkKindSwarm)) != "Swarm messages do not reference org tasks" {
		t.Fatal("task references are org only")
	}
	if body.Validate(NetworkKindUnknown) != nil {
		t.Fatal("only swarm refuses task references")
	}
}
