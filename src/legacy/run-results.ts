/**
 * run_results.json of every schema version (v1-v6 and the fields added after the published v6:
 * batch_results, partial success, no-op, reused, invocation_started_at, overload_results) and
 * sources.json (source freshness, v1-v3) read into one lenient shape. Unknown fields are ignored and
 * a missing or null field reads as unknown; a field the translation reads holding a value of
 * another type than every dbt version wrote is an input error naming it, not a default. Files
 * written before schema v1 (dbt 0.18 and older) are refused with a message that says so.
 */
import { InputError } from '../errors.js';
import { readJsonDocument, shown } from './json-document.js';
import { isoToNs, notATimestamp } from './time.js';
import { commandOf } from '../telemetry/command-line.js';

export interface Timing {
  name: string;
  start: bigint | null;
  end: bigint | null;
}

export interface LegacyResult {
  /** the node's unique_id; for a result without one, a key within the run (`operation.unknown.result-3`) */
  uniqueId: string;
  /** the result has no unique_id: the node is written without one, under this name (`results[3]`) */
  noUniqueId?: string;
  status: string;
  message: string | null;
  timing: Timing[];
  threadId: string;
  executionTime: number;
  failures: number | null;
  rowsAffected?: number;
  /** microbatch windows that failed ([start, end] ISO pairs), kept for the error text */
  failedBatches?: string[][];
  /** sources.json: what the freshness query measured */
  freshness?: Freshness;
}

export interface Freshness {
  maxLoadedAt: string | null;
  snapshottedAt: string | null;
  /** max_loaded_at_time_ago_in_s */
  ageS: number | null;
  /** "warn after 12 hour, error after 1 day" */
  criteria: string | null;
}

export interface LegacyRun {
  file: string;
  kind: 'run-results' | 'sources';
  schemaVersion: number | null;
  dbtVersion: string | null;
  /** Fusion writes v6 files too; told apart by dbt_version */
  engine: 'dbt-core' | 'fusion';
  invocationId: string | null;
  generatedAt: bigint | null;
  startedAt: bigint | null;
  elapsedS: number | null;
  /** args.which (run, build, test, compile, generate, ...) or the word after dbt in invocation_command */
  command: string | null;
  rawCommand: string | null;
  args: Record<string, unknown>;
  results: LegacyResult[];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where a value lies, for the error: the file, the field and (in results) the node's unique_id. */
interface At {
  file: string;
  field: string;
  uid?: string;
}
const wrong = (at: At, what: string) => new InputError(`${at.uid ? `${at.uid}: ` : ''}${what}`, at.file, undefined, at.field);

/** A number, or null when absent or null. */
function num(v: unknown, at: At): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  throw wrong(at, `must be a number, not ${shown(v)}`);
}

/** An ISO 8601 timestamp as nanoseconds, or null when absent, null or "". */
function time(v: unknown, at: At): bigint | null {
  if (v === undefined || v === null || v === '') return null;
  const ns = isoToNs(v);
  if (ns === null) throw wrong(at, notATimestamp(v));
  return ns;
}

/** What runlens reads of the older engine, for messages about files it does not. */
export const READ_VERSIONS = 'run_results.json schema v1 to v6 (dbt 0.19 to 1.12), sources.json v1 to v3 and --log-format json logs (dbt 1.0 and later)';

export function readRunResults(file: string): LegacyRun {
  const doc = readJsonDocument(file, 'run_results.json');
  return parseRunResults(doc, file);
}

/** Before schema v1 there was no metadata: results held whole nodes, and status an adapter message. */
function isBeforeV1(doc: Record<string, unknown>, results: unknown[]): boolean {
  if (isObj(doc.metadata) && typeof doc.metadata.dbt_schema_version === 'string') return false;
  return 'generated_at' in doc || results.some((r) => isObj(r) && isObj(r.node)) || (isObj(doc.meta) && isObj(doc.sources));
}

export function parseRunResults(doc: unknown, file: string): LegacyRun {
  if (!isObj(doc)) throw new InputError('expected a JSON object', file);
  const meta = isObj(doc.metadata) ? doc.metadata : {};
  const results = Array.isArray(doc.results) ? doc.results : undefined;
  if (isBeforeV1(doc, results ?? []))
    throw new InputError(`written by dbt 0.18 or older (no metadata.dbt_schema_version: before schema v1), which runlens does not read; it reads ${READ_VERSIONS}`, file);
  if (!results) throw new InputError('missing results[] (is this a run_results.json?)', file, undefined, 'results');
  const sv = /\/(run-results|sources)\/v(\d+)/.exec(String(meta.dbt_schema_version ?? ''));
  const kind = sv?.[1] === 'sources' || (!sv && results.some((r) => isObj(r) && 'max_loaded_at' in r)) ? 'sources' : 'run-results';
  const dbtVersion = typeof meta.dbt_version === 'string' ? meta.dbt_version : null;
  const args = isObj(doc.args) ? doc.args : {};
  const raw = typeof args.invocation_command === 'string' ? args.invocation_command : null;
  const which = typeof args.which === 'string' ? args.which : null;
  const parsed = results.map((r, i) => (kind === 'sources' ? parseFreshnessResult(r, file, i) : parseResult(r, file, i)));
  // A node twice would be one node with two results, of which the model could keep only one.
  const first = new Map<string, number>();
  parsed.forEach((r, i) => {
    const j = first.get(r.uniqueId);
    if (j !== undefined) throw new InputError(`${r.uniqueId} is also results[${j}]: a run has one result per node`, file, undefined, `results[${i}].unique_id`);
    first.set(r.uniqueId, i);
  });
  return {
    file,
    kind,
    schemaVersion: sv ? Number(sv[2]) : null,
    dbtVersion,
    engine: dbtVersion?.startsWith('2.') ? 'fusion' : 'dbt-core',
    invocationId: typeof meta.invocation_id === 'string' && meta.invocation_id ? meta.invocation_id : null,
    generatedAt: time(meta.generated_at, { file, field: 'metadata.generated_at' }),
    startedAt: time(meta.invocation_started_at, { file, field: 'metadata.invocation_started_at' }),
    elapsedS: num(doc.elapsed_time, { file, field: 'elapsed_time' }),
    command: kind === 'sources' ? 'freshness' : which ?? commandOf(raw),
    rawCommand: raw,
    args,
    results: parsed,
  };
}

