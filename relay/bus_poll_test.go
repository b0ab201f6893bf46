package relay_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/hive"
)

// poll calls GET /v1/bus/poll and decodes the answer; cursor "" polls without one.
func (h *harness) poll(token, cursor string) hive.BusPollV1 {
	h.t.Helper()
	path := "/v1/bus/poll"
	if cursor != "" {
		path += "?cursor=" + url.QueryEscape(cursor)
	}
	code, _, body := h.do("GET", path, token, nil, nil)
	if code != 200 {
		h.t.Fatalf("poll %q: %d %s", cursor, code, body)
	}
	var p hive.BusPollV1
	if err := p.UnmarshalJSON(bytes.TrimSpace(body)); err != nil {
		h.t.Fatalf("poll %q: %v in %s", cursor, err, body)
	}
	if err := p.Validate(); err != nil || p.Cursor == "" {
		h.t.Fatalf("poll %q: %v, cursor %q", cursor, err, p.Cursor)
	}
	return p
}

// frameSummary names each polled frame: "channel-name seq text" for a delivery, "channel-name
// seq task N" for a task event.
func frameSummary(t *testing.T, p hive.BusPollV1) []string {
	t.Helper()
	var out []string
	for _, f := range p.Frames {
		switch f := f.(type) {
		case hive.FrameMessageDeliver:
			if err := f.Delivery.Validate(); err != nil {
				t.Fatalf("polled delivery: %v", err)
			}
			where := ""
			switch n := f.Delivery.Network.(type) {
			case hive.NetworkOrg:
				where = n.Channel[strings.LastIndexByte(n.Channel, '/')+1:]
			case hive.NetworkSwarm:
				where = n.SwarmID
			}
			out = append(out, fmt.Sprintf("%s %d %s", where, f.Delivery.Seq, f.Delivery.Body.Text))
		case hive.FrameTaskEvent:
			ch := f.Event.Channel
			out = append(out, fmt.Sprintf("%s %d task %d", ch[strings.LastIndexByte(ch, '/')+1:], f.Event.Seq, f.Event.Number))
		default:
			t.Fatalf("polled frame %T", f)
		}
	}
	return out
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// Poll starts at the acknowledged positions, returns what a socket of the instance would have
// received (visible messages and task events of the announced channels and the token's swarms,
// in seq order per stream) and continues from its cursor; polling does not move the acks.
func TestBusPollAfterAck(t *testing.T) {
	clk := newFakeClock()
	h := newClockHarness(t, clk, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral, chOps}}})
	a2 := h.dialBus(tokA2, "a2")
	a2.hello("inst_a2", []agentSpec{{"codex-85", []string{chGeneral, chOps, chOther}}})
	a3 := h.dialBus(tokA3, "a3")
	a3.hello("inst_a3", []agentSpec{{"helper", []string{chGeneral}}})
	send := func(cmid, ch, text string, mod func(*hive.AgentMessageV1)) {
		t.Helper()
		m := msg(cmid, orgNet(ch), hive.MessageTypeFinding, "codex-85", text)
		if mod != nil {
			mod(&m)
		}
		if code, body := h.postMessage(tokA2, encode(t, m)); code != 200 {
			t.Fatalf("send %s: %d %s", cmid, code, body)
		}
	}
	for i := 1; i <= 4; i++ {
		send("g"+strconv.Itoa(i), chGeneral, "g"+strconv.Itoa(i), nil)
	}
	send("private", chGeneral, "for helper", func(m *hive.AgentMessageV1) { m.To = ptr("helper") }) // seq 5, a3 only
	send("g6", chGeneral, "g6", nil)
	send("o1", chOps, "o1", nil)
	send("x1", chOther, "x1", nil) // a channel a1 does not follow
	// a1's socket acknowledges general up to 3; its live frames are not read here.
	a1.send(hive.FrameAck{Channel: chGeneral, Seq: 3})
	a1.syncSkipping()

	p := h.poll(tokA1, "")
	sameList(t, "first poll", frameSummary(t, p), []string{"general 4 g4", "general 6 g6", "ops 1 o1"})
	again := h.poll(tokA1, p.Cursor)
	sameList(t, "poll at the end", frameSummary(t, again), nil)
	if again.Cursor != p.Cursor {
		t.Fatalf("cursor moved without frames: %s → %s", p.Cursor, again.Cursor)
	}
	// A question past its deadline becomes a task proposal: its task.event is polled too.
	q := msg("q", orgNet(chGeneral), hive.MessageTypeQuestion, "codex-85", "who?")
	q.Deadline = ptr(hive.UtcTimestampOf(clk.Now().Add(time.Hour)))
	if code, body := h.postMessage(tokA2, encode(t, q)); code != 200 {
		t.Fatalf("question: %d %s", code, body)
	}
	clk.Advance(2 * time.Hour)
	if err := h.server.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	send("o2", chOps, "o2", nil)
	next := h.poll(tokA1, again.Cursor)
	sameList(t, "after new messages", frameSummary(t, next), []string{"general 7 who?", "general 8 task 1", "ops 2 o2"})
	// Without a cursor, polling starts at the acknowledged positions again.
	sameList(t, "from the acks", frameSummary(t, h.poll(tokA1, "")),
		[]string{"general 4 g4", "general 6 g6", "general 7 who?", "general 8 task 1", "ops 1 o1", "ops 2 o2"})
	// a3 sees the direct message bound to it; its swarm-less, never-acked instance starts at 0.
	sameList(t, "a3", frameSummary(t, h.poll(tokA3, "")),
		[]string{"general 1 g1", "general 2 g2", "general 3 g3", "general 4 g4", "general 5 for helper", "general 6 g6", "general 7 who?", "general 8 task 1"})
	// Swarms the token belongs to are polled after the org channels.
	sw := msg("sw1", swarmNet("sw-1"), hive.MessageTypeFinding, "gx", "swarm news")
	if code, body := h.postMessage(tokG1, encode(t, sw)); code != 200 {
		t.Fatalf("swarm: %d %s", code, body)
	}
	sameList(t, "swarm", frameSummary(t, h.poll(tokA1, next.Cursor)), []string{"sw-1 1 swarm news"})
	// A channel announced later starts at its acknowledged position (0) even with a cursor.
	a1.send(hive.FrameHello{InstanceID: "inst_a1", Agents: []hive.BusAgentV1{{AgentID: "claude-3e", Role: "coder", Channels: []string{chGeneral, chOps, chOther}}}})
	a1.syncSkipping()
	sameList(t, "newly followed", frameSummary(t, h.poll(tokA1, next.Cursor)), []string{"other 1 x1", "sw-1 1 swarm news"})
	// A hello that no longer announces ops stops it (H2), for poll too.
	a1.send(hive.FrameHello{InstanceID: "inst_a1", Agents: []hive.BusAgentV1{{AgentID: "claude-3e", Role: "coder", Channels: []string{chGeneral, chOther}}}})
	a1.syncSkipping()
	send("o3", chOps, "o3", nil)
	sameList(t, "ops dropped", frameSummary(t, h.poll(tokA1, next.Cursor)), []string{"other 1 x1", "sw-1 1 swarm news"})
	// After every socket closed, the stored announcements still say what the instance follows.
	a1.c.CloseNow()
	h.waitBusSockets(2)
	sameList(t, "after close", frameSummary(t, h.poll(tokA1, next.Cursor)), []string{"other 1 x1", "sw-1 1 swarm news"})
	// A day later nothing is announced any more: only the swarm is polled.
	clk.Advance(25 * time.Hour)
	sameList(t, "a day later", frameSummary(t, h.poll(tokA1, next.Cursor)), []string{"sw-1 1 swarm news"})
}

