// Rendering of one run's state (events.md §8.1) as a person reads it (viewer.md §5). Input is
// the view and patch JSON of web/runview (or a snapshot reshaped by viewFromSnapshot); every
// string from the run is inserted as text.
import { h, clear, linkOrText, safeURL, jsonBlock, collapsible } from './dom.js';
import { authMode } from './api.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
export function isTerminal(status) { return TERMINAL.has(status); }

// viewFromSnapshot reshapes a §8.1 snapshot (GET /v1/runs/{id}) into a view: the same data
// web/runview.View gives, read from the snapshot instead of a reducer session.
export function viewFromSnapshot(s) {
  const byId = (list) => new Map((list || []).map((r) => [r.toolCallId, r]));
  const progress = byId(s.toolProgress);
  const results = byId(s.toolResults);
  const errors = byId(s.toolErrors);
  return {
    head: {
      runId: s.runId, sessionId: s.sessionId, status: s.status, interrupt: s.interrupt,
      interruptResolution: s.interruptResolution, usage: s.usage, limit: s.limit,
      finishReason: s.finishReason, errorCode: s.errorCode, cancellationReason: s.cancellationReason,
      lastSequence: s.lastSequence, lastLogicalSequence: s.lastLogicalSequence, lastPhaseId: s.lastPhaseId,
      eventCount: (s.eventIds || []).length, messageCount: (s.messages || []).length,
    },
    messages: (s.messages || []).map((m, i) => ({ index: i, ...m })),
    tools: (s.toolCalls || []).map((c) => ({
      toolCallId: c.toolCallId, call: c,
      progress: progress.has(c.toolCallId) ? progress.get(c.toolCallId).content : null,
      result: results.get(c.toolCallId) || null,
      error: errors.get(c.toolCallId) || null,
    })),
  };
}

const str = (v) => (v === null || v === undefined ? '' : String(v));

// RunView is the rendered run: head, messages, tools, interrupt, usage; it updates in place
// from patches.
export class RunView {
  constructor(root, { onJumpToTool } = {}) {
    this.root = root;
    this.msgEls = new Map(); // messageId → article
    this.reasoningOpen = new Map(); // messageId → bool (kept across re-renders)
    this.toolEls = new Map(); // toolCallId → article
    this.head = null;
    this.onJumpToTool = onJumpToTool;
    this.headEl = h('div', { class: 'head-fields' });
    this.interruptEl = h('div', { class: 'interrupt-body' });
    this.usageEl = h('div');
    this.messagesEl = h('div', { class: 'messages' });
    this.toolsEl = h('div', { class: 'tools' });
    this.terminalEl = h('div', { class: 'terminal', role: 'status' });
    root.append(
      this.headEl,
      this.terminalEl,
      h('section', { class: 'panel interrupt', 'aria-labelledby': 'h-interrupt' }, h('h2', { id: 'h-interrupt' }, 'Interrupt'), this.interruptEl),
      h('section', { class: 'panel conversation', 'aria-labelledby': 'h-messages' }, h('h2', { id: 'h-messages' }, 'Messages'), this.messagesEl),
      h('section', { class: 'panel tools-panel', 'aria-labelledby': 'h-tools' }, h('h2', { id: 'h-tools' }, 'Tool calls'), this.toolsEl),
      h('section', { class: 'panel usage', 'aria-labelledby': 'h-usage' }, h('h2', { id: 'h-usage' }, 'Usage and limit'), this.usageEl),
    );
  }

  // render replaces everything with a view.
  render(view) {
    clear(this.messagesEl);
    clear(this.toolsEl);
    this.msgEls.clear();
    this.toolEls.clear();
    for (const m of view.messages) this.upsertMessage(m);
    for (const t of view.tools) this.upsertTool(t);
    this.setHead(view.head);
  }

  // patch applies a patch (messages and tools the events touched, and the head).
  patch(p) {
    for (const m of p.messages) this.upsertMessage(m);
    for (const t of p.tools) this.upsertTool(t);
    this.setHead(p.head);
  }

