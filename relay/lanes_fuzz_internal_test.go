package relay

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

func fuzzServer(f *testing.F) *Server { return fuzzServerWith(f, nil) }

// fuzzServerWith is fuzzServer with an auth file (nil: local mode).
func fuzzServerWith(f *testing.F, auth *Auth) *Server {
	st, err := sqlite.Open(filepath.Join(f.TempDir(), "fuzz.db"), sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	s, err := New(Config{Store: st, Auth: auth, SweepInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// FuzzBusFrames drives the WebSocket frame handler with up to 8 client frames (one per line of
// the input) on a fresh socket of the local instance, against a real SQLite store. Whatever
// the frames: the handler does not panic; everything it queues is a service frame a client
// decodes (hive.DecodeBusFrame AtClient) or a close; an `error` frame carries a known code; a
// protocol violation (a first frame that is not a valid hello of this instance) ends the socket
// with error then close 1008; and the store's seq stays gap-free over messages and publishes
// whatever was stored.
func FuzzBusFrames(f *testing.F) {
	hello := `{"t":"hello","instance_id":"local","agents":[{"agent_id":"claude-3e","role":"coder","channels":["org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"]}],"cursors":{"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general":0}}`
	msg := `{"t":"message","client_msg_id":"01JBMSG7Q3","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":"claude-3e","body":{"text":"Which retry budget does payments use?"}}`
	f.Add([]byte(hello + "\n" + msg))
	f.Add([]byte(`{"t":"ack","channel":"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g","seq":1}`))
	f.Add([]byte(hello + "\n" + `{"t":"message.receipt","gid":"g-1","by":"claude-3e","state":"read"}` + "\n" + `{"t":"hologram"}`))
	f.Add([]byte(`{"t":"hello","instance_id":"inst_x","agents":[]}`))
	f.Add([]byte(hello + "\n" + strings.Replace(msg, `"type":"question"`, `"type":"answer","reply_to":"nope"`, 1)))
	publish := `{"t":"publish","client_msg_id":"01JBPUB1","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general","from":"claude-3e","kind":"status","priority":"high","privacy":"team","body":{"step":3}}`
	f.Add([]byte(hello + "\n" + publish + "\n" + msg + "\n" + publish))
	f.Add([]byte(hello + "\n" + strings.Replace(publish, `"privacy":"team"`, `"privacy":"private","to":"claude-3e"`, 1)))
	f.Add([]byte(hello + "\n" + strings.Replace(publish, `"body":{"step":3}`, `"body":null,"x":1`, 1)))
	other := strings.ReplaceAll(hello, "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42", "00000000000000000000000000000001")
	f.Add([]byte(other + "\n" + strings.ReplaceAll(msg, "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42", "00000000000000000000000000000001")))
	f.Add([]byte(hello + "\n" + `{"t":"presence","agent_id":"claude-3e","state":"online","profile":{"display_name":"C","roles":["coder"]}}` + "\n" + `{"t":"presence","agent_id":"x","state":"idle"}`))
	f.Add([]byte(hello + "\n" + `{"t":"handoff.offer","handoff_id":"h-7","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general","from":"claude-3e","to":"codex-85","bundle_ref":"bundle-7","deadline":"2026-10-20T18:00:00Z"}` +
		"\n" + `{"t":"handoff.ack","handoff_id":"h-7","by":"claude-3e"}` + "\n" + `{"t":"handoff.reject","handoff_id":"h-7","by":"claude-3e","reason":"no"}`))
	// The socket acts as the local principal; the auth file adds a second instance of its org
	// (a recipient for bindings) and seals the vault of `general` at epoch 3, so the S17 checks
	// run (the channels of other vaults are not sealed).
	auth, err := ParseAuth([]byte(`{"tokens":[{"token_sha256":"` + HashToken("other") + `","org":"local","instance_id":"inst_2","instance_label":"","rights":["bus.relay"]}],` +
		`"sealed_vaults":[{"org":"local","vault_id":"3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42","epoch":3}]}`))
	if err != nil {
		f.Fatal(err)
	}
	s := fuzzServerWith(f, auth)
	ctx := context.Background()
	stream := store.OrgStream(LocalOrg, "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general")
	f.Fuzz(func(t *testing.T, data []byte) {
		frames := bytes.Split(data, []byte{'\n'})
		if len(frames) > 8 {
			frames = frames[:8]
		}
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		sock := &busSocket{s: s, p: LocalPrincipal(), ctx: sctx, cancel: cancel,
			out: make(chan outFrame, 4096), wake: make(chan struct{}, 1), room: make(chan struct{}, 1),
			answers: make(chan answer, maxInFlight), agents: map[string]hive.BusAgentV1{},
			follows: map[store.StreamKey]*follow{}, dirty: map[store.StreamKey]struct{}{}, sent: map[string]struct{}{},
			delivered: map[store.StreamKey]int64{}}
		defer sock.teardown()
		// Collect what the handler queues while it runs (a hello replay may queue a lot).
		fin := make(chan struct{})
		collected := make(chan []outFrame)
		go func() {
			var out []outFrame
			for {
				select {
				case o := <-sock.out:
					out = append(out, o)
				case <-fin:
					for len(sock.out) > 0 {
						out = append(out, <-sock.out)
					}
					collected <- out
					return
				}
			}
		}()
		go sock.answerer() // pipelined messages are answered in order (bus_ws.go)
		closing := false
		for _, fr := range frames {
			if closing = sock.handle(fr); closing {
				break
			}
		}
		for sock.pending.Load() > 0 { // every answer out
			time.Sleep(50 * time.Microsecond)
		}
		close(fin)
		out := <-collected
		for i, o := range out {
			if o.close != nil {
				if i != len(out)-1 || !closing {
					t.Fatalf("close not last: %+v", out)
				}
				continue
			}
			sf, err := hive.DecodeBusFrame(o.data, hive.AtClient)
			if err != nil || sf == nil {
				t.Fatalf("queued %s: %v", o.data, err)
			}
			if e, ok := sf.(hive.FrameError); ok && e.Error.Code.HTTPStatus() == 0 && e.Error.Code != hive.HiveErrorCodeUnknown {
				t.Fatalf("error code %q", e.Error.Code)
			}
		}
		if closing && (len(out) < 2 || out[len(out)-1].close == nil || out[len(out)-1].close.code != 1008 && out[len(out)-1].close.code != 1003) {
			t.Fatalf("violation without error+close: %+v", out)
		}
		entries, err := s.store.ReadStream(ctx, stream, store.ReadQuery{Limit: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range entries {
			if e.Seq != int64(i+1) {
				t.Fatalf("seq %d at %d", e.Seq, i)
			}
		}
	})
}

// FuzzPublishEnvelope drives POST /v1/notifications' ingest with arbitrary bodies against a
// real SQLite store. Whatever the body: no panic; a refusal is 400 invalid_request listing its
// problems (message = their messages joined by "; ") and stores nothing; an accepted envelope
// has no problem, a topic under `notifications.`, and is stored re-encoded (a Decode of the
// stored form has no problem either); publishing it again answers the same seq as a duplicate
// exactly when its dedupe key names its event.
func FuzzPublishEnvelope(f *testing.F) {
	f.Add([]byte(`{"event_id":"5d41402abc4b2a76b9719d911017c592","source":"github","source_event_id":"d-7","topic":"notifications.github.acme.widgets.pr.42","dedupe_key":"github.d-7","issued_at":1760000000000,"payload_summary":"PR #42 opened","payload":"{\"action\":\"opened\"}","trace_id":"0af7651916cd43dd"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"event_id":"e","source":"agent","source_event_id":"s","topic":"notifications.role.reviewer","dedupe_key":"k","issued_at":1,"payload_summary":"p","trace_id":"t","in_reply_to":""}`))
	f.Add([]byte(`{"event_id":"e","source":"agent","source_event_id":"s","topic":"other.x","dedupe_key":"envoy.role.forward.k","issued_at":1.5,"payload_summary":"p","trace_id":"t"}`))
	s := fuzzServer(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, body []byte) {
		before, err := s.store.LastEnvelopeSeq(ctx, LocalOrg)
		if err != nil {
			t.Fatal(err)
		}
		res, e := s.publishBody(ctx, LocalOrg, body)
		if e != nil {
			if e.Code != CodeInvalidRequest || len(e.Problems) == 0 {
				t.Fatalf("refusal %+v", e)
			}
			msgs := make([]string, len(e.Problems))
			for i, p := range e.Problems {
				msgs[i] = p.Message
			}
			if e.Message != strings.Join(msgs, "; ") {
				t.Fatalf("message %q vs problems %q", e.Message, msgs)
			}
			if after, _ := s.store.LastEnvelopeSeq(ctx, LocalOrg); after != before {
				t.Fatalf("refused body stored: %d → %d", before, after)
			}
			return
		}
		env, ps := CheckPublishEnvelope(body)
		if len(ps) > 0 || !strings.HasPrefix(env.Topic, NotificationsPrefix) {
			t.Fatalf("accepted with problems %v", ps)
		}
		if _, ps := envelope.Decode(env.AppendJSON(nil)); len(ps) > 0 {
			t.Fatalf("stored form has problems: %v", ps.Err())
		}
		again, e := s.publishBody(ctx, LocalOrg, body)
		if e != nil {
			t.Fatalf("second publish refused: %v", e)
		}
		_, named := envelope.MessageID(env)
		switch {
		case res.Seq == 0: // a role lane: never stored
			if again != (PublishResult{}) {
				t.Fatalf("role lane answered %+v", again)
			}
		case named && (!again.Duplicate || again.Seq != res.Seq):
			t.Fatalf("repeat of a named event: %+v then %+v", res, again)
		case !named && (again.Duplicate || again.Seq <= res.Seq):
			t.Fatalf("repeat of an unnamed event: %+v then %+v", res, again)
		}
	})
}
