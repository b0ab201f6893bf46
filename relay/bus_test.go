package relay_test

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentwire/agentwire/hive"
)

// hello rules H1, H3, H5 and frame refusals: protocol violations answer `error` then close
// 1008; other refusals keep the socket open.
func TestBusHelloAndFrameRules(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))

	// H1 (case 69): an ack first.
	b := h.dialBus(tokA1, "first-ack")
	b.sendRaw(`{"t":"ack","channel":"` + chGeneral + `","seq":1}`)
	e := b.expectError("t", hive.ReasonHelloRequired)
	if e.Error.Code != hive.HiveErrorCodeInvalidRequest || e.Error.Message != "hello must be the first frame" {
		t.Fatalf("H1: %+v", e.Error)
	}
	if code := b.closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("H1 close %d", code)
	}
	// H1 with an undecodable first frame.
	b = h.dialBus(tokA1, "first-junk")
	b.sendRaw(`{"t":"message","x":1}`)
	b.expectError("t", hive.ReasonHelloRequired)
	if code := b.closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("H1 junk close %d", code)
	}
	// H3: another instance's hello.
	b = h.dialBus(tokA1, "mismatch")
	b.send(hive.FrameHello{InstanceID: "inst_a2", Agents: []hive.BusAgentV1{{AgentID: "x", Role: "r", Channels: []string{chGeneral}}}})
	e = b.expectError("instance_id", hive.ReasonInstanceMismatch)
	if e.Error.Code != hive.HiveErrorCodeUnauthorized {
		t.Fatalf("H3: %+v", e.Error)
	}
	if code := b.closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("H3 close %d", code)
	}
	// An invalid first hello closes too.
	b = h.dialBus(tokA1, "bad-hello")
	b.send(hive.FrameHello{InstanceID: "inst_a1", Agents: []hive.BusAgentV1{{AgentID: "x", Role: "r"}}})
	if e := b.expectError("", ""); e.Error.Message != "an agent follows 1-256 channels" {
		t.Fatalf("bad hello: %+v", e.Error)
	}
	if code := b.closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("bad hello close %d", code)
	}

	// After hello, refusals keep the socket open.
	b = h.dialBus(tokA1, "open")
	b.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	cases := []struct {
		name, frame, field, reason, message string
		cmid                                string
	}{
		{"unknown tag", `{"t":"hologram"}`, "t", "", "", ""},
		{"service frame", `{"t":"message.stored","client_msg_id":"c","gid":"g","thread_id":"g","network":{"kind":"org","channel":"` + chGeneral + `"},"seq":1,"server_time":"2026-10-20T12:00:00Z","expires_at":"2026-10-20T12:00:00Z"}`, "t", "", "", ""},
		{"unannounced agent_id (H5)", `{"t":"presence","agent_id":"codex-85","state":"online"}`, "agent_id", hive.ReasonUnannouncedAgent, "agent_id names no agent announced by hello on this socket", ""},
		{"unknown member (S1)", `{"t":"message","client_msg_id":"c1","network":{"kind":"org","channel":"` + chGeneral + `"},"type":"question","from":"claude-3e","body":{"text":"x"},"priority":"high"}`, "priority", "", "", "c1"},
		{"unannounced from (H5)", encode(t, hive.FrameMessage{Message: msg("c2", orgNet(chGeneral), hive.MessageTypeFinding, "codex-85", "x")}), "from", hive.ReasonUnannouncedAgent, "from names no agent announced by hello on this socket", "c2"},
		{"unannounced by (H5)", `{"t":"message.receipt","gid":"g","by":"codex-85","state":"read"}`, "by", hive.ReasonUnannouncedAgent, "by names no agent announced by hello on this socket", ""},
		{"validation", encode(t, hive.FrameMessage{Message: msg("c3", orgNet(chGeneral), hive.MessageTypeAnswer, "claude-3e", "x")}), "reply_to", "", "an answer replies to a question", "c3"},
		{"ack unfollowed (H6)", `{"t":"ack","channel":"` + chOps + `","seq":1}`, "channel", "", "the socket does not follow channel", ""},
		{"ack beyond last", `{"t":"ack","channel":"` + chGeneral + `","seq":1}`, "seq", "", "seq is beyond the last seq of the channel", ""},
		{"ack seq 0", `{"t":"ack","channel":"` + chGeneral + `","seq":0}`, "seq", "", "seq starts at 1", ""},
		{"sealed (S17)", `{"t":"message","client_msg_id":"c4","network":{"kind":"org","channel":"` + chGeneral + `"},"type":"finding","from":"claude-3e","sealed":{"content_schema":"leanctx.hive.sealed-message/v1","epoch":3,"nonce":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX","ciphertext":"KCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OTw=="}}`, "sealed", hive.ReasonNotSealed, "the vault is not sealed", "c4"},
	}
	for _, c := range cases {
		b.sendRaw(c.frame)
		e := b.expectError(c.field, c.reason)
		if c.message != "" && e.Error.Message != c.message {
			t.Errorf("%s: message %q", c.name, e.Error.Message)
		}
		if deref(e.ClientMsgID) != c.cmid {
			t.Errorf("%s: client_msg_id %q", c.name, deref(e.ClientMsgID))
		}
	}
	// Still open: a valid message is stored.
	b.sendMsg(msg("ok-1", orgNet(chGeneral), hive.MessageTypeFinding, "claude-3e", "still open"))
	if st := b.expectStored(); st.Seq != 1 {
		t.Fatalf("stored %+v", st)
	}
	// A binary frame closes with 1003; a frame over 2 MiB with 1009.
	bin := h.dialBus(tokA1, "binary")
	bin.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	if err := bin.c.SendBinary(t.Context(), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if code := bin.closed(); code != websocket.StatusUnsupportedData {
		t.Fatalf("binary close %d", code)
	}
	big := h.dialBus(tokA1, "big")
	big.sendRaw(`{"t":"hello","instance_id":"` + strings.Repeat("a", hive.MaxBusFrameBytes) + `"}`)
	if code := big.closed(); code != websocket.StatusMessageTooBig {
		t.Fatalf("big close %d", code)
	}
	// No token / no right: hive error bodies before the upgrade.
	code, _, body := h.do("GET", "/v1/bus", "", nil, nil)
	if code != 401 || string(body) != "{\"error\":{\"code\":\"unauthorized\",\"message\":\"A bearer token is required.\"}}\n" {
		t.Fatalf("no token: %d %s", code, body)
	}
	code, _, body = h.do("GET", "/v1/bus", tokNo, nil, nil)
	if code != 403 || string(body) != "{\"error\":{\"code\":\"forbidden_right\",\"message\":\"The token does not grant the right bus.relay.\",\"field\":\"rights\"}}\n" {
		t.Fatalf("no right: %d %s", code, body)
	}
}

