package envelope

import (
	"slices"
	"testing"
)

// TestStreamSubjects covers envelope.md §5.1 and §7 case 49.
func TestStreamSubjects(t *testing.T) {
	want := []string{
		"notifications.agent.>", "notifications.dispatch.>", "notifications.github.>", "notifications.slack.>",
		"notifications.legion.>", "notifications.ghostwispr.>", "notifications.whatsapp.>",
		"notifications.envoy.exceptions.notifications.agent.>",
	}
	got := StreamSubjects()
	if !slices.Equal(got, want) || NotificationsStream != "ENVOY_NOTIFICATIONS" {
		t.Fatalf("StreamSubjects %q", got)
	}
	got[0] = "changed"
	if StreamSubjects()[0] != want[0] {
		t.Fatal("StreamSubjects shares its backing array")
	}
	for _, s := range StreamSubjects() {
		if err := ValidSubscribeSubject(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
		for _, r := range RoleLaneSubjects() {
			if SubjectsOverlap(s, r) {
				t.Errorf("stream subject %q overlaps role lane %q", s, r)
			}
		}
	}
	for _, tt := range []struct{ subject, want string }{
		{"notifications.role.reviewer", ""},
		{"notifications.envoy.exceptions.notifications.agent.ses_1", "notifications.envoy.exceptions.notifications.agent.>"},
		{"notifications.envoy.exceptions.notifications.github.acme.widgets.pr.42", ""},
		{"notifications.github.acme.widgets.pr.42", "notifications.github.>"},
		{"agentstream.ses_1.frames", ""},
		{"notifications.agent", ""},
	} {
		got, ok := StreamSubjectFor(tt.subject)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("StreamSubjectFor(%q) = %q, %v; want %q", tt.subject, got, ok, tt.want)
		}
	}
}

// TestPublishTransport covers §5.1 and §7 case 50.
func TestPublishTransport(t *testing.T) {
	for _, tt := range []struct {
		topic string
		want  Transport
	}{
		{"notifications.role.reviewer", TransportCoreNATS},
		{"notifications.envoy.exceptions.notifications.role.reviewer", TransportCoreNATS},
		{"notifications.agent.ses_1", TransportJetStream},
		{"notifications.envoy.exceptions.notifications.agent.ses_1", TransportJetStream},
		{"notifications.envoy.exceptions.notifications.github.acme.widgets.pr.42", TransportJetStream},
		{"notifications.rolex", TransportJetStream},
	} {
		if got := PublishTransport(tt.topic); got != tt.want {
			t.Errorf("PublishTransport(%q) = %v, want %v", tt.topic, got, tt.want)
		}
	}
	if TransportCoreNATS.String() != "core" || TransportJetStream.String() != "jetstream" {
		t.Error("Transport.String")
	}
}

func TestSubjectsOverlap(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"notifications.>", "notifications.role.>", true},
		{"notifications.*.reviewer", "notifications.role.>", true},
		{"notifications.agent.>", "notifications.role.>", false},
		{"notifications.envoy.>", "notifications.envoy.exceptions.notifications.role.>", true},
		{"notifications.envoy.exceptions.notifications.agent.>", "notifications.envoy.exceptions.notifications.role.>", false},
		{"a.>", "a", false},
		{"a.*", "*.b", true},
		{"a.*", "a.b.c", false},
		{">", "x", true},
		{"*", "a.b", false},
		{"a.>", "a.>", true},
	} {
		if got := SubjectsOverlap(tt.a, tt.b); got != tt.want {
			t.Errorf("SubjectsOverlap(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestMergeStreamSubjects covers the subject-list rule for ensuring an existing stream (§5.1).
func TestMergeStreamSubjects(t *testing.T) {
	own := StreamSubjects()
	tests := []struct {
		name     string
		deployed []string
		want     []string
	}{
		{"fresh", nil, own},
		{"already right", own, own},
		{"catch-all removed (captures the role lane)", []string{"notifications.>"}, own},
		{"role lane removed", []string{"notifications.role.>", "notifications.agent.>"}, own},
		{"narrower own shape replaced", []string{"notifications.github.acme.>", "other.>"},
			append([]string{"other.>"}, own...)},
		{"foreign kept in order, own appended",
			[]string{"zeta.>", "notifications.slack.>", "alpha.x"},
			append([]string{"zeta.>", "notifications.slack.>", "alpha.x"}, slices.Delete(slices.Clone(own), 3, 4)...)},
		{"exception catch-all removed", []string{"notifications.envoy.exceptions.>"}, own},
		{"other exception family kept", []string{"notifications.envoy.exceptions.notifications.github.>"},
			append([]string{"notifications.envoy.exceptions.notifications.github.>"}, own...)},
	}
	for _, tt := range tests {
		if got := MergeStreamSubjects(tt.deployed); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
