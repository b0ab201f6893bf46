package envelope

import "strings"

// NotificationsStream (project-defined Go name) is the JetStream stream ENVOY_NOTIFICATIONS that
// stores notifications (envelope.md §5.1).
const NotificationsStream = "ENVOY_NOTIFICATIONS"

// streamSubjects is the stream's own subject list, in the order of envelope.md §5.1.
var streamSubjects = [...]string{
	"notifications.agent.>",
	"notifications.dispatch.>",
	"notifications.github.>",
	"notifications.slack.>",
	"notifications.legion.>",
	"notifications.ghostwispr.>",
	"notifications.whatsapp.>",
	"notifications.envoy.exceptions.notifications.agent.>",
}

// roleLaneSubjects are the core-NATS-only lanes the stream must never capture (§5.1).
var roleLaneSubjects = [...]string{
	"notifications.role.>",
	"notifications.envoy.exceptions.notifications.role.>",
}

// StreamSubjects returns the stream's own subjects in the order of envelope.md §5.1 (a fresh
// slice each call).
func StreamSubjects() []string { return append([]string(nil), streamSubjects[:]...) }

// RoleLaneSubjects (project-defined) returns the two patterns that travel over core NATS only and
// that no stream subject may overlap: notifications.role.> and its exception twin (§5.1).
func RoleLaneSubjects() []string { return append([]string(nil), roleLaneSubjects[:]...) }

// StreamSubjectFor (project-defined) returns the first of [StreamSubjects] that matches subject,
// or ("", false) when the stream does not store it (envelope.md §7 case 49).
func StreamSubjectFor(subject string) (string, bool) {
	for _, p := range streamSubjects {
		if MatchSubject(p, subject) {
			return p, true
		}
	}
	return "", false
}

// Transport is how a topic is published (envelope.md §5.1; project-defined type).
type Transport int

const (
	// TransportJetStream is a JetStream publish with the message id of §4.3, acknowledged by
	// the stream.
	TransportJetStream Transport = iota
	// TransportCoreNATS is a core-NATS publish: no acknowledgement, no message id, never stored.
	TransportCoreNATS
)

// String returns "jetstream" or "core".
func (t Transport) String() string {
	if t == TransportCoreNATS {
		return "core"
	}
	return "jetstream"
}

// PublishTransport (project-defined) is the transport of a publish on topic (envelope.md §5.1): a
// topic under notifications.role. or notifications.envoy.exceptions.notifications.role. goes over
// core NATS; every other topic is a JetStream publish.
func PublishTransport(topic string) Transport {
	if strings.HasPrefix(topic, RoleTopicPrefix) || strings.HasPrefix(topic, ExceptionTopicPrefix+RoleTopicPrefix) {
		return TransportCoreNATS
	}
	return TransportJetStream
}

// SubjectsOverlap (project-defined) reports whether some subject matches both patterns a and b
// under [MatchSubject] (envelope.md §5.1: "two patterns overlap when some subject matches
// both"). Literal tokens must be equal, `*` meets any single token, and a last-place `>` meets
// one or more remaining tokens of the other pattern.
func SubjectsOverlap(a, b string) bool {
	for {
		at, arest, amore := cutToken(a)
		bt, brest, bmore := cutToken(b)
		// Both hold at least one token here; a trailing '>' absorbs all the other's rest.
		if (at == ">" && !amore) || (bt == ">" && !bmore) {
			return true
		}
		if at != "*" && bt != "*" && at != bt {
			return false
		}
		if !amore || !bmore {
			return amore == bmore
		}
		a, b = arest, brest
	}
}

// MergeStreamSubjects (project-defined) computes the subject list an owner ensuring the stream
// sets when it already exists (envelope.md §5.1): the deployed list, in its order, less every
// subject that overlaps a role lane and every subject that overlaps one of the own subjects
// without equalling it, followed by each own subject not yet in it, in the order of
// [StreamSubjects]. Any other deployed subject is kept.
func MergeStreamSubjects(deployed []string) []string {
	out := make([]string, 0, len(deployed)+len(streamSubjects))
next:
	for _, d := range deployed {
		for _, r := range roleLaneSubjects {
			if SubjectsOverlap(d, r) {
				continue next
			}
		}
		for _, own := range streamSubjects {
			if d != own && SubjectsOverlap(d, own) {
				continue next
			}
		}
		out = append(out, d)
	}
	for _, own := range streamSubjects {
		found := false
		for _, d := range out {
			if d == own {
				found = true
				break
			}
		}
		if !found {
			out = append(out, own)
		}
	}
	return out
}
