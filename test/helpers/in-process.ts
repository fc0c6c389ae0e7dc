/**
 * Run a CLI command in this process through src/cli.ts's main, with its stdout and stderr captured:
 * the same code path as the program, without a node start and a DuckDB load per command (0.4-0.5 s
 * each). One command at a time: the capture replaces process.stdout.write and process.stderr.write.
 */
import { main } from '../../src/cli.js';
import type { CliResult } from './cli.js';

/** `writes`: stdout as it was written, one string per write. */
export async function runInProcess(args: string[]): Promise<CliResult & { writes: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  const capture = (into: string[]) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  try {
    const code = await main(args);
    return { code, stdout: out.join(''), stderr: err.join(''), writes: out };
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
    // a command may set the exit code of the process it runs in; this one is the test runner's
    process.exitCode = undefined;
  }
}
