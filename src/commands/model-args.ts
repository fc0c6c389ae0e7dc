/** Options shared by every command that reads telemetry (PATH... and/or --db FILE) and opening the model. */
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { createProgress } from '../render/progress.js';
import type { Db } from '../store/db.js';
import { loadPaths, openModel, type LoadReport } from '../store/load.js';

export interface ModelArgs {
  paths?: string[];
  db?: string;
  lenient?: boolean;
  manifest?: string;
}

export function withModelOptions<T>(y: Argv<T>) {
  return y
    .positional('paths', { type: 'string', array: true, describe: 'telemetry (JSONL, optionally .gz, or Parquet) and the older engine\'s run_results.json, sources.json and JSON logs: files, folders, globs' })
    .option('db', { type: 'string', describe: 'a DuckDB file made by `runlens load --db` (used instead of or beside PATHs)' })
    .option('lenient', { type: 'boolean', default: false, describe: 'skip malformed JSONL lines (counted and located) instead of stopping' })
    .option('manifest', { type: 'string', describe: 'older engine: the manifest.json to read run_results.json and logs with (default: the one beside each file)' });
}

/** Open the model and load PATHs into it; the caller must close the returned db. */
export async function openAndLoad(a: ModelArgs, opts: { requireInput?: boolean } = {}): Promise<{ db: Db; report: LoadReport }> {
  const paths = a.paths ?? [];
  if (paths.length === 0 && !a.db && opts.requireInput !== false) throw new UsageError('give at least one PATH or --db FILE');
  const db = await openModel(a.db);
  try {
    const bar = createProgress('loading');
    const report = await loadPaths(db, paths, {
      lenient: a.lenient,
      manifest: a.manifest,
      onProgress: (p) => bar.update((p.index + p.fraction) / p.count, p.file),
    });
    bar.done();
    reportSkipped(report);
    reportTranslated(report);
    return { db, report };
  } catch (e) {
    db.close();
    throw e;
  }
}

/** Lenient loads say how many lines were skipped and where (stderr, so results stay parseable). */
export function reportSkipped(report: LoadReport): void {
  for (const f of report.files) {
    if (f.skippedLines === 0) continue;
    const where = f.badLines.map((b) => `${f.path}:${b.line}: ${b.reason}`).join('\n  ');
    const more = f.skippedLines > f.badLines.length ? `\n  ... and ${f.skippedLines - f.badLines.length} more` : '';
    process.stderr.write(`runlens: skipped ${f.skippedLines} malformed line(s) in ${f.path}:\n  ${where}${more}\n`);
  }
}

/** Older-engine files read in place: what each was read as, and with which manifest (stderr). */
export function reportTranslated(report: LoadReport): void {
  for (const f of report.files) if (f.note) process.stderr.write(`runlens: ${f.path}: ${f.note}\n`);
  for (const s of report.skipped) process.stderr.write(`runlens: ${s.path}: skipped: ${s.reason}\n`);
}

export async function withModel<R>(a: ModelArgs, fn: (db: Db, report: LoadReport) => Promise<R>, opts?: { requireInput?: boolean }): Promise<R> {
  const { db, report } = await openAndLoad(a, opts);
  try {
    return await fn(db, report);
  } finally {
    db.close();
  }
}

/** An input with no records at all: say so clearly. */
export async function assertNotEmpty(db: Db, a: ModelArgs): Promise<void> {
  const n = await db.scalar<number>('SELECT count(*)::INTEGER FROM record_rows WHERE record_type IS NOT NULL');
  if (n === 0) throw new UsageError(`no telemetry records in ${[...(a.paths ?? []), ...(a.db ? [a.db] : [])].join(', ') || 'the input'}`);
}
