package clustertest_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/relay"
)

// presenceSocket opens a bus socket on n whose hello announces agent on channels, and waits
// until the relay applied it.
func presenceSocket(t *testing.T, ctx context.Context, n *node, agent string, channels ...string) *relay.BusConn {
	t.Helper()
	conn, err := n.client.DialBus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	if err := conn.Send(ctx, hive.FrameHello{InstanceID: "local", Agents: []hive.BusAgentV1{{AgentID: agent, Role: "coder", Channels: channels}}}); err != nil {
		t.Fatal(err)
	}
	if err := conn.SendRaw(ctx, []byte(`{"t":"hologram"}`)); err != nil {
		t.Fatal(err)
	}
	for {
		f, _, err := conn.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.(hive.FrameError); ok {
			return conn
		}
	}
}

// nextPresence returns the next presence_update on conn, skipping other frames.
func nextPresence(t *testing.T, ctx context.Context, conn *relay.BusConn, who string) hive.FramePresenceUpdate {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		f, _, err := conn.Recv(ctx)
		if err != nil {
			t.Fatalf("%s: no presence_update: %v", who, err)
		}
		if p, ok := f.(hive.FramePresenceUpdate); ok {
			return p
		}
	}
}

// TestPresenceAcrossRelays: presence is live only and crosses relays over core NATS (relay.md
// §5.1.3). An agent's presence on relay A reaches a socket of the vault on relay B; a socket
// that starts following the vault on relay C gets A's last update in its snapshot, asked of
// the other relays; when A's socket closes, B sees the agent offline. A socket of another
// vault hears nothing.
func TestPresenceAcrossRelays(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster")
	}
	c := startCluster(t)
	a, b, cr := c.startRelay(0, jetstream.Options{}), c.startRelay(1, jetstream.Options{}), c.startRelay(2, jetstream.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const other = "org:org_acme/vault:00000000000000000000000000000001/other"
	onB := presenceSocket(t, ctx, b, "watcher", channels[1])
	elsewhere := presenceSocket(t, ctx, b, "stranger", other)
	onA := presenceSocket(t, ctx, a, "claude-3e", channels[0])
	if err := onA.Send(ctx, hive.FramePresence{AgentID: "claude-3e", State: hive.PresenceStateOnline}); err != nil {
		t.Fatal(err)
	}
	if p := nextPresence(t, ctx, onB, "relay B"); p.AgentID != "claude-3e" || p.State != hive.PresenceStateOnline || p.VaultID != "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42" {
		t.Fatalf("relay B got %+v", p)
	}
	onC := presenceSocket(t, ctx, cr, "late", channels[0])
	if p := nextPresence(t, ctx, onC, "relay C's snapshot"); p.AgentID != "claude-3e" || p.State != hive.PresenceStateOnline {
		t.Fatalf("relay C's snapshot has %+v", p)
	}
	_ = onA.Close()
	if p := nextPresence(t, ctx, onB, "relay B"); p.AgentID != "claude-3e" || p.State != hive.PresenceStateOffline {
		t.Fatalf("relay B got %+v after the socket closed", p)
	}
	// The socket of another vault heard nothing of it.
	rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer rcancel()
	for {
		f, raw, err := elsewhere.Recv(rctx)
		if err != nil {
			break
		}
		if _, ok := f.(hive.FramePresenceUpdate); ok {
			t.Fatalf("a socket of another vault got %s", raw)
		}
	}
}
