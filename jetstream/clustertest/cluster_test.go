package clustertest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/relay"
)

// Channels of the bus phase (local mode: org "local", instance "local").
var channels = []string{
	"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/c1",
	"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/c2",
}

var errCut = errors.New("cut")

// TestCluster runs three relays over a 3-node JetStream cluster (relay.md §5) and checks the
// guarantees of one process across them:
//   - runs: six runs written batch by batch through all three relays in turn, while SSE readers
//     on other relays follow them, cut half-way and resume on a third relay by Last-Event-ID;
//     one NATS node is shut down mid-run; every event arrives exactly once, in order, with the
//     same ids, and every acknowledged event is stored;
//   - bus: two channels written through POST /v1/messages on two relays and a WebSocket on the
//     third; a WebSocket reader on another relay, a poller and the history pages see every
//     message once, in seq order, gap-free;
//   - a relay crashed during a large batch (its NATS connection cut) leaves the whole batch or
//     nothing;
//   - notifications published through three relays reach SSE readers on two of them exactly
//     once, in store order, with the same ids; a repeat through another relay is a duplicate;
//   - afterwards every run's checkpoint equals re-reducing its events.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster")
	}
	c := startCluster(t)
	relays := []*node{c.startRelay(0, jetstream.Options{}), c.startRelay(1, jetstream.Options{}), c.startRelay(2, jetstream.Options{})}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	start := time.Now()
	runIDs := testRuns(t, ctx, c, relays)
	t.Logf("runs phase done at %v", time.Since(start))
	testBus(t, ctx, relays[:3])
	t.Logf("bus phase done at %v", time.Since(start))
	runIDs = append(runIDs, testCrashMidBatch(t, ctx, c, relays[0])...)
	t.Logf("crash phase done at %v", time.Since(start))
	testNotifications(t, ctx, []*node{relays[0], relays[1], c.startRelay(2, jetstream.Options{})})
	t.Logf("notifications phase done at %v", time.Since(start))
	if t.Failed() {
		return
	}
	// Every run's checkpoint equals re-reducing its events, read through a store instance
	// that wrote none of them.
	fresh := c.startRelay(0, jetstream.Options{})
	for _, id := range runIDs {
		checkSnapshot(t, fresh.st, "local", id)
	}
}

