#!/usr/bin/env -S node --max-semi-space-size=32
/**
 * yargs wiring only: every command lives in src/commands/, errors become exit codes here.
 * The shebang's larger young generation: the writer (generate, migrate, record) makes short-lived
 * strings by the million; a migrate of 100k results spent 1.5-1.8 s in GC with the default and
 * 1.0-1.25 s with this (profiled, alternated runs). It applies when the CLI runs as a program (npx,
 * the bin link), not under `node dist/src/cli.js`.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { commandsFor } from './commands/index.js';
import { RunlensError, errorMessage } from './errors.js';
import { EXIT, exitCodeFor } from './exit-codes.js';

export async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.ok;
  const parser = yargs(argv)
    .scriptName('runlens')
    .usage('$0 <command> [options]')
    .strict()
    .demandCommand(1, 'Name a command; `runlens --help` lists them.')
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version()
    .wrap(Math.min(110, process.stdout.columns || 110))
    .fail((msg, err, y) => {
      if (err) throw err;
      // Usage problems: message plus a pointer, exit 2, no stack trace.
      process.stderr.write(`runlens: ${msg}\nRun \`runlens --help\` (or \`runlens <command> --help\`) for usage.\n`);
      void y;
      exitCode = EXIT.usage;
      throw new UsageExit();
    });
  for (const c of await commandsFor(argv)) parser.command(c);
  try {
    await parser.parseAsync();
  } catch (e) {
    if (e instanceof UsageExit) return exitCode;
    if (e instanceof RunlensError) {
      if (e.message) process.stderr.write(`runlens: ${e.message}\n`);
      return exitCodeFor(e.kind);
    }
    process.stderr.write(`runlens: internal error: ${errorMessage(e)}\n`);
    if (process.env.RUNLENS_DEBUG) process.stderr.write(`${(e as Error)?.stack ?? ''}\n`);
    return EXIT.internal;
  }
  return process.exitCode === undefined ? exitCode : Number(process.exitCode);
}

class UsageExit extends Error {}

/** Started as the program (node dist/src/cli.js, or the bin link to it), not imported (tests call main). */
function startedAsProgram(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (startedAsProgram()) {
  main(hideBin(process.argv)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`runlens: ${errorMessage(e)}\n`);
      process.exitCode = EXIT.internal;
    },
  );
}
