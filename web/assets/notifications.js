// /notifications: subscribe to subject patterns (NATS wildcards) and watch envelopes live
// (GET /v1/notifications/stream, SSE read with fetch; resumes with Last-Event-ID).
import { h, clear, jsonBlock, collapsible } from './dom.js';
import { Follower } from './api.js';

export function notificationsPage(main, params, setTitle, navigate) {
  setTitle('Notifications');
  const subjects = params.getAll('subject').filter((s) => s.trim());
  const inputs = h('div', { class: 'subjects' });
  const addInput = (v) => {
    const id = `subject-${inputs.children.length}`;
    inputs.append(h('div', { class: 'subject-row' }, h('label', { for: id }, 'Subject pattern'),
      h('input', { id, name: 'subject', value: v || '', placeholder: 'notifications.>', spellcheck: 'false' })));
  };
  (subjects.length ? subjects : ['notifications.>']).forEach(addInput);
  const list = h('ol', { class: 'envelopes', reversed: true, 'aria-live': 'polite' });
  const conn = h('p', { class: 'conn', role: 'status' });
  main.append(h('h1', null, 'Notifications'),
    h('form', { class: 'toolbar', onsubmit: (e) => {
      e.preventDefault();
      const q = new URLSearchParams();
      for (const i of inputs.querySelectorAll('input')) if (i.value.trim()) q.append('subject', i.value.trim());
      navigate(`/notifications?${q}`);
    } }, inputs, h('button', { type: 'button', onclick: () => addInput('') }, 'Add pattern'), h('button', { type: 'submit' }, 'Subscribe')),
    conn, list);
  if (!subjects.length) {
    conn.textContent = 'Choose subject patterns and subscribe.';
    return () => {};
  }
  let last = null;
  const q = new URLSearchParams();
  subjects.forEach((s) => q.append('subject', s));
  const follower = new Follower({
    path: `/v1/notifications/stream?${q}`,
    cursor: () => last,
    onFrame: (f) => {
      last = f.id;
      let env;
      try { env = JSON.parse(f.data); } catch { env = f.data; }
      list.prepend(h('li', { class: 'envelope', dataset: { seq: String(f.id) } },
        h('header', null, h('span', { class: 'seq' }, `#${f.id}`), ' ', h('strong', null, String(env.topic ?? '')), ' ',
          env.source !== undefined ? h('span', { class: 'badge' }, `source ${env.source}`) : null, ' ',
          env.urgency !== undefined ? h('span', { class: `badge urgency-${env.urgency}` }, `urgency ${env.urgency}`) : null),
        env.payload_summary !== undefined ? h('p', { class: 'summary' }, String(env.payload_summary)) : null,
        collapsible('envelope', jsonBlock(env))));
    },
    onState: (s) => {
      conn.dataset.state = s.state;
      if (s.state === 'live') conn.textContent = `Live: ${subjects.join(', ')}${s.cursor ? ` (from #${s.cursor})` : ''}.`;
      else if (s.state === 'reconnecting') conn.textContent = `Reconnecting${s.cursor ? ` from #${s.cursor}` : ''}${s.delay ? ` in ${(s.delay / 1000).toFixed(2)} s` : ''}…`;
      else if (s.state === 'error') conn.textContent = `Stopped: ${s.error.message}`;
      else conn.textContent = 'Connecting…';
    },
    ended: () => false,
  }).start();
  return () => follower.stop();
}
