/** upstream-skip-chains follows every chain to its root cause, however long. */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';
import { writeRuns, type EvalSpec } from './make-runs.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const id = (i: number) => `model.p.m${String(i).padStart(4, '0')}`;

describe('upstream-skip-chains', () => {
  it('leads every node of a 1,205-long chain, and a branch off it, to the node that errored', async () => {
    const n = 1205;
    const evals: EvalSpec[] = [{ id: id(0), start: 0, end: 1, result: { outcome: 'error', errorMessage: 'boom' } }];
    for (let i = 1; i < n; i++) evals.push({ id: id(i), start: 1 + i * 0.01, end: 1 + i * 0.01, result: { outcome: 'skipped', upstreamUniqueId: id(i - 1) } });
    evals.push({ id: 'model.p.b1', start: 30, end: 30, result: { outcome: 'skipped', upstreamUniqueId: id(5) } });
    evals.push({ id: 'model.p.b2', start: 30, end: 30, result: { outcome: 'skipped', upstreamUniqueId: 'model.p.b1' } });
    const { file } = await writeRuns(dir, 'long-chain.jsonl', [{ at: 0, phases: [{ phase: 'run', start: 0, end: 40, evals }] }]);
    const db = await openModel();
    try {
      await loadPaths(db, [file]);
      const rows = (await runSavedQuery(db, findSavedQuery('upstream-skip-chains'))).rows as { unique_id: string; chain_length: number; chain: string; root_cause: string; root_cause_outcome: string }[];
      expect(rows).toHaveLength(n + 1);
      const by = new Map(rows.map((r) => [r.unique_id, r]));
      for (const i of [1, 2, 999, 1000, 1001, 1002, n - 1]) {
        expect(by.get(id(i)), id(i)).toMatchObject({ chain_length: i, root_cause: id(0), root_cause_outcome: 'error' });
      }
      expect(by.get(id(3))!.chain).toBe([id(2), id(1), id(0)].join(' -> '));
      expect(by.get('model.p.b2')).toMatchObject({ chain_length: 7, chain: ['model.p.b1', id(5), id(4), id(3), id(2), id(1), id(0)].join(' -> '), root_cause: id(0) });
    } finally {
      db.close();
    }
  });

  it('ends a chain whose upstream ids go round in a cycle, and says so', async () => {
    const evals: EvalSpec[] = [
      { id: 'model.p.a', start: 0, end: 1, result: { outcome: 'skipped', upstreamUniqueId: 'model.p.b' } },
      { id: 'model.p.b', start: 0, end: 1, result: { outcome: 'skipped', upstreamUniqueId: 'model.p.a' } },
      { id: 'model.p.c', start: 0, end: 1, result: { outcome: 'skipped', upstreamUniqueId: 'model.p.a' } },
    ];
    const { file } = await writeRuns(dir, 'cycle.jsonl', [{ at: 0, phases: [{ phase: 'run', start: 0, end: 2, evals }] }]);
    const db = await openModel();
    try {
      await loadPaths(db, [file]);
      const rows = (await runSavedQuery(db, findSavedQuery('upstream-skip-chains'))).rows as { unique_id: string; chain: string; note: string | null }[];
      expect(rows.map((r) => [r.unique_id, r.chain, r.note])).toEqual([
        ['model.p.a', 'model.p.b -> model.p.a', 'the upstream ids form a cycle'],
        ['model.p.b', 'model.p.a -> model.p.b', 'the upstream ids form a cycle'],
        ['model.p.c', 'model.p.a -> model.p.b', 'the upstream ids form a cycle'],
      ]);
    } finally {
      db.close();
    }
  });
});
