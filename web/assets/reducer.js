// The Go events reducer compiled to WebAssembly (viewer.md §4), loaded once per page.
import './wasm_exec.js';

let loading = null;

// reducer resolves to globalThis.agentwireReducer once the module runs (see web/wasm).
export function reducer() {
  if (!loading) {
    loading = (async () => {
      const ready = new Promise((resolve) => { globalThis.agentwireReducerReady = resolve; });
      const go = new globalThis.Go();
      const url = new URL('./reducer.wasm', import.meta.url);
      let instance;
      if (WebAssembly.instantiateStreaming) {
        ({ instance } = await WebAssembly.instantiateStreaming(fetch(url), go.importObject));
      } else {
        const bytes = await (await fetch(url)).arrayBuffer();
        ({ instance } = await WebAssembly.instantiate(bytes, go.importObject));
      }
      go.run(instance);
      await ready;
      return globalThis.agentwireReducer;
    })();
  }
  return loading;
}

// Session wraps one reducer session (web/runview.Session).
export class Session {
  constructor(api, k) {
    this.api = api;
    this.id = api.newSession(k || 256);
  }

  apply(text) { return JSON.parse(this.api.apply(this.id, text)); }
  applyFile(bytes) { return JSON.parse(this.api.applyFile(this.id, bytes)); }
  load(text) { return this.api.load(this.id, text); }
  view() { return JSON.parse(this.api.view(this.id)); }
  viewAt(n) { return JSON.parse(this.api.viewAt(this.id, n)); }
  snapshot() { return this.api.snapshot(this.id); }
  snapshotAt(n) { return this.api.snapshotAt(this.id, n); }
  info() { return JSON.parse(this.api.info(this.id)); }
  free() { this.api.free(this.id); }
}