// Two orgs using the same channel text and a swarm: no message, history page, receipt or error
// ever crosses an org or network; a foreign reply_to answers exactly like an unknown one; org
// deliveries carry trust team and the agent sender, swarm deliveries trust untrusted and only
// a handle; replies join their thread; receipts come back to the sender as message.status.
func TestBusNetworksNeverBridged(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	g1 := h.dialBus(tokG1, "g1")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})
	g1.hello("inst_g1", []agentSpec{{"gx", []string{chGeneral}}}) // same channel text, other org

	// acme question: stored for a1, delivered to a2, never echoed to a1 (S10).
	a1.sendMsg(msg("q-1", orgNet(chGeneral), hive.MessageTypeQuestion, "claude-3e", "Which retry budget does payments use?"))
	q := a1.expectStored()
	if q.Seq != 1 || q.ThreadID != q.GID || q.ClientMsgID != "q-1" {
		t.Fatalf("stored %+v", q)
	}
	d := a2.expectDeliver()
	from, _ := d.From.(hive.SenderAgent)
	if d.GID != q.GID || d.Seq != 1 || d.Trust != hive.MessageTrustTeam || from.Agent != "claude-3e" ||
		deref(from.InstanceID) != "inst_a1" || from.InstanceLabel != "laptop" || deref(from.Owner) != "Ana" || from.Mine ||
		d.Deadline == nil || d.ServerTime.String() == "" || d.ThreadID != q.GID {
		t.Fatalf("a2 delivery %s", encode(t, d))
	}
	// globex's own message on the same channel text is its own stream: seq 1 again.
	g1.sendMsg(msg("g-1", orgNet(chGeneral), hive.MessageTypeFinding, "gx", "globex secret"))
	if st := g1.expectStored(); st.Seq != 1 {
		t.Fatalf("globex stored %+v", st)
	}
	// Reply from a2: to claude-3e, the replied message's sender → bound to inst_a1, thread kept.
	ans := msg("a-1", orgNet(chGeneral), hive.MessageTypeAnswer, "codex-85", "Three retries.")
	ans.ReplyTo, ans.To = ptr(q.GID), ptr("claude-3e")
	a2.sendMsg(ans)
	as := a2.expectStored()
	if as.Seq != 2 || as.ThreadID != q.GID {
		t.Fatalf("answer stored %+v", as)
	}
	d = a1.expectDeliver() // the first frame a1 gets: never globex's message
	if d.GID != as.GID || deref(d.ReplyTo) != q.GID || d.ThreadID != q.GID || deref(d.To) != "claude-3e" {
		t.Fatalf("a1 got %s", encode(t, d))
	}

	// S3: a foreign reply_to is answered byte for byte like an unknown gid (socket and HTTP).
	foreign := msg("r-1", orgNet(chGeneral), hive.MessageTypeAnswer, "gx", "leak?")
	foreign.ReplyTo = ptr(q.GID)
	unknown := foreign
	unknown.ReplyTo = ptr("01JZZZZZZZZZZZZZZZZZZZZZZZ")
	g1.sendMsg(foreign)
	_, rawForeign := g1.recv()
	g1.sendMsg(unknown) // the same client_msg_id: after a refusal a resend is processed anew
	_, rawUnknown := g1.recv()
	want := `{"t":"error","client_msg_id":"r-1","error":{"code":"not_found","message":"reply_to names no message","field":"reply_to"}}`
	if string(rawForeign) != want || !bytes.Equal(rawForeign, rawUnknown) {
		t.Fatalf("reply_to errors differ:\n%s\n%s", rawForeign, rawUnknown)
	}
	c1, b1 := h.postMessage(tokG1, encode(t, foreign))
	c2, b2 := h.postMessage(tokG1, encode(t, unknown))
	if c1 != 404 || c2 != 404 || !bytes.Equal(b1, b2) || string(b1) != "{\"error\":{\"code\":\"not_found\",\"message\":\"reply_to names no message\",\"field\":\"reply_to\"}}\n" {
		t.Fatalf("HTTP reply_to: %d %s / %d %s", c1, b1, c2, b2)
	}
	// Case 72: an org answer whose reply_to is a swarm message's gid, within one org.
	a1.sendMsg(msg("s-1", swarmNet("sw-1"), hive.MessageTypeFinding, "claude-3e", "found in the swarm"))
	sw := a1.expectStored()
	cross := msg("r-2", orgNet(chGeneral), hive.MessageTypeAnswer, "claude-3e", "cross")
	cross.ReplyTo = ptr(sw.GID)
	c3, b3 := h.postMessage(tokA1, encode(t, cross))
	if c3 != 404 || !bytes.Equal(b3, b1) {
		t.Fatalf("cross-network reply_to: %d %s", c3, b3)
	}

	// S5: the swarm delivery reaches globex's member as a handle, untrusted; a2 (no member) and
	// g1's org channel see nothing of it.
	d = g1.expectDeliver()
	if hs, ok := d.From.(hive.SenderSwarm); !ok || hs.Handle != "quiet-heron" || hs.Reputation != 3 || d.Trust != hive.MessageTrustUntrusted || d.Seq != 1 {
		t.Fatalf("swarm delivery %s", encode(t, d))
	}
	if strings.Contains(encode(t, d), "inst_a1") || strings.Contains(encode(t, d), "Ana") || strings.Contains(encode(t, d), "acme") {
		t.Fatalf("swarm delivery shows the org: %s", encode(t, d))
	}

	// Receipts (S16): a2 read the question → a1 gets delivered then read; a repeat is a no-op;
	// globex's receipt for acme's gid is an unknown gid.
	a2.send(hive.FrameMessageReceipt{Receipt: hive.MessageReceiptV1{GID: q.GID, By: "codex-85", State: hive.MessageReceiptStateRead}})
	for _, want := range []hive.MessageReceiptState{hive.MessageReceiptStateDelivered, hive.MessageReceiptStateRead} {
		st := a1.expectStatus()
		if st.GID != q.GID || st.ClientMsgID != "q-1" || st.By != "codex-85" || st.State != want {
			t.Fatalf("status %s", encode(t, st))
		}
	}
	a2.send(hive.FrameMessageReceipt{Receipt: hive.MessageReceiptV1{GID: q.GID, By: "codex-85", State: hive.MessageReceiptStateDelivered}})
	a2.sync()
	g1.send(hive.FrameMessageReceipt{Receipt: hive.MessageReceiptV1{GID: q.GID, By: "gx", State: hive.MessageReceiptStateRead}})
	gr := g1.expectError("gid", "")
	g1.send(hive.FrameMessageReceipt{Receipt: hive.MessageReceiptV1{GID: "01JZZZZZZZZZZZZZZZZZZZZZZZ", By: "gx", State: hive.MessageReceiptStateRead}})
	if gu := g1.expectError("gid", ""); encode(t, gu) != encode(t, gr) || gr.Error.Code != hive.HiveErrorCodeNotFound {
		t.Fatalf("receipt errors differ: %s / %s", encode(t, gr), encode(t, gu))
	}
	// The swarm receipt names the recipient's handle.
	g1.send(hive.FrameMessageReceipt{Receipt: hive.MessageReceiptV1{GID: sw.GID, By: "gx", State: hive.MessageReceiptStateDelivered}})
	if st := a1.expectStatus(); st.By != "bold-otter" || st.GID != sw.GID {
		t.Fatalf("swarm status %s", encode(t, st))
	}
	// a1 got nothing else meanwhile (no echo of its swarm finding, nothing from globex): its
	// next frame is a fresh delivery from a2.
	a2.sendMsg(msg("m-2", orgNet(chGeneral), hive.MessageTypeFinding, "codex-85", "marker"))
	a2.expectStored()
	if d := a1.expectDeliver(); d.Body.Text != "marker" {
		t.Fatalf("a1 marker: %s", encode(t, d))
	}

	// History: each org sees its own channel, swarm members the swarm, a2 no swarm.
	q1 := "network=org&channel=" + url.QueryEscape(chGeneral)
	if got := texts(h.history(tokA1, q1)); !slices.Equal(got, []string{"Which retry budget does payments use?", "Three retries.", "marker"}) {
		t.Fatalf("acme history %q", got)
	}
	if got := texts(h.history(tokG1, q1)); !slices.Equal(got, []string{"globex secret"}) {
		t.Fatalf("globex history %q", got)
	}
	if got := texts(h.history(tokG1, "network=swarm&swarm_id=sw-1")); !slices.Equal(got, []string{"found in the swarm"}) {
		t.Fatalf("swarm history %q", got)
	}
	code, _, body := h.do("GET", "/v1/messages?network=swarm&swarm_id=sw-1", tokA2, nil, nil)
	code2, _, body2 := h.do("GET", "/v1/messages?network=swarm&swarm_id=sw-404", tokA2, nil, nil)
	if code != 404 || code2 != 404 || !bytes.Equal(body, body2) {
		t.Fatalf("non-member swarm history: %d %s / %s", code, body, body2)
	}
	// after_gid of another org or network: 404 like an unknown gid.
	code, _, body = h.do("GET", "/v1/messages?"+q1+"&after_gid="+url.QueryEscape(q.GID), tokG1, nil, nil)
	code2, _, body2 = h.do("GET", "/v1/messages?"+q1+"&after_gid=nope", tokG1, nil, nil)
	code3, _, body3 := h.do("GET", "/v1/messages?"+q1+"&after_gid="+url.QueryEscape(sw.GID), tokA1, nil, nil)
	if code != 404 || !bytes.Equal(body, body2) || !bytes.Equal(body, body3) || code3 != 404 ||
		string(body) != "{\"error\":{\"code\":\"not_found\",\"message\":\"after_gid names no message\",\"field\":\"after_gid\"}}\n" {
		t.Fatalf("after_gid: %d %s / %d %s / %d %s", code, body, code2, body2, code3, body3)
	}
	// A thread page.
	if got := texts(h.history(tokA1, q1+"&thread_id="+url.QueryEscape(q.GID))); !slices.Equal(got, []string{"Which retry budget does payments use?", "Three retries."}) {
		t.Fatalf("thread %q", got)
	}
	// HTTP receipt from globex for acme's gid: the same 404.
	code, _, body = h.do("POST", "/v1/messages/"+url.PathEscape(q.GID)+"/receipts", tokG1, jsonType,
		[]byte(`{"gid":"`+q.GID+`","by":"gx","state":"read"}`))
	if code != 404 || string(body) != "{\"error\":{\"code\":\"not_found\",\"message\":\"gid names no message\",\"field\":\"gid\"}}\n" {
		t.Fatalf("HTTP foreign receipt: %d %s", code, body)
	}
}

