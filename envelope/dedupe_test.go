package envelope

import (
	"regexp"
	"testing"
	"time"
)

// TestDedupeKeyNamesItsEvent covers envelope.md §4.2 and §7 cases 37–45.
func TestDedupeKeyNamesItsEvent(t *testing.T) {
	const uuid = "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"
	tests := []struct {
		name                     string
		source, sourceEvent, key string
		want                     bool
	}{
		{"case 37 dispatch scoped key", "dispatch", "", "agent.ses_a.m1:aside", true},
		{"case 37 dispatch empty key", "dispatch", "", "", true},
		{"case 37 agent empty key", "agent", "", "", false},
		{"case 38 github webhook", "github", "delivery-7", "github.delivery-7", true},
		{"case 39 agent publish", "agent", "", "publish." + hex32, true},
		{"case 39 github publish", "github", "", "publish." + hex32, true},
		{"case 40 agent uuid", "agent", "", "agent.ses_a." + uuid, true},
		{"case 40 forward mark", "agent", "", "envoy.role.forward.publish." + hex32, true},
		{"case 41 github mismatched key", "github", "mcp://acme/alerts", "github.3f2a", false},
		{"case 42 outbox", "agent", "", "legion-outbox:1", false},
		{"case 42 not minted", "agent", "", "agent.ses_a.retry-abc", false},
		{"case 43 short hex", "agent", "", "publish.abc", false},
		{"case 43 uppercase hex", "agent", "", "publish.0123456789ABCDEF0123456789ABCDEF", false},
		{"case 43 dot in session", "agent", "", "agent.ses.a." + hex32, false},
		{"case 44 slack", "slack", "Ev0123", "slack.Ev0123", true},
		{"case 44 empty source_event_id", "github", "", "github.", false},
		{"case 45 human", "human", "x", "human.x", false},
		{"case 45 exception key", "envoy", "", "envoy.exception." + hex32, false},
		{"ghostwispr webhook", "ghostwispr", "g1", "ghostwispr.g1", true},
		{"whatsapp key", "whatsapp", "m1", "whatsapp.15551234567.chat.1760000000000", false},
		{"whatsapp source.id not rule 3", "whatsapp", "m1", "whatsapp.m1", false},
		{"wrong source prefix", "slack", "Ev0123", "github.Ev0123", false},
		{"uppercase uuid", "agent", "", "publish.3F2A9C1E-5B7D-4E8F-9A0B-1C2D3E4F5A6B", false},
		{"trailing newline", "agent", "", "publish." + hex32 + "\n", false},
		{"double forward mark", "agent", "", "envoy.role.forward.envoy.role.forward.publish." + hex32, false},
		{"33 hex", "agent", "", "publish." + hex32 + "0", false},
		{"empty session", "agent", "", "agent.." + hex32, false},
		{"forward agent uuid", "slack", "x", "envoy.role.forward.agent.ses_1." + uuid, true},
	}
	for _, tt := range tests {
		e := Envelope{Source: Source(tt.source), SourceEventID: tt.sourceEvent, DedupeKey: tt.key}
		if got := DedupeKeyNamesItsEvent(e); got != tt.want {
			t.Errorf("%s: DedupeKeyNamesItsEvent = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMintedDedupeKeyPattern(t *testing.T) {
	const want = `^(?:envoy\.role\.forward\.)?(?:publish|agent\.[^.]+)\.(?:[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`
	if MintedDedupeKeyPattern != want {
		t.Fatalf("pattern %q", MintedDedupeKeyPattern)
	}
	if _, err := regexp.Compile(MintedDedupeKeyPattern); err != nil {
		t.Fatal(err)
	}
	id := NewEventID()
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) || id == NewEventID() {
		t.Fatalf("NewEventID %q", id)
	}
	for _, k := range []string{PublishDedupeKey(id), AgentDedupeKey("ses_1", id), RoleForwardDedupeKey(PublishDedupeKey(id))} {
		if !IsMintedDedupeKey(k) {
			t.Errorf("%q not minted", k)
		}
	}
	if !IsRoleForwardDedupeKey("envoy.role.forward.x") || IsRoleForwardDedupeKey("envoy.role.forwardx") {
		t.Error("IsRoleForwardDedupeKey")
	}
}

// TestMessageID covers §4.3 and §7 cases 38 and 50.
func TestMessageID(t *testing.T) {
	tests := []struct {
		name   string
		e      Envelope
		want   string
		wantOK bool
	}{
		{"case 38", Envelope{Source: SourceGithub, SourceEventID: "delivery-7", DedupeKey: "github.delivery-7", Topic: "notifications.github.acme.widgets.pr.42"},
			"github.delivery-7:notifications.github.acme.widgets.pr.42", true},
		{"case 50 agent lane", Envelope{Source: SourceAgent, DedupeKey: "publish." + hex32, Topic: "notifications.agent.ses_1"},
			"publish." + hex32 + ":notifications.agent.ses_1", true},
		{"case 50 role lane", Envelope{Source: SourceAgent, DedupeKey: "publish." + hex32, Topic: "notifications.role.reviewer"}, "", false},
		{"case 50 role exception", Envelope{Source: SourceEnvoy, DedupeKey: "publish." + hex32, Topic: "notifications.envoy.exceptions.notifications.role.reviewer"}, "", false},
		{"case 41 no id", Envelope{Source: SourceGithub, SourceEventID: "mcp://acme/alerts", DedupeKey: "github.3f2a", Topic: "notifications.github.acme.alerts"}, "", false},
		{"dispatch any key", Envelope{Source: SourceDispatch, DedupeKey: "m1:aside", Topic: "notifications.dispatch.issue.DSP-1.ask.opened"},
			"m1:aside:notifications.dispatch.issue.DSP-1.ask.opened", true},
	}
	for _, tt := range tests {
		got, ok := MessageID(tt.e)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: MessageID = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

// TestConstants pins envelope.md §4.5.
func TestConstants(t *testing.T) {
	if DeliveryDuplicateWindowMS != 259200000 || DeliveryDuplicateWindow != 72*time.Hour {
		t.Errorf("duplicate window %d / %v", DeliveryDuplicateWindowMS, DeliveryDuplicateWindow)
	}
	if ReceiptTimeoutCause != "The listener didn't answer within the send window; the message may already have been delivered." {
		t.Errorf("ReceiptTimeoutCause %q", ReceiptTimeoutCause)
	}
	if MaxBroadcastRecipients != 100 {
		t.Errorf("MaxBroadcastRecipients %d", MaxBroadcastRecipients)
	}
	if RoleForwardDedupePrefix != "envoy.role.forward." || ExceptionDedupePrefix != "envoy.exception." {
		t.Errorf("prefixes %q %q", RoleForwardDedupePrefix, ExceptionDedupePrefix)
	}
}
