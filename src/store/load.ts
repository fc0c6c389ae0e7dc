/**
 * Loading inputs into the model: each file is read by DuckDB into record_rows inside a transaction,
 * keyed by content hash (the same content loaded twice adds nothing), then the derived relations of
 * the traces it touched are rebuilt.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import xxhashWasm from 'xxhash-wasm';
import { InputError, RunlensError, engineMessage, errorMessage } from '../errors.js';
import { detectFile, namedFiles, type InputFile, type InputFormat } from '../ingest/detect.js';
import { detectInputs, legacyKindOf, LegacyReader } from '../legacy/read-in-place.js';
import { DEFAULT_OBJECT_BYTES, LARGE_OBJECT_BYTES, isObjectSizeError, jsonBufferBytes, parseJsonError, readJsonSql } from '../ingest/jsonl.js';
import { LISTED_BAD_LINES, addToRanges, blankLinesAsObjects, scanBeside, vetLines, type BadLine, type LinesVetted } from '../ingest/jsonl-lines.js';
import { parquetProblemRanges, parquetProblems, readParquetSql } from '../ingest/parquet.js';
import { shellWords } from '../render/shell-words.js';
import { AttributesWriter } from './attributes-writer.js';
import { Db, sqlString } from './db.js';
import { hideRecordsAlreadyPresent } from './dedupe.js';
import { ensureSchema, finishPendingLoads, markLoadSql, unfinishedLoads, unmarkLoad } from './schema.js';
import { normalizeSelect } from './normalize-sql.js';
import { StagedJsonl } from './staged-jsonl.js';
import { timed } from './timing.js';

export interface LoadOptions {
  /** skip malformed lines instead of stopping (they are counted and located) */
  lenient?: boolean;
  /** called while a file loads: fraction of the current file done (0..1) */
  onProgress?: (p: { file: string; index: number; count: number; fraction: number }) => void;
  /** older-engine files: the manifest.json to use (default: the one beside each file) */
  manifest?: string;
}

export type { BadLine } from '../ingest/jsonl-lines.js';

export interface FileReport {
  path: string;
  /** the PATH arguments that named this file (itself, a folder holding it, a glob matching it) */
  args: string[];
  format: InputFormat;
  /** older-engine files: what was read, with which manifest */
  note?: string;
  records: number;
  traces: number;
  /** nothing was added: every record of the file is already in the model */
  duplicate: boolean;
  /** records of the file that were already in the model (from any earlier input), not added again */
  alreadyPresent: number;
  /** spans already in the model that ended well in their copy and in error in this file's: they took the error */
  worseTaken: number;
  /**
   * records of a translated file (the engine's own run_results.json) set aside because the model holds
   * the engine's telemetry of the same run; or, on a telemetry file, records of earlier translations
   * of its runs set aside for it (src/store/dedupe.ts)
   */
  setAside: number;
  earlierSetAside: number;
  /** runs of the file the model already held (from an earlier input), in whole or in part */
  tracesShared: number;
  skippedLines: number;
  /** the first skipped lines (LISTED_BAD_LINES), with reasons */
  badLines: BadLine[];
  /** the other skipped lines, as [first, last] ranges */
  moreBadLines: [number, number][];
}

export interface LoadReport {
  files: FileReport[];
  /** files of folders and globs that were not read, and why */
  skipped: { path: string; reason: string }[];
  records: number;
  traces: number;
  alreadyPresent: number;
  skippedLines: number;
}

export { openModel } from './open.js';

/**
 * Content hash for de-duplicating loads (not a security boundary): XXH64 (WebAssembly), much
 * faster than MD5, since hashing runs beside DuckDB's read on the same cores. The file is read into
 * one reused 4 MiB buffer: a read stream's fresh chunks cost more CPU.
 */
const xxhash = xxhashWasm();
const HASH_READ_BYTES = 4 << 20;
async function contentHash(path: string): Promise<string> {
  const h = (await xxhash).create64();
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(HASH_READ_BYTES);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length);
      if (bytesRead === 0) break;
      h.update(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return `xxh64:${h.digest().toString(16).padStart(16, '0')}`;
}

/** A load's command line, with the options that change what it loads: what a mark records and a reader suggests running again. */
export function loadCommand(args: string[], opts: Pick<LoadOptions, 'lenient' | 'manifest'> = {}): string {
  return shellWords(['load', ...(opts.lenient ? ['--lenient'] : []), ...(opts.manifest !== undefined ? ['--manifest', opts.manifest] : []), ...args]);
}

