/**
 * Loading inputs into the model: each file is read by DuckDB into record_rows inside a transaction,
 * keyed by content hash (the same content loaded twice adds nothing), then the derived relations of
 * the traces it touched are rebuilt.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import xxhashWasm from 'xxhash-wasm';
import { createGunzip } from 'node:zlib';
import { InputError, errorMessage } from '../errors.js';
import { detectFile, expandPaths, type InputFile, type InputFormat } from '../ingest/detect.js';
import { detectInputs, legacyKindOf, LegacyReader } from '../legacy/read-in-place.js';
import { DEFAULT_OBJECT_BYTES, LARGE_OBJECT_BYTES, isObjectSizeError, jsonBufferBytes, parseJsonError, readJsonSql } from '../ingest/jsonl.js';
import { readParquetSql } from '../ingest/parquet.js';
import { AttributesWriter } from './attributes-writer.js';
import { Db, sqlString } from './db.js';
import { deriveTouched } from './derive.js';
import { ensureSchema } from './schema.js';
import { normalizeSelect } from './normalize-sql.js';
import { timed } from './timing.js';

export interface LoadOptions {
  /** skip malformed lines instead of stopping (they are counted and located) */
  lenient?: boolean;
  /** called while a file loads: fraction of the current file done (0..1) */
  onProgress?: (p: { file: string; index: number; count: number; fraction: number }) => void;
  /** older-engine files: the manifest.json to use (default: the one beside each file) */
  manifest?: string;
}

export interface BadLine {
  line: number;
  reason: string;
}

export interface FileReport {
  path: string;
  /** the PATH arguments that named this file (itself, a folder holding it, a glob matching it) */
  args: string[];
  format: InputFormat;
  /** older-engine files: what was read, with which manifest */
  note?: string;
  records: number;
  traces: number;
  duplicate: boolean;
  skippedLines: number;
  badLines: BadLine[];
}

export interface LoadReport {
  files: FileReport[];
  /** files of folders and globs that were not read, and why */
  skipped: { path: string; reason: string }[];
  records: number;
  traces: number;
  skippedLines: number;
}

/** Open (or create) a model database and make sure its schema is current. */
export async function openModel(dbPath?: string): Promise<Db> {
  const db = await Db.open(dbPath);
  await ensureSchema(db);
  return db;
}

/**
 * Content hash for de-duplicating loads (not a security boundary): XXH64 (WebAssembly, ~2.9 GB/s
 * here) instead of MD5 (~0.6 GB/s): hashing runs beside DuckDB's read on the same two cores. The file
 * is read into one reused 4 MiB buffer: a read stream's fresh 1 MiB chunks cost twice the CPU
 * (1 GB: 230 ms against 115 ms, half of it the kernel's).
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

/** Loaded files (not receiver streams) of the size $size. */
const SAME_SIZE = `size = $size AND format IN ('jsonl', 'parquet')`;

/**
 * Whether a file's content hash is needed. A --db model keeps the hash of every file for later loads
 * to compare with. An in-memory model lives for one command: a file can only repeat the content of a
 * file of the same size loaded before it, so the others are not hashed (hashing a 1 GB file beside
 * the insert took 0.15-0.25 s of its 1.3 s); the earlier file is hashed when such a file comes.
 */
async function mayRepeatContent(db: Db, input: InputFile): Promise<boolean> {
  if (!db.inMemory) return true;
  return (await db.scalar<number>(`SELECT count(*)::INTEGER FROM files WHERE ${SAME_SIZE}`, { size: input.size })) > 0;
}

/** Hash the earlier files of this size that were loaded without one (a file that is gone since stays unhashed). */
async function hashUnhashedOfSize(db: Db, size: number): Promise<void> {
  const rows = await db.all<{ file_id: number; path: string }>(
    `SELECT file_id, path FROM files WHERE sha256 IS NULL AND ${SAME_SIZE}`,
    { size },
  );
  for (const r of rows) {
    const sha = await contentHash(r.path).catch(() => null);
    if (sha !== null) await db.run('UPDATE files SET sha256 = $sha WHERE file_id = $id', { sha, id: r.file_id });
  }
}

