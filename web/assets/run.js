// The run page (/runs/{runId}, viewer.md §1 and §5) and the transcript view shared with /open:
// the rendered state, the time-travel scrubber and the timeline.
import { h, clear } from './dom.js';
import { getText, Follower, ApiError } from './api.js';
import { Session } from './reducer.js';
import { RunView, Timeline, viewFromSnapshot, isTerminal } from './render.js';

// Rendering work per animation frame: patches are rendered until this many milliseconds have
// passed, the rest waits for the next frame, so a burst or the replay of a long run is spread
// over frames and the page keeps answering input. (Reducing happens in the worker.)
const FRAME_BUDGET_MS = 8;
// Most SSE lines sent to the reducer in one call: a replay of a long run comes back as
// patches of this many events at most, each rendered within a frame or two.
const MAX_BATCH = 1000;
// A finished run with at most this many events loads its events for time travel at once;
// a longer one on request.
const AUTO_HISTORY = 20000;

// Travel is a run's state over time: a reducer session (in the worker) holding every event
// from the first, the timeline entries, the scrubber, and the RunView it renders into.
//
// Patches arrive from the worker in order (received); their timeline entries are taken at
// once, their changes to the rendered state are rendered in animation frames within a time
// budget (frame). A whole view (seek, or a patch that does not follow what is shown) is asked
// of the same worker: it answers after every patch asked for before it, and those patches
// are already in the view, so the ones still waiting are dropped and the ones that arrive
// before the view are not rendered.
export class Travel {
  constructor(container, { onSeek } = {}) {
    this.entries = [];
    this.at = null; // logical sequence shown; null = the latest state
    this.onSeek = onSeek;
    this.pending = []; // patches received, not rendered yet
    this.frameId = 0;
    this.viewToken = 0; // the latest view asked for
    this.awaitingView = false;
    this.renderedAt = undefined; // the `at` of the last whole view rendered (tests wait for it)
    // What rendering cost so far (the measurement test reads it).
    // resyncs counts patches that did not follow what was shown (the whole view was asked for
    // instead); it stays 0 unless something is wrong.
    this.stats = { frames: 0, patches: 0, events: 0, renderMs: 0, maxFrameMs: 0, resyncs: 0 };
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

  destroy() {
    document.removeEventListener('keydown', this.keys);
    if (this.frameId) cancelAnimationFrame(this.frameId);
    this.frameId = 0;
    this.pending = [];
    if (this.session) this.session.free().catch(() => {});
    this.session = null;
  }

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
    this.sync();
    if (this.onSeek) this.onSeek(seq);
    if (this.session) this.refresh();
  }

  // refresh renders the whole view at `at`, asked of the worker; a later refresh wins.
  async refresh() {
    const token = ++this.viewToken;
    const at = this.at;
    this.awaitingView = true;
    this.pending = [];
    let v;
    try {
      v = at === null ? await this.session.view() : await this.session.viewAt(at);
    } catch {
      return; // the session was freed (the page closed)
    }
    if (token !== this.viewToken || !this.session) return;
    this.awaitingView = false;
    if (v.error) {
      this.label.textContent = `cannot show logical sequence ${at}: ${v.error}`;
      return;
    }
    this.view.render(v);
    this.renderedAt = at;
    this.sync();
  }

  // received takes a patch from the worker: its timeline entries now, its changes to the
  // rendered state in the next frames (none while time travel shows an earlier state or a
  // whole view is on its way).
  received(p) {
    for (const e of p.events) this.entries.push(e);
    this.stats.events += p.events.length;
    if (this.at === null && !this.awaitingView) this.pending.push(p);
    if (!this.frameId) this.frameId = requestAnimationFrame(() => this.frame());
  }

  frame() {
    this.frameId = 0;
    const t0 = performance.now();
    while (this.pending.length && performance.now() - t0 < FRAME_BUDGET_MS) {
      const p = this.pending.shift();
      this.stats.patches++;
      if (!this.view.patch(p)) {
        this.stats.resyncs++;
        this.refresh();
        break;
      }
    }
    this.show();
    const ms = performance.now() - t0;
    this.stats.frames++;
    this.stats.renderMs += ms;
    this.stats.maxFrameMs = Math.max(this.stats.maxFrameMs, ms);
    if (this.pending.length) this.frameId = requestAnimationFrame(() => this.frame());
    if (this.afterFrame) this.afterFrame();
  }

