// The run page (/runs/{runId}, viewer.md §1 and §5) and the transcript view shared with /open:
// the rendered state, the time-travel scrubber and the timeline.
import { h, clear } from './dom.js';
import { getText, Follower, ApiError } from './api.js';
import { reducer, Session } from './reducer.js';
import { RunView, Timeline, viewFromSnapshot, isTerminal } from './render.js';

// Work per animation frame: events are reduced and rendered in chunks until this many
// milliseconds have passed, the rest waits for the next frame; so a burst or the replay of a
// long run is spread over frames and the page keeps answering input.
const FRAME_BUDGET_MS = 8;
// Chunk sizes: the next chunk is sized from the time the last ones took per event.
const MIN_CHUNK = 16;
const MAX_CHUNK = 2000;
// A finished run with at most this many events loads its events for time travel at once;
// a longer one on request.
const AUTO_HISTORY = 20000;

// Travel is a run's state over time: a reducer session holding every event from the first,
// the timeline entries, the scrubber, and the RunView it renders into.
export class Travel {
  constructor(container, { onSeek } = {}) {
    this.entries = [];
    this.at = null; // logical sequence shown; null = the latest state
    this.onSeek = onSeek;
    this.range = h('input', { type: 'range', min: '0', max: '0', value: '0', step: '1', id: 'scrubber', 'aria-describedby': 'scrub-label', disabled: true });
    this.label = h('output', { id: 'scrub-label', for: 'scrubber' }, 'latest');
    this.liveBtn = h('button', { type: 'button', class: 'primary', onclick: () => this.seek(null) }, 'Latest');
    this.range.addEventListener('input', () => {
      const c = Number(this.range.value);
      this.seek(c >= this.entries.length ? null : this.seqAt(c));
    });
    this.extra = h('div', { class: 'travel-extra' });
    this.banner = h('p', { class: 'travel-banner', role: 'status', hidden: true });
    const travel = h('section', { class: 'panel travel', 'aria-labelledby': 'h-travel' },
      h('h2', { id: 'h-travel' }, 'Time travel'),
      h('div', { class: 'scrub' },
        h('label', { for: 'scrubber' }, 'Events applied'),
        this.range,
        h('button', { type: 'button', onclick: () => this.step(-1), 'aria-label': 'One event earlier' }, '◀'),
        h('button', { type: 'button', onclick: () => this.step(1), 'aria-label': 'One event later' }, '▶'),
        this.liveBtn),
      this.label, this.extra);
    this.viewRoot = h('div', { class: 'run-view' });
    this.timelineRoot = h('section', { class: 'panel timeline', 'aria-labelledby': 'h-timeline' }, h('h2', { id: 'h-timeline' }, 'Timeline'));
    container.append(this.banner, h('div', { class: 'run-layout' }, this.viewRoot, h('aside', { class: 'side' }, travel, this.timelineRoot)));
    this.view = new RunView(this.viewRoot);
    this.timeline = new Timeline(this.timelineRoot, { onPick: (seq) => this.seek(seq) });
    this.keys = (e) => {
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.key === '[') { this.step(-1); e.preventDefault(); }
      if (e.key === ']') { this.step(1); e.preventDefault(); }
      if (e.key === 'l') { this.seek(null); e.preventDefault(); }
    };
    document.addEventListener('keydown', this.keys);
  }

  destroy() { document.removeEventListener('keydown', this.keys); }

  // count is how many timeline entries have logicalSequence ≤ seq.
  count(seq) {
    if (seq === null) return this.entries.length;
    return this.timeline.indexOf(seq) + 1;
  }

  seqAt(c) { return c <= 0 ? 0 : this.entries[Math.min(c, this.entries.length) - 1].logicalSequence; }

  step(d) {
    if (!this.session || this.entries.length === 0) return;
    const c = Math.max(0, Math.min(this.entries.length, this.count(this.at) + d));
    this.seek(c >= this.entries.length ? null : this.seqAt(c));
  }

  // seek shows the state at logical sequence seq (null: the latest state).
  seek(seq) {
    if (seq !== null && this.onNeed && !this.session) {
      this.onNeed(seq);
      return;
    }
    this.at = seq;
    if (this.session) {
      if (seq === null) this.view.render(this.session.view());
      else this.view.render(this.session.viewAt(seq));
    }
    this.sync();
    if (this.onSeek) this.onSeek(seq);
  }

  // sync updates the scrubber, the banner and the timeline marker.
  sync() {
    const n = this.entries.length;
    this.range.max = String(n);
    this.range.disabled = !this.session || n === 0;
    const c = this.count(this.at);
    this.range.value = String(c);
    const last = n ? this.entries[n - 1].logicalSequence : 0;
    if (this.at === null) {
      this.label.textContent = n ? `latest: ${n} events, logical sequence ${last}` : 'no events yet';
      this.banner.hidden = true;
    } else {
      this.label.textContent = `at logical sequence ${this.at}: ${c} of ${n} events`;
      this.banner.hidden = false;
      // In place: a live stream updates the counts every frame, and the button keeps its focus.
      if (!this.bannerText) {
        this.bannerText = document.createTextNode('');
        this.banner.append(this.bannerText, h('button', { type: 'button', class: 'link', onclick: () => this.seek(null) }, 'Back to the latest state'));
      }
      this.bannerText.data = `Time travel: showing the run as of logical sequence ${this.at} (${c} of ${n} events). `;
    }
    this.timeline.setCurrent(this.at);
  }

  // take takes a patch from the session: new timeline entries, and the rendered state when
  // showing the latest state (the whole view when the patch does not follow what is shown).
  take(p) {
    for (const e of p.events) this.entries.push(e);
    if (this.at === null && !this.view.patch(p)) this.view.render(this.session.view());
  }

  // show brings the timeline and the scrubber up to date (once per frame, after take): one
  // timeline draw, which appends the new rows.
  show() {
    this.timeline.entries = this.entries;
    this.sync();
  }

  // applied is take and show.
  applied(p) {
    this.take(p);
    this.show();
  }
}

