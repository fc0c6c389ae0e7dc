/**
 * A run of the older engine that failed as a whole (the command reported failure, e.g. a parse error
 * before any node ran) is a run-error once translated, as the new engine's invocation status says.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';

const dir = tempDir('runlens-gate-legacy-');
const INV = '4d6a2b1c-0e7f-4a8b-9c1d-2e3f4a5b6c7d';

function event(name: string, code: string, level: string, msg: string, data: Record<string, unknown>, ts: string): object {
  return { data, info: { category: '', code, extra: {}, invocation_id: INV, level, msg, name, pid: 7, thread: 'MainThread', ts } };
}

function migrated(name: string, lines: object[]): string {
  const out = path.join(dir, `${name}.telemetry.jsonl`);
  const m = runCli(['migrate', writeLines(dir, `${name}.jsonl`, lines), '-o', out]);
  expect(m.stderr).not.toContain('internal error');
  expect(m.code).toBe(0);
  return out;
}

describe('the older engine: a command that failed is a run-error', () => {
  it('a parse failure before any node ran', () => {
    const out = migrated('parse-error', [
      event('MainReportVersion', 'A001', 'info', 'Running with dbt=1.8.2', { version: '=1.8.2', log_version: 3 }, '2024-11-22T15:58:03.518877Z'),
      event('MainReportArgs', 'A002', 'debug', 'running dbt with arguments', { args: { which: 'build', invocation_command: 'dbt build' } }, '2024-11-22T15:58:03.530592Z'),
      event('MainEncounteredError', 'Z002', 'error', 'Encountered an error:\nParsing Error\n  Invalid model config given in models/x.sql @ line 1', { exc: 'Parsing Error' }, '2024-11-22T15:58:04.100000Z'),
      event('CommandCompleted', 'Q039', 'debug', 'Command `dbt build` failed at 15:58:04.200000 after 0.68 seconds', { command: 'dbt build', success: false, completed_at: '2024-11-22T15:58:04.200000Z', elapsed: 0.68 }, '2024-11-22T15:58:04.200000Z'),
    ]);
    const js = JSON.parse(runCli(['gate', out, '--reporter', 'json']).stdout);
    expect(js.passed).toBe(false);
    expect(js.runs[0].rule).toBe('run-error');
    expect(js.runs[0].reason).toBe(
      'the invocation ended with status ERROR: Command `dbt build` failed at 15:58:04.200000 after 0.68 seconds; no node result was recorded\n'
      + 'Encountered an error:\nParsing Error\n  Invalid model config given in models/x.sql @ line 1',
    );
  });

  it('a command that succeeded passes', () => {
    const out = migrated('ok', [
      event('MainReportVersion', 'A001', 'info', 'Running with dbt=1.8.2', { version: '=1.8.2', log_version: 3 }, '2024-11-22T15:58:03.518877Z'),
      event('CommandCompleted', 'Q039', 'debug', 'Command `dbt build` succeeded at 15:58:04.200000 after 0.68 seconds', { command: 'dbt build', success: true, completed_at: '2024-11-22T15:58:04.200000Z', elapsed: 0.68 }, '2024-11-22T15:58:04.200000Z'),
    ]);
    expect(runCli(['gate', out]).code).toBe(0);
  });
});

const note = samplesNote(LEGACY);
describe.skipIf(note.missing)(note.title("the older engine's real logs"), () => {
  it('a run whose command failed on a model error fails on the node and on the run; a successful one passes', () => {
    const failed = path.join(dir, 'model-error.jsonl');
    expect(runCli(['migrate', sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl'), '-o', failed]).code).toBe(0);
    const js = JSON.parse(runCli(['gate', failed, '--reporter', 'json']).stdout);
    expect(js.counts).toMatchObject({ error: 1, 'run-error': 1 });
    const ok = path.join(dir, 'singular.jsonl');
    expect(runCli(['migrate', sample(LEGACY, 'log_1.10.15_duckdb_singular_tests.jsonl'), '-o', ok]).code).toBe(0);
    expect(runCli(['gate', ok]).code).toBe(0);
  });

  it('a debug stream of 1.5 or later that stops before CommandCompleted is incomplete, though it has the end-of-run summary', () => {
    const lines = readFileSync(sample(LEGACY, 'log_1.10.15_duckdb_singular_tests.jsonl'), 'utf8').split('\n').filter(Boolean);
    const names = lines.map((l) => JSON.parse(l).info.name);
    expect(names).toContain('StatsLine');
    const cut = writeLines(dir, 'singular-no-command-completed.jsonl', lines.filter((_, i) => names[i] !== 'CommandCompleted'));
    const r = runCli(['gate', cut, '--reporter', 'json']);
    expect(r.code).toBe(1);
    const js = JSON.parse(r.stdout);
    expect(js.runs[0].rule).toBe('incomplete');
    expect(js.runs[0].reason).toContain('the invocation never ended (the log ends before the command did');
  });
});

describe('a failed test of the older engine whose failing rows were not recorded', () => {
  // The bundled sample's failed test with `failures` null (as an older engine can write it).
  const target = path.join(dir, 'no-count', 'target');
  mkdirSync(target, { recursive: true });
  copyFileSync('samples/older-engine/target/manifest.json', path.join(target, 'manifest.json'));
  const doc = JSON.parse(readFileSync('samples/older-engine/target/run_results.json', 'utf8'));
  for (const r of doc.results) if (r.status === 'fail') r.failures = null;
  const file = path.join(target, 'run_results.json');
  writeFileSync(file, JSON.stringify(doc));
  const TEST = 'test.shop.not_null_stg_orders_customer_id.5c1d2e3f4a';
  const gate = (reporter: string) => runCli(['gate', file, '--reporter', reporter]);

  it('json: failing_rows null, and the reason says the count was not recorded', () => {
    const r = gate('json');
    expect(r.code).toBe(1);
    const t = JSON.parse(r.stdout).offenders.find((o: { unique_id: string }) => o.unique_id === TEST);
    expect(t).toMatchObject({ rule: 'test-failed', failing_rows: null });
    expect(t.reason).toBe('failing rows not recorded');
  });

  it('text, github, junit and markdown say the test failed without a count', () => {
    for (const reporter of ['text', 'github', 'junit', 'markdown']) {
      const out = gate(reporter).stdout;
      expect(out, reporter).toContain('failing rows not recorded');
      expect(out, reporter).not.toMatch(/0 failing rows/);
    }
    expect(gate('text').stdout).toContain(`${TEST} (models/staging/schema.yml): test failed: failing rows not recorded`);
  });

  it('the failed-tests and failure-history queries show no count either', () => {
    const failed = JSON.parse(runCli(['query', 'failed-tests', file, '--format', 'json']).stdout);
    expect(failed.find((x: { unique_id: string }) => x.unique_id === TEST).failing_rows).toBeNull();
    const hist = JSON.parse(runCli(['query', 'failure-history', file, '--format', 'json']).stdout);
    expect(hist.find((x: { unique_id: string }) => x.unique_id === TEST).last_failure).toBe('test failed (failing rows not recorded)');
  });
});
