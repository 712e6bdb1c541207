// One research job. A job still running is followed live through its event stream
// (GET /research/{job}/events, Server-Sent Events read with fetch so the key travels in the
// Authorization header): the timeline grows, the status updates, and the draft report shows as the
// engine previews it; when the stream ends the page reloads the job and shows the final report.

import { get, post, stream, ApiError } from '../api.js';
import { h, badge, problem, terminalJob, action, announce, route, fmtDate, loading, add, put } from '../ui.js';
import { render as markdown } from '../markdown.js';
import * as parts from './jobparts.js';

export async function render(ctx) {
  const id = ctx.params[0];
  const revision = ctx.query.get('revision') || '';
  const path = `/research/${encodeURIComponent(id)}`;
  let detail = await get(path, revision ? { revision } : null, { signal: ctx.signal });
  ctx.title(detail.question);

  const status = h('span', { 'aria-live': 'polite' }, badge(detail.status));
  const actions = h('div', { class: 'row' });
  const body = h('div');
  const live = h('ol', { class: 'plain timeline', 'aria-label': 'Timeline events' });
  const liveNote = h('p', { class: 'small muted', 'aria-live': 'polite' });
  const draft = h('div');
  let lastSeq = 0;
  let following = false;

  add(ctx.main,
    h('p', { class: 'small' }, h('a', { href: '#/jobs' }, '← Research jobs')),
    h('div', { class: 'row spread' }, h('h1', null, detail.question), status),
    actions,
    revision ? h('p', { class: 'notice' }, `Showing the report as it was at revision ${revision.slice(0, 10)}. `,
      h('a', { href: route('jobs', id) }, 'Show the latest')) : null,
    draft,
    body,
    h('details', { class: 'panel', open: !terminalJob(detail.status) || null },
      h('summary', null, 'Timeline'), liveNote, live));

  const setStatus = (s) => {
    if (detail.status === s) return;
    detail.status = s;
    status.replaceChildren(badge(s));
    drawActions();
  };

  function drawActions() {
    actions.replaceChildren();
    if (!terminalJob(detail.status)) {
      actions.append(action('Cancel job', async () => {
        const r = await post(`${path}/cancel`, undefined, { signal: ctx.signal });
        setStatus(r.status || 'cancelled');
        await reload();
        return 'Job cancelled.';
      }, { kind: 'danger', confirm: 'Cancel this job? A job cancelled before it started costs nothing.', where: actions }));
    }
    if (detail.status === 'completed' && !detail.locked) {
      actions.append(action('Continue research', async () => {
        const r = await post(`${path}/continue`, undefined, { signal: ctx.signal });
        setStatus(r.status || 'queued');
        follow();
        return 'Continuing: a new run researches the open questions.';
      }, { where: actions }));
    }
    // The job exactly as the API returns it (a link could not carry the key).
    actions.append(action('Show JSON', async () => {
      const raw = await get(path, revision ? { revision } : null, { signal: ctx.signal });
      body.querySelector('.as-json')?.remove();
      body.prepend(h('details', { class: 'panel as-json', open: true }, h('summary', null, 'The job as JSON'), h('pre', null, JSON.stringify(raw, null, 2))));
    }, { kind: 'secondary', where: actions }));
  }

  async function reload() {
    detail = await get(path, revision ? { revision } : null, { signal: ctx.signal });
    setStatus(detail.status);
    await drawBody();
  }

  async function drawBody() {
    const listing = await parts.listFiles(id, revision, ctx.signal);
    const index = listing.files.some((f) => f.path === 'sources/index.json') ? await parts.sourcesIndex(id, revision, ctx.signal) : [];
    const filesBox = parts.files(detail, revision, listing);
    const sections = [];
    if (detail.error) {
      sections.push(problem(new ApiError(0, { title: `The job ${detail.status}`, detail: detail.error.message, code: detail.error.code })));
    }
    if (detail.report?.markdown) {
      draft.replaceChildren();
      sections.push(h('section', { class: 'panel', 'aria-labelledby': 'report-h' },
        h('div', { class: 'row spread' }, h('h2', { id: 'report-h' }, 'Report'),
          detail.report.revision_sha ? h('code', { class: 'small' }, detail.report.revision_sha.slice(0, 10)) : null),
        parts.citationFigure(detail.citations),
        parts.report(detail.report.markdown, { job: detail.slug || detail.job_id, index, revision })));
    } else if (terminalJob(detail.status)) {
      sections.push(h('p', { class: 'panel muted' }, 'This job has no report.'));
    } else if (!draft.childElementCount) {
      draft.append(h('p', { class: 'panel muted' }, 'The report appears here as soon as the engine drafts it.'));
    }
    sections.push(parts.structured(detail, index),
      h('section', { class: 'panel', 'aria-labelledby': 'details-h' }, h('h2', { id: 'details-h' }, 'Details'), parts.summary(detail)),
      parts.revisions(detail, revision), filesBox, parts.runs(detail));
    body.replaceChildren(...sections.filter(Boolean));
  }

  function addEvent(ev) {
    if (ev.seq) lastSeq = Math.max(lastSeq, ev.seq);
    const text = typeof ev.content === 'string' ? ev.content : '';
    live.append(h('li', { 'data-kind': ev.kind },
      h('span', { class: 'kind' }, ev.kind.replace('_', ' ')),
      h('div', { class: 'what' }, h('strong', null, ev.title || ev.kind), ' ',
        h('span', { class: 'small muted' }, fmtDate(ev.created_at)),
        text && ev.kind !== 'preview' && ev.kind !== 'final_answer' ? h('p', null, text.length > 400 ? `${text.slice(0, 400)}…` : text) : null)));
    if (following) live.scrollTop = live.scrollHeight;
    // A preview is the engine's draft: show it while the final report does not exist yet.
    if (ev.kind === 'preview' && text && !detail.report?.markdown && !revision) {
      put(draft, h('section', { class: 'panel', 'aria-labelledby': 'draft-h' },
        h('h2', { id: 'draft-h' }, 'Draft report'), h('p', { class: 'small muted' }, 'A preview while the job runs; citations link once the report is final.'),
        h('div', { class: 'report' }, markdown(text))));
    }
  }

  // follow reads the stream from the last event seen; it returns when the job is terminal.
  async function follow() {
    if (following) return;
    following = true;
    const wasRunning = !terminalJob(detail.status);
    liveNote.textContent = wasRunning ? 'Following the job live…' : '';
    try {
      await stream(`${path}/events${lastSeq ? `?after=${lastSeq}` : ''}`, {
        signal: ctx.signal,
        onEvent: (name, data) => {
          if (name === 'timeline' && data && typeof data === 'object') addEvent(data);
          else if ((name === 'status' || name === 'end') && data?.status) setStatus(data.status);
        },
      });
      liveNote.textContent = `The job is ${detail.status}.`;
      if (wasRunning) {
        await reload();
        if (detail.status === 'completed') announce('The job completed: its report is below.');
      }
    } catch (e) {
      if (e.name === 'AbortError') return;
      liveNote.replaceChildren(problem(e, 'The live stream stopped'));
    } finally {
      following = false;
    }
  }

  drawActions();
  body.append(loading('the report'));
  await drawBody();
  // The stream replays the whole timeline (oldest first) and, for a running job, follows it.
  follow();
}
