/**
 * Query results of many rows, read as one JSON text per row. Reading values one at a time through
 * the node API is slow per row; DuckDB writing each row as a JSON array and JSON.parse reading it is
 * much cheaper. The values are those the node API's JSON reader gives (64-bit integers and decimals
 * as strings, non-finite doubles as "NaN"/"Infinity"); results with any other column type are read
 * the usual way.
 */
import type { DuckDBConnection, DuckDBPreparedStatement, DuckDBTypeId as TypeId, DuckDBValue } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';

const { DuckDBTypeId, StatementType } = duckdb;

import type { Row } from './db.js';

type Params = DuckDBValue[] | Record<string, DuckDBValue>;

/** Column expressions giving each type's JSON as the node API's JSON reader gives it; undefined: not here. */
function valueJson(c: string, type: TypeId): string | undefined {
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

/** Result column names as the node API's row objects name them (a repeated name gets `:1`, `:2`, ...). */
function deduplicated(names: string[]): string[] {
  const seen: Record<string, number> = {};
  return names.map((n) => {
    const k = (seen[n] = (seen[n] ?? 0) + 1);
    return k > 1 ? `${n}:${k - 1}` : n;
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
  const n = p.columnCount;
  const names: string[] = [];
  const types: string[] = [];
  const exprs: string[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const e = valueJson(`_c${i}`, p.columnTypeId(i));
      if (e === undefined) return usual;
      names.push(p.columnName(i));
      types.push(p.columnType(i).toString());
      exprs.push(e);
    }
  } catch {
    return usual; // a type known only once parameters are bound (the node API throws on it)
  }
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
    const o: Row = {};
    for (let c = 0; c < n; c++) o[keys[c]!] = a[c];
    rows[r] = o;
  }
  // columns by their keys: two of one name stay two columns, each with its own values
  return { result: { columns: keys, types, rows } };
}
