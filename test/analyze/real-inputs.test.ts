import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spanCriticalPaths, type PhaseCriticalPath } from '../../src/analyze/critical-path.js';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import { migrateFiles } from '../../src/legacy/migrate.js';
import { generate } from '../../src/produce/generate/index.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';
import { FUSION, LEGACY, sample, samplesNote } from '../helpers/samples.js';

const q = async (db: Db, name: string, params: Record<string, string> = {}) => (await runSavedQuery(db, findSavedQuery(name), params)).rows;

/** What holds for any phase's path: links in time order, none waiting a negative time, the last is the phase's last-ending evaluation. */
async function checkPaths(db: Db, paths: PhaseCriticalPath[]): Promise<void> {
  for (const p of paths) {
    for (const [i, l] of p.links.entries()) {
      expect(l.position).toBe(i + 1);
      expect(l.wait_ms).toBeGreaterThanOrEqual(0);
      if (i > 0) expect(l.start_ms).toBeGreaterThanOrEqual(p.links[i - 1]!.start_ms + p.links[i - 1]!.duration_ms - 0.001);
    }
    const last = p.links[p.links.length - 1]!;
    const latest = await db.scalar<string>(
      `SELECT max(e.end_ns)::VARCHAR FROM spans e JOIN spans ph ON ph.trace_id = e.trace_id AND ph.span_id = e.parent_span_id
       WHERE e.trace_id = $t AND e.kind = 'node_evaluated' AND e.ended AND ph.phase IS NOT DISTINCT FROM $p AND ph.kind = 'phase'`,
      { t: p.trace_id, p: p.phase },
    );
    const lastEnd = await db.scalar<string>('SELECT end_ns::VARCHAR FROM spans WHERE trace_id = $t AND span_id = $s', { t: p.trace_id, s: last.span_id });
    expect(lastEnd).toBe(latest);
  }
}

const fusion = samplesNote(FUSION);
describe.skipIf(fusion.missing)(fusion.title('history and critical path of the real engine runs'), () => {
  let db: Db;
  const T120 = '019c97cafe1c76e2abb150e9427e666a';
  beforeAll(async () => {
    db = await openModel();
    await loadPaths(db, [FUSION]);
  });
  afterAll(() => db?.close());

  it('node-trends follows a model across the three build runs', async () => {
    const rows = await q(db, 'node-trends');
    const stg = rows.find((r) => r.unique_id === 'model.jaffle_shop.stg_orders')!;
    expect(stg).toMatchObject({ command: 'build', runs_seen: 3, median_ms: 4454.017, last_ms: 5380, ratio: 1.21, regressed: false, trend: '▇▇█', last_trace: T120 });
    expect((await q(db, 'node-trends', { threshold: '20' })).find((r) => r.unique_id === 'model.jaffle_shop.stg_orders')!.regressed).toBe(true);
  });

  it('flaky-tests and failure-history find the unit test that errored in the last run only', async () => {
    expect((await q(db, 'flaky-tests')).length).toBe(0);
    const flips = await q(db, 'flaky-tests', { min_flips: '1' });
    expect(flips.map((r) => [r.unique_id, r.history, r.last_changed_trace])).toEqual([
      ['unit_test.jaffle_shop.stg_locations.test_does_location_opened_at_trunc_to_date', '✓✓E', T120],
    ]);
    const fails = await q(db, 'failure-history');
    expect(fails.map((r) => [r.unique_id, r.errors, r.tests_failed])).toEqual([
      ['test.jaffle_shop.accepted_values_customers_customer_type__new__returning.d299a3800c', 0, 1],
      ['unit_test.jaffle_shop.stg_locations.test_does_location_opened_at_trunc_to_date', 1, 0],
    ]);
    expect(fails[1]!.last_failure).toMatch(/^Unexpected internal error: Timestamp\(Nanosecond, None\) is not supported/);
    expect(fails[0]!.last_failure).toBe('test failed: 2 failing rows');
  });

  it('the run phase of preview.120 is the chain of seeds, models and their tests', async () => {
    const paths = await spanCriticalPaths(db, T120);
    const run = paths.find((p) => p.phase === 'run')!;
    expect(run.links.map((l) => l.unique_id)).toEqual([
      'seed.jaffle_shop.raw_items', 'model.jaffle_shop.stg_order_items', 'test.jaffle_shop.unique_stg_order_items_order_item_id.90e333a108',
      'model.jaffle_shop.order_items', 'test.jaffle_shop.not_null_order_items_order_item_id.c6fda366bd', 'model.jaffle_shop.orders',
      'test.jaffle_shop.not_null_orders_order_id.cf6c17daed', 'model.jaffle_shop.customers',
      'test.jaffle_shop.dbt_utils_expression_is_true_c_177c20685a18a9071d4a71719e3d9565.f4af5cb280',
    ]);
    expect(paths.map((p) => p.phase)).toEqual(['render', 'analyze', 'run']);
    await checkPaths(db, await spanCriticalPaths(db));
  });
});

