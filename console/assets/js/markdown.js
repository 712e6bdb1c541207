// A small Markdown renderer for reports. It builds DOM nodes directly (createElement and text
// nodes), never an HTML string, so raw HTML in a report or a quoted source is shown as the text it
// is and nothing from a source can run. It covers what the engines write: headings, paragraphs,
// emphasis, code, links, block quotes, lists, pipe tables, rules, and the [n] citation markers,
// which the caller turns into links (opts.cite).

import { h, safeHref } from './ui.js';

const reFence = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const reHeading = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const reRule = /^ {0,3}((\*[ \t]*){3,}|(-[ \t]*){3,}|(_[ \t]*){3,})$/;
const reQuote = /^ {0,3}> ?/;
const reItem = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const reTableSep = /^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$/;

// render turns Markdown into a DocumentFragment. opts.cite(n, quote, line) returns a node for the
// citation marker [n] (quote: the quoted text it follows, if any; line: where it is in the source),
// or null to keep "[n]" as text. Headings move down opts.headingShift levels (default 2: a report's
// "#" sits under the page's h1 and its section's h2).
export function render(md, opts = {}) {
  const frag = document.createDocumentFragment();
  const lines = String(md || '').replace(/\r\n?/g, '\n').split('\n');
  blocks(lines, 0, frag, { cite: opts.cite || (() => null), quote: '', shift: opts.headingShift ?? 2 });
  return frag;
}

function blocks(lines, base, parent, ctx) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const at = base + i;
    if (!line.trim()) { i++; continue; }
    let m;
    if ((m = reFence.exec(line))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence)) body.push(lines[i++]);
      i++;
      const code = h('code', m[2] ? { class: `language-${m[2]}` } : null, body.join('\n'));
      parent.append(h('pre', null, code));
      continue;
    }
    if ((m = reHeading.exec(line))) {
      parent.append(h(`h${Math.min(m[1].length + ctx.shift, 6)}`, null, inline(m[2] || '', ctx, at)));
      i++;
      continue;
    }
    if (reRule.test(line)) { parent.append(h('hr')); i++; continue; }
    if (reQuote.test(line)) {
      const inner = [];
      // A quote may span several paragraphs separated by a bare ">".
      while (i < lines.length && reQuote.test(lines[i])) inner.push(lines[i++].replace(reQuote, ''));
      const bq = h('blockquote');
      blocks(inner, at, bq, { ...ctx, quote: quotedText(inner) });
      parent.append(bq);
      continue;
    }
    if (reItem.test(line)) { i = list(lines, i, base, parent, ctx); continue; }
    if (line.includes('|') && i + 1 < lines.length && reTableSep.test(lines[i + 1])) {
      i = table(lines, i, base, parent, ctx);
      continue;
    }
    const para = [line];
    i++;
    while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) para.push(lines[i++]);
    parent.append(h('p', null, inline(para.join('\n'), ctx, at)));
  }
}

function startsBlock(lines, i) {
  const l = lines[i];
  return reFence.test(l) || reHeading.test(l) || reRule.test(l) || reQuote.test(l) || reItem.test(l) ||
    (l.includes('|') && i + 1 < lines.length && reTableSep.test(lines[i + 1]));
}

// quotedText is what a block quote quotes: its text without the attribution line ("— source [n]")
// that the openai engine writes under each quote.
function quotedText(inner) {
  const kept = inner.filter((l) => !/^\s*[—–-]\s/.test(l) && !reFence.test(l));
  return unescape(kept.join(' ').replace(/\s+/g, ' ').trim());
}

const leading = (l) => l.length - l.trimStart().length;

function list(lines, i, base, parent, ctx) {
  const first = reItem.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const indent = first[1].length;
  const el = h(ordered ? 'ol' : 'ul');
  if (ordered && parseInt(first[2], 10) !== 1) el.setAttribute('start', String(parseInt(first[2], 10)));
  let loose = false;
  const items = [];
  while (i < lines.length) {
    const m = reItem.exec(lines[i]);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const contentIndent = indent + m[2].length + Math.max(1, m[3].length);
    const body = [m[4]];
    const at = base + i;
    i++;
    for (;;) {
      if (i >= lines.length) break;
      const l = lines[i];
      if (!l.trim()) {
        // A blank line continues the item only when the next line is indented under it.
        const next = lines[i + 1];
        if (next !== undefined && next.trim() && leading(next) >= contentIndent) { body.push(''); i++; loose = true; continue; }
        break;
      }
      if (leading(l) >= contentIndent) { body.push(l.slice(contentIndent)); i++; continue; }
      if (reItem.test(l) || startsBlock(lines, i)) break;
      body.push(l.trim()); // a lazy continuation line
      i++;
    }
    items.push({ body, at });
    if (i < lines.length && !lines[i].trim()) {
      const next = lines[i + 1];
      const nm = next !== undefined ? reItem.exec(next) : null;
      if (nm && nm[1].length === indent) { loose = true; i++; }
    }
  }
  for (const it of items) {
    const li = h('li');
    let simple = !loose;
    for (let k = 1; simple && k < it.body.length; k++) simple = !startsBlock(it.body, k);
    if (simple) li.append(...inline(it.body.join('\n'), ctx, it.at));
    else blocks(it.body, it.at, li, ctx);
    el.append(li);
  }
  parent.append(el);
  return i;
}


function cells(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const out = [];
  let cur = '';
  for (let k = 0; k < s.length; k++) {
    if (s[k] === '\\' && s[k + 1] === '|') { cur += '\\|'; k++; continue; }
    if (s[k] === '|') { out.push(cur.trim()); cur = ''; continue; }
    cur += s[k];
  }
  out.push(cur.trim());
  return out;
}

