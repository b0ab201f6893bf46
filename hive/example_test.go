package hive_test

import (
	"fmt"

	"github.com/agentwire/agentwire/hive"
)

// A client decodes a `message` frame's members strictly, validates them and re-encodes the
// exact wire form.
func ExampleAgentMessageV1() {
	doc := `{"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"answer","from":"claude-3e","body":{"text":"Three retries."}}`
	var m hive.AgentMessageV1
	if err := m.UnmarshalJSON([]byte(doc)); err != nil {
		fmt.Println("decode:", err)
		return
	}
	fmt.Println("validate:", m.Validate())
	m.ReplyTo = new(string)
	*m.ReplyTo = "g-1"
	fmt.Println("validate:", m.Validate())
	out, _ := m.MarshalJSON()
	fmt.Println(string(out))
	// Output:
	// validate: an answer replies to a question
	// validate: <nil>
	// {"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"answer","from":"claude-3e","reply_to":"g-1","body":{"text":"Three retries."}}
}

// Frames are decoded for their receiving side: a client ignores frames it does not know, the
// service refuses them.
func ExampleDecodeBusFrame() {
	f, err := hive.DecodeBusFrame([]byte(`{"t":"hologram"}`), hive.AtClient)
	fmt.Println(f, err)
	_, err = hive.DecodeBusFrame([]byte(`{"t":"ack","channel":"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g","seq":1,"x":1}`), hive.AtService)
	fmt.Println(err)
	f, _ = hive.DecodeBusFrame([]byte(`{"t":"presence.update","agent_id":"a","instance_id":"i","role":"coder","vault_id":"3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42","state":"online","server_time":"2026-10-20T12:00:00Z"}`), hive.AtClient)
	out, _ := f.MarshalJSON()
	fmt.Println(string(out))
	// Output:
	// <nil> <nil>
	// BusFrameV1.x is not a known member.
	// {"t":"presence_update","agent_id":"a","instance_id":"i","role":"coder","vault_id":"3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42","state":"online","server_time":"2026-10-20T12:00:00Z"}
}

func ExampleNewUtcTimestamp() {
	for _, s := range []string{"2028-02-29T23:59:59Z", "2026-02-29T12:00:00Z", "2026-10-21T12:00:00.000Z"} {
		_, err := hive.NewUtcTimestamp(s)
		fmt.Println(s, err)
	}
	// Output:
	// 2028-02-29T23:59:59Z <nil>
	// 2026-02-29T12:00:00Z UtcTimestamp contains an invalid calendar or clock value
	// 2026-10-21T12:00:00.000Z UtcTimestamp must use canonical YYYY-MM-DDTHH:MM:SSZ syntax
}

func ExampleCheckTaskTransition() {
	to, event, err := hive.CheckTaskTransition(hive.TaskStateClaimed, hive.TaskActionSubmit, hive.RoleHolder)
	fmt.Println(to, event, err)
	_, _, err = hive.CheckTaskTransition(hive.TaskStateSubmitted, hive.TaskActionAccept, hive.RoleHolder)
	fmt.Println(err)
	// Output:
	// submitted submitted <nil>
	// only the person, the independent agent or the service may accept a submitted task
}

func ExampleSealedAAD() {
	fmt.Println(string(hive.SealedAAD("3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42", 3, hive.SealedMessageSchema)))
	// Output: 3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42|0|3|leanctx.hive.sealed-message/v1
}
