import type { DuckDBConnection, DuckDBInstance, DuckDBResultReader, DuckDBValue } from '@duckdb/node-api';
import { NO_EXTENSION_FETCH, duckdb } from './duckdb.js';
import { InputError, UsageError, engineMessage, errorMessage } from '../errors.js';
import { deduplicated, jsonRows, streamRows, type RowStream } from './json-rows.js';
import { timed } from './timing.js';
import { refuseOutsideStep } from '../service/job-step.js';

export type Row = Record<string, unknown>;

/**
 * JSON-safe row objects built from row arrays: the reader's own getRowObjectsJson is slow per row
 * and would be most of a saved query's time.
 */
function rowObjects(r: DuckDBResultReader): Row[] {
  const names = deduplicated(r.columnNames());
  const rows = r.getRowsJson();
  const out = new Array<Row>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    // (no prototype: a column named __proto__ is a value like another)
    const o = Object.create(null) as Row;
    for (let c = 0; c < names.length; c++) o[names[c]!] = row[c];
    out[i] = o;
  }
  return out;
}

const NOT_A_MODEL = 'not a runlens model (not a DuckDB database file; `runlens load PATH --db FILE` makes models)';

/** Rows per string joined by DuckDB in Db.rowsText. */
const ROWS_TEXT_GROUP = 8192;
/** Db.rowsText's escapes inside a value: 0x02 and the letter after it -> the character. */
const ROWS_TEXT_UNESCAPED: Record<string, string> = { '2': '\x02', r: '\x1e', u: '\x1f' };

/**
 * An in-memory model is never checkpointed: a checkpoint there only rewrites row groups nobody will
 * read from disk. DuckDB starts one on its own after a commit that wrote more than the threshold (16 MB
 * by default), and after a load whose row groups were written straight from large batches the
 * derive step's commit would set off a costly one.
 */
const IN_MEMORY_SETTINGS = { checkpoint_threshold: '1TB' };
const IN_MEMORY = ':memory:';

/**
 * One DuckDB database (in memory, or a file made by `runlens load --db`). Small results come back
 * as JSON-safe row objects (64-bit integers as strings); bulk work never leaves DuckDB.
 */
export class Db {
  private constructor(
    readonly instance: DuckDBInstance,
    readonly conn: DuckDBConnection,
    readonly path: string,
    /** opened read-only (a --db model under a reading command): DuckDB refuses every write */
    readonly readOnly = false,
  ) {}

  /** the load (its command line) this model file was made for, its mark written with the tables (src/store/open.ts) */
  madeForLoad?: string;

  /** A model that lives for one process (no --db file). */
  get inMemory(): boolean {
    return this.path === IN_MEMORY;
  }

  static async open(path = IN_MEMORY, opts: { readOnly?: boolean } = {}): Promise<Db> {
    if (path !== IN_MEMORY) refuseOutsideStep(path, '--db');
    let instance: DuckDBInstance;
    try {
      // (no block_allocator_memory: it reserves DuckDB's whole memory limit in every process, and a
      // process holding a few models could no longer start a child)
      instance = await duckdb.DuckDBInstance.create(path, {
        ...NO_EXTENSION_FETCH,
        ...(path === IN_MEMORY ? IN_MEMORY_SETTINGS : {}),
        ...(opts.readOnly ? { access_mode: 'READ_ONLY' } : {}),
      });
    } catch (e) {
      throw openError(errorMessage(e), path, opts.readOnly ?? false);
    }
    const conn = await instance.connect();
    if (path !== IN_MEMORY) {
      // DuckDB opens a data file (Parquet, JSON, CSV) as an in-memory database over it: nothing
      // written there would be kept
      const file = (await conn.runAndReadAll('SELECT path FROM duckdb_databases() WHERE database_name = current_database()')).getRowsJson()[0]?.[0];
      if (file === null || file === undefined) {
        conn.closeSync();
        instance.closeSync();
        throw new InputError(NOT_A_MODEL, path);
      }
    }
    return new Db(instance, conn, path, opts.readOnly ?? false);
  }

  async run(sql: string, params?: DuckDBValue[] | Record<string, DuckDBValue>): Promise<void> {
    await this.conn.run(sql, params);
  }

