/**
 * Rendering of tabular results: a table for people, JSON (an array of row objects) or CSV.
 * The table has no borders and no lines between rows (as kubectl and gh print); on a terminal it
 * fits the width: long values are cut (with …, ids without), then the lowest-priority columns are
 * left out and named on stderr. Not on a terminal (a pipe, a file) it has every column in full.
 */
import { printableLine } from './printable.js';
export type TableFormat = 'table' | 'json' | 'csv';

export interface Tabular {
  columns: string[];
  rows: Record<string, unknown>[];
}

export interface ColumnSpec {
  /** narrowest the column may be cut to (default: its header, at least 16; hex ids 12, unique_id 28) */
  min?: number;
  /** cut to a prefix without … (ids, which tools take by prefix, and times) */
  prefix?: boolean;
}

export interface TableLayout {
  /** columns in the order they are kept (the last is left out first); default: left to right */
  priority?: string[];
  columns?: Record<string, ColumnSpec>;
  /** width to fit; default: outputWidth() */
  width?: number;
  /** collects the columns left out, for a command that prints several tables to name them once (noteLeftOut) */
  leftOut?: Set<string>;
  /** the command's --format values that carry every column, named in the note (default: csv or json) */
  complete?: string;
}

const GAP = 2;

/** The width tables fit: COLUMNS when set, else the terminal's; none (no limit) when stdout is not a terminal. */
export function outputWidth(stream: NodeJS.WriteStream = process.stdout): number | undefined {
  const env = Number(process.env.COLUMNS);
  if (Number.isInteger(env) && env > 0) return env;
  return stream.isTTY ? stream.columns || 80 : undefined;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function csvCell(v: unknown): string {
  // NULL is an empty cell, the empty string a quoted one (as DuckDB's COPY writes them)
  if (v === '') return '""';
  const s = cell(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Characters as the terminal shows them (code points; the values here are mostly ASCII). */
const width = (s: string) => [...s].length;

export function renderTable(t: Tabular, format: TableFormat, layout: TableLayout = {}): string {
  if (format === 'json') return JSON.stringify(t.rows, null, 2) + '\n';
  const rows = t.rows.map((r) => t.columns.map((c) => r[c]));
  if (format === 'csv') return csvLines([t.columns.map(csvCell)]) + csvLines(rows.map((r) => r.map(csvCell)));
  if (rows.length === 0) return NO_ROWS;
  const table = tableOf(t.columns, rows, layout);
  return table.head + table.lines(rows);
}

const NO_ROWS = '(no rows)\n';

/** Rows of DuckDB's result (Db.stream) as the text of a format, as it comes: the same text renderTable gives. */
export async function* renderRows(columns: string[], chunks: AsyncIterable<unknown[][]>, format: TableFormat, layout: TableLayout = {}): AsyncGenerator<string> {
  if (format === 'csv') yield csvLines([columns.map(csvCell)]);
  let any = false;
  let table: { head: string; lines: (rows: unknown[][]) => string } | undefined;
  // a table's widths come from its first rows (a later wider value is whole, only out of line)
  let sample: unknown[][] = [];
  for await (const rows of chunks) {
    if (rows.length === 0) continue;
    if (format === 'json') yield (any ? ',\n' : jsonOpen(true)) + jsonRows(columns, rows);
    else if (format === 'csv') yield csvLines(rows.map((r) => r.map(csvCell)));
    else if (table) yield table.lines(rows);
    else {
      sample = sample.concat(rows);
      if (sample.length >= TABLE_SAMPLE_ROWS) {
        table = tableOf(columns, sample, layout);
        yield table.head + table.lines(sample);
        sample = [];
      }
    }
    any = true;
  }
  if (format === 'json') yield any ? jsonClose(true) : jsonOpen(false) + jsonClose(false);
  else if (format === 'table' && !table) {
    if (sample.length === 0) yield NO_ROWS;
    else {
      const t = tableOf(columns, sample, layout);
      yield t.head + t.lines(sample);
    }
  }
}

/** Rows a streamed table measures its columns on. */
const TABLE_SAMPLE_ROWS = 4096;

const jsonOpen = (rows: boolean) => (rows ? '[\n' : '[');
const jsonClose = (rows: boolean) => (rows ? '\n]\n' : ']\n');

/** Rows as JSON.stringify(rows, null, 2) writes them inside its array (without the brackets), keys written as given. */
function jsonRows(columns: string[], rows: unknown[][]): string {
  const keys = columns.map((c) => `    ${JSON.stringify(c)}: `);
  const out = new Array<string>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    if (columns.length === 0) {
      out[r] = '  {}';
      continue;
    }
    let s = '  {\n';
    for (let c = 0; c < columns.length; c++) {
      const v = row[c];
      s += keys[c]! + (v !== null && typeof v === 'object' ? JSON.stringify(v, null, 2).replaceAll('\n', '\n    ') : JSON.stringify(v ?? null)) + (c < columns.length - 1 ? ',\n' : '\n');
    }
    out[r] = s + '  }';
  }
  return out.join(',\n');
}

const csvLines = (lines: string[][]) => lines.map((l) => l.join(',') + '\n').join('');

/**
 * A table's header and its lines for rows, the columns measured on `sample`: shown, how wide and
 * aligned. The columns left out are named on stderr, or added to layout.leftOut.
 */
function tableOf(columns: string[], sample: unknown[][], layout: TableLayout): { head: string; lines: (rows: unknown[][]) => string } {
  const textOf = (r: unknown[]) => r.map((v) => printableLine(cell(v)));
  const text = sample.map(textOf);
  const numeric = columns.map((_, i) => sample.every((r) => r[i] === null || r[i] === undefined || typeof r[i] === 'number' || typeof r[i] === 'bigint'));
  const limit = layout.width ?? outputWidth();
  const { shown, widths, hidden } = fit(columns, text, layout, limit);
  const bold = process.stdout.isTTY && !process.env.NO_COLOR ? (s: string) => `\x1b[1m${s}\x1b[22m` : (s: string) => s;
  const prefix = columns.map((c) => specOf(c, layout).prefix ?? false);
  const line = (cells: string[], head: boolean) =>
    shown
      .map((i, k) => {
        const w = widths[k]!;
        // no limit (not a terminal): a value is never cut, even one wider than the first rows
        const s = limit === undefined ? cells[i]! : cut(cells[i]!, w, prefix[i]!);
        const padded = numeric[i] && !head ? s.padStart(w) : k === shown.length - 1 ? s : s.padEnd(w);
        return head ? bold(padded) : padded;
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  if (hidden.length) {
    if (layout.leftOut) for (const h of hidden) layout.leftOut.add(h);
    else noteLeftOut(hidden, limit!, layout.complete);
  }
  return {
    head: line(columns.map(printableLine), true) + '\n',
    lines: (rows) => {
      let out = '';
      for (let r = 0; r < rows.length; r++) out += line(rows === sample ? text[r]! : textOf(rows[r]!), false) + '\n';
      return out;
    },
  };
}

/** The note on stderr naming the columns a table left out to fit the width. */
export function noteLeftOut(hidden: Iterable<string>, width: number, complete = 'csv or json'): void {
  process.stderr.write(`runlens: left out to fit ${width} columns: ${[...hidden].join(', ')} (--format ${complete} has every column)\n`);
}

/** Which columns to show, in their order, and how wide: cut values first, then leave columns out. */
function fit(columns: string[], text: string[][], layout: TableLayout, limit: number | undefined): { shown: number[]; widths: number[]; hidden: string[] } {
  // (a loop, not Math.max(...): a spread of every row overflows the stack)
  const natural = columns.map((c) => width(printableLine(c)));
  for (const r of text) for (let i = 0; i < columns.length; i++) natural[i] = Math.max(natural[i]!, width(r[i]!));
  const all = columns.map((_, i) => i);
  if (limit === undefined) return { shown: all, widths: natural, hidden: [] };
  const min = columns.map((c, i) => Math.min(natural[i]!, specOf(c, layout).min ?? Math.max(width(c), 16)));
  const order = layout.priority ? [...layout.priority.map((c) => columns.indexOf(c)).filter((i) => i >= 0), ...all.filter((i) => !layout.priority!.includes(columns[i]!))] : all;
  const kept = new Set(all);
  const w = [...natural];
  const total = () => [...kept].reduce((n, i) => n + w[i]!, 0) + GAP * (kept.size - 1);
  // 1. cut the widest values, down to each column's minimum
  for (;;) {
    const over = total() - limit;
    if (over <= 0) break;
    const widest = [...kept].filter((i) => w[i]! > min[i]!).sort((a, b) => w[b]! - w[a]! || order.indexOf(b) - order.indexOf(a))[0];
    if (widest === undefined) break;
    const next = Math.max(...[...kept].filter((i) => i !== widest).map((i) => w[i]!), min[widest]!, 0);
    w[widest] = Math.max(min[widest]!, Math.min(w[widest]! - 1, Math.max(next, w[widest]! - over)));
  }
  // 2. leave out the lowest-priority columns (the first one always stays)
  for (let k = order.length - 1; k > 0 && total() > limit; k--) kept.delete(order[k]!);
  const shown = all.filter((i) => kept.has(i));
  return { shown, widths: shown.map((i) => w[i]!), hidden: all.filter((i) => !kept.has(i)).map((i) => columns[i]!) };
}

/**
 * Hex ids are cut to a prefix (the commands take a unique prefix of a trace or invocation id); a
 * node's unique_id, the subject of most results, keeps room to be recognised.
 */
const ID_COLUMNS = new Set(['trace_id', 'span_id', 'parent_span_id', 'invocation_id']);

function specOf(column: string, layout: TableLayout): ColumnSpec {
  return layout.columns?.[column] ?? (ID_COLUMNS.has(column) ? { min: 12, prefix: true } : column === 'unique_id' ? { min: 28 } : {});
}

function cut(s: string, w: number, prefix: boolean): string {
  const chars = [...s];
  if (chars.length <= w) return s;
  return prefix ? chars.slice(0, w).join('') : chars.slice(0, Math.max(0, w - 1)).join('') + '…';
}
