package relay

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/store"
)

// `presence` → `presence_update` (hive.md §4.2, §4.3, §4.4).
//
// A presence frame is validated (§4.4) and must name an agent this socket's hello announced
// (H5, field `agent_id`). For each vault among that agent's announced channels, the relay sends
// one `presence_update` {agent_id, instance_id (the token's), role (the hello's BusAgentV1),
// vault_id, state, server_time, profile (as sent, self-reported)} to every other open socket
// following at least one channel of that vault in the same org: never across orgs, never to
// the sending socket. The tag written is `presence_update` (§4.2). `profile_id` is never set:
// the relay has no profile registry.
//
// Presence is live only (project-defined): it takes no seq, is not stored and is not replayed
// by hello cursors, catch-up or poll. A socket that starts following a vault (by a hello) is
// sent, right after that hello, the last presence_update each other open socket of the org
// sent for each of its announced agents in that vault (the snapshot of who is there, with the
// server_time of the update); an agent that went away in between is not in it. A presence_update travels like `message.status`: queued
// without waiting, so a socket too far behind is disconnected as a slow consumer (relay.md §3).
//
// Across relays (relay.md §5.1.3), on a store that relays presence: updates go to the other
// relays' sockets of the vault too, and a hello's snapshot also asks the other relays, whose
// frames follow within a short wait. Whether another socket of the instance still announces
// the agent is known per relay only, so a socket of the instance on another relay does not
// hold back an `offline` (its agent's next presence corrects it).
//
// Going offline (project-defined): when a socket closes, and when a later hello (H2) stops
// announcing an agent in a vault, every agent it announced there becomes `offline` for the
// other sockets of the vault — a `presence_update` with state `offline` and no profile — unless
// another open socket of the same instance still announces that agent in that vault.

// presenceFrame answers one `presence` frame; success sends nothing back.
func (sock *busSocket) presenceFrame(f *hive.FramePresence) {
	if err := f.Validate(); err != nil {
		sock.sendError(nil, frameValidationError(err))
		return
	}
	sock.mu.Lock()
	a, ok := sock.agents[f.AgentID]
	sock.mu.Unlock()
	if !ok { // H5
		sock.sendError(nil, newBusError(hive.HiveErrorCodeInvalidRequest, "agent_id", hive.ReasonUnannouncedAgent, "agent_id"+MsgUnannouncedAgent))
		return
	}
	now := hive.UtcTimestampOf(sock.s.now().UTC().Truncate(time.Second))
	for _, vault := range vaultsOf(a.Channels) {
		u := hive.FramePresenceUpdate{AgentID: a.AgentID, InstanceID: sock.p.InstanceID, Role: a.Role,
			VaultID: vault, State: f.State, ServerTime: now, Profile: f.Profile}
		if data, err := u.MarshalJSON(); err == nil {
			sock.presMu.Lock()
			if sock.presence == nil {
				sock.presence = map[presenceKey][]byte{}
			}
			sock.presence[presenceKey{a.AgentID, vault}] = data
			sock.presMu.Unlock()
		}
		sock.s.sendPresence(sock, u)
	}
}

// presenceKey names one remembered presence_update of a socket: an announced agent in a vault.
type presenceKey struct{ agent, vault string }

// prunePresence forgets the remembered updates of (agent, vault) pairs the socket no longer
// announces (called with the agents of its latest hello).
func (sock *busSocket) prunePresence(agents map[string]hive.BusAgentV1) {
	sock.presMu.Lock()
	defer sock.presMu.Unlock()
	for k := range sock.presence {
		a, ok := agents[k.agent]
		if !ok || !slices.Contains(vaultsOf(a.Channels), k.vault) {
			delete(sock.presence, k)
		}
	}
}

// presenceSnapshot sends sock the last presence_update of every other open socket of its org
// for each of vaults (the vaults its hello just started following); on a store that relays
// presence, the other relays' snapshots follow as they answer.
func (sock *busSocket) presenceSnapshot(vaults []string) {
	for _, vault := range vaults {
		for _, data := range sock.s.bus.presenceFrames(sock.p.Org, vault, sock) {
			sock.push(data)
		}
	}
	if pr := sock.s.presence; pr != nil && len(vaults) > 0 {
		go func() {
			for _, vault := range vaults {
				for _, data := range pr.PresenceSnapshot(context.Background(), sock.p.Org, vault) {
					sock.push(data)
				}
			}
		}()
	}
}

