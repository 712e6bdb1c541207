// Citations: from a report's [n] markers to the stored source the run read, and the quote in it.
// A report ends with a "Sources" list (a continuation adds "Continuation sources"); each entry names
// a cited path (`input_files/notes.txt`, line 3), a URL (<https://…>) or a stored copy (`sources/…`).
// sources/index.json in the job's workspace maps those origins to the stored copies
// (GET /research/{job}/files/sources/...), which is what the console opens.

import { unescape } from './markdown.js';
import { route } from './ui.js';

const reSourcesHeading = /^#{1,6}\s+(?:.*\s)?sources\s*$/i;
const reEntry = /^\s{0,3}(\d{1,4})\.\s+(.*)$/;

// sourceLists finds every sources list: [{line, entries: Map(n → entry)}], in report order.
export function sourceLists(md) {
  const lines = String(md || '').split('\n');
  const lists = [];
  for (let i = 0; i < lines.length; i++) {
    if (!reSourcesHeading.test(lines[i])) continue;
    const entries = new Map();
    let k = i + 1;
    for (; k < lines.length; k++) {
      const l = lines[k];
      if (!l.trim()) continue;
      const m = reEntry.exec(l);
      if (!m) break;
      entries.set(parseInt(m[1], 10), entry(m[2]));
    }
    lists.push({ line: i, entries });
    i = k - 1;
  }
  return lists;
}

function entry(text) {
  const stored = /stored copy `([^`]+)`/.exec(text);
  const url = /<(https?:\/\/[^\s>]+)>/.exec(text);
  const code = /`([^`]+)`/.exec(text);
  const lines = /\blines?\s+(\d+)(?:\s*[–-]\s*(\d+))?/.exec(text);
  return {
    text: unescape(text),
    stored: stored ? stored[1] : '',
    ref: url ? url[1] : code ? code[1] : '',
    from: lines ? parseInt(lines[1], 10) : 0,
    to: lines ? parseInt(lines[2] || lines[1], 10) : 0,
  };
}

// quotesByNumber maps each citation number to the first block quote attributed to it
// ("> quote" … "> — source [n]"), so a claim's marker that precedes its quotes can point at one.
export function quotesByNumber(md) {
  const out = new Map();
  const lines = String(md || '').split('\n');
  let quote = [];
  for (const l of lines) {
    const m = /^\s{0,3}>\s?(.*)$/.exec(l);
    if (!m) { quote = []; continue; }
    const a = /^[—–]\s.*\[(\d{1,4})\]\s*$/.exec(m[1]);
    if (a) {
      const n = parseInt(a[1], 10);
      const text = quote.filter((q) => q.trim() && !/^(`{3,}|~{3,})/.test(q)).join(' ').trim();
      if (!out.has(n) && text) out.set(n, unescape(text));
      quote = [];
    } else {
      quote.push(m[1]);
    }
  }
  return out;
}

// entryFor picks the list that defines n for a marker on a line: the first list after the marker
// (a continuation's markers belong to its own list), else any list that has n.
export function entryFor(lists, n, line) {
  for (const l of lists) if (l.line > line && l.entries.has(n)) return l.entries.get(n);
  for (const l of lists) if (l.entries.has(n)) return l.entries.get(n);
  return null;
}

// storedSource resolves a cited reference (a path, a URL, an id such as S3, or a stored path) to
// its entry in sources/index.json.
export function storedSource(index, ref) {
  if (!ref || !Array.isArray(index)) return null;
  return index.find((s) => s.path === ref) || index.find((s) => s.origin === ref) ||
    index.find((s) => s.id === ref) || index.find((s) => s.title === ref) || null;
}

// sourceLink is the console route that opens a stored source with the quote (and lines) marked.
export function sourceLink(job, { path, ref, from, to, quote, n, rev }) {
  const q = new URLSearchParams();
  if (path) q.set('path', path);
  else if (ref) q.set('ref', ref);
  if (from) q.set('from', String(from));
  if (to) q.set('to', String(to));
  if (n) q.set('n', String(n));
  if (rev) q.set('rev', rev);
  if (quote) q.set('quote', quote.slice(0, 1500));
  return `${route('jobs', job, 'source')}?${q}`;
}

// findQuote locates a quote in a source the way the server verifies it: words and numbers in
// order, case-insensitive, punctuation and whitespace ignored, "…" or "..." marking an omission.
// It returns [[start, end], …] character ranges in text (one per piece), or null.
export function findQuote(text, quote) {
  if (!quote) return null;
  const { norm, map } = normalize(text);
  const pieces = quote.split(/…|\.\.\./).map((p) => normalize(p).norm).filter(Boolean);
  if (!pieces.length) return null;
  const ranges = [];
  let from = 0;
  for (const p of pieces) {
    const at = norm.indexOf(p, from);
    if (at < 0) return null;
    ranges.push([map[at], map[at + p.length - 1] + 1]);
    from = at + p.length;
  }
  return ranges;
}

function normalize(s) {
  let norm = '';
  const map = [];
  const re = /[\p{L}\p{N}]/u;
  let i = 0;
  for (const ch of s) {
    if (re.test(ch)) {
      const low = ch.toLowerCase();
      for (let k = 0; k < low.length; k++) { norm += low[k]; map.push(i); }
    }
    i += ch.length;
  }
  return { norm, map };
}
