import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/produce/generate/index.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);

/** Generated files go through the core model (src/store) and come out with the outcomes generate reported. */
describe('generated telemetry in the core model', () => {
  it.each(['jsonl', 'parquet'] as const)('%s: runs, node outcomes and skips match what generate reported', async (format) => {
    const out = join(tmp.dir, `model.${format}`);
    const r = await generate({ output: out, nodes: 150, runs: 2, seed: 21, failRate: 0.06, cacheRate: 0.2 });
    const db = await openModel();
    try {
      const rep = await loadPaths(db, [out]);
      expect(rep.records).toBe(r.records);
      const runs = await db.all(`SELECT trace_id, command, ended, failed FROM runs ORDER BY trace_id`);
      expect(runs).toEqual(r.runs.map((s) => ({ trace_id: s.traceId, command: 'build', ended: true, failed: s.errors + s.failedTests > 0 })).sort((a, b) => a.trace_id.localeCompare(b.trace_id)));
      for (const s of r.runs) {
        const c = await db.one(`SELECT
            count(*) FILTER (WHERE node_outcome = 'error')::INT AS errors,
            count(*) FILTER (WHERE test_outcome = 'failed')::INT AS failed,
            count(*) FILTER (WHERE node_outcome = 'skipped')::INT AS skipped,
            count(*)::INT AS n
          FROM node_results WHERE trace_id = $t`, { t: s.traceId });
        expect(c).toEqual({ errors: s.errors, failed: s.failedTests, skipped: s.skipped, n: 150 });
      }
      expect(await db.scalar(`SELECT count(*)::INT FROM spans WHERE orphan OR NOT ended`)).toBe(0);
      // the second run reuses some models from cache, and ephemeral models are no-ops
      expect(await db.scalar(`SELECT count(*)::INT FROM node_results WHERE skip_reason = 'cached'`)).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});
