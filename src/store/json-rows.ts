/**
 * Query results of many rows, read as one JSON text per row. Reading values one at a time through
 * the node API is slow per row; DuckDB writing each row as a JSON array and JSON.parse reading it is
 * much cheaper. The values are those the node API's JSON reader gives (64-bit integers and decimals
 * as strings, non-finite doubles as "NaN"/"Infinity"); results with any other column type are read
 * the usual way.
 */
import type { DuckDBConnection, DuckDBDataChunk, DuckDBPreparedStatement, DuckDBResult, DuckDBTypeId as TypeId, DuckDBValue, DuckDBValueConverter, Json } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';
import { errorOfCutStream, guardStream, type StreamGuard } from './stream-guard.js';
import { errorMessage } from '../errors.js';

const { DuckDBTypeId, StatementType, JsonDuckDBValueConverter, DuckDBDateValue, DuckDBStructType, DuckDBStructValue } = duckdb;

import type { Row } from './db.js';

type Params = DuckDBValue[] | Record<string, DuckDBValue>;

/** ISO 8601 in UTC with microseconds, as strftime writes it. */
const ISO = `'%Y-%m-%dT%H:%M:%S.%fZ'`;

/**
 * Column expressions giving each type's JSON as the node API's JSON reader gives it; undefined: not
 * here. `isoTimes`: times as ISO 8601 instead (the reader writes `2024-01-02 03:04:05.123456`).
 */
function valueJson(c: string, type: TypeId, isoTimes = false): string | undefined {
  if (isoTimes) {
    switch (type) {
      case DuckDBTypeId.TIMESTAMP:
      case DuckDBTypeId.TIMESTAMP_S:
      case DuckDBTypeId.TIMESTAMP_MS:
      case DuckDBTypeId.TIMESTAMP_NS:
        return `strftime(${c}::TIMESTAMP, ${ISO})`;
      case DuckDBTypeId.TIMESTAMP_TZ:
        return `strftime(timezone('UTC', ${c}), ${ISO})`;
      case DuckDBTypeId.DATE:
      case DuckDBTypeId.TIME:
      case DuckDBTypeId.UUID:
        return `${c}::VARCHAR`;
    }
  }
  switch (type) {
    case DuckDBTypeId.BOOLEAN:
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
      return c;
    // VARCHAR too: a JSON-typed column would otherwise be embedded as JSON, not as its text
    case DuckDBTypeId.VARCHAR:
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.DECIMAL:
      return `${c}::VARCHAR`;
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      // a FLOAT is read as the double it widens to
      return `CASE WHEN isnan(${c}::DOUBLE) THEN '"NaN"'::JSON WHEN isinf(${c}::DOUBLE) THEN (CASE WHEN ${c} > 0 THEN '"Infinity"' ELSE '"-Infinity"' END)::JSON ELSE to_json(${c}::DOUBLE) END`;
    default:
      return undefined;
  }
}

/**
 * Result column names, each once: a repeated name gets `:1`, `:2`, ... (as the node API names them),
 * skipping a name another column already has (`x, "x:1", x` -> `x, x:1, x:2`).
 */
export function deduplicated(names: string[]): string[] {
  const taken = new Set(names);
  const used = new Set<string>();
  return names.map((n) => {
    let name = n;
    for (let k = 1; used.has(name) || (name !== n && taken.has(name)); k++) name = `${n}:${k}`;
    used.add(name);
    return name;
  });
}

export interface JsonRowsResult {
  columns: string[];
  types: string[];
  rows: Row[];
}

/**
 * A SELECT's rows through per-row JSON text (`result`). When this statement is not a plain SELECT or
 * has a column type outside the ones above, the caller reads it the usual way: from `prepared` when
 * it could be prepared (so it is not parsed again), else from the SQL text, which reports the error.
 */
export async function jsonRows(
  conn: DuckDBConnection,
  sql: string,
  params?: Params,
): Promise<{ result?: JsonRowsResult; prepared?: DuckDBPreparedStatement }> {
  let p: DuckDBPreparedStatement;
  try {
    p = await conn.prepare(sql);
  } catch {
    return {};
  }
  const usual = { prepared: p };
  if (p.statementType !== StatementType.SELECT || p.columnCount === 0) return usual;
  const fast = fastExprs(p, false);
  if (!fast) return usual;
  const { names, types, exprs } = fast;
  const n = names.length;
  const aliases = names.map((_, i) => `_c${i}`).join(', ');
  // A projection over the subquery keeps its ORDER BY. Statements that read as SELECT but cannot be
  // a subquery (PRAGMA, SHOW, ...) go the usual way.
  let wrapped: DuckDBPreparedStatement;
  try {
    wrapped = await conn.prepare(`SELECT json_array(${exprs.join(', ')})::VARCHAR FROM (${sql}) AS _q(${aliases})`);
  } catch {
    return usual;
  }
  if (params) wrapped.bind(params);
  // (no rows: the reader has no columns at all)
  const texts = ((await wrapped.runAndReadAll()).getColumnsJson()[0] ?? []) as string[];
  const keys = deduplicated(names);
  const rows = new Array<Row>(texts.length);
  for (let r = 0; r < texts.length; r++) {
    const a = JSON.parse(texts[r]!) as unknown[];
    // (no prototype: a column named __proto__ is a value like another)
    const o = Object.create(null) as Row;
    for (let c = 0; c < n; c++) o[keys[c]!] = a[c];
    rows[r] = o;
  }
  // columns by their keys: two of one name stay two columns, each with its own values
  return { result: { columns: keys, types, rows } };
}

