package relay_test

import (
	"testing"
	"time"

	"github.com/agentwire/agentwire/hive"
)

func (b *busClient) expectHandoffError(handoffID string, code hive.HiveErrorCode, field, reason, message string) {
	b.t.Helper()
	e := b.expectError(field, reason)
	if deref(e.HandoffID) != handoffID || e.Error.Code != code || (message != "" && e.Error.Message != message) || e.ClientMsgID != nil {
		b.t.Fatalf("%s: want %s error for handoff %q (%q), got %s", b.name, code, handoffID, message, encode(b.t, e))
	}
}

func (b *busClient) expectOffline(agent string) {
	b.t.Helper()
	p, raw := b.expectPresence()
	if p.AgentID != agent || p.State != hive.PresenceStateOffline {
		b.t.Fatalf("%s: want %s offline, got %s", b.name, agent, raw)
	}
}

func (b *busClient) expectRaw(want string) {
	b.t.Helper()
	if _, raw := b.recv(); string(raw) != want {
		b.t.Fatalf("%s:\n got %s\nwant %s", b.name, raw, want)
	}
}

// Handoffs (hive.md §4.6, S7, S19): an offer is bound to the one other instance announcing `to`
// in the vault and relayed to its sockets announcing `to`; redelivered at every hello until the
// deadline, then lapsed; only an ack or reject from the bound recipient settles it, once, and
// reaches the offering socket; nothing crosses an org.
func TestBusHandoffs(t *testing.T) {
	clk := newFakeClock()
	h := newClockHarness(t, clk, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	a3 := h.dialBus(tokA3, "a3")
	g1 := h.dialBus(tokG1, "g1")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chOps}}}) // another channel of the vault
	a3.hello("inst_a3", []agentSpec{{"helper", []string{chGeneral}}})
	g1.hello("inst_g1", []agentSpec{{"codex-85", []string{chGeneral}}}) // the same name in another org
	deadline := hive.UtcTimestampOf(clk.Now().Add(time.Hour))
	offerOf := func(id, bundle string) hive.FrameHandoffOffer {
		return hive.FrameHandoffOffer{HandoffID: id, Channel: chGeneral, From: "claude-3e", To: "codex-85", BundleRef: bundle, Deadline: deadline}
	}
	quiet := func(cs ...*busClient) {
		t.Helper()
		for _, c := range cs {
			c.sync()
		}
	}

	// Offer → relayed to a2 only; the offering socket gets nothing back.
	a1.send(offerOf("h-1", "bundle-1"))
	a1.sync()
	a2.expectRaw(`{"t":"handoff.offer","handoff_id":"h-1","channel":"` + chGeneral + `","from":"claude-3e","to":"codex-85","bundle_ref":"bundle-1","deadline":"2026-10-20T13:00:00Z"}`)
	quiet(a2, a3, g1)
	// The same offer again is a no-op; the same id with other members is taken.
	a1.send(offerOf("h-1", "bundle-1"))
	a1.sync()
	quiet(a2)
	a1.send(offerOf("h-1", "bundle-other"))
	a1.expectHandoffError("h-1", hive.HiveErrorCodeInvalidState, "handoff_id", "", "handoff_id names another handoff")

	// Acks from anyone but the bound recipient are unknown handoffs; the recipient's applies once.
	notFound := "handoff_id names no handoff offered to by"
	a3.send(hive.FrameHandoffAck{HandoffID: "h-1", By: "helper"})
	a3.expectHandoffError("h-1", hive.HiveErrorCodeNotFound, "handoff_id", "", notFound)
	g1.send(hive.FrameHandoffAck{HandoffID: "h-1", By: "codex-85"}) // another org's codex-85
	g1.expectHandoffError("h-1", hive.HiveErrorCodeNotFound, "handoff_id", "", notFound)
	a2.send(hive.FrameHandoffAck{HandoffID: "h-404", By: "codex-85"})
	a2.expectHandoffError("h-404", hive.HiveErrorCodeNotFound, "handoff_id", "", notFound)
	a2.send(hive.FrameHandoffAck{HandoffID: "h-1", By: "claude-3e"}) // H5
	a2.expectHandoffError("h-1", hive.HiveErrorCodeInvalidRequest, "by", hive.ReasonUnannouncedAgent, "by names no agent announced by hello on this socket")
	a2.send(hive.FrameHandoffAck{HandoffID: "h-1", By: "codex-85"})
	a2.sync()
	a1.expectRaw(`{"t":"handoff.ack","handoff_id":"h-1","by":"codex-85"}`)
	settled := "the handoff was already acknowledged or rejected"
	a2.send(hive.FrameHandoffAck{HandoffID: "h-1", By: "codex-85"})
	a2.expectHandoffError("h-1", hive.HiveErrorCodeInvalidState, "handoff_id", "", settled)
	a2.send(hive.FrameHandoffReject{HandoffID: "h-1", By: "codex-85", Reason: "too late"})
	a2.expectHandoffError("h-1", hive.HiveErrorCodeInvalidState, "handoff_id", "", settled)
	quiet(a1, a3, g1)

	// Reject.
	a1.send(offerOf("h-2", "bundle-2"))
	a1.sync()
	a2.expectRaw(`{"t":"handoff.offer","handoff_id":"h-2","channel":"` + chGeneral + `","from":"claude-3e","to":"codex-85","bundle_ref":"bundle-2","deadline":"2026-10-20T13:00:00Z"}`)
	a2.send(hive.FrameHandoffReject{HandoffID: "h-2", By: "codex-85", Reason: "busy with the release"})
	a2.sync()
	a1.expectRaw(`{"t":"handoff.reject","handoff_id":"h-2","by":"codex-85","reason":"busy with the release"}`)
	a2.send(hive.FrameHandoffAck{HandoffID: "h-2", By: "codex-85"})
	a2.expectHandoffError("h-2", hive.HiveErrorCodeInvalidState, "handoff_id", "", settled)

	// Refusals of offers; each carries the handoff_id.
	past := offerOf("h-r1", "b")
	past.Deadline = hive.UtcTimestampOf(clk.Now().Add(-time.Minute))
	far := offerOf("h-r2", "b")
	far.Deadline = hive.UtcTimestampOf(clk.Now().Add(169 * time.Hour))
	nobody := offerOf("h-r3", "b")
	nobody.To = "nobody"
	unannounced := offerOf("h-r4", "b")
	unannounced.From = "codex-85"
	unfollowed := offerOf("h-r5", "b")
	unfollowed.Channel = chOps
	blank := offerOf("h-r6", " ")
	selfOnly := offerOf("h-r7", "b")
	selfOnly.To = "claude-3e" // only the sender's own instance runs it
	for _, c := range []struct {
		f                      hive.FrameHandoffOffer
		code                   hive.HiveErrorCode
		field, reason, message string
	}{
		{past, hive.HiveErrorCodeInvalidRequest, "deadline", "", "deadline must be after server_time and at most 168 hours ahead"},
		{far, hive.HiveErrorCodeInvalidRequest, "deadline", "", "deadline must be after server_time and at most 168 hours ahead"},
		{nobody, hive.HiveErrorCodeNotFound, "to", "", "to names no agent announced in the vault within 24 hours"},
		{selfOnly, hive.HiveErrorCodeNotFound, "to", "", "to names no agent announced in the vault within 24 hours"},
		{unannounced, hive.HiveErrorCodeInvalidRequest, "from", hive.ReasonUnannouncedAgent, "from names no agent announced by hello on this socket"},
		{unfollowed, hive.HiveErrorCodeInvalidRequest, "channel", "", "the socket does not follow channel"},
		{blank, hive.HiveErrorCodeInvalidRequest, "bundle_ref", "", "bundle_ref must not be empty"},
	} {
		a1.send(c.f)
		a1.expectHandoffError(c.f.HandoffID, c.code, c.field, c.reason, c.message)
	}
	a1.sendRaw(`{"t":"handoff.offer","handoff_id":"h-r8","channel":"` + chGeneral + `","from":"claude-3e","to":"codex-85","bundle_ref":"b","deadline":"2026-10-20T13:00:00Z","note":1}`)
	a1.expectHandoffError("h-r8", hive.HiveErrorCodeInvalidRequest, "note", "", "")
	a2.sendRaw(`{"t":"handoff.reject","handoff_id":"h-2","by":"codex-85","reason":"  "}`)
	a2.expectHandoffError("h-2", hive.HiveErrorCodeInvalidRequest, "reason", "", "reason must not be empty")
	// globex's offer to its codex-85 finds no other globex instance: acme's never counts.
	g1.send(hive.FrameHandoffOffer{HandoffID: "h-1", Channel: chGeneral, From: "codex-85", To: "codex-85", BundleRef: "b", Deadline: deadline})
	g1.expectHandoffError("h-1", hive.HiveErrorCodeNotFound, "to", "", "")
	quiet(a2, a3)

	// S19: a message of type handoff binds and completes nothing.
	a1.send(offerOf("h-3", "bundle-3"))
	a1.sync()
	a2.expectRaw(`{"t":"handoff.offer","handoff_id":"h-3","channel":"` + chGeneral + `","from":"claude-3e","to":"codex-85","bundle_ref":"bundle-3","deadline":"2026-10-20T13:00:00Z"}`)
	hm := msg("hm-1", orgNet(chGeneral), hive.MessageTypeHandoff, "claude-3e", "handing h-3 over")
	hm.Body.References = []hive.MessageReferenceV1{hive.ReferenceHandoff{HandoffID: "h-3"}}
	a1.sendMsg(hm)
	a1.expectStored()
	a3.expectDeliver()

	// Redelivery: a2 reconnects → h-3 (pending) again, not the settled h-1 and h-2; every
	// later hello announcing codex-85 again; a hello without it nothing. (Each socket close or
	// dropped agent also announces presence offline to a1 and a3; waiting for it orders the
	// steps.)
	offerH3 := `{"t":"handoff.offer","handoff_id":"h-3","channel":"` + chGeneral + `","from":"claude-3e","to":"codex-85","bundle_ref":"bundle-3","deadline":"2026-10-20T13:00:00Z"}`
	helloAs := func(c *busClient, agents ...string) {
		f := hive.FrameHello{InstanceID: "inst_a2"}
		for _, a := range agents {
			f.Agents = append(f.Agents, hive.BusAgentV1{AgentID: a, Role: "coder", Channels: []string{chGeneral}})
		}
		c.send(f)
	}
	_ = a2.c.CloseNow()
	a1.expectOffline("codex-85")
	a3.expectOffline("codex-85")
	a2 = h.dialBus(tokA2, "a2-again")
	helloAs(a2, "codex-85")
	a2.expectRaw(offerH3)
	a2.sync()
	helloAs(a2, "codex-85", "other")
	a2.expectRaw(offerH3)
	a2.sync()
	helloAs(a2, "other") // codex-85 dropped: no offer, and it is offline for the others
	a2.sync()
	a1.expectOffline("codex-85")
	a3.expectOffline("codex-85")
	helloAs(a2, "codex-85")
	a2.expectRaw(offerH3)
	a2.sync()
	a1.expectOffline("other")
	a3.expectOffline("other")

	// Lapse: after the deadline nothing is redelivered and an ack is refused.
	clk.Advance(time.Hour)
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral, chOps}}})
	a2.send(hive.FrameHandoffAck{HandoffID: "h-3", By: "codex-85"})
	a2.expectHandoffError("h-3", hive.HiveErrorCodeInvalidState, "handoff_id", "", "the handoff lapsed at its deadline")
	quiet(a1)

	// Ambiguous: a3 announces codex-85 too.
	a3.hello("inst_a3", []agentSpec{{"helper", []string{chGeneral}}, {"codex-85", []string{chOps}}})
	late := offerOf("h-4", "b")
	late.Deadline = hive.UtcTimestampOf(clk.Now().Add(time.Hour))
	a1.send(late)
	a1.expectHandoffError("h-4", hive.HiveErrorCodeInvalidState, "to", hive.ReasonAmbiguousRecipient, "several instances run to")
	quiet(a2, a3, g1)
}

