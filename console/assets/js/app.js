// The console's entry point: a hash router (#/jobs, #/jobs/{id}, …) so the server serves one page
// and every view is a module of its own. Navigating away aborts the view's requests, streams and
// polling through its AbortSignal.

import { session, ApiError } from './api.js';
import { h, problem, clear, add } from './ui.js';
import * as signin from './views/signin.js';
import * as jobs from './views/jobs.js';
import * as newjob from './views/newjob.js';
import * as job from './views/job.js';
import * as source from './views/source.js';
import * as batches from './views/batches.js';
import * as batch from './views/batch.js';
import * as loops from './views/loops.js';
import * as campaigns from './views/campaigns.js';
import * as campaign from './views/campaign.js';
import * as account from './views/account.js';

// Routes: [pattern, view, section]; a view exports render(ctx).
const routes = [
  [/^\/signin$/, signin, ''],
  [/^\/jobs$/, jobs, 'jobs'],
  [/^\/jobs\/new$/, newjob, 'jobs'],
  [/^\/jobs\/([^/]+)$/, job, 'jobs'],
  [/^\/jobs\/([^/]+)\/source$/, source, 'jobs'],
  [/^\/jobs\/([^/]+)\/file$/, { render: source.renderFile }, 'jobs'],
  [/^\/batches$/, batches, 'batches'],
  [/^\/batches\/new$/, { render: batches.renderNew }, 'batches'],
  [/^\/batches\/([^/]+)$/, batch, 'batches'],
  [/^\/loops$/, loops, 'loops'],
  [/^\/loops\/new$/, { render: loops.renderNew }, 'loops'],
  [/^\/loops\/([^/]+)$/, { render: loops.renderOne }, 'loops'],
  [/^\/campaigns$/, campaigns, 'campaigns'],
  [/^\/campaigns\/new$/, { render: campaigns.renderNew }, 'campaigns'],
  [/^\/campaigns\/([^/]+)$/, campaign, 'campaigns'],
  [/^\/account$/, account, 'account'],
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
let current = null; // the AbortController of the view on screen
let notice = ''; // a message for the sign-in page (why the person was signed out)

function parseHash() {
  const raw = location.hash.slice(1) || '/jobs';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  return { path, query: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)) };
}

export function navigate(hash) {
  if (location.hash === hash) show();
  else location.hash = hash;
}

async function show() {
  if (location.hash && !location.hash.startsWith('#/')) return; // an in-page anchor, not a route
  const { path, query } = parseHash();
  if (!session.key && path !== '/signin') {
    location.replace('#/signin');
    return;
  }
  if (session.key && path === '/signin') {
    location.replace('#/jobs');
    return;
  }
  if (current) current.abort();
  current = new AbortController();
  // A message belongs to the page it was said on, unless it was said for the next one (an action
  // that navigates, such as deleting a loop, announces its result as the next page opens).
  const said = document.getElementById('status');
  if (said.dataset.keep) delete said.dataset.keep;
  else said.replaceChildren();
  const signal = current.signal;
  nav.hidden = !session.key;
  const found = routes.map(([re, view, section]) => ({ m: re.exec(path), view, section })).find((r) => r.m);
  for (const a of nav.querySelectorAll('a[data-section]')) {
    if (found && a.dataset.section === found.section) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  clear(main);
  const ctx = {
    main, query, signal, navigate,
    params: found ? found.m.slice(1).map(decodeURIComponent) : [],
    focusTarget: null,
    notice: () => { const n = notice; notice = ''; return n; },
    title(text) { document.title = `${text} · researchd console`; },
    // every(ms, fn) polls while the view is on screen; fn returning false stops it.
    every(ms, fn) {
      const tick = async () => {
        if (signal.aborted) return;
        let again = true;
        try { again = (await fn()) !== false; } catch (e) { if (e.name === 'AbortError') return; }
        if (again && !signal.aborted) setTimeout(tick, ms);
      };
      setTimeout(tick, ms);
    },
  };
  if (!found) {
    ctx.title('Not found');
    add(main, h('h1', { tabindex: '-1' }, 'Page not found'),
      h('p', null, 'There is no page at this address. ', h('a', { href: '#/jobs' }, 'Go to your research jobs.')));
    focusHeading();
    return;
  }
  try {
    await found.view.render(ctx);
  } catch (e) {
    if (e.name === 'AbortError' || signal.aborted) return;
    // Never a blank page: whatever failed, say what the API said.
    if (!main.querySelector('h1')) add(main, h('h1', { tabindex: '-1' }, 'Could not load this page'));
    add(main, problem(e));
  }
  if (signal.aborted) return;
  // A view may name what to focus instead (the source view: the quote it opened at).
  if (ctx.focusTarget) ctx.focusTarget.focus();
  else focusHeading();
}

// focusHeading moves focus to the new page's heading, so keyboard and screen-reader users start
// at the top of what changed.
function focusHeading() {
  const h1 = main.querySelector('h1');
  if (!h1) return;
  if (!h1.hasAttribute('tabindex')) h1.setAttribute('tabindex', '-1');
  h1.focus({ preventScroll: true });
}

function signOut(message) {
  session.signOut();
  notice = message || '';
  if (current) current.abort();
  if (location.hash === '#/signin') show();
  else location.replace('#/signin');
}

window.addEventListener('hashchange', show);
window.addEventListener('researchd:unauthenticated', (e) => {
  const err = e.detail instanceof ApiError ? e.detail : null;
  signOut(`You were signed out: the API refused the key${err && err.detail ? ` (${err.detail})` : ''}. Sign in again.`);
});
document.getElementById('signout').addEventListener('click', () => signOut('Signed out. The key was removed from this tab.'));
document.querySelector('.skip').addEventListener('click', (e) => { e.preventDefault(); main.focus(); });
show();
