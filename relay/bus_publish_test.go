package relay_test

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/hive"
)

// publish → published / deliver: the sender gets its position, every other follower of the
// channel a `deliver` (never the sending socket, S10; never another org, S2); a private publish
// reaches only sockets that announced `to`; refusals name their member and carry the
// client_msg_id; a resend answers the original `published` and delivers nothing (S9).
func TestBusPublish(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a1b := h.dialBus(tokA1, "a1b") // a second socket of a1's instance
	a2 := h.dialBus(tokA2, "a2")
	a3 := h.dialBus(tokA3, "a3")
	g1 := h.dialBus(tokG1, "g1")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a1b.hello("inst_a1", []agentSpec{{"reviewer", []string{chGeneral}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral, chOps}}})
	a3.hello("inst_a3", []agentSpec{{"helper", []string{chGeneral}}})
	g1.hello("inst_g1", []agentSpec{{"gx", []string{chGeneral}}}) // same channel text, other org

	body := `{"plan":["a","b"],"n":1.50,"ok":null}`
	a1.send(pub("p-1", chGeneral, "claude-3e", "status", body))
	p := a1.expectPublished()
	if p.ClientMsgID != "p-1" || p.Channel != chGeneral || p.Seq != 1 || p.ServerTime.String() == "" {
		t.Fatalf("published %s", encode(t, p))
	}
	for _, r := range []*busClient{a1b, a2, a3} {
		d, raw := r.expectFrameDeliver()
		want := `{"t":"deliver","seq":1,"channel":"` + chGeneral + `","from":"claude-3e","kind":"status","priority":"normal","privacy":"team","body":` + body + `,"server_time":"` + p.ServerTime.String() + `"}`
		if string(raw) != want || d.Seq != 1 {
			t.Fatalf("%s deliver:\n got %s\nwant %s", r.name, raw, want)
		}
	}
	// A message interleaves on the same counter.
	a2.sendMsg(msg("m-1", orgNet(chGeneral), hive.MessageTypeFinding, "codex-85", "between"))
	if st := a2.expectStored(); st.Seq != 2 {
		t.Fatalf("message after a publish: seq %d", st.Seq)
	}
	for _, r := range []*busClient{a1, a1b, a3} {
		if d := r.expectDeliver(); d.Seq != 2 {
			t.Fatalf("%s: %s", r.name, encode(t, d))
		}
	}
	// globex's publish on the same channel text is its own stream.
	g1.send(pub("p-1", chGeneral, "gx", "status", `null`))
	if gp := g1.expectPublished(); gp.Seq != 1 {
		t.Fatalf("globex published %s", encode(t, gp))
	}

	// S9: the resend answers the original, byte for byte, and delivers nothing.
	a1.send(pub("p-1", chGeneral, "claude-3e", "other", `"changed"`))
	if again := a1.expectPublished(); encode(t, again) != encode(t, p) {
		t.Fatalf("resend answered %s, want %s", encode(t, again), encode(t, p))
	}

	// Private: only the socket announcing `to` gets it; a team publish with `to` goes to all.
	priv := pub("p-2", chGeneral, "claude-3e", "handover", `{"secret":true}`)
	priv.To, priv.Privacy = ptr("codex-85"), hive.BusPrivacyPrivate
	a1.send(priv)
	pp := a1.expectPublished()
	if d, raw := a2.expectFrameDeliver(); d.Seq != pp.Seq || d.Privacy != hive.BusPrivacyPrivate || deref(d.To) != "codex-85" {
		t.Fatalf("a2 private: %s", raw)
	}
	teamTo := pub("p-3", chGeneral, "claude-3e", "hint", `[]`)
	teamTo.To = ptr("codex-85")
	a1.send(teamTo)
	tp := a1.expectPublished()
	for _, r := range []*busClient{a1b, a3, a2} {
		if d, raw := r.expectFrameDeliver(); d.Seq != tp.Seq {
			t.Fatalf("%s: want the team publish %d, got %s", r.name, tp.Seq, raw)
		}
	}

	// Refusals keep the socket open, carry the client_msg_id and name the member.
	big := `"` + strings.Repeat("a", 65535) + `"`
	cases := []struct {
		name, frame, field, reason, message, cmid string
	}{
		{"unannounced from (H5)", encode(t, pub("r-1", chGeneral, "codex-85", "k", `1`)), "from", hive.ReasonUnannouncedAgent, "from names no agent announced by hello on this socket", "r-1"},
		{"channel not followed (H6)", encode(t, pub("r-2", chOps, "claude-3e", "k", `1`)), "channel", "", "the socket does not follow channel", "r-2"},
		{"channel shape", encode(t, pub("r-3", "org:acme/general", "claude-3e", "k", `1`)), "channel", "", "channel must be org:<org>/vault:<vault_id>/<name>", "r-3"},
		{"private without to", `{"t":"publish","client_msg_id":"r-4","channel":"` + chGeneral + `","from":"claude-3e","kind":"k","priority":"low","privacy":"private","body":1}`, "to", "", "private frames name a recipient", "r-4"},
		{"unknown priority", `{"t":"publish","client_msg_id":"r-5","channel":"` + chGeneral + `","from":"claude-3e","kind":"k","priority":"urgent","privacy":"team","body":1}`, "priority", "", "unknown priority", "r-5"},
		{"unknown privacy", `{"t":"publish","client_msg_id":"r-6","channel":"` + chGeneral + `","from":"claude-3e","kind":"k","priority":"low","privacy":"web","body":1}`, "privacy", "", "unknown privacy", "r-6"},
		{"blank kind", encode(t, pub("r-7", chGeneral, "claude-3e", " ", `1`)), "kind", "", "kind must not be empty", "r-7"},
		{"body over 65536 bytes", encode(t, pub("r-8", chGeneral, "claude-3e", "k", big)), "body", "", "body exceeds the 65536 byte limit", "r-8"},
		{"unknown member (S1)", `{"t":"publish","client_msg_id":"r-9","channel":"` + chGeneral + `","from":"claude-3e","kind":"k","priority":"low","privacy":"team","body":1,"color":"red"}`, "color", "", "", "r-9"},
		{"missing body", `{"t":"publish","client_msg_id":"r-10","channel":"` + chGeneral + `","from":"claude-3e","kind":"k","priority":"low","privacy":"team"}`, "body", "", "BusFrameV1.body is missing.", "r-10"},
	}
	for _, c := range cases {
		a1.sendRaw(c.frame)
		f, raw := a1.recv()
		e, ok := f.(hive.FrameError)
		if !ok || e.Error.Code != hive.HiveErrorCodeInvalidRequest || deref(e.Error.Field) != c.field || deref(e.Error.Reason) != c.reason ||
			(c.message != "" && e.Error.Message != c.message) || deref(e.ClientMsgID) != c.cmid {
			t.Errorf("%s: %s", c.name, raw)
		}
	}
	// A body of exactly 65536 compact bytes passes.
	a1.send(pub("ok-max", chGeneral, "claude-3e", "k", `"`+strings.Repeat("a", 65534)+`"`))
	maxp := a1.expectPublished()

	// Nothing else reached anyone: a1 (no echo), a1b, a3 and a2 get the max body and the
	// marker next; g1 (other org) only the marker of its own org.
	for _, r := range []*busClient{a1b, a3, a2} {
		if d, _ := r.expectFrameDeliver(); d.Seq != maxp.Seq {
			t.Fatalf("%s: want seq %d", r.name, maxp.Seq)
		}
	}
	marker(t, a3, "helper", chGeneral, "mk-1", a1, a1b, a2)
	g2 := h.dialBus(tokG1, "g2")
	g2.hello("inst_g1", []agentSpec{{"gy", []string{chGeneral}}})
	marker(t, g2, "gy", chGeneral, "mk-g", g1)

	// Catch-up and hello replay show exactly what the caller can see: a2 the private publish,
	// a3 not; globex only its own stream.
	all := []string{"deliver:1", "message.deliver:2", "deliver:3", "deliver:4", "deliver:5", "deliver:6"}
	if got := eventSeqs(h.catchUp(tokA2, chGeneral, "")); !slices.Equal(got, all) {
		t.Fatalf("a2 catch-up %q", got)
	}
	if got := eventSeqs(h.catchUp(tokA3, chGeneral, "")); !slices.Equal(got, slices.Delete(slices.Clone(all), 2, 3)) {
		t.Fatalf("a3 catch-up %q", got)
	}
	if got := eventSeqs(h.catchUp(tokG1, chGeneral, "")); !slices.Equal(got, []string{"deliver:1", "deliver:2"}) {
		t.Fatalf("globex catch-up %q", got)
	}
	ev := h.catchUp(tokA2, chGeneral, "after_seq=2&limit=1")
	if len(ev.Events) != 1 || ev.NextAfterSeq == nil || *ev.NextAfterSeq != 3 {
		t.Fatalf("catch-up page: %s", encode(t, ev))
	}
	if d, ok := ev.Events[0].(hive.FrameDeliver); !ok || string(d.Body) != `{"secret":true}` {
		t.Fatalf("catch-up private deliver: %s", encode(t, ev))
	}
	r2 := h.dialBus(tokA2, "a2-replay")
	r2.send(hive.FrameHello{InstanceID: "inst_a2", Agents: []hive.BusAgentV1{{AgentID: "codex-85", Role: "coder", Channels: []string{chGeneral}}},
		Cursors: []hive.BusCursor{{Channel: chGeneral, Seq: 1}}})
	var replayed []uint64
	for range 5 {
		f, raw := r2.recv()
		switch x := f.(type) {
		case hive.FrameDeliver:
			replayed = append(replayed, x.Seq)
		case hive.FrameMessageDeliver:
			replayed = append(replayed, x.Delivery.Seq)
		default:
			t.Fatalf("replay: %s", raw)
		}
	}
	if !slices.Equal(replayed, []uint64{2, 3, 4, 5, 6}) {
		t.Fatalf("replay %v", replayed)
	}
	r3 := h.dialBus(tokA3, "a3-replay")
	r3.send(hive.FrameHello{InstanceID: "inst_a3", Agents: []hive.BusAgentV1{{AgentID: "helper", Role: "coder", Channels: []string{chGeneral}}},
		Cursors: []hive.BusCursor{{Channel: chGeneral, Seq: 2}}})
	for _, want := range []uint64{4, 5, 6} { // not the private 3
		if d, raw := r3.expectFrameDeliver(); d.Seq != want {
			t.Fatalf("a3 replay: want %d, got %s", want, raw)
		}
	}
	r3.sync()
}

