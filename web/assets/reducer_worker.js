// The reducer's thread: a dedicated worker that runs the Go events reducer compiled to
// WebAssembly (viewer.md §4), so that reducing a fast stream or a long run never holds the
// page's thread. It answers each message {id, fn, args} of reducer.js with {id, result} or
// {id, error}, in the order the messages came (a session's calls apply in order).
import './wasm_exec.js';

const api = (async () => {
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

// Calls wait for the module in the order they came, then run one after another.
let last = api;
self.onmessage = (e) => {
  const { id, fn, args } = e.data;
  last = last.then(async () => {
    let reply;
    try {
      const r = (await api)[fn](...args);
      // A bad call comes back as an Error value (see web/wasm), not as a throw.
      reply = r instanceof Error ? { id, error: r.message } : { id, result: r === undefined ? null : r };
    } catch (err) {
      reply = { id, error: String((err && err.message) || err) };
    }
    self.postMessage(reply);
  });
};