const legacy = samplesNote(LEGACY);
describe.skipIf(legacy.missing)(legacy.title('history and critical path of migrated older-engine runs'), () => {
  const dir = tempDir('runlens-real-legacy-');
  let db: Db;
  beforeAll(async () => {
    const out = path.join(dir, 'legacy.jsonl');
    const files = readdirSync(LEGACY).filter((f) => /\.(json|jsonl)$/.test(f)).map((f) => sample(LEGACY, f));
    await migrateFiles(files, { out });
    db = await openModel();
    await loadPaths(db, [out]);
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('failure-history names the errors of the older engine with their text', async () => {
    const rows = await q(db, 'failure-history');
    const orders = rows.find((r) => r.command === 'run' && r.unique_id === 'model.jaffle_shop.orders')!;
    expect(orders).toMatchObject({ errors: 1, last_result: 'error' });
    expect(String(orders.last_failure)).toContain('orders');
    expect(rows.some((r) => r.command === 'test' && r.tests_failed === 1)).toBe(true);
    // the runs of build from several versions form one history
    expect((await q(db, 'node-trends', { command: 'build' })).length).toBeGreaterThan(50);
  });

  it('every migrated run has a critical path in each phase with node evaluations', async () => {
    const paths = await spanCriticalPaths(db);
    const runs = await db.scalar<number>(`SELECT count(DISTINCT trace_id)::INTEGER FROM spans WHERE kind = 'node_evaluated'`);
    expect(new Set(paths.map((p) => p.trace_id)).size).toBe(runs);
    await checkPaths(db, paths);
  });
});

describe('history of generated runs', () => {
  it('failure-history counts what the generator reports, run by run', async () => {
    const dir = tempDir('runlens-real-gen-');
    const db = await openModel();
    try {
      const out = path.join(dir, 'g.jsonl');
      const g = await generate({ output: out, runs: 12, nodes: 120, seed: 21, failRate: 0.06 });
      await loadPaths(db, [out]);
      const rows = await q(db, 'failure-history', { runs: '12' });
      const sum = (k: string) => rows.reduce((s, r) => s + Number(r[k]), 0);
      expect(sum('errors')).toBe(g.runs.reduce((s, r) => s + r.errors, 0));
      expect(sum('tests_failed')).toBe(g.runs.reduce((s, r) => s + r.failedTests, 0));
      // the last five runs only
      const recent = await q(db, 'failure-history', { runs: '5' });
      expect(recent.reduce((s, r) => s + Number(r.errors), 0)).toBe(g.runs.slice(-5).reduce((s, r) => s + r.errors, 0));
      expect((await q(db, 'node-trends', { runs: '5' })).every((r) => Number(r.runs_seen) <= 5)).toBe(true);
      const flaky = await q(db, 'flaky-tests', { min_flips: '1' });
      expect(flaky.length).toBeGreaterThan(0);
      for (const r of flaky) {
        const h = [...String(r.history)];
        expect(h.length).toBe(r.runs_seen);
        expect(h.slice(1).filter((x, i) => (x === '✓') !== (h[i] === '✓')).length).toBe(r.flips);
      }
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
