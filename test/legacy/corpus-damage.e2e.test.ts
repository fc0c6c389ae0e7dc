/**
 * Files of ../shared/samples/legacy-corpus damaged as they are in practice (a log cut short, a line
 * cut mid-way) or written elsewhere (Windows paths, installed packages, run-operation), read by the
 * commands a CI runs: the gate never passes what it did not see, and names files as they are.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { SHARED_SAMPLES, samplesNote } from '../helpers/samples.js';

const C = path.join(SHARED_SAMPLES, 'legacy-corpus');
const note = samplesNote(C);
const BUILD_LOG = path.join(C, 'OpenLineage__OpenLineage__integration_common_tests_dbt_structured_logs_postgres_build_command_logs_build_logs.jsonl');
const TEST_LOG = path.join(C, 'OpenLineage__OpenLineage__integration_common_tests_dbt_structured_logs_postgres_test_logs_test_logs.jsonl');
const lines = (f: string) => readFileSync(f, 'utf8').split('\n');
const json = (args: string[]) => {
  const r = runCli(args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>[];
};

describe.skipIf(note.missing)(note.title('damaged and foreign older-engine files of the corpus'), () => {
  it('a JSON log cut short is an incomplete run: the gate fails it, runs and tree say it never ended, read in place or migrated', () => {
    const dir = tempDir('runlens-cut-');
    const cut = path.join(dir, 'cut.jsonl');
    writeFileSync(cut, lines(BUILD_LOG).slice(0, 100).join('\n') + '\n');
    const g = runCli(['gate', cut, '--fail-on', 'error,incomplete']);
    expect(g.code, g.stdout + g.stderr).toBe(1);
    expect(g.stdout).toMatch(/incomplete/);
    expect(g.stdout).toContain('the log ends before the command did');
    const sql = ['query', '--sql', 'SELECT ended FROM runs', '--format', 'json'];
    expect(json([...sql, cut])).toEqual([{ ended: false }]);
    expect(runCli(['tree', cut]).stdout).toMatch(/dbt invocation .*NOT ENDED/);
    const out = path.join(dir, 'cut.migrated.jsonl');
    const m = runCli(['migrate', cut, '-o', out]);
    expect(m.code, m.stderr).toBe(0);
    expect(m.stderr + m.stdout).toContain('the log ends before the command did');
    expect(json([...sql, out])).toEqual([{ ended: false }]);
    expect(runCli(['gate', out, '--fail-on', 'error,incomplete']).code).toBe(1);
    // the whole log still ends
    expect(json([...sql, BUILD_LOG])).toEqual([{ ended: true }]);
  });
  it('a damaged line of a JSON log is malformed input (file:line, exit 2); with --lenient the test takes its result line\'s outcome and a pass is refused', () => {
    const dir = tempDir('runlens-broken-');
    const broken = path.join(dir, 'broken.jsonl');
    const all = lines(TEST_LOG);
    // line 65: the failing test's NodeFinished, its end cut off (line 64, LogTestResult, says it failed)
    expect(all[63]).toContain('"LogTestResult"');
    expect(all[64]).toContain('"NodeFinished"');
    writeFileSync(broken, all.map((l, i) => (i === 64 ? l.slice(0, -40) : l)).join('\n'));
    const g = runCli(['gate', broken, '--fail-on', 'test-failed,error']);
    expect(g.code, g.stdout + g.stderr).toBe(2);
    expect(g.stderr).toContain(`${broken}:65: malformed JSON`);
    for (const name of ['out.jsonl', 'out.parquet']) {
      const out = path.join(dir, name);
      const m = runCli(['migrate', broken, '-o', out]);
      expect(m.code, m.stderr).toBe(2);
      expect(m.stderr).toContain(`${broken}:65: malformed JSON`);
      // the records before the damage were written: nothing of them is left to pass for the run
      expect(readdirSync(dir)).toEqual(['broken.jsonl']);
    }
    // --lenient: the failure it can see is reported, the line that was lost is named
    const lenient = runCli(['gate', broken, '--lenient', '--fail-on', 'test-failed,error', '--reporter', 'json']);
    expect(lenient.code, lenient.stderr).toBe(1);
    expect(lenient.stderr).toContain(`${broken}:65:`);
    const failed = JSON.parse(lenient.stdout).offenders.map((n: { unique_id: string; rule: string }) => [n.unique_id, n.rule]);
    expect(failed).toEqual([['test.jaffle_shop.accepted_values_customers_first_name__Jane.21e890a312', 'test-failed']]);
    // a run it would pass, with a line lost, is not passed
    expect(runCli(['gate', broken, '--lenient', '--fail-on', 'error']).code).toBe(2);
  });
  it("a log line's info.ts: any RFC 3339 form is its time; one that is missing or does not parse stops the read naming file, line and field (exit 2)", () => {
    const dir = tempDir('runlens-ts-');
    const all = lines(BUILD_LOG).filter((l) => l);
    const withTs = (name: string, i: number, ts: unknown) => {
      const f = path.join(dir, `${name}.jsonl`);
      writeFileSync(f, all.map((l, j) => {
        if (j !== i) return l;
        const o = JSON.parse(l);
        if (ts === undefined) delete o.info.ts;
        else o.info.ts = ts;
        return JSON.stringify(o);
      }).join('\n') + '\n');
      return f;
    };
    const runsOf = (f: string) => json(['runs', f, '--format', 'json']).map((r) => [r.started_at, r.duration_s]);
    const whole = runsOf(BUILD_LOG);
    expect(whole).toEqual([['2024-12-17T12:53:36.110Z', 25.65]]);
    const first = JSON.parse(all[0]!).info.ts as string;
    expect(first).toBe('2024-12-17T12:53:36.110883Z');
    // lowercase t and z (RFC 3339 allows them) and more than 9 fractional digits (read to the nanosecond)
    for (const [name, ts] of [['lower-t', first.replace('T', 't')], ['lower-z', first.replace('Z', 'z')], ['ten-digits', first.replace('Z', '0001Z')]] as const)
      expect(runsOf(withTs(name, 0, ts)), name).toEqual(whole);
    const refused: [string, number, unknown, string][] = [
      ['garbage', 0, 'garbage', 'info.ts: must be an ISO 8601 timestamp, not "garbage"'],
      ['missing', 0, undefined, 'info.ts: missing'],
      ['number', 0, 1734440016, 'info.ts: must be an ISO 8601 timestamp, not 1734440016'],
      ['day-31', 0, '2024-11-31T12:53:36.110883Z', 'info.ts: must be an ISO 8601 timestamp, not "2024-11-31T12:53:36.110883Z"'],
      ['hour-24', 200, '2024-12-17T24:53:36.110883Z', 'info.ts: must be an ISO 8601 timestamp, not "2024-12-17T24:53:36.110883Z"'],
    ];
    for (const [name, i, ts, why] of refused) {
      const f = withTs(name, i, ts);
      for (const args of [['runs', f], ['gate', f], ['migrate', f, '-o', path.join(dir, `${name}.out.jsonl`)]]) {
        const r = runCli(args);
        expect(r.code, `${name} ${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
        expect(r.stderr, `${name} ${args[0]}`).toContain(`${f}:${i + 1}: ${why}`);
      }
    }
    expect(readdirSync(dir).filter((n) => n.includes('.out.'))).toEqual([]);
    // --lenient: the line is skipped and named; the run keeps the times of its other lines
    const lenient = runCli(['runs', withTs('garbage', 0, 'garbage'), '--lenient', '--format', 'json']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stderr).toContain(':1: info.ts: must be an ISO 8601 timestamp');
    expect(JSON.parse(lenient.stdout)[0].started_at).toMatch(/^2024-12-17T12:53:3/);
  });
  it('a manifest written on Windows gives node files with /, in annotations, junit and relative_path', () => {
    const dir = path.join(tempDir('runlens-win-'), 'win');
    mkdirSync(dir);
    const doc = JSON.parse(readFileSync(path.join(C, 'dbt-labs__segment__docs_run_results.json'), 'utf8'));
    doc.args.which = 'run';
    const uid = doc.results[0].unique_id as string;
    Object.assign(doc.results[0], { status: 'error', message: 'Database Error in model x' });
    writeFileSync(path.join(dir, 'run_results.json'), JSON.stringify(doc));
    writeFileSync(path.join(dir, 'manifest.json'), readFileSync(path.join(C, 'dbt-labs__segment__docs_manifest.json')));
    const rr = path.join(dir, 'run_results.json');
    const gh = runCli(['gate', rr, '--reporter', 'github']);
    expect(gh.code, gh.stderr).toBe(1);
    expect(gh.stdout).toMatch(/::error file=[^,]*\//);
    expect(gh.stdout).not.toContain('\\');
    expect(runCli(['gate', rr, '--reporter', 'junit']).stdout).not.toContain('\\');
    const paths = json(['query', '--sql', 'SELECT DISTINCT relative_path FROM node_results WHERE relative_path IS NOT NULL', rr, '--format', 'json']);
    expect(paths.length).toBeGreaterThan(0);
    for (const r of paths) expect(r.relative_path).not.toContain('\\');
    expect(uid).toBeTruthy();
  });

  it("a node of an installed package is named by its file in the project (the package's root_path under the project's)", () => {
    const rr = path.join(C, 'brooklyn-data__dbt_artifacts__integration_test_project_artifacts_schema_v4_build_run_results.json');
    const rows = json(['query', '--sql', `SELECT unique_id, relative_path FROM node_results WHERE unique_id IN ('model.dbt_artifacts.stg_dbt__tests', 'model.artifacts_integration_tests.incremental') ORDER BY 1`, rr, '--format', 'json']);
    expect(rows).toEqual([
      { unique_id: 'model.artifacts_integration_tests.incremental', relative_path: 'models/incremental.sql' },
      { unique_id: 'model.dbt_artifacts.stg_dbt__tests', relative_path: 'dbt_packages/dbt_artifacts/models/staging/stg_dbt__tests.sql' },
    ]);
  });
  it('a run-operation: the manifest has its macro (under macros), which names its file', () => {
    const rr = path.join(C, 'Augustodalmas__data-enginnering-cs2-stats__dbt_target_run_results.json');
    const r = runCli(['query', '--sql', 'SELECT unique_id, relative_path FROM node_results', rr, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('has none of');
    expect(r.stderr).toContain(`with ${rr.replace(/run_results\.json$/, 'manifest.json')}`);
    expect(JSON.parse(r.stdout)).toEqual([{ unique_id: 'macro.cs2.generate_schema_name', relative_path: 'macros/generate_schema_name.sql' }]);
  });
  it('a result without unique_id is named as the gate names such a node: its resource type and name, no made-up id', () => {
    const dir = tempDir('runlens-noid-');
    const doc = JSON.parse(readFileSync(path.join(C, 'Augustodalmas__data-enginnering-cs2-stats__dbt_target_run_results.json'), 'utf8'));
    Object.assign(doc.results[0], { unique_id: null, status: 'error', message: 'on-run-start failed' });
    const rr = path.join(dir, 'run_results.json');
    writeFileSync(rr, JSON.stringify(doc));
    const g = runCli(['gate', rr, '--fail-on', 'error']);
    expect(g.code, g.stderr).toBe(1);
    expect(g.stdout).toContain('operation results[0] (no unique_id): error: on-run-start failed');
    expect(g.stdout).not.toContain('operation.unknown');
    const js = JSON.parse(runCli(['gate', rr, '--fail-on', 'error', '--reporter', 'json']).stdout);
    expect(js.offenders.map((o: Record<string, unknown>) => [o.unique_id, o.name])).toEqual([[null, 'results[0]']]);
  });
});
