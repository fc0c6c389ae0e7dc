/** Spawn the built CLI (npm test builds first) and capture its output and exit code. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './samples.js';

export const CLI = path.join(ROOT, 'dist/src/cli.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  input?: string;
  env?: Record<string, string>;
  cwd?: string;
  /** file writes limited to this many KiB (the shell's `ulimit -f`) */
  fileLimitKib?: number;
}

export function runCli(args: string[], opts: CliOptions = {}): CliResult {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` (npm test does) before the end-to-end tests`);
  const [file, argv] =
    opts.fileLimitKib === undefined
      ? [process.execPath, [CLI, ...args]]
      : ['bash', ['-c', `ulimit -f ${opts.fileLimitKib} && exec "$0" "$@"`, process.execPath, CLI, ...args]];
  const r = spawnSync(file, argv, {
    input: opts.input,
    encoding: 'utf8',
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, CI: 'true', NO_COLOR: '1', ...opts.env },
    maxBuffer: 64 * 1024 * 1024,
  });
  // -1: no exit code; stderr then says why (the signal that ended the process, or the spawn error)
  const why = r.status === null ? `\n[runCli: ${r.signal ? `ended by ${r.signal}` : `not started: ${r.error?.message}`}]` : '';
  return { code: r.status ?? -1, stdout: r.stdout, stderr: (r.stderr ?? '') + why };
}

/**
 * Run the CLI with its file writes limited to `kib` KiB: a write past it fails with EFBIG, as a write
 * to a full disk fails with ENOSPC.
 */
export function runCliWithFileLimit(kib: number, args: string[], opts: Omit<CliOptions, 'fileLimitKib'> = {}): CliResult {
  return runCli(args, { ...opts, fileLimitKib: kib });
}
