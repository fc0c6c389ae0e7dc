/** How `query` hands over its rows: every row, every column, in any size, as the formats promise. */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const F = 'samples/failed-build.jsonl';
const lines = (s: string) => s.split('\n').filter(Boolean);

describe('query output', () => {
  it('prints a table, csv and json of 200k rows whole', () => {
    const table = runCli(['query', '--sql', 'SELECT range FROM range(200000)', F]);
    expect(table.stderr).toBe('');
    expect(table.code).toBe(0);
    const t = lines(table.stdout);
    expect(t).toHaveLength(200001);
    expect(t[0]).toBe(' range'.trim());
    expect(t[200000]!.trim()).toBe('199999');
    const csv = runCli(['query', '--sql', 'SELECT range FROM range(200000)', F, '--format', 'csv']);
    expect(csv.code).toBe(0);
    expect(lines(csv.stdout)).toEqual(['range', ...Array.from({ length: 200000 }, (_, i) => String(i))]);
    const json = runCli(['query', '--sql', 'SELECT range::INTEGER AS r FROM range(200000)', F, '--format', 'json']);
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as { r: number }[];
    expect(rows).toHaveLength(200000);
    expect(rows[199999]).toEqual({ r: 199999 });
  });

  it('streams: a result far larger than the JS heap it runs in is written whole', () => {
    const sql = "SELECT range AS n, 'row number ' || range AS t FROM range(300000)";
    const env = { NODE_OPTIONS: '--max-old-space-size=32' };
    const json = runCli(['query', '--sql', sql, F, '--format', 'json'], { env });
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as { n: string; t: string }[];
    expect(rows).toHaveLength(300000);
    expect(rows[299999]).toEqual({ n: '299999', t: 'row number 299999' });
    const csv = runCli(['query', '--sql', sql, F, '--format', 'csv'], { env });
    expect(csv.code).toBe(0);
    expect(lines(csv.stdout)).toHaveLength(300001);
    const table = runCli(['query', '--sql', sql, F], { env });
    expect(table.code).toBe(0);
    expect(lines(table.stdout)).toHaveLength(300001);
  });

  it('a later value wider than the first rows is printed whole, not cut', () => {
    const sql = "SELECT CASE WHEN range = 150000 THEN repeat('w', 40) ELSE 'n' END AS v FROM range(150001)";
    const r = runCli(['query', '--sql', sql, F]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout).at(-1)).toBe('w'.repeat(40));
  });

  it('an empty result is "(no rows)" in a table, [] in json and the header in csv', () => {
    const sql = 'SELECT 1 AS a WHERE false';
    expect(runCli(['query', '--sql', sql, F]).stdout).toBe('(no rows)\n');
    expect(JSON.parse(runCli(['query', '--sql', sql, F, '--format', 'json']).stdout)).toEqual([]);
    expect(runCli(['query', '--sql', sql, F, '--format', 'csv']).stdout).toBe('a\n');
  });

  it('keeps every column: repeated names get a name not taken, __proto__ is a name like another', () => {
    const sql = `SELECT 4 AS x, 5 AS "x:1", 6 AS x, 7 AS __proto__, {'a': 8, 'b': 9} AS s`;
    const json = runCli(['query', '--sql', sql, F, '--format', 'json']);
    expect(json.code).toBe(0);
    const row = (JSON.parse(json.stdout) as object[])[0]!;
    expect(Object.entries(row)).toEqual([['x', 4], ['x:1', 5], ['x:2', 6], ['__proto__', 7], ['s', { a: 8, b: 9 }]]);
    const csv = lines(runCli(['query', '--sql', sql, F, '--format', 'csv']).stdout);
    expect(csv).toEqual(['x,x:1,x:2,__proto__,s', '4,5,6,7,"{""a"":8,""b"":9}"']);
    const table = lines(runCli(['query', '--sql', sql, F]).stdout);
    expect(table[0]!.split(/ {2,}/)).toEqual(['x', 'x:1', 'x:2', '__proto__', 's']);
    expect(table[1]!.trim().split(/ {2,}/)).toEqual(['4', '5', '6', '7', '{"a":8,"b":9}']);
  });

  it('keeps a STRUCT field named __proto__ at any depth, in every format', () => {
    const sql = `SELECT {'__proto__': 1, 'b': 2} AS s, {'__proto__': {'x': 1}} AS n, [{'__proto__': 3}] AS l, [{'__proto__': 4}]::STRUCT("__proto__" INTEGER)[1] AS a, MAP {'k': {'__proto__': 5}} AS m`;
    const json = runCli(['query', '--sql', sql, F, '--format', 'json']);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const row = (JSON.parse(json.stdout) as Record<string, unknown>[])[0]!;
    const text = (v: unknown) => JSON.stringify(v);
    expect(text(row['s'])).toBe('{"__proto__":1,"b":2}');
    expect(text(row['n'])).toBe('{"__proto__":{"x":1}}');
    expect(text(row['l'])).toBe('[{"__proto__":3}]');
    expect(text(row['a'])).toBe('[{"__proto__":4}]');
    expect(text(row['m'])).toBe('[{"key":"k","value":{"__proto__":5}}]');
    const csv = lines(runCli(['query', '--sql', sql, F, '--format', 'csv']).stdout);
    expect(csv[1]).toBe('"{""__proto__"":1,""b"":2}","{""__proto__"":{""x"":1}}","[{""__proto__"":3}]","[{""__proto__"":4}]","[{""key"":""k"",""value"":{""__proto__"":5}}]"');
    const table = lines(runCli(['query', '--sql', `SELECT {'__proto__': 1, 'b': 2} AS s`, F]).stdout);
    expect(table[1]!.trim()).toBe('{"__proto__":1,"b":2}');
  });

  it('carries times in ISO 8601 in json and csv, microseconds kept, Z for UTC', () => {
    const sql = `SELECT TIMESTAMP '2024-01-02 03:04:05.123456' AS t, TIMESTAMPTZ '2024-01-02 03:04:05.5+00' AS tz, DATE '2024-01-02' AS d`;
    const json = runCli(['query', '--sql', sql, F, '--format', 'json']);
    expect(JSON.parse(json.stdout)).toEqual([{ t: '2024-01-02T03:04:05.123456Z', tz: '2024-01-02T03:04:05.500000Z', d: '2024-01-02' }]);
    expect(lines(runCli(['query', '--sql', sql, F, '--format', 'csv']).stdout)[1]).toBe('2024-01-02T03:04:05.123456Z,2024-01-02T03:04:05.500000Z,2024-01-02');
    // the model's own times too
    const started = JSON.parse(runCli(['query', '--sql', 'SELECT make_timestamp(min(start_ns) // 1000) AS s FROM runs', F, '--format', 'json']).stdout) as { s: string }[];
    expect(started[0]!.s).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('says a DATE of ±infinity as DuckDB does, alone, beside other types and in a LIST', () => {
    // an INTERVAL beside it: the rows are read value by value, not as DuckDB's JSON
    for (const extra of ['', ", INTERVAL 1 DAY AS i"]) {
      const sql = `SELECT '-infinity'::DATE AS a, 'infinity'::DATE AS b, 'infinity'::TIMESTAMP AS c, ['infinity'::DATE, '-infinity'::DATE] AS l${extra}`;
      const csv = lines(runCli(['query', '--sql', sql, F, '--format', 'csv']).stdout);
      expect(csv[1]!.startsWith('-infinity,infinity,infinity,"[""infinity"",""-infinity""]"'), extra).toBe(true);
      const json = (JSON.parse(runCli(['query', '--sql', sql, F, '--format', 'json']).stdout) as Record<string, unknown>[])[0]!;
      expect([json['a'], json['b'], json['c'], json['l']], extra).toEqual(['-infinity', 'infinity', 'infinity', ['infinity', '-infinity']]);
      const table = lines(runCli(['query', '--sql', sql, F]).stdout);
      expect(table[1]!.trim().split(/ {2,}/).slice(0, 4), extra).toEqual(['-infinity', 'infinity', 'infinity', '["infinity","-infinity"]']);
    }
  });

  it('shows a line break in a column name as in a value: the header stays one line', () => {
    const r = runCli(['query', '--sql', `SELECT 1 AS "a\nb", 'x\ny' AS c`, F]);
    expect(lines(r.stdout)).toEqual(['a ⏎ b  c', '    1  x ⏎ y']);
  });

  it('says an SQL error on one line, candidates included', () => {
    const r = runCli(['query', '--sql', 'SELECT foo FROM records', F]);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/^runlens: SQL error: .*"foo" not found.*Candidate bindings: .*"body"/);
    const t = runCli(['query', '--sql', 'SELECT * FROM recordz', F]);
    expect(lines(t.stderr)).toHaveLength(1);
    expect(t.stderr).toMatch(/recordz does not exist.*Did you mean "records"/);
  });
});

  it('an error after the first rows is exit 2 with DuckDB\'s message, in every format, never a result cut short', () => {
    // DuckDB hands the first rows over before the failing ones are computed
    const failsLate = "SELECT i, CASE WHEN i < 150000 THEN i::VARCHAR ELSE 'n/a' END::INTEGER AS v FROM range(200000) t(i)";
    const raisesLate = "SELECT CASE WHEN i < 100000 THEN i ELSE error('late boom') END AS x FROM range(200000) t(i)";
    for (const format of ['table', 'csv', 'json']) {
      const r = runCli(['query', '--sql', failsLate, F, '--format', format]);
      expect(r.code, format).toBe(2);
      expect(r.stderr, format).toMatch(/^runlens: SQL error: Conversion Error: .*'n\/a'.*; the \d+ rows written before it are not the whole result$/m);
      const e = runCli(['query', '--sql', raisesLate, F, '--format', format]);
      expect(e.code, format).toBe(2);
      expect(e.stderr, format).toMatch(/SQL error: Invalid Input Error: late boom/);
    }
  });

describe('critical-path at a narrow width', () => {
  it('names the columns left out once', () => {
    const r = runCli(['critical-path', F], { env: { COLUMNS: '40' } });
    expect(r.code).toBe(0);
    expect(lines(r.stderr).filter((l) => l.includes('left out to fit'))).toHaveLength(1);
  });
});