  /**
   * Statements that return nothing, sent in one call: each call is a round trip through the event
   * loop, and a busy loop (the receiver decoding requests) holds each one back, whatever the
   * statement costs. With RUNLENS_TIMING each runs alone, under its label.
   * Values must be inlined: a statement with parameters is two more round trips. `transaction`: all
   * or nothing (a failed statement leaves the transaction open; it is rolled back here).
   */
  async script(steps: readonly (readonly [label: string, sql: string])[], opts: { transaction?: boolean } = {}): Promise<void> {
    const all = opts.transaction ? [['begin', 'BEGIN TRANSACTION'] as const, ...steps, ['commit', 'COMMIT'] as const] : steps;
    try {
      if (process.env.RUNLENS_TIMING) {
        for (const [label, sql] of all) await timed(label, () => this.run(sql));
      } else if (all.length) {
        // own lines: a statement may end in a -- comment
        await this.run(all.map(([, sql]) => sql).join('\n;\n'));
      }
    } catch (e) {
      if (opts.transaction) await this.run('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  /** A write refused because the model is open read-only, said so (DuckDB names its database and the statement type). */
  private readOnlyError(e: unknown): unknown {
    if (this.readOnly && /read-only mode/.test(errorMessage(e))) {
      return new UsageError(`${this.path}: the model is read-only here: reading commands never change it (\`runlens load PATH --db ${this.path}\` adds files)`);
    }
    return e;
  }

  async all<T = Row>(sql: string, params?: DuckDBValue[] | Record<string, DuckDBValue>): Promise<T[]> {
    const r = await this.conn.runAndReadAll(sql, params);
    return rowObjects(r) as T[];
  }

  /**
   * Many rows, fastest: DuckDB joins them into delimited strings and JS splits them (creating one
   * JS string per value through the native API is slow). The rows are joined in groups of
   * ROWS_TEXT_GROUP, which DuckDB aggregates in parallel, unlike one ordered string_agg.
   * `numberedBy`: the query's column that numbers its rows 1..N in the order wanted (a window over
   * the query to number them again would be a sizeable part of a tree's time). `columns` name the
   * result's columns and how to read them back. A value keeps every character: 0x02 escapes the
   * separators (0x1E, 0x1F) and itself inside a value, and alone marks NULL.
   */
  async rowsText<T>(
    sql: string,
    columns: string[],
    numberedBy: string,
    params: Record<string, DuckDBValue> | undefined,
    make: (fields: (string | null)[]) => T,
  ): Promise<T[]> {
    const escaped = (c: string) => `replace(replace(replace(CAST("${c}" AS VARCHAR), chr(2), chr(2) || '2'), chr(30), chr(2) || 'r'), chr(31), chr(2) || 'u')`;
    const line = `concat_ws(chr(31), ${columns.map((c) => `coalesce(${escaped(c)}, chr(2))`).join(', ')})`;
    const agg = `SELECT string_agg(${line}, chr(30) ORDER BY "${numberedBy}") FROM (${sql}) q
      GROUP BY ("${numberedBy}" - 1) // ${ROWS_TEXT_GROUP} ORDER BY ("${numberedBy}" - 1) // ${ROWS_TEXT_GROUP}`;
    const out: T[] = [];
    for (const [blob] of (await this.conn.runAndReadAll(agg, params)).getRows()) {
      if (typeof blob !== 'string' || blob === '') continue;
      for (const text of blob.split('\x1e')) {
        const f: (string | null)[] = text.split('\x1f');
        for (let i = 0; i < f.length; i++) {
          if (f[i] === '\x02') f[i] = null;
          else if (f[i]!.includes('\x02')) f[i] = f[i]!.replace(/\x02(.)/g, (_, c: string) => ROWS_TEXT_UNESCAPED[c]!);
        }
        out.push(make(f));
      }
    }
    return out;
  }

  /**
   * The parameter names of SQL that only reads, or a UsageError: free SQL never writes, neither the
   * model (opened read-only, or read into memory) nor a file (COPY, EXPORT, ATTACH). The statements'
   * kinds come from DuckDB's parser alone (json_serialize_sql takes SELECTs only: DESCRIBE, SHOW,
   * SUMMARIZE and FROM-first queries are SELECTs to it): preparing a statement can already act, an
   * EXPORT DATABASE makes its folder.
   */
  async readingParameters(sql: string): Promise<string[]> {
    const parsed = JSON.parse((await this.scalar<string>('SELECT json_serialize_sql($sql::VARCHAR)', { sql })) ?? '{}') as {
      error?: boolean; error_type?: string; error_message?: string; statements?: unknown[];
    };
    if (parsed.error && parsed.error_type === 'parser') throw new Error(`Parser Error: ${parsed.error_message}`);
    if (parsed.error) {
      throw new UsageError(
        'query --sql only reads: the model is read-only here, and so are files. It runs a SELECT statement (DESCRIBE, SHOW, SUMMARIZE and FROM-first queries included; a PIVOT with its IN list)',
      );
    }
    // one result per command: a second statement's would not be shown
    const count = parsed.statements?.length ?? 1;
    if (count > 1) throw new UsageError(`query --sql runs one statement, and prints its result; this SQL has ${count}`);
    const p = await this.conn.prepare(sql);
    return Array.from({ length: p.parameterCount }, (_, i) => p.parameterName(i + 1));
  }

  /** Rows plus column names and DuckDB type names, for renderers (table, csv). */
  async table(sql: string, params?: DuckDBValue[] | Record<string, DuckDBValue>): Promise<{ columns: string[]; types: string[]; rows: Row[] }> {
    try {
      const { result, prepared } = await jsonRows(this.conn, sql, params);
      if (result) return result;
      if (prepared && params) prepared.bind(params);
      const r = prepared ? await prepared.runAndReadAll() : await this.conn.runAndReadAll(sql, params);
      return { columns: deduplicated(r.columnNames()), types: r.columnTypes().map((t) => t.toString()), rows: rowObjects(r) };
    } catch (e) {
      throw this.readOnlyError(e);
    }
  }

  /** A result of any size, read chunk by chunk (`streamRows`): for output that goes as it comes. */
  async stream(sql: string, params?: DuckDBValue[] | Record<string, DuckDBValue>): Promise<RowStream> {
    try {
      return await streamRows(this.conn, sql, params);
    } catch (e) {
      throw this.readOnlyError(e);
    }
  }

  async one<T = Row>(sql: string, params?: DuckDBValue[] | Record<string, DuckDBValue>): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  async scalar<T = unknown>(sql: string, params?: DuckDBValue[] | Record<string, DuckDBValue>): Promise<T> {
    const r = await this.conn.runAndReadAll(sql, params);
    const rows = r.getRowsJson();
    return (rows[0]?.[0] ?? null) as T;
  }

  close(): void {
    this.conn.closeSync();
    this.instance.closeSync();
  }
}

/**
 * DuckDB's refusal to open a database file, in the user's terms. A file is locked by the one process
 * that writes it (DuckDB allows one writer, and no reader beside it): a running `load --db` or
 * `receive --db`; or, to a writer, by the commands reading it (any number of them at once).
 */
function openError(message: string, path: string, readOnly: boolean): InputError {
  const lock = /Could not set lock on file[^]*?\(PID (\d+)\)/.exec(message);
  if (lock || /Conflicting lock/.test(message)) {
    const holders = readOnly
      ? 'such as a `runlens load --db` or `runlens receive --db`'
      : 'such as a `runlens load --db` or `runlens receive --db`, or a command reading it (`runlens explore --db`, a long `runlens query --db`)';
    const wait = readOnly ? 'Wait for a load to finish' : 'Wait for a load or a reading command to finish (quit explore)';
    return new InputError(
      `the model is in use by another process${lock ? ` (PID ${lock[1]})` : ''}, ${holders}: ` +
        `DuckDB lets one process write a model, and no other open it meanwhile. ${wait}; to watch runs as they ` +
        `arrive, receive with \`runlens explore --receive --db ${path}\` instead, or stop the receiver to read the model`,
      path,
    );
  }
  // (a file DuckDB takes for another engine's database, such as SQLite's, asks for an extension runlens does not load)
  if (/not a valid DuckDB database file|database file with version|Invalid Input Error.*header|in-memory database in read-only mode|Extension .* not found/i.test(message)) {
    return new InputError(NOT_A_MODEL, path);
  }
  return new InputError(`cannot open the model: ${message.replace(/^[A-Za-z ]+Error: /, '')}`, path);
}

export { sqlIn, sqlString } from './sql-text.js';
