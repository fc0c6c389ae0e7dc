#!/usr/bin/env -S node --max-semi-space-size=32
/**
 * yargs wiring only: the commands are listed in src/commands/index.ts and only the one being run is
 * loaded; errors become exit codes here.
 * The shebang's larger young generation: the writer (generate, migrate, record) makes short-lived
 * strings by the million and spends much less time in GC with it. It applies when the CLI runs as a
 * program (npx, the bin link), not under `node dist/src/cli.js`.
 */
import { readFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { COMMANDS, commandWord, nearestCommands } from './commands/index.js';
import { RunlensError, errorMessage } from './errors.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { renderTopHelp } from './render/help.js';

export async function main(argv: string[]): Promise<number> {
  // No command named: the version, the list of commands or an unknown name, all without yargs.
  const word = commandWord(argv);
  if (word === undefined) {
    if (argv.includes('--version') || argv.includes('-V')) {
      process.stdout.write(version() + '\n');
      return EXIT.ok;
    }
    const help = renderTopHelp(COMMANDS, helpWidth());
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(help);
      return EXIT.ok;
    }
    process.stderr.write(`runlens: name a command\n\n${help}`);
    return EXIT.usage;
  }
  const entry = COMMANDS[word];
  if (!entry) {
    const near = nearestCommands(word);
    const hint = near.length ? `; did you mean ${near.map((n) => `"${n}"`).join(' or ')}?` : '';
    process.stderr.write(`runlens: unknown command "${word}"${hint}\nRun \`runlens --help\` for the list of commands.\n`);
    return EXIT.usage;
  }
  let exitCode: number = EXIT.ok;
  const { default: yargs } = await import('yargs');
  const parser = yargs(argv)
    .scriptName('runlens')
    .strict()
    .help()
    .alias('h', 'help')
    .version(false)
    .wrap(helpWidth())
    .fail((msg, err, y) => {
      if (err) throw err;
      // Usage problems: message plus a pointer, exit 2, no stack trace.
      process.stderr.write(`runlens: ${msg}\nRun \`runlens --help\` (or \`runlens <command> --help\`) for usage.\n`);
      void y;
      exitCode = EXIT.usage;
      throw new UsageExit();
    });
  parser.command({ command: entry.usage, describe: entry.describe, ...(await entry.load()) } as CommandModule);
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

/** Help text fits the terminal, up to 100 columns; 80 when stdout is not a terminal. */
function helpWidth(): number {
  return Math.min(100, process.stdout.columns || 80);
}

/** The package's version, from the nearest package.json above this file (dist/src or src). */
function version(): string {
  for (const rel of ['../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'runlens') return pkg.version;
    } catch {
      // not at this level
    }
  }
  return 'unknown';
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`runlens: ${errorMessage(e)}\n`);
    process.exitCode = EXIT.internal;
  },
);
