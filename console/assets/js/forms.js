// The two shapes every resource shares: a list page (newest first, paged, with an empty state and
// a "New" button) and a create form (one POST with an Idempotency-Key, then the new resource).

import { get, post, idempotencyKey, ApiError } from './api.js';
import { h, add, pager, empty, problem } from './ui.js';

// listPage renders a CursorPage endpoint as a list; it resolves once the first page is shown.
export async function listPage(ctx, { title, path, newHref, newLabel, render, emptyTitle, emptyText, listClass }) {
  ctx.title(title);
  const list = h('ul', { class: `plain ${listClass || ''}`.trim(), 'aria-label': title });
  const p = pager({
    container: list,
    load: (cursor) => get(path, { limit: 20, cursor }, { signal: ctx.signal }),
    render,
    emptyState: empty(emptyTitle, emptyText, h('a', { class: 'button', href: newHref }, newLabel)),
  });
  add(ctx.main,
    h('div', { class: 'row spread' }, h('h1', null, title), h('a', { class: 'button', href: newHref }, newLabel)),
    h('section', { class: 'panel', 'aria-label': title }, list, p.foot));
  await p.start();
  return list;
}

// needText refuses an empty required text field before anything is sent.
export function needText(input, title, detail) {
  const v = input.value.trim();
  if (!v) throw new ApiError(422, { title, detail });
  return v;
}

// createForm wraps fields in a form that POSTs read()'s body to path and opens what it created
// (open(created) returns the route). read() throws an ApiError for what the form can tell before
// sending. One Idempotency-Key per filled-in form: resubmitting after a lost answer returns what
// was created; a refused body (4xx) gets a fresh key, since the same key with another body is a
// conflict.
export function createForm(ctx, { fields, submitLabel, cancelHref, path, read, failure, open }) {
  const out = h('div');
  const submit = h('button', { type: 'submit' }, submitLabel);
  const form = h('form', { class: 'panel', novalidate: true }, fields,
    h('div', { class: 'row' }, submit, h('a', { href: cancelHref }, 'Cancel')), out);
  let idem = idempotencyKey();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    out.replaceChildren();
    let body;
    try {
      body = read();
    } catch (err) {
      out.append(problem(err));
      return;
    }
    submit.disabled = true;
    try {
      const created = await post(path, body, { headers: { 'Idempotency-Key': idem }, signal: ctx.signal });
      ctx.navigate(open(created));
    } catch (err) {
      if (err.name === 'AbortError') return;
      if (err.status >= 400 && err.status < 500) idem = idempotencyKey();
      out.append(problem(err, failure));
      submit.disabled = false;
    }
  });
  return form;
}
