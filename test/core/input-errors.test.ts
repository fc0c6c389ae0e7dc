/**
 * Input errors are exact (issue 20): the line of a fault is its line, --lenient keeps every valid line
 * and lists every skipped one, a damaged gzip names the file and how far it got, and a record the model
 * cannot hold is `file:line: field: reason` (exit 2), never an internal error or a silent load.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { scanBeside } from '../../src/ingest/jsonl-lines.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { ROOT, skipOrFailInCi } from '../helpers/samples.js';

const dir = tempDir();
/** The lines of a real run (the project's own generated sample), as text. */
const LINES = readFileSync(path.join(ROOT, 'samples/clean-build.jsonl'), 'utf8').trimEnd().split('\n');
const RECORDS = LINES.map((l) => JSON.parse(l) as Record<string, unknown>);
const firstOf = (rt: string) => RECORDS.findIndex((r) => r.record_type === rt);

function file(name: string, lines: (string | Buffer)[], opts: { gzip?: boolean } = {}): string {
  const p = path.join(dir, name);
  const body = Buffer.concat(lines.flatMap((l) => [Buffer.isBuffer(l) ? l : Buffer.from(l), Buffer.from('\n')]));
  writeFileSync(p, opts.gzip ? gzipSync(body) : body);
  return p;
}

/** What records.line is checked against: the record at a line. */
const pick = (r: Record<string, unknown>) => ({ span_id: (r.span_id as string | null | undefined) ?? null, record_type: r.record_type as string });

/** LINES with line `n` (from 1) replaced. */
const withLine = (n: number, text: string | Buffer) => [...LINES.slice(0, n - 1), text, ...LINES.slice(n)];
const edited = (n: number, edit: (r: Record<string, unknown>) => void) => {
  const r = structuredClone(RECORDS[n - 1]!);
  edit(r);
  return withLine(n, JSON.stringify(r));
};

describe('the line of a fault is its line', () => {
  it('invalid UTF-8 on line 3: load says line 3, validate exits 1 naming it', () => {
    const bytes = Buffer.from(LINES[2]!);
    const at = bytes.indexOf('"span_name":"') + 13;
    const bad = file('utf8.jsonl', withLine(3, Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff, 0xfe]), bytes.subarray(at)])));
    const load = runCli(['load', bad]);
    expect(load.code).toBe(2);
    expect(load.stderr).toContain(`${bad}:3: `);
    expect(load.stderr).toMatch(/UTF-8/);
    const v = runCli(['validate', bad]);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(`${bad}:3: -: not valid UTF-8`);
  });

  it('a byte order mark before the first line is named as such, by load and validate', () => {
    const bad = file('bom.jsonl', withLine(1, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(LINES[0]!)])));
    const load = runCli(['load', bad]);
    expect(load.code).toBe(2);
    expect(load.stderr).toContain(`${bad}:1: starts with a UTF-8 byte order mark (BOM)`);
    expect(load.stderr).not.toContain('\ufeff');
    const v = runCli(['validate', bad]);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(`${bad}:1: -: starts with a UTF-8 byte order mark (BOM)`);
  });

  it('a malformed line after a blank one is named by its own line', () => {
    const bad = file('blank.jsonl', [LINES[0]!, '', LINES[1]!, '{"record_type": "SpanEnd"', ...LINES.slice(2)]);
    const r = runCli(['load', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}:4: malformed JSON`);
  });
});

describe('records.line is the line in the file, blank lines counted', () => {
  // DuckDB's reader skips blank lines: the rows after one must not move up a line.
  const blankAt = [2, 40, 41];
  const lines = [...LINES];
  for (const n of blankAt) lines.splice(n - 1, 0, n === 41 ? ' \t\r' : '');
  const lineOf = (db: Awaited<ReturnType<typeof openModel>>) =>
    db.all<{ line: number; span_id: string | null; record_type: string }>('SELECT line::INT AS line, span_id, record_type FROM records ORDER BY line');
  const expected = lines.flatMap((l, i) => (l.trim() ? [{ line: i + 1, ...pick(JSON.parse(l) as Record<string, unknown>) }] : []));

  it.each([
    ['plain, strict', 'blank.jsonl', {}],
    ['plain, --lenient', 'blank-lenient.jsonl', { lenient: true }],
    ['gzip', 'blank.jsonl.gz', { gzip: true }],
  ] as const)('%s: every record keeps its line; nothing is counted as skipped', async (_, name, o) => {
    const p = file(name, lines, { gzip: 'gzip' in o });
    const db = await openModel();
    try {
      const r = await loadPaths(db, [p], { lenient: 'lenient' in o });
      expect(r.records).toBe(LINES.length);
      expect(r.skippedLines).toBe(0);
      expect(await lineOf(db)).toEqual(expected);
    } finally {
      db.close();
    }
  });

  it('the scan beside the read finds a blank line only where a record follows it (trailing ones move nothing)', async () => {
    const scan = (name: string, text: string) => scanBeside(file(name, [text.replace(/\n$/, '')]), false);
    const rec = LINES[0]!;
    expect((await scan('trailing-blank.jsonl', `${rec}\n${rec}\n\n \n`)).blankLines).toBe(false);
    expect((await scan('first-blank.jsonl', `\n${rec}\n`)).blankLines).toBe(true);
    expect((await scan('crlf-blank.jsonl', `${rec}\r\n\r\n${rec}\r\n`)).blankLines).toBe(true);
    expect((await scan('crlf.jsonl', `${rec}\r\n${rec}\r\n`)).blankLines).toBe(false);
  });

  it('a bad line after a blank one is skipped under its own number, the lines after it keep theirs', async () => {
    const bad = [...lines];
    bad[49] = '{"record_type":';
    const p = file('blank-bad.jsonl', bad);
    const db = await openModel();
    try {
      const r = await loadPaths(db, [p], { lenient: true });
      expect(r.skippedLines).toBe(1);
      expect(r.files[0]!.badLines.map((b) => b.line)).toEqual([50]);
      expect(await lineOf(db)).toEqual(expected.filter((e) => e.line !== 50));
    } finally {
      db.close();
    }
  });
});

describe('--lenient keeps every valid line and lists every skipped one', () => {
  it('a line cut after "record_type": does not take the valid line after it', async () => {
    const cut = LINES[2]!.slice(0, LINES[2]!.indexOf('"record_type":') + 14);
    const p = file('cut.jsonl', withLine(3, cut));
    const db = await openModel();
    try {
      const r = await loadPaths(db, [p], { lenient: true });
      expect(r.records).toBe(LINES.length - 1);
      expect(r.skippedLines).toBe(1);
      expect(r.files[0]!.badLines.map((b) => b.line)).toEqual([3]);
      expect(await db.scalar('SELECT count(*)::INT FROM records')).toBe(LINES.length - 1);
      // the valid line after the cut one is in the model, under its own line number
      expect(await db.scalar(`SELECT record_type FROM records WHERE line = 4`)).toBe(RECORDS[3]!.record_type);
    } finally {
      db.close();
    }
  });

  it('every skipped line is listed by number, none as a blank entry, whatever made it bad', () => {
    const lines = [...LINES];
    const badAt = [2, 5, 9, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 60];
    badAt.forEach((n, i) => (lines[n - 1] = i % 3 === 0 ? '{"record_type":' : i % 3 === 1 ? 'not json at all' : '[1, 2]'));
    const p = file('many-bad.jsonl', lines);
    const r = runCli(['load', p, '--lenient']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${LINES.length - badAt.length} records`);
    expect(r.stderr).toContain(`skipped ${badAt.length} lines in ${p}`);
    for (const n of badAt.slice(0, 20)) expect(r.stderr).toMatch(new RegExp(`${p}:${n}: \\S`));
    // the rest by number
    expect(r.stderr).toContain('and 6 more: lines 47-51, 60');
    expect(r.stderr).not.toMatch(/:\d+:\s*\n/);
  });
});

