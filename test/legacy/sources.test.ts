/**
 * sources.json (dbt source freshness, hand-written in the shape of schema v3, legacy.md §1.7): each
 * source a node of resource type source with its freshness outcome through the status table, the
 * saved query source-freshness, and the gate (freshness errors fail it; warnings with
 * --fail-on freshness-warned). Read in place and after migrate (JSONL and Parquet).
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import { DEFAULT_FAIL_ON, evaluateGate } from '../../src/gate/rules.js';
import { migrateFiles } from '../../src/legacy/migrate.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { closeReadModels, readInPlace, writeJson } from './helpers.js';

const T = (s: number) => new Date(Date.UTC(2026, 0, 5, 10, 0, 0) + s * 1000).toISOString().replace('Z', '000Z');
const criteria = { warn_after: { count: 12, period: 'hour' }, error_after: { count: 2, period: 'day' }, filter: null };

function measured(id: string, status: string, ageS: number, at: number) {
  return {
    unique_id: id, max_loaded_at: new Date(Date.UTC(2026, 0, 5, 10, 0, at) - ageS * 1000).toISOString().replace('Z', '+00:00'),
    snapshotted_at: T(at).replace('Z', '+00:00'), max_loaded_at_time_ago_in_s: ageS, status, criteria, adapter_response: {},
    timing: [{ name: 'compile', started_at: T(at), completed_at: T(at + 0.1) }, { name: 'execute', started_at: T(at + 0.1), completed_at: T(at + 0.5) }],
    thread_id: 'Thread-1', execution_time: 0.5,
  };
}

function sourcesJson(results: object[]) {
  return {
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/sources/v3.json', dbt_version: '1.8.2', generated_at: T(10), invocation_id: '2a6d4c8e-1f2a-4b3c-9d8e-7f6a5b4c3d2e', env: {} },
    results, elapsed_time: 9.5,
  };
}

const ALL = sourcesJson([
  measured('source.p.raw.orders', 'pass', 3601, 1),
  measured('source.p.raw.customers', 'warn', 90002, 2),
  measured('source.p.raw.payments', 'error', 522003, 3),
  { unique_id: 'source.p.raw.events', error: 'Database Error\n  relation "raw.events" does not exist', status: 'runtime error' },
]);

const read = readInPlace;
afterAll(closeReadModels);

describe('sources.json (source freshness)', () => {
  const file = writeJson('sources.json', ALL);

  it.each(['in place', 'migrated to JSONL', 'migrated to Parquet'])('each source is a node with its freshness outcome, and the saved query shows it (%s)', async (how) => {
    let input = file;
    if (how !== 'in place') {
      input = path.join(tempDir(), how.endsWith('Parquet') ? 'out.parquet' : 'out.jsonl');
      const r = await migrateFiles([file], { out: input });
      expect(r.files[0]).toMatchObject({ kind: 'sources', command: 'freshness', nodes: 4, outcomes: { success: 3, error: 1 }, freshness: { passed: 1, warned: 1, failed: 1 } });
    }
    const db = await read(input);
    expect(await db.all(`SELECT unique_id, resource_type, node_outcome, freshness_outcome, error_text IS NOT NULL AS has_error FROM node_results ORDER BY unique_id`)).toEqual([
      { unique_id: 'source.p.raw.customers', resource_type: 'source', node_outcome: 'success', freshness_outcome: 'warned', has_error: false },
      { unique_id: 'source.p.raw.events', resource_type: 'source', node_outcome: 'error', freshness_outcome: null, has_error: true },
      { unique_id: 'source.p.raw.orders', resource_type: 'source', node_outcome: 'success', freshness_outcome: 'passed', has_error: false },
      { unique_id: 'source.p.raw.payments', resource_type: 'source', node_outcome: 'success', freshness_outcome: 'failed', has_error: false },
    ]);
    expect(await db.one('SELECT command, raw_command FROM runs')).toEqual({ command: 'freshness', raw_command: null });
    const t = await runSavedQuery(db, findSavedQuery('source-freshness'));
    const rows = t.rows;
    expect(rows.map((r) => [r.source, r.status, r.age_s === null ? null : Number(r.age_s), r.max_loaded_at, r.criteria])).toEqual([
      ['source.p.raw.events', 'runtime error', null, null, null],
      ['source.p.raw.payments', 'error', 522003, '2025-12-30T09:00:00.000+00:00', 'warn after 12 hour, error after 2 day'],
      ['source.p.raw.customers', 'warn', 90002, '2026-01-04T09:00:00.000+00:00', 'warn after 12 hour, error after 2 day'],
      ['source.p.raw.orders', 'pass', 3601, '2026-01-05T09:00:00.000+00:00', 'warn after 12 hour, error after 2 day'],
    ]);
    expect(String(rows[0]!.error_text)).toBe('Database Error\n  relation "raw.events" does not exist');
  });

  it('the gate fails on freshness errors and runtime errors; on warnings only with --fail-on freshness-warned', async () => {
    const db = await read(file);
    const g = await evaluateGate(db, { failOn: DEFAULT_FAIL_ON });
    expect(g.passed).toBe(false);
    expect(g.offenders.map((o) => [o.unique_id, o.rule]).sort()).toEqual([['source.p.raw.events', 'error'], ['source.p.raw.payments', 'error']]);
    // the reason says how stale, as the older engine's freshness line does
    expect(g.offenders.find((o) => o.unique_id === 'source.p.raw.payments')!.reason).toBe(
      'source freshness failed\nsource raw.payments: max_loaded_at 2025-12-30T09:00:00.000+00:00, 522003 s ago (warn after 12 hour, error after 2 day)',
    );
    const warnOnly = await read(writeJson('sources.json', sourcesJson([measured('source.p.raw.orders', 'pass', 10, 1), measured('source.p.raw.customers', 'warn', 90002, 2)])));
    expect((await evaluateGate(warnOnly, { failOn: DEFAULT_FAIL_ON })).passed).toBe(true);
    // runs says the same: failed with a stale source alone (no node error), not with a warning
    const staleOnly = await read(writeJson('sources.json', sourcesJson([measured('source.p.raw.orders', 'pass', 10, 1), measured('source.p.raw.payments', 'error', 522003, 3)])));
    expect((await evaluateGate(staleOnly, { failOn: DEFAULT_FAIL_ON })).passed).toBe(false);
    expect(await staleOnly.one('SELECT error::INT AS error, failed FROM runs')).toEqual({ error: 0, failed: true });
    expect(await warnOnly.scalar('SELECT failed FROM runs')).toBe(false);
    const strict = await evaluateGate(warnOnly, { failOn: [...DEFAULT_FAIL_ON, 'freshness-warned'] });
    expect(strict.offenders.map((o) => [o.unique_id, o.rule])).toEqual([['source.p.raw.customers', 'freshness-warned']]);
  });

  it('from the command line: query source-freshness, gate --fail-on freshness-warned, map-status of a source', () => {
    const q = runCli(['query', 'source-freshness', file, '--format', 'csv']);
    expect(q.code, q.stderr).toBe(0);
    expect(q.stdout.split('\n')[0]).toBe('trace_id,source,status,max_loaded_at,age_s,criteria,error_text');
    const warnOnly = writeJson('sources.json', sourcesJson([measured('source.p.raw.customers', 'warn', 90002, 2)]));
    expect(runCli(['gate', warnOnly]).code).toBe(0);
    const strict = runCli(['gate', warnOnly, '--fail-on', 'test-failed,error,freshness-warned']);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('source.p.raw.customers: freshness warned');
    expect(runCli(['map-status', 'error', '--resource-type', 'source']).stdout).toBe('node_outcome\tsuccess\nskip_reason\t-\ntest_outcome\t-\nfreshness_outcome\tfailed\n');
  });
});
