/**
 * A command that writes a file from input files refuses an output that is one of its inputs (by
 * path, through a symlink or a hard link): the output is opened for writing before the input is
 * read, so the input would be lost.
 */
import { copyFileSync, linkSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { FUSION, LEGACY, samplesNote } from '../helpers/samples.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);
const note = samplesNote(FUSION);

/** A copy of a real sample in the temp folder, and its bytes. */
function copyOf(dir: string, name: string, as = name): { file: string; bytes: Buffer } {
  const file = path.join(tmp.dir, as);
  copyFileSync(path.join(dir, name), file);
  return { file, bytes: readFileSync(file) };
}

function expectRefused(args: string[], input: { file: string; bytes: Buffer }): void {
  const r = runCli(args);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/is also an input/);
  expect(r.stderr).toContain(path.basename(input.file));
  expect(r.stdout).toBe('');
  expect(readFileSync(input.file)).toEqual(input.bytes);
}

describe.skipIf(note.missing)(note.title('the output is an input'), () => {
  it('convert IN IN (JSONL) leaves the input as it was', () => {
    const a = copyOf(FUSION, 'forwarder-otel-preview120.jsonl', 'a.jsonl');
    expectRefused(['convert', a.file, a.file], a);
  });

  it('convert IN IN (.jsonl.gz) leaves the input as it was', () => {
    const file = path.join(tmp.dir, 'b.jsonl.gz');
    writeFileSync(file, gzipSync(readFileSync(path.join(FUSION, 'forwarder-otel-preview120.jsonl'))));
    expectRefused(['convert', file, file], { file, bytes: readFileSync(file) });
  });

  it('convert through a symlink or a hard link to the input, or a relative path, is refused too', () => {
    const a = copyOf(FUSION, 'forwarder-otel-preview120.jsonl', 'c.jsonl');
    const sym = path.join(tmp.dir, 'c-link.jsonl');
    symlinkSync(a.file, sym);
    expectRefused(['convert', a.file, sym], a);
    expectRefused(['convert', sym, a.file], a);
    const hard = path.join(tmp.dir, 'c-hard.jsonl');
    linkSync(a.file, hard);
    expectRefused(['convert', a.file, hard], a);
    const r = runCli(['convert', a.file, path.relative(process.cwd(), a.file)]);
    expect(r.code).toBe(2);
    expect(readFileSync(a.file)).toEqual(a.bytes);
  });

  it('migrate L -o L (a JSON log) leaves the log as it was', () => {
    const log = copyOf(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl', 'dbt-log.jsonl');
    expectRefused(['migrate', log.file, '-o', log.file], log);
    // found in a folder it is an input as well
    expectRefused(['migrate', tmp.dir, '-o', log.file], log);
  });

  it('record -o L -- cat L (a replay of the file the output would empty) leaves the log as it was', () => {
    const log = copyOf(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl', 'replayed.jsonl');
    expectRefused(['record', '-o', log.file, '--', 'cat', log.file], log);
  });

  it('report IN -o IN leaves the telemetry as it was', () => {
    const a = copyOf(FUSION, 'forwarder-otel-preview120.jsonl', 'd.jsonl');
    expectRefused(['report', a.file, '-o', a.file], a);
  });

  it('another output is written as before', () => {
    const a = copyOf(FUSION, 'forwarder-otel-preview120.jsonl', 'e.jsonl');
    const out = path.join(tmp.dir, 'e.out.jsonl');
    const r = runCli(['convert', a.file, out]);
    expect(r.code).toBe(0);
    expect(readFileSync(out)).toEqual(a.bytes);
  });
});
