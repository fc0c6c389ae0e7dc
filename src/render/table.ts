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
  if (format === 'csv') {
    const lines = [t.columns.map(csvCell).join(',')];
    for (const r of t.rows) lines.push(t.columns.map((c) => csvCell(r[c])).join(','));
    return lines.join('\n') + '\n';
  }
  if (t.rows.length === 0) return '(no rows)\n';
  const text = t.rows.map((r) => t.columns.map((c) => printableLine(cell(r[c]))));
  const numeric = t.columns.map((c) => t.rows.every((r) => r[c] === null || r[c] === undefined || typeof r[c] === 'number' || typeof r[c] === 'bigint'));
  const { shown, widths, hidden } = fit(t.columns, text, layout);
  const bold = process.stdout.isTTY && !process.env.NO_COLOR ? (s: string) => `\x1b[1m${s}\x1b[22m` : (s: string) => s;
  const line = (cells: string[], head: boolean) =>
    shown
      .map((i, k) => {
        const w = widths[k]!;
        const s = cut(cells[i]!, w, specOf(t.columns[i]!, layout).prefix ?? false);
        const padded = numeric[i] && !head ? s.padStart(w) : k === shown.length - 1 ? s : s.padEnd(w);
        return head ? bold(padded) : padded;
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  if (hidden.length) process.stderr.write(`runlens: left out to fit ${layout.width ?? outputWidth()} columns: ${hidden.join(', ')} (--format csv or json has every column)\n`);
  return [line(t.columns, true), ...text.map((r) => line(r, false))].join('\n') + '\n';
}

/** Which columns to show, in their order, and how wide: cut values first, then leave columns out. */
function fit(columns: string[], text: string[][], layout: TableLayout): { shown: number[]; widths: number[]; hidden: string[] } {
  const natural = columns.map((c, i) => Math.max(width(c), ...text.map((r) => width(r[i]!))));
  const limit = layout.width ?? outputWidth();
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
