// The viewer's entry module: client-side routing over the one HTML shell (viewer.md §1), the
// token field (auth mode, §3), and page lifecycles.
import { h, clear } from './dom.js';
import { token, setToken } from './api.js';
import { runsPage } from './runs.js';
import { runPage } from './run.js';
import { openPage } from './open.js';
import { busPage } from './bus.js';
import { notificationsPage } from './notifications.js';

const main = document.getElementById('main');
let teardown = null;

function setTitle(t) { document.title = `${t} — agentwire`; }

function navigate(url) {
  history.pushState(null, '', url);
  route();
}

async function route() {
  if (teardown) {
    try { teardown(); } catch { /* a page that failed to start */ }
    teardown = null;
  }
  clear(main);
  const path = location.pathname;
  const params = new URLSearchParams(location.search);
  let nav = 'runs';
  let page;
  const run = /^\/runs\/([^/]+)$/.exec(path);
  if (path === '/') page = runsPage(main, params, setTitle, navigate);
  else if (run) { nav = null; page = runPage(main, decodeURIComponent(run[1]), params, setTitle); }
  else if (path === '/open') { nav = 'open'; page = openPage(main, params, setTitle); }
  else if (path === '/bus') { nav = 'bus'; page = busPage(main, params, setTitle, navigate); }
  else if (path === '/notifications') { nav = 'notifications'; page = notificationsPage(main, params, setTitle, navigate); }
  else {
    nav = null;
    setTitle('Not found');
    main.append(h('h1', null, 'Not found'), h('p', null, 'No viewer page here. ', h('a', { href: '/' }, 'Runs')));
  }
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const mine = Symbol('route');
  route.current = mine;
  const stop = await page;
  if (route.current === mine) teardown = stop;
  else if (typeof stop === 'function') stop();
}

// Same-origin links to viewer pages route on the client.
document.addEventListener('click', (e) => {
  const a = e.target.closest && e.target.closest('a[href]');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || a.target) return;
  const u = new URL(a.href, location.href);
  if (u.origin !== location.origin || u.pathname.startsWith('/v1/') || u.pathname.startsWith('/assets/')) return;
  if (u.pathname === location.pathname && u.search === location.search && u.hash) return;
  e.preventDefault();
  navigate(u.pathname + u.search);
  main.focus();
});
window.addEventListener('popstate', route);

// The token field: kept in sessionStorage only (this tab), sent as a bearer token.
const form = document.getElementById('token-form');
const field = document.getElementById('token');
field.value = token();
form.addEventListener('submit', (e) => {
  e.preventDefault();
  setToken(field.value.trim());
  route();
});
document.getElementById('token-clear').addEventListener('click', () => {
  field.value = '';
  setToken('');
  route();
});
window.addEventListener('agentwire-unauthorized', () => {
  form.classList.add('needed');
  if (!token()) field.focus();
});

route();