/** Load every file named by PATH arguments (files, folders, globs). */
export async function loadPaths(db: Db, args: string[], opts: LoadOptions = {}): Promise<LoadReport> {
  const namedBy = new Map<string, string[]>();
  for (const arg of args) for (const p of await expandPaths([arg])) namedBy.set(p, [...(namedBy.get(p) ?? []), arg]);
  const paths = [...namedBy.keys()];
  const files: FileReport[] = [];
  await db.run('CREATE TEMP TABLE IF NOT EXISTS _touched (trace_id VARCHAR)');
  await db.run('DELETE FROM _touched');
  const fresh = (await db.scalar<number>('SELECT count(*)::INTEGER FROM (SELECT 1 FROM record_rows LIMIT 1)')) === 0;
  const { inputs, skipped } = await detectInputs(paths, args);
  const legacy = new LegacyReader(opts.manifest);
  for (const [index, input] of inputs.entries()) {
    const report = legacyKindOf(input.format) ? await loadTranslated(db, legacy, input, opts, index, inputs.length) : await loadFile(db, input, opts, index, inputs.length);
    files.push({ ...report, args: namedBy.get(input.path)! });
  }
  if ((await db.scalar<number>('SELECT count(*)::INTEGER FROM _touched')) > 0) {
    await deriveTouched(db, { fresh });
    await db.run('DELETE FROM _touched');
  }
  return {
    files,
    skipped,
    records: files.reduce((a, f) => a + f.records, 0),
    traces: files.reduce((a, f) => a + f.traces, 0),
    skippedLines: files.reduce((a, f) => a + f.skippedLines, 0),
  };
}

/** An older-engine file: translated to JSONL (src/legacy), loaded as such, reported as itself. */
async function loadTranslated(db: Db, legacy: LegacyReader, input: InputFile, opts: LoadOptions, index: number, count: number): Promise<Omit<FileReport, 'args'>> {
  const t = await legacy.translate(input.path, legacyKindOf(input.format)!);
  try {
    const translated = await detectFile(t.jsonl);
    const report = await loadFile(db, { ...translated, shownAs: { path: input.path, format: input.format } }, opts, index, count);
    return { ...report, note: t.note };
  } finally {
    t.done();
  }
}

async function loadFile(db: Db, input: InputFile, opts: LoadOptions, index: number, count: number): Promise<Omit<FileReport, 'args'>> {
  const shown = input.shownAs ?? input;
  const report: Omit<FileReport, 'args'> = { path: shown.path, format: shown.format, records: 0, traces: 0, duplicate: false, skippedLines: 0, badLines: [] };
  if (input.size === 0) return report;
  const lenient = opts.lenient ?? false;
  const hashing = (await mayRepeatContent(db, input)) ? contentHash(input.path) : undefined;
  hashing?.catch(() => undefined); // awaited later; a read error must not count as unhandled meanwhile
  const fileId = (await db.scalar<number>('SELECT (coalesce(max(file_id), 0) + 1)::INTEGER FROM files')) ?? 1;
  const parquet = input.format === 'parquet' ? await readParquetSql(db, input).catch((e: unknown) => { throw translateReadError(e, input); }) : undefined;
  const parquetSelect = parquet?.select;
  // An in-memory model reads a big JSONL file in buffers of a row group (jsonBufferBytes). A --db model
  // keeps DuckDB's default: its batches of a row group or more are written to the file as they come,
  // and derive's updates of those row groups then set off checkpoints that rewrote them (1M records:
  // 8.8-10.2 s and a 650 MB file, against 6.0-6.2 s and 354 MB with the default).
  const bufferBytes = db.inMemory ? jsonBufferBytes(input) : DEFAULT_OBJECT_BYTES;
  const insert = (maxObjectBytes = bufferBytes) => {
    const select = parquetSelect ?? readJsonSql(input, { lenient, maxObjectBytes });
    return timed('insert records', () =>
      db.run(`INSERT INTO record_rows ${normalizeSelect(select, { attrStruct: input.format === 'parquet' })}`, { file_id: fileId }));
  };

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
    // A Parquet file's attributes are written on a second connection at the same time.
    if (parquet?.attributesSelect) {
      threadsBefore = await poolForTwoQueries(db);
      attributes = await AttributesWriter.start(db, parquet.attributesSelect, fileId);
    }
    await db.run('BEGIN TRANSACTION');
    try {
      try {
        await insert();
      } catch (e) {
        // A record over DuckDB's default size: read the file again with room for it.
        if (parquetSelect !== undefined || !isObjectSizeError(errorMessage(e))) throw e;
        await db.run('ROLLBACK');
        await db.run('BEGIN TRANSACTION');
        await insert(LARGE_OBJECT_BYTES);
      }
    } catch (e) {
      const err = translateReadError(e, input);
      // DuckDB's line numbers can be off by one: name the first bad line from our own scan.
      if (input.format === 'jsonl' && err instanceof InputError) {
        const [first] = await locateBadLines(input, 1);
        if (first) throw new InputError(`${first.reason} (use --lenient to skip bad lines)`, input.path, first.line);
      }
      throw err;
    }
    await attributes?.written().catch((e: unknown) => { throw translateReadError(e, input); });
    await restoreThreads();
    const sha = (await hashing) ?? null;
    if (sha !== null) await hashUnhashedOfSize(db, input.size);
    const dup = sha === null ? null : await db.scalar<string | null>('SELECT path FROM files WHERE sha256 = $sha', { sha });
    if (dup !== null) {
      await db.run('ROLLBACK');
      await attributes?.rollback();
      report.duplicate = true;
      return report;
    }
    const stats = await db.one<{ first_row: string; n: number; bad: number; first_bad: number | null }>(
      `SELECT min(rowid)::VARCHAR AS first_row, count(*)::INTEGER AS n,
              count(*) FILTER (WHERE record_type IS NULL)::INTEGER AS bad,
              (min(rowid) FILTER (WHERE record_type IS NULL) - min(rowid) + 1)::INTEGER AS first_bad
       FROM record_rows WHERE file_id = $file_id`,
      { file_id: fileId },
    );
    const n = stats?.n ?? 0;
    if (stats && stats.bad > 0 && !lenient) {
      // Valid JSON that is not a telemetry record (no record_type): stop, as for a malformed line.
      throw new InputError('not a telemetry record: record_type is missing', input.path, stats.first_bad ?? undefined, 'record_type');
    }
    report.records = n - (stats?.bad ?? 0);
    report.skippedLines = stats?.bad ?? 0;
    await db.run(
      `INSERT INTO files (file_id, path, sha256, size, format, records, first_row, skipped_lines)
       VALUES ($file_id, $path, $sha, $size, $format, $records, CAST($first_row AS BIGINT), $skipped)`,
      {
        file_id: fileId, path: shown.path, sha, size: input.size, format: shown.format, records: report.records,
        first_row: stats?.first_row ?? '0', skipped: report.skippedLines,
      },
    );
    // An INSERT's result is the number of rows it inserted: here the file's traces.
    report.traces = Number(
      await db.scalar<number | string>(
        `INSERT INTO _touched SELECT DISTINCT trace_id FROM record_rows WHERE file_id = $file_id AND trace_id IS NOT NULL`,
        { file_id: fileId },
      ),
    );
    // The attributes first: if the records' commit then failed, the catch below removes them, and a
    // process that died in between leaves attributes of no file, which the next Parquet load removes.
    await attributes?.commit();
    await db.run('COMMIT');
    recordsCommitted = true;
    // Row ids are only final after the commit (transaction-local ones are offset): the line of a
    // record is its row id minus the file's first row id, plus one.
    await db.run(`UPDATE files SET first_row = (SELECT min(rowid) FROM record_rows WHERE file_id = $file_id) WHERE file_id = $file_id`, {
      file_id: fileId,
    });
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
  if (report.skippedLines > 0) report.badLines = await locateBadLines(input);
  opts.onProgress?.({ file: shown.path, index, count, fraction: 1 });
  return report;
}