describe('a damaged gzip names the file and how far it got', () => {
  const gz = gzipSync(Buffer.from(LINES.join('\n') + '\n'));

  it('truncated: exit 2 with the file and the last whole line read, in load, load --lenient and gate', () => {
    const p = path.join(dir, 'trunc.jsonl.gz');
    writeFileSync(p, gz.subarray(0, Math.floor(gz.length / 2)));
    for (const args of [['load', p], ['load', p, '--lenient'], ['gate', p]]) {
      const r = runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`${p}: truncated gzip: the data ends after \\d+ whole lines`));
      expect(r.stderr).not.toContain('internal error');
    }
  });

  it('damaged in the middle or at its checksum: exit 2 with the file', () => {
    const flipped = Buffer.from(gz);
    for (let i = 0; i < 16; i++) flipped[Math.floor(gz.length / 2) + i]! ^= 0xff;
    const crc = Buffer.from(gz);
    crc[crc.length - 6]! ^= 0xff;
    for (const [name, bytes] of [['flipped.jsonl.gz', flipped], ['crc.jsonl.gz', crc]] as const) {
      const p = path.join(dir, name);
      writeFileSync(p, bytes);
      for (const args of [['load', p], ['load', p, '--lenient'], ['gate', p]]) {
        const r = runCli(args);
        expect(r.code, `${name} ${args.join(' ')}`).toBe(2);
        expect(r.stderr).toMatch(new RegExp(`${p}: (damaged|truncated) gzip`));
        expect(r.stderr).not.toContain('internal error');
      }
    }
  });
});

