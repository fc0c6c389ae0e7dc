/**
 * A lone surrogate ("\ud800" escaped in JSON) in an older engine's file is refused as it is in
 * telemetry JSONL: exit 2 naming the user's file and where (field and result for a document, line
 * and field for a log), never the temporary translation, and without a --lenient hint that cannot help.
 * Escaped surrogate pairs (Python's ensure_ascii) are text like any other.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';

const dir = tempDir('runlens-surrogate-');

/** The bundled sample with `edit` applied to its error result, written with ASCII escapes as Python's json.dumps does. */
function runResultsWith(name: string, message: string): string {
  const target = path.join(dir, name, 'target');
  mkdirSync(target, { recursive: true });
  copyFileSync('samples/older-engine/target/manifest.json', path.join(target, 'manifest.json'));
  const doc = JSON.parse(readFileSync('samples/older-engine/target/run_results.json', 'utf8'));
  for (const r of doc.results) if (r.status === 'error') r.message = message;
  const file = path.join(target, 'run_results.json');
  writeFileSync(file, JSON.stringify(doc).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  return file;
}

function expectRefused(r: { code: number; stderr: string }, where: RegExp): void {
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(where);
  expect(r.stderr).toContain('lone surrogate');
  expect(r.stderr).not.toContain('translated.jsonl');
  expect(r.stderr).not.toContain('--lenient');
  expect(r.stderr).not.toContain('internal error');
}

describe('a lone surrogate in run_results.json', () => {
  const file = runResultsWith('lone', 'bad \ud800 lone surrogate');
  const where = /run_results\.json: results\[4\]\.message: .*lone surrogate.*model\.shop\.stg_customers/;

  it('gate, load and query refuse it, naming the file, the result and the field', () => {
    for (const args of [['gate', file], ['load', file], ['query', 'failed-tests', file]]) expectRefused(runCli(args), where);
  });

  it('migrate refuses it and writes nothing', () => {
    const out = path.join(dir, 'lone.jsonl');
    expectRefused(runCli(['migrate', file, '-o', out]), where);
    expect(existsSync(out)).toBe(false);
  });

  it('an escaped surrogate pair is kept as the character it encodes', () => {
    const ok = runResultsWith('pair', 'Database Error near \u{1F600} here');
    expect(readFileSync(ok, 'utf8')).toContain('\\ud83d\\ude00');
    const r = runCli(['gate', ok, '--reporter', 'json']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Database Error near \u{1F600} here');
  });
});

const note = samplesNote(LEGACY);
describe.skipIf(note.missing)(note.title('a lone surrogate in a JSON log of the older engine'), () => {
  it('is refused naming the log, its line and the field', () => {
    const lines = readFileSync(sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl'), 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"NodeFinished"'));
    expect(at).toBeGreaterThan(0);
    const ev = JSON.parse(lines[at]!);
    ev.info.msg = 'finished \ud800 here';
    lines[at] = JSON.stringify(ev);
    const log = path.join(dir, 'dbt.log');
    writeFileSync(log, lines.join('\n'));
    const where = new RegExp(`dbt\\.log:${at + 1}: info\\.msg: .*lone surrogate`);
    for (const args of [['gate', log], ['load', log]]) expectRefused(runCli(args), where);
    expectRefused(runCli(['migrate', log, '-o', path.join(dir, 'log.jsonl')]), where);
  });
});
