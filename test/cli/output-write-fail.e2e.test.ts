/**
 * An output that cannot be written to its end (a full disk; here a file size limit, which fails a
 * write the same way) is exit 2 naming the output, `OUTPUT: not written (reason)`, and leaves no
 * file under that name nor a temporary one beside it.
 */
import { openSync, closeSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, runCli, runCliWithFileLimit } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, sample } from '../helpers/samples.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
  // 30 runs of a small project: about 1.7 MB of JSONL, about 110 KB gzipped
  const r = runCli(['generate', '-o', 'seed.jsonl', '--nodes', '5', '--runs', '30', '--no-detail'], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
});

const others = () => readdirSync(dir).filter((f) => f !== 'seed.jsonl');

describe('an output that fills the disk', () => {
  it.each([
    ['generate gzip JSONL', ['generate', '-o', 'a.jsonl.gz', '--nodes', '300'], 'a.jsonl.gz'],
    ['generate JSONL', ['generate', '-o', 'g.jsonl', '--nodes', '300'], 'g.jsonl'],
    ['generate Parquet', ['generate', '-o', 'g.parquet', '--nodes', '1000'], 'g.parquet'],
    ['convert to gzip JSONL', ['convert', 'seed.jsonl', 'b.jsonl.gz'], 'b.jsonl.gz'],
    ['convert to JSONL', ['convert', 'seed.jsonl', 'c.jsonl'], 'c.jsonl'],
    ['convert to Parquet', ['convert', 'seed.jsonl', 'c.parquet'], 'c.parquet'],
    ['migrate', ['migrate', sample(LEGACY, 'rr_v5_1.7.0_build.json'), '-o', 'm.jsonl'], 'm.jsonl'],
    ['report', ['report', 'seed.jsonl', '-o', 'r.html'], 'r.html'],
  ])('%s: exit 2 naming the output, nothing left behind', (_what, args, out) => {
    const r = runCliWithFileLimit(16, args, { cwd: dir });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`runlens: ${out}: not written (file too large)`);
    expect(r.stderr).not.toMatch(/internal error|seed\.jsonl/);
    expect(others()).toEqual([]);
  });
});

describe('help and reports on a stdout that cannot take them', () => {
  const toFull = (args: string[]) => {
    const fd = openSync('/dev/full', 'w');
    try {
      return spawnSync(process.execPath, [CLI, ...args], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8', env: { ...process.env, CI: 'true' } });
    } finally {
      closeSync(fd);
    }
  };

  it.each([['runs'], ['tree'], ['load'], ['generate']])('%s --help > /dev/full is exit 2, as every command', (cmd) => {
    const r = toFull([cmd, '--help']);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('cannot write the output');
  });

  it('report -o - says what it wrote only once it is written, in bytes', () => {
    const full = toFull(['report', path.join(dir, 'seed.jsonl'), '-o', '-']);
    expect(full.status).toBe(2);
    expect(full.stderr).not.toContain('wrote');
    const ok = runCli(['report', 'seed.jsonl', '-o', '-'], { cwd: dir });
    expect(ok.code, ok.stderr).toBe(0);
    const kib = (Buffer.byteLength(ok.stdout) / 1024).toFixed(0);
    expect(ok.stderr).toContain(`wrote stdout (${kib} KiB)`);
  });
});
