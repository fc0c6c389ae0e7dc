/**
 * `record`: run an older-engine command and translate its `--log-format json` stdout live. JSONL
 * is flushed as events arrive (the sink writes within ~200 ms), Parquet is written when the command
 * ends, OTLP is exported in the background (never holding up the command). The engine's human text goes to stderr as each
 * chunk of output arrives, before that chunk is translated; the child's exit code is returned (128 +
 * the signal when a signal ended it); on Ctrl-C, SIGTERM or SIGHUP the child is asked to stop and its
 * in-flight nodes end as canceled.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { constants } from 'node:os';
import type { Writable } from 'node:stream';
import { CommandStartError, UsageError } from '../errors.js';
import { claimOutput, type OutputClaim } from '../produce/output-claim.js';
import { checkOutputPlace, refuseOutputOverInput, STDOUT } from '../produce/output-path.js';
import type { IdSource } from '../produce/ids.js';
import { readManifest } from './manifest.js';
import { feedLines, type LiveLines } from './log-file.js';
import { LogTranslator, type LogSummary } from './log-translator.js';
import { writers } from './migrate.js';
import { commandOf } from '../telemetry/command-line.js';
import { failedSink, openSinks, type SharedSink } from './sinks.js';

export interface RecordOptions {
  out: string;
  /** program and arguments */
  argv: string[];
  otlp?: boolean;
  manifest?: string;
  /** where the engine's human progress goes (default process.stderr) */
  human?: Writable;
  ids?: IdSource;
}

export interface RecordResult {
  /** record's exit code: the command's, or 128 + the signal that ended it */
  exitCode: number;
  /** the command's own exit code; null when a signal ended it (then `signal`) */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** the stop signal runlens got while the command ran (passed on to it, or already sent to it by the terminal) */
  stoppedBy: NodeJS.Signals | null;
  interrupted: boolean;
  lines: number;
  /** why the output (-o) was not written in full, when it was not (an OTLP export that failed is only said) */
  notWritten?: string;
  /** lines that were not JSON log events */
  badLines: number;
  /** lines that began as JSON but gave no record, and lines not UTF-8 (read with U+FFFD) */
  unread: LiveLines;
  notUtf8: LiveLines;
  records: number;
  invocations: LogSummary[];
  argv: string[];
}

/** `--log-format json` is added for the engine itself, not for a replay (`cat FILE`, a script). */
export function engineArgv(argv: string[]): string[] {
  const prog = path.basename(argv[0] ?? '');
  const has = argv.some((a) => a === '--log-format' || a.startsWith('--log-format='));
  return /^dbt(\.exe)?$/i.test(prog) && !has ? [...argv, '--log-format', 'json'] : argv;
}

/**
 * The engine was asked to print only warnings and errors (`--quiet`, `-q`, `--log-level warn`, or
 * their DBT_ variables for the engine itself): its stdout has no closing lines, and only its exit
 * says the command ended.
 */
