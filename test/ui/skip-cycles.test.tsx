/** `u` and the detail pane on upstream ids that loop: they say so, as upstream-skip-chains does. */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamChain } from '../../src/analyze/explore/span-detail.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';
import { writeRuns, type EvalSpec } from '../analyze/make-runs.js';
import { app, closeLater, KEY } from './helpers.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('upstream skips whose ids loop', () => {
  let db: Db;
  let trace: string;
  beforeAll(async () => {
    const evals: EvalSpec[] = [
      { id: 'model.acme.x', start: 0, end: 1, result: { outcome: 'skipped', upstreamUniqueId: 'model.acme.y' } },
      { id: 'model.acme.y', start: 0, end: 1, result: { outcome: 'skipped', upstreamUniqueId: 'model.acme.x' } },
      { id: 'model.acme.z', start: 0, end: 1, result: { outcome: 'skipped', upstreamUniqueId: 'model.acme.z' } },
    ];
    const { file, traces } = await writeRuns(dir, 'loops.jsonl', [{ at: 0, phases: [{ phase: 'run', start: 0, end: 2, evals }] }]);
    trace = traces[0]!;
    db = await openModel();
    await loadPaths(db, [file]);
  });
  afterAll(() => closeLater(db));

  it('end the chain where an id comes round again, marked a cycle, as the saved query lists it', async () => {
    const x = await upstreamChain(db, trace, 'model.acme.x');
    expect(x.map((l) => [l.unique_id, l.root, l.cycle])).toEqual([['model.acme.y', false, false], ['model.acme.x', false, true]]);
    const z = await upstreamChain(db, trace, 'model.acme.z');
    expect(z.map((l) => [l.unique_id, l.root, l.cycle])).toEqual([['model.acme.z', false, true]]);
  });

  for (const [node, chain] of [['x', 'model.acme.y -> model.acme.x'], ['z', 'model.acme.z']] as const) {
    it(`u on ${node} says the upstream ids form a cycle, and so does its detail`, async () => {
      const t = app(db, 200, 30);
      try {
        await t.until('ok');
        await t.press(KEY.enter);
        await t.until('dbt invocation');
        await t.press('/', ...`model.acme.${node}`, KEY.enter);
        await t.until(/matches \(n\/N\)/);
        const selected = () => t.frame().split('\n').find((l) => l.startsWith('›')) ?? '';
        for (let i = 0; i < 4 && !/Node evaluated.*skipped:upstream/.test(selected()); i++) {
          const before = selected();
          await t.press('n');
          await t.until(() => selected() !== before, 'the next match');
        }
        await t.press('u');
        const f = await t.until(/cycle/, 'the cycle said');
        expect(f).toContain(`no root cause: the upstream ids form a cycle (${chain})`);
        await t.press('d');
        const d = await t.until('upstream chain (no root cause: its ids loop)');
        expect(d).toMatch(/↳ model\.acme\.\w skipped\/upstream  ← the upstream ids form a cycle/);
      } finally {
        t.unmount();
      }
    });
  }
});
