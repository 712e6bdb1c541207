// One campaign: its plan and review digest, approve, then stages and records as they progress,
// attention with its next action (retry, add credits, cancel), each stage's records (portfolio)
// and the deliverables to download. Refreshed while it is approved or running.

import { get, post, download } from '../api.js';
import { h, badge, time, facts, progress, tableOf, action, problem, empty, announce, add, put } from '../ui.js';
import { render as markdown } from '../markdown.js';
import { stageProgress } from './campaigns.js';

const live = (s) => s === 'approved' || s === 'running';

export async function render(ctx) {
  const id = ctx.params[0];
  const path = `/campaigns/${encodeURIComponent(id)}`;
  const view = h('div');
  const portfolio = h('div');
  add(ctx.main, h('p', { class: 'small' }, h('a', { href: '#/campaigns' }, '← Campaigns')), view, portfolio);
  let c = null;
  let shownStage = '';

  async function load() {
    c = await get(path, null, { signal: ctx.signal });
    draw();
    if (shownStage) await showStage(shownStage, false);
  }

  function draw() {
    ctx.title(c.name);
    const acts = h('div', { class: 'row' });
    if (c.status === 'draft') {
      acts.append(action('Approve and start', async () => {
        await post(`${path}/approve`, { review_digest: c.review_digest }, { signal: ctx.signal });
        await load();
        return 'Approved: the campaign starts within about 30 seconds.';
      }, { where: acts }));
    }
    if (['draft', 'approved', 'running', 'needs_attention'].includes(c.status)) {
      acts.append(action('Cancel campaign', async () => {
        await post(`${path}/cancel`, undefined, { signal: ctx.signal });
        await load();
        return 'Campaign cancelled.';
      }, { kind: 'danger', confirm: 'Cancel this campaign? No new worker starts; finished records stay readable.', where: acts }));
    }
    const pr = stageProgress(c.stages);
    put(view,
      h('div', { class: 'row spread' }, h('h1', null, c.name), h('span', { 'aria-live': 'polite' }, badge(c.status))),
      c.next_step ? h('p', { class: 'notice' }, c.next_step) : null,
      attention(c, path, ctx, load),
      h('section', { class: 'panel', 'aria-labelledby': 'prog-h' },
        h('h2', { id: 'prog-h' }, 'Progress'),
        pr.total ? progress(pr.done, pr.total, 'Records finished') : h('p', { class: 'muted' }, c.status === 'draft' ? 'Not started: approve the plan to start.' : 'No records counted yet.'),
        facts([
          ['Records', c.records ? `${c.records.accepted} accepted of ${c.records.supplied} supplied${c.records.blank_dropped ? `, ${c.records.blank_dropped} blank left out` : ''}${c.records.duplicates_dropped ? `, ${c.records.duplicates_dropped} duplicates left out` : ''}` : null],
          ['Credits spent', `${c.credits_spent ?? 0}${c.max_credits ? ` of a budget of ${c.max_credits}` : ''}`],
          ['Approved', c.approved_at ? time(c.approved_at) : null],
          ['Started', c.started_at ? time(c.started_at) : null],
          ['Finished', c.finished_at ? time(c.finished_at) : null],
          ['Revision', String(c.revision)],
        ]),
        acts),
      stages(c, (key) => showStage(key, true)),
      plan(c),
      deliverables(c, path));
  }

  async function showStage(key, focus) {
    shownStage = key;
    const p = await get(`${path}/stages/${encodeURIComponent(key)}/portfolio`, { limit: 50 }, { signal: ctx.signal });
    const cols = p.fields || [];
    const heading = h('h2', { id: 'pf-h', tabindex: '-1' }, `Records of stage “${key}”`);
    put(portfolio, h('section', { class: 'panel', 'aria-labelledby': 'pf-h' }, heading,
      h('p', { class: 'small muted' }, `${p.coverage.done} done · ${p.coverage.failed} failed · ${p.coverage.pending} pending of ${p.coverage.total}${p.has_more ? ' (first 50 shown; the deliverable has them all)' : ''}`),
      (p.items || []).length ? tableOf(null, ['Record', 'Status', ...cols.map((f) => f.label)], p.items.map((it) => h('tr', null,
        h('td', null, it.entity_key),
        h('td', null, badge(it.status), it.error_code ? h('div', { class: 'small' }, h('code', null, it.error_code)) : null),
        cols.map((f) => h('td', { class: 'question' }, cell(it.fields[f.name])))))) : h('p', { class: 'muted' }, 'No records in this stage yet.')));
    if (focus) heading.focus();
  }

  await load();
  ctx.every(3000, async () => {
    if (!live(c.status)) return true;
    try { await load(); } catch (e) {
      if (e.name === 'AbortError') return false;
      view.prepend(problem(e, 'Refresh'));
    }
    if (!live(c.status)) announce(`The campaign is ${c.status.replaceAll('_', ' ')}.`);
    return true;
  });
}

