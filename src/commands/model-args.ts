/** Options shared by every command that reads telemetry (PATH... and/or --db FILE) and opening the model. */
import { accessSync, constants, statSync } from 'node:fs';
import type { Argv } from 'yargs';
import { InputError, OutputError, RunlensError, UsageError, errorMessage, systemReason } from '../errors.js';
import { createProgress, progressEnabled } from '../render/progress.js';
import type { Db } from '../store/db.js';
import type { LoadReport } from '../store/load.js';
import { plural } from '../render/plural.js';
import { printableLine } from '../render/printable.js';
import { listPositional } from './options.js';

export interface ModelArgs {
  paths?: string[];
  db?: string;
  lenient?: boolean;
  /** the command receives OTLP into the model (`gate --receive`): it writes the --db model, like `receive` */
  receive?: boolean;
  manifest?: string;
}

export function withModelOptions<T>(y: Argv<T>) {
  return y
    .positional('paths', listPositional("telemetry (JSONL, optionally .gz, or Parquet) and the older engine's run_results.json, sources.json and JSON logs: files, folders (searched for them) or globs"))
    .option('db', { type: 'string', requiresArg: true, describe: 'a DuckDB file holding a model saved earlier by `runlens load --db` (runs, spans, nodes...), used instead of or beside PATHs; reading commands never change it' })
    .option('lenient', { type: 'boolean', default: false, describe: 'skip malformed JSONL lines (counted and located) instead of stopping' })
    .option('manifest', { type: 'string', requiresArg: true, describe: 'older engine: the manifest.json to read run_results.json and logs with (default: the one beside each file)' });
}

const NOTHING_LOADED: LoadReport = { files: [], skipped: [], records: 0, traces: 0, alreadyPresent: 0, skippedLines: 0 };

/**
 * Open the model and load PATHs into it; the caller must close the returned db. Reading never
 * writes: only `writes` (load) and commands that receive open a --db model to write it.
 */
export async function openAndLoad(a: ModelArgs, opts: { requireInput?: boolean; writes?: boolean } = {}): Promise<{ db: Db; report: LoadReport }> {
  const paths = a.paths ?? [];
  if (paths.length === 0 && !a.db && opts.requireInput !== false) throw new UsageError('give at least one PATH or --db FILE');
  if (a.manifest !== undefined) readableManifest(a.manifest);
  // DuckDB: loaded when a command runs, not for --help
  const [{ loadCommand, loadPaths }, { openModelFor }] = await Promise.all([import('../store/load.js'), import('../store/open.js')]);
  const db = await openModelFor({
    db: a.db, writes: opts.writes === true || a.receive === true, adding: paths.length > 0,
    // gate --receive judges the model it receives into
    shows: opts.writes !== true,
    load: paths.length > 0 ? loadCommand(paths, a) : undefined,
  });
  if (paths.length === 0) return { db, report: NOTHING_LOADED };
  try {
    const bar = createProgress('loading');
    let report: LoadReport;
    try {
      report = await loadPaths(db, paths, {
        lenient: a.lenient,
        manifest: a.manifest,
        onProgress: progressEnabled() ? (p) => bar.update((p.index + p.fraction) / p.count, p.file) : undefined,
      });
    } finally {
      // an error goes on a line of its own, not after the bar
      bar.done();
    }
    reportSkipped(report);
    reportTranslated(report);
    return { db, report };
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * A --manifest given must be there, whatever the input: it is read only for older-engine files, so
 * a mistyped one would otherwise pass unnoticed beside telemetry alone.
 */
function readableManifest(file: string): void {
  try {
    accessSync(file, constants.R_OK);
    if (statSync(file).isDirectory()) throw Object.assign(new Error('a folder'), { code: 'EISDIR' });
  } catch (e) {
    throw new InputError(`not a readable manifest.json: ${systemReason(e)}`, file, undefined, '--manifest');
  }
}

/** Lenient loads say how many lines were skipped and where: every one by number, the first with why (stderr, so results stay parseable). */
export function reportSkipped(report: LoadReport): void {
  for (const f of report.files) {
    if (f.skippedLines === 0) continue;
    const where = f.badLines.map((b) => printableLine(`${f.path}:${b.line}: ${b.field && b.field !== '-' ? `${b.field}: ` : ''}${b.reason}`)).join('\n  ');
    const others = f.skippedLines - f.badLines.length;
    const more = others > 0 ? `\n  ... and ${others} more: ${f.format === 'parquet' ? 'rows' : 'lines'} ${lineRanges(f.moreBadLines)}` : '';
    process.stderr.write(`runlens: skipped ${plural(f.skippedLines, f.format === 'parquet' ? 'row' : 'line')} in ${f.path}:\n  ${where}${more}\n`);
  }
}

/** Older-engine files read in place: what each was read as, and with which manifest (stderr). */
export function reportTranslated(report: LoadReport): void {
  for (const f of report.files) {
    if (!f.note) continue;
    const aside = f.setAside ? `; set aside: the engine's telemetry of the same run is loaded, and it stands for the run` : '';
    process.stderr.write(`runlens: ${f.path}: ${f.note}${aside}\n`);
  }
  for (const s of report.skipped) process.stderr.write(`runlens: ${s.path}: skipped: ${s.reason}\n`);
}

const lineRanges = (ranges: [number, number][]) => ranges.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)).join(', ');

export async function withModel<R>(
  a: ModelArgs,
  fn: (db: Db, report: LoadReport) => Promise<R>,
  opts?: { requireInput?: boolean; writes?: boolean },
): Promise<R> {
  const { db, report } = await openAndLoad(a, opts).catch((e: unknown) => {
    throw modelFileError(e, a.db);
  });
  try {
    return await fn(db, report);
  } catch (e) {
    throw modelFileError(e, a.db);
  } finally {
    db.close();
  }
}

/**
 * DuckDB's errors of the storage itself (a damaged file, a full disk) while a --db model is read or
 * written: about the model file, not runlens. Errors of input files are named where they are read.
 */
function modelFileError(e: unknown, dbPath: string | undefined): unknown {
  const message = errorMessage(e);
  if (!dbPath || e instanceof RunlensError) return e;
  // DuckDB says a write failed in the system's words (a commit whose WAL could not be written)
  const full = Object.entries(DISK_FULL).find(([words]) => message.includes(words));
  if (full) return new OutputError(dbPath, systemReason({ code: full[1] }), 'the load did not finish; run it again once there is room');
  if (!/^(IO Error|FATAL Error): /.test(message)) return e;
  return new InputError(`the model file cannot be read or written: ${message.replace(/^[A-Z]+ Error: /, '')}`, dbPath);
}

/** DuckDB's words (the system's strerror) for a write that found no room, and their error codes. */
const DISK_FULL: Record<string, string> = { 'No space left on device': 'ENOSPC', 'File too large': 'EFBIG', 'Disk quota exceeded': 'EDQUOT' };

/** An input with no records at all: say so clearly. */
export async function assertNotEmpty(db: Db, a: ModelArgs): Promise<void> {
  const n = await db.scalar<number>('SELECT count(*)::INTEGER FROM record_rows WHERE record_type IS NOT NULL');
  if (n === 0) throw new UsageError(`no telemetry records in ${[...(a.paths ?? []), ...(a.db ? [a.db] : [])].join(', ') || 'the input'}`);
}
