/**
 * run_results.json files shaped unlike most: the new engine's (compile and execute timed as one
 * range), a dbt-core run whose only problems are skips, and files that do not say when the run was.
 * Built from real files of ../shared/samples, changed where a test says so.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, SHARED_SAMPLES, samplesNote } from '../helpers/samples.js';

const note = samplesNote(LEGACY);
const dir = tempDir('runlens-odd-rr-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FUSION_RR = path.join(LEGACY, 'rr_v6_FUSION_2.0.0-beta.2_build_skipped.json');
const FAIL_RR = path.join(SHARED_SAMPLES, 'legacy-corpus', 'OpenLineage__OpenLineage__integration_common_tests_dbt_fail_target_run_results.json');

type Doc = { metadata: Record<string, unknown>; elapsed_time?: number; results: Record<string, unknown>[] };
const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Doc;
function write(name: string, doc: Doc): string {
  const f = path.join(dir, name);
  writeFileSync(f, JSON.stringify(doc));
  return f;
}
function sql<T>(q: string, file: string): T[] {
  const r = runCli(['query', '--sql', q, '--format', 'json', file]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T[];
}

describe.skipIf(note.missing)(note.title('run_results.json of odd shapes'), () => {
  it("the new engine's identical compile and execute ranges are one piece of work: a node's duration is its execution_time", () => {
    const doc = read(FUSION_RR);
    const timed = doc.results.filter((r) => (r.timing as unknown[]).length > 0);
    expect(timed.length).toBeGreaterThan(50);
    const got = new Map(sql<{ unique_id: string; duration_ms: number }>('SELECT unique_id, duration_ms FROM node_results', FUSION_RR).map((r) => [r.unique_id, r.duration_ms]));
    // (the node's duration_ms attribute is whole milliseconds, as the engine writes it)
    for (const r of timed) expect(Math.abs(got.get(r.unique_id as string)! - (r.execution_time as number) * 1000), r.unique_id as string).toBeLessThan(1);
  });

  it('a dbt-core run whose only problem is a skipped node failed (the engine exits 1): the gate says run-error', () => {
    const doc = read(FAIL_RR);
    doc.results = doc.results.filter((r) => r.status === 'success');
    expect(doc.results.length).toBeGreaterThan(0);
    doc.results.push({ ...doc.results[0]!, unique_id: 'model.x.skipped_one', status: 'skipped', message: null, timing: [], execution_time: 0 });
    const g = runCli(['gate', write('skipped-only.json', doc)]);
    expect(g.code, g.stdout + g.stderr).toBe(1);
    expect(g.stdout).toMatch(/run-error/);
    // without the skip the same run passes
    doc.results.pop();
    expect(runCli(['gate', write('no-skip.json', doc)]).code).toBe(0);
  });

  it("the new engine's runs are judged by their nodes: its sample with skipped nodes and no failure passes", () => {
    const g = runCli(['gate', FUSION_RR]);
    expect(g.code, g.stdout + g.stderr).toBe(0);
  });

  it('without elapsed_time or timings the run lies before generated_at, and migrate writes valid telemetry', () => {
    const doc = read(FAIL_RR);
    delete doc.elapsed_time;
    for (const r of doc.results) r.timing = [];
    const f = write('no-elapsed.json', doc);
    const [run] = sql<{ start_ns: string; end_ns: string }>('SELECT start_ns::VARCHAR AS start_ns, end_ns::VARCHAR AS end_ns FROM runs', f);
    const generated = BigInt(Date.parse(doc.metadata.generated_at as string));
    expect(BigInt(run!.end_ns) / 1_000_000n <= generated).toBe(true);
    // room for the nodes' execution times end to end before it
    const took = doc.results.reduce((s, r) => s + (r.execution_time as number), 0);
    expect(Number(generated - BigInt(run!.start_ns) / 1_000_000n) / 1000).toBeCloseTo(took, 2);
    const out = path.join(dir, 'no-elapsed.jsonl');
    expect(runCli(['migrate', f, '-o', out]).code).toBe(0);
    const v = runCli(['validate', out]);
    expect(v.code, v.stdout).toBe(0);
  });

  it('a file that says nothing of when the run was (no generated_at, no timings) is an input error naming the field', () => {
    const doc = read(FAIL_RR);
    delete doc.metadata.generated_at;
    for (const r of doc.results) r.timing = [];
    const f = write('no-time.json', doc);
    for (const args of [['runs', f], ['gate', f], ['migrate', f, '-o', path.join(dir, 'no-time.jsonl')]]) {
      const r = runCli(args);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/no-time\.json.*metadata\.generated_at/);
    }
  });

  it('a date the calendar does not have (day 31 of a 30-day month, Feb 29 of a common year, hour 24) is refused naming the field, not read as the next day', () => {
    const doc = read(path.join(SHARED_SAMPLES, 'legacy-corpus', 'yu-iskw__dbt-artifacts-parser__tests_resources_run_results_v5_jaffle_shop_run_results.json'));
    expect(doc.metadata.generated_at).toBe('2023-11-06T00:52:43.487173Z');
    for (const at of ['2023-11-31T00:52:43.487173Z', '2023-02-29T00:52:43.487173Z', '2023-11-06T24:52:43.487173Z', '2023-11-06T00:60:43.487173Z', '2023-13-06T00:52:43.487173Z']) {
      const f = write('impossible.json', { ...doc, metadata: { ...doc.metadata, generated_at: at } });
      for (const args of [['runs', f], ['gate', f], ['migrate', f, '-o', path.join(dir, 'impossible.jsonl')]]) {
        const r = runCli(args);
        expect(r.code, `${at} ${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(`${f}: metadata.generated_at: must be an ISO 8601 timestamp, not "${at}"`);
      }
    }
    // a leap day is a day
    const leap = write('leap.json', { ...doc, metadata: { ...doc.metadata, generated_at: '2024-02-29T00:52:43.487173Z' } });
    expect(runCli(['runs', leap]).code).toBe(0);
  });
});
