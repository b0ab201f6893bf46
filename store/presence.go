package store

import "context"

// PresenceRelay carries live bus presence between the relays that share a store (relay.md
// §5.1.3: presence is live only, never stored; it crosses relays, and a relay whose socket
// starts following a vault asks its peers for their snapshot). A store without it keeps
// presence within one relay, which is all there is with one process.
//
// Frames are `presence_update` frames (hive.md §4.2) as the relay writes them, opaque to the
// store; delivery is best effort, like presence itself (a frame lost while a relay is away is
// corrected by the agent's next presence).
type PresenceRelay interface {
	// PublishPresence sends frame, a presence_update of org's vault, to the other relays.
	PublishPresence(org, vault string, frame []byte)

	// SubscribePresence calls deliver with every presence_update another relay publishes,
	// and answer for every snapshot request of another relay: answer returns this relay's
	// frames for the org's vault (the last update of each agent its sockets announce there).
	// The calls come from one goroutine and must not block. stop ends the subscription.
	SubscribePresence(deliver func(org, vault string, frame []byte), answer func(org, vault string) [][]byte) (stop func())

	// PresenceSnapshot asks the other relays for their frames of org's vault and returns what
	// they answered within a short wait (or until ctx ends).
	PresenceSnapshot(ctx context.Context, org, vault string) [][]byte
}