/**
 * DuckDB's pool one thread smaller while a Parquet file's rows and its attributes are inserted at once
 * (each query's own calling thread works too); returns the setting to restore. With the full pool, a
 * worker that ran short of tasks spun on the two cores: in two runs of five the inserts took 2.1-2.5 s
 * and 4.1-4.8 s of CPU instead of 1.5 s and 3.0 s (1M records; load 2.1-2.8 s -> 2.06-2.19 s).
 */
async function poolForTwoQueries(db: Db): Promise<number> {
  const before = await db.scalar<number>(`SELECT current_setting('threads')::INTEGER`);
  await db.run(`SET threads = ${Math.max(1, before - 1)}`);
  return before;
}

function translateReadError(e: unknown, input: InputFile): Error {
  const msg = errorMessage(e);
  if (input.format === 'parquet') return new InputError(`cannot read Parquet: ${msg.replace(/^[A-Za-z ]+Error: /, '')}`, input.path);
  if (/Malformed JSON|JSON|Expected/.test(msg)) {
    const { line, reason } = parseJsonError(msg);
    return new InputError(`malformed JSON: ${reason}${line === undefined ? '' : ' (use --lenient to skip bad lines)'}`, input.path, line);
  }
  if (/gzip|GZIP|compress/i.test(msg)) return new InputError(`cannot decompress: ${msg}`, input.path);
  return new InputError(msg.replace(/^[A-Za-z ]+Error: /, ''), input.path);
}

/** Only after a lenient load skipped lines: find where they are (a text scan, not the bulk path). */
async function locateBadLines(input: InputFile, max = 20): Promise<BadLine[]> {
  const out: BadLine[] = [];
  const raw = createReadStream(input.path);
  const rl = createInterface({ input: input.gzip ? raw.pipe(createGunzip()) : raw, crlfDelay: Infinity });
  let n = 0;
  for await (const line of rl) {
    n++;
    if (line.trim() === '') continue;
    let reason: string | undefined;
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v !== 'object' || v === null || Array.isArray(v)) reason = 'not a JSON object';
      else if (!('record_type' in v) && !('recordType' in v)) reason = 'record_type: missing';
    } catch (e) {
      reason = `malformed JSON: ${errorMessage(e)}`;
    }
    if (reason) {
      out.push({ line: n, reason });
      if (out.length >= max) break;
    }
  }
  rl.close();
  raw.destroy();
  return out;
}