// S7: recipient binding, `mine`, and S20 visibility of direct messages.
func TestBusRecipientBinding(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	a3 := h.dialBus(tokA3, "a3")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})
	// One other instance announced codex-85: bound to it.
	direct := msg("d-1", orgNet(chGeneral), hive.MessageTypeOffer, "claude-3e", "for codex on a2")
	direct.To = ptr("codex-85")
	a1.sendMsg(direct)
	a1.expectStored()
	if d := a2.expectDeliver(); d.Body.Text != "for codex on a2" || deref(d.To) != "codex-85" {
		t.Fatalf("a2: %s", encode(t, d))
	}
	// A second instance announces codex-85 (on another channel of the vault): ambiguous.
	a3.hello("inst_a3", []agentSpec{{"codex-85", []string{chOps}}, {"helper", []string{chGeneral}}})
	amb := msg("d-2", orgNet(chGeneral), hive.MessageTypeOffer, "claude-3e", "which codex?")
	amb.To = ptr("codex-85")
	a1.sendMsg(amb)
	e := a1.expectError("to", hive.ReasonAmbiguousRecipient)
	if e.Error.Code != hive.HiveErrorCodeInvalidState || e.Error.Message != "several instances run to" || deref(e.ClientMsgID) != "d-2" {
		t.Fatalf("ambiguous: %s", encode(t, e))
	}
	// Naming the instance resolves it: only a3 gets it; a2 does not (its next frame is the marker).
	amb.ToInstance = ptr("inst_a3")
	a1.sendMsg(amb)
	a1.expectStored()
	d := a3.expectDeliver()
	if d.Body.Text != "which codex?" {
		t.Fatalf("a3: %s", encode(t, d))
	}
	// mine: a1 and a3 have the same owner; a2 another.
	if f := d.From.(hive.SenderAgent); !f.Mine {
		t.Fatalf("a3 mine: %s", encode(t, d))
	}
	a1.sendMsg(msg("d-3", orgNet(chGeneral), hive.MessageTypeFinding, "claude-3e", "marker"))
	a1.expectStored()
	if d := a2.expectDeliver(); d.Body.Text != "marker" || d.From.(hive.SenderAgent).Mine {
		t.Fatalf("a2 marker: %s", encode(t, d))
	}
	a3.expectDeliver() // the marker
	// History is visibility-filtered (S20): a2 sees its direct message and the broadcast only.
	q1 := "network=org&channel=" + url.QueryEscape(chGeneral)
	if got := texts(h.history(tokA2, q1)); !slices.Equal(got, []string{"for codex on a2", "marker"}) {
		t.Fatalf("a2 history %q", got)
	}
	if got := texts(h.history(tokA3, q1)); !slices.Equal(got, []string{"which codex?", "marker"}) {
		t.Fatalf("a3 history %q", got)
	}
	if got := texts(h.history(tokA1, q1)); len(got) != 3 {
		t.Fatalf("a1 history %q", got)
	}
	// Refusals.
	cases := []struct {
		name       string
		to, toInst string
		status     int
		field      string
	}{
		{"unknown agent", "nobody", "", 404, "to"},
		{"only the sender's instance runs it", "claude-3e", "", 404, "to"},
		{"unknown instance", "codex-85", "inst_zzz", 404, "to_instance"},
		{"other org's instance", "codex-85", "inst_g1", 404, "to_instance"},
	}
	for i, c := range cases {
		m := msg("x-"+strconv.Itoa(i), orgNet(chGeneral), hive.MessageTypeOffer, "claude-3e", "x")
		m.To = ptr(c.to)
		if c.toInst != "" {
			m.ToInstance = ptr(c.toInst)
		}
		code, body := h.postMessage(tokA1, encode(t, m))
		if code != c.status || !strings.Contains(string(body), `"field":"`+c.field+`"`) {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
	// Swarm: to_instance is refused by validation; to names a handle.
	sm := msg("s-1", swarmNet("sw-1"), hive.MessageTypeOffer, "claude-3e", "x")
	sm.To, sm.ToInstance = ptr("bold-otter"), ptr("inst_g1")
	if code, body := h.postMessage(tokA1, encode(t, sm)); code != 400 || string(body) != "{\"error\":{\"code\":\"invalid_request\",\"message\":\"to_instance names the instance of `to` on an org network\",\"field\":\"to_instance\"}}\n" {
		t.Fatalf("swarm to_instance: %d %s", code, body)
	}
	sm.ToInstance = nil
	g1 := h.dialBus(tokG1, "g1")
	g1.hello("inst_g1", []agentSpec{{"gx", []string{chGeneral}}})
	if code, body := h.postMessage(tokA1, encode(t, sm)); code != 200 {
		t.Fatalf("swarm direct: %d %s", code, body)
	}
	if d := g1.expectDeliver(); deref(d.To) != "bold-otter" {
		t.Fatalf("swarm direct delivery %s", encode(t, d))
	}
}

// Gap-free seq under 8 concurrent senders: every stored seq is 1…N exactly once, and a
// listener receives them all in seq order.
func TestBusGapFreeConcurrentSenders(t *testing.T) {
	h := newHarness(t)
	listener := h.dialBus("", "listener")
	listener.hello("local", []agentSpec{{"watcher", []string{chGeneral}}})
	const senders, each = 8, 25
	socks := make([]*busClient, senders)
	for i := range socks {
		socks[i] = h.dialBus("", "sender"+strconv.Itoa(i))
		socks[i].hello("local", []agentSpec{{"agent-" + strconv.Itoa(i), []string{chGeneral}}})
	}
	var mu sync.Mutex
	var seqs []uint64
	var wg sync.WaitGroup
	for i, s := range socks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				s.c.Send(t.Context(), hive.FrameMessage{Message: msg(fmt.Sprintf("c-%d-%d", i, j), orgNet(chGeneral), hive.MessageTypeFinding, "agent-"+strconv.Itoa(i), "m")})
			}
			for n := 0; n < each; {
				f, _, err := s.c.Recv(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				if _, ok := f.(hive.FrameMessageDeliver); ok {
					continue // the other senders' messages
				}
				st, ok := f.(hive.FrameMessageStored)
				if !ok {
					t.Errorf("sender %d got %T", i, f)
					return
				}
				n++
				mu.Lock()
				seqs = append(seqs, st.Stored.Seq)
				mu.Unlock()
			}
		}()
	}
	var got []uint64
	for range senders * each {
		got = append(got, listener.expectDeliver().Seq)
	}
	wg.Wait()
	slices.Sort(seqs)
	for i := range senders * each {
		if seqs[i] != uint64(i+1) || got[i] != uint64(i+1) {
			t.Fatalf("seq %d: stored %d delivered %d", i+1, seqs[i], got[i])
		}
	}
}

