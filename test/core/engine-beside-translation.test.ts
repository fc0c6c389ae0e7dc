/**
 * The engine writes its own run_results.json in target/, beside target/metadata/otel.parquet, with
 * the invocation id its telemetry uses as trace id. `runlens load target logs` reads all three: the
 * run is the engine's telemetry, and the translation of its run_results.json must not add a second
 * invocation, other node spans and another run window to it.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import type { Db } from '../../src/store/db.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

const dir = tempDir();
const FAILED_JSONL = path.join(ROOT, 'samples/failed-build.jsonl');
const FAILED_PARQUET = path.join(ROOT, 'samples/failed-build.parquet');

interface NodeResult { unique_id: string; node_outcome: string | null; test_outcome: string | null; failing_rows: number | null; start_ns: string; end_ns: string; error_text: string | null }

const iso = (ns: string) => new Date(Number(BigInt(ns) / 1_000_000n)).toISOString();

/** A run_results.json (schema v6) of the sample's invocation, as the engine writes it beside its telemetry. */
async function engineRunResults(): Promise<string> {
  const db = await openModel();
  try {
    await loadPaths(db, [FAILED_JSONL]);
    const run = (await db.one<{ invocation_id: string; start_ns: string; end_ns: string }>('SELECT invocation_id, start_ns::VARCHAR AS start_ns, end_ns::VARCHAR AS end_ns FROM runs'))!;
    const nodes = await db.all<NodeResult>(
      'SELECT unique_id, node_outcome, test_outcome, failing_rows, start_ns::VARCHAR AS start_ns, end_ns::VARCHAR AS end_ns, error_text FROM node_results',
    );
    const status = (n: NodeResult) =>
      n.node_outcome === 'error' ? 'error' : n.node_outcome === 'skipped' ? 'skipped' : n.test_outcome === 'failed' ? 'fail' : n.test_outcome === 'passed' ? 'pass' : 'success';
    const doc = {
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json', dbt_version: '2.0.0-preview.120', generated_at: iso(run.end_ns), invocation_id: run.invocation_id, env: {} },
      results: nodes.map((n) => ({
        unique_id: n.unique_id, status: status(n), thread_id: 'Thread-1', execution_time: Number(BigInt(n.end_ns) - BigInt(n.start_ns)) / 1e9,
        timing: [{ name: 'execute', started_at: iso(n.start_ns), completed_at: iso(n.end_ns) }], message: n.error_text, failures: n.failing_rows, adapter_response: {},
      })),
      elapsed_time: Number(BigInt(run.end_ns) - BigInt(run.start_ns)) / 1e9,
      args: { which: 'build' },
    };
    const file = path.join(dir, 'run_results.json');
    writeFileSync(file, JSON.stringify(doc));
    return file;
  } finally {
    db.close();
  }
}

const facts = (db: Db) =>
  db.one(`SELECT (SELECT count(*) FROM spans)::INT AS spans, (SELECT count(*) FROM node_results)::INT AS node_results,
                 (SELECT count(*) FROM spans WHERE kind = 'invocation')::INT AS invocations,
                 (SELECT start_ns::VARCHAR || '..' || end_ns::VARCHAR FROM runs) AS window,
                 (SELECT string_agg(unique_id || '=' || duration_ms::VARCHAR, ',' ORDER BY unique_id) FROM node_results) AS durations`);

describe("the engine's telemetry beside its own run_results.json", () => {
  it('`load target logs` of a project holds the run once, as the telemetry says it', async () => {
    const rr = await engineRunResults();
    const project = path.join(dir, 'project');
    mkdirSync(path.join(project, 'logs'), { recursive: true });
    mkdirSync(path.join(project, 'target', 'metadata'), { recursive: true });
    copyFileSync(FAILED_JSONL, path.join(project, 'logs', 'otel.jsonl'));
    copyFileSync(FAILED_PARQUET, path.join(project, 'target', 'metadata', 'otel.parquet'));
    copyFileSync(rr, path.join(project, 'target', 'run_results.json'));
    const alone = await openModel();
    const all = await openModel();
    try {
      await loadPaths(alone, [FAILED_JSONL]);
      const want = await facts(alone);
      expect(want).toMatchObject({ invocations: 1 });
      const report = await loadPaths(all, [path.join(project, 'target'), path.join(project, 'logs')]);
      expect(await facts(all)).toEqual(want);
      const translated = report.files.find((f) => f.path.endsWith('run_results.json'))!;
      expect(translated).toMatchObject({ records: 0, setAside: expect.any(Number) as number });
      expect(translated.setAside).toBeGreaterThan(0);
    } finally {
      alone.close();
      all.close();
    }
  });

  it('in either order, across loads into one --db, and says so', async () => {
    const rr = await engineRunResults();
    const db = path.join(dir, 'rr-first.duckdb');
    expect(runCli(['load', rr, '--db', db]).code).toBe(0);
    const second = runCli(['load', FAILED_JSONL, '--db', db]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/set aside/);
    const runs = JSON.parse(runCli(['runs', '--db', db, '--format', 'json']).stdout) as unknown[];
    const alone = JSON.parse(runCli(['runs', FAILED_JSONL, '--format', 'json']).stdout) as unknown[];
    expect(runs).toEqual(alone);
    const slowest = runCli(['query', 'slowest-nodes', '--db', db, '--format', 'csv']).stdout;
    expect(slowest).toBe(runCli(['query', 'slowest-nodes', FAILED_JSONL, '--format', 'csv']).stdout);
    const third = runCli(['load', rr, '--db', db]);
    expect(third.code).toBe(0);
    expect(runCli(['runs', '--db', db, '--format', 'json']).stdout).toBe(JSON.stringify(alone, null, 2) + '\n');
  });
});
