// Campaigns: the list (GET /campaigns) and the create form (POST /campaigns) from questions or
// records. A new campaign is a draft: its page shows the plan and the digest to approve.

import { get } from '../api.js';
import { listPage, createForm } from '../forms.js';
import { h, badge, time, route, field, select, progress, parseJSONField, add } from '../ui.js';
import { questionsInput } from '../rows.js';
import { EFFORTS, costLine } from './newjob.js';

export function stageProgress(stages) {
  let done = 0, total = 0;
  for (const s of stages || []) { done += s.records_done + s.records_failed; total += s.records_total; }
  return { done, total };
}

export async function render(ctx) {
  await listPage(ctx, {
    title: 'Campaigns', path: '/campaigns', newHref: '#/campaigns/new', newLabel: 'New campaign',
    emptyTitle: 'No campaigns yet', emptyText: 'A campaign runs a plan of stages over many records, and starts only once you approve it.',
    render: (c) => {
      const pr = stageProgress(c.stages);
      return h('li', null,
        h('div', { class: 'row spread' }, h('a', { class: 'title', href: route('campaigns', c.campaign_id) }, c.name), badge(c.status)),
        h('div', { class: 'row small muted' },
          pr.total ? progress(pr.done, pr.total, `${c.name}: records done`) : h('span', null, `${c.records?.accepted ?? 0} records`),
          h('span', null, `${(c.stages || []).length} stage${(c.stages || []).length === 1 ? '' : 's'}`),
          h('span', null, 'created ', time(c.created_at))),
        c.next_step ? h('p', { class: 'small' }, c.next_step) : null);
    },
  });
}

export async function renderNew(ctx) {
  ctx.title('New campaign');
  add(ctx.main, h('p', { class: 'small' }, h('a', { href: '#/campaigns' }, '← Campaigns')), h('h1', null, 'New campaign'));
  const [limits, quota] = await Promise.all([
    get('/campaigns/limits', null, { signal: ctx.signal }).catch(() => null),
    get('/quota', null, { signal: ctx.signal }).catch(() => null),
  ]);
  const max = limits?.max_supplied_records || 100000;
  const name = h('input', { type: 'text', name: 'name', maxlength: 200 });
  const instruction = h('textarea', { name: 'instruction', rows: 3, maxlength: 8000 });
  const qs = questionsInput({ max, label: 'Questions or records' });
  const effort = select('effort', EFFORTS.map((e) => [e, e]), 'low');
  const cost = h('p', { class: 'hint', 'aria-live': 'polite' });
  const showCost = () => { cost.textContent = costLine(quota, effort.value, Math.max(1, qs.read().questions.length)); };
  effort.addEventListener('change', showCost);
  qs.element.addEventListener('input', showCost);
  qs.element.addEventListener('change', showCost);
  const budget = h('input', { type: 'number', name: 'max_credits', min: 1, placeholder: 'no limit' });
  const concurrency = h('input', { type: 'number', name: 'concurrency', min: 1, max: 20, placeholder: '5' });
  const schema = h('textarea', { class: 'code', name: 'output_schema', rows: 5, spellcheck: 'false' });
  const form = createForm(ctx, {
    fields: [
      field('Name', name, 'A short title; a default is chosen when left empty.'),
      field('Instruction', instruction, 'What each row’s worker does. With a question, the question follows it; with records alone, the record is appended.'),
      qs.element,
      field('Effort', effort, 'The effort of each row.'), cost,
      h('details', null, h('summary', null, 'Budget, concurrency and output schema (optional)'),
        field('Credit budget', budget, 'The campaign pauses when it has spent this many credits.'),
        field('Rows at once', concurrency, '1 to 20.'),
        field('Output schema', schema, 'A JSON Schema of each row’s result; each field becomes a column of the results CSV.')),
      h('p', { class: 'hint' }, 'Nothing runs until you approve the plan on the next page.')],
    submitLabel: 'Create draft', cancelHref: '#/campaigns', path: '/campaigns', failure: 'The campaign was not created',
    read() {
      const q = qs.check();
      const body = { effort: effort.value };
      if (q.records) {
        body.records = q.records;
        body.question_field = q.column;
      } else body.questions = q.questions;
      if (name.value.trim()) body.name = name.value.trim();
      if (instruction.value.trim()) body.instruction = instruction.value.trim();
      if (budget.value) body.max_credits = parseInt(budget.value, 10);
      if (concurrency.value) body.concurrency = parseInt(concurrency.value, 10);
      const js = parseJSONField(schema.value, 'The output schema');
      if (js) body.output_schema = js;
      return body;
    },
    open: (c) => route('campaigns', c.campaign_id),
  });
  add(ctx.main,
    limits ? h('p', { class: 'small muted' }, `Up to ${limits.max_supplied_records.toLocaleString()} questions or records per campaign.`) : null,
    form);
  showCost();
}