// S9: a resent client_msg_id stores nothing, delivers nothing and answers the original
// message.stored, over the socket and over HTTP.
func TestBusIdempotentResend(t *testing.T) {
	h := newHarness(t)
	a := h.dialBus("", "a")
	b := h.dialBus("", "b")
	a.hello("local", []agentSpec{{"claude-3e", []string{chGeneral}}})
	b.hello("local", []agentSpec{{"codex-85", []string{chGeneral}}})
	m := msg("01JBMSG7Q3", orgNet(chGeneral), hive.MessageTypeQuestion, "claude-3e", "once")
	a.sendMsg(m)
	_, first := a.recv()
	a.sendMsg(m)
	_, second := a.recv()
	if !bytes.Equal(first, second) {
		t.Fatalf("resend answered differently:\n%s\n%s", first, second)
	}
	code, body := h.postMessage("", encode(t, m))
	if code != 200 || !strings.Contains(string(first), strings.TrimSuffix(strings.TrimPrefix(string(body), "{"), "}\n")) {
		t.Fatalf("HTTP resend: %d %s vs %s", code, body, first)
	}
	a.sendMsg(msg("01JBMSG7Q4", orgNet(chGeneral), hive.MessageTypeFinding, "claude-3e", "marker"))
	a.expectStored()
	if d := b.expectDeliver(); d.Body.Text != "once" || d.Seq != 1 {
		t.Fatalf("first delivery %s", encode(t, d))
	}
	if d := b.expectDeliver(); d.Body.Text != "marker" || d.Seq != 2 {
		t.Fatalf("second delivery %s", encode(t, d))
	}
	if got := texts(h.history("", "network=org&channel="+url.QueryEscape(chGeneral))); !slices.Equal(got, []string{"once", "marker"}) {
		t.Fatalf("history %q", got)
	}
}

