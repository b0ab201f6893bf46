package relay_test

import (
	"bytes"
	"context"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

// restart stops this relay and closes its store, then starts a new relay (a new Server) over
// the same SQLite file with the same clock and options: what the bus remembers across a
// restart is what the store holds.
func (h *harness) restart(clk *fakeClock, opts ...harnessOption) *harness {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.server.Shutdown(ctx); err != nil {
		h.t.Fatal(err)
	}
	h.http.CloseClientConnections()
	h.http.Close()
	if err := h.store.Close(); err != nil {
		h.t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(h.dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	return newHarnessOn(h.t, h.dir, st, append([]harnessOption{withClock(clk), withoutSweeper()}, opts...)...)
}

// S9 across a restart: a resend is answered from the store with the original message.stored,
// over the socket and over HTTP, even when a check made at send time fails now (the recipient
// is announced by nobody, then by two instances; the deadline has passed), and nothing is
// stored or delivered again.
func TestBusResendAfterRestart(t *testing.T) {
	clk := newFakeClock()
	auth := withAuth(twoOrgAuth(t))
	h := newClockHarness(t, clk, auth)
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})

	direct := msg("d-1", orgNet(chGeneral), hive.MessageTypeOffer, "claude-3e", "for codex")
	direct.To = ptr("codex-85")
	a1.sendMsg(direct)
	_, directStored := a1.recv()
	if d := a2.expectDeliver(); d.Body.Text != "for codex" {
		t.Fatalf("a2: %s", encode(t, d))
	}
	question := msg("q-1", orgNet(chGeneral), hive.MessageTypeQuestion, "claude-3e", "by when?")
	question.Deadline = ptr(hive.UtcTimestampOf(clk.Now().Add(time.Hour)))
	code, questionStored := h.postMessage(tokA1, encode(t, question))
	if code != 200 {
		t.Fatalf("question: %d %s", code, questionStored)
	}
	a2.expectDeliver()
	stream := store.OrgStream("acme", chGeneral)
	last, err := h.store.StreamLastSeq(t.Context(), stream)
	if err != nil || last != 2 {
		t.Fatalf("last seq %d, %v", last, err)
	}

	// A new relay over the same file, a day and more later: nobody announces codex-85 now and
	// the question's deadline is past.
	h = h.restart(clk, auth)
	clk.Advance(25 * time.Hour)
	a1 = h.dialBus(tokA1, "a1 again")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	fresh := msg("d-new", orgNet(chGeneral), hive.MessageTypeOffer, "claude-3e", "new")
	fresh.To = ptr("codex-85")
	if code, body := h.postMessage(tokA1, encode(t, fresh)); code != 404 || !strings.Contains(string(body), `"field":"to"`) {
		t.Fatalf("a new send to codex-85 with nobody announcing it: %d %s", code, body)
	}
	late := question
	late.ClientMsgID = "q-new"
	if code, body := h.postMessage(tokA1, encode(t, late)); code != 400 || !strings.Contains(string(body), `"field":"deadline"`) {
		t.Fatalf("a new question with the old deadline: %d %s", code, body)
	}
	resend := func(stage string) {
		t.Helper()
		a1.sendMsg(direct)
		if _, raw := a1.recv(); !bytes.Equal(raw, directStored) {
			t.Fatalf("%s: socket resend answered\n%s\nwant\n%s", stage, raw, directStored)
		}
		code, body := h.postMessage(tokA1, encode(t, direct))
		if code != 200 || !strings.Contains(string(directStored), strings.TrimSuffix(strings.TrimPrefix(string(body), "{"), "}\n")) {
			t.Fatalf("%s: HTTP resend: %d %s, want %s", stage, code, body, directStored)
		}
		a1.sendMsg(question)
		if _, raw := a1.recv(); !strings.Contains(string(questionStored), strings.TrimSuffix(strings.TrimPrefix(string(raw), `{"t":"message.stored",`), "}")) {
			t.Fatalf("%s: question resend answered %s, want %s", stage, raw, questionStored)
		}
		if code, body := h.postMessage(tokA1, encode(t, question)); code != 200 || !bytes.Equal(body, questionStored) {
			t.Fatalf("%s: HTTP question resend: %d %s, want %s", stage, code, body, questionStored)
		}
	}
	resend("recipient announced by nobody")

	// Now two other instances announce codex-85: a new send is ambiguous, a resend is not.
	a2 = h.dialBus(tokA2, "a2 again")
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})
	a3 := h.dialBus(tokA3, "a3")
	a3.hello("inst_a3", []agentSpec{{"codex-85", []string{chGeneral}}})
	if code, body := h.postMessage(tokA1, encode(t, fresh)); code != 409 || !strings.Contains(string(body), `"reason":"ambiguous_recipient"`) {
		t.Fatalf("a new send to codex-85 announced twice: %d %s", code, body)
	}
	resend("recipient announced twice")

	// Nothing was stored or delivered again: the next frame a2 gets is the marker, at seq 3.
	a1.sendMsg(msg("marker", orgNet(chGeneral), hive.MessageTypeFinding, "claude-3e", "marker"))
	if st := a1.expectStored(); st.Seq != 3 {
		t.Fatalf("marker stored at seq %d, want 3", st.Seq)
	}
	if d := a2.expectDeliver(); d.Body.Text != "marker" || d.Seq != 3 {
		t.Fatalf("a2 after the resends: %s", encode(t, d))
	}
	if got := texts(h.history(tokA1, "network=org&channel="+url.QueryEscape(chGeneral))); !slices.Equal(got, []string{"for codex", "by when?", "marker"}) {
		t.Fatalf("history %q", got)
	}
}