// testRuns is the runs phase; it shuts node 2 down mid-run and returns the run ids.
func testRuns(t *testing.T, ctx context.Context, c *cluster, relays []*node) []string {
	const nRuns, perRun, batch = 6, 240, 20
	var ids []string
	lines := map[string][][]byte{}
	for r := range nRuns {
		id := fmt.Sprintf("run-%d", r)
		ids = append(ids, id)
		lines[id] = synthLines(t, perRun, int64(r+1), id)
		// The first batch creates the run, so that readers can open it.
		if _, err := relays[r%3].client.Append(ctx, id, relay.MediaNDJSON, ndjson(lines[id][:batch])); err != nil {
			t.Fatal(err)
		}
	}
	var acked atomic.Int64
	total := int64(nRuns * (perRun/batch - 1))
	var wg sync.WaitGroup
	got := make(map[string][]relay.SSEFrame, nRuns)
	var gotMu sync.Mutex
	for r, id := range ids {
		// Writer: batch j through relay (r+j)%3, retried until acknowledged.
		wg.Go(func() {
			for j := batch; j < perRun; j += batch {
				n := relays[(r+j/batch)%3]
				retry(t, fmt.Sprintf("%s batch at %d", id, j), 60*time.Second, func() error {
					_, err := n.client.Append(ctx, id, relay.MediaNDJSON, ndjson(lines[id][j:j+batch]))
					return err
				})
				acked.Add(1)
			}
		})
		// Reader: SSE on relay r+1 until half the run, then resumes on relay r+2 by
		// Last-Event-ID; a stream cut by the node loss resumes on the next relay too.
		wg.Go(func() {
			var frames []relay.SSEFrame
			last := ""
			for k := 1; len(frames) < perRun; k++ {
				if ctx.Err() != nil {
					t.Errorf("%s: read %d of %d events", id, len(frames), perRun)
					return
				}
				n := relays[(r+k)%3]
				err := n.client.Stream(ctx, id, relay.StreamOptions{LastEventID: last}, func(f relay.SSEFrame) error {
					if f.Comment != "" {
						return nil
					}
					frames = append(frames, relay.SSEFrame{ID: f.ID, Event: f.Event, Data: bytes.Clone(f.Data)})
					last = f.ID
					if k == 1 && len(frames) == perRun/2 {
						return errCut
					}
					return nil
				})
				if err != nil && !errors.Is(err, errCut) {
					time.Sleep(100 * time.Millisecond)
				}
			}
			gotMu.Lock()
			got[id] = frames
			gotMu.Unlock()
		})
	}
	// Node 2 goes down once a third of the batches are acknowledged.
	for acked.Load() < total/3 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	c.kill(1)
	t.Logf("node n2 shut down after %d of %d batches", acked.Load(), total)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, id := range ids {
		frames := got[id]
		if len(frames) != perRun {
			t.Fatalf("%s: %d frames, want %d", id, len(frames), perRun)
		}
		for i, f := range frames {
			ev, err := events.ParseEvent(lines[id][i])
			if err != nil {
				t.Fatal(err)
			}
			if f.ID != strconv.FormatInt(ev.LogicalSequence(), 10) || f.Event != string(ev.Type()) || !bytes.Equal(f.Data, lines[id][i]) {
				t.Fatalf("%s frame %d: id %s event %s, want id %d event %s (exactly once, in order)", id, i, f.ID, f.Event, ev.LogicalSequence(), ev.Type())
			}
		}
		// Nothing acknowledged is lost: each relay serves every event.
		for k, n := range relays {
			stored, err := n.client.ReadAllEvents(ctx, id)
			if err != nil {
				t.Fatalf("relay %d: %s: %v", k, id, err)
			}
			if len(stored) != perRun {
				t.Fatalf("relay %d: %s has %d events, want %d", k, id, len(stored), perRun)
			}
		}
	}
	return ids
}