// An offer made while the recipient is offline reaches it at its next connect; the ack reaches
// every socket of the offering instance announcing `from`; the sweeper deletes the record after
// the deadline plus retention, and the handoff_id is unknown then.
func TestBusHandoffOfflineRecipient(t *testing.T) {
	clk := newFakeClock()
	h := newClockHarness(t, clk, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a2 := h.dialBus(tokA2, "a2")
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})
	_ = a2.c.CloseNow() // announced within 24 h, now offline
	a1.expectOffline("codex-85")
	a1b := h.dialBus(tokA1, "a1b")
	a1b.hello("inst_a1", []agentSpec{{"claude-3e", []string{chOps}}, {"x", []string{chOps}}})
	offer := hive.FrameHandoffOffer{HandoffID: "h-off", Channel: chGeneral, From: "claude-3e", To: "codex-85", BundleRef: "bundle-7",
		Deadline: hive.UtcTimestampOf(clk.Now().Add(2 * time.Hour))}
	a1.send(offer)
	a1.sync()
	a2 = h.dialBus(tokA2, "a2-back")
	a2.send(hive.FrameHello{InstanceID: "inst_a2", Agents: []hive.BusAgentV1{{AgentID: "codex-85", Role: "coder", Channels: []string{chGeneral}}}})
	if f, raw := a2.recv(); f.Tag() != hive.TagHandoffOffer || encode(t, f) != encode(t, offer) {
		t.Fatalf("offline recipient: %s", raw)
	}
	a2.send(hive.FrameHandoffAck{HandoffID: "h-off", By: "codex-85"})
	a2.sync()
	for _, c := range []*busClient{a1, a1b} {
		c.expectRaw(`{"t":"handoff.ack","handoff_id":"h-off","by":"codex-85"}`)
	}
	// a1's org plan is team: the record is kept 30 days after the deadline.
	clk.Advance(2*time.Hour + 29*24*time.Hour)
	if err := h.server.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	a2.send(hive.FrameHandoffAck{HandoffID: "h-off", By: "codex-85"})
	a2.expectHandoffError("h-off", hive.HiveErrorCodeInvalidState, "handoff_id", "", "the handoff was already acknowledged or rejected")
	clk.Advance(24 * time.Hour)
	if err := h.server.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	a2.send(hive.FrameHandoffAck{HandoffID: "h-off", By: "codex-85"})
	a2.expectHandoffError("h-off", hive.HiveErrorCodeNotFound, "handoff_id", "", "handoff_id names no handoff offered to by")
}
