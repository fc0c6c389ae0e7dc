/**
 * How PATH arguments name the files runlens reads: a file is read as itself whatever its name, a
 * glob means what the shell's expansion of it would, and each file is read once.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

const S = (name: string) => path.join(ROOT, 'samples', name);
const dir = tempDir('runlens-input-paths-');

/** A fresh folder holding copies of samples under the given names. */
function folder(name: string, files: Record<string, string>): string {
  const d = path.join(dir, name);
  mkdirSync(d, { recursive: true });
  for (const [f, sample] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(d, f)), { recursive: true });
    copyFileSync(S(sample), path.join(d, f));
  }
  return d;
}

describe('a file whose name holds glob characters is read as itself', () => {
  it('JSONL named build[1].jsonl beside build1.jsonl: the failed run is read, in the file and in its folder', () => {
    const d = folder('brackets-jsonl', { 'build[1].jsonl': 'failed-build.jsonl', 'build1.jsonl': 'clean-build.jsonl' });
    const one = runCli(['gate', path.join(d, 'build[1].jsonl')]);
    expect(one.code).toBe(1);
    const all = runCli(['gate', d]);
    expect(all.code).toBe(1);
    expect(all.stdout).toContain('2 runs');
  });

  it('Parquet named q[1].parquet beside q1.parquet: validate counts its own records, gate fails it', () => {
    const d = folder('brackets-parquet', { 'q[1].parquet': 'failed-build.parquet', 'q1.parquet': 'clean-build.parquet' });
    const f = path.join(d, 'q[1].parquet');
    expect(runCli(['gate', f]).code).toBe(1);
    const v = runCli(['validate', f, '--format', 'json']);
    expect(v.stdout + v.stderr).toContain('525');
    expect(v.stdout + v.stderr).not.toContain('557');
  });

  it('x*.jsonl and p?.parquet are one file each, not a pattern over their neighbours', () => {
    const d = folder('stars', { 'x*.jsonl': 'clean-build.jsonl', 'xy.jsonl': 'failed-build.jsonl', 'p?.parquet': 'clean-build.parquet', 'p1.parquet': 'failed-build.parquet' });
    const star = runCli(['load', path.join(d, 'x*.jsonl'), '--format', 'json']);
    expect(star.code).toBe(0);
    expect(JSON.parse(star.stdout).files.map((f: { records: number }) => f.records)).toEqual([557]);
    const q = runCli(['runs', path.join(d, 'p?.parquet')]);
    expect(q.stderr).toBe('');
    expect(q.code).toBe(0);
  });

  it('an error about such a file names it as the user did', () => {
    const d = folder('brackets-bad', {});
    const f = path.join(d, 'bad[1].parquet');
    const good = readFileSync(S('clean-build.parquet'));
    writeFileSync(f, Buffer.concat([good.subarray(0, 4), Buffer.alloc(3000, 7), good.subarray(-4)]));
    const r = runCli(['runs', f]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${f}: not a readable Parquet file`);
    expect(r.stderr).not.toContain('runlens-paths-');
  });
});

describe('a glob runlens expands means what the shell expansion of it would', () => {
  it('a folder the glob matches is read as a folder argument is: quoting does not change the verdict', () => {
    const d = folder('glob-folders', { 'clean.jsonl': 'clean-build.jsonl', 'ci/failed.jsonl': 'failed-build.jsonl' });
    const quoted = runCli(['gate', path.join(d, '*')]);
    const shell = runCli(['gate', path.join(d, 'ci'), path.join(d, 'clean.jsonl')]);
    expect(shell.code).toBe(1);
    expect(quoted.code).toBe(1);
    expect(quoted.stdout).toContain('2 runs');
  });

  it('a glob that matches only folders reads their files', () => {
    const d = folder('glob-only-folders', { 'sub1/a.jsonl': 'clean-build.jsonl', 'sub2/b.jsonl': 'two-runs.jsonl' });
    const r = runCli(['load', path.join(d, 'su*'), '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).files).toHaveLength(2);
  });
});

describe('a link back up a folder is walked once', () => {
  it('a folder holding a link to its parent: its one file is read once, as a folder and through a ** glob', () => {
    const d = folder('loop', { 'clean.jsonl': 'clean-build.jsonl' });
    mkdirSync(path.join(d, 'sub'));
    symlinkSync('..', path.join(d, 'sub', 'up'));
    for (const arg of [d, path.join(d, '**/*.jsonl')]) {
      const r = runCli(['load', arg, '--format', 'json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).files.map((f: { path: string }) => f.path)).toEqual([path.join(d, 'clean.jsonl')]);
    }
  });
});

describe('a file named by several PATHs is read once', () => {
  it('./a.jsonl, a.jsonl, a link and a hard link to it: one file, its bad lines counted once, every PATH that named it listed', () => {
    const d = folder('same-file', {});
    const lines = readFileSync(S('clean-build.jsonl'), 'utf8').split('\n').filter(Boolean);
    writeLines(d, 'a.jsonl', [...lines.slice(0, 40), '{oops', ...lines.slice(40), 'not json']);
    symlinkSync('a.jsonl', path.join(d, 'alink.jsonl'));
    linkSync(path.join(d, 'a.jsonl'), path.join(d, 'hard.jsonl'));
    const args = ['a.jsonl', './a.jsonl', 'alink.jsonl', 'hard.jsonl'];
    const r = runCli(['load', '--lenient', ...args, '--format', 'json'], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.skippedLines).toBe(2);
    expect(report.files).toHaveLength(1);
    expect(report.files[0].args).toEqual(args);
  });
});

describe('a PATH that is neither a regular file nor a folder', () => {
  it('a FIFO is refused for what it is (exit 2)', () => {
    const d = folder('special', {});
    const fifo = path.join(d, 'ff');
    execFileSync('mkfifo', [fifo]);
    const g = runCli(['gate', fifo]);
    expect(g.code).toBe(2);
    expect(g.stderr).toContain(`${fifo}: a FIFO (named pipe): runlens reads regular files and folders`);
  });

  it.skipIf(!existsSync('/dev/null') || !statSync('/dev/null').isCharacterDevice())('/dev/null is refused as a character device, by the reading commands and by convert', () => {
    for (const args of [['runs', '/dev/null'], ['convert', '/dev/null', path.join(folder('devnull', {}), 'x.parquet')]]) {
      const r = runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('/dev/null: a character device: runlens reads regular files and folders');
    }
  });
});
