package jetstream

import (
	"bytes"
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/store"
)

var _ store.PresenceRelay = (*Store)(nil)

// Presence crosses relays over core NATS only (relay.md §5.1.3: live, never stored; no stream
// captures these subjects): updates on agentwire.presence.<org-token>.<vault-token>, snapshot
// requests on agentwire.presnap.<org-token>.<vault-token>, each stamped with the sending store
// instance so that it skips its own.
const (
	presencePrefix     = "agentwire.presence."
	presenceSnapPrefix = "agentwire.presnap."
	hdrRelay           = "Aw-Relay"
	// presenceWait is how long a snapshot request collects the answers of the other relays
	// (their number is not known).
	presenceWait = 250 * time.Millisecond
	// presencePendingMsgs and presencePendingBytes bound what a presence subscription holds
	// before its handler takes it; beyond them NATS drops (presence is best effort).
	presencePendingMsgs  = 4096
	presencePendingBytes = 8 << 20
)

// PublishPresence publishes frame to the other relays; a failure is dropped, like a lost
// presence.
func (s *Store) PublishPresence(org, vault string, frame []byte) {
	m := nats.NewMsg(presencePrefix + token(org) + "." + token(vault))
	m.Header.Set(hdrRelay, s.id)
	m.Data = frame
	_ = s.nc.PublishMsg(m)
}

// SubscribePresence subscribes to the other relays' updates and snapshot requests.
func (s *Store) SubscribePresence(deliver func(org, vault string, frame []byte), answer func(org, vault string) [][]byte) func() {
	updates, err := s.nc.Subscribe(presencePrefix+">", func(m *nats.Msg) {
		if m.Header.Get(hdrRelay) == s.id {
			return
		}
		if org, vault, err := splitKey(m.Subject, presencePrefix); err == nil {
			deliver(org, vault, m.Data)
		}
	})
	if err != nil {
		return func() {}
	}
	requests, err := s.nc.Subscribe(presenceSnapPrefix+">", func(m *nats.Msg) {
		if m.Header.Get(hdrRelay) == s.id || m.Reply == "" {
			return
		}
		org, vault, err := splitKey(m.Subject, presenceSnapPrefix)
		if err != nil {
			return
		}
		if frames := answer(org, vault); len(frames) > 0 {
			// Frames are compact JSON: a line break separates them.
			_ = m.Respond(bytes.Join(frames, []byte{'\n'}))
		}
	})
	if err != nil {
		_ = updates.Unsubscribe()
		return func() {}
	}
	for _, sub := range []*nats.Subscription{updates, requests} {
		_ = sub.SetPendingLimits(presencePendingMsgs, presencePendingBytes)
	}
	return func() {
		_ = updates.Unsubscribe()
		_ = requests.Unsubscribe()
	}
}

// PresenceSnapshot asks the other relays and collects their answers for presenceWait.
func (s *Store) PresenceSnapshot(ctx context.Context, org, vault string) [][]byte {
	inbox := nats.NewInbox()
	sub, err := s.nc.SubscribeSync(inbox)
	if err != nil {
		return nil
	}
	defer func() { _ = sub.Unsubscribe() }()
	_ = sub.SetPendingLimits(presencePendingMsgs, presencePendingBytes)
	m := nats.NewMsg(presenceSnapPrefix + token(org) + "." + token(vault))
	m.Reply = inbox
	m.Header.Set(hdrRelay, s.id)
	if err := s.nc.PublishMsg(m); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, presenceWait)
	defer cancel()
	var out [][]byte
	for {
		r, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return out
		}
		for _, f := range bytes.Split(r.Data, []byte{'\n'}) {
			if len(f) > 0 {
				out = append(out, f)
			}
		}
	}
}