function table(lines, i, base, parent, ctx) {
  const head = cells(lines[i]);
  const align = cells(lines[i + 1]).map((c) => (c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : ''));
  const tbody = h('tbody');
  let k = i + 2;
  while (k < lines.length && lines[k].trim() && lines[k].includes('|')) {
    const row = cells(lines[k]);
    tbody.append(h('tr', null, head.map((_, c) => h('td', align[c] ? { class: `align-${align[c]}` } : null, inline(row[c] || '', ctx, base + k)))));
    k++;
  }
  parent.append(h('div', { class: 'table-wrap' }, h('table', null,
    h('thead', null, h('tr', null, head.map((c) => h('th', { scope: 'col' }, inline(c, ctx, base + i))))), tbody)));
  return k;
}

// unescape drops Markdown backslash escapes: the quote a citation checks is the text shown.
export function unescape(s) { return s.replace(/\\([!-/:-@[-`{-~])/g, '$1'); }

// inline renders a run of inline Markdown. Only text nodes and a fixed set of elements come out.
function inline(src, ctx, line) {
  const out = [];
  let text = '';
  const flush = () => { if (text) { out.push(document.createTextNode(text)); text = ''; } };
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\' && i + 1 < src.length) {
      if (src[i + 1] === '\n') { flush(); out.push(h('br')); i += 2; continue; }
      if (/[!-/:-@[-`{-~]/.test(src[i + 1])) { text += src[i + 1]; i += 2; continue; }
    }
    if (c === '\n') {
      if (text.endsWith('  ')) { text = text.trimEnd(); flush(); out.push(h('br')); } else text += ' ';
      i++;
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(src.slice(i))[0];
      const end = src.indexOf(run, i + run.length);
      if (end > 0) {
        flush();
        out.push(h('code', null, src.slice(i + run.length, end).replace(/\n/g, ' ').replace(/^ (.+) $/, '$1')));
        i = end + run.length;
        continue;
      }
      text += run; i += run.length; continue;
    }
    if (c === '<') {
      const m = /^<(https?:\/\/[^\s<>]+)>/i.exec(src.slice(i));
      if (m) { flush(); out.push(link(m[1], [m[1]])); i += m[0].length; continue; }
    }
    if (c === '[' || (c === '!' && src[i + 1] === '[')) {
      const img = c === '!';
      const start = img ? i + 1 : i;
      const cm = !img && /^\[(\d{1,4})\](?!\()/.exec(src.slice(i));
      if (cm) {
        const node = ctx.cite(parseInt(cm[1], 10), quoteBefore(src.slice(0, i)) || ctx.quote, line);
        if (node) { flush(); out.push(node); i += cm[0].length; continue; }
      }
      const close = matchBracket(src, start);
      if (close > 0 && src[close + 1] === '(') {
        const end = src.indexOf(')', close + 2);
        if (end > 0) {
          const label = src.slice(start + 1, close);
          const url = src.slice(close + 2, end).trim().split(/\s+/)[0].replace(/^<|>$/g, '');
          flush();
          // An image would load from wherever the report points: show it as a link instead.
          out.push(img ? link(url, [`image: ${unescape(label) || url}`]) : link(url, inline(label, ctx, line)));
          i = end + 1;
          continue;
        }
      }
    }
    if (c === '*' || c === '_' || c === '~') {
      const m = emphasis(src, i);
      if (m) {
        flush();
        out.push(h(m.tag, null, inline(src.slice(m.start, m.end), ctx, line)));
        i = m.next;
        continue;
      }
    }
    text += c;
    i++;
  }
  flush();
  return out;
}

function link(url, children) {
  const href = safeHref(url);
  if (href === '#') return h('span', null, children);
  return h('a', { href, rel: 'noopener noreferrer nofollow', target: href.startsWith('#') ? null : '_blank' }, children);
}

function matchBracket(src, i) {
  let depth = 0;
  for (let k = i; k < src.length; k++) {
    if (src[k] === '\\') { k++; continue; }
    if (src[k] === '[') depth++;
    else if (src[k] === ']' && --depth === 0) return k;
  }
  return -1;
}

// quoteBefore is the “quoted text” right before a citation marker, the extractive engine's form:
// “Wholesale prices rose …” [1].
function quoteBefore(s) {
  const m = /“([^“”]+)”[\s\u00a0]*$/.exec(s);
  return m ? unescape(m[1]) : '';
}

// emphasis finds **strong**, *em*, __strong__, _em_ and ~~del~~ opening at i. Underscores inside a
// word (snake_case) are not emphasis.
function emphasis(src, i) {
  const c = src[i];
  const dbl = src[i + 1] === c;
  if (c === '~' && !dbl) return null;
  const delim = dbl ? c + c : c;
  const start = i + delim.length;
  if (start >= src.length || /\s/.test(src[start])) return null;
  if (c === '_' && i > 0 && /[\p{L}\p{N}]/u.test(src[i - 1])) return null;
  let k = start;
  while ((k = src.indexOf(delim, k + 1)) > 0) {
    if (src[k - 1] === '\\' || /\s/.test(src[k - 1])) continue;
    if (!dbl && src[k + 1] === c) { k++; continue; }
    if (c === '_' && k + delim.length < src.length && /[\p{L}\p{N}]/u.test(src[k + delim.length])) continue;
    return { tag: c === '~' ? 'del' : dbl ? 'strong' : 'em', start, end: k, next: k + delim.length };
  }
  return null;
}
