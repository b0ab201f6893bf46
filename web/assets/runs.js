// / : the runs list (live): status, updated, event count; filter by status; find by id.
import { h, clear } from './dom.js';
import { getJSON } from './api.js';

const STATUSES = ['', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'idle'];

export function runsPage(main, params, setTitle, navigate) {
  setTitle('Runs');
  const status = params.get('status') || '';
  const select = h('select', { id: 'status', name: 'status' }, STATUSES.map((s) => h('option', { value: s, selected: s === status }, s || 'any')));
  const find = h('input', { id: 'find', name: 'run', type: 'search', placeholder: 'run id', required: true, spellcheck: 'false' });
  const rows = h('tbody');
  const note = h('p', { class: 'conn', role: 'status', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', hidden: true }, 'More');
  main.append(
    h('h1', null, 'Runs'),
    h('div', { class: 'toolbar' },
      h('form', { class: 'inline', onsubmit: (e) => { e.preventDefault(); if (find.value.trim()) navigate(`/runs/${encodeURIComponent(find.value.trim())}`); } },
        h('label', { for: 'find' }, 'Find run'), find, h('button', { type: 'submit' }, 'Open')),
      h('form', { class: 'inline', onsubmit: (e) => e.preventDefault() },
        h('label', { for: 'status' }, 'Status'), select)),
    note,
    h('table', { class: 'runs' },
      h('caption', { class: 'visually-hidden' }, 'Runs, newest first'),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Run'), h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, 'Updated'), h('th', { scope: 'col', class: 'num' }, 'Events'))),
      rows),
    more);
  select.addEventListener('change', () => {
    const u = new URL(location.href);
    if (select.value) u.searchParams.set('status', select.value); else u.searchParams.delete('status');
    navigate(u.pathname + u.search);
  });
  let stopped = false;
  let timer = 0;
  let extra = []; // rows of pages after the first, loaded with More
  let next = null;
  const row = (r) => h('tr', { dataset: { runId: r.runId } },
    h('td', null, h('a', { href: `/runs/${encodeURIComponent(r.runId)}` }, r.runId)),
    h('td', null, h('span', { class: `status status-${r.status}` }, r.status)),
    h('td', null, h('time', null, String(r.updatedAt))),
    h('td', { class: 'num' }, String(r.eventCount)));
  const query = (cursor) => {
    const q = new URLSearchParams({ limit: '50' });
    if (status) q.set('status', status);
    if (cursor) q.set('cursor', cursor);
    return `/v1/runs?${q}`;
  };
  const refresh = async () => {
    try {
      const page = await getJSON(query(null));
      if (stopped) return;
      clear(rows).append(...page.runs.map(row), ...extra.map(row));
      if (!extra.length) next = page.next || null;
      more.hidden = !next;
      note.textContent = page.runs.length || extra.length ? `Live: refreshed ${new Date().toLocaleTimeString()}.` : 'No runs yet.';
    } catch (e) {
      note.textContent = `Cannot list runs: ${e.message}`;
    }
    if (!stopped) timer = setTimeout(refresh, 2000);
  };
  more.addEventListener('click', async () => {
    if (!next) return;
    const page = await getJSON(query(next));
    extra = extra.concat(page.runs);
    next = page.next || null;
    rows.append(...page.runs.map(row));
    more.hidden = !next;
  });
  refresh();
  return () => { stopped = true; clearTimeout(timer); };
}
