// The parts of a job page: the report with its citations linked to the stored sources, the
// structured output with each field's basis, revisions, workspace files and runs.

import { get } from '../api.js';
import { h, badge, time, fmtBytes, tableOf, route, facts } from '../ui.js';
import { render as markdown } from '../markdown.js';
import { sourceLists, quotesByNumber, entryFor, storedSource, sourceLink } from '../cite.js';

export const filePath = (p) => p.split('/').map(encodeURIComponent).join('/');

// sourcesIndex reads sources/index.json (every source the run stored); a job without sources has
// none, which is not an error.
export async function sourcesIndex(job, revision, signal) {
  try {
    const idx = await get(`/research/${encodeURIComponent(job)}/files/sources/index.json`, revision ? { revision } : null, { signal });
    return Array.isArray(idx) ? idx : [];
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    return [];
  }
}

// report renders Markdown with each [n] marker a link to its stored source, opened at the quote.
export function report(md, { job, index, revision }) {
  const lists = sourceLists(md);
  const blockQuotes = quotesByNumber(md);
  const cite = (n, quote, line) => {
    const e = entryFor(lists, n, line);
    if (!e) return null;
    const stored = storedSource(index, e.stored) || storedSource(index, e.ref);
    const href = sourceLink(job, {
      path: stored ? stored.path : e.stored, ref: e.ref, from: e.from, to: e.to,
      quote: quote || blockQuotes.get(n) || '', n, rev: revision,
    });
    return h('a', { class: 'cite', href, 'aria-label': `Source ${n}: ${e.text}`, title: e.text }, `[${n}]`);
  };
  return h('div', { class: 'report' }, markdown(md, { cite }));
}

export function citationFigure(c) {
  if (!c) return null;
  const all = c.verified === c.total;
  return h('p', { class: 'row' },
    h('span', { class: 'figure' }, `Citations verified: ${c.verified}/${c.total}`),
    badge(all ? 'completed' : 'needs_attention', all ? 'all quotes found in their sources' : 'some quotes could not be verified and were removed'));
}

// structured renders structured_output field by field, each with its confidence and the quotes
// that support it, every quote a link to its stored source.
export function structured(detail, index) {
  const out = detail.structured_output;
  const basis = detail.structured_output_basis || {};
  if (out == null && !Object.keys(basis).length) return null;
  const names = [...new Set([...Object.keys(out || {}), ...Object.keys(basis)])];
  const job = detail.slug || detail.job_id;
  const rows = names.map((name) => {
    const b = basis[name];
    const value = out && name in out ? out[name] : undefined;
    return h('tr', null,
      h('th', { scope: 'row' }, h('code', null, name)),
      h('td', null, value === undefined ? h('span', { class: 'muted' }, 'not given') : h('pre', { class: 'small' }, JSON.stringify(value, null, 2))),
      h('td', null, b ? badge(b.confidence === 'high' ? 'completed' : b.confidence === 'medium' ? 'approved' : 'pending', b.confidence) : '—'),
      h('td', null, b && b.citations.length ? h('ul', { class: 'plain small' }, b.citations.map((c) => {
        const s = storedSource(index, c.source);
        return h('li', null, h('a', { href: sourceLink(job, { path: s ? s.path : '', ref: c.source, quote: c.quote }) }, `“${c.quote}”`),
          h('span', { class: 'muted' }, ` — ${s ? s.title || s.origin : c.source}`));
      })) : h('span', { class: 'muted' }, 'no supporting quote')));
  });
  return h('section', { class: 'panel', 'aria-labelledby': 'so-h' },
    h('h2', { id: 'so-h' }, 'Structured output'),
    names.length ? tableOf(null, ['Field', 'Value', 'Confidence', 'Basis'], rows) : h('p', { class: 'muted' }, 'The structured output is empty.'),
    h('details', null, h('summary', null, 'As JSON'), h('pre', null, JSON.stringify(out, null, 2))));
}

