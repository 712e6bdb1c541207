// Loops: batches re-run on a daily, weekly or monthly schedule (GET, POST /loops; GET, DELETE
// /loops/{id}; pause, resume, run-now; each run's changes against the previous one).

import { get, post, request } from '../api.js';
import { listPage, createForm, needText } from '../forms.js';
import { h, announce, badge, time, route, field, select, tableOf, action, facts, progress, add, put } from '../ui.js';
import { batchFields } from './batches.js';

const days = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const pad = (n) => String(n ?? 0).padStart(2, '0');

// when says a schedule in words: "weekly on Monday at 09:00 (Europe/Berlin)".
function when(s) {
  const c = s.schedule_config || {};
  const at = `at ${pad(c.hour)}:${pad(c.minute)}`;
  const day = s.frequency === 'weekly' ? ` on ${typeof c.day_of_week === 'number' ? days[c.day_of_week] : c.day_of_week}`
    : s.frequency === 'monthly' ? ` on day ${c.day_of_month}` : '';
  return `${s.frequency}${day} ${at} (${s.timezone || 'UTC'})`;
}

export async function render(ctx) {
  await listPage(ctx, {
    title: 'Loops', path: '/loops', newHref: '#/loops/new', newLabel: 'New loop',
    emptyTitle: 'No loops yet', emptyText: 'A loop re-runs a batch of questions every day, week or month, and shows what changed.',
    render: (s) => h('li', null,
      h('div', { class: 'row spread' }, h('a', { class: 'title', href: route('loops', s.schedule_id) }, s.name),
        badge(s.is_active ? 'active' : 'paused', s.is_active ? 'active' : 'paused')),
      h('div', { class: 'row small muted' }, h('span', null, when(s)),
        h('span', null, 'next run ', s.is_active && s.next_run_at ? time(s.next_run_at) : '—'),
        h('span', null, `${s.run_count} run${s.run_count === 1 ? '' : 's'}`))),
  });
}

