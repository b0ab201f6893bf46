package hive

import (
	"encoding/json"
	"strings"
	"testing"
)

func hello() FrameHello {
	return FrameHello{
		InstanceID: "inst_01jb8z9",
		Agents:     []BusAgentV1{{AgentID: "claude-3e", Role: "coder", Channels: []string{testChannel}}},
		Cursors:    []BusCursor{{Channel: testChannel, Seq: 40}},
	}
}

func TestFrameValidate(t *testing.T) {
	agents := func(n int) []BusAgentV1 {
		a := make([]BusAgentV1, n)
		for i := range a {
			a[i] = BusAgentV1{AgentID: "a" + strings.Repeat("x", i), Role: "r", Channels: []string{testChannel}}
		}
		return a
	}
	cursors := func(n int) []BusCursor {
		c := make([]BusCursor, n)
		for i := range c {
			c[i] = BusCursor{Channel: testChannel, Seq: uint64(i)}
		}
		return c
	}
	channels := func(n int) []string {
		c := make([]string, n)
		for i := range c {
			c[i] = testChannel
		}
		return c
	}
	profile := func(p PresenceProfileV1) *PresenceProfileV1 { return &p }
	publish := FramePublish{ClientMsgID: "c", Channel: testChannel, From: "a", Kind: "note", Priority: BusPriorityNormal, Privacy: BusPrivacyTeam, Body: json.RawMessage(`{"x":1}`)}
	tests := []struct {
		name string
		f    BusFrameV1
		want string
	}{
		{"hello", hello(), ""},
		{"hello empty instance", func() FrameHello { h := hello(); h.InstanceID = ""; return h }(), "instance_id must not be empty"},
		{"hello 64 agents", func() FrameHello { h := hello(); h.Agents = agents(64); return h }(), ""},
		{"hello 65 agents", func() FrameHello { h := hello(); h.Agents = agents(65); return h }(), "too many agents"},
		{"hello agent id", func() FrameHello { h := hello(); h.Agents[0].AgentID = " "; return h }(), "agent_id must not be empty"},
		{"hello role", func() FrameHello { h := hello(); h.Agents[0].Role = "r\x00"; return h }(), "role must not contain control characters"},
		{"hello 0 channels", func() FrameHello { h := hello(); h.Agents[0].Channels = nil; return h }(), "an agent follows 1-256 channels"},
		{"hello 256 channels", func() FrameHello { h := hello(); h.Agents[0].Channels = channels(256); return h }(), ""},
		{"hello 257 channels", func() FrameHello { h := hello(); h.Agents[0].Channels = channels(257); return h }(), "an agent follows 1-256 channels"},
		{"hello bad channel", func() FrameHello { h := hello(); h.Agents[0].Channels = []string{"general"}; return h }(), "channel must be org:<org>/vault:<vault_id>/<name>"},
		{"hello duplicate agent", func() FrameHello {
			h := hello()
			h.Agents = append(h.Agents, h.Agents[0])
			return h
		}(), "duplicate agent_id"},
		{"hello second agent's own checks first", func() FrameHello {
			h := hello()
			h.Agents = append(h.Agents, BusAgentV1{AgentID: "claude-3e", Role: "", Channels: []string{testChannel}})
			return h
		}(), "role must not be empty"},
		{"hello 1024 cursors", func() FrameHello { h := hello(); h.Cursors = cursors(1024); return h }(), ""},
		{"hello 1025 cursors", func() FrameHello { h := hello(); h.Cursors = cursors(1025); return h }(), "too many cursors"},
		{"hello bad cursor", func() FrameHello { h := hello(); h.Cursors = []BusCursor{{Channel: "c"}}; return h }(), "channel must be org:<org>/vault:<vault_id>/<name>"},
		{"presence", FramePresence{AgentID: "a", State: PresenceStateBusy}, ""},
		{"presence blank agent", FramePresence{AgentID: " ", State: PresenceStateBusy}, "agent_id must not be empty"},
		{"presence unknown state", FramePresence{AgentID: "a", State: PresenceStateUnknown}, "unknown presence state"},
		{"presence blank display name", FramePresence{AgentID: "a", State: PresenceStateIdle, Profile: profile(PresenceProfileV1{DisplayName: ptr("  ")})}, "display_name must not be empty"},
		{"presence long display name", FramePresence{AgentID: "a", State: PresenceStateIdle, Profile: profile(PresenceProfileV1{DisplayName: ptr(strings.Repeat("é", 65))})}, "display_name exceeds the 64 character limit"},
		{"presence model", FramePresence{AgentID: "a", State: PresenceStateIdle, Profile: profile(PresenceProfileV1{Model: ptr("")})}, "model must not be empty"},
		{"presence 17 roles", FramePresence{AgentID: "a", State: PresenceStateIdle, Profile: profile(PresenceProfileV1{Roles: channels(17)})}, "too many roles"},
		{"presence empty role", FramePresence{AgentID: "a", State: PresenceStateIdle, Profile: profile(PresenceProfileV1{Roles: []string{""}})}, "role must not be empty"},
		{"publish", publish, ""},
		{"publish client_msg_id", func() FramePublish { p := publish; p.ClientMsgID = ""; return p }(), "client_msg_id must not be empty"},
		{"publish channel", func() FramePublish { p := publish; p.Channel = "c"; return p }(), "channel must be org:<org>/vault:<vault_id>/<name>"},
		{"publish from", func() FramePublish { p := publish; p.From = ""; return p }(), "from must not be empty"},
		{"publish to", func() FramePublish { p := publish; p.To = ptr(""); return p }(), "to must not be empty"},
		{"publish kind", func() FramePublish { p := publish; p.Kind = ""; return p }(), "kind must not be empty"},
		{"publish priority", func() FramePublish { p := publish; p.Priority = "urgent"; return p }(), "unknown priority"},
		{"publish privacy", func() FramePublish { p := publish; p.Privacy = BusPrivacyUnknown; return p }(), "unknown privacy"},
		{"publish private without to", func() FramePublish { p := publish; p.Privacy = BusPrivacyPrivate; return p }(), "private frames name a recipient"},
		{"publish private with to", func() FramePublish { p := publish; p.Privacy = BusPrivacyPrivate; p.To = ptr("b"); return p }(), ""},
		{"publish nil body is null", func() FramePublish { p := publish; p.Body = nil; return p }(), ""},
		{"publish body at the limit", func() FramePublish {
			p := publish
			p.Body = json.RawMessage(`"` + strings.Repeat("x", 65534) + `"`)
			return p
		}(), ""},
		{"publish body over the limit", func() FramePublish {
			p := publish
			p.Body = json.RawMessage(`"` + strings.Repeat("x", 65535) + `"`)
			return p
		}(), "body exceeds the 65536 byte limit"},
		{"publish body measured compact", func() FramePublish {
			p := publish
			p.Body = json.RawMessage(`[` + strings.Repeat(" ", 70000) + `1]`)
			return p
		}(), ""},
		{"ack", FrameAck{Channel: testChannel, Seq: 1}, ""},
		{"ack seq 0", FrameAck{Channel: testChannel}, "seq starts at 1"},
		{"ack channel first", FrameAck{Channel: ""}, "channel must not be empty"},
		{"offer", FrameHandoffOffer{HandoffID: "h", Channel: testChannel, From: "a", To: "b", BundleRef: "r"}, ""},
		{"offer handoff_id", FrameHandoffOffer{Channel: testChannel, From: "a", To: "b", BundleRef: "r"}, "handoff_id must not be empty"},
		{"offer channel", FrameHandoffOffer{HandoffID: "h", From: "a", To: "b", BundleRef: "r"}, "channel must not be empty"},
		{"offer from", FrameHandoffOffer{HandoffID: "h", Channel: testChannel, To: "b", BundleRef: "r"}, "from must not be empty"},
		{"offer to", FrameHandoffOffer{HandoffID: "h", Channel: testChannel, From: "a", BundleRef: "r"}, "to must not be empty"},
		{"offer bundle_ref", FrameHandoffOffer{HandoffID: "h", Channel: testChannel, From: "a", To: "b"}, "bundle_ref must not be empty"},
		{"ack handoff", FrameHandoffAck{HandoffID: "h", By: "b"}, ""},
		{"ack handoff by", FrameHandoffAck{HandoffID: "h"}, "by must not be empty"},
		{"reject", FrameHandoffReject{HandoffID: "h", By: "b", Reason: "busy"}, ""},
		{"reject handoff_id", FrameHandoffReject{By: "b", Reason: "busy"}, "handoff_id must not be empty"},
		{"reject reason", FrameHandoffReject{HandoffID: "h", By: "b", Reason: ""}, "reason must not be empty"},
		{"reject long reason", FrameHandoffReject{HandoffID: "h", By: "b", Reason: strings.Repeat("r", 1001)}, "reason exceeds the 1000 character limit"},
		{"message", FrameMessage{Message: question()}, ""},
		{"message invalid", FrameMessage{Message: func() AgentMessageV1 { m := question(); m.Type = MessageTypeAnswer; return m }()}, "an answer replies to a question"},
		{"receipt", FrameMessageReceipt{Receipt: MessageReceiptV1{GID: "g", By: "b", State: "seen"}}, "unknown receipt state"},
		{"deliver", FrameMessageDeliver{Delivery: func() MessageDeliveryV1 { d := delivery(true); d.Trust = MessageTrustTeam; return d }()}, "Swarm content is always untrusted"},
		{"S→C frames have no checks", FrameControl{}, ""},
		{"task event has no checks", FrameTaskEvent{}, ""},
	}
	for _, tc := range tests {
		if got := errText(ValidateFrame(tc.f)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFrameDirections(t *testing.T) {
	if len(FrameTags()) != 18 {
		t.Fatalf("%d tags", len(FrameTags()))
	}
	for _, tag := range FrameTags() {
		if _, ok := DirectionOf(tag); !ok {
			t.Fatalf("%s has no direction", tag)
		}
	}
	if d, ok := DirectionOf("presence.update"); !ok || d != ServiceToClient {
		t.Fatal("alias")
	}
	if _, ok := DirectionOf("presence.Update"); ok {
		t.Fatal("tags are exact")
	}
	cases := []struct {
		doc    string
		side   Side
		tag    string // "" = ignored
		errSub string
	}{
		{`{"t":"ack","channel":"` + testChannel + `","seq":1}`, AtService, TagAck, ""},
		{`{"t":"ack","channel":"` + testChannel + `","seq":1}`, AtClient, "", ""},
		{`{"t":"published","client_msg_id":"c","channel":"c","seq":1,"server_time":"2026-10-20T12:00:00Z"}`, AtService, "", "names a service-to-client frame"},
		{`{"t":"published","client_msg_id":"c","channel":"c","seq":1,"server_time":"2026-10-20T12:00:00Z","x":1}`, AtClient, TagPublished, ""},
		{`{"t":"handoff.ack","handoff_id":"h","by":"b","x":1}`, AtService, "", "is not a known member"},
		{`{"t":"handoff.ack","handoff_id":"h","by":"b","x":1}`, AtClient, TagHandoffAck, ""},
		{`{"t":"presence.update","agent_id":"a","instance_id":"i","role":"r","vault_id":"v","state":"idle","server_time":"2026-10-20T12:00:00Z"}`, AtClient, TagPresenceUpdate, ""},
		{`{"t":"hologram"}`, AtClient, "", ""},
		{`{"t":"hologram"}`, AtService, "", "has unknown value"},
		{`{"x":1}`, AtClient, "", "is missing"},
		{`[1]`, AtClient, "", "must be a JSON object"},
	}
	for _, tc := range cases {
		f, err := DecodeBusFrame([]byte(tc.doc), tc.side)
		switch {
		case tc.errSub != "":
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("%s: %v, want %q", tc.doc, err, tc.errSub)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.doc, err)
		case tc.tag == "" && f != nil:
			t.Errorf("%s: %v must be ignored", tc.doc, f)
		case tc.tag != "" && (f == nil || f.Tag() != tc.tag):
			t.Errorf("%s: got %v", tc.doc, f)
		}
	}
}

func TestFrameEncodingPutsTagFirst(t *testing.T) {
	frames := []BusFrameV1{
		hello(), FramePresence{AgentID: "a", State: "odd"}, FrameAck{Channel: "c", Seq: 1},
		FramePublish{Body: nil}, FrameDeliver{Body: json.RawMessage(` [ 1 , 2 ] `), ServerTime: MustUtcTimestamp("2026-10-20T12:00:00Z")},
		FrameMessage{Message: question()}, FrameMessageDeliver{Delivery: delivery(false)},
		FrameError{Error: HiveErrorDetailV1{Code: "teapot"}},
	}
	for _, f := range frames {
		out, err := f.MarshalJSON()
		if err != nil {
			t.Fatalf("%T: %v", f, err)
		}
		if !strings.HasPrefix(string(out), `{"t":"`+f.Tag()+`"`) {
			t.Fatalf("%T: %s", f, out)
		}
	}
	out, _ := FrameDeliver{Body: json.RawMessage(` [ 1 , 2 ] `), ServerTime: MustUtcTimestamp("2026-10-20T12:00:00Z")}.MarshalJSON()
	if !strings.Contains(string(out), `"body":[1,2]`) {
		t.Fatalf("body is written compact: %s", out)
	}
	if _, err := (FramePublish{Body: json.RawMessage(`{"a":1,"a":2}`)}).MarshalJSON(); err == nil {
		t.Fatal("an invalid raw body must not encode")
	}
	out, _ = FramePresence{AgentID: "a", State: "odd"}.MarshalJSON()
	if string(out) != `{"t":"presence","agent_id":"a","state":"unknown"}` {
		t.Fatalf("E4: %s", out)
	}
}