export function revisions(detail, current) {
  const revs = detail.revisions || [];
  const job = detail.slug || detail.job_id;
  const latest = detail.report?.revision_sha;
  return h('section', { class: 'panel', 'aria-labelledby': 'rev-h' },
    h('h2', { id: 'rev-h' }, 'Revisions'),
    revs.length ? tableOf(null, ['Revision', 'Checkpoint', 'Message', 'Created', ''], [...revs].reverse().map((r) => h('tr', null,
      h('td', null, h('code', null, r.commit_sha.slice(0, 10))),
      h('td', null, r.checkpoint_type),
      h('td', null, r.message || ''),
      h('td', null, time(r.created_at)),
      h('td', null, r.commit_sha === current || (!current && r.commit_sha === latest)
        ? h('span', { class: 'muted' }, 'shown')
        : h('a', { href: `${route('jobs', job)}?revision=${r.commit_sha}` }, 'Read'))))) : h('p', { class: 'muted' }, 'No revision published yet.'));
}

// listFiles reads the workspace listing once for the files panel and to know whether the run stored
// sources (a job without any has no sources/index.json to ask for).
export async function listFiles(job, revision, signal) {
  try {
    const list = await get(`/research/${encodeURIComponent(job)}/files`, revision ? { revision } : null, { signal });
    return { files: list.files || [] };
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    return { files: [], error: e };
  }
}

export function files(detail, revision, listing) {
  const job = detail.slug || detail.job_id;
  const box = h('section', { class: 'panel', 'aria-labelledby': 'files-h' }, h('h2', { id: 'files-h' }, 'Workspace files'));
  const fs = listing.files;
  if (listing.error) box.append(h('p', { class: 'muted' }, `Files are not available: ${listing.error.detail || listing.error.title}`));
  else if (!fs.length) box.append(h('p', { class: 'muted' }, 'The workspace has no files yet.'));
  else {
    box.append(tableOf(null, ['Path', 'Type', 'Size', 'Last change'], fs.map((f) => h('tr', null,
      h('td', null, h('a', { href: `${route('jobs', job, 'file')}?${new URLSearchParams({ path: f.path, ...(revision ? { rev: revision } : {}) })}` }, f.path)),
      h('td', { class: 'small' }, f.content_type),
      h('td', { class: 'num' }, fmtBytes(f.size_bytes)),
      h('td', null, time(f.last_modified))))));
  }
  return box;
}

export function runs(detail) {
  const rs = detail.runs || [];
  if (!rs.length) return null;
  return h('section', { class: 'panel', 'aria-labelledby': 'runs-h' },
    h('h2', { id: 'runs-h' }, 'Runs'),
    tableOf(null, ['Kind', 'Status', 'Effort', 'Started', 'Finished', 'Credits'], rs.map((r) => h('tr', null,
      h('td', null, r.kind), h('td', null, badge(r.status)), h('td', null, r.effort || ''),
      h('td', null, time(r.started_at)), h('td', null, time(r.finished_at)), h('td', { class: 'num' }, String(r.credits_charged ?? '—'))))));
}

export function summary(detail) {
  const effort = detail.requested_effort && detail.requested_effort !== detail.effort
    ? `${detail.effort} (asked ${detail.requested_effort}, clamped to your tier)` : detail.effort;
  return facts([
    ['Effort', effort],
    ['Created', time(detail.created_at)],
    ['Started', detail.started_at ? time(detail.started_at) : null],
    ['Finished', detail.completed_at ? time(detail.completed_at) : null],
    ['Credits charged', String(detail.credits_charged ?? 0)],
    ['Expert', detail.expert ? `${detail.expert.id}${detail.expert.version ? ` v${detail.expert.version}` : ''}` : detail.expert_id],
    ['Attachments', (detail.attachment_ids || []).length ? String(detail.attachment_ids.length) : null],
    ['Webhook', detail.webhook_url],
    ['Identifier', h('code', null, detail.slug || detail.job_id)],
  ]);
}
