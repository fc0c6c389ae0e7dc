/**
 * Where a command's telemetry output goes. `-o FILE` is FILE, relative to the working folder; `-o -`
 * is stdout (JSONL); `--project-dir DIR` asks for the engine's layout: DIR/logs/NAME for JSONL and
 * DIR/target/metadata/NAME for Parquet, NAME being -o or otel.jsonl / otel.parquet.
 * Shared by the producing commands and the service, which finds a `runlens` step's output the same way.
 */
import { existsSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { InputError, OutputError, RunlensError, UsageError, systemReason } from '../errors.js';
import { besideFile, openWriteStream, removeOnStop } from './output-claim.js';
import { refuseOutsideStep } from '../service/job-step.js';
import { makeFolders } from '../folders.js';

export const STDOUT = '-';

export interface OutputChoice {
  output?: string;
  projectDir?: string;
  /** the format asked for, which the name's extension must agree with */
  format?: FileFormat;
}

export type FileFormat = 'jsonl' | 'parquet';

/** A telemetry file's format by its extension, or null when the extension says none. */
export function formatOf(path: string): FileFormat | null {
  const p = path.toLowerCase();
  if (p.endsWith('.parquet')) return 'parquet';
  if (p.endsWith('.jsonl') || p.endsWith('.jsonl.gz') || p.endsWith('.json') || p.endsWith('.ndjson')) return 'jsonl';
  return null;
}

/**
 * The format an output's name picks (`-` is JSONL on stdout); a name that picks none, or one that
 * contradicts the format asked for (`--format parquet` with `-o x.jsonl`), is a usage error.
 */
export function outputFormat(output: string, asked?: FileFormat, askedBy = '--format'): FileFormat {
  if (output === STDOUT) {
    if (asked === 'parquet') throw new UsageError('Parquet cannot be written to stdout (its footer comes last); name a .parquet file');
    return 'jsonl';
  }
  const named = formatOf(output);
  if (!named) throw new UsageError(`cannot tell the output format of ${output}: use .jsonl, .jsonl.gz or .parquet, or - for JSONL on stdout`);
  if (asked && asked !== named) throw new UsageError(`${askedBy} ${asked} and -o ${output} disagree: the extension picks the format; name a .${asked} file`);
  return named;
}

/** STDOUT or an absolute file path. */
export function outputPath(o: OutputChoice, cwd = process.cwd()): string {
  if (o.output === STDOUT) {
    if (o.projectDir !== undefined) throw new UsageError('-o - (stdout) and --project-dir do not go together');
    if (o.format === 'parquet') throw new UsageError('Parquet cannot be written to stdout (its footer comes last); name a .parquet file with -o');
    return STDOUT;
  }
  if (o.projectDir === undefined) {
    if (!o.output) throw new UsageError('name the output: -o FILE, -o - for stdout, or --project-dir DIR for the engine layout');
    outputFormat(o.output, o.format);
    return path.resolve(cwd, o.output);
  }
  const name = o.output ?? `otel.${o.format ?? 'jsonl'}`;
  // a name with a folder in it (../x.jsonl) would put the file elsewhere than the layout says
  if (path.isAbsolute(name) || /[\\/]/.test(name) || name === '..' || name === '.') throw new UsageError(`--output ${name}: with --project-dir, give a file name (it goes under the project's logs/ or target/metadata/)`);
  const format = outputFormat(name, o.format);
  return path.resolve(cwd, o.projectDir, format === 'parquet' ? path.join('target', 'metadata') : 'logs', name);
}

/** How to name an output in a message: as the user wrote it, or "stdout". */
export function outputLabel(resolved: string, cwd = process.cwd()): string {
  if (resolved === STDOUT) return 'stdout';
  const rel = path.relative(cwd, resolved);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : resolved;
}

/** A path with the symlinks of its existing part resolved: a file not written yet is named through its folder's real path. */
function realPath(p: string): string {
  const abs = path.resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const dir = path.dirname(abs);
    return dir === abs ? abs : path.join(realPath(dir), path.basename(abs));
  }
}

