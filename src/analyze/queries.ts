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
import type { RowStream } from '../store/json-rows.js';
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

/**
 * A parameter's number: plain decimal digits with a sign (and for a DOUBLE a fraction and an
 * exponent), finite; undefined for anything else (JavaScript's Number also takes `0x10`, `Infinity`,
 * spaces around it).
 */
function decimalNumber(raw: string, fraction: boolean): number | undefined {
  const ok = fraction ? /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/ : /^[+-]?\d+$/;
  const n = Number(raw);
  return ok.test(raw) && Number.isFinite(n) ? n : undefined;
}

function bindValue(p: QueryParam, raw: string): string | number | boolean {
  switch (p.type) {
    case 'INTEGER': {
      const n = decimalNumber(raw, false);
      if (n === undefined) throw new UsageError(`--param ${p.name}: wants an integer${integerRange(p) && ` ${integerRange(p)}`}, got "${raw}"`);
      // out of range: both bounds, also those a `1..` range leaves unsaid (an INTEGER's)
      if (n < p.min! || n > p.max!) throw new UsageError(`--param ${p.name}: wants an integer from ${p.min} to ${p.max}, got "${raw}"`);
      return n;
    }
    case 'DOUBLE': {
      const n = decimalNumber(raw, true);
      if (n === undefined) throw new UsageError(`--param ${p.name}: wants a decimal number (such as 50, 2.5 or 1e3), got "${raw}"`);
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
async function resolveRunParams(db: Db, given: Record<string, string>): Promise<Record<string, string>> {
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

/** A saved query's answer; the explorer's palette's, the report's and critical-path's one way to run it. */
export async function runSavedQuery(db: Db, q: SavedQuery, params: Record<string, string> = {}): Promise<Tabular> {
  const values = await savedQueryValues(db, q, params);
  try {
    return await runSql(db, q.sql, values);
  } catch (e) {
    throw refusal(q, e);
  }
}

/** A saved query's answer as it comes (`query NAME`): rows of any number. */
export async function streamSavedQuery(db: Db, q: SavedQuery, params: Record<string, string> = {}): Promise<RowStream> {
  const values = await savedQueryValues(db, q, params);
  try {
    return mapErrors(await streamSql(db, q.sql, values), (e) => refusal(q, e));
  } catch (e) {
    throw refusal(q, e);
  }
}

/** The values a saved query's parameters are bound to, checked: parameters it has, runs in the input. */
async function savedQueryValues(db: Db, q: SavedQuery, params: Record<string, string>): Promise<Record<string, string | number | boolean>> {
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
  return values;
}

/** A saved query refuses what its parameters ask with error('<name>: why'): a usage error like the checks above. */
function refusal(q: SavedQuery, e: unknown): unknown {
  const refused = new RegExp(`Invalid Input Error: (${q.name}: [^\n]*)`).exec(errorMessage(e));
  return refused ? new UsageError(refused[1]!) : e;
}

/**
 * Free SQL (`query --sql`): statements that read only (Db.readingParameters), with `--param NAME=VALUE`
 * bound to its `$NAME` parameters as text (DuckDB casts a value where the SQL compares it).
 */
export async function streamFreeSql(db: Db, sql: string, given: Record<string, string> = {}): Promise<RowStream> {
  const text = sql.trim().replace(/;\s*$/, '');
  let names: string[];
  try {
    names = await db.readingParameters(text);
  } catch (e) {
    throw e instanceof UsageError ? e : sqlError(e);
  }
  for (const k of Object.keys(given)) {
    if (!names.includes(k)) throw new UsageError(`the SQL has no parameter $${k} (${names.length ? `it takes: ${names.map((n) => `$${n}`).join(', ')}` : 'it takes none'})`);
  }
  return streamSql(db, text, given);
}

const sqlText = (sql: string) => sql.trim().replace(/;\s*$/, '');
const bound = (values?: Record<string, string | number | boolean>) => (values && Object.keys(values).length ? values : undefined);

export async function runSql(db: Db, sql: string, values?: Record<string, string | number | boolean>): Promise<Tabular> {
  try {
    const t = await db.table(sqlText(sql), bound(values));
    return { columns: t.columns, rows: t.rows };
  } catch (e) {
    throw sqlError(e);
  }
}

/** runSql's result chunk by chunk (Db.stream), an error while reading one said the same way. */
async function streamSql(db: Db, sql: string, values?: Record<string, string | number | boolean>): Promise<RowStream> {
  try {
    return mapErrors(await db.stream(sqlText(sql), bound(values)), sqlError);
  } catch (e) {
    throw sqlError(e);
  }
}

/**
 * DuckDB's error as one line: its first line and what follows that helps (candidate bindings, "Did
 * you mean"), without the quoted SQL and its caret (`LINE 1: ...`, `^`).
 */
function sqlError(e: unknown): UsageError {
  if (e instanceof UsageError) return e;
  const text = errorMessage(e).replace(/\n+LINE \d+:[\s\S]*$/, '');
  return new UsageError(`SQL error: ${text.split('\n').map((l) => l.trim()).filter(Boolean).join(' ')}`);
}

/** The stream with an error while reading it replaced by `map(error)`. */
function mapErrors(s: RowStream, map: (e: unknown) => unknown): RowStream {
  const inner = s.chunks;
  async function* chunks(): AsyncGenerator<unknown[][]> {
    try {
      yield* inner;
    } catch (e) {
      throw map(e);
    }
  }
  return { ...s, chunks: chunks() };
}
