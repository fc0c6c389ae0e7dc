/** Spawn the built CLI (npm test builds first) and capture its output and exit code. */
import { spawn, spawnSync } from 'node:child_process';
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
    // not a GitHub Actions step unless a test says so (gate's text output depends on it)
    env: { ...process.env, CI: 'true', NO_COLOR: '1', GITHUB_ACTIONS: '', ...opts.env },
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

export interface StartedCli {
  pid: number;
  /** stderr so far */
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  kill: (s: NodeJS.Signals) => void;
}

/** The built CLI, started and left running (a signal or its own end stops it). */
export function startCli(args: string[], opts: { cwd?: string } = {}): StartedCli {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` (npm test does) before the end-to-end tests`);
  const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env, CI: 'true', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((res) =>
    child.on('close', (code, signal) => res({ code, signal, stdout, stderr })),
  );
  return { pid: child.pid!, stderr: () => stderr, done, kill: (s) => child.kill(s) };
}

/** Wait until `ok()` holds, or until the started process has ended (the caller's assertions then say what went wrong). */
export async function until(ok: () => boolean, p?: StartedCli): Promise<void> {
  let ended = false;
  void p?.done.then(() => (ended = true));
  while (!ok() && !ended) await new Promise((r) => setTimeout(r, 20));
}
