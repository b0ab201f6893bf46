package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/internal/fuzzopt"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/storetest"
	"github.com/agentwire/agentwire/web"
)

// One browser per test binary, shared by the tests (each gets its own tab).
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

func TestMain(m *testing.M) {
	flag.Parse()
	fuzzopt.BoundMinimize() // FuzzServe; a minimization of Go's default 60 s stalls a short run
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// tab opens a new tab of the shared headless chromium (Debian's package): under CI=true a
// missing browser fails the test, elsewhere it skips.
func tab(t *testing.T) context.Context {
	t.Helper()
	path := requireTool(t, "chromium", "chromium-browser")
	browser.once.Do(func() {
		dir, err := os.MkdirTemp("", "agentwire-chromium")
		if err != nil {
			browser.err = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir),
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			// Content names hosts (cdn.example.test): nothing but loopback is ever resolved.
			chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
			chromedp.WindowSize(1280, 900),
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		if err := chromedp.Do(bctx); err != nil {
			browser.err = err
		}
		browser.ctx = bctx
		browser.cancel = func() { bcancel(); acancel(); os.RemoveAll(dir) }
	})
	if browser.err != nil {
		t.Fatalf("start chromium: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	ctx, cancel2 := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancel2(); cancel() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// artifacts is where screenshots go: $AGENTWIRE_TEST_ARTIFACTS (kept) or a test temp dir.
func artifacts(t *testing.T) string {
	if d := os.Getenv("AGENTWIRE_TEST_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

// liveRelay is a real relay over a real sqlite store, serving HTTP on loopback.
type liveRelay struct {
	srv  *relay.Server
	st   *sqlite.Store
	url  string
	addr string
	done chan error
}

func startRelay(t *testing.T, dir, addr string) *liveRelay {
	t.Helper()
	v, err := web.Handler()
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := relay.New(relay.Config{Store: st, Viewer: v, Heartbeat: time.Second, SweepInterval: -1, BusPingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	for i := 0; ; i++ { // the port of a stopped relay can take a moment to be free again
		if ln, err = net.Listen("tcp", addr); err == nil || i > 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := &liveRelay{srv: srv, st: st, url: "http://" + ln.Addr().String(), addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() { r.done <- srv.Serve(ln) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *liveRelay) stop(t *testing.T) {
	if r.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	<-r.done
	if err := r.st.Close(); err != nil {
		t.Errorf("close store: %v", err)
	}
	r.srv = nil
}

func (r *liveRelay) post(t *testing.T, path, ctype string, body []byte) []byte {
	t.Helper()
	res, err := http.Post(r.url+path, ctype, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %d %s", path, res.StatusCode, out)
	}
	return out
}

func (r *liveRelay) send(t *testing.T, runID string, lines [][]byte) {
	t.Helper()
	r.post(t, "/v1/runs/"+runID+"/events", "application/x-ndjson", append(bytes.Join(lines, []byte("\n")), '\n'))
}

func (r *liveRelay) snapshot(t *testing.T, runID string) map[string]any {
	t.Helper()
	res, err := http.Get(r.url + "/v1/runs/" + runID)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var snap map[string]any
	if err := json.NewDecoder(res.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

// renderedText is what RunView.messageText gives for a state's messages: per message, each
// run of consecutive text parts as one block, blocks joined by LF.
func renderedText(messages []any) string {
	var blocks []string
	for _, m := range messages {
		var cur *strings.Builder
		for _, p := range m.(map[string]any)["content"].([]any) {
			part := p.(map[string]any)
			if part["type"] == "text" {
				if cur == nil {
					cur = &strings.Builder{}
				}
				cur.WriteString(part["text"].(string))
				continue
			}
			if part["type"] == "reasoning" && cur == nil {
				continue
			}
			if cur != nil {
				blocks = append(blocks, cur.String())
				cur = nil
			}
		}
		if cur != nil {
			blocks = append(blocks, cur.String())
		}
	}
	return strings.Join(blocks, "\n")
}

func stateText(t *testing.T, snapshot []byte) string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(snapshot, &s); err != nil {
		t.Fatal(err)
	}
	return renderedText(s["messages"].([]any))
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS polls a boolean expression until it is true.
func waitJS(t *testing.T, ctx context.Context, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise)); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			conn, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`((document.querySelector('.conn')||{}).textContent||'') + ' | ' + ((document.querySelector('.problems')||{}).textContent||'') + ' | ' + ((document.querySelector('.travel-extra')||{}).textContent||'')`))
			t.Fatalf("timed out waiting for %s (page says %q)", expr, conn)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func lines(t *testing.T, n int, seed int64, ending synth.Ending, runID string) [][]byte {
	t.Helper()
	data, err := synth.BytesWith(n, seed, synth.Options{Profile: synth.ProfileRich, Ending: ending, RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

func reduceLines(t *testing.T, ls [][]byte) []byte { return storetest.ReduceLines(t, ls) }

const pageText = `window.__agentwire.travel.view.messageText()`
const pageTerminal = `['completed','failed','cancelled'].includes((document.querySelector('.status[data-status]')||{}).dataset?.status) && document.querySelector('.conn').dataset.state === 'ended'`

// TestBrowserRunLive: a rich run streamed in while the page follows it (and travels back and
// forth meanwhile) renders the text of the server's snapshot, the page's WebAssembly reducer
// reaches the Go reducer's snapshot byte for byte, and time travel (?at=N and the scrubber)
// shows the state of the first N events.
func TestBrowserRunLive(t *testing.T) {
	ctx := tab(t)
	r := startRelay(t, t.TempDir(), "127.0.0.1:0")
	ls := lines(t, 400, 1, synth.EndingCompleted, "live-1")
	r.send(t, "live-1", ls[:1])
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/runs/live-1")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.querySelector('.conn')?.dataset.state === 'live'`, 20*time.Second)
	// While it streams, travel back and to the latest state again (the whole views asked of
	// the reducer cross the patches still coming in), sometimes within one batch.
	for i := 1; i < len(ls); i += 25 {
		r.send(t, "live-1", ls[i:min(i+25, len(ls))])
		switch i % 100 {
		case 26:
			eval[bool](t, ctx, `(t => (t.seek(t.seqAt(Math.floor(t.entries.length / 2))), true))(window.__agentwire.travel)`)
		case 51:
			eval[bool](t, ctx, `(t => (t.seek(null), true))(window.__agentwire.travel)`)
		case 76:
			eval[bool](t, ctx, `(t => (t.seek(t.seqAt(3)), t.seek(null), true))(window.__agentwire.travel)`)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitJS(t, ctx, pageTerminal, 20*time.Second)
	snap := r.snapshot(t, "live-1")
	if got, want := eval[string](t, ctx, pageText), renderedText(snap["messages"].([]any)); got != want || len(want) < 100 {
		t.Fatalf("rendered text differs from the snapshot's (%d vs %d bytes)", len(got), len(want))
	}
	if n := eval[float64](t, ctx, `window.__agentwire.travel.stats.resyncs`); n != 0 {
		t.Fatalf("%v patches did not follow what the page showed", n)
	}
	if got := eval[string](t, ctx, `window.__agentwire.travel.session.snapshot()`); got != string(reduceLines(t, ls)) {
		t.Fatal("the page's reducer snapshot differs from the Go reducer's")
	}
	if n := eval[float64](t, ctx, `document.querySelectorAll('.tool').length`); n < 3 {
		t.Fatalf("%v tool calls rendered", n)
	}
	screenshot(t, ctx, "run-live.png")

	// Time travel by URL: the finished run, at logical sequence 137.
	const at = 137
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/runs/live-1?at=%d", r.url, at))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `!!window.__agentwire.travel && window.__agentwire.travel.renderedAt === 137 && !document.querySelector('.travel-banner').hidden`, 20*time.Second)
	want := reduceLines(t, ls[:at])
	if got := eval[string](t, ctx, pageText); got != stateText(t, want) {
		t.Fatal("?at=137 renders other text than the first 137 events")
	}
	if got := eval[string](t, ctx, `document.querySelector('.status[data-status]').dataset.status`); got != "running" && got != "waiting" {
		t.Fatalf("status at 137: %s", got)
	}
	screenshot(t, ctx, "run-time-travel.png")
	// The scrubber: move it to 41 events with the keyboard-equivalent input event.
	eval[bool](t, ctx, `(() => { const r = document.getElementById('scrubber'); r.value = '41'; r.dispatchEvent(new Event('input')); return true; })()`)
	waitJS(t, ctx, `window.__agentwire.travel.renderedAt === 41`, 5*time.Second)
	if got := eval[string](t, ctx, pageText); got != stateText(t, reduceLines(t, ls[:41])) {
		t.Fatal("the scrubber at 41 renders other text than the first 41 events")
	}
	if got := eval[string](t, ctx, `window.__agentwire.travel.session.snapshotAt(41)`); got != string(reduceLines(t, ls[:41])) {
		t.Fatal("snapshotAt(41) differs from the Go reducer's")
	}
	// The narrow layout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2))); err != nil {
		t.Fatal(err)
	}
	if w := eval[float64](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("at 390 px the page is %v px wide", w)
	}
	screenshot(t, ctx, "run-390px.png")
}

// TestBrowserReconnect: the relay stops mid-run and starts again on the same data and port;
// the page says it is reconnecting, resumes from its cursor, and ends with the snapshot's text
// (nothing doubled).
func TestBrowserReconnect(t *testing.T) {
	ctx := tab(t)
	dir := t.TempDir()
	r := startRelay(t, dir, "127.0.0.1:0")
	ls := lines(t, 300, 2, synth.EndingCancelled, "restart-1")
	r.send(t, "restart-1", ls[:120])
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/runs/restart-1")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.querySelector('.conn')?.dataset.state === 'live' && window.__agentwire.travel.entries.length === 120`, 20*time.Second)
	addr := r.addr
	r.stop(t)
	waitJS(t, ctx, `document.querySelector('.conn').dataset.state === 'reconnecting' && document.querySelector('.conn').textContent.includes('reconnecting from logical sequence 120')`, 20*time.Second)
	r2 := startRelay(t, dir, addr)
	r2.send(t, "restart-1", ls[100:200]) // 20 duplicates the page already has, then new events
	waitJS(t, ctx, `document.querySelector('.conn').dataset.state === 'live' && window.__agentwire.travel.entries.length === 200`, 30*time.Second)
	r2.send(t, "restart-1", ls[200:])
	waitJS(t, ctx, pageTerminal, 20*time.Second)
	if got, want := eval[string](t, ctx, pageText), renderedText(r2.snapshot(t, "restart-1")["messages"].([]any)); got != want {
		t.Fatalf("after the restart the text differs from the snapshot's (%d vs %d bytes)", len(got), len(want))
	}
	if n := eval[float64](t, ctx, `window.__agentwire.travel.entries.length`); n != 300 {
		t.Fatalf("%v timeline entries, want 300", n)
	}
	if n := eval[string](t, ctx, `document.querySelector('.conn').dataset.reconnects`); n == "" || n == "0" {
		t.Fatalf("reconnects %q", n)
	}
}

// TestBrowserHostileContent: markup, script and javascript: URLs in content render as inert
// text, and a huge string renders without breaking the page.
func TestBrowserHostileContent(t *testing.T) {
	ctx := tab(t)
	r := startRelay(t, t.TempDir(), "127.0.0.1:0")
	huge := strings.Repeat("A", 200000)
	ev := func(seq int, typ, payload string) []byte {
		return []byte(fmt.Sprintf(`{"type":%q%s,"protocolVersion":1,"eventId":"h:%d","runId":"hostile","sessionId":"s","phaseId":"p","logicalSequence":%d,"sequence":%d,"timestamp":"2025-01-01T00:00:00.000Z"}`, typ, payload, seq, seq, seq))
	}
	ls := [][]byte{
		ev(1, "run.started", ""),
		ev(2, "message.started", `,"messageId":"<img src=x onerror=window.__pwned=1>","role":"assistant"`),
		ev(3, "message.part.delta", `,"messageId":"<img src=x onerror=window.__pwned=1>","part":{"type":"text","text":"<script>window.__pwned=2</script><b>bold?</b>"}`),
		ev(4, "message.part.delta", `,"messageId":"<img src=x onerror=window.__pwned=1>","part":{"type":"citation","url":"javascript:window.__pwned=3","title":"click me"}`),
		ev(5, "message.part.delta", `,"messageId":"<img src=x onerror=window.__pwned=1>","part":{"type":"image","url":"javascript:window.__pwned=4"}`),
		ev(6, "message.part.delta", `,"messageId":"<img src=x onerror=window.__pwned=1>","part":{"type":"image","data":"PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+","mimeType":"image/svg+xml"}`),
		ev(7, "message.part.delta", `,"messageId":"<img src=x onerror=window.__pwned=1>","part":{"type":"custom","name":"<iframe src=javascript:window.__pwned=5>","data":{"html":"<svg onload=window.__pwned=6>"}}`),
		ev(8, "message.part.delta", `,"messageId":"<img src=x onerror=window.__pwned=1>","part":{"type":"text","text":"`+huge+`"}`),
		ev(9, "tool.called", `,"toolCall":{"toolCallId":"<t>","name":"<script>window.__pwned=7</script>","input":{"q":"<img src=x onerror=window.__pwned=8>"}}`),
		ev(10, "run.failed", `,"code":"<b>code</b>","message":"m"`),
	}
	r.send(t, "hostile", ls[:9])
	r.send(t, "hostile", ls[9:])
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/runs/hostile")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.querySelectorAll('.part-text').length > 0 && document.querySelector('.travel-extra').textContent === ''`, 20*time.Second)
	time.Sleep(300 * time.Millisecond) // give any injected handler the chance it must not get
	for _, check := range []struct{ expr, what string }{
		{`window.__pwned === undefined`, "no injected code ran"},
		{`document.querySelectorAll('script').length === 1`, "only the viewer's module script"},
		{`document.querySelectorAll('iframe, svg, b, main img[src^="javascript"], a[href^="javascript"]').length === 0`, "no element came from content"},
		{`[...document.querySelectorAll('a[href]')].every(a => /^https?:/.test(a.href))`, "every link is http(s)"},
		{`document.querySelector('.part-text').textContent.startsWith('<script>window.__pwned=2</script><b>bold?</b>')`, "markup shows as text"},
		{`[...document.querySelectorAll('.unsafe-url')].some(e => e.textContent === 'click me')`, "a javascript: citation is text"},
		{`document.querySelector('main').textContent.includes('<iframe src=javascript:window.__pwned=5>')`, "a custom part's name is text"},
		{`document.querySelectorAll('.part-media img').length === 0`, "no svg data image and no javascript: image"},
		{`[...document.querySelectorAll('.part-text')].some(e => e.textContent === 'A'.repeat(20000)) && document.querySelector('.show-all').textContent === 'Show the remaining 180,000 characters'`, "the huge string shows its start and a button for the rest"},
		{`document.documentElement.scrollWidth <= 1280`, "the huge string does not widen the page"},
		{`document.querySelector('.status[data-status]').dataset.status === 'failed' && document.querySelector('.terminal').textContent.includes('<b>code</b>')`, "the error code is text"},
	} {
		if !eval[bool](t, ctx, check.expr) {
			t.Errorf("%s: %s is false", check.what, check.expr)
		}
	}
}

const busChannel = "org:local/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"

// TestBrowserBusAndNotifications: the bus page shows a channel's history and a message posted
// while it is open; the notifications page shows an envelope published while it is open.
func TestBrowserBusAndNotifications(t *testing.T) {
	ctx := tab(t)
	r := startRelay(t, t.TempDir(), "127.0.0.1:0")
	post := func(cmid, text string) {
		m := hive.AgentMessageV1{ClientMsgID: cmid, Network: hive.NetworkOrg{Channel: busChannel}, Type: hive.MessageTypeFinding, From: "codex-1", Body: &hive.MessageBodyV1{Text: text}}
		b, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		r.post(t, "/v1/messages", "application/json", b)
	}
	post("c-1", "first finding, from history")
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/bus?network=org&channel="+url.QueryEscape(busChannel))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `[...document.querySelectorAll('.bus-msg')].some(e => e.textContent.includes('first finding, from history'))`, 20*time.Second)
	post("c-2", "<script>window.__pwned=1</script> second finding, live")
	waitJS(t, ctx, `[...document.querySelectorAll('.live .bus-msg')].some(e => e.textContent.includes('<script>window.__pwned=1</script> second finding, live'))`, 20*time.Second)
	if !eval[bool](t, ctx, `window.__pwned === undefined`) {
		t.Fatal("a message body ran")
	}
	screenshot(t, ctx, "bus.png")

	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/notifications?subject=notifications.agent.*")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.querySelector('.conn')?.dataset.state === 'live'`, 20*time.Second)
	env := envelope.Envelope{EventID: envelope.NewEventID(), Source: envelope.SourceAgent, SourceEventID: "e-1",
		Topic: "notifications.agent.ses_1", DedupeKey: "k-1", IssuedAt: 1760000000000,
		PayloadSummary: "build finished <b>green</b>", Payload: `{"n":1}`, TraceID: "trace-1"}
	r.post(t, "/v1/notifications", "application/json", env.AppendJSON(nil))
	waitJS(t, ctx, `[...document.querySelectorAll('.envelope')].some(e => e.textContent.includes('build finished <b>green</b>') && e.textContent.includes('notifications.agent.ses_1'))`, 20*time.Second)
	screenshot(t, ctx, "notifications.png")
}

// TestBrowserOpenFile: /open lists the invalid lines of a transcript with the messages of
// `events validate` and renders the rest, without a request to the server.
func TestBrowserOpenFile(t *testing.T) {
	ctx := tab(t)
	r := startRelay(t, t.TempDir(), "127.0.0.1:0")
	file, err := filepath.Abs(filepath.Join("runview", "testdata", "mixed.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("runview", "testdata", "mixed.validate.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/open")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(`#file`, []string{file})); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `!!window.__agentwire && !!window.__agentwire.errors`, 20*time.Second)
	got := eval[string](t, ctx, `[...document.querySelectorAll('.invalid-lines li')].map(e => e.textContent + '\n').join('')`)
	if got != string(want) {
		t.Fatalf("invalid lines:\n%s\nwant\n%s", got, want)
	}
	if n := eval[float64](t, ctx, `window.__agentwire.patch.applied`); n == 0 {
		t.Fatal("nothing applied")
	}
}

// TestBrowserStreamedMessage: a long message streamed live in thousands of small deltas (a
// reasoning block, then text past the length shown at first, another message interleaved)
// ends with the snapshot's text, and the page updated it in place: the same message element
// and the same text node throughout, no node removed from the messages, text appended over
// many frames.
func TestBrowserStreamedMessage(t *testing.T) {
	ctx := tab(t)
	r := startRelay(t, t.TempDir(), "127.0.0.1:0")
	seq := 0
	ev := func(typ, payload string) []byte {
		seq++
		return []byte(fmt.Sprintf(`{"type":%q%s,"protocolVersion":1,"eventId":"s:%d","runId":"stream-1","sessionId":"s","phaseId":"p","logicalSequence":%d,"sequence":%d,"timestamp":"2025-01-01T00:00:00.000Z"}`, typ, payload, seq, seq, seq))
	}
	delta := func(id, typ, text string) []byte {
		b, _ := json.Marshal(text)
		return ev("message.part.delta", fmt.Sprintf(`,"messageId":%q,"part":{"type":%q,"text":%s}`, id, typ, b))
	}
	words := []string{"stream ", "of ", "text, ", "déjà ", "vu ", "日本語 ", "🙂 ", "line\n", "<b>not bold</b> ", "and "}
	var ls [][]byte
	ls = append(ls, ev("run.started", ""), ev("message.started", `,"messageId":"m-long","role":"assistant"`))
	for i := 0; i < 100; i++ {
		ls = append(ls, delta("m-long", "reasoning", words[i%len(words)]))
	}
	for i := 0; i < 3600; i++ {
		ls = append(ls, delta("m-long", "text", fmt.Sprintf("%d:%s", i, words[i%len(words)])))
		if i == 1800 {
			ls = append(ls, ev("message.started", `,"messageId":"m-other","role":"user"`))
		}
		if i > 1800 && i%100 == 0 {
			ls = append(ls, delta("m-other", "text", words[i%len(words)]))
		}
	}
	ls = append(ls, ev("run.completed", `,"finishReason":"stop","content":[]`))

	r.send(t, "stream-1", ls[:1])
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/runs/stream-1")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.querySelector('.conn')?.dataset.state === 'live'`, 20*time.Second)
	r.send(t, "stream-1", ls[1:150])
	waitJS(t, ctx, `!!document.querySelector('[data-message-id="m-long"] .part-text')`, 20*time.Second)
	eval[bool](t, ctx, `(() => {
		const msg = document.querySelector('[data-message-id="m-long"]');
		const w = window.__stream = { msg, node: msg.querySelector('.part-text').firstChild, removed: [], texts: 0 };
		new MutationObserver((records) => {
			for (const m of records) {
				for (const n of m.removedNodes) w.removed.push(n.nodeName + '.' + (n.className || '') + ' from ' + m.target.nodeName + '.' + m.target.className);
				if (m.type === 'characterData' && w.msg.contains(m.target)) w.texts++; // text or the count of the rest
			}
		}).observe(document.querySelector('.messages'), { childList: true, subtree: true, characterData: true });
		return true; })()`)
	for i := 150; i < len(ls); i += 40 {
		r.send(t, "stream-1", ls[i:min(i+40, len(ls))])
		time.Sleep(10 * time.Millisecond)
	}
	waitJS(t, ctx, pageTerminal, 30*time.Second)

	msgs := r.snapshot(t, "stream-1")["messages"].([]any)
	want := renderedText(msgs)
	wantLong, _ := json.Marshal(renderedText(msgs[:1]))
	if !eval[bool](t, ctx, `(() => {
		const w = window.__stream, msg = document.querySelector('[data-message-id="m-long"]');
		const p = msg.querySelector('.part-text');
		return msg === w.msg && p.firstChild === w.node && p.childNodes.length === 1; })()`) {
		t.Fatal("the streamed message's element or text node was replaced")
	}
	if n := eval[float64](t, ctx, `window.__agentwire.travel.stats.resyncs`); n != 0 {
		t.Fatalf("%v patches did not follow what the page showed", n)
	}
	if removed := eval[string](t, ctx, `JSON.stringify(window.__stream.removed)`); removed != "[]" {
		t.Fatalf("nodes removed from the messages while streaming: %s", removed)
	}
	if n := eval[float64](t, ctx, `window.__stream.texts`); n < 5 {
		t.Fatalf("the message's text changed %v times: the stream did not arrive over many frames", n)
	} else {
		t.Logf("the message's text changed in place %v times", n)
	}
	// Past the length shown at first, the rest waits behind a button that counts it.
	if !eval[bool](t, ctx, fmt.Sprintf(`(() => {
		const want = %s, p = document.querySelector('[data-message-id="m-long"] .part-text');
		const shown = p.textContent, more = p.nextElementSibling;
		return shown.length >= 19999 && shown.length <= 20000 && want.startsWith(shown) &&
			more.classList.contains('show-all') && more.textContent === 'Show the remaining ' + (want.length - shown.length).toLocaleString() + ' characters'; })()`, wantLong)) {
		t.Fatal("the long text block does not show its first 20,000 characters and a button for the rest")
	}
	eval[bool](t, ctx, `(document.querySelector('[data-message-id="m-long"] .show-all').click(), true)`)
	if got := eval[string](t, ctx, pageText); got != want {
		t.Fatalf("rendered text differs from the snapshot's (%d vs %d bytes)", len(got), len(want))
	}
	if !eval[bool](t, ctx, `document.querySelector('[data-message-id="m-long"] .part-reasoning').textContent.length > 500 && document.querySelectorAll('[data-message-id="m-long"] .part-text').length === 1`) {
		t.Fatal("the reasoning block or the single text block is missing")
	}
}
