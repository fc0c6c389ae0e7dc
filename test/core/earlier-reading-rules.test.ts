/**
 * A --db model keeps its records as the runlens that loaded them read them. When this runlens reads
 * telemetry otherwise (a higher READING_RULES), the model's answers may differ from a load of the same
 * files today: every command on such a model says so, and how to be sure.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

const dir = tempDir();
const CLEAN = path.join(ROOT, 'samples/clean-build.jsonl');
const FAILED = path.join(ROOT, 'samples/failed-build.jsonl');
const WARNING = /warning: .*earlier\.duckdb: its records were loaded by an earlier runlens.*load its files into a new model/s;

/**
 * A model as an earlier runlens left it: runlens_meta without reading rules (before they were
 * recorded), or with `rules` (1: before copies of a span that rank alike gave way to the one that says more).
 */
async function earlierModel(rules?: number): Promise<string> {
  const file = path.join(dir, 'earlier.duckdb');
  rmSync(file, { force: true });
  expect(runCli(['load', CLEAN, '--db', file]).code).toBe(0);
  const instance = await DuckDBInstance.create(file);
  const c = await instance.connect();
  await c.run(`DELETE FROM runlens_meta WHERE key = 'reading_rules'`);
  if (rules !== undefined) await c.run(`INSERT INTO runlens_meta VALUES ('reading_rules', '${rules}')`);
  c.closeSync();
  instance.closeSync();
  return file;
}

describe('a model loaded under earlier reading rules', () => {
  it('is read, loaded into and gated with a warning that says how to be sure; a model of today has none', async () => {
    const file = await earlierModel();
    for (const args of [['runs'], ['tree'], ['query', 'slowest-nodes'], ['gate']]) {
      const r = runCli([...args, '--db', file]);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stderr, args.join(' ')).toMatch(WARNING);
    }
    const load = runCli(['load', FAILED, '--db', file]);
    expect(load.code).toBe(0);
    expect(load.stderr).toMatch(WARNING);
    // loading more files does not make the earlier records today's
    expect(runCli(['runs', '--db', file]).stderr).toMatch(WARNING);

    const today = path.join(dir, 'today.duckdb');
    const made = runCli(['load', CLEAN, '--db', today]);
    expect(made.stderr).toBe('');
    expect(runCli(['load', FAILED, '--db', today]).stderr).toBe('');
    for (const args of [['runs'], ['gate', '--fail-on', 'incomplete']]) expect(runCli([...args, '--db', today]).stderr, args.join(' ')).toBe('');
  });

  it('warns of a model loaded under reading rules 1, when the first of two copies ranked alike stood', async () => {
    const file = await earlierModel(1);
    expect(runCli(['runs', '--db', file]).stderr).toMatch(WARNING);
  });
});
