// Runs calls through the committed WebAssembly reducer under node, as a browser page would:
// wasm_exec.js from the same Go release, then the module, then globalThis.agentwireReducer.
// stdin: {"wasm": path, "exec": path, "calls": [[fn, arg...], ...]} where an argument is a
// number, a string, or {"hex": "..."} for bytes (a Uint8Array). stdout: the JSON array of
// results (string, number or null), or {"error": "..."} when a call threw.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const input = JSON.parse(readFileSync(0, 'utf8'));
await import(pathToFileURL(input.exec).href);
const ready = new Promise((resolve) => { globalThis.agentwireReducerReady = resolve; });
const go = new globalThis.Go();
const { instance } = await WebAssembly.instantiate(readFileSync(input.wasm), go.importObject);
go.run(instance);
await ready;
const api = globalThis.agentwireReducer;
const out = [];
for (const [fn, ...args] of input.calls) {
  const conv = args.map((a) => (a !== null && typeof a === 'object' ? Uint8Array.from(Buffer.from(a.hex, 'hex')) : a));
  try {
    const r = api[fn](...conv);
    out.push(r === undefined ? null : r);
  } catch (e) {
    process.stdout.write(JSON.stringify({ error: `${fn}: ${e}` }), () => process.exit(1));
    await new Promise(() => {});
  }
}
// Exit only once the pipe took everything (a pipe write is asynchronous in node).
process.stdout.write(JSON.stringify(out), () => process.exit(0));