// Receipts over HTTP reach the sender's socket; read implies delivered; states never go back.
func TestBusReceiptsHTTP(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})
	a1.sendMsg(msg("q", orgNet(chGeneral), hive.MessageTypeQuestion, "claude-3e", "q"))
	q := a1.expectStored()
	a2.expectDeliver()
	post := func(token, gid, body string) (int, []byte) {
		code, _, resp := h.do("POST", "/v1/messages/"+url.PathEscape(gid)+"/receipts", token, jsonType, []byte(body))
		return code, resp
	}
	if code, body := post(tokA2, q.GID, `{"gid":"`+q.GID+`","by":"codex-85","state":"delivered"}`); code != 204 {
		t.Fatalf("delivered: %d %s", code, body)
	}
	if st := a1.expectStatus(); st.State != hive.MessageReceiptStateDelivered || st.By != "codex-85" {
		t.Fatalf("status %s", encode(t, st))
	}
	if code, _ := post(tokA2, q.GID, `{"gid":"`+q.GID+`","by":"codex-85","state":"read"}`); code != 204 {
		t.Fatal(code)
	}
	if st := a1.expectStatus(); st.State != hive.MessageReceiptStateRead {
		t.Fatalf("status %s", encode(t, st))
	}
	// Backwards and repeats: no status.
	for _, state := range []string{"delivered", "read"} {
		if code, _ := post(tokA2, q.GID, `{"gid":"`+q.GID+`","by":"codex-85","state":"`+state+`"}`); code != 204 {
			t.Fatal(code)
		}
	}
	cases := []struct{ name, token, gid, body, want string }{
		{"unknown state", tokA2, q.GID, `{"gid":"` + q.GID + `","by":"codex-85","state":"seen"}`, `{"error":{"code":"invalid_request","message":"unknown receipt state","field":"state"}}`},
		{"unknown member", tokA2, q.GID, `{"gid":"` + q.GID + `","by":"codex-85","state":"read","at":"x"}`, `{"error":{"code":"invalid_request","message":"MessageReceiptV1.at is not a known member.","field":"at"}}`},
		{"path mismatch", tokA2, "other", `{"gid":"` + q.GID + `","by":"codex-85","state":"read"}`, `{"error":{"code":"invalid_request","message":"gid must equal the gid of the path","field":"gid"}}`},
		{"not a recipient agent", tokA2, q.GID, `{"gid":"` + q.GID + `","by":"someone","state":"read"}`, `{"error":{"code":"not_found","message":"gid names no message","field":"gid"}}`},
		{"the sender itself", tokA1, q.GID, `{"gid":"` + q.GID + `","by":"claude-3e","state":"read"}`, `{"error":{"code":"not_found","message":"gid names no message","field":"gid"}}`},
	}
	for _, c := range cases {
		_, body := post(c.token, c.gid, c.body)
		if strings.TrimSpace(string(body)) != c.want {
			t.Errorf("%s: %s", c.name, body)
		}
	}
	// a1's next frame is a marker: the refused and no-op receipts sent nothing.
	a2.sendMsg(msg("m", orgNet(chGeneral), hive.MessageTypeFinding, "codex-85", "marker"))
	a2.expectStored()
	if d := a1.expectDeliver(); d.Body.Text != "marker" {
		t.Fatalf("marker %s", encode(t, d))
	}
}

