package relay_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/relay"
)

// sealedAuth is the two-org world of twoOrgAuth (tokens a1, a2 and g1) with acme's vault
// 3f6c… sealed at epoch 3; globex's vault of the same id and acme's vault 00…01 are not.
func sealedAuth(t testing.TB) *relay.Auth {
	t.Helper()
	doc := fmt.Sprintf(`{"tokens":[
 {"token_sha256":%q,"org":"acme","instance_id":"inst_a1","instance_label":"laptop","owner":"Ana","swarms":[{"swarm_id":"sw-1","handle":"quiet-heron","reputation":3}],"rights":["bus.relay"]},
 {"token_sha256":%q,"org":"acme","instance_id":"inst_a2","instance_label":"ci","owner":"Ben","plan":"personal","rights":["bus.relay"]},
 {"token_sha256":%q,"org":"globex","instance_id":"inst_g1","instance_label":"box","owner":"Gus","rights":["bus.relay"]}
],"sealed_vaults":[{"org":"acme","vault_id":%q,"epoch":3}]}`, relay.HashToken(tokA1), relay.HashToken(tokA2), relay.HashToken(tokG1), vaultMain)
	a, err := relay.ParseAuth([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sealedBlob is the sealed finding's blob of hive.md §2.12 at an epoch.
func sealedBlob(epoch uint64) *hive.SealedBlobV1 {
	return &hive.SealedBlobV1{ContentSchema: hive.SealedMessageSchema, Epoch: epoch,
		Nonce: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX", Ciphertext: "KCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OTw=="}
}

func sealedMsg(cmid, channel string, epoch uint64) hive.AgentMessageV1 {
	return hive.AgentMessageV1{ClientMsgID: cmid, Network: orgNet(channel), Type: hive.MessageTypeFinding, From: "claude-3e", Sealed: sealedBlob(epoch)}
}

// S17 over the socket and over HTTP: a sealed vault refuses clear bodies and stale epochs, an
// unsealed one refuses `sealed`; the ciphertext of the current epoch is stored and relayed
// unread (deliveries, history, catch-up); the seal is per org.
func TestBusSealedVaults(t *testing.T) {
	h := newHarness(t, withAuth(sealedAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	g1 := h.dialBus(tokG1, "g1")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral, chOther}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})
	g1.hello("inst_g1", []agentSpec{{"claude-3e", []string{chGeneral}}})

	clear := msg("c-1", orgNet(chGeneral), hive.MessageTypeFinding, "claude-3e", "in the clear")
	cases := []struct {
		name   string
		token  string
		sock   *busClient
		m      hive.AgentMessageV1
		status int
		want   string
	}{
		{"clear body in a sealed vault", tokA1, a1, clear, 400,
			`{"code":"invalid_request","message":"the vault is sealed: send the body sealed","field":"body","reason":"sealed_vault"}`},
		{"stale epoch", tokA1, a1, sealedMsg("c-2", chGeneral, 2), 409,
			`{"code":"invalid_state","message":"sealed.epoch is not the vault's current epoch","field":"sealed.epoch","reason":"stale_epoch"}`},
		{"future epoch", tokA1, a1, sealedMsg("c-3", chGeneral, 4), 409,
			`{"code":"invalid_state","message":"sealed.epoch is not the vault's current epoch","field":"sealed.epoch","reason":"stale_epoch"}`},
		{"sealed in an unsealed vault", tokA1, a1, sealedMsg("c-4", chOther, 3), 400,
			`{"code":"invalid_request","message":"the vault is not sealed","field":"sealed","reason":"not_sealed"}`},
		{"sealed in another org's vault of the same id", tokG1, g1, sealedMsg("c-5", chGeneral, 3), 400,
			`{"code":"invalid_request","message":"the vault is not sealed","field":"sealed","reason":"not_sealed"}`},
	}
	for _, c := range cases {
		c.sock.sendMsg(c.m)
		_, raw := c.sock.recv()
		if want := `{"t":"error","client_msg_id":"` + c.m.ClientMsgID + `","error":` + c.want + `}`; string(raw) != want {
			t.Errorf("%s over the socket:\n got %s\nwant %s", c.name, raw, want)
		}
		code, body := h.postMessage(c.token, encode(t, c.m))
		if want := `{"error":` + c.want + "}\n"; code != c.status || string(body) != want {
			t.Errorf("%s over HTTP: %d %s", c.name, code, body)
		}
	}

	// The current epoch: stored, relayed and listed with the ciphertext as sent.
	ok := sealedMsg("s-1", chGeneral, 3)
	a1.sendMsg(ok)
	st := a1.expectStored()
	d := a2.expectDeliver()
	if d.GID != st.GID || d.Body != nil || d.Sealed == nil || encode(t, *d.Sealed) != encode(t, *sealedBlob(3)) {
		t.Fatalf("sealed delivery %s", encode(t, d))
	}
	if code, body := h.postMessage(tokA1, encode(t, ok)); code != 200 || !strings.Contains(string(body), st.GID) {
		t.Fatalf("resend over HTTP: %d %s", code, body) // S9: the original
	}
	ok2 := sealedMsg("s-2", chGeneral, 3)
	ok2.Type, ok2.ReplyTo = hive.MessageTypeAnswer, ptr(st.GID)
	if code, body := h.postMessage(tokA2, strings.Replace(encode(t, ok2), `"from":"claude-3e"`, `"from":"codex-85"`, 1)); code != 200 {
		t.Fatalf("sealed answer over HTTP: %d %s", code, body)
	}
	if d := a1.expectDeliver(); d.Sealed == nil || deref(d.ReplyTo) != st.GID {
		t.Fatalf("a1 sealed answer %s", encode(t, d))
	}
	a2.expectDeliver() // posted over HTTP: a2's socket is not the sending one
	l := h.history(tokA2, "network=org&channel="+url.QueryEscape(chGeneral))
	if len(l.Messages) != 2 || l.Messages[0].Sealed == nil || l.Messages[0].Body != nil {
		t.Fatalf("history %s", encode(t, l))
	}
	ev := h.catchUp(tokA2, chGeneral, "")
	if md, isMsg := ev.Events[0].(hive.FrameMessageDeliver); !isMsg || md.Delivery.Sealed == nil || md.Delivery.Sealed.Ciphertext != sealedBlob(3).Ciphertext {
		t.Fatalf("catch-up %s", encode(t, ev))
	}
	// Unsealed vaults and other orgs take clear bodies.
	a1.sendMsg(msg("u-1", orgNet(chOther), hive.MessageTypeFinding, "claude-3e", "clear elsewhere"))
	a1.expectStored()
	g1.sendMsg(msg("u-2", orgNet(chGeneral), hive.MessageTypeFinding, "claude-3e", "globex is not sealed"))
	g1.expectStored()
	// Swarm messages are never sealed (validation, before S17).
	sw := sealedMsg("w-1", chGeneral, 3)
	sw.Network = swarmNet("sw-1")
	if code, body := h.postMessage(tokA1, encode(t, sw)); code != 400 || !strings.Contains(string(body), `"field":"sealed"`) || strings.Contains(string(body), "reason") {
		t.Fatalf("swarm sealed: %d %s", code, body)
	}
	a2.sync() // nothing refused was delivered
}

func TestParseAuthSealedVaults(t *testing.T) {
	tok := `{"token_sha256":"` + relay.HashToken("t") + `","org":"o","instance_id":"i","instance_label":"","rights":["bus.relay"]}`
	v := "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42"
	a, err := relay.ParseAuth([]byte(`{"sealed_vaults":[{"org":"o","vault_id":"` + v + `","epoch":7},{"org":"p","vault_id":"` + v + `","epoch":1}],"tokens":[` + tok + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		org, vault string
		epoch      uint64
		ok         bool
	}{{"o", v, 7, true}, {"p", v, 1, true}, {"q", v, 0, false}, {"o", "00000000000000000000000000000001", 0, false}} {
		if e, ok := a.Sealed(c.org, c.vault); e != c.epoch || ok != c.ok {
			t.Errorf("Sealed(%s, %s) = %d, %v", c.org, c.vault, e, ok)
		}
	}
	if e, ok := (*relay.Auth)(nil).Sealed("o", v); ok || e != 0 {
		t.Error("local mode has a sealed vault")
	}
	for _, c := range []struct{ name, sealed, want string }{
		{"not an array", `{}`, "sealed_vaults must be an array"},
		{"not an object", `[1]`, "sealed_vaults[0] must be an object"},
		{"empty org", `[{"org":"","vault_id":"` + v + `","epoch":1}]`, "sealed_vaults[0].org must be a non-empty string"},
		{"upper-case vault", `[{"org":"o","vault_id":"` + strings.ToUpper(v) + `","epoch":1}]`, "sealed_vaults[0].vault_id must be 32 lowercase hex digits"},
		{"short vault", `[{"org":"o","vault_id":"3f6c","epoch":1}]`, "sealed_vaults[0].vault_id must be 32 lowercase hex digits"},
		{"epoch 0", `[{"org":"o","vault_id":"` + v + `","epoch":0}]`, "sealed_vaults[0].epoch must be an integer from 1"},
		{"fractional epoch", `[{"org":"o","vault_id":"` + v + `","epoch":1.5}]`, "sealed_vaults[0].epoch must be an integer from 1"},
		{"string epoch", `[{"org":"o","vault_id":"` + v + `","epoch":"1"}]`, "sealed_vaults[0].epoch must be an integer from 1"},
		{"missing epoch", `[{"org":"o","vault_id":"` + v + `"}]`, "sealed_vaults[0] needs org, vault_id and epoch"},
		{"unknown member", `[{"org":"o","vault_id":"` + v + `","epoch":1,"key":"x"}]`, `sealed_vaults[0] has unknown member "key"`},
		{"repeated vault", `[{"org":"o","vault_id":"` + v + `","epoch":1},{"org":"o","vault_id":"` + v + `","epoch":2}]`, "sealed_vaults[1] repeats the vault " + v + " of org o"},
	} {
		if _, err := relay.ParseAuth([]byte(`{"tokens":[` + tok + `],"sealed_vaults":` + c.sealed + `}`)); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := relay.ParseAuth([]byte(`{"tokens":[],"vaults":[]}`)); err == nil || err.Error() != `auth file has unknown member "vaults"` {
		t.Errorf("unknown top-level member: %v", err)
	}
	if _, err := relay.ParseAuth([]byte(`{"sealed_vaults":[]}`)); err == nil || !strings.Contains(err.Error(), "auth file must be an array") {
		t.Errorf("no tokens: %v", err)
	}
}
