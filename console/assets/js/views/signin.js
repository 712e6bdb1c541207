// Sign in: the key is checked against the API (GET /quota) before the tab keeps it, so a wrong key
// is refused with the API's own explanation rather than failing later on some other page.

import { request, session, ApiError } from '../api.js';
import { h, field, problem, add } from '../ui.js';

export async function render(ctx) {
  ctx.title('Sign in');
  const input = h('input', { type: 'password', name: 'key', autocomplete: 'off', spellcheck: 'false', required: true, placeholder: 'rsk-…' });
  const out = h('div', { 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', { class: 'panel', novalidate: true },
    field('API key', input, ['The key ', h('code', null, 'make run'), ' printed on its first start, or one made with ', h('code', null, 'researchd keys create'),
      '. It is kept in this browser tab only (sessionStorage) and sent to the API in the Authorization header.']),
    h('div', { class: 'row' }, submit),
    out);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    out.replaceChildren();
    const key = input.value.trim();
    if (!key) {
      out.append(problem(new ApiError(0, { title: 'No key', detail: 'Paste an API key to sign in.' })));
      input.focus();
      return;
    }
    submit.disabled = true;
    try {
      await request('/quota', { key });
      signInWith(key, ctx);
    } catch (err) {
      // 403: the key is valid but lacks the billing scope; it can still be used for what it allows.
      if (err instanceof ApiError && err.status === 403) {
        signInWith(key, ctx);
        return;
      }
      out.append(problem(err, 'The key was not accepted'));
      input.select();
      input.focus();
    } finally {
      submit.disabled = false;
    }
  });
  const note = ctx.notice();
  add(ctx.main,
    h('h1', null, 'Sign in to the research console'),
    note ? h('p', { class: 'notice', role: 'status' }, note) : null,
    h('p', null, 'The console is a client of the Research Service API: it does what your API key may do, nothing more.'),
    form,
    h('p', { class: 'small muted' }, 'The API itself is documented at ', h('a', { href: '/docs' }, '/docs'), '.'));
  ctx.focusTarget = input;
}

function signInWith(key, ctx) {
  session.signIn(key);
  ctx.navigate('#/jobs');
}