// One counter per channel (hive.md §4.6): publishes and messages from concurrent senders on
// one channel get every seq 1…N once, and a listener receives them all in seq order.
func TestBusPublishGapFreeWithMessages(t *testing.T) {
	h := newHarness(t)
	listener := h.dialBus("", "listener")
	listener.hello("local", []agentSpec{{"watcher", []string{chGeneral}}})
	const senders, each = 6, 20
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
			agent := "agent-" + strconv.Itoa(i)
			for j := range each {
				var f hive.BusFrameV1 = pub(fmt.Sprintf("p-%d-%d", i, j), chGeneral, agent, "k", strconv.Itoa(j))
				if j%2 == 1 {
					f = hive.FrameMessage{Message: msg(fmt.Sprintf("m-%d-%d", i, j), orgNet(chGeneral), hive.MessageTypeFinding, agent, "m")}
				}
				if err := s.c.Send(t.Context(), f); err != nil {
					t.Error(err)
					return
				}
			}
			for n := 0; n < each; {
				f, raw, err := s.c.Recv(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				var seq uint64
				switch x := f.(type) {
				case hive.FrameDeliver, hive.FrameMessageDeliver:
					continue // the other senders'
				case hive.FramePublished:
					seq = x.Seq
				case hive.FrameMessageStored:
					seq = x.Stored.Seq
				default:
					t.Errorf("sender %d got %s", i, raw)
					return
				}
				n++
				mu.Lock()
				seqs = append(seqs, seq)
				mu.Unlock()
			}
		}()
	}
	var got []uint64
	for range senders * each {
		f, raw := listener.recv()
		switch x := f.(type) {
		case hive.FrameDeliver:
			got = append(got, x.Seq)
		case hive.FrameMessageDeliver:
			got = append(got, x.Delivery.Seq)
		default:
			t.Fatalf("listener got %s", raw)
		}
	}
	wg.Wait()
	slices.Sort(seqs)
	for i := range senders * each {
		if seqs[i] != uint64(i+1) || got[i] != uint64(i+1) {
			t.Fatalf("seq %d: stored %d delivered %d", i+1, seqs[i], got[i])
		}
	}
}