// runPage renders /runs/{runId}.
export async function runPage(main, runId, params, setTitle) {
  setTitle(`Run ${runId}`);
  const conn = h('p', { class: 'conn', role: 'status', 'aria-live': 'polite' }, 'Loading…');
  const problems = h('div', { class: 'problems', role: 'alert' });
  main.append(h('h1', null, 'Run ', h('code', null, runId)), conn, problems);
  const travel = new Travel(main, {
    onSeek: (seq) => {
      const u = new URL(location.href);
      if (seq === null) u.searchParams.delete('at'); else u.searchParams.set('at', String(seq));
      history.replaceState(history.state, '', u);
    },
  });
  // queue holds SSE data lines not yet reduced, from queue[head] on.
  const state = { stopped: false, follower: null, timer: null, queue: [], head: 0, frame: 0, terminal: false, msPerLine: 0.05 };
  const path = `/v1/runs/${encodeURIComponent(runId)}`;
  const api = reducer();
  const atParam = params.get('at');
  const wantAt = atParam !== null && /^\d+$/.test(atParam) ? Number(atParam) : null;

  const mark = (label) => {
    window.__agentwire = window.__agentwire || {};
    window.__agentwire[label] = performance.now(); // ms since navigation start
  };
  window.__agentwire = { travel, runId };

  // The snapshot first: a finished run renders from it at once.
  let snap = null;
  for (;;) {
    try {
      snap = JSON.parse(await getText(path));
      mark('snapshotLoaded');
      break;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        conn.textContent = `No run ${runId} yet; checking again every 2 seconds.`;
        await new Promise((r) => { state.timer = setTimeout(r, 2000); });
        if (state.stopped) return () => {};
        continue;
      }
      conn.textContent = `Cannot load the run: ${e.message}`;
      return () => { travel.destroy(); };
    }
  }

  // Fetch stored events (NDJSON pages) into the session until logical sequence upTo. The page
  // keeps showing the finished run's snapshot meanwhile (the caller seeks when done), so only
  // the timeline follows.
  const loadHistory = async (upTo) => {
    const s = travel.session;
    for (;;) {
      const last = JSON.parse(s.api.info(s.id)).last;
      if (upTo !== null && last >= upTo) return;
      const text = await getText(`${path}/events?after=${last}&limit=10000`);
      if (!text.trim()) return;
      const p = s.apply(text);
      for (const e of p.events) travel.entries.push(e);
      travel.show();
      if (p.refusal) { showRefusal(p.refusal); return; }
      if (p.applied === 0) return;
    }
  };
  const showRefusal = (r) => {
    clear(problems).append(h('p', null, `The reducer refused an event (${r.kind}): ${r.message}`));
  };

  if (isTerminal(snap.status)) {
    travel.view.render(viewFromSnapshot(snap));
    mark('firstRender');
    state.terminal = true;
    const n = snap.meta ? snap.meta.eventCount : (snap.eventIds || []).length;
    conn.textContent = `Ended: ${snap.status}.`;
    const startHistory = async (upTo) => {
      clear(travel.extra).append(h('p', { class: 'muted' }, `Loading ${n.toLocaleString()} events for time travel…`));
      travel.session = new Session(await api, 256);
      await loadHistory(null);
      clear(travel.extra);
      mark('historyLoaded');
      travel.seek(upTo);
    };
    travel.onNeed = (seq) => { travel.onNeed = null; startHistory(seq); };
    if (wantAt !== null || n <= AUTO_HISTORY) {
      travel.onNeed = null;
      startHistory(wantAt);
    } else {
      travel.extra.append(h('button', { type: 'button', onclick: () => { travel.onNeed = null; startHistory(null); } },
        `Load the ${n.toLocaleString()} events for time travel`));
    }
    return () => { state.stopped = true; travel.destroy(); };
  }

  // A live run: reduce every event from the first (SSE replay, then live), batched per
  // animation frame.
  travel.session = new Session(await api, 256);
  travel.view.render(travel.session.view());
  mark('firstRender');
  let pendingAt = wantAt;
  // What flushing cost so far (the measurement test reads it): frames, events, script time
  // reducing (WebAssembly, patch JSON), rendering messages and tools, and updating the
  // timeline and scrubber; the longest flush.
  const stats = { frames: 0, events: 0, reduceMs: 0, renderMs: 0, showMs: 0, maxFrameMs: 0 };
  window.__agentwire.stats = stats;
  const queued = () => state.queue.length - state.head;
  // flush reduces and renders queued events: within the frame budget, or all of them.
  const flush = (all) => {
    state.frame = 0;
    if (state.stopped || queued() === 0) return;
    const t0 = performance.now();
    let p = null;
    do {
      const left = FRAME_BUDGET_MS - (performance.now() - t0);
      const n = all === true ? MAX_CHUNK : Math.max(MIN_CHUNK, Math.min(MAX_CHUNK, Math.floor(left / state.msPerLine)));
      const batch = state.queue.slice(state.head, state.head + n);
      state.head += batch.length;
      const t1 = performance.now();
      p = travel.session.apply(batch.join('\n'));
      const t2 = performance.now();
      travel.take(p);
      const t3 = performance.now();
      // What an event costs here (reduce, cross to JS, render), smoothed over chunks.
      state.msPerLine = 0.7 * state.msPerLine + 0.3 * Math.max(0.001, (t3 - t1) / batch.length);
      stats.events += batch.length;
      stats.reduceMs += t2 - t1;
      stats.renderMs += t3 - t2;
      if (p.refusal) {
        showRefusal(p.refusal);
        break;
      }
    } while (queued() > 0 && (all === true || performance.now() - t0 < FRAME_BUDGET_MS));
    if (state.head > 4096 && state.head * 2 > state.queue.length) {
      state.queue = state.queue.slice(state.head);
      state.head = 0;
    }
    const t4 = performance.now();
    travel.show();
    const t5 = performance.now();
    stats.frames++;
    stats.showMs += t5 - t4;
    stats.maxFrameMs = Math.max(stats.maxFrameMs, t5 - t0);
    if (queued()) state.frame = requestAnimationFrame(flush);
    if (pendingAt !== null && travel.entries.length && travel.entries[travel.entries.length - 1].logicalSequence >= pendingAt) {
      const at = pendingAt;
      pendingAt = null;
      travel.seek(at);
    }
    state.terminal = isTerminal(p.head.status);
  };
  const head = () => travel.view.head || { lastLogicalSequence: 0 };
  const cursor = () => {
    // The last event reduced, or queued to be: the stream resumes after it.
    if (queued()) {
      const lastLine = state.queue[state.queue.length - 1];
      try { return JSON.parse(lastLine).logicalSequence; } catch { /* fall through */ }
    }
    return head().lastLogicalSequence;
  };
  state.follower = new Follower({
    path: `${path}/events`,
    cursor,
    onFrame: (f) => {
      state.queue.push(f.data);
      if (!state.frame) state.frame = requestAnimationFrame(flush);
    },
    ended: () => {
      if (queued()) {
        if (state.frame) cancelAnimationFrame(state.frame);
        flush(true);
      }
      return isTerminal(head().status);
    },
    onState: (s) => {
      if (s.state === 'live') conn.textContent = `Live — following from logical sequence ${s.cursor}.`;
      else if (s.state === 'connecting') conn.textContent = 'Connecting…';
      else if (s.state === 'reconnecting') {
        conn.textContent = s.delay === undefined
          ? `Reconnecting from logical sequence ${s.cursor} (attempt ${s.attempt})…`
          : `Connection lost${s.error ? ` (${s.error.message})` : ''}; reconnecting from logical sequence ${s.cursor} in ${(s.delay / 1000).toFixed(2)} s (attempt ${s.attempt}).`;
        conn.dataset.reconnects = String(Number(conn.dataset.reconnects || 0) + (s.delay === undefined ? 0 : 1));
      } else if (s.state === 'ended') conn.textContent = `Ended: ${head().status}.`;
      else if (s.state === 'error') conn.textContent = `Stopped: ${s.error.message}`;
      conn.dataset.state = s.state;
    },
  }).start();
  return () => {
    state.stopped = true;
    if (state.follower) state.follower.stop();
    if (state.frame) cancelAnimationFrame(state.frame);
    clearTimeout(state.timer);
    travel.destroy();
  };
}
