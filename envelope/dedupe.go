package envelope

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"time"
)

// MintedDedupeKeyPattern (MINTED_DEDUPE_KEY_PATTERN) is the shape of a minted dedupe key
// (envelope.md §4.1): an optional forward mark `envoy.role.forward.`, then `publish` or
// `agent.<session>` (no dot in the session), then `.` and 32 lowercase hex digits or a lowercase
// canonical UUID, anchored at both ends. It compiles unchanged in Go RE2 and ECMAScript.
const MintedDedupeKeyPattern = `^(?:envoy\.role\.forward\.)?(?:publish|agent\.[^.]+)\.(?:[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`

// mintedDedupeKey is MintedDedupeKeyPattern compiled; Go's `$` without the m flag matches only
// at the end of the text, so a trailing newline never matches.
var mintedDedupeKey = regexp.MustCompile(MintedDedupeKeyPattern)

// IsMintedDedupeKey reports whether key matches [MintedDedupeKeyPattern] in full
// (project-defined).
func IsMintedDedupeKey(key string) bool { return mintedDedupeKey.MatchString(key) }

// Dedupe and delivery constants of envelope.md §4.5.
const (
	// DeliveryDuplicateWindowMS (DELIVERY_DUPLICATE_WINDOW_MS; project-defined Go name) is how
	// long, in milliseconds, a repeat is recognised as a duplicate by the stream and every
	// subscriber; also the stream's max age (72 h).
	DeliveryDuplicateWindowMS int64 = 259200000
	// DeliveryDuplicateWindow is DeliveryDuplicateWindowMS as a time.Duration (72 h).
	DeliveryDuplicateWindow = time.Duration(DeliveryDuplicateWindowMS) * time.Millisecond
	// ReceiptTimeoutCause (RECEIPT_TIMEOUT_CAUSE) is recorded on an attempt whose send the
	// listener never answered (ASCII apostrophe).
	ReceiptTimeoutCause = "The listener didn't answer within the send window; the message may already have been delivered."
	// MaxBroadcastRecipients (MAX_BROADCAST_RECIPIENTS) is the most sessions one broadcast sends to.
	MaxBroadcastRecipients = 100
	// RoleForwardDedupePrefix (project-defined name) is the forward mark a role-lane forward puts
	// before the original dedupe key (§4.1, §5.2); ingress refuses caller keys that start with it.
	RoleForwardDedupePrefix = "envoy.role.forward."
	// ExceptionDedupePrefix (project-defined name) starts a delivery exception's dedupe key,
	// envoy.exception.<id> (§5.3).
	ExceptionDedupePrefix = "envoy.exception."
)

// DedupeKeyNamesItsEvent (TS dedupeKeyNamesItsEvent; project-defined Go name) reports whether a
// second envelope under e's dedupe_key is the same event arriving again (envelope.md §4.2). It
// reads only source, source_event_id and dedupe_key:
//
//  1. source dispatch → true, whatever the key;
//  2. a key matching [MintedDedupeKeyPattern] (any source) → true;
//  3. source github, slack or ghostwispr → true iff source_event_id is non-empty and the key is
//     source + "." + source_event_id;
//  4. otherwise false.
func DedupeKeyNamesItsEvent(e Envelope) bool {
	if e.Source == SourceDispatch {
		return true
	}
	if IsMintedDedupeKey(e.DedupeKey) {
		return true
	}
	switch e.Source {
	case SourceGithub, SourceSlack, SourceGhostWispr:
		s := string(e.Source)
		return e.SourceEventID != "" && len(e.DedupeKey) == len(s)+1+len(e.SourceEventID) &&
			strings.HasPrefix(e.DedupeKey, s) && e.DedupeKey[len(s)] == '.' &&
			strings.HasSuffix(e.DedupeKey, e.SourceEventID)
	}
	return false
}

// MessageID (project-defined) returns the broker message id (Nats-Msg-Id) a publish of e carries
// (envelope.md §4.3): dedupe_key + ":" + topic when the publish goes to the stream
// ([PublishTransport] is [TransportJetStream]) and [DedupeKeyNamesItsEvent] is true; otherwise
// ("", false) — a core-NATS publish carries no id.
func MessageID(e Envelope) (string, bool) {
	if PublishTransport(e.Topic) != TransportJetStream || !DedupeKeyNamesItsEvent(e) {
		return "", false
	}
	return e.DedupeKey + ":" + e.Topic, true
}

// RoleForwardDedupeKey (project-defined) is the dedupe_key of a role-lane forward copy:
// [RoleForwardDedupePrefix] + the original key (envelope.md §5.2).
func RoleForwardDedupeKey(key string) string { return RoleForwardDedupePrefix + key }

// IsRoleForwardDedupeKey (project-defined) reports whether key carries the forward mark; the
// role lane drops such envelopes and ingress APIs refuse caller-supplied keys with it (§4.4).
func IsRoleForwardDedupeKey(key string) bool {
	return strings.HasPrefix(key, RoleForwardDedupePrefix)
}

// NewEventID (project-defined) mints a fresh id: 32 lowercase hex characters from crypto/rand,
// the shape of a minted `event_id` and of the `<id>` in minted dedupe keys.
func NewEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it aborts the program instead)
	return hex.EncodeToString(b[:])
}

// PublishDedupeKey (project-defined) is the minted key publish.<id> of a listener publish; id is
// 32 lowercase hex or a lowercase UUID for the key to match [MintedDedupeKeyPattern].
func PublishDedupeKey(id string) string { return "publish." + id }

// AgentDedupeKey (project-defined) is the minted key agent.<session>.<id> of a session-scoped send.
func AgentDedupeKey(session, id string) string { return "agent." + session + "." + id }
