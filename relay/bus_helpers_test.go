package relay_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/relay"
)

const (
	chGeneral = "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"
	chOps     = "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/ops"
	chOther   = "org:org_acme/vault:00000000000000000000000000000001/other"
)

// busClient is a real WebSocket client of /v1/bus in a test.
type busClient struct {
	t    testing.TB
	name string
	c    *relay.BusConn
}

func (h *harness) dialBus(token, name string) *busClient {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := &relay.Client{BaseURL: h.http.URL, Token: token, HTTP: h.http.Client()}
	conn, err := c.DialBus(ctx)
	if err != nil {
		h.t.Fatalf("dial %s: %v", name, err)
	}
	b := &busClient{t: h.t, name: name, c: conn}
	h.t.Cleanup(func() { _ = conn.CloseNow() })
	return b
}

func (b *busClient) send(f hive.BusFrameV1) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.c.Send(ctx, f); err != nil {
		b.t.Fatalf("%s send: %v", b.name, err)
	}
}

func (b *busClient) sendRaw(s string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.c.SendRaw(ctx, []byte(s)); err != nil {
		b.t.Fatalf("%s send: %v", b.name, err)
	}
}

// recv returns the next frame and its raw text.
func (b *busClient) recv() (hive.BusFrameV1, []byte) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, raw, err := b.c.Recv(ctx)
	if err != nil {
		b.t.Fatalf("%s recv: %v", b.name, err)
	}
	return f, raw
}

// closed waits for the socket to be closed by the relay and returns the close status.
func (b *busClient) closed() websocket.StatusCode {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		f, raw, err := b.c.Recv(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				b.t.Fatalf("%s: not closed", b.name)
			}
			return websocket.CloseStatus(err)
		}
		b.t.Logf("%s: frame before close: %T %s", b.name, f, raw)
	}
}

func (b *busClient) expectError(field, reason string) hive.FrameError {
	b.t.Helper()
	f, raw := b.recv()
	e, ok := f.(hive.FrameError)
	if !ok {
		b.t.Fatalf("%s: want error, got %s", b.name, raw)
	}
	if deref(e.Error.Field) != field || deref(e.Error.Reason) != reason {
		b.t.Fatalf("%s: want error field %q reason %q, got %s", b.name, field, reason, raw)
	}
	return e
}

func (b *busClient) expectStored() hive.MessageStoredV1 {
	b.t.Helper()
	f, raw := b.recv()
	st, ok := f.(hive.FrameMessageStored)
	if !ok {
		b.t.Fatalf("%s: want message.stored, got %s", b.name, raw)
	}
	return st.Stored
}

func (b *busClient) expectDeliver() hive.MessageDeliveryV1 {
	b.t.Helper()
	f, raw := b.recv()
	d, ok := f.(hive.FrameMessageDeliver)
	if !ok {
		b.t.Fatalf("%s: want message.deliver, got %s", b.name, raw)
	}
	if err := d.Delivery.Validate(); err != nil {
		b.t.Fatalf("%s: invalid delivery %s: %v", b.name, raw, err)
	}
	return d.Delivery
}

func (b *busClient) expectStatus() hive.MessageStatusV1 {
	b.t.Helper()
	f, raw := b.recv()
	st, ok := f.(hive.FrameMessageStatus)
	if !ok {
		b.t.Fatalf("%s: want message.status, got %s", b.name, raw)
	}
	return st.Status
}

// sync makes a round trip on the socket: every frame sent before it has been handled.
func (b *busClient) sync() {
	b.t.Helper()
	b.sendRaw(`{"t":"hologram"}`)
	b.expectError("t", "")
}

type agentSpec struct {
	id       string
	channels []string
}

// hello announces agents and waits until the relay applied it.
func (b *busClient) hello(instance string, agents []agentSpec, cursors ...hive.BusCursor) {
	b.t.Helper()
	f := hive.FrameHello{InstanceID: instance, Cursors: cursors}
	for _, a := range agents {
		f.Agents = append(f.Agents, hive.BusAgentV1{AgentID: a.id, Role: "coder", Channels: a.channels})
	}
	b.send(f)
	b.sync()
}

func orgNet(ch string) hive.NetworkV1 { return hive.NetworkOrg{Channel: ch} }

func swarmNet(id string) hive.NetworkV1 { return hive.NetworkSwarm{SwarmID: id} }

// msg builds a message with a clear body.
func msg(cmid string, n hive.NetworkV1, typ hive.MessageType, from, text string) hive.AgentMessageV1 {
	return hive.AgentMessageV1{ClientMsgID: cmid, Network: n, Type: typ, From: from, Body: &hive.MessageBodyV1{Text: text}}
}

func ptr[T any](v T) *T { return &v }

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (b *busClient) sendMsg(m hive.AgentMessageV1) {
	b.t.Helper()
	b.send(hive.FrameMessage{Message: m})
}

func encode(t testing.TB, v interface{ MarshalJSON() ([]byte, error) }) string {
	t.Helper()
	data, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// postMessage posts a message body over HTTP.
func (h *harness) postMessage(token, body string) (int, []byte) {
	h.t.Helper()
	code, _, resp := h.do("POST", "/v1/messages", token, map[string]string{"Content-Type": "application/json"}, []byte(body))
	return code, resp
}

func (h *harness) history(token, query string) hive.MessageListV1 {
	h.t.Helper()
	code, _, body := h.do("GET", "/v1/messages?"+query, token, nil, nil)
	if code != 200 {
		h.t.Fatalf("history %s: %d %s", query, code, body)
	}
	var l hive.MessageListV1
	if err := l.UnmarshalJSON([]byte(strings.TrimSpace(string(body)))); err != nil {
		h.t.Fatal(err)
	}
	if err := l.Validate(); err != nil {
		h.t.Fatalf("history %s: %v", query, err)
	}
	return l
}

func texts(l hive.MessageListV1) []string {
	var out []string
	for _, d := range l.Messages {
		if d.Body != nil {
			out = append(out, d.Body.Text)
		}
	}
	return out
}
