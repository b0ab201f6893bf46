package relay_test

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/relay"
)

// TestBusPagesByBytes: with a byte budget of a few messages per store read
// (Limits.MaxReadBytes), every bus read still returns the whole stream in order — the live
// fan-out, a hello replay, the message history and the catch-up route (their `next` cursors
// set exactly when more follow), and polls — each read holding about the budget.
func TestBusPagesByBytes(t *testing.T) {
	const budget = 2000
	h := newHarness(t, withLimits(relay.Limits{MaxReadBytes: budget}))
	w := h.dialBus("", "writer")
	w.hello("local", []agentSpec{{"w", []string{chGeneral}}})
	live := h.dialBus("", "live")
	live.hello("local", []agentSpec{{"l", []string{chGeneral}}})
	const n = 40
	var want []string
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("m%02d %s", i, strings.Repeat("x", 200+(i*37)%300))
		want = append(want, text)
		w.sendMsg(msg("m"+strconv.Itoa(i), orgNet(chGeneral), hive.MessageTypeFinding, "w", text))
		w.expectStored()
	}
	for i := 1; i <= n; i++ {
		if d := live.expectDeliver(); d.Seq != uint64(i) || d.Body.Text != want[i-1] {
			t.Fatalf("live %d: %s", i, encode(t, d))
		}
	}

	// A hello replay from the start.
	r := h.dialBus("", "replay")
	r.send(hive.FrameHello{InstanceID: "local", Agents: []hive.BusAgentV1{{AgentID: "r", Role: "x", Channels: []string{chGeneral}}},
		Cursors: []hive.BusCursor{{Channel: chGeneral, Seq: 0}}})
	for i := 1; i <= n; i++ {
		if d := r.expectDeliver(); d.Seq != uint64(i) {
			t.Fatalf("replay %d: %s", i, encode(t, d))
		}
	}
	r.sync()

	// The history, 25 a page asked: pages stop at the budget, `next` until the last.
	var got []string
	query := "network=org&channel=" + url.QueryEscape(chGeneral) + "&limit=25"
	pages := 0
	for q := query; ; pages++ {
		l := h.history("", q)
		got = append(got, texts(l)...)
		if size := len(encode(t, l)); len(l.Messages) > 1 && size > 3*budget {
			t.Fatalf("a history page of %d bytes", size)
		}
		if l.Next == nil {
			break
		}
		q = query + "&after_gid=" + url.QueryEscape(*l.Next)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history paged %d messages in %d pages, want %d", len(got), pages, n)
	}
	if pages < 5 {
		t.Fatalf("the history took %d pages: the budget did not stop them", pages)
	}

	// The catch-up route.
	got = got[:0]
	after := 0
	for {
		code, _, body := h.do("GET", "/v1/bus/channels/"+url.PathEscape(chGeneral)+"/events?limit=25&after_seq="+strconv.Itoa(after), "", nil, nil)
		if code != 200 {
			t.Fatalf("catch-up: %d %s", code, body)
		}
		var ev hive.BusEventsV1
		if err := ev.UnmarshalJSON(bytes.TrimSpace(body)); err != nil {
			t.Fatal(err)
		}
		for _, f := range ev.Events {
			got = append(got, f.(hive.FrameMessageDeliver).Delivery.Body.Text)
		}
		if ev.NextAfterSeq == nil {
			break
		}
		after = int(*ev.NextAfterSeq)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("catch-up paged %d messages, want %d", len(got), n)
	}

	// Polls.
	got = got[:0]
	cursor := ""
	for range 3 * n {
		p := h.poll("", cursor)
		if len(p.Frames) == 0 {
			break
		}
		if size := len(encode(t, p)); len(p.Frames) > 1 && size > 3*budget {
			t.Fatalf("a poll answer of %d bytes", size)
		}
		for _, f := range p.Frames {
			got = append(got, f.(hive.FrameMessageDeliver).Delivery.Body.Text)
		}
		cursor = p.Cursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("polls took %d messages, want %d", len(got), n)
	}
}
