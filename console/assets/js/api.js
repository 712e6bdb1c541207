// The console's only way to the server: the public API under /api/v2, authenticated with the API key
// the person signed in with (Authorization: Bearer, as the API documents). The key lives in this
// tab's sessionStorage alone: never in a URL, a cookie or a log line, and gone when the tab closes
// or the person signs out.

const KEY_ITEM = 'researchd.apiKey';
export const BASE = '/api/v2';

export const session = {
  get key() { return sessionStorage.getItem(KEY_ITEM); },
  signIn(key) { sessionStorage.setItem(KEY_ITEM, key); },
  signOut() { sessionStorage.removeItem(KEY_ITEM); },
};

// ApiError carries an RFC 9457 problem: title, detail, code and the per-field errors when the API
// sent them, so every view can show the server's own words.
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.title = problem.title || (status ? `HTTP ${status}` : 'Network error');
    this.detail = problem.detail || '';
    this.code = problem.code || '';
    this.errors = Array.isArray(problem.errors) ? problem.errors : [];
    this.retryAfter = problem.retryAfter || '';
  }
}

// A 401 anywhere means the key stopped working (revoked, expired): the app signs out and says why.
function unauthenticated(err) {
  window.dispatchEvent(new CustomEvent('researchd:unauthenticated', { detail: err }));
}

async function problemOf(res) {
  const type = res.headers.get('Content-Type') || '';
  let problem = {};
  if (type.includes('json')) {
    try { problem = await res.json(); } catch { problem = {}; }
  } else {
    const text = (await res.text().catch(() => '')).trim();
    problem = { detail: text.slice(0, 300) };
  }
  if (!problem.title) problem.title = `${res.status} ${res.statusText}`.trim();
  if (res.status === 429) problem.retryAfter = res.headers.get('Retry-After') || '';
  return new ApiError(res.status, problem);
}

// request sends one API call. opts: method, json (a body to send as JSON), form (FormData),
// query (object), headers, signal, key (sign-in checks a key before keeping it), raw (return the
// Response itself, for streams and downloads).
export async function request(path, opts = {}) {
  const key = opts.key ?? session.key;
  const headers = new Headers(opts.headers || {});
  if (key) headers.set('Authorization', `Bearer ${key}`);
  let body;
  if (opts.json !== undefined) {
    headers.set('Content-Type', 'application/json');
    body = JSON.stringify(opts.json);
  } else if (opts.form) {
    body = opts.form; // the browser sets the multipart boundary
  }
  let url = BASE + path;
  if (opts.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) {
      if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
    }
    const s = q.toString();
    if (s) url += (url.includes('?') ? '&' : '?') + s;
  }
  let res;
  try {
    // credentials: 'omit' because the API takes no cookies and the console sets none.
    res = await fetch(url, { method: opts.method || 'GET', headers, body, signal: opts.signal, credentials: 'omit', cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, { title: 'Network error', detail: 'The server could not be reached. Check that researchd is running, then try again.' });
  }
  if (!res.ok) {
    const err = await problemOf(res);
    if (res.status === 401 && opts.key === undefined) unauthenticated(err);
    throw err;
  }
  if (opts.raw) return res;
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  return type.includes('json') ? res.json() : res.text();
}

export const get = (path, query, opts = {}) => request(path, { ...opts, query });
export const post = (path, json, opts = {}) => request(path, { ...opts, method: 'POST', json });

// idempotencyKey names one create: a double click or a retried submit starts one job, not two.
// crypto.randomUUID needs a secure context; getRandomValues works on plain http hosts too.
export function idempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// download fetches a file with the key and hands it to the browser as a download: a plain link
// could not carry the Authorization header.
export async function download(path, filename) {
  const res = await request(path, { raw: true });
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename || path.split('/').pop();
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// stream follows a Server-Sent Events endpoint with fetch: EventSource cannot send the
// Authorization header. onEvent(name, data, id) gets each event, data parsed as JSON. It reconnects
// after a dropped connection (resuming with Last-Event-ID, as the API documents) and resolves when
// the server sends `event: end` or signal aborts.
export async function stream(path, { signal, onEvent, onOpen, retries = 5 }) {
  let lastId = '';
  let failures = 0;
  for (;;) {
    const headers = { Accept: 'text/event-stream' };
    if (lastId) headers['Last-Event-ID'] = lastId;
    let ended = false;
    try {
      const res = await request(path, { raw: true, headers, signal });
      failures = 0;
      if (onOpen) onOpen();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, '\n');
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const ev = parseEvent(buf.slice(0, cut));
          buf = buf.slice(cut + 2);
          if (!ev) continue;
          if (ev.id) lastId = ev.id;
          onEvent(ev.event, ev.data, ev.id);
          if (ev.event === 'end') ended = true;
        }
        if (ended) { reader.cancel().catch(() => {}); break; }
      }
    } catch (e) {
      if (e.name === 'AbortError' || (e instanceof ApiError && e.status >= 400 && e.status < 500)) throw e;
      failures++;
      if (failures > retries) throw e;
    }
    if (ended || signal?.aborted) return;
    await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** failures, 10000)));
  }
}

function parseEvent(block) {
  let event = 'message', id = '';
  const data = [];
  for (const line of block.split('\n')) {
    if (!line || line.startsWith(':')) continue; // comments are heartbeats
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  if (!data.length && event === 'message') return null;
  let parsed = data.join('\n');
  try { parsed = JSON.parse(parsed); } catch { /* leave it as text */ }
  return { event, data: parsed, id };
}
