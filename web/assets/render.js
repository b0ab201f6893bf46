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

// RunView is the rendered run: head, messages, tools, interrupt, usage. It updates in place
// from patches: a streamed message gets its new parts appended (text to the text node it
// already has), a touched tool record is redrawn, the head changes only the fields that
// changed; nothing else is touched, so a frame's work is proportional to what its events
// changed, not to the size of the run.
export class RunView {
  constructor(root, { onJumpToTool } = {}) {
    this.root = root;
    this.msgs = new Map(); // messageId → MessageBlock
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
    this.shown = {}; // what the head shows, by part: redrawn only when it changes
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
    this.msgs.clear();
    this.toolEls.clear();
    const frag = document.createDocumentFragment();
    for (const m of view.messages) {
      const b = new MessageBlock(m, this);
      this.msgs.set(m.messageId, b);
      frag.append(b.el);
    }
    this.messagesEl.append(frag);
    for (const t of view.tools) this.upsertTool(t);
    this.setHead(view.head);
  }

  // patch applies a patch (messages and tools the events touched, and the head). It returns
  // false when the patch does not follow what is shown (a message sent from part f that does
  // not show f parts): the caller then renders the whole view.
  patch(p) {
    for (const m of p.messages) if (!this.upsertMessage(m)) return false;
    for (const t of p.tools) this.upsertTool(t);
    this.setHead(p.head);
    return true;
  }

  setHead(head) {
    this.head = head;
    const fields = [str(head.status), str(head.sessionId), String(head.eventCount), String(head.lastLogicalSequence), String(head.lastSequence), str(head.lastPhaseId)];
    if (!this.fieldEls) {
      this.statusEl = h('span', { class: 'status' });
      this.fieldEls = [this.statusEl, h('span'), h('span'), h('span'), h('span'), h('span')];
      const labels = ['Status', 'Session', 'Events', 'Logical sequence', 'Sequence', 'Phase'];
      this.headEl.append(h('dl', { class: 'fields' }, labels.map((l, i) => field(l, this.fieldEls[i]))));
      this.shownFields = [];
    }
    fields.forEach((v, i) => {
      if (this.shownFields[i] === v) return;
      this.shownFields[i] = v;
      this.fieldEls[i].textContent = v;
    });
    if (this.statusEl.dataset.status !== fields[0]) {
      this.statusEl.dataset.status = fields[0];
      this.statusEl.className = `status status-${fields[0]}`;
    }
    // The terminal line, the interrupt and the usage are redrawn only when they change.
    const terminalKey = JSON.stringify([head.status, head.finishReason, head.errorCode, head.cancellationReason]);
    if (this.shown.terminal !== terminalKey) {
      this.shown.terminal = terminalKey;
      this.renderTerminal(head);
    }
    const interruptKey = JSON.stringify([head.interrupt, head.interruptResolution]);
    if (this.shown.interrupt !== interruptKey) {
      this.shown.interrupt = interruptKey;
      this.renderInterrupt(head);
    }
    const usageKey = JSON.stringify([head.usage, head.limit]);
    if (this.shown.usage !== usageKey) {
      this.shown.usage = usageKey;
      this.renderUsage(head);
    }
  }

