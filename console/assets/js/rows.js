// Questions for batches, loops and campaigns: pasted one per line, or read from a CSV file in the
// browser (nothing is uploaded until the create call), with the column that holds the question.

import { h, field, select, plural } from './ui.js';
import { ApiError } from './api.js';

// parseCSV reads RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks. A
// semicolon or tab separator is detected from the first line, as spreadsheets export them.
export function parseCSV(text) {
  const src = text.replace(/^\uFEFF/, '');
  const first = src.split('\n', 1)[0];
  const sep = [',', ';', '\t'].map((s) => [s, first.split(s).length]).sort((a, b) => b[1] - a[1])[0][0];
  const rows = [];
  let row = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (quoted) {
      if (c === '"' && src[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === sep) { row.push(cell); cell = ''; } else if (c === '\n' || c === '\r') {
      if (c === '\r' && src[i + 1] === '\n') i++;
      row.push(cell); rows.push(row); row = []; cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length) { row.push(cell); rows.push(row); }
  return rows.filter((r) => r.some((c) => c.trim() !== ''));
}

// questionsInput is the "pasted lines or CSV" control. read() returns {questions, rows, records}:
// rows are the CSV rows (objects by header) aligned with questions, records the same rows for a
// campaign. max caps how many a create accepts.
export function questionsInput({ max, label = 'Questions', onChange }) {
  const mode = h('div', { class: 'choices', role: 'radiogroup', 'aria-label': 'Where the questions come from' });
  const lines = h('textarea', { name: 'questions', rows: 6, placeholder: 'One question per line' });
  const file = h('input', { type: 'file', accept: '.csv,text/csv,.tsv,text/tab-separated-values' });
  const column = h('select', { name: 'column' });
  const info = h('p', { class: 'hint', 'aria-live': 'polite' });
  let table = null; // {header, rows}
  const paste = h('div', null, field(label, lines, 'One per line; blank lines are left out.'));
  const csv = h('div', { hidden: true }, field('CSV file', file, 'The first row names the columns. Each further row is one question.'),
    field('Question column', column, 'The column that holds each row’s question; the other columns are kept with the row.'));
  for (const [v, text] of [['lines', 'Paste lines'], ['csv', 'CSV file']]) {
    const r = h('input', { type: 'radio', name: 'qmode', value: v, checked: v === 'lines' });
    r.addEventListener('change', () => { paste.hidden = v !== 'lines'; csv.hidden = v !== 'csv'; update(); });
    mode.append(h('label', null, r, text));
  }
  const current = () => mode.querySelector('input:checked').value;
  function update() {
    const n = read().questions.length;
    info.textContent = n ? `${plural(n, 'question')}${max && n > max ? ` — at most ${max} are accepted` : ''}.` : '';
    if (onChange) onChange(n);
  }
  lines.addEventListener('input', update);
  column.addEventListener('change', update);
  file.addEventListener('change', async () => {
    table = null;
    column.replaceChildren();
    const f = file.files[0];
    if (!f) { update(); return; }
    const all = parseCSV(await f.text());
    if (all.length < 2) { info.textContent = 'The file has no rows under its header row.'; table = null; return; }
    const header = all[0].map((c, i) => c.trim() || `column ${i + 1}`);
    table = { header, rows: all.slice(1).map((r) => Object.fromEntries(header.map((k, i) => [k, (r[i] ?? '').trim()]))) };
    const guess = header.find((c) => /question|query|prompt/i.test(c)) || header[0];
    column.replaceChildren(...select('column', header.map((c) => [c, c]), guess).children);
    update();
  });
  function read() {
    if (current() === 'lines') {
      const questions = lines.value.split('\n').map((l) => l.trim()).filter(Boolean);
      return { questions, rows: null, records: null };
    }
    if (!table) return { questions: [], rows: null, records: null };
    const kept = table.rows.filter((r) => (r[column.value] || '').trim());
    return { questions: kept.map((r) => r[column.value].trim()), rows: kept, records: kept, column: column.value };
  }
  // check refuses an empty or oversized list before anything is sent.
  function check() {
    const r = read();
    if (!r.questions.length) throw new ApiError(422, { title: 'No questions', detail: current() === 'csv' ? 'Choose a CSV file with at least one row.' : 'Write at least one question.' });
    if (max && r.questions.length > max) throw new ApiError(422, { title: 'Too many questions', detail: `At most ${max} per create; this has ${r.questions.length}.` });
    return r;
  }
  return { element: h('fieldset', null, h('legend', null, label), mode, paste, csv, info), read, check };
}