describe('a record the model cannot hold is file:line: field: reason', () => {
  const spanEnd = firstOf('SpanEnd') + 1;
  const log = firstOf('LogRecord') + 1;
  const cases: [string, number, (r: Record<string, unknown>) => void, string][] = [
    ['no trace_id on a span', spanEnd, (r) => delete r.trace_id, 'trace_id: missing (required on SpanEnd)'],
    ['a null trace_id on a span', spanEnd, (r) => (r.trace_id = null), 'trace_id: must not be null on a SpanEnd'],
    ['span_id a number', spanEnd, (r) => (r.span_id = 1234), 'span_id: must be 16 hex digits (got 1234)'],
    // numbers with as many digits as an id has: DuckDB's reader reads a number where text belongs as its digits
    ['span_id a 16-digit number', spanEnd, (r) => (r.span_id = 1234567890123456), 'span_id: must be 16 hex digits (got 1234567890123456)'],
    ['span_id of 16 characters, not hex', spanEnd, (r) => (r.span_id = '00000000000000zz'), 'span_id: must be 16 hex digits (got "00000000000000zz")'],
    ['trace_id of 32 characters, not hex', log, (r) => (r.trace_id = 'g'.repeat(32)), `trace_id: must be 32 hex digits (or a UUID) (got "${'g'.repeat(32)}")`],
    ['parent_span_id a 16-digit number', spanEnd, (r) => (r.parent_span_id = 6543210987654321), 'parent_span_id: must be 16 hex digits (got 6543210987654321)'],
    ['attributes an array', log, (r) => (r.attributes = [1, 2]), 'attributes: must be an object (got [1,2])'],
    ['a time an object', spanEnd, (r) => (r.end_time_unix_nano = { ns: 1 }), 'end_time_unix_nano: must be nanoseconds, a string of decimal digits (got {"ns":1})'],
    ['a status code an object', spanEnd, (r) => (r.status = { code: { x: 1 } }), 'status.code: must be an integer (got {"x":1})'],
    ['a severity past the 32-bit range', log, (r) => (r.severity_number = 2 ** 31), 'severity_number: must be an integer (got 2147483648)'],
    ['a severity with a fraction', log, (r) => (r.severity_number = 9.5), 'severity_number: must be an integer (got 9.5)'],
    ['a status code with a fraction', spanEnd, (r) => (r.status = { message: null, code: 1.5 }), 'status.code: must be an integer (got 1.5)'],
    ['a time true', spanEnd, (r) => (r.start_time_unix_nano = true), 'start_time_unix_nano: must be nanoseconds, a string of decimal digits (got true)'],
    // DuckDB's cast to an integer reads these as numbers (hex, binary, a sign, blanks; a fraction rounded)
    ['a time in hex', spanEnd, (r) => (r.start_time_unix_nano = '0x6FFFFFFFFFFFFFFF'), 'start_time_unix_nano: must be nanoseconds, a string of decimal digits (got "0x6FFFFFFFFFFFFFFF")'],
    ['a time in binary', spanEnd, (r) => (r.end_time_unix_nano = '0b101'), 'end_time_unix_nano: must be nanoseconds, a string of decimal digits (got "0b101")'],
    ['a time with blanks', log, (r) => (r.time_unix_nano = '  42'), 'time_unix_nano: must be nanoseconds, a string of decimal digits (got "  42")'],
    ['a time with a plus sign', spanEnd, (r) => (r.start_time_unix_nano = '+42'), 'start_time_unix_nano: must be nanoseconds, a string of decimal digits (got "+42")'],
    ['a time with a fraction', spanEnd, (r) => (r.start_time_unix_nano = 1.5), 'start_time_unix_nano: must be nanoseconds, a string of decimal digits (got 1.5)'],
    ['a time a decimal string', log, (r) => (r.time_unix_nano = '1772463600000000000.5'), 'time_unix_nano: must be nanoseconds, a string of decimal digits (got "1772463600000000000.5")'],
    ['a severity true', log, (r) => (r.severity_number = true), 'severity_number: must be an integer (got true)'],
    ['a status code false', spanEnd, (r) => (r.status = { message: null, code: false }), 'status.code: must be an integer (got false)'],
    // a status code is an unsigned enum (the engine's Parquet column is UInt32)
    ['a status code negative', spanEnd, (r) => (r.status = { message: 'x', code: -1 }), 'status.code: must not be negative (got -1)'],
    ['record_type unknown', log, (r) => (r.record_type = 'Metric'), 'record_type: must be SpanStart, SpanEnd or LogRecord (got "Metric")'],
  ];

  it.each(cases)('%s: load and gate exit 2 naming file, line and field; --lenient skips it', (name, n, edit, message) => {
    const p = file(`${name.replace(/\W+/g, '-')}.jsonl`, edited(n, edit));
    for (const cmd of ['load', 'gate']) {
      const r = runCli([cmd, p]);
      expect(r.code, `${cmd}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`${p}:${n}: ${message}`);
      expect(r.stderr).not.toContain('internal error');
    }
    const lenient = runCli(['load', p, '--lenient']);
    expect(lenient.code).toBe(0);
    expect(lenient.stdout).toContain(`${LINES.length - 1} records`);
    expect(lenient.stderr).toContain(`${p}:${n}: ${message}`);
    // validate reports what a load refuses
    const v = runCli(['validate', p, '--no-warnings']);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(`${p}:${n}: ${message.split(':')[0]}: `);
  });

  it('a trace_id written as a 32-digit number is refused, not loaded as its digits', () => {
    const n = log;
    const line = LINES[n - 1]!.replace(/"trace_id":"[0-9a-f]{32}"/, '"trace_id":12345678901234567890123456789012');
    const p = file('trace-number.jsonl', withLine(n, line));
    const r = runCli(['load', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${p}:${n}: trace_id: must be 32 hex digits (or a UUID) (got 1.2345678901234567e+31)`);
  });

  it('a time of "0" is a time, not a boolean: the file loads whole with it', async () => {
    const p = file('time-zero.jsonl', edited(spanEnd, (r) => (r.start_time_unix_nano = '0')));
    const db = await openModel();
    const r = await loadPaths(db, [p]);
    expect(r.records).toBe(LINES.length);
    expect(await db.scalar<number>('SELECT count(*)::INTEGER FROM record_rows WHERE start_ns = 0')).toBe(1);
    db.close();
  });

  it('a time written with leading zeros is a string of decimal digits: the file loads whole with its value', async () => {
    const p = file('time-zeros.jsonl', edited(spanEnd, (r) => (r.start_time_unix_nano = '01772463600000000000')));
    const db = await openModel();
    const r = await loadPaths(db, [p]);
    expect(r.records).toBe(LINES.length);
    expect(await db.scalar<string>('SELECT start_ns::VARCHAR FROM record_rows WHERE start_ns = 1772463600000000000')).toBe('1772463600000000000');
    db.close();
  });

  it('a time past the model\'s 64-bit signed range (valid OTLP, year 2262) is refused, not loaded without it', () => {
    const n = spanEnd;
    const p = file('time-range.jsonl', edited(n, (r) => (r.end_time_unix_nano = '9223372036854775808')));
    const r = runCli(['load', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${p}:${n}: end_time_unix_nano: must be nanoseconds, a string of decimal digits (got "9223372036854775808")`);
    const lenient = runCli(['load', p, '--lenient']);
    expect(lenient.code).toBe(0);
    expect(lenient.stdout).toContain(`${LINES.length - 1} records`);
  });

  it.each([
    ['status an array on a log record', firstOf('LogRecord') + 1, 'status', [1]],
    ['links an object on a log record', firstOf('LogRecord') + 1, 'links', { a: 1 }],
    ['parent_span_id a list on a log record', firstOf('LogRecord') + 1, 'parent_span_id', []],
  ])('%s: refused by load, reported by validate', (name, n, field, value) => {
    const p = file(`${name.replace(/\W+/g, '-')}.jsonl`, edited(n, (r) => (r[field] = value)));
    expect(runCli(['load', p]).stderr).toContain(`${p}:${n}: ${field}: must be`);
    const v = runCli(['validate', p, '--no-warnings']);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(`${p}:${n}: ${field}: must be`);
  });

  it('a Parquet span without a trace_id is named by its row', async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const p = path.join(dir, 'no-trace.parquet');
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    const src = path.join(ROOT, 'samples/clean-build.parquet');
    const row = Number((await c.runAndReadAll(`SELECT min(file_row_number) + 1 FROM read_parquet('${src}', file_row_number = true) WHERE record_type = 'SpanEnd'`)).getRows()[0]![0]);
    await c.run(`COPY (SELECT * EXCLUDE (file_row_number) REPLACE (CASE WHEN file_row_number + 1 = ${row} THEN NULL ELSE trace_id END AS trace_id)
                      FROM read_parquet('${src}', file_row_number = true) ORDER BY file_row_number) TO '${p}' (FORMAT parquet)`);
    c.closeSync();
    inst.closeSync();
    const r = runCli(['load', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${p}:${row}: trace_id: must not be null on a SpanEnd`);
    const lenient = runCli(['load', p, '--lenient']);
    expect(lenient.code).toBe(0);
    expect(lenient.stdout).toContain(`${LINES.length - 1} records`);
    expect(lenient.stderr).toContain(`skipped 1 row in ${p}`);
    expect(lenient.stdout).toContain(', 1 row skipped\n');
  });
});

/** A copy of a sample Parquet file with `replace` (a SELECT * REPLACE list over its rows, `r` the row from 1) applied. */
async function rewriteParquet(name: string, sample: string, replace: string): Promise<string> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const p = path.join(dir, name);
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  await c.run(`COPY (SELECT * EXCLUDE (file_row_number, r) REPLACE (${replace})
                    FROM (SELECT *, file_row_number + 1 AS r FROM read_parquet('${path.join(ROOT, sample)}', file_row_number = true)) ORDER BY r)
               TO '${p}' (FORMAT parquet)`);
  c.closeSync();
  inst.closeSync();
  return p;
}

describe('a Parquet row whose json_payload is not JSON is refused by its row, not read without it', () => {
  // rows 379 and 380 of the sample hold its one failed test's outcome detail
  const corrupt = `CASE WHEN r IN (379, 380) THEN struct_update(attributes, json_payload := left(attributes.json_payload, -1)) ELSE attributes END AS attributes`;

  it('load, gate and convert exit 2 naming file, row and field; --lenient skips and lists the rows', async () => {
    const p = await rewriteParquet('bad-payload.parquet', 'samples/failed-build.parquet', corrupt);
    for (const args of [['load', p], ['gate', p, '--fail-on', 'test-failed'], ['convert', p, path.join(dir, 'bad-payload.jsonl')]]) {
      const r = runCli(args);
      expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr, args[0]).toContain(`${p}:379: attributes.json_payload: not valid JSON`);
      expect(r.stderr, args[0]).not.toContain('internal error');
    }
    const lenient = runCli(['load', p, '--lenient']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stderr).toContain(`skipped 2 rows in ${p}`);
    expect(lenient.stderr).toContain(`${p}:380: attributes.json_payload: not valid JSON`);
  });

  it('validate lists every bad row as a violation (exit 1), as it lists a JSONL file\'s bad lines, and reads every row', async () => {
    const p = await rewriteParquet('bad-payload-v.parquet', 'samples/failed-build.parquet', corrupt);
    const v = runCli(['validate', p, '--format', 'json']);
    expect(v.code, v.stdout + v.stderr).toBe(1);
    const [report] = (JSON.parse(v.stdout) as { files: { records: number; issues: { line: number; field: string; rule: string; severity: string }[] }[] }).files;
    expect(report!.records).toBe(525);
    const violations = report!.issues.filter((i) => i.severity !== 'warning');
    expect(violations.map((i) => [i.line, i.field])).toEqual([[379, 'attributes.json_payload'], [380, 'attributes.json_payload']]);
    expect(violations[0]!.rule).toContain('not valid JSON');
  });

  it('an empty json_payload is none, as convert reads it: the file loads whole', async () => {
    const p = await rewriteParquet('empty-payload.parquet', 'samples/failed-build.parquet',
      `CASE WHEN r = 343 THEN struct_update(attributes, json_payload := '') ELSE attributes END AS attributes`);
    const r = runCli(['load', p]);
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('a Parquet row whose json_payload nests deeper than the call stack reaches', () => {
  const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
  const rewrite = `CASE WHEN r = 379 THEN struct_update(attributes, json_payload := '{"deep":${deep}}') ELSE attributes END AS attributes`;

  it('a load reads it; convert refuses it and validate lists it, by row and field, with no internal error', async () => {
    const p = await rewriteParquet('deep-payload.parquet', 'samples/failed-build.parquet', rewrite);
    const runs = runCli(['runs', p]);
    expect(runs.code, runs.stderr).toBe(0);
    const c = runCli(['convert', p, path.join(dir, 'deep-payload.jsonl')]);
    expect(c.code).toBe(2);
    expect(c.stderr).toBe(`runlens: ${p}:379: attributes.json_payload: nested deeper than 1000 levels\n`);
    const v = runCli(['validate', p, '--no-warnings']);
    expect(v.code, v.stderr).toBe(1);
    expect(v.stdout).toContain(`${p}:379: attributes.json_payload: nested deeper than 1000 levels`);
  });
});

describe('a lone surrogate escape (half a UTF-16 pair) is not valid JSON, although JSON.parse takes it', () => {
  const lone = (n: number) => LINES[n - 1]!.replace(/"span_name":"/, '"span_name":"audit.\\ud83d_x ');

  it('validate reports the line, load names it, --lenient skips exactly it, convert refuses it', () => {
    const p = file('lone-surrogate.jsonl', withLine(8, lone(8)));
    const v = runCli(['validate', p, '--no-warnings']);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(`${p}:8: -: not valid JSON: a lone surrogate \\ud83d`);
    const load = runCli(['load', p]);
    expect(load.code).toBe(2);
    expect(load.stderr).toContain(`${p}:8: malformed JSON: a lone surrogate \\ud83d`);
    const lenient = runCli(['load', p, '--lenient']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stdout).toContain(`${LINES.length - 1} records`);
    expect(lenient.stderr).toContain(`${p}:8: malformed JSON: a lone surrogate`);
    for (const out of ['lone.parquet', 'lone.out.jsonl']) {
      const c = runCli(['convert', p, path.join(dir, out)]);
      expect(c.code, c.stderr).toBe(2);
      expect(c.stderr).toContain(`${p}:8: malformed JSON: a lone surrogate \\ud83d`);
    }
  });

  it('a whole pair, and an escaped backslash before "ud83d", are text: the file loads whole', () => {
    const p = file('surrogate-pair.jsonl', withLine(8, LINES[7]!.replace(/"span_name":"/, '"span_name":"\\ud83d\\ude00 \\\\ud83d ')));
    const r = runCli(['load', p]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${LINES.length} records`);
    expect(runCli(['convert', p, path.join(dir, 'pair.parquet')]).code).toBe(0);
  });

  it('in a Parquet json_payload: load and convert name the row, validate lists it', async () => {
    const p = await rewriteParquet('lone-payload.parquet', 'samples/failed-build.parquet',
      `CASE WHEN r = 379 THEN struct_update(attributes, json_payload := replace(attributes.json_payload, 'TEST_OUTCOME', '\\ud83d')) ELSE attributes END AS attributes`);
    for (const args of [['load', p], ['convert', p, path.join(dir, 'lone-payload.jsonl')]]) {
      const r = runCli(args);
      expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr, args[0]).toContain(`${p}:379: attributes.json_payload: not valid JSON`);
    }
    const v = runCli(['validate', p]);
    expect(v.code, v.stdout + v.stderr).toBe(1);
    expect(v.stdout).toContain(`${p}:379: attributes.json_payload: not valid JSON`);
  });
});

describe('a key written twice (JSON.parse keeps the last, DuckDB\'s reader the first or neither)', () => {
  const spanEnd = RECORDS.findIndex((r) => r.record_type === 'SpanEnd' && (r.status as { code?: number } | null)?.code === 1) + 1;

  it.each([
    ['status', (l: string) => l.replace(/}$/, ',"status":{"message":null,"code":2}}')],
    ['status.code', (l: string) => l.replace('"status":{"message":null,"code":1}', '"status":{"message":null,"code":1,"code":2}')],
  ])('an envelope key (%s): load names line and key in its own words, --lenient skips the line', (field, edit) => {
    const p = file(`twice-${field}.jsonl`, withLine(spanEnd, edit(LINES[spanEnd - 1]!)));
    const r = runCli(['load', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${p}:${spanEnd}: ${field}: key written twice`);
    expect(r.stderr).not.toMatch(/auto_detect|ignore_errors/);
    const lenient = runCli(['load', p, '--lenient']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stdout).toContain(`${LINES.length - 1} records`);
    expect(lenient.stderr).toContain(`${p}:${spanEnd}: ${field}: key written twice`);
  });

  it('an attribute: convert refuses the record (to JSONL and Parquet), as validate reports it', () => {
    const n = RECORDS.findIndex((r) => (r.attributes as Record<string, unknown>)?.node_outcome === 'NODE_OUTCOME_SUCCESS') + 1;
    const line = LINES[n - 1]!.replace('"node_outcome":"NODE_OUTCOME_SUCCESS"', '"node_outcome":"NODE_OUTCOME_ERROR","node_outcome":"NODE_OUTCOME_SUCCESS"');
    const p = file('twice-attribute.jsonl', withLine(n, line));
    const v = runCli(['validate', p, '--no-warnings']);
    expect(v.stdout).toContain(`${p}:${n}: attributes.node_outcome: key written twice`);
    for (const out of ['twice.parquet', 'twice.out.jsonl']) {
      const c = runCli(['convert', p, path.join(dir, out)]);
      expect(c.code, c.stderr).toBe(2);
      expect(c.stderr).toContain(`${p}:${n}: attributes.node_outcome: key written twice`);
      expect(existsSync(path.join(dir, out))).toBe(false);
    }
  });
});

describe('a key written twice in a Parquet json_payload (load reads the first, JSON.parse the last)', () => {
  // row 379 of the sample holds its one failed test's outcome detail
  const twice = `CASE WHEN r = 379 THEN struct_update(attributes, json_payload := replace(attributes.json_payload,
    '"test_outcome":"TEST_OUTCOME_FAILED"', '"test_outcome":"TEST_OUTCOME_PASSED","test_outcome":"TEST_OUTCOME_FAILED"')) ELSE attributes END AS attributes`;

  it('validate reports it and convert refuses it, as for a JSONL attribute', async () => {
    const p = await rewriteParquet('twice-payload.parquet', 'samples/failed-build.parquet', twice);
    const said = `${p}:379: attributes.json_payload: key written twice (a reader may take either value): NodeTestDetail.test_outcome`;
    const v = runCli(['validate', p, '--no-warnings']);
    expect(v.code, v.stdout + v.stderr).toBe(1);
    expect(v.stdout).toContain(said);
    for (const out of ['twice-payload.out.jsonl', 'twice-payload.out.parquet']) {
      const c = runCli(['convert', p, path.join(dir, out)]);
      expect(c.code, c.stdout + c.stderr).toBe(2);
      expect(c.stderr).toContain(said);
      expect(existsSync(path.join(dir, out))).toBe(false);
    }
  });
});

/** Each command exits 2 saying `said` on stderr, and validate lists it as a violation (exit 1). */
function refusedAndReported(p: string, commands: string[][], said: string): string {
  for (const args of commands) {
    const r = runCli(args);
    expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
    expect(r.stderr, args[0]).toContain(said);
  }
  const v = runCli(['validate', p, '--no-warnings']);
  expect(v.code, v.stdout + v.stderr).toBe(1);
  expect(v.stdout).toContain(said);
  return v.stdout;
}

describe('a Parquet json_payload that starts with a byte order mark', () => {
  it('load, validate and convert all refuse it, saying why', async () => {
    const p = await rewriteParquet('bom-payload.parquet', 'samples/failed-build.parquet',
      `CASE WHEN r = 379 THEN struct_update(attributes, json_payload := chr(65279) || attributes.json_payload) ELSE attributes END AS attributes`);
    const said = `${p}:379: attributes.json_payload: not valid JSON: starts with a byte order mark (U+FEFF), which JSON does not allow`;
    refusedAndReported(p, [['gate', p], ['convert', p, path.join(dir, 'bom-payload.jsonl')]], said);
  });
});

describe('a structured attribute the model reads given as another JSON type', () => {
  const FAILED = readFileSync(path.join(ROOT, 'samples/failed-build.jsonl'), 'utf8').trimEnd().split('\n');
  const at = FAILED.findIndex((l) => l.includes('"node_test_detail":{"failing_rows":4,"test_outcome":"TEST_OUTCOME_FAILED"}')) + 1;
  const skipAt = FAILED.findIndex((l) => l.includes('"node_skip_upstream_detail":{')) + 1;
  // the failed test's SpanStart: what it says stands for a span that never ends
  const spanOf = (l: string) => (JSON.parse(l) as { span_id: string }).span_id;
  const startAt = FAILED.findIndex((l) => l.includes('"record_type":"SpanStart"') && spanOf(l) === spanOf(FAILED[at - 1]!)) + 1;

  it.each([
    ['node_test_detail', at, (l: string) => l.replace('"node_test_detail":{"failing_rows":4,"test_outcome":"TEST_OUTCOME_FAILED"}',
      '"node_test_detail":"{\\"failing_rows\\":4,\\"test_outcome\\":\\"TEST_OUTCOME_FAILED\\"}"')],
    ['node_skip_upstream_detail', skipAt, (l: string) => l.replace(/"node_skip_upstream_detail":\{[^}]*\}/, '"node_skip_upstream_detail":["x"]')],
    ['node_test_detail', startAt, (l: string) => l.replace('"attributes":{', '"attributes":{"node_test_detail":"failed",')],
  ])('%s: load and gate exit 2 naming line and field, validate reports it', (field, n, edit) => {
    const lines = [...FAILED];
    lines[n - 1] = edit(lines[n - 1]!);
    expect(lines[n - 1]).not.toBe(FAILED[n - 1]);
    const p = file(`string-${field}.jsonl`, lines);
    refusedAndReported(p, [['load', p], ['gate', p, '--fail-on', 'test-failed']], `${p}:${n}: attributes.${field}: must be an object`);
  });
});

describe('a Parquet json_payload holding an outcome detail of another JSON type', () => {
  // rows 379 and 380 of the sample hold its one failed test's outcome detail, rows 332 and 333 an upstream skip's
  const edit = `CASE WHEN r IN (379, 380) THEN struct_update(attributes, json_payload := replace(attributes.json_payload,
      '{"test_outcome":"TEST_OUTCOME_FAILED","failing_rows":4}', '"{\\"test_outcome\\":\\"TEST_OUTCOME_FAILED\\",\\"failing_rows\\":4}"'))
    WHEN r IN (332, 333) THEN struct_update(attributes, json_payload := replace(attributes.json_payload,
      '{"upstream_unique_id":"model.acme.stg_employees"}', '7')) ELSE attributes END AS attributes`;

  it('load and gate exit 2 naming file, row and field, as validate and convert do; --lenient skips the rows', async () => {
    const p = await rewriteParquet('detail-type.parquet', 'samples/failed-build.parquet', edit);
    const said = `${p}:332: attributes.node_skip_upstream_detail: must be an object (got 7)`;
    const validated = refusedAndReported(p, [['load', p], ['gate', p, '--fail-on', 'test-failed'], ['convert', p, path.join(dir, 'detail-type.jsonl')]], said);
    expect(validated).toContain(`${p}:380: attributes.node_test_detail: must be an object (got "{\\"test_outcome\\":`);
    const lenient = runCli(['load', p, '--lenient']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stderr).toContain(`skipped 4 rows in ${p}`);
    expect(lenient.stderr).toContain(`${p}:380: attributes.node_test_detail: must be an object (got "{\\"test_outcome\\":`);
  });
});

describe('a value the Parquet columns cannot hold', () => {
  it('a negative status code: convert refuses it by its line, and writes nothing', () => {
    const n = firstOf('SpanEnd') + 1;
    const p = file('status-negative.jsonl', edited(n, (r) => (r.status = { message: 'x', code: -1 })));
    const out = path.join(dir, 'status-negative.parquet');
    const c = runCli(['convert', p, out]);
    expect(c.code, c.stderr).toBe(2);
    expect(c.stderr).toContain(`${p}:${n}: status.code: must not be negative (got -1)`);
    expect(existsSync(out)).toBe(false);
  });

  it('a status code past the model\'s 32 bits in a Parquet UInt32 column: load names the row', async () => {
    const p = await rewriteParquet('status-big.parquet', 'samples/failed-build.parquet',
      `CASE WHEN r = 379 THEN 3000000000::UINTEGER ELSE status_code END AS status_code`);
    const r = runCli(['load', p]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${p}:379: status.code: must be an integer (got 3000000000)`);
    const lenient = runCli(['load', p, '--lenient']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stderr).toContain(`skipped 1 row in ${p}`);
  });

  it('the Parquet writer refuses a number its narrow integer columns cannot hold, naming the column', async () => {
    const { writeParquetFile } = await import('../../src/produce/parquet-writer.js');
    const n = firstOf('SpanEnd');
    for (const [name, edit, column] of [
      ['u32', (r: Record<string, unknown>) => (r.status = { message: null, code: 2 ** 32 }), 'status_code'],
      ['u32-negative', (r: Record<string, unknown>) => (r.status = { message: null, code: -1 }), 'status_code'],
      ['i32', (r: Record<string, unknown>) => (r.severity_number = 2 ** 31), 'severity_number'],
    ] as const) {
      const r = structuredClone(RECORDS[n]!);
      edit(r);
      const out = path.join(dir, `narrow-${name}.parquet`);
      await expect(writeParquetFile([r as never], out), name).rejects.toThrow(new RegExp(`${column}: .*does not fit`));
      expect(existsSync(out)).toBe(false);
    }
  });
});

describe('a Parquet file in another layout than the engine\'s is refused, not read without its outcomes', () => {
  it.each([
    ['JSON text', `to_json(attributes)::VARCHAR`, /attributes: a VARCHAR column/],
    ['a map', `MAP {'unique_id': attributes.name}`, /attributes: a MAP\(VARCHAR, VARCHAR\) column/],
    ['no column', null, /attributes: missing/],
  ])('attributes as %s: load, gate and validate exit 2 naming the column', async (_what, expr, message) => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const p = path.join(dir, `attrs-${_what.replace(/ /g, '-')}.parquet`);
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    const src = path.join(ROOT, 'samples/failed-build.parquet');
    const select = expr === null ? `SELECT * EXCLUDE (attributes)` : `SELECT * REPLACE (${expr} AS attributes)`;
    await c.run(`COPY (${select} FROM read_parquet('${src}')) TO '${p}' (FORMAT parquet)`);
    c.closeSync();
    inst.closeSync();
    for (const cmd of ['load', 'gate', 'validate']) {
      const r = runCli([cmd, p]);
      expect(r.code, `${cmd}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr, cmd).toMatch(message);
      expect(r.stderr, cmd).toContain(p);
    }
  });
});

describe("what DuckDB's JSON reader forgives is still an error", () => {
  const trailing = (n: number) => LINES[n - 1]!.replace(/}$/, ',}');

  it('a trailing comma on line 7 stops the load at line 7, as validate says', () => {
    const p = file('trailing-comma.jsonl', withLine(7, trailing(7)));
    const r = runCli(['load', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`${p}:7: .*JSON`));
    const v = runCli(['validate', p]);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(`${p}:7:`);
  });

  it('--lenient skips only that line, in a plain and in a gzipped file', () => {
    for (const gzip of [false, true]) {
      const p = file(`trailing-lenient${gzip ? '.jsonl.gz' : '.jsonl'}`, withLine(9, LINES[8]!.replace(/"attributes":\{/, '"attributes":{"x":[1,2,],')), { gzip });
      const r = runCli(['load', p, '--lenient']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`${LINES.length - 1} records`);
      expect(r.stderr).toContain(`${p}:9: `);
    }
  });

  it('NaN and Infinity (as Python writes them) in attributes, links or a text field stop the load at their line', () => {
    const cases: [string, (l: string) => string][] = [
      ['attr-nan', (l) => l.replace(/"attributes":\{/, '"attributes":{"ratio":NaN,')],
      ['attr-inf', (l) => l.replace(/"attributes":\{/, '"attributes":{"x":[1,-Infinity],')],
      ['attr-inf-last', (l) => l.replace(/"attributes":\{/, '"attributes":{"x":{"y":Infinity},')],
      ['body-nan', (l) => l.replace(/}$/, ',"body":nan}')],
      ['name-inf', (l) => l.replace(/"span_name":"[^"]*"/, '"span_name":-INF')],
      ['links-nan', (l) => l.replace(/}$/, ',"links":[{"trace_id":"x","w":NaN}]}')],
    ];
    for (const [name, edit] of cases) {
      const p = file(`${name}.jsonl`, withLine(6, edit(LINES[5]!)));
      const r = runCli(['load', p]);
      expect(r.code, `${name}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr, name).toMatch(new RegExp(`${p}:6: .*JSON`));
      const g = runCli(['gate', p]);
      expect(g.code, name).toBe(2);
      const l = runCli(['load', p, '--lenient']);
      expect(l.code, `${name}: ${l.stderr}`).toBe(0);
      expect(l.stdout).toContain(`${LINES.length - 1} records`);
      expect(l.stderr).toContain(`${p}:6: `);
    }
  });

  it('"NaN" and "Infinity" as strings are text: the file loads whole', () => {
    const p = file('nan-strings.jsonl', edited(5, (rec) => {
      rec.span_name = 'NaN';
      rec.attributes = { ...(rec.attributes as object), note: 'x:NaN,y:[Infinity]', ratio: 'NaN' };
    }));
    const r = runCli(['load', p]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${LINES.length} records`);
  });

  it('",}" inside a string is text, not a trailing comma: the file loads whole', () => {
    const p = file('comma-in-string.jsonl', edited(5, (rec) => (rec.span_name = 'select \'a,}\' , ] from x')));
    const r = runCli(['load', p]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${LINES.length} records`);
  });
});

describe('a JSONL file and the Parquet file convert writes of it give the same answer', () => {
  const FAILED = readFileSync(path.join(ROOT, 'samples/failed-build.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>);
  const NUMBERS: Record<string, Record<string, number>> = {
    node_outcome: { NODE_OUTCOME_ERROR: 2, NODE_OUTCOME_SKIPPED: 4 },
    node_skip_reason: { NODE_SKIP_REASON_UPSTREAM: 1 },
    node_type: { NODE_TYPE_TEST: 3 },
  };

  it('enum attributes written as numbers (which no Parquet column holds) count alike in runs and gate', () => {
    const lines = FAILED.map((r) => {
      const a = { ...r.attributes };
      for (const [k, map] of Object.entries(NUMBERS)) if (typeof a[k] === 'string' && map[a[k] as string] !== undefined) a[k] = map[a[k] as string];
      return JSON.stringify({ ...r, attributes: a });
    });
    const j = file('numbers.jsonl', lines);
    const p = path.join(dir, 'numbers.parquet');
    expect(runCli(['convert', j, p]).code).toBe(0);
    const runs = (f: string) => (JSON.parse(runCli(['runs', f, '--format', 'json']).stdout) as Record<string, unknown>[]).map(({ files: _, ...run }) => run);
    expect(runs(p)).toEqual(runs(j));
    expect(JSON.stringify(runs(j))).toMatch(/"error":2\b/);
    for (const f of [j, p]) {
      const g = runCli(['gate', f, '--fail-on', 'error']);
      expect(g.code, f).toBe(1);
      expect(g.stdout + g.stderr, f).toContain('2 errors');
    }
  });

  it("a log's code its UInt32 column cannot hold reads the same from either", () => {
    const n = FAILED.findIndex((r) => String(r.event_type).endsWith('.LogMessage'));
    const lines = FAILED.map((r, i) => JSON.stringify(i === n ? { ...r, attributes: { ...r.attributes, code: -7 } } : r));
    const j = file('log-code.jsonl', lines);
    const p = path.join(dir, 'log-code.parquet');
    expect(runCli(['convert', j, p]).code).toBe(0);
    for (const f of [j, p]) {
      const q = runCli(['query', f, '--sql', 'SELECT code FROM logs WHERE code IS NOT NULL', '--format', 'json']);
      expect(q.stdout, f + q.stderr).toMatch(/"code":\s*-7/);
    }
  });
});

describe('a Parquet row is held to the rules of a JSONL line', () => {
  it('a trace_id that is not 32 hex digits is refused by its row in load and convert, a violation of validate', async () => {
    const p = await rewriteParquet('bad-trace.parquet', 'samples/failed-build.parquet', `CASE WHEN r = 5 THEN 'zzz' ELSE trace_id END AS trace_id`);
    const why = `${p}:5: trace_id: must be 32 hex digits (or a UUID) (got "zzz")`;
    for (const args of [['load', p], ['runs', p], ['convert', p, path.join(dir, 'bad-trace.jsonl')]]) {
      const r = runCli(args);
      expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr, args[0]).toContain(why);
    }
    const v = runCli(['validate', p]);
    expect(v.code, v.stdout + v.stderr).toBe(1);
    expect(v.stdout).toContain(why);
    const lenient = runCli(['load', p, '--lenient']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stderr).toContain(`skipped 1 row in ${p}`);
  });

  it('a span without an event_type is told by its span name, as from JSONL: its test outcome is kept', async () => {
    const p = await rewriteParquet('no-event-type.parquet', 'samples/failed-build.parquet',
      `CASE WHEN record_type = 'SpanEnd' THEN NULL ELSE event_type END AS event_type`);
    const g = runCli(['gate', p, '--fail-on', 'test-failed']);
    expect(g.code, g.stdout + g.stderr).toBe(1);
    expect(g.stdout + g.stderr).toContain('1 test failed');
    // the engine's layout requires the field: validate and convert name it
    const missing = /no-event-type\.parquet:\d+: event_type: missing \(the engine's layout requires it\)/;
    const c = runCli(['convert', p, path.join(dir, 'no-event-type.jsonl')]);
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(missing);
    const v = runCli(['validate', p]);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(missing);
  });

  it('a zero-byte .parquet file (what a killed engine leaves) is a truncated Parquet file; an empty .jsonl is not', () => {
    const p = file('killed.parquet', []);
    writeFileSync(p, '');
    for (const args of [['load', p], ['runs', p], ['validate', p], ['convert', p, path.join(dir, 'killed.jsonl')]]) {
      const r = runCli(args);
      expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr, args[0]).toContain(`${p}: truncated Parquet file (no footer)`);
    }
    const j = path.join(dir, 'empty.jsonl');
    writeFileSync(j, '');
    const r = runCli(['load', j]);
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('a Parquet column of another type than the layout\'s is named once, before any row is read', () => {
  it.each([
    ['status_code', `CAST(status_code AS VARCHAR)`, 'status_code: must be UINTEGER, got VARCHAR'],
    ['span_id', `CAST(span_id AS VARCHAR)`, 'span_id: must be UBIGINT, got VARCHAR'],
    ['start_time_unix_nano', `epoch_ns(start_time_unix_nano)`, 'start_time_unix_nano: must be TIMESTAMP_NS, got BIGINT'],
    ['severity_number', `CAST(severity_number AS VARCHAR)`, 'severity_number: must be INTEGER, got VARCHAR'],
    ['attributes.code', `struct_update(attributes, code := CAST(attributes.code AS VARCHAR))`, 'attributes.code: must be UINTEGER, got VARCHAR'],
  ])('%s: load, runs, validate and convert exit 2 naming the column and both types', async (column, expr, message) => {
    const target = column.startsWith('attributes.') ? 'attributes' : column;
    const p = await rewriteParquet(`type-${column}.parquet`, 'samples/failed-build.parquet', `${expr} AS ${target}`);
    for (const args of [['load', p], ['runs', p], ['validate', p], ['convert', p, path.join(dir, `type-${column}.jsonl`)]]) {
      const r = runCli(args);
      expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr.trim(), args[0]).toBe(`runlens: ${p}: ${message}`);
    }
  });

  it('a type the reader takes exactly (an integer of another width, a timestamp of another unit) loads as the layout\'s', async () => {
    const p = await rewriteParquet('type-wider.parquet', 'samples/failed-build.parquet',
      `CAST(status_code AS BIGINT) AS status_code, CAST(end_time_unix_nano AS TIMESTAMP) AS end_time_unix_nano`);
    const g = runCli(['gate', p, '--fail-on', 'test-failed']);
    expect(g.code, g.stdout + g.stderr).toBe(1);
    expect(g.stdout + g.stderr).toContain('1 test failed');
    const v = runCli(['validate', p, '--no-warnings']);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});

describe('a Parquet file whose attributes are not the layout\'s (a plain copy of JSONL) says what is not read', () => {
  it('fields outside the layout and no json_payload: validate warns naming them, load says it read none of them', async () => {
    const p = await rewriteParquet('plain-attrs.parquet', 'samples/failed-build.parquet',
      `struct_pack(unique_id := attributes.unique_id, node_outcome := attributes.node_outcome, node_test_detail := attributes.json_payload) AS attributes`);
    const v = runCli(['validate', p]);
    // (the JSON text of json_payload, a string, where the model reads an object: a violation besides)
    expect(v.code, v.stdout + v.stderr).toBe(1);
    expect(v.stdout).toContain(`${p}:1: attributes.node_test_detail: must be an object (got `);
    expect(v.stdout).toContain(`${p}:1: attributes: fields outside the engine's layout are not read (node_test_detail: kept in attributes`);
    expect(v.stdout).toContain('no json_payload field');
    const l = runCli(['load', p]);
    expect(l.code, l.stderr).toBe(0);
    expect(l.stderr).toContain(`runlens: ${p}: attributes: fields outside the engine's layout are not read (node_test_detail: kept in attributes`);
    expect(l.stderr).toContain("no json_payload field (where the layout keeps test results and skipped nodes' upstreams): none is read");
    const clean = runCli(['load', path.join(ROOT, 'samples/failed-build.parquet')]);
    expect(clean.stderr).not.toContain('attributes:');
  });

  it('convert to JSONL keeps the fields outside the layout in attributes, so the converted file still fails its gate', async () => {
    // what `COPY (SELECT * FROM read_json(...)) TO x.parquet` makes of the engine's JSONL: plain attribute fields
    const p = await rewriteParquet('plain-copy.parquet', 'samples/failed-build.parquet',
      `struct_pack(unique_id := attributes.unique_id, node_outcome := attributes.node_outcome,
        node_test_detail := coalesce(json_extract(attributes.json_payload, '$.node_outcome_detail.NodeTestDetail'), json_extract(attributes.json_payload, '$.NodeTestDetail')),
        extra := struct_pack(n := 1, tags := ['a', 'b'])) AS attributes`);
    const out = path.join(dir, 'plain-copy.jsonl');
    const c = runCli(['convert', p, out]);
    expect(c.code, c.stderr).toBe(0);
    const records = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { attributes: Record<string, unknown> });
    const failedTest = records.find((r) => (r.attributes.node_test_detail as { test_outcome?: string } | undefined)?.test_outcome === 'TEST_OUTCOME_FAILED');
    expect(failedTest, 'the failed test detail is in the converted JSONL').toBeDefined();
    expect(records.filter((r) => r.attributes.extra).every((r) => JSON.stringify(r.attributes.extra) === '{"n":1,"tags":["a","b"]}')).toBe(true);
    expect(records.some((r) => r.attributes.extra)).toBe(true);
    const g = runCli(['gate', out, '--fail-on', 'test-failed']);
    expect(g.code, g.stdout + g.stderr).toBe(1);
    expect(g.stdout).toContain('1 test failed');
  });
});

describe('a failing-row count the format cannot hold is unknown, never 0', () => {
  const withCount = (v: string) => readFileSync(path.join(ROOT, 'samples/failed-build.jsonl'), 'utf8').replace(/"failing_rows":4,/g, `"failing_rows":${v},`);

  it.each([['3000000000', 'past 32 bits'], ['4.5', 'not an integer']])('%s (%s): failed-tests and the gate say not recorded, validate names it', (v) => {
    const p = path.join(dir, `count-${v.replace(/\W/g, '')}.jsonl`);
    writeFileSync(p, withCount(v));
    const q = runCli(['query', 'failed-tests', p, '--format', 'json']);
    expect(q.code, q.stderr).toBe(0);
    expect((JSON.parse(q.stdout) as { failing_rows: number | null }[]).map((r) => r.failing_rows)).toEqual([null]);
    const g = runCli(['gate', p, '--fail-on', 'test-failed', '--reporter', 'json']);
    expect(g.code).toBe(1);
    expect(JSON.stringify(JSON.parse(g.stdout).offenders)).toContain('failing rows not recorded');
    const val = runCli(['validate', p, '--no-warnings']);
    expect(val.code).toBe(1);
    expect(val.stdout).toContain('node_test_detail.failing_rows: 32-bit integer');
  });

  it("an older engine's count past 32 bits is read as not recorded, and migrate writes it so", () => {
    const legacyDir = path.join(dir, 'big-count', 'target');
    mkdirSync(legacyDir, { recursive: true });
    const src = path.join(ROOT, '../shared/samples/legacy-corpus/OpenLineage__OpenLineage__integration_common_tests_dbt_test_target_run_results.json');
    if (!existsSync(src)) return skipOrFailInCi(`the legacy corpus sample ${src} is missing`);
    const doc = JSON.parse(readFileSync(src, 'utf8')) as { results: { status: string; failures?: number | null }[] };
    const failed = doc.results.filter((r) => r.status === 'fail');
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) r.failures = 3_000_000_000;
    const file = path.join(legacyDir, 'run_results.json');
    writeFileSync(file, JSON.stringify(doc));
    const g = runCli(['gate', file, '--fail-on', 'test-failed', '--reporter', 'json']);
    expect(g.code, g.stderr).toBe(1);
    const reasons = (JSON.parse(g.stdout).offenders as { reason: string }[]).map((o) => o.reason);
    expect(reasons.length).toBe(failed.length);
    for (const r of reasons) expect(r).toContain('failing rows not recorded');
    const out = path.join(dir, 'big-count.jsonl');
    expect(runCli(['migrate', file, '-o', out]).code).toBe(0);
    const v = runCli(['validate', out]);
    expect(v.code, v.stdout).toBe(0);
  });
});
