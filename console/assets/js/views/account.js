// Account: quota (GET /quota), usage for a period (GET /billing/usage), transactions
// (GET /billing/transactions, paged) and API keys (GET /keys, DELETE /keys/{id}). Keys are minted
// with OAuth, not with an API key, so the console lists and revokes them but cannot create one.

import { get, request, session } from '../api.js';
import { h, time, tableOf, pager, action, problem, select, facts, empty, add } from '../ui.js';

const credits = (cents, per) => (per ? `${(cents / per).toLocaleString(undefined, { maximumFractionDigits: 2 })} credits` : `${cents} cents`);

export async function render(ctx) {
  ctx.title('Account');
  add(ctx.main, h('h1', null, 'Account'));
  const quotaBox = h('section', { class: 'panel', 'aria-labelledby': 'q-h' }, h('h2', { id: 'q-h' }, 'Quota'));
  const usageBox = h('section', { class: 'panel', 'aria-labelledby': 'u-h' }, h('h2', { id: 'u-h' }, 'Usage'));
  const txBox = h('section', { class: 'panel', 'aria-labelledby': 't-h' }, h('h2', { id: 't-h' }, 'Transactions'));
  const keysBox = h('section', { class: 'panel', 'aria-labelledby': 'k-h' }, h('h2', { id: 'k-h' }, 'API keys'));
  add(ctx.main, h('div', { class: 'grid' }, quotaBox, usageBox), txBox, keysBox);
  let quota = null;
  try {
    quota = await get('/quota', null, { signal: ctx.signal });
    quotaBox.append(
      h('p', { class: 'big' }, `${quota.credits_remaining.toLocaleString()} credits`),
      facts([
        ['Tier', `${quota.tier} (highest effort ${quota.max_effort})`],
        ['Balance', `${quota.balance_cents.toLocaleString()} cents (one credit is ${quota.cents_per_credit} cents)`],
      ]),
      tableOf('Credits per run', ['Effort', 'Credits'], Object.entries(quota.credits_required_for_effort || {}).map(([e, n]) =>
        h('tr', null, h('td', null, e), h('td', { class: 'num' }, String(n))))));
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    quotaBox.append(problem(e));
  }
  const per = quota?.cents_per_credit || 0;
  usage(ctx, usageBox);
  transactions(ctx, txBox, per);
  keys(ctx, keysBox);
}

function usage(ctx, box) {
  const period = select('period', [['', 'This billing period'], ['last_30d', 'Last 30 days']], '');
  const out = h('div', { 'aria-live': 'polite' });
  const label = h('label', { for: 'usage-period' }, 'Period');
  period.id = 'usage-period';
  const load = async () => {
    out.replaceChildren();
    try {
      const u = await get('/billing/usage', period.value ? { period: period.value } : null, { signal: ctx.signal });
      const by = Object.entries(u.by_effort || {});
      out.append(
        h('p', { class: 'big' }, `${u.total_credits_used.toLocaleString()} credit${u.total_credits_used === 1 ? '' : 's'} used`),
        facts([
          ['Jobs', String(u.job_count)],
          ['Spent', `${u.total_cents_spent.toLocaleString()} cents`],
          ['Period', h('span', null, time(u.period_start), ' – ', time(u.period_end))],
          ['Projected by period end', u.projected_period_end_credits == null ? null : `${u.projected_period_end_credits.toLocaleString()} credits`],
        ]),
        by.length ? tableOf('By effort', ['Effort', 'Jobs', 'Credits'], by.map(([e, v]) =>
          h('tr', null, h('td', null, e), h('td', { class: 'num' }, String(v.jobs)), h('td', { class: 'num' }, String(v.credits))))) : h('p', { class: 'muted' }, 'No paid runs in this period.'));
    } catch (e) {
      if (e.name !== 'AbortError') out.append(problem(e));
    }
  };
  period.addEventListener('change', load);
  box.append(h('div', { class: 'field' }, label, period), out);
  load();
}

function transactions(ctx, box, per) {
  const body = h('tbody');
  const table = h('div', { class: 'table-wrap' }, h('table', null,
    h('thead', null, h('tr', null, ['Date', 'Type', 'Amount', 'Balance after', 'Description'].map((c) => h('th', { scope: 'col' }, c)))), body));
  const p = pager({
    container: body,
    load: (cursor) => get('/billing/transactions', { limit: 20, cursor }, { signal: ctx.signal }),
    render: (t) => h('tr', null,
      h('td', null, time(t.created_at)),
      h('td', null, t.type),
      h('td', { class: 'num' }, `${t.amount_cents > 0 ? '+' : ''}${credits(t.amount_cents, per)}`),
      h('td', { class: 'num' }, t.balance_after_cents == null ? '—' : credits(t.balance_after_cents, per)),
      h('td', null, t.description || '', t.job_id ? h('div', { class: 'small' }, h('a', { href: `#/jobs/${t.job_id}` }, 'job')) : null)),
    emptyState: h('tbody', null, h('tr', null, h('td', { colspan: '5', class: 'muted' }, 'No transactions yet.'))),
  });
  box.append(table, p.foot);
  p.start();
}

async function keys(ctx, box) {
  box.append(h('p', { class: 'small muted' }, 'New keys are minted with an OAuth token (', h('code', null, 'POST /api/v2/keys'),
    ') or on the server with ', h('code', null, 'researchd keys create'), '; an API key cannot mint another.'));
  const out = h('div');
  box.append(out);
  const draw = async () => {
    let page;
    try {
      page = await get('/keys', { limit: 100 }, { signal: ctx.signal });
    } catch (e) {
      if (e.name !== 'AbortError') out.replaceChildren(problem(e));
      return;
    }
    const mine = session.key || '';
    const items = page.items || [];
    if (!items.length) { out.replaceChildren(empty('No API keys', 'This account has no key.')); return; }
    out.replaceChildren(tableOf(null, ['Label', 'Key', 'Scopes', 'Created', 'Last used', ''], items.map((k) => {
      const current = mine.startsWith(k.prefix) && mine.endsWith(k.last4);
      return h('tr', null,
        h('td', null, k.label || h('span', { class: 'muted' }, 'no label'), current ? h('div', { class: 'small' }, 'this session') : null),
        h('td', null, h('code', null, `${k.prefix}…${k.last4}`)),
        h('td', { class: 'small' }, (k.scopes || []).join(', ')),
        h('td', null, time(k.created_at)),
        h('td', null, k.last_used_at ? time(k.last_used_at) : '—'),
        h('td', null, k.revoked_at ? h('span', { class: 'muted' }, 'revoked ', time(k.revoked_at))
          : action('Revoke', async () => {
            await request(`/keys/${encodeURIComponent(k.key_id)}`, { method: 'DELETE', signal: ctx.signal });
            // Revoking the key in use signs this tab out on its next call.
            if (current) window.dispatchEvent(new CustomEvent('researchd:unauthenticated'));
            else await draw();
            return `Key ${k.prefix}…${k.last4} revoked.`;
          }, { kind: 'danger', confirm: current ? 'Revoke the key this session uses? You will be signed out.' : `Revoke key ${k.prefix}…${k.last4}? Clients using it stop working at once.` })));
    })));
  };
  await draw();
}