// S11 retention per plan, the sweeper, and S13: a question past its deadline becomes one task
// proposal, announced as task.event on its channel and listed by the admin route.
func TestBusRetentionAndQuestionTasks(t *testing.T) {
	clk := newFakeClock()
	h := newClockHarness(t, clk, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})

	team := msg("t-1", orgNet(chGeneral), hive.MessageTypeQuestion, "claude-3e", "team question")
	team.Deadline = ptr(hive.UtcTimestampOf(clk.Now().Add(time.Hour)))
	a1.sendMsg(team)
	ts := a1.expectStored()
	if ts.ExpiresAt.String() != "2026-11-19T12:00:00Z" || ts.ServerTime.String() != "2026-10-20T12:00:00Z" {
		t.Fatalf("team stored %s", encode(t, ts))
	}
	a2.expectDeliver()
	answered := msg("t-2", orgNet(chGeneral), hive.MessageTypeQuestion, "claude-3e", "answered question")
	a1.sendMsg(answered) // default deadline: 24 h
	as := a1.expectStored()
	if d := a2.expectDeliver(); d.Deadline == nil || d.Deadline.String() != "2026-10-21T12:00:00Z" {
		t.Fatalf("default deadline: %s", encode(t, d))
	}
	reply := msg("p-1", orgNet(chGeneral), hive.MessageTypeAnswer, "codex-85", "personal answer")
	reply.ReplyTo = ptr(as.GID)
	a2.sendMsg(reply)
	ps := a2.expectStored()
	if ps.ExpiresAt.String() != "2026-10-27T12:00:00Z" {
		t.Fatalf("personal stored %s", encode(t, ps))
	}
	a1.expectDeliver()
	// Deadlines out of range (S12).
	for _, dl := range []time.Duration{0, -time.Hour, 168*time.Hour + time.Second} {
		bad := msg("bad", orgNet(chGeneral), hive.MessageTypeQuestion, "claude-3e", "x")
		bad.Deadline = ptr(hive.UtcTimestampOf(clk.Now().Add(dl)))
		if code, body := h.postMessage(tokA1, encode(t, bad)); code != 400 || !strings.Contains(string(body), `"field":"deadline"`) {
			t.Fatalf("deadline %v: %d %s", dl, code, body)
		}
	}

	// Two days later: the unanswered team question is a proposal; the answered one is not.
	clk.Advance(48 * time.Hour)
	for range 2 { // a second sweep creates nothing new
		if err := h.server.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	f, raw := a1.recv()
	ev, ok := f.(hive.FrameTaskEvent)
	if !ok || ev.Event.Seq != 4 || ev.Event.Number != 1 || ev.Event.Event != hive.TaskEventKindProposed ||
		ev.Event.State != hive.TaskStateProposed || ev.Event.By != nil || ev.Event.Channel != chGeneral {
		t.Fatalf("task event %s", raw)
	}
	if f, raw := a2.recv(); f.Tag() != hive.TagTaskEvent {
		t.Fatalf("a2 %s", raw)
	}
	code, _, body := h.do("GET", "/v1/admin/task-proposals", tokA1, nil, nil)
	want := `{"proposals":[{"id":1,"question_gid":"` + ts.GID + `","vault_id":"3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42","task_event":{"channel":"` + chGeneral + `","seq":4,"number":1,"event":"proposed","state":"proposed","server_time":"2026-10-22T12:00:00Z"}}]}` + "\n"
	if code != 200 || string(body) != want {
		t.Fatalf("admin list: %d %s\nwant %s", code, body, want)
	}
	if code, _, _ := h.do("GET", "/v1/admin/task-proposals", tokA2, nil, nil); code != 403 {
		t.Fatalf("admin without right: %d", code)
	}
	if code, _, body := h.do("GET", "/v1/admin/task-proposals", tokG1, nil, nil); code != 403 || strings.Contains(string(body), ts.GID) {
		t.Fatalf("other org: %d %s", code, body)
	}

	// Eight days after the start, the personal-plan answer expired: gone from history, and a
	// reply to it is an unknown gid.
	clk.Advance(6 * 24 * time.Hour)
	if err := h.server.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	q1 := "network=org&channel=" + url.QueryEscape(chGeneral)
	if got := texts(h.history(tokA1, q1)); !slices.Equal(got, []string{"team question", "answered question"}) {
		t.Fatalf("after 8 days %q", got)
	}
	late := msg("late", orgNet(chGeneral), hive.MessageTypeAnswer, "claude-3e", "late")
	late.ReplyTo = ptr(ps.GID)
	if code, body := h.postMessage(tokA1, encode(t, late)); code != 404 || !strings.Contains(string(body), `"field":"reply_to"`) {
		t.Fatalf("reply to expired: %d %s", code, body)
	}
	// Thirty-one days: everything of the team plan is gone; seq continues without reuse.
	clk.Advance(23 * 24 * time.Hour)
	if err := h.server.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := texts(h.history(tokA1, q1)); len(got) != 0 {
		t.Fatalf("after 31 days %q", got)
	}
	a1.sendMsg(msg("after", orgNet(chGeneral), hive.MessageTypeFinding, "claude-3e", "after"))
	if st := a1.expectStored(); st.Seq != 5 {
		t.Fatalf("seq after expiry %d", st.Seq)
	}
}