// cell shows one portfolio value: long text (a worker's report) folded and rendered as Markdown.
function cell(v) {
  if (v === null || v === undefined) return h('span', { class: 'muted' }, '—');
  if (typeof v === 'string') {
    if (v.length < 200 && !v.includes('\n')) return v;
    return h('details', null, h('summary', null, v.split('\n').find((l) => l.trim())?.replace(/^#+\s*/, '').slice(0, 80) || 'Read'),
      h('div', { class: 'report' }, markdown(v)));
  }
  return h('code', null, JSON.stringify(v));
}

function attention(c, path, ctx, load) {
  const a = c.attention;
  if (!a) return null;
  const next = h('div', { class: 'row' });
  if (a.next_action === 'retry') {
    next.append(action('Retry', async () => { await post(`${path}/retry`, undefined, { signal: ctx.signal }); await load(); return 'Retrying: the campaign is running again.'; }, { where: next }));
  } else if (a.next_action === 'add_credits') {
    next.append(h('a', { class: 'button', href: '#/account' }, 'See your credits'),
      h('span', { class: 'small muted' }, 'The campaign resumes on its own once credits return (an operator adds them with ', h('code', null, 'researchd credits grant'), ').'));
  } else if (a.next_action === 'cancel') {
    next.append(h('span', { class: 'small' }, 'The approved budget is spent; it cannot be raised. Cancel the campaign to settle it.'));
  }
  return h('section', { class: 'problem', role: 'alert', 'aria-labelledby': 'att-h' },
    h('h2', { id: 'att-h' }, 'Needs your attention'),
    h('p', null, h('strong', null, a.reason.replaceAll('_', ' ')), a.stage_key ? ` in stage “${a.stage_key}”` : '', `: ${a.message}`),
    h('p', { class: 'small' }, 'Next action: ', h('code', null, a.next_action)),
    next);
}

function stages(c, open) {
  const rows = (c.stages || []).map((s) => h('tr', null,
    h('td', null, h('button', { type: 'button', class: 'link', onclick: () => open(s.key) }, s.title), h('div', { class: 'small muted' }, h('code', null, s.key))),
    h('td', null, badge(s.status)),
    h('td', null, s.fanout.replaceAll('_', ' ')),
    h('td', null, s.records_total ? progress(s.records_done + s.records_failed, s.records_total, `Stage ${s.key}`) : '—',
      s.records_failed ? h('div', { class: 'small' }, `${s.records_failed} failed`) : null),
    h('td', { class: 'num' }, String(s.credits_spent ?? 0))));
  return h('section', { class: 'panel', 'aria-labelledby': 'st-h' }, h('h2', { id: 'st-h' }, 'Stages'),
    rows.length ? tableOf(null, ['Stage', 'Status', 'Fan-out', 'Records', 'Credits'], rows) : h('p', { class: 'muted' }, 'No stages.'),
    h('p', { class: 'small muted' }, 'Open a stage to see its records.'));
}

// plan shows what will run (the plan is what the digest covers, with the revision and budget).
function plan(c) {
  if (!c.plan) return null;
  const members = new Map((c.workforce?.members || []).map((m) => [m.stage_key, m]));
  return h('section', { class: 'panel', 'aria-labelledby': 'plan-h' }, h('h2', { id: 'plan-h' }, 'Plan'),
    tableOf(null, ['Stage', 'Fan-out', 'Depends on', 'Worker', 'Effort', 'Instruction'], c.plan.stages.map((s) => h('tr', null,
      h('td', null, s.title, h('div', { class: 'small muted' }, h('code', null, s.key))),
      h('td', null, (s.fanout || 'root').replaceAll('_', ' ')),
      h('td', null, (s.depends_on || []).join(', ') || '—'),
      h('td', null, members.get(s.key)?.agent_name || '—'),
      h('td', null, s.effort || '—'),
      h('td', { class: 'question' }, s.instruction || (s.question_field ? `the record’s “${s.question_field}”` : '—'))))),
    h('h3', null, 'Deliverables'),
    h('ul', null, (c.plan.deliverables || []).map((d) => h('li', null, `${d.title} — `, h('code', null, d.filename), ` (from stage ${d.stage_key})`))),
    h('h3', null, 'Review digest'),
    h('p', { class: 'small' }, 'Approving sends this digest back: it proves the plan, revision and budget approved are the ones shown here.'),
    h('p', null, h('code', { class: 'digest' }, c.review_digest)));
}

function deliverables(c, path) {
  const files = c.deliverable_files?.length ? c.deliverable_files : c.artifacts || [];
  const box = h('section', { class: 'panel', 'aria-labelledby': 'dl-h' }, h('h2', { id: 'dl-h' }, 'Deliverables'));
  if (!files.length) {
    box.append(empty('No deliverable yet', c.status === 'completed' ? 'The campaign produced no file.' : 'Files appear here as stages complete.'));
    return box;
  }
  box.append(h('ul', { class: 'plain' }, files.map((f) => h('li', { class: 'row spread' },
    h('span', null, h('strong', null, f.filename), h('span', { class: 'small muted' }, ` · ${f.media_type} · ${f.byte_size} bytes`)),
    action(`Download ${f.filename}`, () => download(`${path}/deliverables/${encodeURIComponent(f.deliverable_key)}`, f.filename), { kind: 'secondary' })))));
  return box;
}
