// /open: view a local NDJSON transcript. The file is read in the page and reduced by the
// WebAssembly reducer; nothing is sent to the server (viewer.md §1).
import { h, clear } from './dom.js';
import { Session, validateFile } from './reducer.js';
import { Travel } from './run.js';

export function openPage(main, params, setTitle) {
  setTitle('Open a transcript');
  const input = h('input', { type: 'file', id: 'file', accept: '.ndjson,.jsonl,.json,.txt,application/x-ndjson,application/json,text/plain' });
  const drop = h('div', { class: 'drop', tabindex: '0', role: 'button', 'aria-describedby': 'drop-help' },
    h('p', null, 'Drop an NDJSON file here, or choose one: '), h('label', { for: 'file' }, 'Transcript file '), input,
    h('p', { id: 'drop-help', class: 'muted' }, 'Each line is one event. The file stays in this browser: nothing is uploaded.'));
  const summary = h('div', { class: 'open-summary', role: 'status', 'aria-live': 'polite' });
  const invalid = h('section', { class: 'panel invalid', 'aria-labelledby': 'h-invalid', hidden: true });
  const runRoot = h('div');
  main.append(h('h1', null, 'Open a transcript'), drop, summary, invalid, runRoot);
  let travel = null;
  let opened = 0; // the latest file chosen: an earlier one still loading is dropped

  const show = async (file) => {
    const mine = ++opened;
    clear(summary).append(h('p', null, `Reading ${file.name}…`));
    const bytes = new Uint8Array(await file.arrayBuffer());
    const errs = await validateFile(bytes);
    if (mine !== opened) return;
    clear(invalid);
    invalid.hidden = errs.length === 0;
    if (errs.length) {
      invalid.append(h('h2', { id: 'h-invalid' }, `${errs.length} invalid line${errs.length === 1 ? '' : 's'}`),
        h('ol', { class: 'invalid-lines' }, errs.map((e) => h('li', { dataset: { line: String(e.line) } },
          h('code', null, `line ${e.line}: ${e.message}`)))));
    }
    if (travel) travel.destroy();
    clear(runRoot);
    travel = new Travel(runRoot);
    const session = await Session.open(256);
    const p = await session.applyFile(bytes);
    const view = await session.view();
    if (mine !== opened) { session.free(); return; }
    travel.session = session;
    travel.view.render(view);
    for (const e of p.events) travel.entries.push(e);
    travel.show();
    const parts = [`${file.name}: ${p.applied} events applied`];
    if (p.duplicates) parts.push(`${p.duplicates} exact duplicates`);
    if (errs.length) parts.push(`${errs.length} invalid lines skipped`);
    clear(summary).append(h('p', null, parts.join(', ') + '.'));
    if (p.refusal) {
      summary.append(h('p', { class: 'refusal', role: 'alert' }, h('code', null, `line ${p.refusal.line}: ${p.refusal.message}`),
        ' — the reducer stopped there; the state shown is the one before that line.'));
    }
    window.__agentwire = { travel, errors: errs, patch: p };
  };
  input.addEventListener('change', () => { if (input.files[0]) show(input.files[0]); });
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const f = e.dataTransfer.files[0];
    if (f) show(f);
  });
  drop.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); input.click(); } });
  return () => { if (travel) travel.destroy(); };
}