// testBus is the bus phase: M messages a channel from each of three writers.
func testBus(t *testing.T, ctx context.Context, relays []*node) {
	const perWriter = 15
	want := len(channels) * 3 * perWriter
	reader := presenceSocket(t, ctx, relays[1], "reader", channels...)
	writerWS := presenceSocket(t, ctx, relays[2], "writer", channels...)
	var wg sync.WaitGroup
	for w, n := range []*node{relays[0], relays[2]} {
		wg.Go(func() {
			for i := range perWriter {
				for c, ch := range channels {
					m := hive.AgentMessageV1{ClientMsgID: fmt.Sprintf("http%d-%d-%d", w, c, i), Network: hive.NetworkOrg{Channel: ch},
						Type: hive.MessageTypeFinding, From: "poster", Body: &hive.MessageBodyV1{Text: fmt.Sprintf("http %d %d", w, i)}}
					body, _ := m.MarshalJSON()
					retry(t, "send", 30*time.Second, func() error {
						_, err := n.client.SendMessage(ctx, body)
						if err != nil {
							t.Logf("send via %s: %v", n.http.URL, err)
						}
						return err
					})
				}
			}
		})
	}
	wg.Go(func() {
		for i := range perWriter {
			for c, ch := range channels {
				m := hive.AgentMessageV1{ClientMsgID: fmt.Sprintf("ws-%d-%d", c, i), Network: hive.NetworkOrg{Channel: ch},
					Type: hive.MessageTypeFinding, From: "writer", Body: &hive.MessageBodyV1{Text: fmt.Sprintf("ws %d", i)}}
				if err := writerWS.Send(ctx, hive.FrameMessage{Message: m}); err != nil {
					t.Error(err)
					return
				}
				for stored := false; !stored; {
					f, raw, err := writerWS.Recv(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					switch f.(type) {
					case hive.FrameMessageStored:
						stored = true
					case hive.FrameError:
						t.Errorf("ws send: %s", raw)
						return
					}
				}
			}
		}
	})
	// The reader socket on another relay gets every message once, in seq order.
	seen := map[string][]uint64{}
	for n := 0; n < want; {
		f, raw, err := reader.Recv(ctx)
		if err != nil {
			t.Fatalf("reader after %d deliveries: %v", n, err)
		}
		if d, ok := f.(hive.FrameMessageDeliver); ok {
			ch := d.Delivery.Network.(hive.NetworkOrg).Channel
			seen[ch] = append(seen[ch], d.Delivery.Seq)
			n++
		} else {
			t.Logf("reader: %s", raw)
		}
	}
	wg.Wait()
	for _, ch := range channels {
		checkSeqs(t, "socket on relay 1, "+ch, seen[ch], want/len(channels))
	}
	// A poller on relay 0 drains both channels; history pages on relay 2 list them.
	polled := map[string][]uint64{}
	cursor := ""
	for total := 0; total < want; {
		q := url.Values{}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		p := poll(t, ctx, relays[0], cursor)
		for _, f := range p.Frames {
			if d, ok := f.(hive.FrameMessageDeliver); ok {
				ch := d.Delivery.Network.(hive.NetworkOrg).Channel
				polled[ch] = append(polled[ch], d.Delivery.Seq)
				total++
			}
		}
		if len(p.Frames) == 0 {
			t.Fatalf("poll stopped after %d of %d messages", total, want)
		}
		cursor = p.Cursor
	}
	for _, ch := range channels {
		checkSeqs(t, "poll on relay 0, "+ch, polled[ch], want/len(channels))
		var hist []uint64
		after := ""
		for {
			q := url.Values{"network": {"org"}, "channel": {ch}, "limit": {"7"}}
			if after != "" {
				q.Set("after_gid", after)
			}
			l, err := relays[2].client.ListMessages(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range l.Messages {
				hist = append(hist, d.Seq)
			}
			if l.Next == nil {
				break
			}
			after = *l.Next
		}
		checkSeqs(t, "history on relay 2, "+ch, hist, want/len(channels))
	}
}

func poll(t *testing.T, ctx context.Context, n *node, cursor string) hive.BusPollV1 {
	t.Helper()
	q := url.Values{}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.http.URL+"/v1/bus/poll?"+q.Encode(), nil)
	resp, err := n.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("poll: %d %s", resp.StatusCode, b.Bytes())
	}
	var p hive.BusPollV1
	if err := p.UnmarshalJSON(bytes.TrimSpace(b.Bytes())); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkSeqs checks that seqs is 1..n in order.
func checkSeqs(t *testing.T, what string, seqs []uint64, n int) {
	t.Helper()
	if len(seqs) != n {
		t.Fatalf("%s: %d messages %v, want %d", what, len(seqs), seqs, n)
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("%s: seqs %v, want 1..%d exactly once in order", what, seqs, n)
		}
	}
}