export async function renderNew(ctx) {
  ctx.title('New loop');
  add(ctx.main, h('p', { class: 'small' }, h('a', { href: '#/loops' }, '← Loops')), h('h1', null, 'New loop'));
  const { name, qs, opts, est } = await batchFields(ctx, 1000);
  const frequency = select('frequency', [['daily', 'Daily'], ['weekly', 'Weekly'], ['monthly', 'Monthly']], 'daily');
  const hour = h('input', { type: 'number', name: 'hour', min: 0, max: 23, value: '9' });
  const minute = h('input', { type: 'number', name: 'minute', min: 0, max: 59, value: '0' });
  const dow = select('day_of_week', days.map((d, i) => [String(i), d]), '0');
  const dom = h('input', { type: 'number', name: 'day_of_month', min: 1, max: 28, value: '1' });
  const tz = h('input', { type: 'text', name: 'timezone', value: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' });
  const dowField = field('Day of the week', dow);
  const domField = field('Day of the month', dom, '1 to 28, so every month has it.');
  const sync = () => { dowField.hidden = frequency.value !== 'weekly'; domField.hidden = frequency.value !== 'monthly'; };
  frequency.addEventListener('change', sync);
  sync();
  const form = createForm(ctx, {
    fields: [field('Name', name, 'Names the loop and each run’s batch.'), qs.element,
      h('fieldset', null, h('legend', null, 'Schedule'), field('Frequency', frequency, 'Sub-daily schedules are not offered.'),
        dowField, domField, h('div', { class: 'row' }, field('Hour', hour), field('Minute', minute)),
        field('Time zone', tz, 'An IANA name such as Europe/Berlin; the schedule follows its daylight saving time.')),
      opts.element, est.element],
    submitLabel: 'Create loop', cancelHref: '#/loops', path: '/loops', failure: 'The loop was not created',
    read() {
      const loopName = needText(name, 'A name is needed', 'Name the loop (1 to 200 characters).');
      const q = qs.check();
      const config = { hour: parseInt(hour.value || '0', 10), minute: parseInt(minute.value || '0', 10) };
      if (frequency.value === 'weekly') config.day_of_week = parseInt(dow.value, 10);
      if (frequency.value === 'monthly') config.day_of_month = parseInt(dom.value || '1', 10);
      const body = { batch_name: loopName, questions: q.questions, ...opts.read(),
        schedule: { frequency: frequency.value, schedule_config: config, timezone: tz.value.trim() || null } };
      if (q.rows) body.rows = q.rows;
      return body;
    },
    open: (l) => route('loops', l.schedule.schedule_id),
  });
  add(ctx.main, form);
  est.refresh();
}

export async function renderOne(ctx) {
  const id = ctx.params[0];
  const path = `/loops/${encodeURIComponent(id)}`;
  const view = h('div');
  add(ctx.main, h('p', { class: 'small' }, h('a', { href: '#/loops' }, '← Loops')), view);
  let detail = null;

  async function load() {
    detail = await get(path, null, { signal: ctx.signal });
    draw();
  }

  function draw() {
    const s = detail.schedule;
    ctx.title(s.name);
    const acts = h('div', { class: 'row' });
    if (!s.deleted_at) {
      acts.append(
        action('Run now', async () => {
          const b = await post(`${path}/run-now`, undefined, { signal: ctx.signal });
          await load();
          return `Run ${b.run_number ?? ''} started.`;
        }, { where: acts }),
        s.is_active
          ? action('Pause', async () => { await post(`${path}/pause`, undefined, { signal: ctx.signal }); await load(); return 'Loop paused.'; }, { kind: 'secondary', where: acts })
          : action('Resume', async () => { await post(`${path}/resume`, undefined, { signal: ctx.signal }); await load(); return 'Loop resumed.'; }, { kind: 'secondary', where: acts }),
        action('Delete', async () => {
          await request(path, { method: 'DELETE', signal: ctx.signal });
          announce('Loop deleted.', true);
          ctx.navigate('#/loops');
        }, { kind: 'danger', confirm: 'Delete this loop? Its past runs stay readable.', where: acts }));
    }
    const runs = [...(detail.runs || [])].sort((a, b) => b.run_number - a.run_number);
    const diffBox = h('div');
    put(view,
      h('div', { class: 'row spread' }, h('h1', null, s.name),
        badge(s.deleted_at ? 'cancelled' : s.is_active ? 'active' : 'paused', s.deleted_at ? 'deleted' : s.is_active ? 'active' : 'paused')),
      h('section', { class: 'panel', 'aria-label': 'Schedule' },
        facts([
          ['Schedule', when(s)],
          ['Next run', s.is_active && s.next_run_at ? time(s.next_run_at) : '—'],
          ['Last run', s.last_run_at ? time(s.last_run_at) : null],
          ['Runs', String(s.run_count)],
          ['Consecutive failures', String(s.consecutive_failures)],
          ['Last skipped', s.last_skipped_at ? h('span', null, time(s.last_skipped_at), ` (${s.last_skip_reason || 'no reason given'})`) : undefined],
          ['Effort', s.effort],
          ['Questions', String(s.question_count ?? detail.config?.questions?.length ?? '')],
        ]),
        acts),
      h('section', { class: 'panel', 'aria-labelledby': 'runs-h' }, h('h2', { id: 'runs-h' }, 'Run history'),
        runs.length ? tableOf(null, ['Run', 'Status', 'Rows', 'Started', ''], runs.map((r) => h('tr', null,
          h('td', { class: 'num' }, h('a', { href: route('batches', r.batch_id) }, `#${r.run_number}`)),
          h('td', null, badge(r.status)),
          h('td', null, progress(r.processed_rows, r.total_rows, `Run ${r.run_number} rows`)),
          h('td', null, time(r.created_at)),
          h('td', null, action('What changed', () => showDiff(r.run_number, diffBox), { kind: 'secondary' })))))
          : h('p', { class: 'muted' }, 'No run yet: the first one starts at the next scheduled time, or now with “Run now”.'),
        diffBox),
      h('details', { class: 'panel' }, h('summary', null, 'Questions'),
        h('ol', null, (detail.config?.questions || []).map((q) => h('li', null, q)))));
  }

  async function showDiff(run, box) {
    const d = await get(`${path}/runs/${run}/diff`, null, { signal: ctx.signal });
    const sm = d.summary || {};
    put(box, h('h3', null, `Run ${run} against ${d.previous_run_number ? `run ${d.previous_run_number}` : 'nothing (first run)'}`),
      h('p', { class: 'small muted' }, `${sm.changed ?? 0} changed · ${sm.new ?? 0} new · ${sm.unchanged ?? 0} unchanged · ${sm.not_comparable ?? 0} not comparable`),
      tableOf(null, ['#', 'Question', 'Change', 'Headline'], (d.questions || []).map((q) => h('tr', null,
        h('td', { class: 'num' }, String(q.row_number)), h('td', { class: 'question' }, q.question),
        h('td', null, badge(q.change === 'unchanged' ? 'completed' : q.change === 'changed' ? 'needs_attention' : 'pending', q.change.replaceAll('_', ' '))),
        h('td', { class: 'question' }, q.headline || '—',
          q.headline_changed && q.previous_headline ? h('div', { class: 'small muted' }, `before: ${q.previous_headline}`) : null)))));
    box.querySelector('h3').setAttribute('tabindex', '-1');
    box.querySelector('h3').focus();
  }

  await load();
  // A run in progress settles on its own; refresh while one is open so the history shows it.
  ctx.every(5000, async () => {
    if (!(detail.runs || []).some((r) => r.status === 'PENDING' || r.status === 'PROCESSING')) return true;
    await load();
    return true;
  });
}