  // renderTerminal: terminal status with its finish reason, error code or cancellation reason.
  renderTerminal(head) {
    clear(this.terminalEl);
    if (head.status === 'completed') this.terminalEl.append(h('p', null, 'Completed — finish reason: ', h('strong', null, str(head.finishReason))));
    else if (head.status === 'failed') this.terminalEl.append(h('p', null, 'Failed — error code: ', h('strong', null, str(head.errorCode))));
    else if (head.status === 'cancelled') this.terminalEl.append(h('p', null, 'Cancelled — reason: ', head.cancellationReason === null ? h('em', null, 'none given') : h('strong', null, str(head.cancellationReason))));
    else if (head.status === 'waiting') this.terminalEl.append(h('p', null, 'Waiting for the interrupt to be resolved.'));
    this.terminalEl.className = `terminal terminal-${str(head.status)}`;
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

  // upsertMessage shows a message of a view or patch: sent from part f > 0, its parts are
  // appended to the f parts shown (false when it does not show f parts); sent from 0, it
  // replaces the message shown, unless that one has no parts yet and the same role (a
  // message's first delta): then the parts are appended to it too.
  upsertMessage(m) {
    const cur = this.msgs.get(m.messageId);
    const from = m.from || 0;
    if (cur && cur.parts === from && cur.role === str(m.role)) {
      cur.append(m.content || []);
      return true;
    }
    if (from > 0) return false;
    const fresh = new MessageBlock(m, this);
    if (cur) cur.el.replaceWith(fresh.el);
    else this.messagesEl.insertBefore(fresh.el, this.messagesEl.children[m.index] || null);
    this.msgs.set(m.messageId, fresh);
    return true;
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

// MessageBlock is one rendered message. Consecutive text (and reasoning) parts form one block
// each, so that a streamed message reads as prose; other parts render by kind. append adds
// parts after those shown: text goes into the open block's text node.
class MessageBlock {
  constructor(m, view) {
    this.id = str(m.messageId);
    this.role = str(m.role);
    this.view = view;
    this.parts = 0; // parts shown
    this.cites = 0;
    this.block = null; // the TextBlock the next text or reasoning part of its type extends
    this.body = h('div', { class: 'message-body' });
    this.el = h('article', { class: `message role-${str(m.role)}`, dataset: { messageId: this.id }, 'aria-label': `${str(m.role)} message ${this.id}` },
      h('header', null, h('span', { class: 'role' }, str(m.role)), ' ', h('code', { class: 'muted' }, this.id)),
      this.body);
    this.append(m.content || []);
  }

  append(parts) {
    for (const p of parts) {
      this.parts++;
      const type = p && p.type;
      if (type === 'text' || type === 'reasoning') {
        if (!this.block || this.block.type !== type) {
          if (this.block) this.block.flush();
          this.block = new TextBlock(type, this);
          this.body.append(this.block.root);
        }
        this.block.add(str(p.text));
        continue;
      }
      if (this.block) this.block.flush();
      this.block = null;
      if (type === 'citation') this.cites++;
      this.body.append(renderPart(p, this.cites, this.view));
    }
    if (this.block) this.block.flush();
  }
}

// A text block longer than this shows its start and a button for the rest: laying out one
// huge unbroken string can stall the page for a long time.
export const TEXT_SHOWN = 20000;

// TextBlock is a run of text (or reasoning) parts as one paragraph holding one text node.
// Text arriving in a frame is joined and appended to that node once (appendData); past
// TEXT_SHOWN characters it is kept aside behind a "Show the remaining N characters" button
// until a person asks for it.
class TextBlock {
  constructor(type, msg) {
    this.type = type;
    this.pending = [];
    this.shown = 0; // characters in the node
    this.rest = []; // characters kept aside
    this.restLen = 0;
    this.expanded = false;
    this.more = null;
    this.node = document.createTextNode('');
    this.el = h('p', { class: type === 'text' ? 'part-text' : 'part-reasoning' }, this.node);
    if (type === 'text') {
      this.root = this.el;
    } else {
      const view = msg.view;
      const open = view.reasoningOpen.has(msg.id) ? view.reasoningOpen.get(msg.id) : true;
      this.root = h('details', { class: 'reasoning', open }, h('summary', null, 'Reasoning'), this.el);
      this.root.addEventListener('toggle', () => view.reasoningOpen.set(msg.id, this.root.open));
    }
  }

  add(text) { if (text) this.pending.push(text); }

  flush() {
    if (this.pending.length === 0) return;
    let text = this.pending.length === 1 ? this.pending[0] : this.pending.join('');
    this.pending = [];
    if (!this.expanded && this.shown + text.length > TEXT_SHOWN) {
      let room = Math.max(0, TEXT_SHOWN - this.shown);
      // Do not cut a surrogate pair in two.
      if (room > 0 && room < text.length && /[\uD800-\uDBFF]/.test(text[room - 1])) room--;
      this.rest.push(text.slice(room));
      this.restLen += text.length - room;
      text = text.slice(0, room);
    }
    if (text) {
      this.node.appendData(text);
      this.shown += text.length;
    }
    if (this.restLen === 0) return;
    const label = `Show the remaining ${this.restLen.toLocaleString()} characters`;
    if (!this.more) {
      this.more = h('button', { type: 'button', class: 'link show-all', onclick: () => this.expand() }, label);
      this.el.after(this.more);
    } else {
      this.more.firstChild.data = label;
    }
  }

  expand() {
    this.expanded = true;
    this.node.appendData(this.rest.join(''));
    this.shown += this.restLen;
    this.rest = [];
    this.restLen = 0;
    if (this.more) this.more.remove();
    this.more = null;
  }
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
// time; choosing one moves time travel there. A page's rows are made as they come into view
// (the list scrolls): while a fast run streams in, its new events land below the rows shown
// and cost nothing until someone scrolls to them. Moving the current marker within the rows
// shown only moves a class; a full page is redrawn only when another page is shown.
export class Timeline {
  constructor(root, { onPick }) {
    this.root = root;
    this.onPick = onPick;
    this.entries = []; // the caller's list: it appends, then calls setCurrent (or draw)
    this.page = -1; // -1: follow the end
    this.current = null; // logicalSequence shown by time travel (null: live)
    this.drawn = null; // {page, from, to, cur}: rows from..to-1 are in the list
    this.limit = Timeline.ROWS; // rows of the page to make
    this.list = h('ol', { class: 'timeline-list' });
    // The sentinel after the last row made: in view, it makes the next rows.
    this.sentinel = h('li', { class: 'timeline-more muted', 'aria-hidden': 'true' }, 'more events…');
    this.io = typeof IntersectionObserver === 'function'
      ? new IntersectionObserver((es) => {
        if (es.some((e) => e.isIntersecting) && this.sentinel.isConnected) {
          this.limit += Timeline.ROWS;
          this.draw();
        }
      }, { root: this.list, rootMargin: '0px 0px 200px 0px' })
      : null;
    this.earlier = h('button', { type: 'button', onclick: () => { this.page = this.drawn.page - 1; this.draw(); } }, 'Earlier');
    this.later = h('button', { type: 'button', onclick: () => { const next = this.drawn.page + 1; this.page = next >= this.pages - 1 ? -1 : next; this.draw(); } }, 'Later');
    this.counts = h('span');
    this.nav = h('div', { class: 'timeline-nav' }, this.earlier, this.counts, this.later);
    root.append(this.nav, this.list);
  }

  static PAGE = 100;
  static ROWS = 15; // rows made at a time (a little more than the list shows)

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

  row(i, cur) {
    const e = this.entries[i];
    return h('li', { class: cur ? 'current' : null },
      h('button', { type: 'button', class: 'event-row', 'aria-current': cur ? 'step' : null, onclick: () => this.onPick(e.logicalSequence) },
        h('span', { class: 'ev-type' }, e.type),
        h('span', { class: 'ev-seq', title: 'logical sequence' }, `#${e.logicalSequence}`),
        h('span', { class: 'ev-pseq', title: 'sequence in phase' }, `seq ${e.sequence}`),
        h('span', { class: 'ev-phase', title: `phase ${e.phaseId}` }, e.phaseId.slice(0, 8)),
        h('time', { class: 'ev-time' }, e.timestamp)));
  }

  mark(li, cur) {
    if (!li) return;
    li.className = cur ? 'current' : '';
    const b = li.firstChild;
    if (cur) b.setAttribute('aria-current', 'step'); else b.removeAttribute('aria-current');
  }

  draw() {
    const n = this.entries.length;
    const pages = Math.max(1, Math.ceil(n / Timeline.PAGE));
    const page = this.page < 0 ? pages - 1 : Math.min(this.page, pages - 1);
    const from = page * Timeline.PAGE;
    const end = Math.min(n, from + Timeline.PAGE);
    const cur = this.current === null ? -1 : this.indexOf(this.current);
    let d = this.drawn;
    if (!d || d.page !== page || d.from !== from) {
      clear(this.list);
      this.limit = Timeline.ROWS;
      d = this.drawn = { page, from, to: from, cur: -1 };
    }
    if (d.cur !== cur) {
      if (d.cur >= from && d.cur < d.to) this.mark(this.list.children[d.cur - from], false);
      if (cur >= from && cur < d.to) this.mark(this.list.children[cur - from], true);
      d.cur = cur;
    }
    // Make the rows up to the limit (and up to the current one).
    const want = Math.min(end, Math.max(from + this.limit, cur + 1));
    const added = want > d.to;
    if (added) {
      const frag = document.createDocumentFragment();
      for (let i = d.to; i < want; i++) frag.append(this.row(i, i === cur));
      this.list.insertBefore(frag, this.sentinel.isConnected ? this.sentinel : null);
      d.to = want;
    }
    if (d.to < end && this.io) {
      if (!this.sentinel.isConnected || added) {
        this.list.append(this.sentinel);
        // Observing again reports whether it is in view now (the rows above may not fill the list).
        this.io.unobserve(this.sentinel);
        this.io.observe(this.sentinel);
      }
    } else if (d.to < end) {
      // No IntersectionObserver: make every row.
      this.limit = Timeline.PAGE;
      return this.draw();
    } else if (this.sentinel.isConnected) {
      this.sentinel.remove();
    }
    this.pages = pages;
    const counts = n === 0 ? 'no events' : ` events ${from + 1}–${end} of ${n} `;
    if (this.counts.textContent !== counts) {
      this.counts.textContent = counts;
      this.earlier.disabled = page === 0;
      this.later.disabled = page >= pages - 1;
    }
  }
}