// presenceFrames returns the last presence_update of every open socket of org but except for
// vault, each socket's in a stable order (by agent_id first).
func (l *busLane) presenceFrames(org, vault string, except *busSocket) [][]byte {
	var out [][]byte
	for _, so := range l.vaultSockets(org, vault) {
		if so == except {
			continue
		}
		so.presMu.Lock()
		var frames [][]byte
		for k, data := range so.presence {
			if k.vault == vault {
				frames = append(frames, data)
			}
		}
		so.presMu.Unlock()
		slices.SortFunc(frames, bytes.Compare)
		out = append(out, frames...)
	}
	return out
}

// startPresence joins the presence of the other relays when the store relays it
// ([store.PresenceRelay], relay.md §5.1.3): their updates reach this relay's sockets of the
// vault, and their snapshot requests get this relay's sockets' last updates.
func (s *Server) startPresence() {
	pr, ok := s.store.(store.PresenceRelay)
	if !ok {
		return
	}
	s.presence = pr
	s.presenceStop = pr.SubscribePresence(func(org, vault string, frame []byte) {
		for _, so := range s.bus.vaultSockets(org, vault) {
			so.push(frame)
		}
	}, func(org, vault string) [][]byte { return s.bus.presenceFrames(org, vault, nil) })
}

// sendPresence pushes u to every socket of u's vault in from's org except from.
func (s *Server) sendPresence(from *busSocket, u hive.FramePresenceUpdate) {
	data, err := u.MarshalJSON()
	if err != nil {
		return
	}
	for _, so := range s.bus.vaultSockets(from.p.Org, u.VaultID) {
		if so != from {
			so.push(data)
		}
	}
	if s.presence != nil {
		s.presence.PublishPresence(from.p.Org, u.VaultID, data)
	}
}

// presenceGone announces `offline` for each (agent, vault) of gone that no open socket of this
// instance announces any more (socket close, or a hello that dropped it). Called after the
// socket's announcements were replaced (setAnnouncements).
func (sock *busSocket) presenceGone(gone map[string]hive.BusAgentV1) {
	if len(gone) == 0 {
		return
	}
	now := hive.UtcTimestampOf(sock.s.now().UTC().Truncate(time.Second))
	for _, a := range gone {
		for _, vault := range vaultsOf(a.Channels) {
			if sock.s.bus.announcesIn(sock.p.Org, sock.p.InstanceID, a.AgentID, vault) {
				continue
			}
			sock.s.sendPresence(sock, hive.FramePresenceUpdate{AgentID: a.AgentID, InstanceID: sock.p.InstanceID, Role: a.Role,
				VaultID: vault, State: hive.PresenceStateOffline, ServerTime: now})
		}
	}
}

// vaultsOf returns the distinct vault ids of channels, in first-seen order.
func vaultsOf(channels []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, ch := range channels {
		if _, vault, _, err := hive.ParseChannel(ch); err == nil && !seen[vault] {
			seen[vault] = true
			out = append(out, vault)
		}
	}
	return out
}

// vaultSockets returns the sockets following at least one channel of vault in org.
func (l *busLane) vaultSockets(org, vault string) []*busSocket {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[*busSocket]bool{}
	var out []*busSocket
	for k, f := range l.streams {
		if k.Network != store.NetworkOrg || k.Org != org {
			continue
		}
		if _, v, _, err := hive.ParseChannel(k.Name); err != nil || v != vault {
			continue
		}
		for so := range f.sockets {
			if !seen[so] {
				seen[so] = true
				out = append(out, so)
			}
		}
	}
	return out
}

// announcesIn reports whether an open socket of instance announces agent on a channel of vault.
func (l *busLane) announcesIn(org, instance, agent, vault string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for a := range l.live[instKey{org, instance}] {
		if a.agent == agent && vaultOf(a.channel) == vault {
			return true
		}
	}
	return false
}
