package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/relay"
)

const (
	laneClients = 3 // concurrent senders per lane
	laneKills   = 4
	crashChan   = "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/crash"
)

// laneTracker is what the bus and notification clients know: acknowledged items with the
// answer they got, and the item in flight whose answer was lost.
type laneTracker struct {
	mu       sync.Mutex
	msgs     map[string]hive.MessageStoredV1 // client_msg_id → acknowledged record
	envs     map[string]int64                // dedupe key → acknowledged seq
	dupes    int                             // resends answered duplicate (notifications)
	inDoubtM int
	inDoubtE int
}

// TestCrashRecoveryLanes is relay.md §4 for the bus and notification lanes: clients send hive
// messages (POST /v1/messages, one shared channel) and envelopes (POST /v1/notifications, minted
// dedupe keys) while the relay is killed with SIGKILL; a send whose answer was lost is resent
// with the same client_msg_id or envelope. After every restart every acknowledged message is
// present exactly once with the gid and seq it was acknowledged with, the channel's seq runs
// 1…N without a gap, every acknowledged envelope is stored exactly once with its seq, and a
// resend of a stored item is answered with the original (S9; the 72 h duplicate window).
func TestCrashRecoveryLanes(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills a child relay; skipped with -short")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	dataDir := filepath.Join(dir, "data")
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTWIRE_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (AGENTWIRE_CRASH_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 7))

	var liveURL atomic.Pointer[string]
	var pause sync.RWMutex
	pause.Lock() // until the first child runs
	tr := &laneTracker{msgs: map[string]hive.MessageStoredV1{}, envs: map[string]int64{}}
	var requests, failures atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	httpClient := &http.Client{Timeout: 20 * time.Second}

	// attempt runs one send against the live child until it is answered (resending after a
	// kill); it returns false when the test stops.
	attempt := func(send func(c *relay.Client) error, inDoubt *int) bool {
		lost := false
		for {
			select {
			case <-stop:
				return false
			default:
			}
			pause.RLock()
			c := &relay.Client{BaseURL: *liveURL.Load(), HTTP: httpClient}
			requests.Add(1)
			err := send(c)
			pause.RUnlock()
			if err == nil {
				if lost {
					tr.mu.Lock()
					*inDoubt++
					tr.mu.Unlock()
				}
				return true
			}
			var e *relay.Error
			if errors.As(err, &e) && e.Status != http.StatusServiceUnavailable {
				t.Errorf("refused: %v", err)
				return false
			}
			lost = true
			failures.Add(1)
			time.Sleep(5 * time.Millisecond)
		}
	}
	for c := range laneClients {
		wg.Go(func() { // bus sender
			for k := 0; ; k++ {
				cmid := fmt.Sprintf("crash-b%d-%d", c, k)
				m := hive.AgentMessageV1{ClientMsgID: cmid, Network: hive.NetworkOrg{Channel: crashChan}, Type: hive.MessageTypeFinding,
					From: "agent-" + strconv.Itoa(c), Body: &hive.MessageBodyV1{Text: cmid}}
				body, _ := m.MarshalJSON()
				ok := attempt(func(cl *relay.Client) error {
					st, err := cl.SendMessage(context.Background(), body)
					if err != nil {
						return err
					}
					tr.mu.Lock()
					defer tr.mu.Unlock()
					if prev, seen := tr.msgs[cmid]; seen {
						if prev.GID != st.GID || prev.Seq != st.Seq {
							t.Errorf("resend of %s answered %s/%d, first %s/%d", cmid, st.GID, st.Seq, prev.GID, prev.Seq)
						}
					}
					tr.msgs[cmid] = st
					return nil
				}, &tr.inDoubtM)
				if !ok {
					return
				}
			}
		})
		wg.Go(func() { // envelope publisher
			for k := 0; ; k++ {
				key := "publish." + fmt.Sprintf("%08x%024x", c, k)
				e := envelope.Envelope{EventID: envelope.NewEventID(), Source: envelope.SourceAgent, SourceEventID: key,
					Topic: "notifications.agent.crash_" + strconv.Itoa(c), DedupeKey: key, IssuedAt: 1760000000000,
					PayloadSummary: "crash " + key, TraceID: "t"}
				body := e.AppendJSON(nil)
				ok := attempt(func(cl *relay.Client) error {
					res, err := cl.PublishEnvelope(context.Background(), body)
					if err != nil {
						return err
					}
					tr.mu.Lock()
					defer tr.mu.Unlock()
					if res.Duplicate {
						tr.dupes++
					}
					if prev, seen := tr.envs[key]; seen && prev != res.Seq {
						t.Errorf("resend of %s answered seq %d, first %d", key, res.Seq, prev)
					}
					tr.envs[key] = res.Seq
					return nil
				}, &tr.inDoubtE)
				if !ok {
					return
				}
			}
		})
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()

	verify := func(round int, childURL string) (msgs, envs int) {
		t.Helper()
		cl := &relay.Client{BaseURL: childURL, HTTP: httpClient}
		ctx := context.Background()
		tr.mu.Lock()
		ackedM := make(map[string]hive.MessageStoredV1, len(tr.msgs))
		for k, v := range tr.msgs {
			ackedM[k] = v
		}
		ackedE := make(map[string]int64, len(tr.envs))
		for k, v := range tr.envs {
			ackedE[k] = v
		}
		tr.mu.Unlock()

		// Bus: the whole channel history, seq 1…N without a gap, each client_msg_id once.
		seen := map[string]bool{}
		q := url.Values{"network": {"org"}, "channel": {crashChan}}
		var seq uint64
		for {
			page, err := cl.ListMessages(ctx, q)
			if err != nil {
				t.Fatalf("round %d: history: %v", round, err)
			}
			for _, d := range page.Messages {
				seq++
				if d.Seq != seq {
					t.Fatalf("round %d: seq %d where %d was due: a gap", round, d.Seq, seq)
				}
				cmid := d.Body.Text
				if seen[cmid] {
					t.Fatalf("round %d: %s stored twice", round, cmid)
				}
				seen[cmid] = true
				if a, ok := ackedM[cmid]; ok && (a.GID != d.GID || a.Seq != d.Seq) {
					t.Fatalf("round %d: %s stored as %s/%d, acknowledged %s/%d", round, cmid, d.GID, d.Seq, a.GID, a.Seq)
				}
			}
			if page.Next == nil {
				break
			}
			q.Set("after_gid", *page.Next)
		}
		for cmid := range ackedM {
			if !seen[cmid] {
				t.Fatalf("round %d: acknowledged message %s lost", round, cmid)
			}
		}

		// Notifications: publish a marker, read the stream from the start up to it.
		marker := "publish." + envelope.NewEventID()
		me := envelope.Envelope{EventID: envelope.NewEventID(), Source: envelope.SourceAgent, SourceEventID: "m",
			Topic: "notifications.agent.marker", DedupeKey: marker, IssuedAt: 1760000000000, PayloadSummary: "marker", TraceID: "t"}
		if _, err := cl.PublishEnvelope(ctx, me.AppendJSON(nil)); err != nil {
			t.Fatalf("round %d: marker: %v", round, err)
		}
		keys := map[string]int64{}
		var last int64
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		errMarker := errors.New("marker")
		err := cl.StreamNotifications(sctx, relay.NotifyStreamOptions{Subjects: []string{"notifications.agent.>"}, LastEventID: "0"}, func(f relay.SSEFrame) error {
			if f.Comment != "" {
				return nil
			}
			id, _ := strconv.ParseInt(f.ID, 10, 64)
			if id <= last {
				t.Fatalf("round %d: id %d after %d", round, id, last)
			}
			last = id
			e, ps := envelope.Decode(f.Data)
			if len(ps) > 0 {
				t.Fatalf("round %d: stored envelope invalid: %v", round, ps.Err())
			}
			if e.DedupeKey == marker {
				return errMarker
			}
			if _, dup := keys[e.DedupeKey]; dup && e.Topic != "notifications.agent.marker" {
				t.Fatalf("round %d: %s stored twice", round, e.DedupeKey)
			}
			keys[e.DedupeKey] = id
			return nil
		})
		if !errors.Is(err, errMarker) {
			t.Fatalf("round %d: stream: %v", round, err)
		}
		for k, s := range ackedE {
			if got, ok := keys[k]; !ok || got != s {
				t.Fatalf("round %d: acknowledged envelope %s seq %d: stored %v %d", round, k, s, ok, got)
			}
		}
		return len(seen), len(keys)
	}

	start := time.Now()
	for round := 1; round <= laneKills; round++ {
		c := startChild(t, bin, dataDir)
		if round > 1 {
			m, e := verify(round, c.url)
			t.Logf("restart %d: %d messages and %d envelopes verified, %d requests, %d cut by kills", round-1, m, e, requests.Load(), failures.Load())
		}
		u := c.url
		liveURL.Store(&u)
		pause.Unlock()
		time.Sleep(time.Duration(150+rng.IntN(400)) * time.Millisecond)
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := <-c.done; err == nil {
			t.Fatal("killed relay exited cleanly")
		}
		pause.Lock()
	}
	c := startChild(t, bin, dataDir)
	u := c.url
	liveURL.Store(&u)
	pause.Unlock()
	time.Sleep(200 * time.Millisecond) // every in-doubt send is resent and answered
	pause.Lock()
	m, e := verify(laneKills+1, c.url)
	pause.Unlock()
	close(stop)
	wg.Wait()
	stop = make(chan struct{}) // the deferred close
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("graceful stop: %v; stderr %s", err, c.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("relay did not stop on SIGTERM")
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t.Logf("%d kills: %d messages, %d envelopes, %d requests (%d cut by kills) in %v; sends resent after a kill: %d messages, %d envelopes (%d of them answered duplicate: stored before the kill)",
		laneKills, m, e, requests.Load(), failures.Load(), time.Since(start).Round(time.Millisecond), tr.inDoubtM, tr.inDoubtE, tr.dupes)
	if failures.Load() == 0 {
		t.Error("no request was ever cut by a kill")
	}
}
