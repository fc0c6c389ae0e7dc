import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Db } from '../../src/store/db.js';
import { deduplicated, jsonRows, streamRows } from '../../src/store/json-rows.js';

/** Rows as the node API's own JSON reader gives them, columns by their keys: what the fast path must reproduce. */
async function reference(db: Db, sql: string, params?: Record<string, string | number>) {
  const r = await db.conn.runAndReadAll(sql, params);
  return { columns: r.deduplicatedColumnNames(), types: r.columnTypes().map((t) => t.toString()), rows: r.getRowObjectsJson() };
}

/** The per-row JSON result, undefined when the statement goes the usual way. */
const fastRows = async (...a: Parameters<typeof jsonRows>) => (await jsonRows(...a)).result;

describe('query results read as one JSON text per row', () => {
  let db: Db;
  beforeAll(async () => {
    db = await Db.open();
  });
  afterAll(() => db.close());

  it("gives the node API reader's values for every type it takes, edge values included", async () => {
    const sql = `
      SELECT * FROM (VALUES
        (true, 1::TINYINT, -2::SMALLINT, 3::INTEGER, 255::UTINYINT, 65535::USMALLINT, 4294967295::UINTEGER,
         9223372036854775807::BIGINT, 18446744073709551615::UBIGINT, (-170141183460469231731687303715884105727)::HUGEINT,
         12.500::DECIMAL(9,3), 1234567890123456789.0123456789::DECIMAL(38,10), 0.1::FLOAT, 0.1 + 0.2, 1e-300, 1.7976931348623157e308,
         -0.0::DOUBLE, 'quote " backslash \\ newline
 tab	 é 🚀', '{"b":1,"a":[2]}'::JSON),
        (NULL, NULL, NULL, NULL, NULL, NULL, NULL, (-9223372036854775808)::BIGINT, 0::UBIGINT, NULL, -0.001::DECIMAL(9,3), NULL,
         'nan'::FLOAT, 'nan'::DOUBLE, 'inf'::DOUBLE, '-inf'::DOUBLE, NULL, '', NULL)
      ) t(b, ti, si, i, uti, usi, ui, bi, ubi, hi, d, dd, f, x, tiny, huge, negzero, s, j)`;
    const fast = await fastRows(db.conn, sql);
    expect(fast).toBeDefined();
    expect(fast).toEqual(await reference(db, sql));
    expect(fast!.rows[0]!.bi).toBe('9223372036854775807');
    expect(fast!.rows[1]!.x).toBe('NaN');
    expect(fast!.rows[0]!.j).toBe('{"b":1,"a":[2]}');
  });

  it('keeps the order, binds parameters and names repeated columns like the reader', async () => {
    const sql = `SELECT (i * 7919) % 5003 AS k, 'n' || i AS k, i::DOUBLE / 3 AS third FROM range(6000) r(i) WHERE i % 2 = $odd AND i < $n ORDER BY 1 DESC, third`;
    const params = { n: 5000, odd: 1 };
    const fast = await fastRows(db.conn, sql, params);
    expect(fast!.rows).toHaveLength(2500);
    expect(fast).toEqual(await reference(db, sql, params));
    expect(Object.keys(fast!.rows[0]!)).toEqual(['k', 'k:1', 'third']);
  });

  it('an empty result has its columns and no rows', async () => {
    const sql = `SELECT 1::INTEGER AS a, 'x' AS b WHERE false`;
    const fast = await fastRows(db.conn, sql);
    expect(fast).toEqual({ columns: ['a', 'b'], types: ['INTEGER', 'VARCHAR'], rows: [] });
    expect(fast).toEqual(await reference(db, sql));
  });

  it('leaves other types and statements to the usual reader', async () => {
    expect(await fastRows(db.conn, `SELECT TIMESTAMP '2026-01-05 10:00:00' AS t`)).toBeUndefined();
    expect(await fastRows(db.conn, `SELECT [1, 2] AS l`)).toBeUndefined();
    expect(await fastRows(db.conn, `PRAGMA version`)).toBeUndefined();
    expect(await fastRows(db.conn, `SELEC 1`)).toBeUndefined();
    // the usual way reuses the statement prepared once; one that cannot be prepared is read from its text (its error)
    expect((await jsonRows(db.conn, `PRAGMA version`)).prepared).toBeDefined();
    expect((await jsonRows(db.conn, `SELEC 1`)).prepared).toBeUndefined();
    expect(await fastRows(db.conn, `SELECT x FROM range($n) r(x)`, { n: 2 })).toBeUndefined(); // types known only when bound
    // and Db.table still reads them
    expect((await db.table(`SELECT TIMESTAMP '2026-01-05 10:00:00' AS t`)).rows).toEqual([{ t: '2026-01-05 10:00:00' }]);
    expect((await db.table(`SELECT x FROM range($n) r(x)`, { n: 2 })).rows).toEqual([{ x: '0' }, { x: '1' }]);
  });

  it('names each column once, a repeated name taking a suffix no other column has', () => {
    expect(deduplicated(['k', 'k', 'third'])).toEqual(['k', 'k:1', 'third']);
    expect(deduplicated(['x', 'x:1', 'x'])).toEqual(['x', 'x:1', 'x:2']);
    expect(deduplicated(['x', 'x', 'x:1'])).toEqual(['x', 'x:2', 'x:1']);
    expect(deduplicated(['__proto__', '__proto__'])).toEqual(['__proto__', '__proto__:1']);
  });

  it('streams rows in chunks, times in ISO 8601 on both ways of reading', async () => {
    const all: unknown[][] = [];
    const s = await streamRows(db.conn, `SELECT range AS n, TIMESTAMP '2024-01-02 03:04:05.5' AS t FROM range(5000)`);
    expect(s.columns).toEqual(['n', 't']);
    let chunks = 0;
    for await (const rows of s.chunks) {
      chunks++;
      all.push(...rows.slice(0, 1));
    }
    expect(chunks).toBeGreaterThan(1);
    expect(all[0]).toEqual(['0', '2024-01-02T03:04:05.500000Z']);
    // a list has no per-row JSON expression: the node API's values, times as ISO too
    const l = await streamRows(db.conn, `SELECT [TIMESTAMPTZ '2024-01-02 03:04:05+00'] AS l, 1 AS l`);
    expect(l.columns).toEqual(['l', 'l:1']);
    const rows: unknown[][] = [];
    for await (const c of l.chunks) rows.push(...c);
    expect(rows).toEqual([[['2024-01-02T03:04:05.000000Z'], 1]]);
  });
});