/** The same file: the same path (symlinks resolved), or the same device and inode (a hard link). */
function sameFile(a: string, b: string): boolean {
  if (path.resolve(a) === path.resolve(b) || realPath(a) === realPath(b)) return true;
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * Refuse an output that is one of the inputs: the output is emptied (opened for writing, or removed
 * to be written afresh) before the input is read to its end, so the input would be lost.
 */
export function refuseOutputOverInput(output: string, inputs: readonly string[]): void {
  if (output === STDOUT) return;
  const input = inputs.find((i) => sameFile(output, i));
  if (input !== undefined)
    throw new UsageError(`the output ${outputLabel(output)} is also an input${path.resolve(input) === path.resolve(output) ? '' : ` (${input})`}: writing it would destroy the input; name another output file`);
}

/**
 * Whether an output file can be written, found out before anything depends on it (receive answering
 * records 200, record starting its command): its folder is made, a folder in its place is refused,
 * and a file is made beside it and removed. A file system error names the path (exit 2).
 */
export function checkOutputPlace(file: string): void {
  refuseOutsideStep(file, 'output');
  makeFolders(path.dirname(file));
  if (existsSync(file) && statSync(file).isDirectory()) throw new InputError('it is a folder, not a file', file);
  const tmp = besideFile(file);
  writeFileSync(tmp, '');
  rmSync(tmp, { force: true });
}

/**
 * Refuse two outputs of one command that are one file (`receive --db F --jsonl F`): each writer
 * would overwrite what the other wrote, destroying a model that was there. Outputs not given are undefined.
 */
export function refuseSharedOutputs(outputs: readonly (readonly [flag: string, file: string | undefined])[]): void {
  const given = outputs.filter((o): o is readonly [string, string] => o[1] !== undefined && o[1] !== STDOUT);
  for (let i = 0; i < given.length; i++)
    for (let j = i + 1; j < given.length; j++)
      if (sameFile(given[i]![1], given[j]![1]))
        throw new UsageError(`${given[i]![0]} and ${given[j]![0]} name the same file (${given[i]![1]}${path.resolve(given[i]![1]) === path.resolve(given[j]![1]) ? '' : `, ${given[j]![1]}`}): each would overwrite the other; name different files`);
}

/**
 * An error met writing an output, told by the output's name: a system error naming the file written
 * beside it (opening it) names the output instead; one without a file (a write that failed: a full
 * disk, a file too large) becomes `OUTPUT: not written (reason)`. Other errors are left as they are.
 */
export function notWritten(e: unknown, output: string, tmp?: string): unknown {
  const err = e as NodeJS.ErrnoException | undefined;
  if (err?.path !== undefined) {
    if (err.path === tmp) err.path = output;
    return e;
  }
  if (e instanceof RunlensError || !err?.code) return e;
  return new OutputError(output === STDOUT ? 'stdout' : outputLabel(path.resolve(output)), systemReason(err));
}

/**
 * Write a whole output file (an HTML report, a fetched artifact): written beside and renamed, so a
 * write that fails leaves no part of it under its name (nor the file written beside); its folder is created.
 */
export async function writeOutputFile(file: string, data: string | Uint8Array): Promise<void> {
  refuseOutsideStep(file, 'output');
  const tmp = besideFile(file);
  const untrack = removeOnStop(tmp);
  try {
    makeFolders(path.dirname(path.resolve(file)));
    await finished(openWriteStream(tmp).end(data));
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw notWritten(e, file, tmp);
  } finally {
    untrack();
  }
}

/**
 * Write to stdout and resolve once it is written. A stdout that fails or whose reader went away
 * ends the command from its 'error' listener (cli.ts), so this never resolves then.
 */
export function writeStdout(data: string | Uint8Array): Promise<void> {
  return new Promise((res) => process.stdout.write(data, (e) => !e && res()));
}
