package hive_test

import (
	"encoding/json"
	"testing"

	"github.com/agentwire/agentwire/hive"
)

// benchMessage is the §2.12 question frame without its tag: a message with a deadline and two
// references.
const benchMessage = `{"client_msg_id":"01JBMSG7Q3","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":"claude-3e","deadline":"2026-10-21T12:00:00Z","body":{"text":"Which retry budget does payments use?","references":[{"kind":"task","number":7},{"kind":"commit","id":"9f2c1ab"}]}}`

// benchDelivery is delivery O of §2.12.
const benchDelivery = `{"gid":"g-1","seq":41,"network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":{"kind":"agent","agent":"claude-3e","instance_label":"laptop","instance_id":"inst_01jb8z9","owner":"Ana","mine":false},"thread_id":"g-1","deadline":"2026-10-21T12:00:00Z","body":{"text":"Which retry budget does payments use?"},"trust":"team","server_time":"2026-10-20T12:00:00Z","expires_at":"2026-11-19T12:00:00Z"}`

// Plain Go structs with the same members, decoded by encoding/json: the baseline the issue
// compares against (no strictness, no tagged enums, no validation).
type plainReference struct {
	Kind      string  `json:"kind"`
	Number    *uint64 `json:"number,omitempty"`
	ID        *string `json:"id,omitempty"`
	HandoffID *string `json:"handoff_id,omitempty"`
}

type plainNetwork struct {
	Kind    string  `json:"kind"`
	Channel *string `json:"channel,omitempty"`
	SwarmID *string `json:"swarm_id,omitempty"`
}

type plainBody struct {
	Text       string           `json:"text"`
	References []plainReference `json:"references,omitempty"`
}

type plainSealed struct {
	ContentSchema string `json:"content_schema"`
	Epoch         uint64 `json:"epoch"`
	Nonce         string `json:"nonce"`
	Ciphertext    string `json:"ciphertext"`
}

type plainMessage struct {
	ClientMsgID string       `json:"client_msg_id"`
	Network     plainNetwork `json:"network"`
	Type        string       `json:"type"`
	From        string       `json:"from"`
	To          *string      `json:"to,omitempty"`
	ToInstance  *string      `json:"to_instance,omitempty"`
	ReplyTo     *string      `json:"reply_to,omitempty"`
	Deadline    *string      `json:"deadline,omitempty"`
	Body        *plainBody   `json:"body,omitempty"`
	Sealed      *plainSealed `json:"sealed,omitempty"`
}

type plainSender struct {
	Kind          string  `json:"kind"`
	Agent         *string `json:"agent,omitempty"`
	InstanceLabel *string `json:"instance_label,omitempty"`
	InstanceID    *string `json:"instance_id,omitempty"`
	Owner         *string `json:"owner,omitempty"`
	Model         *string `json:"model,omitempty"`
	Mine          *bool   `json:"mine,omitempty"`
	ProfileID     *string `json:"profile_id,omitempty"`
	Label         *string `json:"label,omitempty"`
	Handle        *string `json:"handle,omitempty"`
	Reputation    *uint64 `json:"reputation,omitempty"`
}

type plainDelivery struct {
	GID        string       `json:"gid"`
	Seq        uint64       `json:"seq"`
	Network    plainNetwork `json:"network"`
	Type       string       `json:"type"`
	From       plainSender  `json:"from"`
	To         *string      `json:"to,omitempty"`
	ThreadID   string       `json:"thread_id"`
	ReplyTo    *string      `json:"reply_to,omitempty"`
	Deadline   *string      `json:"deadline,omitempty"`
	Body       *plainBody   `json:"body,omitempty"`
	Sealed     *plainSealed `json:"sealed,omitempty"`
	Trust      string       `json:"trust"`
	ServerTime string       `json:"server_time"`
	ExpiresAt  string       `json:"expires_at"`
}

func BenchmarkAgentMessageDecodeValidate(b *testing.B) {
	data := []byte(benchMessage)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var m hive.AgentMessageV1
		if err := m.UnmarshalJSON(data); err != nil {
			b.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAgentMessageEncodingJSON(b *testing.B) {
	data := []byte(benchMessage)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var m plainMessage
		if err := json.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMessageDeliveryDecodeValidate(b *testing.B) {
	data := []byte(benchDelivery)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var m hive.MessageDeliveryV1
		if err := m.UnmarshalJSON(data); err != nil {
			b.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMessageDeliveryEncodingJSON(b *testing.B) {
	data := []byte(benchDelivery)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var m plainDelivery
		if err := json.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAgentMessageEncode(b *testing.B) {
	var m hive.AgentMessageV1
	if err := m.UnmarshalJSON([]byte(benchMessage)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBusFrameDecodeAtClient(b *testing.B) {
	data := []byte(`{"t":"message.deliver",` + benchDelivery[1:])
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, err := hive.DecodeBusFrame(data, hive.AtClient)
		if err != nil || f == nil {
			b.Fatal(err)
		}
		if err := hive.ValidateFrame(f); err != nil {
			b.Fatal(err)
		}
	}
}
