/**
 * A file-writing command stopped by Ctrl-C (SIGINT) or SIGTERM leaves no part of its output under
 * the output's name (a file that was there stays as it was) and no file written beside it.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startCli, type StartedCli } from '../helpers/cli.js';
import { LEGACY, samplesNote } from '../helpers/samples.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);

/** Stop `p` with `sig` once `dir` holds a file besides those it had: the output is being written. */
async function stopWhileWriting(p: StartedCli, dir: string, had: string[], sig: NodeJS.Signals) {
  const size = (f: string) => statSync(path.join(dir, f)).size;
  const sizes = had.map(size);
  let ended = false;
  void p.done.then(() => (ended = true));
  // (a file written in place shows as a changed size of the one already there)
  while (!ended && readdirSync(dir).length === had.length && had.every((f, i) => size(f) === sizes[i])) await new Promise((r) => setTimeout(r, 20));
  expect(ended, 'the command ended before it could be stopped').toBe(false);
  p.kill(sig);
  return p.done;
}

const stopped = (r: { code: number | null; signal: NodeJS.Signals | null }) => r.signal ?? r.code;

/** Stop `p` with `sig` the moment the first file appears in `dir` (the writer's lock, as it is made). */
async function stopAtFirstFile(p: StartedCli, dir: string, sig: NodeJS.Signals) {
  const w = watch(dir, () => {
    w.close();
    p.kill(sig);
  });
  try {
    return await p.done;
  } finally {
    w.close();
  }
}

describe('an output whose writing is stopped', () => {
  it('generate -o a.jsonl, Ctrl-C: a.jsonl as it was, nothing beside it, and the folder still loads', async () => {
    const dir = path.join(tmp.dir, 'g');
    const a = path.join(dir, 'a.jsonl');
    expect(runCli(['generate', '-o', a, '--nodes', '20']).code).toBe(0);
    const before = readFileSync(a);
    const r = await stopWhileWriting(startCli(['generate', '-o', a, '--nodes', '3000', '--runs', '3']), dir, ['a.jsonl'], 'SIGINT');
    expect([130, 'SIGINT']).toContain(stopped(r));
    expect(readdirSync(dir)).toEqual(['a.jsonl']);
    expect(readFileSync(a).equals(before)).toBe(true);
    expect(runCli(['runs', dir]).code).toBe(0);
  });

  it('generate -o b.parquet, SIGTERM: no b.parquet and nothing beside it', async () => {
    const dir = path.join(tmp.dir, 'gp');
    expect(runCli(['generate', '-o', path.join(dir, 'keep.jsonl'), '--nodes', '4']).code).toBe(0);
    const r = await stopWhileWriting(startCli(['generate', '-o', path.join(dir, 'b.parquet'), '--nodes', '3000', '--runs', '3']), dir, ['keep.jsonl'], 'SIGTERM');
    expect([143, 'SIGTERM']).toContain(stopped(r));
    expect(readdirSync(dir)).toEqual(['keep.jsonl']);
  });

  it('a stop the moment the lock of the output is made leaves no lock and nothing beside it', async () => {
    const big = path.join(tmp.dir, 'first-file.jsonl');
    expect(runCli(['generate', '-o', big, '--nodes', '50']).code).toBe(0);
    const commands = [
      (out: string) => ['generate', '-o', out, '--nodes', '3000'],
      (out: string) => ['convert', big, out],
    ];
    for (const [c, command] of commands.entries()) {
      for (const out of ['b.parquet', 'a.jsonl']) {
        for (let i = 0; i < 2; i++) {
          const dir = path.join(tmp.dir, `first-${c}-${out}-${i}`);
          mkdirSync(dir);
          const r = await stopAtFirstFile(startCli(command(path.join(dir, out))), dir, 'SIGTERM');
          expect([143, 'SIGTERM']).toContain(stopped(r));
          expect(readdirSync(dir), `${command(out).join(' ')}, try ${i + 1}`).toEqual([]);
        }
      }
    }
  });

  it('convert to .jsonl.gz and to .parquet, Ctrl-C: the file written beside is removed', async () => {
    const dir = path.join(tmp.dir, 'c');
    const big = path.join(tmp.dir, 'big.jsonl');
    expect(runCli(['generate', '-o', big, '--nodes', '3000']).code).toBe(0);
    expect(runCli(['generate', '-o', path.join(dir, 'keep.jsonl'), '--nodes', '4']).code).toBe(0);
    for (const out of ['a.jsonl.gz', 'b.parquet']) {
      const r = await stopWhileWriting(startCli(['convert', big, path.join(dir, out)]), dir, ['keep.jsonl'], 'SIGINT');
      expect([130, 'SIGINT']).toContain(stopped(r));
      expect(readdirSync(dir), out).toEqual(['keep.jsonl']);
    }
  });

  const note = samplesNote(LEGACY);
  it.skipIf(note.missing)(note.title('migrate over an output that stops on a damaged line: the output as it was, nothing beside it'), () => {
    const dir = path.join(tmp.dir, 'm');
    mkdirSync(dir);
    const good = path.join(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl');
    for (const name of ['m.jsonl', 'm.parquet']) {
      const out = path.join(dir, name);
      expect(runCli(['migrate', good, '-o', out]).code).toBe(0);
      const before = readFileSync(out);
      const lines = readFileSync(good, 'utf8').split('\n');
      const damaged = path.join(tmp.dir, 'damaged.jsonl');
      writeFileSync(damaged, [...lines.slice(0, 200), '{"info": {"name": ', ...lines.slice(200)].join('\n'));
      const r = runCli(['migrate', damaged, '-o', out]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('damaged.jsonl:201');
      expect(readFileSync(out).equals(before), name).toBe(true);
    }
    expect(readdirSync(dir).sort()).toEqual(['m.jsonl', 'm.parquet']);
  });
});
