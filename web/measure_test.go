package web_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentwire/agentwire/events/synth"
)

// TestViewerMeasurements logs the viewer's figures (set AGENTWIRE_VIEWER_MEASURE=1; it sends
// 100,000 events): page weight compressed, time to first render of a finished 100,000-event
// run, and whether a 1,000 events/s live stream keeps the page responsive: frames per second,
// the gaps between animation frames (p50, p95, longest) and the long tasks while it streams,
// and when the page had rendered every event. Measurements, not assertions — except that the
// page must end showing the snapshot's text.
func TestViewerMeasurements(t *testing.T) {
	if os.Getenv("AGENTWIRE_VIEWER_MEASURE") != "1" {
		t.Skip("set AGENTWIRE_VIEWER_MEASURE=1 to measure the viewer")
	}
	v := viewer(t)
	// Page weight: the shell and every asset it reaches, gzip as served.
	total, seen := 0, map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Accept-Encoding", "gzip")
		w := httptest.NewRecorder()
		v.ServeHTTP(w, r)
		total += w.Body.Len()
		t.Logf("  %-40s %8d bytes (gzip)", path, w.Body.Len())
		plain := get(t, v, "GET", path, nil).Body.String()
		for _, m := range regexp.MustCompile(`["'](?:\./|/assets/)([A-Za-z0-9_]+\.[0-9a-f]{12}\.(?:js|css|wasm))["']`).FindAllStringSubmatch(plain, -1) {
			walk("/assets/" + m[1])
		}
	}
	walk("/")
	t.Logf("page weight: %d bytes compressed (%d files)", total, len(seen))

	ctx := tab(t)
	r := startRelay(t, t.TempDir(), "127.0.0.1:0")
	data, err := synth.BytesWith(100000, 7, synth.Options{Profile: synth.ProfileRich, Ending: synth.EndingCompleted, RunID: "big-1"})
	if err != nil {
		t.Fatal(err)
	}
	ls := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i := 0; i < len(ls); i += 10000 {
		r.send(t, "big-1", ls[i:min(i+10000, len(ls))])
	}
	for i := 0; i < 3; i++ {
		if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/runs/big-1")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, `!!window.__agentwire && window.__agentwire.firstRender !== undefined`, 60*time.Second)
		ms := eval[float64](t, ctx, `window.__agentwire.firstRender`)
		fetched := eval[float64](t, ctx, `window.__agentwire.snapshotFetched ?? -1`)
		parsed := eval[float64](t, ctx, `window.__agentwire.snapshotLoaded ?? -1`)
		n := eval[float64](t, ctx, `document.querySelectorAll('.message').length`)
		t.Logf("finished 100,000-event run: first render %.0f ms after navigation start (snapshot fetched at %.0f ms, parsed at %.0f ms; %v messages rendered)", ms, fetched, parsed, n)
	}

	// 1,000 events/s live for 5 s.
	live := lines(t, 5000, 8, synth.EndingCompleted, "rate-1")
	r.send(t, "rate-1", live[:1])
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/runs/rate-1")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.querySelector('.conn')?.dataset.state === 'live'`, 20*time.Second)
	eval[bool](t, ctx, `(() => {
		const m = window.__measure = { long: [], gaps: [], start: performance.now(), last: performance.now() };
		new PerformanceObserver((l) => { for (const e of l.getEntries()) if (!m.stop) m.long.push(e.duration); }).observe({ type: 'longtask' });
		const tick = (now) => { if (m.stop) return; m.gaps.push(now - m.last); m.last = now; requestAnimationFrame(tick); };
		requestAnimationFrame(tick);
		return true; })()`)
	start := time.Now()
	for i := 1; i < len(live); i += 50 {
		r.send(t, "rate-1", live[i:min(i+50, len(live))])
		if d := time.Until(start.Add(time.Duration(i+49) * time.Millisecond)); d > 0 {
			time.Sleep(d)
		}
	}
	sent := time.Since(start)
	waitJS(t, ctx, `window.__agentwire.travel.entries.length === 5000 && (window.__agentwire.travel.pending || []).length === 0 && !window.__agentwire.travel.frameId`, 30*time.Second)
	caught := time.Since(start)
	res := eval[string](t, ctx, `(() => {
		const m = window.__measure; m.stop = true;
		const g = [...m.gaps].sort((a, b) => a - b), q = (f) => g[Math.min(g.length - 1, Math.floor(f * g.length))].toFixed(1);
		const secs = (performance.now() - m.start) / 1000;
		return 'frames ' + (g.length / secs).toFixed(1) + '/s, gap between frames p50 ' + q(0.5) + ' ms p95 ' + q(0.95) + ' ms max ' + g[g.length - 1].toFixed(1) +
			' ms; long tasks ' + m.long.length + ' (longest ' + Math.max(0, ...m.long).toFixed(0) + ' ms, ' + m.long.filter((d) => d > 100).length + ' over 100 ms)' +
			(window.__agentwire.travel.stats ? '; rendering ' + JSON.stringify(window.__agentwire.travel.stats, (k, v) => typeof v === 'number' ? Math.round(v) : v) : ''); })()`)
	t.Logf("live stream: 5,000 events sent in %v (%.0f events/s); the page had all of them %v after the first; %s", sent.Round(time.Millisecond), 4999/sent.Seconds(), caught.Round(time.Millisecond), res)
	waitJS(t, ctx, pageTerminal, 30*time.Second)
	if got, want := eval[string](t, ctx, pageText), renderedText(r.snapshot(t, "rate-1")["messages"].([]any)); got != want {
		t.Errorf("after the stream the page shows other text than the snapshot (%d vs %d bytes)", len(got), len(want))
	}
}
