package relay_test

import (
	"testing"

	"github.com/agentwire/agentwire/hive"
)

const (
	vaultMain  = "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42"
	vaultOther = "00000000000000000000000000000001"
)

func (b *busClient) expectPresence() (hive.FramePresenceUpdate, []byte) {
	b.t.Helper()
	f, raw := b.recv()
	p, ok := f.(hive.FramePresenceUpdate)
	if !ok {
		b.t.Fatalf("%s: want presence_update, got %s", b.name, raw)
	}
	return p, raw
}

// presence → presence_update to the other sockets of the vault in the same org (never another
// org, another vault or the sender); offline when a socket closes or a hello drops the agent.
func TestBusPresence(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	a3 := h.dialBus(tokA3, "a3")
	g1 := h.dialBus(tokG1, "g1")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}, {"multi", []string{chGeneral, chOther}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chOps}}}) // same vault, other channel
	a3.hello("inst_a3", []agentSpec{{"helper", []string{chOther}}}) // other vault
	g1.hello("inst_g1", []agentSpec{{"gx", []string{chGeneral}}})   // same channel text, other org

	a1.sendRaw(`{"t":"presence","agent_id":"claude-3e","state":"busy","profile":{"display_name":"Claude","model":"opus","roles":["coder","reviewer"]}}`)
	a1.sync() // presence answers nothing; the round trip shows it was handled
	_, raw := a2.expectPresence()
	want := `{"t":"presence_update","agent_id":"claude-3e","instance_id":"inst_a1","role":"coder","vault_id":"` + vaultMain +
		`","state":"busy","server_time":"`
	if len(raw) < len(want) || string(raw[:len(want)]) != want ||
		string(raw[len(raw)-len(`,"profile":{"display_name":"Claude","model":"opus","roles":["coder","reviewer"]}}`):]) != `,"profile":{"display_name":"Claude","model":"opus","roles":["coder","reviewer"]}}` {
		t.Fatalf("a2 presence_update %s", raw)
	}
	for _, r := range []*busClient{a3, g1} { // other vault, other org: nothing
		r.sync()
	}
	// An agent on two vaults: one update per vault, each to that vault's sockets.
	a1.send(hive.FramePresence{AgentID: "multi", State: hive.PresenceStateOnline})
	a1.sync()
	if p, raw := a2.expectPresence(); p.VaultID != vaultMain || p.AgentID != "multi" || p.Profile != nil || p.State != hive.PresenceStateOnline {
		t.Fatalf("a2 multi %s", raw)
	}
	if p, raw := a3.expectPresence(); p.VaultID != vaultOther || p.InstanceID != "inst_a1" {
		t.Fatalf("a3 multi %s", raw)
	}
	a2.sync()
	a3.sync()
	// globex presence never reaches acme.
	g1.send(hive.FramePresence{AgentID: "gx", State: hive.PresenceStateIdle})
	g1.sync()
	for _, r := range []*busClient{a1, a2, a3} {
		r.sync()
	}

	// Refusals keep the socket open and name the member.
	cases := []struct{ name, frame, field, reason, message string }{
		{"unannounced (H5)", `{"t":"presence","agent_id":"gx","state":"online"}`, "agent_id", hive.ReasonUnannouncedAgent, "agent_id names no agent announced by hello on this socket"},
		{"unknown state", `{"t":"presence","agent_id":"claude-3e","state":"asleep"}`, "state", "", "unknown presence state"},
		{"blank agent_id", `{"t":"presence","agent_id":" ","state":"online"}`, "agent_id", "", "agent_id must not be empty"},
		{"blank display_name", `{"t":"presence","agent_id":"claude-3e","state":"online","profile":{"display_name":"  "}}`, "profile.display_name", "", "display_name must not be empty"},
		{"blank model", `{"t":"presence","agent_id":"claude-3e","state":"online","profile":{"model":""}}`, "profile.model", "", "model must not be empty"},
		{"too many roles", `{"t":"presence","agent_id":"claude-3e","state":"online","profile":{"roles":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}}`, "profile.roles", "", "too many roles"},
		{"unknown profile member", `{"t":"presence","agent_id":"claude-3e","state":"online","profile":{"avatar":"x"}}`, "profile.avatar", "", ""},
	}
	for _, c := range cases {
		a1.sendRaw(c.frame)
		e := a1.expectError(c.field, c.reason)
		if e.Error.Code != hive.HiveErrorCodeInvalidRequest || (c.message != "" && e.Error.Message != c.message) {
			t.Errorf("%s: %s", c.name, encode(t, e))
		}
	}
	a2.sync() // the refusals sent nothing

	// A second socket of inst_a1 announces claude-3e too: closing the first is no offline.
	a1b := h.dialBus(tokA1, "a1b")
	a1b.send(hive.FrameHello{InstanceID: "inst_a1", Agents: []hive.BusAgentV1{{AgentID: "claude-3e", Role: "coder", Channels: []string{chGeneral}}}})
	// Following vaultMain, it first gets the snapshot: a1's last update there per agent.
	if p, raw := a1b.expectPresence(); p.AgentID != "claude-3e" || p.State != hive.PresenceStateBusy || p.Profile == nil {
		t.Fatalf("a1b snapshot 1 %s", raw)
	}
	if p, raw := a1b.expectPresence(); p.AgentID != "multi" || p.State != hive.PresenceStateOnline || p.VaultID != vaultMain {
		t.Fatalf("a1b snapshot 2 %s", raw)
	}
	a1b.sync()
	// A later hello that drops an agent announces it offline (H2).
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}, {"multi", []string{chGeneral}}}) // multi leaves vaultOther
	if p, raw := a3.expectPresence(); p.AgentID != "multi" || p.State != hive.PresenceStateOffline || p.VaultID != vaultOther || p.Role != "coder" {
		t.Fatalf("a3 offline after hello %s", raw)
	}
	a2.sync() // multi is still announced in vaultMain
	if err := a1.c.CloseNow(); err != nil {
		t.Fatal(err)
	}
	// a1's close: multi goes offline in vaultMain; claude-3e stays (a1b still announces it).
	if p, raw := a2.expectPresence(); p.AgentID != "multi" || p.State != hive.PresenceStateOffline || p.VaultID != vaultMain {
		t.Fatalf("a2 offline after close %s", raw)
	}
	if p, raw := a1b.expectPresence(); p.AgentID != "multi" || p.State != hive.PresenceStateOffline {
		t.Fatalf("a1b offline after close %s", raw)
	}
	_ = a1b.c.CloseNow()
	if p, raw := a2.expectPresence(); p.AgentID != "claude-3e" || p.State != hive.PresenceStateOffline || p.InstanceID != "inst_a1" {
		t.Fatalf("a2 offline after the last socket %s", raw)
	}
	a2.sync()
	a3.sync()
	g1.sync()
}

