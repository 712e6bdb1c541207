// The caller's research jobs, newest first (GET /research, keyset-paged), with status and effort
// at a glance. Jobs still running are refreshed in place while the page is open.

import { get } from '../api.js';
import { h, badge, time, route, terminalJob } from '../ui.js';
import { listPage } from '../forms.js';

export async function render(ctx) {
  const rows = new Map(); // job_id → its list item, for in-place refresh
  const list = await listPage(ctx, {
    title: 'Research', path: '/research', newHref: '#/jobs/new', newLabel: 'New research job', listClass: 'jobs',
    emptyTitle: 'No research jobs yet', emptyText: 'Ask a question and the service researches it in the background.',
    render: (j) => { const li = item(j); rows.set(j.job_id, li); return li; },
  });
  // Refresh the first page while any job on screen is still running.
  ctx.every(4000, async () => {
    const running = [...list.querySelectorAll('li[data-status]')].filter((li) => !terminalJob(li.dataset.status));
    if (!running.length) return true;
    const page = await get('/research', { limit: 20 }, { signal: ctx.signal });
    for (const j of page.items || []) {
      const old = rows.get(j.job_id);
      if (old && old.dataset.status !== j.status) {
        const li = item(j);
        old.replaceWith(li);
        rows.set(j.job_id, li);
      }
    }
    return true;
  });
}

function item(j) {
  const effort = j.requested_effort && j.requested_effort !== j.effort
    ? `effort ${j.effort} (asked ${j.requested_effort})` : `effort ${j.effort}`;
  return h('li', { 'data-status': j.status },
    h('div', { class: 'row spread' },
      h('a', { class: 'title', href: route('jobs', j.slug || j.job_id) }, j.question),
      badge(j.status)),
    h('div', { class: 'row small muted' }, h('span', null, effort), h('span', null, 'created ', time(j.created_at)),
      j.completed_at ? h('span', null, 'finished ', time(j.completed_at)) : null,
      j.is_public ? h('span', null, 'public') : null));
}