export function quietArgv(argv: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  const below = (v: string | undefined) => v !== undefined && /^(warn|error|none)$/i.test(v);
  for (const [i, a] of argv.entries()) {
    if (i === 0) continue;
    if (a === '--quiet' || a === '-q') return true;
    if (a === '--log-level' ? below(argv[i + 1]) : a.startsWith('--log-level=') && below(a.slice(12))) return true;
  }
  const engine = /^dbt(\.exe)?$/i.test(path.basename(argv[0] ?? ''));
  return engine && (/^(1|true)$/i.test(env.DBT_QUIET ?? '') || below(env.DBT_LOG_LEVEL));
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Ctrl-C from the terminal reached the command already: stdin is a terminal and runlens runs in its
 * foreground process group, which the command shares. Where the groups cannot be read (not Linux),
 * a terminal on stdin is taken as that.
 */
function terminalSendsInt(): boolean {
  if (!process.stdin.isTTY) return false;
  try {
    // /proc/self/stat after "(comm)": state ppid pgrp session tty_nr tpgid
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return f[2] === f[5];
  } catch {
    return true;
  }
}

export async function recordCommand(o: RecordOptions): Promise<RecordResult> {
  if (o.argv.length === 0) throw new UsageError('record needs a command after --, e.g. runlens record -o run.jsonl -- dbt build');
  const argv = engineArgv(o.argv);
  // a replay (`cat FILE`) of the file the output would empty
  refuseOutputOverInput(o.out, argv.slice(1));
  // Locked before the command starts: one refused (another runlens process writes the output) never runs it.
  const claim = o.out === STDOUT ? undefined : claimOutput(path.resolve(o.out));
  try {
    // as is one that cannot be written (a folder in its place): a command's run is not to be lost
    if (claim) checkOutputPlace(claim.file);
    return await record(o, argv, claim);
  } finally {
    claim?.release();
  }
}

async function record(o: RecordOptions, argv: string[], claim: OutputClaim | undefined): Promise<RecordResult> {
  const human = o.human ?? process.stderr;
  const manifest = o.manifest ? readManifest(o.manifest) : undefined;
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['inherit', 'pipe', 'inherit'] });
  // Node resumes an unread stdout when the child exits, dropping what it holds; a 'readable'
  // listener keeps it buffered until the translator reads it (a command may exit before the sinks,
  // whose modules load slowly, are open).
  child.stdout!.on('readable', () => undefined);
  // The output is opened only once the command runs: one that cannot start leaves every file as it was.
  await new Promise<void>((res, rej) => {
    child.once('spawn', res);
    child.once('error', (e: NodeJS.ErrnoException) => rej(new CommandStartError(argv[0]!, e.code)));
  });
  // ('close' comes only after its stdout, which nothing has read yet, has ended)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res, rej) => {
    child.once('error', rej);
    child.once('close', (code, signal) => res({ code, signal }));
  });
  // Ctrl-C, a CI's cancel (SIGTERM) or a hang-up stop the command, not runlens: it ends the
  // running nodes as canceled, flushes its sinks and exits 128+signal once the command has ended.
  let stoppedBy: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    stoppedBy ??= sig;
    // From a terminal the whole foreground group already got Ctrl-C (sent twice, the engine would
    // abandon its cleanup); otherwise pass it on.
    if (sig !== 'SIGINT' || !terminalSendsInt()) child.kill(sig);
  };
  for (const sig of STOP_SIGNALS) process.on(sig, onSignal);
  const unlisten = () => STOP_SIGNALS.forEach((sig) => process.off(sig, onSignal));
  // -o - whose reader goes away: not the end of runlens (cli.ts ends a command then), whose exit
  // would leave the command to die of SIGPIPE on its next line to us. The command runs to its end,
  // read and shown as before; the sink keeps the error and the output is said to be cut (exit 2).
  const cliOnStdoutError = o.out === STDOUT ? process.stdout.listeners('error') : [];
  const keepRecording = () => undefined;
  if (o.out === STDOUT) {
    process.stdout.removeAllListeners('error');
    process.stdout.on('error', keepRecording);
  }
  const restoreStdout = () => {
    if (o.out !== STDOUT) return;
    process.stdout.off('error', keepRecording);
    for (const l of cliOnStdoutError) process.stdout.on('error', l as (e: Error) => void);
  };
  let sinks: SharedSink[];
  try {
    sinks = await openSinks(o.out, { otlp: o.otlp, live: true, claim });
  } catch (e) {
    unlisten();
    restoreStdout();
    child.kill();
    throw e;
  }
  const { writerFor, errors } = writers(sinks, o.ids);
  const drain = () => Promise.all(sinks.map((s) => s.drain())).then(() => undefined);
  const t = new LogTranslator({ manifest, writerFor, commandHint: commandOf(argv.join(' ')) ?? undefined, quiet: quietArgv(argv) });
  let lines = 0;
  let badLines = 0;
  let unread: LiveLines = { count: 0, first: [] };
  let notUtf8: LiveLines = { count: 0, first: [] };
  try {
    // Each chunk's human text is written before its events are translated or the sinks waited for.
    const r = await feedLines(child.stdout!, t, { drain, human: (text) => human.write(text) });
    lines = r.lines;
    badLines = r.badLines;
    unread = r.unread;
    notUtf8 = r.notUtf8;
    const { code, signal } = await exited;
    if (stoppedBy || (signal && (STOP_SIGNALS as string[]).includes(signal))) t.interrupt();
    else t.end(undefined, { exited: true, exitedWell: code === 0 });
  } finally {
    await Promise.all(sinks.map((s) => s.finish().catch(() => undefined)));
    sinks[0]!.claim?.release();
    unlisten();
    restoreStdout();
  }
  const { code, signal } = await exited;
  const result = finish(code, signal);
  const failed = [...new Set([...errors(), ...sinks.filter((s) => s.error).map((s) => `${s.name}: ${s.error!.message}`)])];
  const output = sinks[0]!.name;
  const own = failed.filter((f) => f.startsWith(`${output}: `));
  if (own.length) result.notWritten = own.map((f) => f.slice(output.length + 2)).join('; ');
  const gone = (sinks[0]!.error as NodeJS.ErrnoException | undefined)?.code;
  if (o.out === STDOUT && (gone === 'EPIPE' || gone === 'ERR_STREAM_DESTROYED')) result.notWritten = 'its reader went away';
  // (only the OTLP export: said, and the command's exit code is kept)
  for (const f of failed.filter((f) => !own.includes(f))) human.write(`runlens: ${failedSink(f)}\n`);
  return result;

  function finish(code: number | null, signal: NodeJS.Signals | null): RecordResult {
    // the command's own exit, also after a signal it handled; 128 + the signal only when one ended it
    const exitCode = code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1);
    return { exitCode, code, signal, stoppedBy, interrupted: stoppedBy !== null || signal === 'SIGINT', lines, badLines, unread, notUtf8, records: sinks[0]!.records, invocations: t.summaries, argv };
  }
}

