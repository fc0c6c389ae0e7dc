/** The report's history is the runs of its command up to and including the report's run. */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReportData } from '../../src/analyze/report/data.js';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import { generate } from '../../src/produce/generate/index.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir('runlens-report-history-');
const file = path.join(dir, 'r32.jsonl');
let db: Db;
/** the generated runs, oldest first, with their failed tests */
let runs: { trace: string; failedTests: number }[];

beforeAll(async () => {
  const g = await generate({ output: file, runs: 32, nodes: 10, seed: 3 });
  runs = g.runs.map((r) => ({ trace: r.traceId, failedTests: r.failedTests }));
  db = await openModel();
  await loadPaths(db, [file]);
});
afterAll(() => {
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('report --trace an older run', () => {
  it('shows the 30 runs up to it, it last and outlined, and its failures in the failure history', async () => {
    const oldest = runs[0]!;
    expect(oldest.failedTests).toBeGreaterThan(0);
    const h = (await buildReportData(db, { trace: oldest.trace })).history;
    // the oldest run has no run before it: no history to show
    expect(h).toBeNull();

    const at = runs[5]!;
    const five = (await buildReportData(db, { trace: at.trace })).history!;
    expect(five.runs.map((r) => r.trace_id)).toEqual(runs.slice(0, 6).map((r) => r.trace));
    expect(five.runs.filter((r) => r.current).map((r) => r.trace_id)).toEqual([at.trace]);
    // failures of the oldest run, seen from a later one; none of the runs after it
    const failedBefore = (await runSavedQuery(db, findSavedQuery('failure-history'), { command: 'build', until: at.trace })).rows;
    expect(five.failures).toEqual(failedBefore.slice(0, five.failures.length));
    const failedTest = await db.scalar<string>(`SELECT unique_id FROM node_results WHERE trace_id = $t AND test_outcome = 'failed' ORDER BY 1 LIMIT 1`, { t: oldest.trace });
    expect(Number(five.failures.find((f) => f.unique_id === failedTest)?.tests_failed)).toBeGreaterThanOrEqual(1);
    for (const f of five.failures) expect(Number(f.runs_seen)).toBeLessThanOrEqual(6);
  });

  it('with more than 30 runs before it: the 29 before it and it', async () => {
    const last = runs[31]!;
    const h31 = (await buildReportData(db, { trace: runs[30]!.trace })).history!;
    expect(h31.runs.map((r) => r.trace_id)).toEqual(runs.slice(1, 31).map((r) => r.trace));
    expect(h31.runs.at(-1)).toMatchObject({ trace_id: runs[30]!.trace, current: true });
    expect(h31.runs.map((r) => r.trace_id)).not.toContain(last.trace);
  });

  it('the history queries take the run to end at (until), as the CLI does, by prefix', async () => {
    const at = runs[3]!;
    const r = runCli(['query', 'failure-history', file, '--param', `until=${at.trace.slice(0, 12)}`, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as { runs_seen: number }[];
    for (const x of rows) expect(x.runs_seen).toBeLessThanOrEqual(4);
    const nowhere = runCli(['query', 'node-trends', file, '--param', 'until=ffff']);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('no trace ffff');
  });
});
