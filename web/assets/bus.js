// /bus: a channel's or swarm's history (GET /v1/messages, pages) and live traffic (GET
// /v1/bus/poll, no WebSocket: a browser WebSocket cannot send the token). Bodies are data,
// never instructions (hive.md §8 S14): shown as text, and swarm messages are marked untrusted.
import { h, clear, jsonBlock, collapsible } from './dom.js';
import { getJSON } from './api.js';

const POLL_MS = 1500;

function sender(f) {
  if (!f || typeof f !== 'object') return String(f);
  const rest = Object.entries(f).filter(([k]) => k !== 'kind').map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  return `${f.kind}${rest.length ? ': ' + rest.join(', ') : ''}`;
}

export function renderDelivery(m, how) {
  const untrusted = m.trust === 'untrusted' || (m.network && m.network.kind === 'swarm');
  const body = m.body
    ? h('div', { class: 'bus-body' }, h('p', { class: 'bus-text' }, String(m.body.text ?? '')),
      m.body.references && m.body.references.length ? collapsible(`references (${m.body.references.length})`, jsonBlock(m.body.references)) : null)
    : m.sealed ? h('p', { class: 'muted' }, `sealed (epoch ${m.sealed.epoch ?? '?'}): ciphertext not shown`) : h('p', { class: 'muted' }, 'no body');
  return h('article', { class: `bus-msg${untrusted ? ' untrusted' : ''}`, dataset: { gid: String(m.gid), seq: String(m.seq), how } },
    h('header', null,
      h('span', { class: 'seq' }, `#${m.seq}`), ' ',
      h('strong', null, String(m.type)), ' from ', h('span', { class: 'from' }, sender(m.from)),
      m.to !== undefined ? [' to ', h('span', null, String(m.to))] : null, ' ',
      h('span', { class: `badge trust trust-${m.trust}` }, `trust: ${m.trust}`),
      untrusted ? h('span', { class: 'badge untrusted' }, 'untrusted data — not instructions') : null,
      h('span', { class: 'badge' }, how)),
    body,
    h('p', { class: 'muted small' }, `gid ${m.gid} · thread ${m.thread_id}${m.reply_to ? ` · reply to ${m.reply_to}` : ''} · ${m.server_time}${m.deadline ? ` · deadline ${m.deadline}` : ''}`));
}

function streamOf(m) {
  const n = m.network || {};
  return n.kind === 'swarm' ? `swarm:${n.swarm_id}` : `org:${n.channel}`;
}

export function busPage(main, params, setTitle, navigate) {
  setTitle('Bus');
  const network = params.get('network') || 'org';
  const channel = params.get('channel') || '';
  const swarm = params.get('swarm_id') || '';
  const netSel = h('select', { id: 'network', name: 'network' }, ['org', 'swarm'].map((n) => h('option', { value: n, selected: n === network }, n)));
  const nameIn = h('input', { id: 'stream', name: 'name', value: network === 'swarm' ? swarm : channel, placeholder: 'channel or swarm id', spellcheck: 'false' });
  const history = h('div', { class: 'bus-list', 'aria-live': 'off' });
  const live = h('div', { class: 'bus-list live', 'aria-live': 'polite' });
  const note = h('p', { class: 'conn', role: 'status' });
  const more = h('button', { type: 'button', hidden: true }, 'Next page');
  main.append(h('h1', null, 'Bus'),
    h('form', { class: 'toolbar', onsubmit: (e) => {
      e.preventDefault();
      const q = new URLSearchParams({ network: netSel.value });
      q.set(netSel.value === 'swarm' ? 'swarm_id' : 'channel', nameIn.value.trim());
      navigate(`/bus?${q}`);
    } }, h('label', { for: 'network' }, 'Network'), netSel, h('label', { for: 'stream' }, 'Channel or swarm'), nameIn, h('button', { type: 'submit' }, 'Show')),
    note,
    h('section', { class: 'panel', 'aria-labelledby': 'h-live' }, h('h2', { id: 'h-live' }, 'Live'), live),
    h('section', { class: 'panel', 'aria-labelledby': 'h-history' }, h('h2', { id: 'h-history' }, 'History'), history, more));
  const selected = network === 'swarm' ? (swarm ? `swarm:${swarm}` : null) : (channel ? `org:${channel}` : null);
  const seen = new Set();
  let stopped = false;
  let timer = 0;
  let cursor = null;
  let lastGid = null;
  const histQuery = (after) => {
    const q = new URLSearchParams({ network, limit: '50' });
    if (network === 'swarm') q.set('swarm_id', swarm); else q.set('channel', channel);
    if (after) q.set('after_gid', after);
    return `/v1/messages?${q}`;
  };
  const loadPage = async (after) => {
    const page = await getJSON(histQuery(after));
    for (const m of page.messages) {
      seen.add(m.gid);
      history.append(renderDelivery(m, 'history'));
      lastGid = m.gid;
    }
    more.hidden = !page.next;
    more.onclick = () => loadPage(page.next);
    return page;
  };
  const addLive = (m, how) => {
    if (seen.has(m.gid)) return;
    seen.add(m.gid);
    lastGid = m.gid;
    live.prepend(renderDelivery(m, how));
  };
  const poll = async () => {
    try {
      const q = new URLSearchParams();
      if (cursor) q.set('cursor', cursor);
      const res = await getJSON(`/v1/bus/poll${q.toString() ? '?' + q : ''}`);
      cursor = res.cursor || cursor;
      for (const f of res.frames || []) {
        if (f.t === 'message.deliver' && (!selected || streamOf(f) === selected)) addLive(f, 'poll');
        else if (f.t === 'task.event') live.prepend(h('article', { class: 'bus-msg task' }, h('strong', null, 'task.event'), collapsible('frame', jsonBlock(f))));
      }
      // The selected stream may not be one the instance follows: read its history onward too.
      if (selected) {
        const page = await getJSON(histQuery(lastGid));
        for (const m of page.messages) addLive(m, 'new');
      }
      note.textContent = `Live: polled ${new Date().toLocaleTimeString()}.`;
    } catch (e) {
      note.textContent = `Bus: ${e.message}`;
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  };
  (async () => {
    if (selected) {
      try {
        await loadPage(null);
      } catch (e) {
        note.textContent = `History: ${e.message}`;
      }
    } else {
      history.append(h('p', { class: 'muted' }, 'Choose a channel or swarm for its history; live shows every stream this token follows.'));
    }
    if (!stopped) poll();
  })();
  return () => { stopped = true; clearTimeout(timer); };
}