// S7 and §4.6 across a restart: who announced which agent, and when, and each instance's ack
// positions come from the store, so a new relay over the same file binds `to` exactly as the
// old one would have (one instance, several, none after 24 hours), accepts receipts from agents
// announced before the restart, and keeps ack positions, which never go down. The sweeper
// refreshes the pairs of open sockets.
func TestBusStateAfterRestart(t *testing.T) {
	clk := newFakeClock()
	auth := withAuth(twoOrgAuth(t))
	h := newClockHarness(t, clk, auth)
	ctx := t.Context()
	a1 := h.dialBus(tokA1, "a1")
	a2 := h.dialBus(tokA2, "a2")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}, {"solo", []string{chOps}}})
	for i := range 3 {
		a1.sendMsg(msg("m-"+strconv.Itoa(i), orgNet(chGeneral), hive.MessageTypeFinding, "claude-3e", "m"))
		a1.expectStored()
		a2.expectDeliver()
	}
	// Acks: a position only moves up.
	a2.send(hive.FrameAck{Channel: chGeneral, Seq: 2})
	a2.send(hive.FrameAck{Channel: chGeneral, Seq: 1})
	a2.sync()
	general := store.OrgStream("acme", chGeneral)
	if got, err := h.store.Acks(ctx, "acme", "inst_a2"); err != nil || !maps.Equal(got, map[store.StreamKey]int64{general: 2}) {
		t.Fatalf("acks before the restart: %v, %v", got, err)
	}
	// The sweeper refreshes the pairs of open sockets: last seen at the sweep.
	clk.Advance(23 * time.Hour)
	if err := h.server.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	anns, err := h.store.Announcements(ctx, "acme", "inst_a2", time.Time{})
	if err != nil || len(anns) != 2 || !anns[0].LastSeen.Equal(clk.Now()) || !anns[1].LastSeen.Equal(clk.Now()) {
		t.Fatalf("announcements after a sweep: %+v, %v", anns, err)
	}
	clk.Advance(time.Hour)

	// A new relay; only a1 reconnects. codex-85 was announced by a2 alone: bound to it.
	h = h.restart(clk, auth)
	a1 = h.dialBus(tokA1, "a1 again")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	direct := msg("d-1", orgNet(chGeneral), hive.MessageTypeOffer, "claude-3e", "still there?")
	direct.To = ptr("codex-85")
	a1.sendMsg(direct)
	stored := a1.expectStored()
	m, err := h.store.GetMessage(ctx, store.MessageScope{Org: "acme"}, stored.GID)
	if err != nil || m.ToOrg != "acme" || m.ToInstance != "inst_a2" {
		t.Fatalf("binding after the restart: %+v, %v", m, err)
	}
	q := "network=org&channel=" + url.QueryEscape(chGeneral)
	if got := texts(h.history(tokA2, q)); !slices.Equal(got, []string{"m", "m", "m", "still there?"}) {
		t.Fatalf("a2 history %q", got)
	}
	if got := texts(h.history(tokA3, q)); !slices.Equal(got, []string{"m", "m", "m"}) {
		t.Fatalf("a3 history %q", got)
	}
	// A receipt over HTTP from the agent a2 announced before the restart is accepted; one
	// from an agent it never announced is not.
	receipt := func(token, by string) int {
		t.Helper()
		code, _, _ := h.do("POST", "/v1/messages/"+url.PathEscape(stored.GID)+"/receipts", token, jsonType,
			[]byte(`{"gid":"`+stored.GID+`","by":"`+by+`","state":"delivered"}`))
		return code
	}
	if code := receipt(tokA2, "codex-85"); code != 204 {
		t.Fatalf("receipt of codex-85 after the restart: %d", code)
	}
	if st := a1.expectStatus(); st.By != "codex-85" || st.State != hive.MessageReceiptStateDelivered {
		t.Fatalf("status %s", encode(t, st))
	}
	if code := receipt(tokA2, "other"); code != 404 {
		t.Fatalf("receipt of an agent never announced: %d", code)
	}
	// Ack positions survived and still never go down.
	if got, err := h.store.Acks(ctx, "acme", "inst_a2"); err != nil || !maps.Equal(got, map[store.StreamKey]int64{general: 2}) {
		t.Fatalf("acks after the restart: %v, %v", got, err)
	}
	a2 = h.dialBus(tokA2, "a2 again")
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral}}})
	a2.send(hive.FrameAck{Channel: chGeneral, Seq: 1})
	a2.send(hive.FrameAck{Channel: chGeneral, Seq: 4})
	a2.sync()
	if got, err := h.store.Acks(ctx, "acme", "inst_a2"); err != nil || !maps.Equal(got, map[store.StreamKey]int64{general: 4}) {
		t.Fatalf("acks after acking again: %v, %v", got, err)
	}
	a2.send(hive.FrameAck{Channel: chGeneral, Seq: 5})
	if e := a2.expectError("seq", ""); e.Error.Message != "seq is beyond the last seq of the channel" {
		t.Fatalf("ack beyond the last seq: %s", encode(t, e))
	}

	// A third instance announces codex-85 and leaves: after another restart both a2's and a3's
	// pairs are in the store, so the binding is ambiguous.
	a3 := h.dialBus(tokA3, "a3")
	a3.hello("inst_a3", []agentSpec{{"codex-85", []string{chOps}}})
	h = h.restart(clk, auth)
	again := direct
	again.ClientMsgID = "d-2"
	if code, body := h.postMessage(tokA1, encode(t, again)); code != 409 || !strings.Contains(string(body), `"reason":"ambiguous_recipient"`) {
		t.Fatalf("two instances announced codex-85 before the restart: %d %s", code, body)
	}
	// 24 hours after they were last seen, nobody runs codex-85 any more; the sweeper deletes
	// the stale pairs.
	clk.Advance(24*time.Hour + time.Second)
	if code, body := h.postMessage(tokA1, encode(t, again)); code != 404 || !strings.Contains(string(body), `"field":"to"`) {
		t.Fatalf("a day after: %d %s", code, body)
	}
	if err := h.server.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, inst := range []string{"inst_a2", "inst_a3"} {
		if anns, err := h.store.Announcements(ctx, "acme", inst, time.Time{}); err != nil || len(anns) != 0 {
			t.Fatalf("%s announcements after the sweep: %+v, %v", inst, anns, err)
		}
	}
}
