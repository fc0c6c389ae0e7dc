/** The explorer's filter keeps every matching span, however many a trace holds. */
import { describe, expect, it } from 'vitest';
import { filterPositions, searchPositions, type TreeShape } from '../../src/analyze/explore/tree-index.js';
import { openModel } from '../../src/store/open.js';

describe('tree filters on a large trace', () => {
  it('return every matching position, past 200,000', async () => {
    const db = await openModel();
    const n = 300_000;
    // A hand-made tree table: every third span a failed test; no sample holds a trace this large.
    await db.run(`CREATE TEMP TABLE big_tree AS
      SELECT range::INTEGER AS pos, 'model.p.m' || range AS unique_id, 'n' || range AS name, 'run' AS phase, 'test' AS resource_type,
             NULL::VARCHAR AS node_outcome, CASE WHEN range % 3 = 0 THEN 'failed' ELSE 'passed' END AS test_outcome,
             NULL::INTEGER AS status_code, true AS ended
      FROM range(${n})`);
    const shape = { table: 'big_tree', count: n } as TreeShape;
    const failed = await filterPositions(db, shape, { outcome: 'failed' });
    expect(failed.length).toBe(n / 3);
    expect(failed[failed.length - 1]).toBe(n - 3);
    expect((await filterPositions(db, shape, { phase: 'run' })).length).toBe(n);
    expect((await searchPositions(db, shape, 'model.p')).length).toBe(n);
    db.close();
  });
});
