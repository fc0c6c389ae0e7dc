/** The gate's evaluation on the model: counts are complete in SQL, listings bounded, one run selectable. */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderText } from '../../src/gate/reporters.js';
import { DEFAULT_FAIL_ON, evaluateGate } from '../../src/gate/rules.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { ROOT } from '../helpers/samples.js';

describe('evaluateGate on the bundled runs', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openModel();
    await loadPaths(db, [path.join(ROOT, 'samples/failed-build.jsonl'), path.join(ROOT, 'samples/two-runs.jsonl')]);
  });
  afterAll(() => db.close());

  it('counts every offender while listing at most listLimit, and says how many are not listed', async () => {
    const all = await evaluateGate(db, { failOn: DEFAULT_FAIL_ON });
    expect(all.offenderCount).toBe(all.offenders.length);
    const few = await evaluateGate(db, { failOn: DEFAULT_FAIL_ON, listLimit: 1 });
    expect(few.counts).toEqual(all.counts);
    expect(few.offenderCount).toBe(all.offenderCount);
    expect(few.offenders).toEqual(all.offenders.slice(0, 1));
    expect(renderText(few)).toContain(`… and ${all.offenderCount - 1} more node results that fail the gate`);
  });

  it('one run by trace id; each run, in the order they started, says whether it passed', async () => {
    const all = await evaluateGate(db, { failOn: DEFAULT_FAIL_ON });
    expect(all.runs.map((r) => [r.trace_id, r.passed, r.rule])).toEqual([
      ['019cadc69a8070478b3123ec7e6afa5b', false, 'run-error'],
      ['019cadc69a807cfa896ce3e6f5472743', false, 'run-error'],
      ['019caf103180704fba46ccb362cf3593', true, null],
    ]);
    const one = await evaluateGate(db, { failOn: DEFAULT_FAIL_ON, traceId: '019caf103180704fba46ccb362cf3593' });
    expect(one.passed).toBe(true);
    expect(one.runs).toHaveLength(1);
    expect(one.nodeResults).toBe(36);
  });

  it('no rule of --fail-on matches: nothing offends, and every run passes', async () => {
    const none = await evaluateGate(db, { failOn: ['canceled'] });
    expect(none).toMatchObject({ passed: true, offenderCount: 0, offenders: [], counts: { canceled: 0 } });
  });
});