  setHead(head) {
    this.head = head;
    clear(this.headEl).append(h('dl', { class: 'fields' },
      field('Status', h('span', { class: `status status-${str(head.status)}`, dataset: { status: str(head.status) } }, str(head.status))),
      field('Session', str(head.sessionId)),
      field('Events', String(head.eventCount)),
      field('Logical sequence', String(head.lastLogicalSequence)),
      field('Sequence', String(head.lastSequence)),
      field('Phase', str(head.lastPhaseId)),
    ));
    // Terminal status with its finish reason, error code or cancellation reason.
    clear(this.terminalEl);
    if (head.status === 'completed') this.terminalEl.append(h('p', null, 'Completed — finish reason: ', h('strong', null, str(head.finishReason))));
    else if (head.status === 'failed') this.terminalEl.append(h('p', null, 'Failed — error code: ', h('strong', null, str(head.errorCode))));
    else if (head.status === 'cancelled') this.terminalEl.append(h('p', null, 'Cancelled — reason: ', head.cancellationReason === null ? h('em', null, 'none given') : h('strong', null, str(head.cancellationReason))));
    else if (head.status === 'waiting') this.terminalEl.append(h('p', null, 'Waiting for the interrupt to be resolved.'));
    this.terminalEl.className = `terminal terminal-${str(head.status)}`;
    this.renderInterrupt(head);
    this.renderUsage(head);
  }

  renderInterrupt(head) {
    clear(this.interruptEl);
    const i = head.interrupt;
    if (i) {
      this.interruptEl.append(
        h('p', null, h('span', { class: 'badge pending' }, 'pending'), ' ', h('strong', null, str(i.kind)), ' ', h('code', null, str(i.interruptId))),
        h('p', { class: 'prompt' }, str(i.prompt)),
        h('h3', null, 'Actions'),
        h('ul', { class: 'actions' }, (i.actions || []).map((a) => h('li', null,
          h('strong', null, str(a.name)), ' ', h('code', null, str(a.id)),
          collapsible('input', jsonBlock(a.input)),
        ))),
        'payload' in i ? collapsible('payload', jsonBlock(i.payload)) : null,
      );
    }
    const r = head.interruptResolution;
    if (r) {
      this.interruptEl.append(h('div', { class: 'resolution' },
        h('p', null, h('span', { class: 'badge resolved' }, 'resolved'), ' ', h('code', null, str(r.interruptId))),
        collapsible(`decisions (${(r.decisions || []).length})`, jsonBlock(r.decisions), true),
      ));
    }
    if (!i && !r) this.interruptEl.append(h('p', { class: 'muted' }, 'None.'));
  }

  renderUsage(head) {
    clear(this.usageEl);
    const u = head.usage;
    if (u) {
      this.usageEl.append(h('dl', { class: 'fields usage-fields' }, Object.entries(u).map(([k, v]) => field(k, typeof v === 'object' ? JSON.stringify(v) : str(v)))));
    } else {
      this.usageEl.append(h('p', { class: 'muted' }, 'No usage reported.'));
    }
    const l = head.limit;
    if (l) {
      this.usageEl.append(h('p', { class: 'limit' }, 'Limit ', h('strong', null, str(l.kind)), ': used ', str(l.used ?? '—'), ' of ', str(l.limit ?? '—')));
    }
  }

  upsertMessage(m) {
    let el = this.msgEls.get(m.messageId);
    const fresh = renderMessage(m, this);
    if (el) {
      el.replaceWith(fresh);
    } else {
      const before = this.messagesEl.children[m.index] || null;
      this.messagesEl.insertBefore(fresh, before);
    }
    this.msgEls.set(m.messageId, fresh);
  }

  upsertTool(t) {
    const fresh = renderTool(t);
    const el = this.toolEls.get(t.toolCallId);
    if (el) el.replaceWith(fresh);
    else this.toolsEl.append(fresh);
    this.toolEls.set(t.toolCallId, fresh);
  }

  jumpToTool(id) {
    const el = this.toolEls.get(id);
    if (!el) return;
    el.scrollIntoView({ block: 'center' });
    el.focus();
  }

  // text is every text part of every message, in order (what the tests compare with the
  // server snapshot).
  messageText() {
    return [...this.messagesEl.querySelectorAll('.part-text')].map((e) => e.textContent).join('\n');
  }
}

function field(label, value) {
  return [h('dt', null, label), h('dd', null, value)];
}

// renderMessage groups consecutive text (and reasoning) parts into one block each, so that a
// streamed message reads as prose; other parts render by kind.
function renderMessage(m, view) {
  const body = h('div', { class: 'message-body' });
  let cites = 0;
  let run = null; // {type, el}
  for (const p of m.content || []) {
    const type = p && p.type;
    if (type === 'text' || type === 'reasoning') {
      if (!run || run.type !== type) {
        if (type === 'text') {
          run = { type, el: h('p', { class: 'part-text' }) };
          body.append(run.el);
        } else {
          const para = h('p', { class: 'part-reasoning' });
          const open = view.reasoningOpen.has(m.messageId) ? view.reasoningOpen.get(m.messageId) : true;
          const det = h('details', { class: 'reasoning', open }, h('summary', null, 'Reasoning'), para);
          det.addEventListener('toggle', () => view.reasoningOpen.set(m.messageId, det.open));
          run = { type, el: para };
          body.append(det);
        }
      }
      run.el.append(document.createTextNode(str(p.text)));
      continue;
    }
    run = null;
    if (type === 'citation') cites++;
    body.append(renderPart(p, cites, view));
  }
  for (const block of body.querySelectorAll('.part-text, .part-reasoning')) capText(block);
  return h('article', { class: `message role-${str(m.role)}`, dataset: { messageId: str(m.messageId) }, 'aria-label': `${str(m.role)} message ${str(m.messageId)}` },
    h('header', null, h('span', { class: 'role' }, str(m.role)), ' ', h('code', { class: 'muted' }, str(m.messageId))),
    body);
}