/** Load every file named by PATH arguments (files, folders, globs). */
export async function loadPaths(db: Db, args: string[], opts: LoadOptions = {}): Promise<LoadReport> {
  // A --db file keeps a mark of the load until its end: a reader then knows of one that failed to
  // commit (a full disk) or was killed, instead of answering from a model without its files. Marks
  // of other loads stay: this one does not give the model what those were given.
  const thisLoad = loadCommand(args, opts);
  const earlier = db.inMemory ? [] : await unfinishedLoads(db);
  // a run again of a load that did not complete (its mark written before this process, not with a model made for it)
  const again = earlier.includes(thisLoad) && db.madeForLoad !== thisLoad;
  if (!db.inMemory && !earlier.includes(thisLoad)) await db.run(markLoadSql(thisLoad));
  const files: FileReport[] = [];
  await db.run('CREATE TEMP TABLE IF NOT EXISTS _touched (trace_id VARCHAR)');
  await db.run('DELETE FROM _touched');
  const fresh = (await db.scalar<number>('SELECT count(*)::INTEGER FROM (SELECT 1 FROM record_rows LIMIT 1)')) === 0;
  let skipped: LoadReport['skipped'] = [];
  // the inputs, and the one being read, for a refusal to say what the model kept
  let inputs: InputFile[] = [];
  let at = -1;
  const staged = new StagedJsonl();
  try {
    const namedBy = await namedFiles(args);
    const detected = await detectInputs([...namedBy.keys()], args);
    inputs = detected.inputs;
    skipped = detected.skipped;
    const legacy = new LegacyReader(opts.manifest, opts.lenient ?? false);
    // DuckDB tracks a query's progress only when asked; runlens draws the bar itself
    if (opts.onProgress) await db.run('SET enable_progress_bar = true; SET enable_progress_bar_print = false');
    for (const [index, input] of inputs.entries()) {
      at = index;
      // Records can only be present already when the model had some, or an earlier file added some.
      const place: FilePlace = { index, count: inputs.length, compare: !fresh || files.some((f) => f.records > 0) };
      if (legacyKindOf(input.format)) {
        files.push({ ...(await loadTranslated(db, legacy, input, opts, place)), args: namedBy.get(input.path)! });
        continue;
      }
      if (await staged.ready(db, inputs, index)) place.staged = staged;
      files.push({ ...(await loadFile(db, input, opts, place)), args: namedBy.get(input.path)! });
    }
    await staged.drop(db);
  } catch (e) {
    await staged.drop(db).catch(() => undefined);
    // The files committed before the one that failed are finished all the same (derived), as they
    // would be at the model's next opening.
    await finishPendingLoads(db, { touched: true }).catch(() => undefined);
    // Input it refuses stops a load as meant (that file rolled back, the ones before it whole): the
    // model holds what it held before plus whole files. Run again, the load still did not complete.
    if (!db.inMemory && !again && e instanceof RunlensError) await unmarkLoad(db, thisLoad).catch(() => undefined);
    if (!db.inMemory && e instanceof RunlensError && at >= 0) e.message += keptBefore(files, inputs.slice(at + 1));
    throw e;
  }
  await finishPendingLoads(db, { fresh, touched: true });
  if (!db.inMemory) await unmarkLoad(db, thisLoad);
  return {
    files,
    skipped,
    records: files.reduce((a, f) => a + f.records, 0),
    traces: files.reduce((a, f) => a + f.traces, 0),
    alreadyPresent: files.reduce((a, f) => a + f.alreadyPresent, 0),
    skippedLines: files.reduce((a, f) => a + f.skippedLines, 0),
  };
}

/** What a --db model kept of a load refused at one file: the whole files before it, and those it did not read. */
function keptBefore(files: readonly FileReport[], unread: readonly InputFile[]): string {
  const kept = files.length ? `kept in the model: ${files.map((f) => f.path).join(', ')}` : '';
  const notRead = unread.length ? `not read: ${unread.map((i) => (i.shownAs ?? i).path).join(', ')}` : '';
  const said = [kept, notRead].filter(Boolean).join('; ');
  return said ? `\n(${said})` : '';
}

interface FilePlace {
  index: number;
  count: number;
  /** compare the file's records with those already in the model */
  compare: boolean;
  /** the file's rows wait in a batch read with others */
  staged?: StagedJsonl;
}

/** The rows of file `fileId` in record_rows: its first row id, how many, and how many DuckDB could not take (record_type NULL). */
interface RowStats {
  first_row: string;
  n: number;
  bad: number;
}

