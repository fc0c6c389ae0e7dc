/**
 * How the client commands print: `--format json` prints what the API answered (one object for one
 * thing, an array for a listing); text prints the same field names, as `field<TAB>value` lines for
 * one object and as a table for a listing (plain when stdout is not a terminal or NO_COLOR is set);
 * in both, a value's line breaks show as ⏎ and its tabs as spaces.
 */
import { printableLine } from '../render/printable.js';
import { renderTable } from '../render/table.js';

export type ClientFormat = 'text' | 'json';

export const out = (s: string): void => {
  process.stdout.write(s.endsWith('\n') ? s : s + '\n');
};

export const printJson = (v: unknown): void => out(JSON.stringify(v, null, 2));

/** `a.b` reads a nested field (`trigger.cause`). */
export function field(o: Record<string, unknown>, path: string): unknown {
  let v: unknown = o;
  for (const k of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/**
 * A value as text: lists of plain words comma-separated (JSON when an item has a comma or space), other
 * objects as JSON, and the v3 API's epoch-microsecond times (`*_at`) as ISO times.
 */
export function text(v: unknown, name = ''): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v) && v.every((x) => (typeof x === 'string' && !/[\s,]/.test(x)) || typeof x === 'number')) return v.join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  if (name.endsWith('_at') && typeof v === 'string' && /^\d{16}$/.test(v)) return new Date(Number(v) / 1000).toISOString();
  return String(v);
}

/**
 * One object as `field<TAB>value` lines, in the order given. Each value is one line, as in a table
 * (line breaks as ⏎, tabs as spaces): a value holding `\nactive\tfalse` would forge a field line.
 */
export function printFields(o: Record<string, unknown>, fields: readonly string[]): void {
  out(fields.map((f) => `${f}\t${printableLine(text(field(o, f), f))}`).join('\n'));
}

/** A listing as a table with these columns (field names as the API has them). */
export function printTable(rows: readonly Record<string, unknown>[], columns: readonly string[], empty = '(none)'): void {
  if (!rows.length) return out(empty);
  // the client commands' --format has no csv
  out(renderTable({ columns: [...columns], rows: rows.map((r) => Object.fromEntries(columns.map((c) => [c, text(field(r, c), c)]))) }, 'table', { complete: 'json' }));
}

/** A listing in either format; says on stderr when more exist than were shown (JSON too: stdout stays the array). */
export function printListing(rows: readonly Record<string, unknown>[], columns: readonly string[], format: ClientFormat, what: string,
  page?: { total: number; offset: number }): void {
  if (format === 'json') printJson(rows);
  else printTable(rows, columns, `(no ${what})`);
  if (page && page.offset + rows.length < page.total) {
    process.stderr.write(`${rows.length} of ${page.total} ${what} shown, from offset ${page.offset}; see --limit and --offset\n`);
  }
}

export const formatOption = { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'json: the objects as the API answers them' };