// hello cursors replay only newly followed channels (H4), at most 500; a later hello replaces
// the followed set (H2).
func TestBusHelloCursors(t *testing.T) {
	h := newHarness(t)
	w := h.dialBus("", "writer")
	w.hello("local", []agentSpec{{"w", []string{chGeneral, chOps}}})
	for i := 1; i <= 5; i++ {
		w.sendMsg(msg("g"+strconv.Itoa(i), orgNet(chGeneral), hive.MessageTypeFinding, "w", "g"+strconv.Itoa(i)))
		w.expectStored()
	}
	r := h.dialBus("", "reader")
	r.send(hive.FrameHello{InstanceID: "local", Agents: []hive.BusAgentV1{{AgentID: "r", Role: "x", Channels: []string{chGeneral}}},
		Cursors: []hive.BusCursor{{Channel: chGeneral, Seq: 2}}})
	for i := 3; i <= 5; i++ {
		if d := r.expectDeliver(); d.Seq != uint64(i) {
			t.Fatalf("replay %d: %s", i, encode(t, d))
		}
	}
	r.sync()
	// Already following general: its cursor is ignored; ops is new and replays after 0 — it
	// has no messages yet, so nothing.
	r.hello("local", []agentSpec{{"r", []string{chGeneral, chOps}}}, hive.BusCursor{Channel: chGeneral, Seq: 0}, hive.BusCursor{Channel: chOps, Seq: 0})
	w.sendMsg(msg("o1", orgNet(chOps), hive.MessageTypeFinding, "w", "o1"))
	w.expectStored()
	if d := r.expectDeliver(); d.Body.Text != "o1" {
		t.Fatalf("ops live %s", encode(t, d))
	}
	// Drop general: its messages stop; ops continues.
	r.hello("local", []agentSpec{{"r", []string{chOps}}})
	w.sendMsg(msg("g6", orgNet(chGeneral), hive.MessageTypeFinding, "w", "g6"))
	w.expectStored()
	w.sendMsg(msg("o2", orgNet(chOps), hive.MessageTypeFinding, "w", "o2"))
	w.expectStored()
	if d := r.expectDeliver(); d.Body.Text != "o2" {
		t.Fatalf("after dropping general: %s", encode(t, d))
	}
	// The catch-up route continues where a replay stopped.
	code, _, body := h.do("GET", "/v1/bus/channels/"+url.PathEscape(chGeneral)+"/events?after_seq=4&limit=1", "", nil, nil)
	var ev hive.BusEventsV1
	if code != 200 || ev.UnmarshalJSON(bytes.TrimSpace(body)) != nil || len(ev.Events) != 1 || ev.NextAfterSeq == nil || *ev.NextAfterSeq != 5 {
		t.Fatalf("catch-up: %d %s", code, body)
	}
	if code, _, body := h.do("GET", "/v1/bus/channels/"+url.PathEscape(chGeneral)+"/events?limit=501", "", nil, nil); code != 400 ||
		string(body) != "{\"error\":{\"code\":\"invalid_request\",\"message\":\"limit must be an integer from 1 to 500\",\"field\":\"limit\",\"limit\":500}}\n" {
		t.Fatalf("catch-up limit: %d %s", code, body)
	}
}

