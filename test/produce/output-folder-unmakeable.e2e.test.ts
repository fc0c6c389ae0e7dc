/**
 * An output whose folder cannot be made is exit 2 naming it. Node's recursive mkdir loops for ever
 * where the system refuses a new folder with ENOENT although its parent exists (/proc): the process
 * spun at full CPU and ignored SIGTERM.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { ROOT } from '../helpers/samples.js';

const run = (args: string[]) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL', env: { ...process.env, CI: 'true' } });
  return { code: r.status, signal: r.signal, stderr: r.stderr };
};

describe.skipIf(!existsSync('/proc/self'))('an output under a folder the system will not make', () => {
  it.each([
    ['generate', ['generate', '-o', '/proc/nope/x.jsonl']],
    ['convert', ['convert', 'samples/two-runs.jsonl', '/proc/nope/x.parquet']],
    ['load --db', ['load', 'samples/two-runs.jsonl', '--db', '/proc/nope/m.duckdb']],
    ['report', ['report', 'samples/two-runs.jsonl', '-o', '/proc/nope/r.html']],
  ])('%s: exit 2 naming the folder, at once', (_, args) => {
    const r = run(args);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('/proc/nope');
    expect(r.stderr).not.toContain('internal error');
  });
});
