// The relay API (relay.md §2), same origin. In auth mode the token (kept in sessionStorage
// only, viewer.md §3) goes in an Authorization header; EventSource cannot send headers, so SSE
// is read with fetch() and a streaming body reader.

const TOKEN_KEY = 'agentwire.token';

export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
  window.dispatchEvent(new Event('agentwire-token'));
}

// authMode: a token is set, or the relay answered 401 (it is not in local mode). Media from
// content is then not fetched automatically (viewer.md §2).
let sawUnauthorized = false;
export function authMode() {
  return !!token() || sawUnauthorized;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers(extra) {
  const h = new Headers(extra || {});
  const t = token();
  if (t) h.set('Authorization', `Bearer ${t}`);
  return h;
}

async function failure(res) {
  let code = 'http_' + res.status;
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch {
    // not the relay's error body
  }
  if (res.status === 401) {
    sawUnauthorized = true;
    window.dispatchEvent(new Event('agentwire-unauthorized'));
  }
  return new ApiError(res.status, code, message);
}

export async function getText(path, signal) {
  const res = await fetch(path, { headers: headers(), signal, cache: 'no-store' });
  if (!res.ok) throw await failure(res);
  return res.text();
}

export async function getJSON(path, signal) {
  return JSON.parse(await getText(path, signal));
}

// readSSE opens an SSE stream and calls onFrame({id, event, data}) for each frame and
// onComment(text) for each comment line, until the stream ends (resolves) or fails (rejects).
// onOpen() runs once the answer's headers are in.
export async function readSSE(path, { lastEventId, signal, onOpen, onFrame, onComment }) {
  const h = headers({ Accept: 'text/event-stream' });
  if (lastEventId !== undefined && lastEventId !== null && lastEventId !== '') h.set('Last-Event-ID', String(lastEventId));
  const res = await fetch(path, { headers: h, signal, cache: 'no-store' });
  if (!res.ok) throw await failure(res);
  if (onOpen) onOpen();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let frame = { id: null, event: 'message', data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf('\n', start);
      if (nl < 0) break;
      let line = buf.slice(start, nl);
      start = nl + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (frame.data.length > 0) onFrame({ id: frame.id, event: frame.event, data: frame.data.join('\n') });
        frame = { id: null, event: 'message', data: [] };
        continue;
      }
      if (line.startsWith(':')) {
        if (onComment) onComment(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? '' : line.slice(colon + 1);
      if (val.startsWith(' ')) val = val.slice(1);
      if (field === 'id') frame.id = val;
      else if (field === 'event') frame.event = val;
      else if (field === 'data') frame.data.push(val);
    }
    buf = buf.slice(start);
  }
}

// Follower keeps an SSE stream open: it reconnects with backoff (0.25 s doubling to 5 s) from
// the cursor cursor() gives, until stop() or until ended() (which may return a promise) says
// the stream is done.
// onState({state: 'connecting'|'live'|'reconnecting'|'ended'|'error', cursor, attempt, delay,
// error}) reports what a person should see.
export class Follower {
  constructor({ path, cursor, onFrame, onState, ended, onComment }) {
    Object.assign(this, { path, cursor, onFrame, onState, ended, onComment });
    this.ctrl = null;
    this.stopped = false;
    this.attempt = 0;
  }

  start() {
    this.loop();
    return this;
  }

  stop() {
    this.stopped = true;
    if (this.ctrl) this.ctrl.abort();
    if (this.timer) clearTimeout(this.timer);
  }

  async loop() {
    while (!this.stopped) {
      this.ctrl = new AbortController();
      const cursor = this.cursor();
      this.onState({ state: this.attempt === 0 ? 'connecting' : 'reconnecting', cursor, attempt: this.attempt });
      let failed = null;
      try {
        await readSSE(this.path, {
          lastEventId: cursor,
          signal: this.ctrl.signal,
          onOpen: () => { this.attempt = 0; this.onState({ state: 'live', cursor }); },
          onFrame: (f) => this.onFrame(f),
          onComment: this.onComment,
        });
      } catch (e) {
        failed = e;
      }
      if (this.stopped) return;
      if (this.ended && await this.ended()) {
        this.onState({ state: 'ended', cursor: this.cursor() });
        return;
      }
      if (failed instanceof ApiError && failed.status !== 503 && failed.status !== 429) {
        this.onState({ state: 'error', error: failed, cursor: this.cursor() });
        return;
      }
      this.attempt++;
      const delay = Math.min(5000, 250 * 2 ** (this.attempt - 1));
      this.onState({ state: 'reconnecting', cursor: this.cursor(), attempt: this.attempt, delay, error: failed });
      await new Promise((r) => { this.timer = setTimeout(r, delay); });
    }
  }
}