const rowStats = async (db: Db, fileId: number): Promise<RowStats> =>
  (await db.one<RowStats>(
    `SELECT coalesce(min(rowid), 0)::VARCHAR AS first_row, count(*)::INTEGER AS n, count(*) FILTER (WHERE record_type IS NULL)::INTEGER AS bad
     FROM record_rows WHERE file_id = $file_id`,
    { file_id: fileId },
  ))!;

/** An older-engine file: translated to JSONL (src/legacy), loaded as such, reported as itself. */
async function loadTranslated(db: Db, legacy: LegacyReader, input: InputFile, opts: LoadOptions, place: FilePlace): Promise<Omit<FileReport, 'args'>> {
  const t = await legacy.translate(input.path, legacyKindOf(input.format)!);
  try {
    const translated = await detectFile(t.jsonl);
    const report = await loadFile(db, { ...translated, shownAs: { path: input.path, format: input.format } }, opts, place);
    // the log's damaged lines, skipped by --lenient, count as the file's skipped lines (a gate cannot pass)
    const bad = t.malformed;
    const listed = bad.slice(0, LISTED_BAD_LINES);
    const more: [number, number][] = [];
    for (const b of bad.slice(LISTED_BAD_LINES)) addToRanges(more, b.line);
    return { ...report, note: t.note, skippedLines: report.skippedLines + bad.length, badLines: [...listed, ...report.badLines], moreBadLines: [...more, ...report.moreBadLines] };
  } finally {
    t.done();
  }
}

async function loadFile(db: Db, input: InputFile, opts: LoadOptions, { index, count, compare, staged }: FilePlace): Promise<Omit<FileReport, 'args'>> {
  const shown = input.shownAs ?? input;
  const report: Omit<FileReport, 'args'> = {
    path: shown.path, format: shown.format, records: 0, traces: 0, duplicate: false, alreadyPresent: 0, worseTaken: 0, setAside: 0, earlierSetAside: 0, tracesShared: 0,
    skippedLines: 0, badLines: [], moreBadLines: [],
  };
  if (input.size === 0) return report;
  const lenient = opts.lenient ?? false;
  // A --db model keeps every file's content hash: loading the same file again is then a no-op without
  // reading it into DuckDB. An in-memory model lives for one command, where the record check suffices.
  const hashing = db.inMemory ? undefined : contentHash(input.path);
  hashing?.catch(() => undefined); // awaited later; a read error must not count as unhandled meanwhile
  const fileId = (await db.scalar<number>('SELECT (coalesce(max(file_id), 0) + 1)::INTEGER FROM files')) ?? 1;
  const parquet = input.format === 'parquet' ? await readParquetSql(db, input).catch((e: unknown) => { throw translateReadError(e, input); }) : undefined;
  if (parquet?.note) report.note = parquet.note;
  const insert = (select: string) =>
    timed('insert records', () =>
      db.run(`INSERT INTO record_rows ${normalizeSelect(select, { attrStruct: input.format === 'parquet' })}`, { file_id: fileId }));

  const timer = opts.onProgress
    ? setInterval(() => {
        const pr = db.conn.progress;
        if (pr.percentage >= 0) opts.onProgress!({ file: shown.path, index, count, fraction: Math.min(1, pr.percentage / 100) });
      }, 100)
    : undefined;
  let attributes: AttributesWriter | undefined;
  let threadsBefore: number | undefined;
  const restoreThreads = async () => {
    if (threadsBefore === undefined) return;
    await db.run(`SET threads = ${threadsBefore}`);
    threadsBefore = undefined;
  };
  let recordsCommitted = false;
  try {
    let stats: RowStats;
    // lines DuckDB read as rows of no record ({}) only so that the records after them keep their lines
    let blankLines = 0;
    if (parquet) {
      // A Parquet file's attributes are written on a second connection at the same time.
      if (parquet.attributesSelect) {
        threadsBefore = await poolForTwoQueries(db);
        attributes = await AttributesWriter.start(db, parquet.attributesSelect, fileId);
      }
      await db.run('BEGIN TRANSACTION');
      await insert(parquet.select).catch((e: unknown) => { throw translateReadError(e, input); });
      await attributes?.written().catch((e: unknown) => { throw translateReadError(e, input); });
      await restoreThreads();
      stats = await rowStats(db, fileId);
      if (stats.bad > 0) Object.assign(report, await parquetBadRows(db, input, lenient));
    } else if (staged) {
      await db.run('BEGIN TRANSACTION');
      await staged.copy(db, input, fileId);
      stats = await rowStats(db, fileId);
    } else {
      await db.run('BEGIN TRANSACTION');
      const read = await insertJsonl(db, input, { fileId, lenient, insert });
      stats = read.stats;
      blankLines = read.blankLines;
      if (read.vetted) Object.assign(report, { badLines: read.vetted.listed, moreBadLines: read.vetted.more });
    }
    const sha = (await hashing) ?? null;
    const same = sha === null ? undefined : await db.one<{ file_id: number }>('SELECT file_id FROM files WHERE sha256 = $sha', { sha });
    if (same !== undefined) {
      await db.run('ROLLBACK');
      await attributes?.rollback();
      // what the file holds, not what it added when first loaded (none, if its records were there then)
      report.duplicate = true;
      report.alreadyPresent = stats.n - stats.bad;
      report.skippedLines = stats.bad - blankLines;
      return report;
    }
    report.skippedLines = stats.bad - blankLines;
    const present = compare ? await hideRecordsAlreadyPresent(db, fileId, stats.n - stats.bad) : undefined;
    report.alreadyPresent = present?.present ?? 0;
    report.worseTaken = present?.worseTaken ?? 0;
    report.setAside = present?.setAside ?? 0;
    report.earlierSetAside = present?.earlierSetAside ?? 0;
    report.tracesShared = present?.tracesShared ?? 0;
    report.records = stats.n - stats.bad - report.alreadyPresent - report.setAside;
    if (report.records === 0 && report.alreadyPresent + report.setAside > 0 && report.worseTaken === 0 && report.earlierSetAside === 0) {
      await db.run('ROLLBACK');
      await attributes?.rollback();
      report.duplicate = true;
      return report;
    }
    await db.run(
      `INSERT INTO files (file_id, path, sha256, size, format, records, first_row, skipped_lines)
       VALUES ($file_id, $path, $sha, $size, $format, $records, CAST($first_row AS BIGINT), $skipped)`,
      {
        file_id: fileId, path: shown.path, sha, size: input.size, format: shown.format, records: report.records,
        first_row: stats.first_row, skipped: report.skippedLines,
      },
    );
    // An INSERT's result is the number of rows it inserted: here the file's traces (for derive, at the end).
    report.traces = Number(
      await db.scalar<number | string>(
        `INSERT INTO _touched SELECT DISTINCT trace_id FROM record_rows WHERE file_id = $file_id AND trace_id IS NOT NULL AND record_type IS NOT NULL`,
        { file_id: fileId },
      ),
    );
    // Committed with the records: the steps after the commit are done even if this process is not there to do them.
    await db.run('INSERT INTO load_pending VALUES ($file_id)', { file_id: fileId });
    // The attributes first: if the records' commit then failed, the catch below removes them, and a
    // process that died in between leaves attributes of no file, which the next Parquet load removes.
    await attributes?.commit();
    await db.run('COMMIT');
    recordsCommitted = true;
  } catch (e) {
    await db.run('ROLLBACK').catch(() => undefined);
    await attributes?.rollback();
    if (attributes?.committed && !recordsCommitted) await db.run('DELETE FROM record_attributes WHERE file_id = $file_id', { file_id: fileId }).catch(() => undefined);
    await hashing?.catch(() => undefined);
    throw e;
  } finally {
    await restoreThreads().catch(() => undefined);
    if (timer) clearInterval(timer);
    attributes?.close();
  }
  opts.onProgress?.({ file: shown.path, index, count, fraction: 1 });
  return report;
}

