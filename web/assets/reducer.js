// The Go events reducer compiled to WebAssembly (viewer.md §4), run in a worker
// (reducer_worker.js) so that the page's thread only renders: a fast stream or a long run's
// history is reduced beside the page instead of in its frames. Every call is asynchronous and
// the worker answers in the order of the calls, so a session's results come in order.

// Reducer is the worker, shared by the pages of one tab.
class Reducer {
  constructor() {
    this.worker = new Worker(new URL('./reducer_worker.js', import.meta.url), { type: 'module' });
    this.next = 1;
    this.calls = new Map(); // id → {resolve, reject}
    this.worker.onmessage = (e) => {
      const c = this.calls.get(e.data.id);
      this.calls.delete(e.data.id);
      if ('error' in e.data) c.reject(new Error(e.data.error)); else c.resolve(e.data.result);
    };
    this.worker.onerror = (e) => {
      const err = new Error(`the reducer did not start: ${e.message || 'worker error'}`);
      for (const c of this.calls.values()) c.reject(err);
      this.calls.clear();
    };
  }

  // call runs a function of the WebAssembly API (see web/wasm) with arguments (numbers,
  // strings, or a Uint8Array, which is copied).
  call(fn, ...args) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      this.worker.postMessage({ id, fn, args });
    });
  }
}

let shared = null;

// reducer returns the tab's reducer worker, started on first use.
export function reducer() {
  if (!shared) shared = new Reducer();
  return shared;
}

// Session is one reducer session in the worker (web/runview.Session).
export class Session {
  constructor(r, id) {
    this.r = r;
    this.id = id;
  }

  // open creates a session caching a state every k events.
  static async open(k) {
    const r = reducer();
    return new Session(r, await r.call('newSession', k || 256));
  }

  async apply(text) { return JSON.parse(await this.r.call('apply', this.id, text)); }
  async applyFile(bytes) { return JSON.parse(await this.r.call('applyFile', this.id, bytes)); }
  load(text) { return this.r.call('load', this.id, text); }
  async view() { return JSON.parse(await this.r.call('view', this.id)); }
  async viewAt(n) { return JSON.parse(await this.r.call('viewAt', this.id, n)); }
  snapshot() { return this.r.call('snapshot', this.id); }
  snapshotAt(n) { return this.r.call('snapshotAt', this.id, n); }
  async info() { return JSON.parse(await this.r.call('info', this.id)); }
  free() { return this.r.call('free', this.id); }
}

// validateFile is `events validate` of a transcript: [{line, message}].
export async function validateFile(bytes) {
  return JSON.parse(await reducer().call('validateFile', bytes));
}
