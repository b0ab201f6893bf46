package clustertest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// cluster is three JetStream servers in process, routed to each other on loopback, each
// storing in a directory of its own.
type cluster struct {
	t       testing.TB
	servers [3]*server.Server
	urls    [3]string
}

func startCluster(t testing.TB) *cluster {
	t.Helper()
	c := &cluster{t: t}
	// A JetStream cluster needs its routes configured up front: free loopback ports are taken
	// for them first.
	var ports [3]int
	var routes []string
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	for i := range c.servers {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       server.RANDOM_PORT,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoLog:      true,
			NoSigs:     true,
			MaxPayload: 1 << 20,
			Cluster:    server.ClusterOpts{Name: "agentwire", Host: "127.0.0.1", Port: ports[i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		}
		ns, err := server.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		ns.Start()
		c.servers[i] = ns
	}
	for i, ns := range c.servers {
		if !ns.ReadyForConnections(30 * time.Second) {
			t.Fatalf("n%d did not start", i+1)
		}
		c.urls[i] = ns.ClientURL()
	}
	t.Cleanup(func() {
		for _, ns := range c.servers {
			if ns != nil {
				ns.Shutdown()
				ns.WaitForShutdown()
			}
		}
	})
	// The cluster is ready once it has a meta leader that knows all three peers.
	deadline := time.Now().Add(60 * time.Second)
	for {
		ready := false
		for _, ns := range c.servers {
			if ns.JetStreamIsLeader() && len(ns.JetStreamClusterPeers()) == 3 {
				ready = true
			}
		}
		if ready {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatal("the JetStream cluster elected no meta leader within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill shuts node i down.
func (c *cluster) kill(i int) {
	c.servers[i].Shutdown()
	c.servers[i].WaitForShutdown()
	c.servers[i] = nil
}

// connect opens a connection to node i that fails over to the others.
func (c *cluster) connect(i int) *nats.Conn {
	c.t.Helper()
	urls := []string{c.urls[i]}
	for j, u := range c.urls {
		if j != i {
			urls = append(urls, u)
		}
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nats.DontRandomize(), nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond), nats.Name(fmt.Sprintf("relay on n%d", i+1)))
	if err != nil {
		c.t.Fatal(err)
	}
	return nc
}

// node is one relay of the cluster: its own store on its own connection, and a real HTTP
// server on loopback.
type node struct {
	nc     *nats.Conn
	st     *jetstream.Store
	srv    *relay.Server
	http   *httptest.Server
	client *relay.Client
	once   sync.Once
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
}

// startRelay opens a store with 3 replicas on a connection to node i and serves a relay on it.
func (c *cluster) startRelay(i int, o jetstream.Options) *node {
	c.t.Helper()
	nc := c.connect(i)
	o.Replicas, o.OwnEnvoyStream = 3, true
	var st *jetstream.Store
	var err error
	for attempt := 0; ; attempt++ {
		// The streams are created by the first relay; a proposal can time out while the
		// cluster settles.
		if st, err = jetstream.Open(nc, o); err == nil || attempt == 20 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		nc.Close()
		c.t.Fatal(err)
	}
	srv, err := relay.New(relay.Config{Store: st, Logger: quietLogger(), SweepInterval: -1, StoreRecheck: jetstream.RelayStoreRecheck})
	if err != nil {
		c.t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	n := &node{nc: nc, st: st, srv: srv, http: ts, client: &relay.Client{BaseURL: ts.URL, HTTP: ts.Client()}}
	c.t.Cleanup(n.stop)
	return n
}

// stop shuts the relay down cleanly.
func (n *node) stop() {
	n.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = n.srv.Shutdown(ctx)
		n.http.CloseClientConnections()
		n.http.Close()
		_ = n.st.Close()
		n.nc.Close()
	})
}

// crash stops the relay abruptly: its NATS connection drops first (a batch being published is
// cut), then its HTTP connections and its store.
func (n *node) crash() {
	n.once.Do(func() {
		n.nc.Close()
		n.http.CloseClientConnections()
		n.http.Close()
		_ = n.st.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = n.srv.Shutdown(ctx)
	})
}

// synthLines returns a deterministic valid run of n events.
func synthLines(t testing.TB, n int, seed int64, runID string) [][]byte {
	t.Helper()
	data, err := synth.Bytes(n, seed, runID)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'})
}

func ndjson(lines [][]byte) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// checkSnapshot checks the run's checkpoint and counters (storetest.CheckCheckpoint) and
// returns its stored event lines.
func checkSnapshot(t testing.TB, st store.RunStore, org, runID string) [][]byte {
	t.Helper()
	_, lines, _ := storetest.CheckCheckpoint(t, st, org, runID)
	return lines
}

// retry calls f until it succeeds or the deadline passes: a write during a leader election
// may fail, and a client retries it (the relay answers a repeat with duplicates).
func retry(t testing.TB, what string, d time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %v", what, err)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
