/**
 * An older-engine JSON log read while its command still runs, then again once it is complete: the
 * first read's records are a part of the second's, so the model of both is the complete log's.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';

const note = samplesNote(LEGACY);

/** A command's JSON output, without what names the input files. */
function json(args: string[]): unknown {
  const r = runCli(args);
  expect(r.code === 0 || r.code === 1, `runlens ${args.join(' ')}: ${r.stderr}`).toBe(true);
  return JSON.parse(r.stdout, (k, v: unknown) => (k === 'files' || k === 'source_file' ? undefined : v));
}
const runsOf = (input: string[]) => json(['runs', ...input, '--format', 'json']);
const gateOf = (input: string[]) => json(['gate', ...input, '--reporter', 'json']);
const load = (db: string, files: string[]) => {
  const r = runCli(['load', ...files, '--db', db]);
  expect(r.code, r.stderr).toBe(0);
};
const linesOf = (f: string) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => `${l}\n`);

describe.skipIf(note.missing)(note.title('an older-engine log read before its command ended, then complete'), () => {
  it('load --db while dbt.log grows, then once it is complete: the model is the complete log\'s', () => {
    const full = sample(LEGACY, 'log_1.10.15_duckdb_singular_tests.jsonl');
    const lines = linesOf(full);
    const dir = tempDir('runlens-growing-');
    const log = path.join(dir, 'dbt.log');
    const db = path.join(dir, 'm.duckdb');
    writeFileSync(log, lines.slice(0, 70).join(''));
    load(db, [log]);
    // still running: incomplete, nothing canceled, and the gate says why
    expect(runsOf(['--db', db])).toMatchObject([{ canceled: 0, ended: false }]);
    const g = runCli(['gate', '--db', db]);
    expect(g.code).toBe(1);
    expect(g.stdout).toContain('incomplete: the invocation never ended (the log ends before the command did');
    appendFileSync(log, lines.slice(70).join(''));
    expect(readFileSync(log, 'utf8')).toBe(readFileSync(full, 'utf8'));
    load(db, [log]);
    expect(runsOf(['--db', db])).toEqual(runsOf([full]));
    expect(gateOf(['--db', db])).toEqual(gateOf([full]));
    expect(runCli(['gate', '--db', db, '--fail-on', 'canceled']).code).toBe(0);
  });

  it('load of a cut copy and the complete log in one command, in either order, is the complete log', () => {
    const full = sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl');
    const dir = tempDir('runlens-cut-full-');
    const cut = path.join(dir, 'cut.jsonl');
    writeFileSync(cut, linesOf(full).slice(0, 300).join(''));
    for (const [name, files] of [['cut-full', [cut, full]], ['full-cut', [full, cut]]] as const) {
      const db = path.join(dir, `${name}.duckdb`);
      load(db, [...files]);
      expect(runsOf(['--db', db]), name).toEqual(runsOf([full]));
      expect(gateOf(['--db', db]), name).toEqual(gateOf([full]));
    }
  });
});
