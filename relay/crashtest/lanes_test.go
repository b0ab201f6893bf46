package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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
	laneClients = 3 // concurrent HTTP senders per lane (messages, envelopes)
	pubClients  = 2 // concurrent WebSocket publishers on the message channels
	laneKills   = 4
)

// crashChans are the org channels the bus senders and publishers share: each channel has one
// seq counter for its `message.deliver` and `deliver` frames (hive.md §4.6).
var crashChans = []string{
	"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/crash",
	"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/crash-2",
}

// busPos is where a bus item sits: its channel (index into crashChans) and seq, and for a
// message its gid.
type busPos struct {
	ch  int
	seq uint64
	gid string
}

// laneTracker is what the bus, publish and notification clients know: acknowledged items with
// the answer they got, the items a verification found stored (acknowledged or not), and the
// sends whose answer a kill cut.
type laneTracker struct {
	mu   sync.Mutex
	msgs map[string]busPos // message client_msg_id → acknowledged position
	pubs map[string]busPos // publish client_msg_id → acknowledged position
	envs map[string]int64  // dedupe key → acknowledged seq
	seen map[string]busPos // "m:"/"p:" + client_msg_id → position a verification found it stored at
	// dupes counts envelope resends answered duplicate.
	dupes int
	// inDoubtM/P/E count sends resent after their answer was lost; storedM/P those of them a
	// verification had found stored before the resend, which then answered the original (S9).
	inDoubtM, inDoubtP, inDoubtE int
	storedM, storedP             int
	// resentP counts acknowledged publishes resent on a fresh socket after a restart, each
	// answered with its original seq (S9 across the restart).
	resentP int
	// unresolved counts sends whose answer was lost and that are not answered yet.
	unresolved int
}

// errRefused marks an answer that is not a transport failure: the test fails on it.
var errRefused = errors.New("refused")

// pubConn is one publisher's `/v1/bus` socket to one child relay. Its reader goroutine drains
// every frame (so the relay never sees a slow consumer) and passes `published` and `error`
// frames on; frames is closed when the socket ends.
type pubConn struct {
	conn   *relay.BusConn
	url    string
	frames chan hive.BusFrameV1
}

// dialPub opens a socket to the relay at u and announces agent on every crash channel.
func dialPub(t *testing.T, httpClient *http.Client, u, agent string) (*pubConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := (&relay.Client{BaseURL: u, HTTP: httpClient}).DialBus(ctx)
	if err != nil {
		return nil, err
	}
	hello := hive.FrameHello{InstanceID: relay.LocalOrg, Agents: []hive.BusAgentV1{{AgentID: agent, Role: "publisher", Channels: crashChans}}}
	if err := conn.Send(ctx, hello); err != nil {
		_ = conn.CloseNow()
		return nil, err
	}
	pc := &pubConn{conn: conn, url: u, frames: make(chan hive.BusFrameV1, 16)}
	go func() {
		defer close(pc.frames)
		for {
			f, raw, err := conn.Recv(context.Background())
			if err != nil {
				if raw != nil {
					t.Errorf("%s: undecodable frame %s: %v", agent, raw, err)
				}
				return
			}
			switch f.(type) {
			case hive.FramePublished, hive.FrameError:
				pc.frames <- f // one per publish sent: the buffer never fills
			}
		}
	}()
	return pc, nil
}

// roundTrip sends one publish and waits for its answer. A lost socket is a transport error; an
// `error` frame, a foreign answer or no answer in time wrap errRefused.
func (pc *pubConn) roundTrip(f hive.FramePublish) (hive.FramePublished, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := pc.conn.Send(ctx, f); err != nil {
		return hive.FramePublished{}, err
	}
	select {
	case g, ok := <-pc.frames:
		if !ok {
			return hive.FramePublished{}, errors.New("socket closed")
		}
		p, isPub := g.(hive.FramePublished)
		if !isPub || p.ClientMsgID != f.ClientMsgID || p.Channel != f.Channel || p.Seq == 0 {
			data, _ := g.MarshalJSON()
			return hive.FramePublished{}, fmt.Errorf("%w: publish %s answered %s", errRefused, f.ClientMsgID, data)
		}
		return p, nil
	case <-ctx.Done():
		return hive.FramePublished{}, fmt.Errorf("%w: publish %s not answered in time", errRefused, f.ClientMsgID)
	}
}

