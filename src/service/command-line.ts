/**
 * Step commands are stored as the hosted service has them (`dbt build --select x`). They are split
 * into argv here, like a POSIX shell would split words and quotes, but nothing else a shell does
 * (no variables, globs, pipes or `;`), and run only when the executable is on the allowed list.
 * `stepRefusal` is the one check: the API applies it when a job is saved, the runner before each step,
 * and `runlens record` inside a step to the command it runs (`argvRefusal`).
 */
import { commandWord } from '../commands/index.js';
import { STEP_COMMANDS_VAR } from './job-step.js';
import { cutText } from '../render/cut-text.js';

interface Parsed {
  argv: string[];
  /** the first character a shell would act on (unquoted or, for `$` and backquotes, double-quoted) */
  shellSyntax: { char: string; at: number; what: string } | null;
}

const UNQUOTED: Record<string, string> = {
  '|': 'a pipe', '&': 'a background or && list', ';': 'a command list', '<': 'a redirection', '>': 'a redirection',
  '(': 'a subshell', ')': 'a subshell', '$': 'a variable or command substitution', '`': 'a command substitution',
  '*': 'a glob', '?': 'a glob', '[': 'a glob', '{': 'a brace expansion', '}': 'a brace expansion', '\n': 'a command list',
  '\r': 'a command list',
};
/** Special only where a word starts. */
const WORD_START: Record<string, string> = { '~': 'a home folder expansion', '#': 'a comment' };

function parseCommand(command: string): Parsed {
  const out: string[] = [];
  let shellSyntax: Parsed['shellSyntax'] = null;
  const note = (char: string, at: number, what: string) => {
    shellSyntax ??= { char, at, what };
  };
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (quote === "'") {
      if (ch === "'") quote = null;
      else cur += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = null;
      else if (ch === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1]!)) cur += command[++i];
      else {
        if (ch === '$' || ch === '`') note(ch, i, UNQUOTED[ch]!);
        cur += ch;
      }
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < command.length) {
      cur += command[++i];
      inWord = true;
    } else if (ch === ' ' || ch === '\t') {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      if (UNQUOTED[ch]) note(ch, i, UNQUOTED[ch]);
      else if (!inWord && WORD_START[ch]) note(ch, i, WORD_START[ch]);
      cur += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote`);
  if (inWord) out.push(cur);
  return { argv: out, shellSyntax };
}

/** argv of a command, split into words and quotes like a shell, nothing else interpreted. */
export function splitCommand(command: string): string[] {
  return parseCommand(command).argv;
}

/** The longest argument Linux passes to a program (MAX_ARG_STRLEN), its terminating NUL included. */
const MAX_ARG_BYTES = 128 * 1024;

/**
 * runlens commands a step may not run, and why. A step makes, checks and reads telemetry in its run's
 * folder; these would act with the service's files or address, not the token that made the job.
 */
const STORE = "works on the service's own store, so it runs where the store is, not in a job step (it would act with the service's files, not the job's token)";
const CLIENT = 'is a client of the service: a step would send requests from the service\'s host, to any address it can reach (see the SSRF policy)';
const REFUSED_IN_STEP: Record<string, string> = {
  accounts: STORE, tokens: STORE, serve: STORE,
  webhooks: CLIENT, jobs: CLIENT, artifacts: CLIENT,
  receive: 'listens on a port of the service\'s host until it is stopped: not a step',
  explore: 'is interactive: a step has no terminal',
};

/**
 * `record`'s options that take a value as the next word (src/commands/record.ts): that word is not
 * the command it runs. record checks the command it actually parsed again in a step (argvRefusal),
 * so one missed here is refused there rather than let through.
 */
const RECORD_VALUE_FLAGS = ['-o', '--output', '--out', '--project-dir', '--manifest'];

/** The command `runlens record ARGS` runs: its positional words, then those after `--`. */
function recordedCommand(args: string[]): string[] {
  const dash = args.indexOf('--');
  const ours = dash >= 0 ? args.slice(0, dash) : args;
  const cmd: string[] = [];
  for (let i = 0; i < ours.length; i++) {
    const a = ours[i]!;
    if (a.startsWith('-')) {
      // a boolean flag takes a following true/false as its value
      if (RECORD_VALUE_FLAGS.includes(a) || /^(true|false)$/.test(ours[i + 1] ?? '')) i++;
    } else cmd.push(a);
  }
  return dash >= 0 ? [...cmd, ...args.slice(dash + 1)] : cmd;
}

/** Why a step may not run (null when it may): shell syntax, or what argvRefusal refuses. */
export function stepRefusal(command: string, allowed: readonly string[]): string | null {
  if (command.includes('\0')) return 'contains a NUL character, which no command line can carry';
  let parsed: Parsed;
  try {
    parsed = parseCommand(command);
  } catch (e) {
    return (e as Error).message;
  }
  if (!parsed.argv[0]) return 'empty command';
  const s = parsed.shellSyntax;
  if (s) {
    return `${JSON.stringify(s.char)} at character ${s.at + 1} is shell syntax (${s.what}), but steps run without a shell: `
      + 'quote it to pass it as it is, or make each command its own step';
  }
  return argvRefusal(parsed.argv, allowed);
}

/**
 * Why a step's argv may not run (null when it may): an executable not a bare name from the allowed
 * list, an argument too long, a runlens command a step may not run (REFUSED_IN_STEP), or a `runlens
 * record` whose command would itself be refused as a step.
 */
export function argvRefusal(argv: readonly string[], allowed: readonly string[]): string | null {
  const exe = argv[0];
  if (!exe) return 'empty command';
  if (exe.includes('/') || exe.includes('\\')) return `executable "${exe}" must be a bare name from the allowed list (${allowed.join(', ')})`;
  if (!allowed.includes(exe)) return `executable "${exe}" is not allowed; this service runs only: ${allowed.join(', ')} (serve --step-commands)`;
  const long = argv.findIndex((a) => Buffer.byteLength(a) >= MAX_ARG_BYTES);
  if (long >= 0) return `argument ${long} is longer than the ${MAX_ARG_BYTES / 1024} KiB one argument of a command line can hold`;
  if (exe !== 'runlens') return null;
  const args = argv.slice(1);
  const word = commandWord(args);
  if (word && Object.hasOwn(REFUSED_IN_STEP, word)) return `runlens ${word} ${REFUSED_IN_STEP[word]}`;
  if (word !== 'record') return null;
  const cmd = recordedCommand(args.slice(args.indexOf(word) + 1));
  // record without a command runs nothing (it says so itself)
  if (!cmd.length) return null;
  const why = argvRefusal(cmd, allowed);
  return why && `runlens record runs "${cutText(cmd.join(' '), 200)}", which a step may not: ${why}`;
}

/**
 * A step's environment: serve's, without runlens's own variables (the store's place and URL, an API
 * token, ...) and PostgreSQL's (PGPASSWORD, PGHOST, ...), which would hand the step the service's
 * store; then the step's own.
 */
export function stepEnvironment(serveEnv: NodeJS.ProcessEnv, own: Record<string, string>, allowed: readonly string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(serveEnv)) if (!/^(RUNLENS_|PG)/.test(k)) env[k] = v;
  return { ...env, ...own, [STEP_COMMANDS_VAR]: allowed.join(',') };
}
