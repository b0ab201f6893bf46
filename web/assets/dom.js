// DOM helpers. Every piece of run, message or envelope content goes into the page through
// these as a text node (document.createTextNode / textContent), never as HTML (viewer.md §2).

// h builds an element: attrs are properties or attributes (on* handlers are functions, never
// strings); children are nodes or strings (inserted as text), arrays are flattened, null and
// false are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') {
        el.addEventListener(k.slice(2), v);
      } else if (k === 'class') {
        el.className = v;
      } else if (k === 'dataset') {
        Object.assign(el.dataset, v);
      } else if (k === 'text') {
        el.textContent = v;
      } else if (k in el && typeof v !== 'string') {
        el[k] = v;
      } else {
        el.setAttribute(k, v === true ? '' : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// safeURL returns the URL when it is absolute http: or https:, else null: anything else
// (javascript:, data:, relative, malformed) stays text.
export function safeURL(s) {
  if (typeof s !== 'string') return null;
  let u;
  try {
    u = new URL(s);
  } catch {
    return null;
  }
  return u.protocol === 'http:' || u.protocol === 'https:' ? u : null;
}

// linkOrText is a link for an http(s) URL (opening in a new tab, no referrer, no opener) and
// the plain text otherwise.
export function linkOrText(url, label) {
  const u = safeURL(url);
  const text = label === undefined || label === null || label === '' ? String(url) : String(label);
  if (!u) return h('span', { class: 'unsafe-url', title: 'not an http(s) URL: shown as text' }, text);
  return h('a', { href: u.href, rel: 'noopener noreferrer nofollow', target: '_blank' }, text);
}

// Long JSON is cut for display with a button to show the rest.
const JSON_SHOWN = 20000;

// jsonBlock is a <pre> with the value pretty-printed (as text).
export function jsonBlock(value, cls) {
  let text;
  try {
    text = JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  if (text === undefined) text = 'undefined';
  const pre = h('pre', { class: cls ? `json ${cls}` : 'json' });
  if (text.length <= JSON_SHOWN) {
    pre.textContent = text;
    return pre;
  }
  pre.textContent = text.slice(0, JSON_SHOWN);
  const more = h('button', {
    type: 'button', class: 'link',
    onclick: () => { pre.textContent = text; },
  }, `Show all (${(text.length - JSON_SHOWN).toLocaleString()} more characters)`);
  return h('div', null, pre, more);
}

// collapsible is a <details> with a summary line and content.
export function collapsible(summary, content, open) {
  return h('details', { open: !!open }, h('summary', null, summary), content);
}

export function fmtTime(ts) {
  if (typeof ts === 'number') {
    const d = new Date(ts);
    return isNaN(d) ? String(ts) : d.toISOString();
  }
  return String(ts ?? '');
}