// A socket that starts following a vault gets the last presence_update of each other open
// socket of its org there; never another org's, never an agent that went away.
func TestBusPresenceSnapshot(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}, {"other-vault", []string{chOther}}})
	a1.send(hive.FramePresence{AgentID: "claude-3e", State: hive.PresenceStateBusy})
	a1.send(hive.FramePresence{AgentID: "claude-3e", State: hive.PresenceStateIdle}) // the last one counts
	a1.send(hive.FramePresence{AgentID: "other-vault", State: hive.PresenceStateOnline})
	a1.sync()

	g1 := h.dialBus(tokG1, "g1") // same channel text, other org: nothing
	g1.hello("inst_g1", []agentSpec{{"gx", []string{chGeneral}}})

	a2 := h.dialBus(tokA2, "a2")
	a2.send(hive.FrameHello{InstanceID: "inst_a2", Agents: []hive.BusAgentV1{{AgentID: "codex-85", Role: "coder", Channels: []string{chOps}}}})
	if p, raw := a2.expectPresence(); p.AgentID != "claude-3e" || p.State != hive.PresenceStateIdle || p.InstanceID != "inst_a1" || p.VaultID != vaultMain {
		t.Fatalf("a2 snapshot %s", raw)
	}
	a2.sync() // other-vault is in another vault: not in the snapshot

	// a2 follows vaultOther too by a later hello: that vault's snapshot comes then.
	a2.send(hive.FrameHello{InstanceID: "inst_a2", Agents: []hive.BusAgentV1{{AgentID: "codex-85", Role: "coder", Channels: []string{chOps, chOther}}}})
	if p, raw := a2.expectPresence(); p.AgentID != "other-vault" || p.VaultID != vaultOther {
		t.Fatalf("a2 second snapshot %s", raw)
	}
	a2.sync()

	_ = a1.c.CloseNow()
	for range 2 { // offline for both agents, in their vaults
		if p, raw := a2.expectPresence(); p.State != hive.PresenceStateOffline {
			t.Fatalf("a2 offline %s", raw)
		}
	}
	a2.sync()
	a3 := h.dialBus(tokA3, "a3")
	a3.hello("inst_a3", []agentSpec{{"helper", []string{chGeneral}}}) // a1 is gone: no snapshot
	g1.sync()
}
