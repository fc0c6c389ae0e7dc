/**
 * An output path that names something other than a file (a FIFO, a device such as /dev/null) is
 * refused before anything is written: an output is written beside its name and then put in its
 * place, which would replace the FIFO or the device with a regular file (as root, /dev/null itself).
 */
import { execFileSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);

describe('an output that is a FIFO', () => {
  it.each([
    ['generate', (out: string) => ['generate', '-o', out, '--nodes', '5'], 'g.jsonl'],
    ['convert to Parquet', (out: string) => ['convert', 'samples/two-runs.jsonl', out], 'c.parquet'],
    ['report', (out: string) => ['report', 'samples/two-runs.jsonl', '-o', out], 'r.html'],
    ['migrate', (out: string) => ['migrate', 'samples/older-engine', '-o', out], 'm.jsonl'],
  ])('%s: exit 2 naming it, and the FIFO is still there', (_, args, name) => {
    const fifo = path.join(tmp.dir, name);
    execFileSync('mkfifo', [fifo]);
    const r = runCli(args(fifo));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${name}: a FIFO (named pipe), not a file`);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });
});