// catchUp reads one page of GET /v1/bus/channels/{channel}/events.
func catchUp(ctx context.Context, httpClient *http.Client, base, channel string, after uint64, limit int) (hive.BusEventsV1, error) {
	var ev hive.BusEventsV1
	u := base + "/v1/bus/channels/" + url.PathEscape(channel) + "/events?after_seq=" + strconv.FormatUint(after, 10) + "&limit=" + strconv.Itoa(limit)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return ev, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return ev, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return ev, err
	}
	if resp.StatusCode != http.StatusOK {
		return ev, fmt.Errorf("catch-up %s: %d %s", channel, resp.StatusCode, body)
	}
	if err := ev.UnmarshalJSON(bytes.TrimSpace(body)); err != nil {
		return ev, err
	}
	if err := ev.Validate(); err != nil {
		return ev, err
	}
	if ev.Channel != channel {
		return ev, fmt.Errorf("catch-up of %s answered channel %s", channel, ev.Channel)
	}
	return ev, nil
}

// TestCrashRecoveryLanes is relay.md §4 for the bus and notification lanes: clients send hive
// messages (POST /v1/messages) and `publish` frames (WebSocket /v1/bus, after a hello) on the
// same two channels, and envelopes (POST /v1/notifications, minted dedupe keys), while the
// relay is killed with SIGKILL; a send whose answer was lost is resent with the same
// client_msg_id or envelope, and each publisher resends its last acknowledged publish on its
// first socket after a restart. After every restart, reading each channel by catch-up: every
// acknowledged message and publish is present exactly once with the seq (and gid) it was
// acknowledged with, the channel's seq over messages and publishes together runs 1…N without a
// gap or repeat, whatever an earlier verification found stored is still there unchanged, and the
// message history agrees with catch-up; every acknowledged envelope is stored exactly once with
// its seq; and a resend of a stored item is answered with the original (S9; the 72 h duplicate
// window), in particular a send cut by a kill and found stored after the restart.
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
	tr := &laneTracker{msgs: map[string]busPos{}, pubs: map[string]busPos{}, envs: map[string]int64{},
		seen: map[string]busPos{}}
	var requests, failures atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	httpClient := &http.Client{Timeout: 20 * time.Second}

	// attempt runs one send against the live child until it is answered (resending after a
	// kill); it returns false when the test stops. send gets whether an earlier try lost its
	// answer and returns the error of the try.
	attempt := func(send func(c *relay.Client, lost bool) error, inDoubt *int) bool {
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
			err := send(c, lost)
			pause.RUnlock()
			if err == nil {
				if lost {
					tr.mu.Lock()
					*inDoubt++
					tr.unresolved--
					tr.mu.Unlock()
				}
				return true
			}
			var e *relay.Error
			if errors.Is(err, errRefused) || errors.As(err, &e) && e.Status != http.StatusServiceUnavailable {
				t.Errorf("refused: %v", err)
				return false
			}
			if !lost {
				tr.mu.Lock()
				tr.unresolved++
				tr.mu.Unlock()
			}
			lost = true
			failures.Add(1)
			time.Sleep(5 * time.Millisecond)
		}
	}
	// answered checks the answer to a send (tr.mu held): a resend answers what the first answer
	// said, and a send cut by a kill that a verification found stored answers that position.
	answered := func(key, id string, got busPos, acked map[string]busPos, lost bool, stored *int) {
		if prev, ok := acked[id]; ok && prev != got {
			t.Errorf("resend of %s answered %+v, first %+v", id, got, prev)
		}
		if s, ok := tr.seen[key+id]; ok {
			if s != got {
				t.Errorf("%s was found stored at %+v; its resend answered %+v", id, s, got)
			}
			if lost {
				*stored++
			}
		}
		acked[id] = got
	}
	for c := range laneClients {
		wg.Go(func() { // bus sender
			for k := 0; ; k++ {
				cmid := fmt.Sprintf("crash-b%d-%d", c, k)
				ch := (c + k) % len(crashChans)
				m := hive.AgentMessageV1{ClientMsgID: cmid, Network: hive.NetworkOrg{Channel: crashChans[ch]}, Type: hive.MessageTypeFinding,
					From: "agent-" + strconv.Itoa(c), Body: &hive.MessageBodyV1{Text: cmid}}
				body, _ := m.MarshalJSON()
				ok := attempt(func(cl *relay.Client, lost bool) error {
					st, err := cl.SendMessage(context.Background(), body)
					if err != nil {
						return err
					}
					if n, isOrg := st.Network.(hive.NetworkOrg); !isOrg || n.Channel != crashChans[ch] || st.ClientMsgID != cmid {
						return fmt.Errorf("%w: %s answered %+v", errRefused, cmid, st)
					}
					tr.mu.Lock()
					defer tr.mu.Unlock()
					answered("m:", cmid, busPos{ch: ch, seq: st.Seq, gid: st.GID}, tr.msgs, lost, &tr.storedM)
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
				ok := attempt(func(cl *relay.Client, _ bool) error {
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
	for p := range pubClients {
		wg.Go(func() { // WebSocket publisher on the message channels
			agent := "pub-" + strconv.Itoa(p)
			var pc *pubConn
			defer func() {
				if pc != nil {
					_ = pc.conn.CloseNow()
				}
			}()
			var last hive.FramePublish // the last acknowledged publish
			var lastSeq uint64
			for k := 0; ; k++ {
				cmid := fmt.Sprintf("crash-p%d-%d", p, k)
				ch := (p + k) % len(crashChans)
				f := hive.FramePublish{ClientMsgID: cmid, Channel: crashChans[ch], From: agent, Kind: "crash",
					Priority: hive.BusPriorityNormal, Privacy: hive.BusPrivacyTeam, Body: json.RawMessage(strconv.Quote(cmid))}
				ok := attempt(func(cl *relay.Client, lost bool) error {
					if pc != nil && pc.url != cl.BaseURL { // a socket to a killed child
						_ = pc.conn.CloseNow()
						pc = nil
					}
					if pc == nil {
						npc, err := dialPub(t, httpClient, cl.BaseURL, agent)
						if err != nil {
							return err
						}
						pc = npc
						if lastSeq != 0 { // S9 across the restart: the original seq, nothing stored
							got, err := pc.roundTrip(last)
							if err != nil {
								return err
							}
							if got.Seq != lastSeq {
								return fmt.Errorf("%w: acknowledged publish %s (seq %d) resent after a restart answered seq %d", errRefused, last.ClientMsgID, lastSeq, got.Seq)
							}
							tr.mu.Lock()
							tr.resentP++
							tr.mu.Unlock()
						}
					}
					got, err := pc.roundTrip(f)
					if err != nil {
						if !errors.Is(err, errRefused) {
							_ = pc.conn.CloseNow()
							pc = nil
						}
						return err
					}
					last, lastSeq = f, got.Seq
					tr.mu.Lock()
					defer tr.mu.Unlock()
					answered("p:", cmid, busPos{ch: ch, seq: got.Seq}, tr.pubs, lost, &tr.storedP)
					return nil
				}, &tr.inDoubtP)
				if !ok {
					return
				}
			}
		})
	}
	// paused says whether the controller holds pause; stopped that the clients were stopped.
	// A failing check ends the test with pause held: the deferred stop releases it, so the
	// clients see stop instead of waiting for pause forever (startChild's cleanup kills the
	// child).
	paused, stopped := true, false
	defer func() {
		if !stopped {
			close(stop)
			if paused {
				pause.Unlock()
			}
			wg.Wait()
		}
	}()

	verify := func(round int, childURL string) (msgs, pubs, envs int) {
		t.Helper()
		cl := &relay.Client{BaseURL: childURL, HTTP: httpClient}
		ctx := context.Background()
		tr.mu.Lock()
		defer tr.mu.Unlock() // the senders wait for pause, so nothing is answered meanwhile

		// Bus: each channel's whole history by catch-up (pages of a random limit ≤ 500): seq
		// 1…N without a gap or repeat over messages and publishes, each client_msg_id once, at
		// its acknowledged position, and everything found stored before still there.
		found := map[string]busPos{}
		caughtUp := 0 // messages read by catch-up
		for ch, channel := range crashChans {
			limit := 1 + rng.IntN(hive.MaxBusReplay)
			var seq uint64
			for more := false; ; more = true {
				page, err := catchUp(ctx, httpClient, childURL, channel, seq, limit)
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if len(page.Events) > limit || more && len(page.Events) == 0 {
					t.Fatalf("round %d: %s after seq %d: a page of %d events (limit %d), next_after_seq %v", round, channel, seq, len(page.Events), limit, page.NextAfterSeq)
				}
				for _, f := range page.Events {
					seq++
					var key string
					var pos busPos
					switch x := f.(type) {
					case hive.FrameMessageDeliver:
						d := x.Delivery
						if n, ok := d.Network.(hive.NetworkOrg); !ok || n.Channel != channel || d.Body == nil {
							t.Fatalf("round %d: %s seq %d: message %s of another network or without a body", round, channel, d.Seq, d.GID)
						}
						key, pos = "m:"+d.Body.Text, busPos{ch: ch, seq: d.Seq, gid: d.GID}
						caughtUp++
					case hive.FrameDeliver:
						var cmid string
						if err := json.Unmarshal(x.Body, &cmid); err != nil || x.Channel != channel || x.Kind != "crash" {
							t.Fatalf("round %d: %s seq %d: deliver %s %s body %s", round, channel, x.Seq, x.Channel, x.Kind, x.Body)
						}
						key, pos = "p:"+cmid, busPos{ch: ch, seq: x.Seq}
					default:
						data, _ := f.MarshalJSON()
						t.Fatalf("round %d: %s: unexpected frame %s", round, channel, data)
					}
					if pos.seq != seq {
						t.Fatalf("round %d: %s: seq %d where %d was due: a gap or repeat", round, channel, pos.seq, seq)
					}
					if prev, dup := found[key]; dup {
						t.Fatalf("round %d: %s stored twice, at %+v and %+v", round, key, prev, pos)
					}
					found[key] = pos
				}
				if page.NextAfterSeq == nil {
					break
				}
				if *page.NextAfterSeq != seq {
					t.Fatalf("round %d: %s: next_after_seq %d after seq %d", round, channel, *page.NextAfterSeq, seq)
				}
			}
			// The history route agrees: the same messages at the same positions, in seq order.
			q := url.Values{"network": {"org"}, "channel": {channel}}
			var last uint64
			for {
				page, err := cl.ListMessages(ctx, q)
				if err != nil {
					t.Fatalf("round %d: history: %v", round, err)
				}
				for _, d := range page.Messages {
					if d.Body == nil || d.Seq <= last {
						t.Fatalf("round %d: %s history: seq %d after %d (or no body)", round, channel, d.Seq, last)
					}
					last = d.Seq
					if got := found["m:"+d.Body.Text]; got != (busPos{ch: ch, seq: d.Seq, gid: d.GID}) {
						t.Fatalf("round %d: %s history has %s at %s/%d, catch-up at %+v", round, channel, d.Body.Text, d.GID, d.Seq, got)
					}
					msgs++
				}
				if page.Next == nil {
					break
				}
				q.Set("after_gid", *page.Next)
			}
		}
		if msgs != caughtUp {
			t.Fatalf("round %d: history lists %d messages, catch-up %d", round, msgs, caughtUp)
		}
		pubs = len(found) - msgs
		for key, want := range map[string]map[string]busPos{"m:": tr.msgs, "p:": tr.pubs} {
			for id, a := range want {
				if got, ok := found[key+id]; !ok || got != a {
					t.Fatalf("round %d: acknowledged %s%s at %+v: stored %v %+v", round, key, id, a, ok, got)
				}
			}
		}
		for key, pos := range tr.seen {
			if found[key] != pos {
				t.Fatalf("round %d: %s was stored at %+v, now %+v", round, key, pos, found[key])
			}
		}
		maps.Copy(tr.seen, found)

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
		for k, s := range tr.envs {
			if got, ok := keys[k]; !ok || got != s {
				t.Fatalf("round %d: acknowledged envelope %s seq %d: stored %v %d", round, k, s, ok, got)
			}
		}
		return msgs, pubs, len(keys)
	}

	start := time.Now()
	for round := 1; round <= laneKills; round++ {
		c := startChild(t, bin, dataDir)
		if round > 1 {
			m, p, e := verify(round, c.url)
			t.Logf("restart %d: %d messages, %d publishes and %d envelopes verified, %d requests, %d cut by kills", round-1, m, p, e, requests.Load(), failures.Load())
		}
		u := c.url
		liveURL.Store(&u)
		pause.Unlock()
		paused = false
		time.Sleep(time.Duration(150+rng.IntN(400)) * time.Millisecond)
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := <-c.done; err == nil {
			t.Fatal("killed relay exited cleanly")
		}
		pause.Lock()
		paused = true
	}
	c := startChild(t, bin, dataDir)
	m, p, e := verify(laneKills+1, c.url) // what the last kill left, before any resend
	t.Logf("restart %d: %d messages, %d publishes and %d envelopes verified", laneKills, m, p, e)
	u := c.url
	liveURL.Store(&u)
	pause.Unlock()
	paused = false
	// Every send whose answer a kill cut is resent and answered, then verify once more.
	time.Sleep(200 * time.Millisecond)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		tr.mu.Lock()
		n := tr.unresolved
		tr.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sends cut by the last kill still unanswered", n)
		}
	}
	pause.Lock()
	paused = true
	m, p, e = verify(laneKills+2, c.url)
	pause.Unlock()
	paused = false
	close(stop)
	wg.Wait()
	stopped = true
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
	t.Logf("%d kills: %d messages, %d publishes, %d envelopes, %d requests (%d cut by kills) in %v", laneKills, m, p, e,
		requests.Load(), failures.Load(), time.Since(start).Round(time.Millisecond))
	t.Logf("sends resent after a kill: %d messages (%d found stored before the resend), %d publishes (%d found stored), %d envelopes (%d answered duplicate); %d acknowledged publishes resent after a restart",
		tr.inDoubtM, tr.storedM, tr.inDoubtP, tr.storedP, tr.inDoubtE, tr.dupes, tr.resentP)
	if failures.Load() == 0 {
		t.Error("no request was ever cut by a kill")
	}
	if len(tr.pubs) == 0 || tr.resentP == 0 {
		t.Errorf("%d publishes acknowledged, %d resent after a restart: the publishers did not run across the kills", len(tr.pubs), tr.resentP)
	}
}