  // show brings the timeline and the scrubber up to date.
  show() {
    this.timeline.entries = this.entries;
    this.sync();
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
  const state = { stopped: false, follower: null, timer: null };
  const path = `/v1/runs/${encodeURIComponent(runId)}`;
  const atParam = params.get('at');
  const wantAt = atParam !== null && /^\d+$/.test(atParam) ? Number(atParam) : null;

  const mark = (label) => {
    window.__agentwire = window.__agentwire || {};
    window.__agentwire[label] = performance.now(); // ms since navigation start
  };
  window.__agentwire = { travel, runId };
  const stop = () => {
    state.stopped = true;
    if (state.follower) state.follower.stop();
    clearTimeout(state.timer);
    travel.destroy();
  };

  // The snapshot first: a finished run renders from it at once.
  let snap = null;
  for (;;) {
    try {
      const text = await getText(path);
      mark('snapshotFetched');
      snap = JSON.parse(text);
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
      return stop;
    }
  }
  const showRefusal = (r) => {
    clear(problems).append(h('p', null, `The reducer refused an event (${r.kind}): ${r.message}`));
  };

  if (isTerminal(snap.status)) {
    travel.view.render(viewFromSnapshot(snap));
    mark('firstRender');
    const n = snap.meta ? snap.meta.eventCount : (snap.eventIds || []).length;
    conn.textContent = `Ended: ${snap.status}.`;
    // Fetch the stored events (NDJSON pages) into a session. The page keeps showing the
    // snapshot meanwhile (the finished state), so only the timeline follows; then seek.
    const startHistory = async (upTo) => {
      clear(travel.extra).append(h('p', { class: 'muted' }, `Loading ${n.toLocaleString()} events for time travel…`));
      const s = await Session.open(256);
      if (state.stopped) { s.free(); return; }
      try {
        let last = 0;
        for (;;) {
          const text = await getText(`${path}/events?after=${last}&limit=10000`);
          if (state.stopped || !text.trim()) break;
          const p = await s.apply(text);
          for (const e of p.events) travel.entries.push(e);
          travel.show();
          if (p.refusal) { showRefusal(p.refusal); break; }
          if (p.applied === 0) break;
          last = (await s.info()).last;
        }
      } catch (e) {
        s.free();
        throw e;
      }
      if (state.stopped) { s.free(); return; }
      travel.session = s;
      clear(travel.extra);
      mark('historyLoaded');
      travel.seek(upTo);
    };
    const loadHistory = (upTo) => {
      travel.onNeed = null;
      startHistory(upTo).catch((e) => {
        clear(travel.extra).append(h('p', { class: 'refusal' }, `Cannot load the events for time travel: ${e.message}`));
      });
    };
    travel.onNeed = loadHistory;
    if (wantAt !== null || n <= AUTO_HISTORY) {
      loadHistory(wantAt);
    } else {
      travel.extra.append(h('button', { type: 'button', onclick: () => loadHistory(null) },
        `Load the ${n.toLocaleString()} events for time travel`));
    }
    return stop;
  }

  // A live run: every event from the first (SSE replay, then live) goes to the worker in
  // batches — one call at a time, each taking what arrived meanwhile — and its patches are
  // rendered in animation frames.
  try {
    travel.session = await Session.open(256);
    if (state.stopped) return stop;
    travel.view.render(await travel.session.view());
  } catch (e) {
    conn.textContent = `Cannot start the reducer: ${e.message}`;
    return stop;
  }
  mark('firstRender');
  const pipe = { inbox: [], inflight: null, lastSent: null, idle: [] };
  let pendingAt = wantAt;
  const seqOf = (line) => {
    try { return JSON.parse(line).logicalSequence; } catch { return undefined; }
  };
  const head = () => travel.view.head || { lastLogicalSequence: 0 };
  const send = () => {
    if (pipe.inflight || state.stopped || !travel.session) return;
    if (pipe.inbox.length === 0) {
      for (const r of pipe.idle.splice(0)) r();
      return;
    }
    const batch = pipe.inbox.splice(0, MAX_BATCH);
    pipe.lastSent = batch[batch.length - 1];
    pipe.inflight = travel.session.apply(batch.join('\n')).then((p) => {
      pipe.inflight = null;
      if (state.stopped) return;
      pipe.head = p.head;
      travel.received(p);
      if (p.refusal) showRefusal(p.refusal);
      send();
    }, () => { pipe.inflight = null; });
  };
  travel.afterFrame = () => {
    if (pendingAt !== null && travel.entries.length && travel.entries[travel.entries.length - 1].logicalSequence >= pendingAt) {
      const at = pendingAt;
      pendingAt = null;
      travel.seek(at);
    }
  };
  // The stream resumes after the last event received: queued, in the worker, or applied.
  const cursor = () => {
    if (pipe.inbox.length) {
      const s = seqOf(pipe.inbox[pipe.inbox.length - 1]);
      if (s !== undefined) return s;
    }
    if (pipe.inflight && pipe.lastSent !== null) {
      const s = seqOf(pipe.lastSent);
      if (s !== undefined) return s;
    }
    return (pipe.head || head()).lastLogicalSequence;
  };
  // drained resolves once every event received is reduced.
  const drained = () => new Promise((r) => { pipe.idle.push(r); send(); });
  let sendSoon = false;
  state.follower = new Follower({
    path: `${path}/events`,
    cursor,
    onFrame: (f) => {
      pipe.inbox.push(f.data);
      // The frames of one network read arrive together: send them as one batch.
      if (!sendSoon) {
        sendSoon = true;
        queueMicrotask(() => { sendSoon = false; send(); });
      }
    },
    ended: async () => {
      await drained();
      return isTerminal((pipe.head || head()).status);
    },
    onState: (s) => {
      if (s.state === 'live') conn.textContent = `Live — following from logical sequence ${s.cursor}.`;
      else if (s.state === 'connecting') conn.textContent = 'Connecting…';
      else if (s.state === 'reconnecting') {
        conn.textContent = s.delay === undefined
          ? `Reconnecting from logical sequence ${s.cursor} (attempt ${s.attempt})…`
          : `Connection lost${s.error ? ` (${s.error.message})` : ''}; reconnecting from logical sequence ${s.cursor} in ${(s.delay / 1000).toFixed(2)} s (attempt ${s.attempt}).`;
        conn.dataset.reconnects = String(Number(conn.dataset.reconnects || 0) + (s.delay === undefined ? 0 : 1));
      } else if (s.state === 'ended') conn.textContent = `Ended: ${(pipe.head || head()).status}.`;
      else if (s.state === 'error') conn.textContent = `Stopped: ${s.error.message}`;
      conn.dataset.state = s.state;
    },
  }).start();
  return stop;
}
