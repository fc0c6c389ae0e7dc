/** Rendering of tabular results: a terminal table, JSON (an array of row objects) or CSV. */
import Table from 'cli-table3';

export type TableFormat = 'table' | 'json' | 'csv';

export interface Tabular {
  columns: string[];
  rows: Record<string, unknown>[];
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function csvCell(v: unknown): string {
  const s = cell(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function renderTable(t: Tabular, format: TableFormat): string {
  if (format === 'json') return JSON.stringify(t.rows, null, 2) + '\n';
  if (format === 'csv') {
    const lines = [t.columns.map(csvCell).join(',')];
    for (const r of t.rows) lines.push(t.columns.map((c) => csvCell(r[c])).join(','));
    return lines.join('\n') + '\n';
  }
  if (t.rows.length === 0) return '(no rows)\n';
  const table = new Table({ head: t.columns, style: { head: process.env.NO_COLOR || !process.stdout.isTTY ? [] : ['cyan'], border: [] } });
  for (const r of t.rows) table.push(t.columns.map((c) => truncate(cell(r[c]), 80)));
  return table.toString() + '\n';
}

function truncate(s: string, n: number): string {
  const one = s.replace(/\s*\n\s*/g, ' ⏎ ');
  return one.length > n ? one.slice(0, n - 1) + '…' : one;
}
