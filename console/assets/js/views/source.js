// A stored source opened at a citation: the text the run read (GET /research/{job}/files/sources/…),
// lines numbered, the quoted passage marked and focused, the cited lines shaded. Also the plain
// workspace file viewer.

import { request, download } from '../api.js';
import { h, route, fmtBytes, action, safeHref, add } from '../ui.js';
import { render as markdown } from '../markdown.js';
import { findQuote, storedSource } from '../cite.js';
import { filePath, sourcesIndex } from './jobparts.js';

const fileURL = (job, path) => `/research/${encodeURIComponent(job)}/files/${filePath(path)}`;

export async function render(ctx) {
  const job = ctx.params[0];
  const q = ctx.query;
  const rev = q.get('rev') || '';
  const quote = q.get('quote') || '';
  const from = parseInt(q.get('from') || '0', 10);
  const to = parseInt(q.get('to') || q.get('from') || '0', 10);
  const n = q.get('n');
  const index = await sourcesIndex(job, rev, ctx.signal);
  const ref = q.get('ref') || '';
  const stored = storedSource(index, q.get('path')) || storedSource(index, ref);
  // A cited input file with no stored copy is still in the workspace under its cited path.
  const path = stored ? stored.path : q.get('path') || ref;
  const back = rev ? `${route('jobs', job)}?revision=${encodeURIComponent(rev)}` : route('jobs', job);
  ctx.title(n ? `Source [${n}]` : 'Source');

  add(ctx.main,
    h('p', { class: 'small' }, h('a', { href: back }, '← Back to the report')),
    h('h1', null, n ? `Source [${n}]` : 'Source', stored?.title ? `: ${stored.title}` : ''));
  const meta = h('dl', { class: 'facts panel' });
  const fact = (k, v) => { if (v) meta.append(h('dt', null, k), h('dd', null, v)); };
  fact('Stored copy', h('code', null, path || 'unknown'));
  if (stored) {
    fact('Origin', /^https?:\/\//.test(stored.origin)
      ? h('a', { href: safeHref(stored.origin), rel: 'noopener noreferrer nofollow', target: '_blank' }, stored.origin)
      : h('code', null, stored.origin));
    fact('Retrieved', stored.retrieved_at);
    fact('SHA-256', h('code', { class: 'small' }, stored.sha256));
  }
  if (from) fact('Cited lines', from === to ? `line ${from}` : `lines ${from}–${to}`);
  add(ctx.main, meta);
  if (quote) add(ctx.main, h('figure', { class: 'panel' }, h('figcaption', { class: 'label' }, 'Quote'), h('blockquote', null, quote)));
  if (!path) {
    add(ctx.main, h('p', { class: 'problem', role: 'alert' }, 'The report names no stored copy for this citation.'));
    return;
  }

  const res = await request(fileURL(job, path), { raw: true, signal: ctx.signal, query: rev ? { revision: rev } : null });
  const text = await res.text();
  const ranges = findQuote(text, quote);
  const found = h('p', { class: ranges ? 'notice' : 'problem', role: 'status' });
  add(ctx.main, found);
  const view = lines(text, ranges, from, to);
  add(ctx.main, view);
  const mark = view.querySelector('mark');
  const cited = view.querySelector('.line.cited');
  if (mark) {
    const line = mark.closest('.line').dataset.n;
    found.textContent = `The quote is marked below, from line ${line}.`;
    mark.setAttribute('tabindex', '-1');
    mark.id = 'quote';
    mark.scrollIntoView({ block: 'center' });
    ctx.focusTarget = mark;
  } else {
    found.textContent = quote
      ? 'The quote was not found word for word in the stored copy; the cited lines are shaded instead.'
      : 'No quote is attached to this citation; the cited lines are shaded.';
    if (cited) { cited.scrollIntoView({ block: 'center' }); cited.setAttribute('tabindex', '-1'); ctx.focusTarget = cited; }
  }
}

// lines renders text as numbered lines, wrapping the quote's ranges in <mark> (a range may cross
// lines) and shading the cited lines.
function lines(text, ranges, from, to) {
  const box = h('div', { class: 'source', role: 'region', 'aria-label': 'Stored source text' });
  const marked = ranges || [];
  let offset = 0;
  const all = text.split('\n');
  all.forEach((line, i) => {
    const num = i + 1;
    const start = offset;
    const end = offset + line.length;
    offset = end + 1;
    const lt = h('span', { class: 'lt' });
    let pos = start;
    for (const [a, b] of marked) {
      if (b <= pos || a >= end) continue;
      const s = Math.max(a, pos);
      const e = Math.min(b, end);
      if (s > pos) lt.append(text.slice(pos, s));
      lt.append(h('mark', null, text.slice(s, e)));
      pos = e;
    }
    if (pos < end) lt.append(text.slice(pos, end));
    if (!line) lt.append('\u200b'); // keep empty lines one line high
    const cited = from && num >= from && num <= to;
    box.append(h('div', { class: cited ? 'line cited' : 'line', 'data-n': String(num), id: `L${num}` },
      h('span', { class: 'ln', 'aria-hidden': 'true' }, String(num)), lt));
  });
  return box;
}

// renderFile shows one workspace file: text as text (Markdown rendered), anything else as a download.
export async function renderFile(ctx) {
  const job = ctx.params[0];
  const path = ctx.query.get('path') || '';
  const rev = ctx.query.get('rev') || '';
  ctx.title(path);
  add(ctx.main,
    h('p', { class: 'small' }, h('a', { href: rev ? `${route('jobs', job)}?revision=${encodeURIComponent(rev)}` : route('jobs', job) }, '← Back to the job')),
    h('h1', null, path));
  const res = await request(fileURL(job, path), { raw: true, signal: ctx.signal, query: rev ? { revision: rev } : null });
  const type = res.headers.get('Content-Type') || 'application/octet-stream';
  const size = parseInt(res.headers.get('Content-Length') || '0', 10);
  const name = path.split('/').pop();
  const dl = action('Download', () => download(`${fileURL(job, path)}${rev ? `?revision=${encodeURIComponent(rev)}` : ''}`, name), { kind: 'secondary' });
  add(ctx.main, h('div', { class: 'row' }, h('span', { class: 'muted small' }, `${type}${size ? ` · ${fmtBytes(size)}` : ''}`), dl));
  const textual = /^text\/|json|xml|yaml|csv/.test(type);
  if (!textual || size > 2 * 1024 * 1024) {
    res.body?.cancel();
    add(ctx.main, h('p', { class: 'panel muted' }, 'This file is not shown here; download it to open it.'));
    return;
  }
  const text = await res.text();
  if (/markdown/.test(type) || /\.md$/i.test(path)) {
    add(ctx.main, h('div', { class: 'panel report' }, markdown(text)),
      h('details', null, h('summary', null, 'Markdown source'), h('pre', null, text)));
  } else {
    let shown = text;
    if (/json/.test(type)) { try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch { /* show as sent */ } }
    add(ctx.main, h('pre', { class: 'panel' }, shown));
  }
}
