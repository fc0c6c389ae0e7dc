/**
 * Files of ../shared/samples/legacy-corpus damaged as they are in practice (a log cut short, a line
 * cut mid-way) or written elsewhere (Windows paths, installed packages, run-operation), read by the
 * commands a CI runs: the gate never passes what it did not see, and names files as they are.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
});
