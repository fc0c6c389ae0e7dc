/**
 * Saved queries: queries/<name>.sql, each opening with a header comment (name, summary, params).
 * Parameters are DuckDB named parameters ($limit), bound with the header's type and default unless
 * `--param k=v` overrides them. An INTEGER parameter may declare its range
 * (`-- param: limit INTEGER 1..999999 = 10 -- ...`, `runs INTEGER 1.. = 30`): a value outside it is a
 * usage error naming the parameter, not a DuckDB error.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage, UsageError } from '../errors.js';
import type { Db } from '../store/db.js';
import { resolveTrace } from './tree.js';
import type { Tabular } from '../render/table.js';

export interface QueryParam {
  name: string;
  type: 'INTEGER' | 'DOUBLE' | 'VARCHAR' | 'BOOLEAN';
  default: string;
  doc: string;
  /** INTEGER only: the values allowed (DuckDB's INTEGER range where the header gives none) */
  min?: number;
  max?: number;
}

/** DuckDB's INTEGER, the type an INTEGER parameter is bound as. */
const INTEGER_RANGE = { min: -(2 ** 31), max: 2 ** 31 - 1 };

export interface SavedQuery {
  name: string;
  summary: string;
  params: QueryParam[];
  /** minimum number of runs the query needs (e.g. run-diff: 2) */
  requiresRuns: number;
  sql: string;
  file: string;
}

/** The package root (holds queries/), found from this module's location in src/ or dist/src/. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'queries'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('cannot find the queries/ folder of the runlens package');
}

export function parseSavedQuery(file: string, text: string): SavedQuery {
  const header = text.split('\n').filter((l) => l.startsWith('--')).map((l) => l.replace(/^--\s?/, ''));
  const get = (k: string) => header.find((l) => l.startsWith(`${k}:`))?.slice(k.length + 1).trim();
  const name = get('name') ?? path.basename(file, '.sql');
  const params: QueryParam[] = header
    .filter((l) => l.startsWith('param:'))
    .map((l) => {
      const m = /^param:\s*(\w+)\s+(INTEGER|DOUBLE|VARCHAR|BOOLEAN)(?:\s+(-?\d+)\.\.(-?\d+)?)?\s*=\s*('(?:[^']|'')*'|\S+)\s*(?:--\s*(.*))?$/.exec(l);
      if (!m || (m[3] !== undefined && m[2] !== 'INTEGER')) throw new Error(`${file}: bad param header: ${l}`);
      const def = m[5]!.startsWith("'") ? m[5]!.slice(1, -1).replaceAll("''", "'") : m[5]!;
      const range = m[2] === 'INTEGER' ? { min: m[3] === undefined ? INTEGER_RANGE.min : Number(m[3]), max: m[4] === undefined ? INTEGER_RANGE.max : Number(m[4]) } : {};
      return { name: m[1]!, type: m[2] as QueryParam['type'], default: def, doc: m[6] ?? '', ...range };
    });
  const req = /^(\d+)\s+runs?$/.exec(get('requires') ?? '');
  return { name, summary: get('summary') ?? '', params, requiresRuns: req ? Number(req[1]) : 0, sql: text, file };
}

export function listSavedQueries(): SavedQuery[] {
  const dir = path.join(packageRoot(), 'queries');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => parseSavedQuery(path.join(dir, f), readFileSync(path.join(dir, f), 'utf8')));
}

export function findSavedQuery(name: string): SavedQuery {
  const all = listSavedQueries();
  const q = all.find((x) => x.name === name);
  if (!q) throw new UsageError(`no saved query "${name}" (known: ${all.map((x) => x.name).join(', ')})`);
  return q;
}

/** `k=v` pairs from the command line. */
export function parseParamArgs(pairs: string[] = []): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new UsageError(`--param wants key=value, got "${p}"`);
    if (p.slice(0, i) in out) throw new UsageError(`--param ${p.slice(0, i)} is given more than once: give each parameter once`);
    out[p.slice(0, i)] = p.slice(i + 1);
  }
  return out;
}

/** The values an INTEGER parameter takes, for messages and the list of queries: "from 1 to 999999", "from 1". */
export function integerRange(p: QueryParam): string {
  const max = p.max === undefined || p.max === INTEGER_RANGE.max ? '' : ` to ${p.max}`;
  return p.min === undefined || p.min === INTEGER_RANGE.min ? (max ? `up${max}` : '') : `from ${p.min}${max}`;
}