// testCrashMidBatch crashes relays (their NATS connection cut) while they store a large batch,
// at fractions of the time such a batch takes, and checks through another relay that each
// batch is stored whole or not at all. It returns the runs that exist.
func testCrashMidBatch(t *testing.T, ctx context.Context, c *cluster, survivor *node) []string {
	const n = 3000
	ids := []string{"big-ref"}
	start := time.Now()
	if _, err := survivor.client.Append(ctx, "big-ref", relay.MediaNDJSON, ndjson(synthLines(t, n, 99, "big-ref"))); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	outcomes := map[string]int{}
	for k, f := range []float64{0.25, 0.5, 0.7, 0.8, 0.9, 1.0, 1.2} {
		delay := time.Duration(f * float64(took))
		victim := c.startRelay(2, jetstream.Options{})
		id := fmt.Sprintf("big-%d", k)
		lines := synthLines(t, n, int64(100+k), id)
		done := make(chan error, 1)
		go func() {
			_, err := victim.client.Append(ctx, id, relay.MediaNDJSON, ndjson(lines))
			done <- err
		}()
		time.Sleep(delay)
		victim.crash()
		acked := <-done == nil
		var stored [][]byte
		retry(t, "read "+id, 30*time.Second, func() error {
			var err error
			stored, err = survivor.client.ReadAllEvents(ctx, id)
			var e *relay.Error
			if errors.As(err, &e) && e.Status == http.StatusNotFound {
				stored, err = nil, nil
			}
			return err
		})
		t.Logf("%s: crash after %v of %v: acknowledged %v, %d events stored", id, delay, took, acked, len(stored))
		switch {
		case len(stored) == n:
			outcomes["stored"]++
			ids = append(ids, id)
			for i := range stored {
				if !bytes.Equal(stored[i], lines[i]) {
					t.Fatalf("%s: event %d differs", id, i)
				}
			}
		case len(stored) == 0 && !acked:
			outcomes["absent"]++
		default:
			t.Fatalf("%s: %d of %d events stored (acknowledged %v): a partial batch", id, len(stored), n, acked)
		}
	}
	t.Logf("batches cut by a relay crash: %v", outcomes)
	return ids
}

// testNotifications is the notification phase: envelopes published through three relays,
// read by SSE on two.
func testNotifications(t *testing.T, ctx context.Context, relays []*node) {
	const perRelay = 20
	var mu sync.Mutex
	var acked []int64
	var wg sync.WaitGroup
	for k, n := range relays {
		wg.Go(func() {
			for i := range perRelay {
				e := envelope.Envelope{EventID: envelope.NewEventID(), Source: envelope.SourceGithub, SourceEventID: fmt.Sprintf("r%d-%d", k, i),
					Topic: "notifications.agent.s1", DedupeKey: fmt.Sprintf("github.r%d-%d", k, i), IssuedAt: 1760000000000,
					PayloadSummary: "summary", TraceID: "trace"}
				var res relay.PublishResult
				retry(t, "publish", 30*time.Second, func() error {
					var err error
					res, err = n.client.PublishEnvelope(ctx, e.AppendJSON(nil))
					return err
				})
				if res.Duplicate {
					t.Errorf("first publish of %s answered duplicate", e.DedupeKey)
				}
				// A repeat through another relay is a duplicate of the same seq.
				other := relays[(k+1)%len(relays)]
				if i%5 == 0 {
					again, err := other.client.PublishEnvelope(ctx, e.AppendJSON(nil))
					if err != nil || !again.Duplicate || again.Seq != res.Seq {
						t.Errorf("repeat of %s through another relay: %+v %v, want duplicate of %d", e.DedupeKey, again, err, res.Seq)
					}
				}
				mu.Lock()
				acked = append(acked, res.Seq)
				mu.Unlock()
			}
		})
	}
	read := func(n *node) []int64 {
		var ids []int64
		want := len(relays) * perRelay
		err := n.client.StreamNotifications(ctx, relay.NotifyStreamOptions{Subjects: []string{"notifications.agent.>"}, LastEventID: "0"}, func(f relay.SSEFrame) error {
			if f.Comment != "" {
				return nil
			}
			id, err := strconv.ParseInt(f.ID, 10, 64)
			if err != nil {
				return err
			}
			ids = append(ids, id)
			if len(ids) == want {
				return errCut
			}
			return nil
		})
		if !errors.Is(err, errCut) {
			t.Errorf("notification stream on %s: %v after %d envelopes", n.http.URL, err, len(ids))
		}
		return ids
	}
	var got [2][]int64
	for i := range got {
		wg.Go(func() { got[i] = read(relays[i]) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	slices.Sort(acked)
	for i, ids := range got {
		if !slices.Equal(ids, acked) {
			t.Fatalf("reader on relay %d: ids %v, want the acknowledged %v (exactly once, in store order)", i, ids, acked)
		}
	}
}