function parseTiming(r: Record<string, unknown>, at: At): Timing[] {
  if (r.timing === undefined || r.timing === null) return [];
  if (!Array.isArray(r.timing)) throw wrong(at, `must be a list of {name, started_at, completed_at}, not ${shown(r.timing)}`);
  return r.timing.map((t, j) => {
    const here = { ...at, field: `${at.field}[${j}]` };
    if (!isObj(t)) throw wrong(here, `must be an object {name, started_at, completed_at}, not ${shown(t)}`);
    return {
      name: String(t.name ?? ''),
      start: time(t.started_at, { ...here, field: `${here.field}.started_at` }),
      end: time(t.completed_at, { ...here, field: `${here.field}.completed_at` }),
    };
  });
}

/** "warn after 12 hour, error after 1 day" from {warn_after: {count, period}, error_after: ...}. */
function criteriaText(c: unknown): string | null {
  if (!isObj(c)) return null;
  const part = (k: string, label: string) => {
    const v = c[k];
    return isObj(v) && typeof v.count === 'number' && typeof v.period === 'string' ? `${label} ${v.count} ${v.period}` : null;
  };
  const parts = [part('warn_after', 'warn after'), part('error_after', 'error after')].filter((x) => x !== null);
  return parts.length ? parts.join(', ') : null;
}

/** One source of sources.json: a measured freshness, or a runtime error (its query failed). */
function parseFreshnessResult(r: unknown, file: string, i: number): LegacyResult {
  const field = (f: string) => `results[${i}].${f}`;
  if (!isObj(r)) throw new InputError('expected an object', file, undefined, `results[${i}]`);
  if (typeof r.unique_id !== 'string' || !r.unique_id) throw new InputError('unique_id must be a string', file, undefined, field('unique_id'));
  if (typeof r.status !== 'string') throw new InputError('status must be a string', file, undefined, field('status'));
  const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
  const at = (f: string): At => ({ file, field: field(f), uid: r.unique_id as string });
  return {
    uniqueId: r.unique_id,
    status: r.status,
    message: str(r.error) ?? str(r.message),
    timing: parseTiming(r, at('timing')),
    threadId: typeof r.thread_id === 'string' ? r.thread_id : '',
    executionTime: num(r.execution_time, at('execution_time')) ?? 0,
    failures: null,
    freshness: {
      maxLoadedAt: str(r.max_loaded_at),
      snapshottedAt: str(r.snapshotted_at),
      ageS: num(r.max_loaded_at_time_ago_in_s, at('max_loaded_at_time_ago_in_s')),
      criteria: criteriaText(r.criteria),
    },
  };
}

/** Schema v1 (0.19) has no `failures`: a test's count of failing rows is its message, an integer. */
const countInMessage = (m: unknown): number | null => (typeof m === 'number' && Number.isInteger(m) && m >= 0 ? m : null);

function parseResult(r: unknown, file: string, i: number): LegacyResult {
  const field = (f: string) => `results[${i}].${f}`;
  if (!isObj(r)) throw new InputError('expected an object', file, undefined, `results[${i}]`);
  // A 1.5-1.8 failing project hook has no unique_id; the artifact normally drops it, but be lenient.
  const uniqueId = typeof r.unique_id === 'string' && r.unique_id ? r.unique_id : `operation.unknown.result-${i}`;
  if (typeof r.status !== 'string') throw new InputError('status must be a string', file, undefined, field('status'));
  const noUniqueId = uniqueId === r.unique_id ? undefined : `results[${i}]`;
  const at = (f: string): At => ({ file, field: field(f), uid: noUniqueId ? undefined : uniqueId });
  const timing = parseTiming(r, at('timing'));
  const ar = isObj(r.adapter_response) ? r.adapter_response : {};
  // adapters write -1 when the database does not say
  const affected = num(ar.rows_affected, at('adapter_response.rows_affected'));
  const rows = affected !== null && affected >= 0 ? Math.trunc(affected) : undefined;
  const br = isObj(r.batch_results) && Array.isArray(r.batch_results.failed) ? (r.batch_results.failed as unknown[]) : undefined;
  const out: LegacyResult = {
    uniqueId,
    status: r.status,
    message: typeof r.message === 'string' ? r.message : null,
    timing,
    threadId: typeof r.thread_id === 'string' ? r.thread_id : '',
    executionTime: num(r.execution_time, at('execution_time')) ?? 0,
    failures: num(r.failures, at('failures')) ?? countInMessage(r.message),
  };
  if (rows !== undefined) out.rowsAffected = rows;
  if (noUniqueId) out.noUniqueId = noUniqueId;
  if (br?.length) out.failedBatches = br.filter(Array.isArray).map((w) => (w as unknown[]).map(String));
  return out;
}