// A text block longer than this shows its start and a button for the rest: laying out one
// huge unbroken string can stall the page for a long time.
export const TEXT_SHOWN = 20000;

function capText(block) {
  const text = block.textContent;
  if (text.length <= TEXT_SHOWN) return;
  block.textContent = text.slice(0, TEXT_SHOWN);
  const more = h('button', { type: 'button', class: 'link show-all', onclick: () => { block.textContent = text; more.remove(); } },
    `Show the remaining ${(text.length - TEXT_SHOWN).toLocaleString()} characters`);
  block.after(more);
}

function mediaSource(p) {
  if ('url' in p) return { kind: 'url', value: p.url };
  if ('data' in p) return { kind: 'data', value: p.data };
  if ('fileId' in p) return { kind: 'fileId', value: p.fileId };
  return { kind: 'none', value: null };
}

const INLINE_IMAGE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

function renderMedia(p) {
  const src = mediaSource(p);
  const meta = [h('strong', null, p.type)];
  if (p.name !== undefined) meta.push(' ', h('span', { class: 'name' }, str(p.name)));
  if (p.mimeType !== undefined) meta.push(' ', h('code', null, str(p.mimeType)));
  const fig = h('figure', { class: `part part-media part-${p.type}` });
  const caption = h('figcaption', null, meta);
  let content = null;
  if (src.kind === 'url') {
    const u = safeURL(src.value);
    caption.append(' ', linkOrText(str(src.value)));
    // Media is fetched only from https (the CSP allows no other), and in auth mode only on
    // request, so a run cannot make the page call a host by itself.
    if (u && u.protocol === 'https:' && p.type !== 'file') {
      const make = () => (p.type === 'image'
        ? h('img', { src: u.href, alt: `image ${str(p.name || '')}`, loading: 'lazy', referrerpolicy: 'no-referrer' })
        : h(p.type, { src: u.href, controls: true, preload: 'none' }));
      if (authMode()) {
        const btn = h('button', { type: 'button', onclick: () => btn.replaceWith(make()) }, `Load ${p.type} from ${u.host}`);
        content = btn;
      } else {
        content = make();
      }
    }
  } else if (src.kind === 'data') {
    const data = str(src.value);
    caption.append(' ', h('span', { class: 'muted' }, `inline data, ${data.length.toLocaleString()} base64 characters`));
    if (p.type === 'image' && INLINE_IMAGE.has(p.mimeType) && /^[A-Za-z0-9+/=\s]*$/.test(data)) {
      content = h('img', { src: `data:${p.mimeType};base64,${data.replace(/\s/g, '')}`, alt: 'inline image' });
    }
  } else if (src.kind === 'fileId') {
    caption.append(' file id ', h('code', null, str(src.value)));
  }
  fig.append(caption);
  if (content) fig.append(content);
  return fig;
}

function renderPart(p, citeNo, view) {
  switch (p && p.type) {
    case 'image': case 'audio': case 'video': case 'file':
      return renderMedia(p);
    case 'citation':
      return h('p', { class: 'part part-citation' }, h('span', { class: 'cite-no' }, `[${citeNo}]`), ' ',
        linkOrText(str(p.url), p.title !== undefined ? str(p.title) : undefined),
        p.title !== undefined ? h('span', { class: 'muted url' }, ' ', str(p.url)) : null);
    case 'tool-call': {
      const c = p.toolCall || {};
      return h('p', { class: 'part part-tool-call' }, 'Calls ', h('strong', null, str(c.name)), ' ',
        h('button', { type: 'button', class: 'link', onclick: () => view.jumpToTool(str(c.toolCallId)) }, `tool call ${str(c.toolCallId)}`),
        collapsible('arguments', jsonBlock(c.input)));
    }
    case 'tool-result': {
      const r = p.result || {};
      return h('div', { class: 'part part-tool-result' }, 'Result of ', h('strong', null, str(r.name)), ' ',
        h('button', { type: 'button', class: 'link', onclick: () => view.jumpToTool(str(r.toolCallId)) }, `tool call ${str(r.toolCallId)}`),
        r.isError === true ? h('span', { class: 'badge error' }, 'isError') : null,
        collapsible('output', jsonBlock(r.output)));
    }
    case 'custom':
      return h('div', { class: 'part part-custom' }, 'Custom part ', h('strong', null, str(p.name)), collapsible('data', jsonBlock(p.data)));
    default:
      return h('div', { class: 'part part-unknown' }, collapsible(`part ${str(p && p.type)}`, jsonBlock(p)));
  }
}

