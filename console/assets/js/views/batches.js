// Batches: the list (GET /batches) and the create form (POST /batches), with the credit estimate
// (GET /batches/estimate) shown before anything is sent.

import { get } from '../api.js';
import { listPage, createForm, needText } from '../forms.js';
import { h, badge, time, route, field, select, problem, progress, parseJSONField, plural, add, put } from '../ui.js';
import { questionsInput } from '../rows.js';
import { EFFORTS, expertOptions } from './newjob.js';

export async function render(ctx) {
  await listPage(ctx, {
    title: 'Batches', path: '/batches', newHref: '#/batches/new', newLabel: 'New batch',
    emptyTitle: 'No batches yet', emptyText: 'A batch runs one research job per question, with one configuration for all.',
    render: (b) => h('li', null,
      h('div', { class: 'row spread' }, h('a', { class: 'title', href: route('batches', b.batch_id) }, b.batch_name), badge(b.status)),
      h('div', { class: 'row small muted' },
        progress(b.counters.processed_rows, b.counters.total_rows, `${b.batch_name}: rows processed`),
        b.counters.failed_rows ? h('span', null, `${b.counters.failed_rows} failed`) : null,
        h('span', null, `effort ${b.effort}`), h('span', null, 'created ', time(b.created_at)),
        b.run_number ? h('span', null, `loop run ${b.run_number}`) : null)),
  });
}

// batchOptions is the configuration part shared by the batch and loop forms.
export async function batchOptions(ctx, { onChange } = {}) {
  const experts = await expertOptions(ctx.signal);
  const effort = select('effort', EFFORTS.map((e) => [e, e]), 'medium');
  const expert = select('expert_id', experts, '');
  const concurrency = h('input', { type: 'number', name: 'max_concurrent', min: 1, max: 20, value: '5' });
  const budget = h('input', { type: 'number', name: 'max_credits', min: 1, placeholder: 'no limit' });
  const schema = h('textarea', { class: 'code', name: 'custom_json_schema', rows: 5, spellcheck: 'false' });
  for (const el of [effort, expert]) el.addEventListener('change', () => onChange && onChange());
  return {
    element: h('div', null,
      field('Effort', effort, 'The same for every row; clamped to your tier.'),
      field('Expert', expert),
      h('details', null, h('summary', null, 'Concurrency, budget and structured output (optional)'),
        field('Rows at once', concurrency, '1 to 20.'),
        field('Credit budget', budget, 'The batch pauses when it has spent this many credits.'),
        field('JSON Schema for each row', schema, 'Each row’s structured output must satisfy it.'))),
    read() {
      const body = { effort: effort.value };
      if (expert.value) body.expert_id = expert.value;
      if (concurrency.value) body.max_concurrent = parseInt(concurrency.value, 10);
      if (budget.value) body.max_credits = parseInt(budget.value, 10);
      const js = parseJSONField(schema.value, 'The JSON Schema');
      if (js) body.custom_json_schema = js;
      return body;
    },
    effort, expert,
  };
}

// estimateBox shows what a number of rows costs at the chosen effort, against the quota.
export function estimateBox(ctx, opts, rowsOf) {
  const box = h('div', { class: 'panel', 'aria-live': 'polite' });
  let timer = 0;
  const refresh = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const rows = rowsOf();
      if (!rows) { put(box, h('span', { class: 'muted' }, 'Add questions to see what the batch costs.')); return; }
      try {
        const query = { rows, effort: opts.effort.value };
        if (opts.expert.value) query.expert_id = opts.expert.value;
        const [est, quota] = await Promise.all([
          get('/batches/estimate', query, { signal: ctx.signal }),
          get('/quota', null, { signal: ctx.signal }).catch(() => null),
        ]);
        put(box,
          h('strong', null, `${plural(est.total_credits, 'credit')} for ${plural(est.rows, 'row')}`),
          ` (${est.credits_per_row} per row at ${est.effort}${est.downgraded ? `, asked ${est.requested_effort}: your tier runs at most ${est.effort}` : ''}).`,
          quota ? ` You have ${quota.credits_remaining} credits.` : '',
          quota && quota.credits_remaining < est.total_credits ? h('p', { class: 'notice' }, 'Not enough credits for every row: rows wait (quota_exhausted) until credits return.') : null);
      } catch (e) {
        if (e.name !== 'AbortError') put(box, problem(e, 'Estimate'));
      }
    }, 250);
  };
  return { element: box, refresh };
}

// batchFields are what the batch and loop forms share: the name, the questions (at most max), the
// configuration and the estimate, which follows both.
export async function batchFields(ctx, max) {
  const name = h('input', { type: 'text', name: 'batch_name', required: true, maxlength: 200 });
  let est = null;
  const qs = questionsInput({ max, onChange: () => est && est.refresh() });
  const opts = await batchOptions(ctx, { onChange: () => est.refresh() });
  est = estimateBox(ctx, opts, () => qs.read().questions.length);
  return { name, qs, opts, est };
}

export async function renderNew(ctx) {
  ctx.title('New batch');
  add(ctx.main, h('p', { class: 'small' }, h('a', { href: '#/batches' }, '← Batches')), h('h1', null, 'New batch'));
  const { name, qs, opts, est } = await batchFields(ctx, 100);
  const form = createForm(ctx, {
    fields: [field('Name', name, '1 to 200 characters.'), qs.element, opts.element, est.element],
    submitLabel: 'Create batch', cancelHref: '#/batches', path: '/batches', failure: 'The batch was not created',
    read() {
      const batchName = needText(name, 'A name is needed', 'Name the batch (1 to 200 characters).');
      const q = qs.check();
      const body = { batch_name: batchName, questions: q.questions, ...opts.read() };
      if (q.rows) body.rows = q.rows;
      return body;
    },
    open: (b) => route('batches', b.batch_id),
  });
  add(ctx.main, form);
  est.refresh();
}
