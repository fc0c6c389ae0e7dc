/**
 * run_results.json of every schema version (v1-v6 and the fields added after the published v6:
 * batch_results, partial success, no-op, reused, invocation_started_at, overload_results) read into
 * one lenient shape. Unknown fields are ignored; only what the translation needs is checked.
 */
import { InputError } from '../errors.js';
import { readJsonDocument } from './json-document.js';
import { isoToNs } from './time.js';

export interface Timing {
  name: string;
  start: bigint | null;
  end: bigint | null;
}

export interface LegacyResult {
  uniqueId: string;
  status: string;
  message: string | null;
  timing: Timing[];
  threadId: string;
  executionTime: number;
  failures: number | null;
  rowsAffected?: number;
  /** microbatch windows that failed ([start, end] ISO pairs), kept for the error text */
  failedBatches?: string[][];
}

export interface LegacyRun {
  file: string;
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

const SUBCOMMANDS = new Set([
  'build', 'run', 'test', 'seed', 'snapshot', 'compile', 'generate', 'serve', 'freshness', 'parse', 'debug', 'deps', 'clean',
  'list', 'ls', 'retry', 'clone', 'show', 'run-operation', 'init', 'sl',
]);

/** The dbt sub-command in a command line ("dbt --log-format json docs generate" -> generate). */
export function commandOf(line: string | null | undefined): string | null {
  if (!line) return null;
  const words = line.trim().split(/\s+/);
  const from = Math.max(0, words.findIndex((w) => /(^|\/)dbt$/.test(w)));
  return words.slice(from).find((w) => SUBCOMMANDS.has(w)) ?? null;
}

export function readRunResults(file: string): LegacyRun {
  const doc = readJsonDocument(file, 'run_results.json');
  return parseRunResults(doc, file);
}

export function parseRunResults(doc: unknown, file: string): LegacyRun {
  if (!isObj(doc)) throw new InputError('expected a JSON object', file);
  const meta = isObj(doc.metadata) ? doc.metadata : {};
  if (!Array.isArray(doc.results)) throw new InputError('missing results[] (is this a run_results.json?)', file, undefined, 'results');
  const sv = /run-results\/v(\d+)/.exec(String(meta.dbt_schema_version ?? ''));
  const dbtVersion = typeof meta.dbt_version === 'string' ? meta.dbt_version : null;
  const args = isObj(doc.args) ? doc.args : {};
  const raw = typeof args.invocation_command === 'string' ? args.invocation_command : null;
  const which = typeof args.which === 'string' ? args.which : null;
  const results = doc.results.map((r, i) => parseResult(r, file, i));
  return {
    file,
    schemaVersion: sv ? Number(sv[1]) : null,
    dbtVersion,
    engine: dbtVersion?.startsWith('2.') ? 'fusion' : 'dbt-core',
    invocationId: typeof meta.invocation_id === 'string' && meta.invocation_id ? meta.invocation_id : null,
    generatedAt: isoToNs(meta.generated_at),
    startedAt: isoToNs(meta.invocation_started_at),
    elapsedS: typeof doc.elapsed_time === 'number' ? doc.elapsed_time : null,
    command: which ?? commandOf(raw),
    rawCommand: raw,
    args,
    results,
  };
}

function parseResult(r: unknown, file: string, i: number): LegacyResult {
  const field = (f: string) => `results[${i}].${f}`;
  if (!isObj(r)) throw new InputError('expected an object', file, undefined, `results[${i}]`);
  // A 1.5-1.8 failing project hook has no unique_id; the artifact normally drops it, but be lenient.
  const uniqueId = typeof r.unique_id === 'string' && r.unique_id ? r.unique_id : `operation.unknown.result-${i}`;
  if (typeof r.status !== 'string') throw new InputError('status must be a string', file, undefined, field('status'));
  const timing: Timing[] = Array.isArray(r.timing)
    ? r.timing.filter(isObj).map((t) => ({ name: String(t.name ?? ''), start: isoToNs(t.started_at), end: isoToNs(t.completed_at) }))
    : [];
  const ar = isObj(r.adapter_response) ? r.adapter_response : {};
  const rows = typeof ar.rows_affected === 'number' && ar.rows_affected >= 0 ? Math.trunc(ar.rows_affected) : undefined;
  const br = isObj(r.batch_results) && Array.isArray(r.batch_results.failed) ? (r.batch_results.failed as unknown[]) : undefined;
  const out: LegacyResult = {
    uniqueId,
    status: r.status,
    message: typeof r.message === 'string' ? r.message : null,
    timing,
    threadId: typeof r.thread_id === 'string' ? r.thread_id : '',
    executionTime: typeof r.execution_time === 'number' ? r.execution_time : 0,
    failures: typeof r.failures === 'number' ? r.failures : null,
  };
  if (rows !== undefined) out.rowsAffected = rows;
  if (br?.length) out.failedBatches = br.filter(Array.isArray).map((w) => (w as unknown[]).map(String));
  return out;
}