function renderTool(t) {
  const c = t.call || {};
  let outcome;
  if (t.error) {
    outcome = h('div', { class: 'tool-error' }, h('span', { class: 'badge error' }, 'error'), ' ',
      t.error.code !== undefined ? h('code', null, str(t.error.code)) : null, ' ', h('span', null, str(t.error.error)));
  }
  let result = null;
  if (t.result) {
    result = h('div', { class: 'tool-result' }, h('span', { class: t.result.isError === true ? 'badge error' : 'badge ok' }, t.result.isError === true ? 'result (isError)' : 'result'),
      collapsible('output', jsonBlock(t.result.output), true));
  }
  const state = t.error ? 'failed' : t.result ? 'completed' : 'running';
  return h('article', { class: `tool tool-${state}`, tabindex: '-1', dataset: { toolCallId: str(t.toolCallId) } },
    h('header', null, h('strong', null, str(c.name)), ' ', h('code', { class: 'muted' }, str(t.toolCallId)), ' ', h('span', { class: `badge ${state}` }, state)),
    collapsible('arguments', jsonBlock(c.input)),
    t.progress ? h('ul', { class: 'progress' }, t.progress.map((p) => h('li', null, p && (p.type === 'text' || p.type === 'reasoning') ? str(p.text) : JSON.stringify(p)))) : null,
    result, outcome || null);
}

// Timeline lists events (type, logical sequence, sequence, phase, timestamp), a page at a
// time; choosing one moves time travel there.
export class Timeline {
  constructor(root, { onPick }) {
    this.root = root;
    this.onPick = onPick;
    this.entries = [];
    this.page = -1; // -1: follow the end
    this.current = null; // logicalSequence shown by time travel (null: live)
    this.list = h('ol', { class: 'timeline-list' });
    this.nav = h('div', { class: 'timeline-nav' });
    root.append(this.nav, this.list);
  }

  static PAGE = 100;

  setEntries(entries) { this.entries = entries; this.draw(); }

  setCurrent(seq) {
    this.current = seq;
    if (seq !== null) {
      const i = this.indexOf(seq);
      this.page = Math.floor(Math.max(0, i) / Timeline.PAGE);
    }
    this.draw();
  }

  indexOf(seq) {
    let lo = 0, hi = this.entries.length - 1, ans = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.entries[mid].logicalSequence <= seq) { ans = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return ans;
  }

  draw() {
    const n = this.entries.length;
    const pages = Math.max(1, Math.ceil(n / Timeline.PAGE));
    const page = this.page < 0 ? pages - 1 : Math.min(this.page, pages - 1);
    const from = page * Timeline.PAGE;
    const to = Math.min(n, from + Timeline.PAGE);
    clear(this.nav).append(
      h('button', { type: 'button', disabled: page === 0, onclick: () => { this.page = page - 1; this.draw(); } }, 'Earlier'),
      h('span', null, n === 0 ? 'no events' : ` events ${from + 1}–${to} of ${n} `),
      h('button', { type: 'button', disabled: page >= pages - 1, onclick: () => { this.page = page + 1 >= pages - 1 ? -1 : page + 1; this.draw(); } }, 'Later'),
    );
    const items = [];
    for (let i = from; i < to; i++) {
      const e = this.entries[i];
      const cur = this.current !== null && e.logicalSequence === this.entries[this.indexOf(this.current)]?.logicalSequence;
      items.push(h('li', { class: cur ? 'current' : null },
        h('button', { type: 'button', class: 'event-row', 'aria-current': cur ? 'step' : null, onclick: () => this.onPick(e.logicalSequence) },
          h('span', { class: 'ev-type' }, e.type),
          h('span', { class: 'ev-seq', title: 'logical sequence' }, `#${e.logicalSequence}`),
          h('span', { class: 'ev-pseq', title: 'sequence in phase' }, `seq ${e.sequence}`),
          h('span', { class: 'ev-phase', title: `phase ${e.phaseId}` }, e.phaseId.slice(0, 8)),
          h('time', { class: 'ev-time' }, e.timestamp))));
    }
    clear(this.list).append(...items);
  }
}