/**
 * A JSONL file's records into record_rows, in the open transaction, exactly: DuckDB reads the file
 * (readJsonSql, with its checks), and only when it reports a problem (an error, or rows it could not
 * take) are the lines read here to find which and why. Strict: the first bad line is the error.
 * Lenient: DuckDB reads a copy in which every bad line is `{}`, so that no valid line is lost with a
 * bad one and every record keeps its line.
 */
async function insertJsonl(
  db: Db,
  input: InputFile,
  o: { fileId: number; lenient: boolean; insert: (select: string) => Promise<void> },
): Promise<{ stats: RowStats; vetted?: LinesVetted; blankLines: number }> {
  // An in-memory model reads a big JSONL file in buffers of a row group (jsonBufferBytes). A --db model
  // keeps DuckDB's default: its batches of a row group or more are written to the file as they come,
  // and derive's updates of those row groups then set off checkpoints that rewrite them (a slower
  // load and a bigger file).
  const bufferBytes = db.inMemory ? jsonBufferBytes(input) : DEFAULT_OBJECT_BYTES;
  const read = async (r: { path?: string; checks: boolean }) => {
    try {
      await o.insert(readJsonSql(input, { ...r, maxObjectBytes: bufferBytes }));
    } catch (e) {
      // A record over DuckDB's default size: read the file again with room for it.
      if (!isObjectSizeError(errorMessage(e))) throw e;
      await restart(db);
      await o.insert(readJsonSql(input, { ...r, maxObjectBytes: LARGE_OBJECT_BYTES }));
    }
  };
  // What DuckDB's reader forgives (a trailing comma, a truncated gzip) is looked for beside it.
  const scanned = scanBeside(input.path, input.gzip);
  scanned.catch(() => undefined);
  let failure: unknown;
  try {
    await read({ checks: true });
  } catch (e) {
    if (/INTERRUPT/i.test(errorMessage(e))) throw e;
    failure = e;
  }
  const { trailingComma, blankLines, notJsonSpace } = await scanned;
  const vet = { gzip: input.gzip, keyStyle: input.keyStyle };
  // every line is known to hold a record (or to be blank)
  let linesHold = false;
  if (failure === undefined) {
    const stats = await rowStats(db, o.fileId);
    // a comma before a closing brace (maybe in a string), a vertical tab: only a line that JSON.parse refuses is a fault
    linesHold = stats.bad === 0 && (!(trailingComma || notJsonSpace) || (await vetLines(input.path, { ...vet, stopAtFirst: true })).count === 0);
    if (linesHold && !blankLines) return { stats, blankLines: 0 };
  }
  await restart(db);
  if (!o.lenient && !linesHold) {
    const first = (await vetLines(input.path, { ...vet, stopAtFirst: true })).listed[0];
    if (first) throw new InputError(`${first.reason} (use --lenient to skip bad lines)`, input.path, first.line, first.field);
  }
  const dir = o.lenient || blankLines ? await mkdtemp(path.join(tmpdir(), 'runlens-lines-')) : undefined;
  try {
    const copy = dir && path.join(dir, 'lines.jsonl');
    if (!o.lenient) {
      // Every line holds a record: what DuckDB tripped on is not a line's fault (or its checks were too
      // wary), or blank lines, which DuckDB's reader skips, put the rows after them off their lines.
      const blank = copy ? await blankLinesAsObjects(input.path, input.gzip, copy) : 0;
      await read({ path: copy, checks: false }).catch((e: unknown) => { throw translateReadError(failure ?? e, input); });
      return { stats: await rowStats(db, o.fileId), blankLines: blank };
    }
    const vetted = await vetLines(input.path, { ...vet, copyTo: copy });
    await read({ path: copy, checks: false }).catch((e: unknown) => { throw translateReadError(e, input); });
    return { stats: await rowStats(db, o.fileId), vetted, blankLines: vetted.blank };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/** Roll the open transaction back and begin another (the file's rows are read again). */
async function restart(db: Db): Promise<void> {
  await db.run('ROLLBACK');
  await db.run('BEGIN TRANSACTION');
}

/** A Parquet file's rows the model cannot hold: strict, the first is the error; lenient, they are listed. */
async function parquetBadRows(db: Db, input: InputFile, lenient: boolean): Promise<Pick<FileReport, 'badLines' | 'moreBadLines'>> {
  const listed = await parquetProblems(db, input, lenient ? LISTED_BAD_LINES : 1);
  const first = listed[0];
  if (!lenient && first) throw new InputError(`${first.reason} (use --lenient to skip bad rows)`, input.path, first.line, first.field);
  const rest = await parquetProblemRanges(db, input, LISTED_BAD_LINES);
  return { badLines: listed, moreBadLines: rest };
}

/**
 * DuckDB's pool one thread smaller while a Parquet file's rows and its attributes are inserted at once
 * (each query's own calling thread works too); returns the setting to restore. With the full pool, a
 * worker that runs short of tasks spins on a core the other query needs.
 */
async function poolForTwoQueries(db: Db): Promise<number> {
  const before = await db.scalar<number>(`SELECT current_setting('threads')::INTEGER`);
  await db.run(`SET threads = ${Math.max(1, before - 1)}`);
  return before;
}

function translateReadError(e: unknown, input: InputFile): Error {
  // already said in the input's words (a column of the wrong type)
  if (e instanceof InputError) return e;
  const msg = errorMessage(e);
  if (input.format === 'parquet') return new InputError(`not a readable Parquet file: ${engineMessage(e)}`, input.path);
  if (/Malformed JSON|JSON|Expected/.test(msg)) {
    const { line, reason } = parseJsonError(msg);
    return new InputError(`malformed JSON: ${reason}${line === undefined ? '' : ' (use --lenient to skip bad lines)'}`, input.path, line);
  }
  if (/gzip|GZIP|compress/i.test(msg)) return new InputError(`cannot decompress: ${engineMessage(e)}`, input.path);
  return new InputError(engineMessage(e), input.path);
}
