#!/usr/bin/env -S node --max-semi-space-size=32
/**
 * yargs wiring only: the commands are listed in src/commands/index.ts and only the one being run is
 * loaded; errors become exit codes here.
 * The shebang's larger young generation: the writer (generate, migrate, record) makes short-lived
 * strings by the million and spends much less time in GC with it. It applies when the CLI runs as a
 * program (npx, the bin link), not under `node dist/src/cli.js`.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { shellWords } from './render/shell-words.js';
import { fileURLToPath } from 'node:url';
import type { CommandModule } from 'yargs';
import { applyArgumentRules, unknownOptions } from './commands/argument-rules.js';
import { COMMANDS, commandWord, nearestCommands } from './commands/index.js';
import { RunlensError, errorMessage, systemReason } from './errors.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { renderTopHelp } from './render/help.js';
import { printable } from './render/printable.js';
import { outputWidth } from './render/table.js';

export async function main(argv: string[]): Promise<number> {
  endQuietlyWhenStdoutCloses();
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
    process.stderr.write(`runlens: unknown command "${printable(word)}"${hint}\nRun \`runlens --help\` for the list of commands.\n`);
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
    // help is written like any output: a stdout that cannot take it is exit 2 (endQuietlyWhenStdoutCloses), not an exit 0 at once
    .exitProcess(false)
    .wrap(helpWidth())
    .updateStrings(YARGS_STRINGS as unknown as Record<string, string>) // the typings miss the plural forms
    .fail((msg, err, y) => {
      // yargs's own parse errors (YError) are usage problems too; anything else is the command's.
      if (err && err.name !== 'YError') throw err;
      // Usage problems: message plus a pointer (or the command's help when arguments are missing), exit 2.
      let text = msg ?? err?.message ?? 'bad usage';
      // Unknown options named as written (yargs drops their dashes). An unknown option that took the
      // word after it as its value leaves a word missing: the option, not the word, is the problem.
      const unknown = text.startsWith(MISSING_ARGUMENTS) || text.startsWith(UNKNOWN) ? unknownOptions(parser, argv) : [];
      if (unknown.length) text = `${YARGS_STRINGS['Unknown argument: %s'][unknown.length > 1 ? 'other' : 'one'].replace('%s', unknown.join(', '))}${dashFileHint(unknown, word)}`;
      if (text.startsWith(MISSING_ARGUMENTS)) {
        process.stderr.write(`runlens ${word}: ${text}\n\n`);
        y.showHelp((h: string) => process.stderr.write(h + '\n'));
      } else process.stderr.write(`runlens: ${printable(text)}\nRun \`runlens ${word} --help\` for usage.\n`);
      exitCode = EXIT.usage;
      throw new UsageExit();
    });
  applyArgumentRules(parser, argv);
  parser.command({ command: entry.usage, describe: entry.describe, ...(await entry.load()) } as CommandModule);
  try {
    await parser.parseAsync();
  } catch (e) {
    if (e instanceof UsageExit) return exitCode;
    if (e instanceof RunlensError) {
      if (e.message) process.stderr.write(`runlens: ${printable(e.message)}\n`);
      return exitCodeFor(e.kind);
    }
    const fsProblem = fileSystemMessage(e);
    if (fsProblem) {
      process.stderr.write(`runlens: ${printable(fsProblem)}\n`);
      return EXIT.input;
    }
    process.stderr.write(`runlens: internal error: ${printable(errorMessage(e))}\n`);
    if (process.env.RUNLENS_DEBUG) process.stderr.write(`${(e as Error)?.stack ?? ''}\n`);
    return EXIT.internal;
  }
  return process.exitCode === undefined ? exitCode : Number(process.exitCode);
}

class UsageExit extends Error {}

const MISSING_ARGUMENTS = 'missing arguments';
const UNKNOWN = 'unknown option';

/** An "unknown option" that is a file's name: how to give a file whose name starts with a dash. */
function dashFileHint(unknown: string[], command: string): string {
  const file = unknown.find((w) => existsSync(w));
  return file ? `\n(to name a file that starts with a dash, give it after --: ${shellWords(['runlens', command, '--', file])})` : '';
}

/** yargs's messages in runlens's voice (lower case, options with their dashes, what to do). */
const YARGS_STRINGS = {
  'Not enough non-option arguments: got %s, need at least %s': {
    one: `${MISSING_ARGUMENTS}: %s given, at least %s needed`,
    other: `${MISSING_ARGUMENTS}: %s given, at least %s needed`,
  },
  'Too many non-option arguments: got %s, maximum of %s': {
    one: 'too many arguments: %s given, at most %s taken',
    other: 'too many arguments: %s given, at most %s taken',
  },
  'Missing required argument: %s': { one: 'missing required option: %s', other: 'missing required options: %s' },
  'Unknown argument: %s': { one: 'unknown option or extra argument: %s', other: 'unknown options or extra arguments: %s' },
  'Not enough arguments following: %s': '--%s needs a value',
  'Invalid values:': 'invalid value:',
  'Argument: %s, Given: %s, Choices: %s': '--%s %s: choose one of %s',
  'Arguments %s and %s are mutually exclusive': '--%s and --%s do not go together',
  'Show help': 'show help',
};

/**
 * The reader of our output went away (`runlens tree X | head`): nothing more can be written, so the
 * command ends at once, quietly, with the exit code it already has (0 if none yet).
 */
function endQuietlyWhenStdoutCloses(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') process.stderr.write(`runlens: cannot write the output: ${e.message}\n`);
    const code = e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED' ? Number(process.exitCode ?? EXIT.ok) : EXIT.input;
    process.exit(code);
  });
  process.stderr.on('error', () => undefined);
}

/** Help text fits COLUMNS or the terminal, up to 100 columns; 80 when stdout is not a terminal. */
function helpWidth(): number {
  return Math.min(100, outputWidth() ?? 80);
}

/** A file or folder that cannot be read or written (a Node system error with a path): what and why. */
function fileSystemMessage(e: unknown): string | undefined {
  const err = e as NodeJS.ErrnoException;
  if (!err?.code || !err.path) return undefined;
  // mkdir of a folder where a file is: the file is in the way
  if (err.code === 'EEXIST' && err.syscall === 'mkdir') return `${err.path}: it is a file, not a folder`;
  return `${err.path}: ${systemReason(err)}`;
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

/** Started as the program (node dist/src/cli.js, or the bin link to it), not imported (tests call main). */
function startedAsProgram(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (startedAsProgram()) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`runlens: ${printable(errorMessage(e))}\n`);
      process.exitCode = EXIT.internal;
    },
  );
}