// syncSkipping is sync on a socket that may have live deliveries queued before the answer.
func (b *busClient) syncSkipping() {
	b.t.Helper()
	b.sendRaw(`{"t":"hologram"}`)
	for {
		f, raw := b.recv()
		switch f.(type) {
		case hive.FrameMessageDeliver, hive.FrameTaskEvent:
			continue
		case hive.FrameError:
			if !strings.Contains(string(raw), `"field":"t"`) {
				b.t.Fatalf("%s: %s", b.name, raw)
			}
			return
		}
		b.t.Fatalf("%s: unexpected %s", b.name, raw)
	}
}

// waitBusSockets waits until the relay's open-socket gauge shows n.
func (h *harness) waitBusSockets(n float64) {
	h.t.Helper()
	for range 1000 {
		mfs, err := h.server.Metrics().Registry().Gather()
		if err != nil {
			h.t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "agentwire_bus_sockets" && mf.GetMetric()[0].GetGauge().GetValue() == n {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("bus sockets never reached %v", n)
}

// More than 500 frames: a poll answers the first 500 in stream order and its cursor
// continues exactly after them, into the next stream.
func TestBusPollContinuation(t *testing.T) {
	h := newHarness(t)
	r := h.dialBus("", "reader")
	r.hello("local", []agentSpec{{"reader", []string{chGeneral, chOps}}})
	const n = 520
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				m := msg("g-"+strconv.Itoa(i), orgNet(chGeneral), hive.MessageTypeFinding, "reader", "m")
				if code, body := h.postMessage("", encode(t, m)); code != 200 {
					errs <- fmt.Sprintf("%d %s", code, body)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	for i := range 3 {
		if code, body := h.postMessage("", encode(t, msg("o-"+strconv.Itoa(i), orgNet(chOps), hive.MessageTypeFinding, "reader", "o"))); code != 200 {
			t.Fatalf("%d %s", code, body)
		}
	}
	var got []string
	cursor := ""
	var sizes []int
	for range 5 {
		p := h.poll("", cursor)
		sizes = append(sizes, len(p.Frames))
		got = append(got, frameSummary(t, p)...)
		cursor = p.Cursor
		if len(p.Frames) == 0 {
			break
		}
	}
	if fmt.Sprint(sizes) != "[500 23 0]" {
		t.Fatalf("page sizes %v", sizes)
	}
	for i := range n {
		if got[i] != fmt.Sprintf("general %d m", i+1) {
			t.Fatalf("frame %d: %q", i, got[i])
		}
	}
	sameList(t, "ops after general", got[n:], []string{"ops 1 o", "ops 2 o", "ops 3 o"})
}

// Orgs never see each other's streams through poll, whatever cursor they pass: a channel
// text is read against the caller's org.
func TestBusPollOrgIsolation(t *testing.T) {
	h := newHarness(t, withAuth(twoOrgAuth(t)))
	a1 := h.dialBus(tokA1, "a1")
	a1.hello("inst_a1", []agentSpec{{"claude-3e", []string{chGeneral}}})
	g1 := h.dialBus(tokG1, "g1")
	g1.hello("inst_g1", []agentSpec{{"gx", []string{chGeneral}}}) // the same channel text in globex
	for i := range 3 {
		if code, body := h.postMessage(tokA1, encode(t, msg("a"+strconv.Itoa(i), orgNet(chGeneral), hive.MessageTypeFinding, "claude-3e", "acme secret"))); code != 200 {
			t.Fatalf("%d %s", code, body)
		}
	}
	if code, body := h.postMessage(tokG1, encode(t, msg("g", orgNet(chGeneral), hive.MessageTypeFinding, "gx", "globex"))); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	acme := h.poll(tokA1, "")
	sameList(t, "acme", frameSummary(t, acme), []string{"general 1 acme secret", "general 2 acme secret", "general 3 acme secret"})
	sameList(t, "globex", frameSummary(t, h.poll(tokG1, "")), []string{"general 1 globex"})
	// acme's cursor (general at 3) used by globex: globex's own stream from 3 on, i.e. nothing.
	sameList(t, "globex with acme's cursor", frameSummary(t, h.poll(tokG1, acme.Cursor)), nil)
	// An instance that announced nothing and is in no swarm polls nothing.
	p := h.poll(tokA2, "")
	sameList(t, "a2", frameSummary(t, p), nil)
	// A token without bus.relay, and no token.
	if code, _, body := h.do("GET", "/v1/bus/poll", tokNo, nil, nil); code != 403 || !strings.Contains(string(body), `"code":"forbidden_right"`) {
		t.Fatalf("no right: %d %s", code, body)
	}
	if code, _, body := h.do("GET", "/v1/bus/poll", "", nil, nil); code != 401 || !strings.Contains(string(body), `"code":"unauthorized"`) {
		t.Fatalf("no token: %d %s", code, body)
	}
}

// A cursor the relay did not issue is refused with the hive error body, field `cursor`.
func TestBusPollBadCursor(t *testing.T) {
	h := newHarness(t)
	r := h.dialBus("", "reader")
	r.hello("local", []agentSpec{{"reader", []string{chGeneral}}})
	good := h.poll("", "").Cursor
	b64 := func(b ...byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	entry := func(kind byte, name string, seq byte) []byte {
		return append(append([]byte{kind, byte(len(name))}, name...), seq)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	const refusal = "{\"error\":{\"code\":\"invalid_request\",\"message\":\"cursor is not a cursor this relay issued\",\"field\":\"cursor\"}}\n"
	for _, c := range []struct {
		name, query, want string
	}{
		{"not base64", "cursor=%21%21%21", refusal},
		{"padded base64", "cursor=" + url.QueryEscape(good+"="), refusal},
		{"standard alphabet", "cursor=" + url.QueryEscape(base64.RawStdEncoding.EncodeToString(cat([]byte{1, 1}, entry(2, "a?>", 0)))), refusal},
		{"empty", "cursor=", refusal},
		{"other version", "cursor=" + b64(2, 0), refusal},
		{"count beyond the bytes", "cursor=" + b64(1, 5), refusal},
		{"truncated entry", "cursor=" + b64(cat([]byte{1, 1}, entry(1, chGeneral, 3)[:10])...), refusal},
		{"unknown kind", "cursor=" + b64(cat([]byte{1, 1}, entry(3, "x", 0))...), refusal},
		{"invalid channel", "cursor=" + b64(cat([]byte{1, 1}, entry(1, "org:acme/general", 0))...), refusal},
		{"blank swarm id", "cursor=" + b64(cat([]byte{1, 1}, entry(2, " ", 0))...), refusal},
		{"unsorted", "cursor=" + b64(cat([]byte{1, 2}, entry(1, chOps, 0), entry(1, chGeneral, 0))...), refusal},
		{"repeated", "cursor=" + b64(cat([]byte{1, 2}, entry(1, chGeneral, 0), entry(1, chGeneral, 1))...), refusal},
		{"trailing bytes", "cursor=" + b64(cat([]byte{1, 1}, entry(1, chGeneral, 0), []byte{0})...), refusal},
		{"non-canonical varint", "cursor=" + b64(cat([]byte{1, 1}, entry(1, chGeneral, 0x80), []byte{0})...), refusal},
		{"seq beyond int64", "cursor=" + b64(cat([]byte{1, 1, 2, 1, 'a'}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})...), refusal},
		{"twice", "cursor=" + good + "&cursor=" + good,
			"{\"error\":{\"code\":\"invalid_request\",\"message\":\"cursor must be given once\",\"field\":\"cursor\"}}\n"},
		{"too long", "cursor=" + strings.Repeat("A", 256<<10+1),
			"{\"error\":{\"code\":\"invalid_request\",\"message\":\"cursor exceeds the 262144 byte limit\",\"field\":\"cursor\"}}\n"},
		{"unknown parameter", "limit=5",
			"{\"error\":{\"code\":\"invalid_request\",\"message\":\"unknown query parameter limit\",\"field\":\"limit\"}}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, body := h.do("GET", "/v1/bus/poll?"+c.query, "", nil, nil)
			if code != 400 || string(body) != c.want {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
	// The well-formed versions of the same cursors are accepted.
	for _, cur := range []string{good, b64(1, 0), b64(cat([]byte{1, 2}, entry(1, chGeneral, 0), entry(2, "sw-1", 7))...)} {
		h.poll("", cur)
	}
}
