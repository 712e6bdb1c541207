// One batch: progress counters, every row with its status, headline and job, retry of failed rows
// (all, or one), and cancel. Refreshed every few seconds while rows are still waiting or running.

import { get, post } from '../api.js';
import { h, badge, time, route, facts, progress, tableOf, action, problem, add, put } from '../ui.js';

const open = (s) => s === 'PENDING' || s === 'PROCESSING';

export async function render(ctx) {
  const id = ctx.params[0];
  const path = `/batches/${encodeURIComponent(id)}`;
  const head = h('div');
  const body = h('div');
  add(ctx.main, h('p', { class: 'small' }, h('a', { href: '#/batches' }, '← Batches')), head, body);
  let batch = null;

  async function load() {
    const [b, results] = await Promise.all([
      get(path, null, { signal: ctx.signal }),
      get(`${path}/results`, null, { signal: ctx.signal }).catch((e) => { if (e.name === 'AbortError') throw e; return null; }),
    ]);
    batch = b;
    draw(b, results);
    return open(b.status);
  }

  function draw(b, results) {
    ctx.title(b.batch_name);
    const c = b.counters;
    const paused = b.paused_reason || results?.paused_reason;
    const acts = h('div', { class: 'row' });
    if (c.failed_rows && b.status !== 'CANCELLED') {
      acts.append(action('Retry failed rows', async () => {
        const r = await post(`${path}/retry-failed`, undefined, { signal: ctx.signal });
        await load();
        return `${r.retried_rows} row(s) queued again.`;
      }, { where: acts }));
    }
    if (open(b.status)) {
      acts.append(action('Cancel batch', async () => {
        await post(`${path}/cancel`, undefined, { signal: ctx.signal });
        await load();
        return 'Batch cancelled: waiting rows will not run.';
      }, { kind: 'danger', confirm: 'Cancel this batch? Rows not started yet will not run.', where: acts }));
    }
    put(head,
      h('div', { class: 'row spread' }, h('h1', null, b.batch_name), badge(b.status)),
      h('section', { class: 'panel', 'aria-label': 'Progress' },
        progress(c.processed_rows, c.total_rows, 'Rows processed'),
        h('p', { class: 'small muted' }, `${c.succeeded_rows} succeeded · ${c.failed_rows} failed · ${c.running_rows} running · ${c.pending_rows} waiting`),
        paused ? h('p', { class: 'notice' }, `Paused: ${paused.replaceAll('_', ' ')}. ${paused === 'quota_exhausted' ? 'Rows resume when credits return.' : 'The credit budget is spent.'}`) : null,
        facts([
          ['Effort', b.requested_effort && b.requested_effort !== b.effort ? `${b.effort} (asked ${b.requested_effort})` : b.effort],
          ['Expert', b.expert_id],
          ['Credits', `${b.credits_spent ?? 0} spent · ${b.credits_per_row ?? 0} per row${b.max_credits ? ` · budget ${b.max_credits}` : ''}`],
          ['Rows at once', String(b.max_concurrent ?? '')],
          ['Created', time(b.created_at)],
          ['Finished', b.processing_completed_at ? time(b.processing_completed_at) : null],
          ['Loop', b.schedule_id ? h('a', { href: route('loops', b.schedule_id) }, `run ${b.run_number} of a loop`) : undefined],
        ]),
        acts));
    const byRow = new Map((results?.results || []).map((r) => [r.row_number, r]));
    const rows = (b.rows || []).map((r) => {
      const res = byRow.get(r.row_number) || {};
      const retry = r.status === 'FAILED' && b.status !== 'CANCELLED'
        ? action('Retry', async () => { await post(`${path}/rows/${r.row_number}/retry`, undefined, { signal: ctx.signal }); await load(); return `Row ${r.row_number} queued again.`; }, { kind: 'secondary' })
        : null;
      return h('tr', null,
        h('td', { class: 'num' }, String(r.row_number)),
        h('td', { class: 'question' }, r.question, rowData(r)),
        h('td', null, badge(r.status), r.error_code ? h('div', { class: 'small muted' }, h('code', null, r.error_code)) : null),
        h('td', { class: 'question' }, res.headline || res.excerpt || h('span', { class: 'muted' }, '—')),
        h('td', null, r.job_id ? h('a', { href: route('jobs', r.job_id) }, 'Open job') : h('span', { class: 'muted' }, 'not started')),
        h('td', null, retry));
    });
    put(body, h('section', { class: 'panel', 'aria-labelledby': 'rows-h' },
      h('h2', { id: 'rows-h' }, 'Rows'),
      rows.length ? tableOf(null, ['#', 'Question', 'Status', 'Headline', 'Job', ''], rows) : h('p', { class: 'muted' }, 'This batch has no rows.')));
  }

  await load();
  // Poll only while rows wait or run; a retry reopens the batch and polling picks it up again.
  // Every 4 s: two reads a poll stay well inside the smallest tier's rate limit.
  ctx.every(4000, async () => {
    if (!open(batch.status)) return true;
    try { await load(); } catch (e) {
      if (e.name !== 'AbortError') body.prepend(problem(e, 'Refresh'));
      return false;
    }
    return true;
  });
}

// rowData shows a CSV row's other columns under its question.
function rowData(r) {
  const rest = Object.entries(r.row_data || {}).filter(([, v]) => v !== r.question && v !== '' && v != null);
  if (!rest.length) return null;
  return h('div', { class: 'small muted' }, rest.map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · '));
}
