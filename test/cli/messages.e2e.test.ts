/** Messages in one voice: odd inputs get one line naming the file and what is wrong, exit 2; never internals. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir();
const at = (name: string, bytes: Buffer | string) => {
  const p = path.join(dir, name);
  writeFileSync(p, bytes);
  return p;
};
const clean = readFileSync('samples/clean-build.jsonl');
const parquet = readFileSync('samples/clean-build.parquet');
const ODD: Record<string, string> = {
  png: at('picture.png', Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(2000, 0x42)])),
  random: at('random.jsonl', Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7919) % 251))),
  'cut gzip': at('cut.jsonl.gz', gzipSync(clean).subarray(0, 3000)),
  'cut parquet': at('cut.parquet', parquet.subarray(0, 2000)),
  'fake parquet': at('fake.parquet', Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(3000, 9), Buffer.from('PAR1')])),
};
const INTERNALS = /internal error|LINE \d+:|SELECT|read_parquet|read_json|[A-Z][a-z]+ Error:|\n\s+at |ENOENT|EISDIR/;

describe('odd inputs', () => {
  it.each(Object.entries(ODD))('%s: one line naming the file, exit 2, for every command that reads PATHs', (_what, file) => {
    for (const args of [['runs', file], ['tree', file], ['gate', file], ['load', file], ['query', 'errors', file], ['validate', file]]) {
      const r = runCli(args);
      const label = args.join(' ');
      expect(r.code, label).toBe(2);
      expect(r.stderr, label).not.toMatch(INTERNALS);
      expect(r.stderr.startsWith(`runlens: ${file}`), `${label}: ${r.stderr}`).toBe(true);
      expect(r.stderr.trim().split('\n'), label).toHaveLength(1);
    }
  });

  it('--db FILE that is not a model says so and what --db takes', () => {
    const notModel = at('not-a-model.duckdb', Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 251)));
    const r = runCli(['runs', '--db', notModel]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`runlens: ${notModel}: not a runlens model (not a DuckDB database file; \`runlens load PATH --db FILE\` makes models)\n`);
  });

  it('a port out of range is a usage error naming the option', () => {
    for (const cmd of ['receive', 'gate']) {
      const r = runCli([cmd, '--receive', '--port', '99999'].filter((a) => cmd === 'gate' || a !== '--receive'));
      expect(r.code, cmd).toBe(2);
      expect(r.stderr, cmd).toContain('--port: expected a port number 0..65535 (0 picks a free one), got 99999');
    }
  });
});

describe('counts agree with their nouns', () => {
  it('gate and load say "1 run", "1 trace", "2 errors"', () => {
    expect(runCli(['gate', 'samples/clean-build.jsonl']).stdout).toMatch(/^gate passed: 1 run, \d+ node results /);
    expect(runCli(['load', 'samples/clean-build.jsonl']).stdout).toMatch(/: \d+ records, 1 trace\n.*, 1 run\n$/s);
    const fail = runCli(['gate', 'samples/failed-build.jsonl']);
    expect(fail.stdout).toMatch(/^gate FAILED: 2 errors, 1 test failed, 1 run-error in 1 of 1 run /);
  });
});