// Publishes expire like org messages of the sender's plan (S11): Personal after 7 days, Team
// after 30; the sweeper deletes them and their seq is never given again.
func TestBusPublishRetention(t *testing.T) {
	clk := newFakeClock()
	h := newClockHarness(t, clk, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})
	a1.send(pub("team", chGeneral, "claude-3e", "k", `"team"`))
	a1.expectPublished()
	a2.expectFrameDeliver()
	a2.send(pub("personal", chGeneral, "codex-85", "k", `"personal"`))
	a2.expectPublished()
	a1.expectFrameDeliver()
	clk.Advance(7*24*time.Hour + time.Second)
	if got := eventSeqs(h.catchUp(tokA1, chGeneral, "")); !slices.Equal(got, []string{"deliver:1"}) {
		t.Fatalf("after 7 days %q", got)
	}
	if err := h.server.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(23 * 24 * time.Hour)
	if err := h.server.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ev := h.catchUp(tokA1, chGeneral, ""); len(ev.Events) != 0 {
		t.Fatalf("after 30 days %s", encode(t, ev))
	}
	// The swept publish's client_msg_id is free again; seq continues.
	a1.send(pub("team", chGeneral, "claude-3e", "k", `"again"`))
	if p := a1.expectPublished(); p.Seq != 3 {
		t.Fatalf("seq after expiry %d", p.Seq)
	}
	if d, raw := a2.expectFrameDeliver(); d.Seq != 3 || !bytes.Contains(raw, []byte(`"again"`)) {
		t.Fatalf("a2 %s", raw)
	}
}