function bindValue(p: QueryParam, raw: string): string | number | boolean {
  switch (p.type) {
    case 'INTEGER': {
      const n = Number(raw);
      if (!/^-?\d+$/.test(raw) || n < p.min! || n > p.max!) throw new UsageError(`--param ${p.name}: wants an integer${integerRange(p) && ` ${integerRange(p)}`}, got "${raw}"`);
      return n;
    }
    case 'DOUBLE': {
      const n = Number(raw);
      if (raw.trim() === '' || Number.isNaN(n)) throw new UsageError(`--param ${p.name}: wants a number, got "${raw}"`);
      return n;
    }
    case 'BOOLEAN':
      if (!/^(true|false)$/i.test(raw)) throw new UsageError(`--param ${p.name}: wants true or false, got "${raw}"`);
      return raw.toLowerCase() === 'true';
    default:
      return raw;
  }
}

/** Parameters that name a run (a trace id, an invocation id or a prefix of either). */
const RUN_PARAMS = ['trace', 'base', 'head', 'until'];

/**
 * The run parameters among `given` as the runs' trace ids: a run named must be in the input and its
 * prefix unique, as for tree --trace (an unknown run would read as "no rows").
 */
export async function resolveRunParams(db: Db, given: Record<string, string>): Promise<Record<string, string>> {
  const out = { ...given };
  for (const k of RUN_PARAMS) if (out[k]) out[k] = await resolveTrace(db, out[k]);
  return out;
}

/** A history query's `command` must be the command of a run in the input: a typo would read as "no failures". */
async function commandInInput(db: Db, command: string): Promise<void> {
  const commands = await db.all<{ command: string }>('SELECT DISTINCT command FROM runs WHERE command IS NOT NULL ORDER BY command');
  if (commands.some((c) => c.command === command)) return;
  const there = commands.length ? `its runs' commands: ${commands.map((c) => c.command).join(', ')}` : 'no run records a command';
  throw new UsageError(`--param command: no run of command ${JSON.stringify(command)} in the input (${there})`);
}

/** A saved query's answer; the command's and the explorer's palette's one way to run it. */
export async function runSavedQuery(db: Db, q: SavedQuery, params: Record<string, string> = {}): Promise<Tabular> {
  for (const k of Object.keys(params)) {
    if (!q.params.some((p) => p.name === k)) {
      throw new UsageError(`query ${q.name} has no parameter "${k}" (it takes: ${q.params.map((p) => p.name).join(', ') || 'none'})`);
    }
  }
  const given = await resolveRunParams(db, params);
  if (given.command) await commandInInput(db, given.command);
  if (q.requiresRuns > 0) {
    const runs = await db.scalar<number>('SELECT count(*)::INTEGER FROM runs');
    const named = q.params.filter((p) => p.type === 'VARCHAR' && given[p.name]).length;
    if (runs < q.requiresRuns && named < q.requiresRuns) {
      throw new UsageError(`query ${q.name} compares ${q.requiresRuns} runs; the input has ${runs}`);
    }
  }
  const values: Record<string, string | number | boolean> = {};
  for (const p of q.params) values[p.name] = bindValue(p, given[p.name] ?? p.default);
  try {
    return await runSql(db, q.sql, values);
  } catch (e) {
    // A saved query refuses what its parameters ask with error('<name>: why'): a usage error like the checks above.
    const refused = new RegExp(`Invalid Input Error: (${q.name}: [^\n]*)`).exec(errorMessage(e));
    throw refused ? new UsageError(refused[1]!) : e;
  }
}

/**
 * Free SQL (`query --sql`): statements that read only (Db.readingParameters), with `--param NAME=VALUE`
 * bound to its `$NAME` parameters as text (DuckDB casts a value where the SQL compares it).
 */
export async function runFreeSql(db: Db, sql: string, given: Record<string, string> = {}): Promise<Tabular> {
  const text = sql.trim().replace(/;\s*$/, '');
  let names: string[];
  try {
    names = await db.readingParameters(text);
  } catch (e) {
    throw e instanceof UsageError ? e : new UsageError(`SQL error: ${(e as Error).message}`);
  }
  for (const k of Object.keys(given)) {
    if (!names.includes(k)) throw new UsageError(`the SQL has no parameter $${k} (${names.length ? `it takes: ${names.map((n) => `$${n}`).join(', ')}` : 'it takes none'})`);
  }
  return runSql(db, text, given);
}

export async function runSql(db: Db, sql: string, values?: Record<string, string | number | boolean>): Promise<Tabular> {
  try {
    const t = await db.table(sql.trim().replace(/;\s*$/, ''), values && Object.keys(values).length ? values : undefined);
    return { columns: t.columns, rows: t.rows };
  } catch (e) {
    throw new UsageError(`SQL error: ${(e as Error).message}`);
  }
}
