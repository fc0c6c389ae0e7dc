/** Migrate inputs into a temp output, check it validates, load it into the model and read outcomes. */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { migrateFiles, type MigrateReport } from '../../src/legacy/migrate.js';
import { validatePaths } from '../../src/produce/validate.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';

export interface NodeRow {
  unique_id: string;
  node_outcome: string | null;
  skip_reason: string | null;
  test_outcome: string | null;
  upstream_unique_id: string | null;
  failing_rows: number | null;
}

/** Outcome triple as compared in the tests: outcome/skip reason/test outcome. */
export const triple = (r: Pick<NodeRow, 'node_outcome' | 'skip_reason' | 'test_outcome'>) => `${r.node_outcome}/${r.skip_reason ?? '-'}/${r.test_outcome ?? '-'}`;

export async function expectValid(out: string): Promise<void> {
  const [rep] = await validatePaths([out]);
  expect(rep!.issues.filter((i) => i.severity === 'violation')).toEqual([]);
  expect(rep!.violations).toBe(0);
}

export async function nodesOf(db: Db): Promise<Map<string, NodeRow>> {
  const rows = (await db.all(
    `SELECT unique_id, node_outcome, skip_reason, test_outcome, upstream_unique_id, failing_rows::INT AS failing_rows FROM node_results ORDER BY unique_id`,
  )) as unknown as NodeRow[];
  return new Map(rows.map((r) => [r.unique_id, r]));
}

export interface Migrated {
  report: MigrateReport;
  out: string;
  db: Db;
  nodes: Map<string, NodeRow>;
}

export async function migrateAndLoad(files: string[], o: { manifest?: string; ext?: 'jsonl' | 'parquet' } = {}): Promise<Migrated> {
  const out = path.join(tempDir('runlens-legacy-'), `out.${o.ext ?? 'jsonl'}`);
  const report = await migrateFiles(files, { out, manifest: o.manifest });
  await expectValid(out);
  const db = await openModel();
  await loadPaths(db, [out]);
  return { report, out, db, nodes: await nodesOf(db) };
}

export function writeJson(name: string, doc: unknown, dir = tempDir('runlens-legacy-in-')): string {
  const p = path.join(dir, name);
  writeFileSync(p, typeof doc === 'string' ? doc : JSON.stringify(doc, null, 2));
  return p;
}

// ---- hand-written run_results.json ----

const T = (s: number) => new Date(Date.UTC(2026, 0, 5, 10, 0, 0) + s * 1000).toISOString().replace('Z', '000Z');

export interface R {
  id: string;
  status: string;
  message?: string | null;
  failures?: number | null;
  /** [compileStart, executeEnd] seconds after 10:00:00; omitted = timing [] (skips) */
  at?: [number, number];
  compileOnly?: boolean;
  extra?: Record<string, unknown>;
}

export function result(r: R): Record<string, unknown> {
  const timing = r.at
    ? r.compileOnly
      ? [{ name: 'compile', started_at: T(r.at[0]), completed_at: T(r.at[1]) }]
      : [
          { name: 'compile', started_at: T(r.at[0]), completed_at: T(r.at[0] + 0.1) },
          { name: 'execute', started_at: T(r.at[0] + 0.1), completed_at: T(r.at[1]) },
        ]
    : [];
  return {
    status: r.status, timing, thread_id: r.at ? 'Thread-1 (worker)' : 'Thread-1', execution_time: r.at ? r.at[1] - r.at[0] : 0,
    adapter_response: {}, message: r.message ?? null, failures: r.failures ?? null, unique_id: r.id,
    compiled: !!r.at, compiled_code: null, relation_name: null, batch_results: null, ...r.extra,
  };
}

export function runResults(o: { results: R[]; which?: string; version?: string; schema?: number; invocationId?: string; elapsed?: number; startedAt?: boolean; args?: Record<string, unknown> }): Record<string, unknown> {
  return {
    metadata: {
      dbt_schema_version: `https://schemas.getdbt.com/dbt/run-results/v${o.schema ?? 6}.json`, dbt_version: o.version ?? '1.12.0',
      generated_at: T(60), invocation_id: o.invocationId ?? '0b6d4c8e-1f2a-4b3c-9d8e-7f6a5b4c3d2e', env: {},
      ...(o.startedAt === false ? {} : { invocation_started_at: T(-1) }),
    },
    results: o.results.map(result),
    elapsed_time: o.elapsed ?? 61,
    args: { which: o.which ?? 'build', invocation_command: `dbt ${o.which ?? 'build'}`, ...o.args },
  };
}

/** A minimal manifest with depends_on edges (child -> parents). */
export function manifest(edges: Record<string, string[]>): Record<string, unknown> {
  const nodes: Record<string, unknown> = {};
  for (const [id, deps] of Object.entries(edges)) nodes[id] = { unique_id: id, resource_type: id.split('.')[0], name: id.split('.')[2], depends_on: { nodes: deps, macros: [] }, config: {} };
  return { metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json' }, nodes, sources: {}, exposures: {} };
}

// ---- what a real file's own statuses say (interface section 2A) ----

/** The interface's table, written out here rather than read from the code under test. */
export function expected(status: string, resourceType: string, message: string | null, materialized = '', command: string | null = null): string {
  const isTest = resourceType === 'test' || resourceType === 'unit_test';
  // compile, docs generate, show: success means compiled, and a test that was only compiled has no outcome
  if (status === 'success' && command !== null && ['compile', 'generate', 'show'].includes(command)) return 'success/-/-';
  if (status === 'success' && materialized === 'ephemeral') return 'skipped/noop/-';
  if (status === 'success' && message === 'NO-OP') return 'skipped/noop/-';
  if (status === 'skipped' && /fail_fast/.test(message ?? '')) return 'canceled/-/-';
  const t: Record<string, string> = {
    success: isTest ? 'success/-/passed' : 'success/-/-', error: 'error/-/-', skipped: 'skipped/upstream/-', 'no-op': 'skipped/noop/-',
    pass: 'success/-/passed', warn: 'success/-/warned', fail: 'success/-/failed',
  };
  return t[status]!;
}

export interface Expect {
  invocationId: string;
  command: string | null;
  nodes: Map<string, string>;
}

export function fromRunResults(file: string): Expect {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map<string, string>();
  const command = doc.args?.which ?? null;
  for (const r of doc.results) nodes.set(r.unique_id, expected(r.status, r.unique_id.split('.')[0], r.message, '', command));
  return { invocationId: doc.metadata.invocation_id, command, nodes };
}

export function fromLog(file: string): Expect {
  const nodes = new Map<string, string>();
  let invocationId = '';
  let command: string | null = null;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { info, data } = JSON.parse(line);
    invocationId ||= info.invocation_id;
    if (info.name === 'MainReportArgs') command = /\bdbt .*?\b(build|run|test|seed|compile)\b/.exec(data.args.invocation_command)?.[1] ?? null;
    if (info.name === 'NodeFinished') {
      const n = data.node_info;
      nodes.set(n.unique_id, expected(data.run_result.status, n.resource_type, data.run_result.message, n.materialized));
    }
  }
  return { invocationId, command, nodes };
}

const readModels: Db[] = [];

/** A file read in place into a fresh in-memory model (closeReadModels closes them all). */
export async function readInPlace(file: string): Promise<Db> {
  const db = await openModel();
  readModels.push(db);
  await loadPaths(db, [file]);
  return db;
}

export function closeReadModels(): void {
  readModels.splice(0).forEach((db) => db.close());
}
