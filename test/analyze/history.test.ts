import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import type { NodeResult } from '../../src/produce/node-attrs.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';
import { testResult, writeRuns, type EvalSpec, type RunSpec } from './make-runs.js';

/**
 * Five `build` runs and two `test` runs of a small project, an hour apart, whose outcomes and
 * durations per run are chosen to give known flips, trends and failures.
 */
const ERR = (text: string): NodeResult => ({ outcome: 'error', errorMessage: text });
const SKIP: NodeResult = { outcome: 'skipped', skipReason: 'upstream', upstreamUniqueId: 'model.p.err' };

const FLAPPY = ['passed', 'failed', 'passed', 'warned', 'passed'] as const;
const ONCE = ['passed', 'passed', 'passed', 'passed', 'failed'] as const;
const UNIT: NodeResult[] = [{ outcome: 'success' }, ERR('boom unit 2'), { outcome: 'success' }, SKIP, ERR('boom unit 4')];
const SLOW_MS = [100, 100, 110, 90, 300];
const ERRS: (string | null)[] = [null, 'boom model 2', null, 'boom model 4', null];

function buildRun(i: number): RunSpec {
  let t = 0;
  const next = (id: string, ms: number, result?: NodeResult): EvalSpec => {
    const e = { id, start: t, end: t + ms, result };
    t += ms + 1;
    return e;
  };
  const evals = [
    next('model.p.slow', SLOW_MS[i]!),
    next('model.p.err', 20, ERRS[i] ? ERR(ERRS[i]!) : undefined),
    next('test.p.flappy', 5, testResult(FLAPPY[i]!)),
    next('test.p.steady', 5, testResult('passed')),
    next('test.p.once', 5, testResult(ONCE[i]!)),
    next('unit_test.p.ut', 5, UNIT[i]),
  ];
  return { command: 'build', at: i * 3_600_000, phases: [{ phase: 'run', start: 0, end: t, evals }] };
}

function testRun(i: number, outcome: 'passed' | 'failed'): RunSpec {
  return { command: 'test', at: i * 3_600_000 + 60_000, phases: [{ phase: 'run', start: 0, end: 10, evals: [{ id: 'test.p.flappy', start: 1, end: 6, result: testResult(outcome) }] }] };
}

