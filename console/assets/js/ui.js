// Small DOM helpers shared by the views. Every piece of text from the API goes in through
// textContent (h() never parses HTML), so nothing a job, source or user wrote can become markup.

import { ApiError } from './api.js';

// h builds an element: h('a', {href: '#/jobs', class: 'x', onclick: fn}, 'text', child, [more]).
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'href') el.setAttribute('href', safeHref(v));
    else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected' || k === 'multiple') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// safeHref lets through in-app routes, same-origin paths and http(s) links; anything else (a
// javascript: URL in a report, say) becomes an inert "#".
export function safeHref(v) {
  const s = String(v).trim();
  if (s.startsWith('#') || (s.startsWith('/') && !s.startsWith('//'))) return s;
  if (/^https?:[/][/]/i.test(s)) return s;
  return '#';
}

export function clear(el) { el.replaceChildren(); return el; }

// add and put append or replace children the way h() does: null, undefined and false are left out
// (the DOM's own append would write them as the text "null").
export function add(el, ...children) { append(el, children); return el; }
export function put(el, ...children) { el.replaceChildren(); append(el, children); return el; }

export const route = (...parts) => '#/' + parts.map((p) => encodeURIComponent(p)).join('/');

export function fmtDate(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) + ' ' +
    (new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName')?.value || '');
}

export function time(iso) {
  return h('time', { datetime: iso || '' }, fmtDate(iso));
}

export function fmtBytes(n) {
  if (n == null) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export const plural = (n, one, many) => `${n} ${n === 1 ? one : (many || one + 's')}`;

// Status tone: green for done, red for failed, amber for waiting on someone, blue while running.
const tones = {
  completed: 'ok', complete: 'ok', success: 'ok', processed_successfully: 'ok', done: 'ok', ready: 'ok', active: 'ok',
  failed: 'bad', blocked: 'bad', error: 'bad', processed_with_errors: 'bad', needs_attention: 'warn',
  cancelled: 'idle', paused: 'warn', draft: 'warn', pending: 'idle', queued: 'idle', inactive: 'idle',
  in_progress: 'run', running: 'run', processing: 'run', approved: 'run',
};

export function badge(status, label) {
  const s = String(status || 'unknown');
  const tone = tones[s.toLowerCase()] || 'idle';
  return h('span', { class: `badge ${tone}` }, label || s.toLowerCase().replaceAll('_', ' '));
}

export const terminalJob = (s) => ['completed', 'complete', 'failed', 'blocked', 'cancelled'].includes(s);

export function facts(pairs) {
  const dl = h('dl', { class: 'facts' });
  for (const [k, v] of pairs) {
    if (v === undefined) continue;
    dl.append(h('dt', null, k), h('dd', null, v === null || v === '' ? '—' : v));
  }
  return dl;
}

// problem shows an error the way the API stated it: title, detail, field errors and the code.
export function problem(err, context) {
  if (!(err instanceof ApiError)) {
    console.error(err); // a bug in the console itself: keep the stack for whoever reports it
    err = new ApiError(0, { title: 'Something went wrong', detail: String(err && err.message || err) });
  }
  const box = h('div', { class: 'problem', role: 'alert' },
    h('strong', null, context ? `${context}: ${err.title}` : err.title),
    err.detail ? h('p', null, err.detail) : null,
    // The field errors, unless the detail already says each of them.
    err.errors.some((e) => !err.detail.includes(e.message))
      ? h('ul', null, err.errors.map((e) => h('li', null, e.field ? h('code', null, e.field) : null, e.field ? ' ' : null, e.message))) : null,
    err.retryAfter ? h('p', null, `Try again in ${err.retryAfter} s.`) : null,
    err.code ? h('p', { class: 'small muted' }, 'Code: ', h('code', null, err.code)) : null);
  return box;
}

export function empty(title, text, action) {
  return h('div', { class: 'empty panel' }, h('h2', null, title), text ? h('p', null, text) : null, action || null);
}

export const loading = (what) => h('p', { class: 'loading', 'aria-busy': 'true' }, `Loading ${what || ''}…`.replace(' …', '…'));

export function tableOf(caption, head, rows, attrs) {
  return h('div', { class: 'table-wrap' }, h('table', attrs || null,
    caption ? h('caption', null, caption) : null,
    h('thead', null, h('tr', null, head.map((c) => h('th', { scope: 'col', class: /^(credits|rows|size|amount|jobs|#)/i.test(c) ? 'num' : null }, c)))),
    h('tbody', null, rows)));
}

export function progress(done, total, label) {
  const pct = total ? Math.round((done / total) * 100) : 0;
  return h('span', { class: 'row' },
    h('progress', { max: total || 1, value: done, 'aria-label': label || 'progress' }),
    h('span', { class: 'small muted' }, `${done} / ${total}${total ? ` (${pct} %)` : ''}`));
}

// announce puts a short message in the page's live region (read out by screen readers); forNext
// keeps it through the next navigation.
export function announce(text, forNext) {
  const box = document.getElementById('status');
  box.replaceChildren(h('p', null, text));
  if (forNext) box.dataset.keep = '1';
  clearTimeout(announce.timer);
  announce.timer = setTimeout(() => box.replaceChildren(), 6000);
}

// action is a button that runs fn once at a time: disabled while it runs, its error shown in
// `where` (or just after the button), its success announced.
export function action(label, fn, opts = {}) {
  const btn = h('button', { type: 'button', class: opts.kind || null }, label);
  btn.addEventListener('click', async () => {
    if (opts.confirm && !window.confirm(opts.confirm)) return;
    btn.disabled = true;
    const where = opts.where || btn.parentElement;
    where.querySelectorAll(':scope > .problem').forEach((p) => p.remove());
    try {
      const msg = await fn();
      if (msg) announce(msg);
    } catch (e) {
      if (e.name !== 'AbortError') where.append(problem(e, label));
    } finally {
      btn.disabled = false;
    }
  });
  return btn;
}

// field wraps an input with its label and hint, linked for assistive technology.
let fieldSeq = 0;
export function field(label, input, hint) {
  const id = input.id || `f${++fieldSeq}`;
  input.id = id;
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  if (hintEl) input.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hintEl);
}

export function select(name, options, value) {
  return h('select', { name }, options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)));
}

// pager lists a CursorPage endpoint: the first page now, then a "Load more" button while has_more.
export function pager({ load, render, emptyState, container }) {
  const list = container;
  const more = h('button', { type: 'button', class: 'secondary' }, 'Load more');
  const foot = h('div', { class: 'row' });
  let cursor = null;
  let count = 0;
  async function next() {
    more.disabled = true;
    foot.querySelectorAll('.problem').forEach((p) => p.remove());
    try {
      const page = await load(cursor);
      const items = page.items || [];
      count += items.length;
      for (const it of items) list.append(render(it));
      cursor = page.next_cursor;
      more.hidden = !page.has_more;
      if (!count && emptyState) list.replaceWith(emptyState);
    } catch (e) {
      if (e.name !== 'AbortError') foot.append(problem(e));
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener('click', next);
  more.hidden = true;
  foot.append(more);
  return { foot, start: next };
}

// parseJSONField reads an optional JSON textarea: null when blank, else the value or an error.
export function parseJSONField(text, what) {
  const t = text.trim();
  if (!t) return null;
  try {
    const v = JSON.parse(t);
    if (typeof v !== 'object' || Array.isArray(v) || v === null) throw new Error('it must be a JSON object');
    return v;
  } catch (e) {
    throw new ApiError(422, { title: `${what} is not valid JSON`, detail: e.message });
  }
}
