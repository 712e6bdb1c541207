// Start a research job (POST /research): question, effort, attachments uploaded from the browser
// (POST /attachments), an expert from the catalogue, an optional JSON Schema and webhook URL. The
// quota and what the chosen effort costs are shown before submitting (GET /quota, /quota/check).

import { get, request } from '../api.js';
import { createForm, needText } from '../forms.js';
import { h, field, problem, fmtBytes, plural, parseJSONField, route, select, add } from '../ui.js';

export const EFFORTS = ['low', 'medium', 'high', 'build'];

// expertOptions lists the public catalogue and, when the key may read them, the caller's own experts.
export async function expertOptions(signal) {
  const opts = [['', 'None (the default researcher)']];
  const pub = await get('/experts', null, { signal }).catch(() => ({ items: [] }));
  for (const x of pub.items || []) opts.push([x.expert_id, `${x.name}${x.domain ? ` · ${x.domain}` : ''}`]);
  const own = await get('/experts/custom', null, { signal }).catch(() => ({ items: [] }));
  for (const x of own.items || []) {
    const id = x.expert_id || x.id;
    if (id && !opts.some(([v]) => v === id)) opts.push([id, `${x.name} (yours${x.status === 'building' ? ', draft' : ''})`]);
  }
  return opts;
}

// costLine says what an effort costs against the quota: "medium costs 1 credit; 999 left".
export function costLine(quota, effort, rows = 1) {
  if (!quota) return '';
  const per = quota.credits_required_for_effort?.[effort];
  if (per === undefined) return '';
  const clamp = quota.max_effort && EFFORTS.indexOf(effort) > EFFORTS.indexOf(quota.max_effort)
    ? ` Your ${quota.tier} tier runs at most ${quota.max_effort}: the job runs at ${quota.max_effort} and costs ${quota.credits_required_for_effort[quota.max_effort]} per run.` : '';
  const total = per * rows;
  return `${effort} costs ${plural(per, 'credit')} per ${rows > 1 ? 'row' : 'run'}${rows > 1 ? ` (${total} for ${rows} rows)` : ''}; you have ${quota.credits_remaining} left.${clamp}`;
}

export async function render(ctx) {
  ctx.title('New research job');
  add(ctx.main, h('h1', null, 'New research job'));
  const quotaBox = h('div', { class: 'panel', 'aria-live': 'polite' }, 'Loading your quota…');
  const [quota, experts] = await Promise.all([
    get('/quota', null, { signal: ctx.signal }).catch((e) => { quotaBox.replaceChildren(problem(e, 'Quota')); return null; }),
    expertOptions(ctx.signal),
  ]);

  const question = h('textarea', { name: 'question', required: true, maxlength: 20000, rows: 4 });
  const effort = select('effort', EFFORTS.map((e) => [e, quota ? `${e} · ${plural(quota.credits_required_for_effort?.[e] ?? 0, 'credit')}` : e]), 'medium');
  const cost = h('p', { class: 'hint', 'aria-live': 'polite' });
  const expert = select('expert_id', experts, '');
  const files = h('input', { type: 'file', multiple: true, name: 'files' });
  const uploaded = h('ul', { class: 'plain small', 'aria-label': 'Attached files', 'aria-live': 'polite' });
  const schema = h('textarea', { class: 'code', name: 'json_schema', rows: 6, spellcheck: 'false', placeholder: '{"type": "object", "properties": {"answer": {"type": "string"}}}' });
  const webhook = h('input', { type: 'url', name: 'webhook_url', placeholder: 'your endpoint (https in production)' });
  const attachments = []; // {attachment_id, files}

  const showQuota = async () => {
    if (!quota) return;
    cost.textContent = costLine(quota, effort.value);
    quotaBox.replaceChildren(h('strong', null, `${quota.credits_remaining} credits left`), ` · ${quota.tier} tier · highest effort ${quota.max_effort}`);
    try {
      const check = await get('/quota/check', { effort: effort.value }, { signal: ctx.signal });
      if (!check.allowed) quotaBox.append(h('p', { class: 'notice' }, `Not enough credits for ${check.effort}: ${check.reason || 'add credits first'}.`));
    } catch (e) { if (e.name !== 'AbortError') quotaBox.append(problem(e, 'Quota check')); }
  };
  effort.addEventListener('change', showQuota);

  files.addEventListener('change', async () => {
    if (!files.files.length) return;
    const form = new FormData();
    for (const f of files.files) form.append('files', f, f.name);
    const li = h('li', { 'aria-busy': 'true' }, `Uploading ${[...files.files].map((f) => f.name).join(', ')}…`);
    uploaded.append(li);
    files.disabled = true;
    try {
      const a = await request('/attachments', { method: 'POST', form, signal: ctx.signal });
      attachments.push(a);
      const remove = h('button', { type: 'button', class: 'link' }, 'remove');
      remove.addEventListener('click', () => { attachments.splice(attachments.indexOf(a), 1); li.remove(); });
      li.replaceChildren(
        h('span', null, (a.files || []).map((f) => `${f.filename} (${fmtBytes(f.size_bytes)})`).join(', '), ` · ${a.status} · `), remove);
      li.removeAttribute('aria-busy');
      files.value = '';
    } catch (e) {
      li.replaceChildren(problem(e, 'Upload'));
    } finally {
      files.disabled = false;
    }
  });

  const form = createForm(ctx, {
    fields: [
      field('Question', question, 'What should be researched? The more specific, the better the sources match.'),
      field('Effort', effort, 'How far the research goes; higher efforts read more sources and cost more credits.'),
      cost,
      field('Attachments', files, 'Documents the job reads first (PDF, DOCX, text, Markdown, CSV, HTML, JSON…). Each selection is uploaded at once.'),
      uploaded,
      field('Expert', expert, 'Run as a configured research agent, or leave the default.'),
      h('details', null, h('summary', null, 'Structured output and webhook (optional)'),
        field('JSON Schema', schema, 'The job fills structured_output to match it, each field with its cited basis.'),
        field('Webhook URL', webhook, 'Receives one signed POST when the job completes or fails.'))],
    submitLabel: 'Start research', cancelHref: '#/jobs', path: '/research', failure: 'The job was not started',
    read() {
      const body = { question: needText(question, 'A question is needed', 'Write the question to research.'), effort: effort.value };
      const js = parseJSONField(schema.value, 'The JSON Schema');
      if (js) body.json_schema = js;
      if (webhook.value.trim()) body.webhook_url = webhook.value.trim();
      if (expert.value) body.expert_id = expert.value;
      if (attachments.length) body.attachment_ids = attachments.map((a) => a.attachment_id);
      return body;
    },
    open: (job) => route('jobs', job.slug || job.job_id),
  });
  add(ctx.main, quotaBox, form);
  showQuota();
}