describe('history queries over hand-made runs', () => {
  const dir = tempDir('runlens-history-');
  let db: Db;
  let traces: string[];
  const q = async (name: string, params: Record<string, string> = {}) => (await runSavedQuery(db, findSavedQuery(name), params)).rows;

  beforeAll(async () => {
    const w = await writeRuns(dir, 'runs.jsonl', [0, 1, 2, 3, 4].map(buildRun));
    const t = await writeRuns(dir, 'test-runs.jsonl', [testRun(1, 'failed'), testRun(2, 'passed')], 8);
    traces = w.traces;
    db = await openModel();
    await loadPaths(db, [w.file, t.file]);
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('flaky-tests counts flips between passing and not passing, per command', async () => {
    const rows = await q('flaky-tests');
    expect(rows.map((r) => [r.command, r.unique_id, r.runs_seen, r.flips, r.failure_pct, r.last_outcome, r.history])).toEqual([
      ['build', 'test.p.flappy', 5, 4, 40, 'passed', '✓✗✓!✓'],
      // the skipped run says nothing: four outcomes, three flips
      ['build', 'unit_test.p.ut', 4, 3, 50, 'error', '✓E✓E'],
    ]);
    expect(rows[0]!.last_changed_trace).toBe(traces[4]);
    expect(rows[0]!.last_changed_at).toBe('2026-03-02T13:00:00.000Z');
    expect(rows[1]!.last_changed_trace).toBe(traces[4]);
  });

  it('flaky-tests honours min_flips, runs and command', async () => {
    const once = await q('flaky-tests', { min_flips: '1' });
    expect(once.map((r) => [r.command, r.unique_id, r.flips])).toEqual([
      ['build', 'test.p.flappy', 4],
      ['build', 'unit_test.p.ut', 3],
      // equal flips: the higher failure rate first
      ['test', 'test.p.flappy', 1],
      ['build', 'test.p.once', 1],
    ]);
    // the last two build runs: warned then passed
    const recent = await q('flaky-tests', { runs: '2', min_flips: '1', command: 'build' });
    expect(recent.map((r) => [r.unique_id, r.runs_seen, r.flips, r.history])).toEqual([
      ['test.p.flappy', 2, 1, '!✓'],
      ['test.p.once', 2, 1, '✓✗'],
    ]);
    // a command no run has is a typo, not "no flaky tests"
    await expect(q('flaky-tests', { command: 'seed' })).rejects.toThrow(/--param command: no run of command "seed" in the input \(its runs' commands: build, test\)/);
  });

  it('node-trends gives median, p95, last and ratio, flags regressions and draws a sparkline', async () => {
    const rows = await q('node-trends', { command: 'build' });
    const slow = rows.find((r) => r.unique_id === 'model.p.slow')!;
    expect(slow).toMatchObject({
      command: 'build', resource_type: 'model', runs_seen: 5, median_ms: 100, p95_ms: 262, last_ms: 300, ratio: 3, regressed: true,
      trend: '▃▃▃▃█', last_trace: traces[4],
    });
    // it regressed most, so it comes first; the errored model's two failed runs are not durations
    expect(rows[0]!.unique_id).toBe('model.p.slow');
    expect(rows.find((r) => r.unique_id === 'model.p.err')!.runs_seen).toBe(3);
    expect(rows.filter((r) => r.regressed).map((r) => r.unique_id)).toEqual(['model.p.slow']);
    // a higher threshold clears the flag; min_ms leaves out the fast nodes
    expect((await q('node-trends', { threshold: '250' })).some((r) => r.regressed)).toBe(false);
    expect((await q('node-trends', { min_ms: '50' })).map((r) => r.unique_id)).toEqual(['model.p.slow']);
  });

  it('failure-history counts errors and failed tests with the last failure text', async () => {
    const rows = await q('failure-history');
    const by = Object.fromEntries(rows.map((r) => [`${r.command} ${r.unique_id}`, r]));
    expect(Object.keys(by).sort()).toEqual(['build model.p.err', 'build test.p.flappy', 'build test.p.once', 'build unit_test.p.ut', 'test test.p.flappy']);
    expect(by['build model.p.err']).toMatchObject({ runs_seen: 5, errors: 2, tests_failed: 0, failure_pct: 40, last_failure: 'boom model 4', last_failed_trace: traces[3], last_result: 'success' });
    expect(by['build unit_test.p.ut']).toMatchObject({ errors: 2, last_failure: 'boom unit 4', last_result: 'error' });
    expect(by['build test.p.once']).toMatchObject({ errors: 0, tests_failed: 1, last_failure: 'test failed: 3 failing rows', last_failed_trace: traces[4] });
    expect(by['build test.p.flappy']).toMatchObject({ tests_failed: 1, failure_pct: 20, last_failed_trace: traces[1] });
    // most failures first
    expect(rows[0]!.errors as number + (rows[0]!.tests_failed as number)).toBe(2);
  });
});

describe('a history query for a command no run has', () => {
  it('is exit 2 naming the commands there are, not an empty answer', async () => {
    const { runCli } = await import('../helpers/cli.js');
    const { ROOT } = await import('../helpers/samples.js');
    const twoRuns = `${ROOT}/samples/two-runs.jsonl`;
    for (const q of ['flaky-tests', 'node-trends', 'failure-history']) {
      const r = runCli(['query', q, twoRuns, '--param', 'command=BUILD']);
      expect(r.code, q).toBe(2);
      expect(r.stderr, q).toContain('--param command: no run of command "BUILD" in the input (its runs\' commands: build)');
    }
    expect(runCli(['query', 'flaky-tests', twoRuns, '--param', 'command=build']).code).toBe(0);
  });
});