/** A result read in chunks: its columns (named once each, as `deduplicated` names them) and its rows as value arrays. */
export interface RowStream {
  columns: string[];
  types: string[];
  chunks: AsyncIterable<unknown[][]>;
}

/** Timestamps of every precision and zone, which the stream writes in ISO 8601. */
const TIMES = new Set<TypeId>([DuckDBTypeId.TIMESTAMP, DuckDBTypeId.TIMESTAMP_S, DuckDBTypeId.TIMESTAMP_MS, DuckDBTypeId.TIMESTAMP_NS, DuckDBTypeId.TIMESTAMP_TZ]);

/** `2024-01-02 03:04:05.5` or `...+00` (DuckDB's text of a time in UTC) as `2024-01-02T03:04:05.500000Z`. */
function isoTime(text: string): string {
  const m = /^(-?\d+-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?(?:\+00(?::00)?)?$/.exec(text);
  return m ? `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0').slice(0, 6)}Z` : text;
}

/**
 * The node API's JSON values, times in ISO 8601 (at any depth). A STRUCT is an object without a
 * prototype, each field's type taken by its position: a field named __proto__ is one like another
 * (the node API's own converter loses it).
 */
const isoJson: DuckDBValueConverter<Json> = (value, type, self) => {
  if (value === null) return JsonDuckDBValueConverter(value, type, self);
  if (TIMES.has(type.typeId)) return isoTime(String(value));
  // the node API writes a date from its day count, infinite ones as made-up years
  if (value instanceof DuckDBDateValue && !value.isFinite) return value.days > 0 ? 'infinity' : '-infinity';
  if (type instanceof DuckDBStructType && value instanceof DuckDBStructValue) {
    const o = Object.create(null) as Record<string, Json>;
    type.entryNames.forEach((name, e) => {
      o[name] = self(value.entries[name] ?? null, type.entryTypes[e]!, self);
    });
    return o;
  }
  return JsonDuckDBValueConverter(value, type, self);
};

/**
 * A statement's rows chunk by chunk (DuckDB's streaming result): however many rows it has, only a
 * chunk of them is in memory at a time. Values as `jsonRows` gives them, times in ISO 8601. The first
 * chunk is read here, so an error of the statement is thrown before any row is handed over.
 */
export async function streamRows(conn: DuckDBConnection, sql: string, params?: Params): Promise<RowStream> {
  const guard = await guardStream(conn);
  try {
    return await streamGuarded(conn, sql, params, guard);
  } catch (e) {
    await guard.release();
    throw e;
  }
}

async function streamGuarded(conn: DuckDBConnection, sql: string, params: Params | undefined, guard: StreamGuard): Promise<RowStream> {
  const p = await conn.prepare(sql);
  if (params) p.bind(params);
  let result: DuckDBResult | undefined;
  let streamed = sql;
  let read: (chunk: DuckDBDataChunk) => unknown[][] = (chunk) => chunk.convertRows(isoJson);
  let names: string[] = [];
  let types: string[] = [];
  const fast = p.statementType === StatementType.SELECT && p.columnCount > 0 ? fastExprs(p, true) : undefined;
  if (fast) {
    try {
      const wrappedSql = `SELECT json_array(${fast.exprs.join(', ')})::VARCHAR FROM (${sql}) AS _q(${fast.names.map((_, i) => `_c${i}`).join(', ')})`;
      const wrapped = await conn.prepare(wrappedSql);
      if (params) wrapped.bind(params);
      result = await wrapped.stream();
      streamed = wrappedSql;
      ({ names, types } = fast);
      read = (chunk) => (chunk.getColumnValues(0) as string[]).map((t) => JSON.parse(t) as unknown[]);
    } catch {
      result = undefined; // not a subquery (PRAGMA, SHOW, ...), or its error: the usual way says it
      await guard.restart(); // (a failed statement leaves the guard's transaction aborted)
    }
  }
  if (!result) {
    result = await p.stream();
    names = result.columnNames();
    types = result.columnTypes().map((t) => t.toString());
  }
  const first = await result.fetchChunk();
  const r = result;
  async function* chunks(): AsyncGenerator<unknown[][]> {
    let rows = 0;
    try {
      for (let c = first; c && c.rowCount > 0; c = await r.fetchChunk()) {
        rows += c.rowCount;
        yield read(c);
      }
      if (await guard.whole()) return;
    } finally {
      await guard.release();
    }
    const e = await errorOfCutStream(conn, streamed, params);
    const text = errorMessage(e).replace(/\n+LINE \d+:[\s\S]*$/, '');
    const before = rows === 0 ? '' : rows === 1 ? '; the row written before it is not the whole result' : `; the ${rows} rows written before it are not the whole result`;
    throw new Error(text + before);
  }
  return { columns: deduplicated(names), types, chunks: chunks() };
}

/** The per-row JSON expressions of a prepared SELECT's columns, undefined when one has a type outside them. */
function fastExprs(p: DuckDBPreparedStatement, isoTimes: boolean): { names: string[]; types: string[]; exprs: string[] } | undefined {
  const names: string[] = [];
  const types: string[] = [];
  const exprs: string[] = [];
  try {
    for (let i = 0; i < p.columnCount; i++) {
      const e = valueJson(`_c${i}`, p.columnTypeId(i), isoTimes);
      if (e === undefined) return undefined;
      names.push(p.columnName(i));
      types.push(p.columnType(i).toString());
      exprs.push(e);
    }
  } catch {
    return undefined; // a type known only once parameters are bound (the node API throws on it)
  }
  return { names, types, exprs };
}