// HTTP refusals of the bus lane are hive error bodies (S1, §5.4, §2.11 query rules); pinned in
// testdata/bus_refusals.golden.
func TestBusHTTPRefusals(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	m := `"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"` + chGeneral + `"},"type":"question","from":"claude-3e","body":{"text":"Which retry budget does payments use?"}`
	w := `"client_msg_id":"01JBMSG","network":{"kind":"swarm","swarm_id":"sw-1"},"type":"question","from":"claude-3e","body":{"text":"x"}`
	posts := []struct{ name, token, body string }{
		{"unknown member (case 32)", tokA1, `{` + m + `,"priority":"high"}`},
		{"nested unknown member", tokA1, `{` + strings.Replace(m, `"body":{"text":"Which`, `"body":{"note":1,"text":"Which`, 1) + `}`},
		{"missing type (case 2)", tokA1, `{` + strings.Replace(m, `"type":"question",`, ``, 1) + `}`},
		{"unknown type (case 3)", tokA1, `{` + strings.Replace(m, `"question"`, `"poll"`, 1) + `}`},
		{"blank to (case 75)", tokA1, `{` + m + `,"to":" "}`},
		{"to_instance alone (case 17)", tokA1, `{` + m + `,"to_instance":"inst_1"}`},
		{"channel shape (case 43)", tokA1, `{` + strings.Replace(m, chGeneral, "org:org_acme/general", 1) + `}`},
		{"text too long (case 34)", tokA1, `{` + strings.Replace(m, "Which retry budget does payments use?", strings.Repeat("a", 4001), 1) + `}`},
		{"deadline syntax (case 9)", tokA1, `{` + m + `,"deadline":"2026-10-21T12:00:00.000Z"}`},
		{"not JSON", tokA1, `{`},
		{"duplicate member", tokA1, `{` + m + `,"from":"x"}`},
		{"swarm not a member", tokA2, `{` + w + `}`},
		{"swarm sealed (case 37)", tokA1, `{` + strings.Replace(w, `"body":{"text":"x"}`, `"sealed":{"content_schema":"leanctx.hive.sealed-message/v1","epoch":3,"nonce":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX","ciphertext":"KCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OTw=="}`, 1) + `}`},
		{"deadline in the past", tokA1, `{` + m + `,"deadline":"2001-01-01T00:00:00Z"}`},
		{"no right", tokNo, `{` + m + `}`},
		{"no token", "", `{` + m + `}`},
		{"bad token", "nope", `{` + m + `}`},
	}
	var out bytes.Buffer
	for _, c := range posts {
		code, body := h.postMessage(c.token, c.body)
		fmt.Fprintf(&out, "== POST %s\n%d %s", c.name, code, body)
	}
	gets := []struct{ name, query string }{
		{"no network", "channel=" + url.QueryEscape(chGeneral)},
		{"unknown network", "network=mesh"},
		{"org without channel", "network=org"},
		{"org with swarm_id", "network=org&channel=" + url.QueryEscape(chGeneral) + "&swarm_id=sw-1"},
		{"swarm with channel", "network=swarm&swarm_id=sw-1&channel=" + url.QueryEscape(chGeneral)},
		{"swarm without swarm_id", "network=swarm"},
		{"bad channel", "network=org&channel=general"},
		{"unknown parameter", "network=org&channel=" + url.QueryEscape(chGeneral) + "&cursor=1"},
		{"repeated parameter", "network=org&channel=" + url.QueryEscape(chGeneral) + "&channel=" + url.QueryEscape(chOps)},
		{"limit 0", "network=org&channel=" + url.QueryEscape(chGeneral) + "&limit=0"},
		{"limit 201", "network=org&channel=" + url.QueryEscape(chGeneral) + "&limit=201"},
		{"unknown after_gid", "network=org&channel=" + url.QueryEscape(chGeneral) + "&after_gid=g-1"},
	}
	for _, c := range gets {
		code, _, body := h.do("GET", "/v1/messages?"+c.query, tokA1, nil, nil)
		fmt.Fprintf(&out, "== GET %s\n%d %s", c.name, code, body)
	}
	golden(t, "bus_refusals.golden", out.Bytes())
	// Nothing was stored.
	if l := h.history(tokA1, "network=org&channel="+url.QueryEscape(chGeneral)); len(l.Messages) != 0 {
		t.Fatalf("stored: %s", encode(t, l))
	}
}

// History pages hold at most 200 (or limit) messages with `next` = the after_gid of the next page.
func TestBusHistoryPages(t *testing.T) {
	h := newHarness(t)
	const n = 205
	for i := range n {
		if code, body := h.postMessage("", encode(t, msg("p"+strconv.Itoa(i), orgNet(chGeneral), hive.MessageTypeFinding, "w", strconv.Itoa(i)))); code != 200 {
			t.Fatalf("%d %s", code, body)
		}
	}
	q := "network=org&channel=" + url.QueryEscape(chGeneral)
	first := h.history("", q)
	if len(first.Messages) != 200 || first.Next == nil || *first.Next != first.Messages[199].GID {
		t.Fatalf("first page: %d next %v", len(first.Messages), first.Next)
	}
	second := h.history("", q+"&after_gid="+url.QueryEscape(*first.Next))
	if len(second.Messages) != 5 || second.Next != nil || second.Messages[0].Seq != 201 {
		t.Fatalf("second page: %d %v", len(second.Messages), second.Next)
	}
	small := h.history("", q+"&limit=5")
	if len(small.Messages) != 5 || *small.Next != small.Messages[4].GID {
		t.Fatalf("limit 5: %d", len(small.Messages))
	}
	exact := h.history("", q+"&limit=5&after_gid="+url.QueryEscape(first.Messages[199].GID))
	if len(exact.Messages) != 5 || exact.Next != nil {
		t.Fatalf("exact last page: %d %v", len(exact.Messages), exact.Next)
	}
}

// A socket may have many `message` frames in flight (pipelining, issue 16): the relay queues
// each one in frame order, so the channel's seqs follow the frames, and its answers — the
// message.stored records and the error of a refused frame in between — come back in frame
// order; a listener gets every message once, in seq order.
func TestBusPipelinedSends(t *testing.T) {
	h := newHarness(t)
	sender, listener := h.dialBus("", "sender"), h.dialBus("", "listener")
	sender.hello("local", []agentSpec{{"codex", []string{chGeneral}}})
	listener.hello("local", []agentSpec{{"claude", []string{chGeneral}}})
	const n = 150
	for i := range n {
		if i == 70 {
			sender.sendRaw(`{"t":"message","client_msg_id":"bad","network":{"kind":"org","channel":"` + chGeneral + `"},"type":"nope","from":"codex"}`)
		}
		sender.sendMsg(msg(fmt.Sprintf("p-%03d", i), orgNet(chGeneral), hive.MessageTypeFinding, "codex", fmt.Sprint("n", i)))
	}
	var last uint64
	for i := 0; i <= n; i++ {
		f, raw := sender.recv()
		if i == 70 {
			e, ok := f.(hive.FrameError)
			if !ok || deref(e.ClientMsgID) != "bad" {
				t.Fatalf("answer 70: %s, want the refusal of the bad frame", raw)
			}
			continue
		}
		st, ok := f.(hive.FrameMessageStored)
		want := i
		if i > 70 {
			want = i - 1
		}
		if !ok || st.Stored.ClientMsgID != fmt.Sprintf("p-%03d", want) || st.Stored.Seq <= last {
			t.Fatalf("answer %d: %s (last seq %d)", i, raw, last)
		}
		last = st.Stored.Seq
	}
	var seen uint64
	for range n {
		d := listener.expectDeliver()
		if d.Seq != seen+1 {
			t.Fatalf("listener got seq %d after %d", d.Seq, seen)
		}
		seen = d.Seq
	}
}
