package relay_test

import (
	"bytes"
	"context"
	"net/url"
	"path/filepath"
	"slices"
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
	st, err := sqlite.Open(filepath.Join(h.dir, sqlite.DefaultFileName), sqlite.Options{Now: clk.Now})
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
