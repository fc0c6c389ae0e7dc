/**
 * validate holds each line to the engine's habits (reference/telemetry.md §2.1, §2.2) and to what a
 * load needs: a real engine file passes, and the same file with one line changed is reported on
 * that line and field.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { validateFile, type Issue } from '../../src/produce/validate.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';
import { FUSION, sample, samplesNote } from '../helpers/samples.js';

const note = samplesNote(FUSION);
const REAL = sample(FUSION, 'forwarder-otel_failed-preview120.jsonl');
const dir = tempDir('runlens-validate-rules-');
const dbs: Db[] = [];
afterAll(() => dbs.forEach((d) => d.close()));

const linesOf = () => readFileSync(REAL, 'utf8').split('\n').slice(0, -1);

/** The real file with line `n` (from 1) replaced by what `edit` makes of it; the line's number is kept. */
function changed(name: string, n: number, edit: (line: string) => string): string {
  const lines = linesOf();
  const edited = edit(lines[n - 1]!);
  expect(edited, 'the edit changed the line').not.toBe(lines[n - 1]);
  lines[n - 1] = edited;
  const p = path.join(dir, `${name}.jsonl`);
  writeFileSync(p, lines.join('\n') + '\n');
  return p;
}

/** The real file with one record of line `n` changed as parsed JSON (written back compact). */
const changedRecord = (name: string, n: number, edit: (r: Record<string, unknown>) => void) =>
  changed(name, n, (l) => {
    const r = JSON.parse(l);
    edit(r);
    return JSON.stringify(r);
  });

const violations = async (file: string): Promise<Issue[]> => (await validateFile(file, { maxIssues: 1000 })).issues.filter((i) => i.severity === 'violation');

/** Where a load refuses the file: `line` and `field`, from its InputError. */
async function loadRefusal(file: string): Promise<{ line?: number; field?: string } | null> {
  const db = await openModel();
  dbs.push(db);
  try {
    await loadPaths(db, [file]);
    return null;
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return { line: e.line, field: e.field };
  }
}

describe.skipIf(note.missing)(note.title('validate on a real engine file changed in one line'), () => {
  it('the real file has no violation', async () => {
    expect(await violations(REAL)).toEqual([]);
  });

  it.each([
    ['a time past signed 64 bits', 3, (r: Record<string, unknown>) => (r.time_unix_nano = '18446744073709551615')],
    ['a start time past signed 64 bits', 1, (r: Record<string, unknown>) => (r.start_time_unix_nano = '9223372036854775808')],
    ['a severity number past 32 bits', 2, (r: Record<string, unknown>) => (r.severity_number = 4294967305)],
    ['a status code past 32 bits', 12, (r: Record<string, unknown>) => ((r.status as Record<string, unknown>).code = 2 ** 40)],
  ])('what a load refuses is a violation on the same line and field: %s', async (name, n, edit) => {
    const file = changedRecord(name.replace(/\W+/g, '-'), n, edit);
    const refused = await loadRefusal(file);
    expect(refused).not.toBeNull();
    expect(refused!.line).toBe(n);
    expect((await violations(file)).map((i) => [i.line, i.field])).toContainEqual([n, refused!.field]);
  });

  it('a blank line is a violation on its line (one JSON object per line)', async () => {
    const blank = changed('blank', 5, (l) => `${l}\n`);
    expect((await violations(blank)).map((i) => [i.line, i.field, i.rule])).toEqual([[6, '-', 'a blank line: each line must be one JSON object']]);
  });

  it('a key written twice is a violation naming the key, at any depth', async () => {
    const top = changed('dup-top', 1, (l) => l.replace('{"record_type":"SpanStart",', '{"record_type":"SpanStart","record_type":"SpanStart",'));
    expect((await violations(top)).map((i) => [i.line, i.field])).toEqual([[1, 'record_type']]);
    const nested = changed('dup-nested', 1, (l) => l.replace('"attributes":{', '"attributes":{"host_arch":"x",'));
    expect((await violations(nested)).map((i) => [i.line, i.field])).toEqual([[1, 'attributes.host_arch']]);
  });

  it('white space between tokens is a violation (one compact object per line); escapes the engine would not write are not', async () => {
    const spaced = changed('spaced', 1, (l) => l.replace('"record_type":', '"record_type": '));
    const got = await violations(spaced);
    expect(got.map((i) => i.line)).toEqual([1]);
    expect(got[0]!.rule).toMatch(/compact/);
    expect((await violations(changed('trailing-space', 2, (l) => `${l} `))).map((i) => i.line)).toEqual([2]);
    // a Windows line end is named as what it is
    const crlf = await violations(changed('crlf', 2, (l) => `${l}\r`));
    expect(crlf.map((i) => [i.line, i.rule])).toEqual([[2, 'a carriage return before the newline (a CRLF line end): each line ends with a newline alone']]);
    // the same values written with other escapes are still one compact object
    expect(await violations(changed('escaped', 3, (l) => l.replace('"body":""', '"body":"\\u0041\\/"')))).toEqual([]);
  });

  it("a field the envelope table says is absent on a record type is a violation; a field it does not know is a warning", async () => {
    const cases: [string, number, (l: string) => string, string][] = [
      ['spanstart-status', 1, (l) => l.replace('"event_type":', '"status":null,"event_type":'), 'status'],
      ['spanstart-end', 1, (l) => l.replace('"severity_number":', '"end_time_unix_nano":"1772073188904419001","severity_number":'), 'end_time_unix_nano'],
      ['log-parent', 3, (l) => l.replace('"span_name":', '"parent_span_id":null,"span_name":'), 'parent_span_id'],
    ];
    for (const [name, n, edit, field] of cases) {
      const file = changed(name, n, edit);
      expect((await violations(file)).map((i) => [i.line, i.field]), name).toEqual([[n, field]]);
    }
    const unknown = await validateFile(changed('unknown-key', 1, (l) => l.replace('"event_type":', '"shiny":1,"event_type":')));
    expect(unknown.violations).toBe(0);
    expect(unknown.issues.map((i) => [i.line, i.field, i.severity])).toEqual([[1, 'shiny', 'warning']]);
  });

  it('a node attribute that is not optional in the schema, written at its zero value, is a violation', async () => {
    // line 17: a NodeProcessed SpanEnd of a test that failed (node_test_detail has failing_rows)
    const zero: [string, (a: Record<string, unknown>) => void, string][] = [
      ['in_selection false', (a) => (a.in_selection = false), 'attributes.in_selection'],
      ['relative_path empty', (a) => (a.relative_path = ''), 'attributes.relative_path'],
      ['name empty', (a) => (a.name = ''), 'attributes.name'],
      ['failing_rows 0', (a) => ((a.node_test_detail as Record<string, unknown>).failing_rows = 0), 'attributes.node_test_detail.failing_rows'],
    ];
    for (const [name, edit, field] of zero) {
      const file = changedRecord(name.replace(/\W+/g, '-'), 17, (r) => edit(r.attributes as Record<string, unknown>));
      expect((await violations(file)).map((i) => [i.line, i.field]), name).toEqual([[17, field]]);
    }
    // an optional one (database, sao_enabled) is written at its zero value when set
    const optional = changedRecord('optional-zero', 17, (r) => Object.assign(r.attributes as Record<string, unknown>, { database: '' }));
    expect(await violations(optional)).toEqual([]);
  });

  it("a LogRecord's span_name must be the name of the span its span_id names, wherever that span is in the file", async () => {
    const wrong = (l: string) => l.replace('"span_name":"dbt invocation (019c97ca-fe1c-76e2-abb1-50e9427e666a)"', '"span_name":"Phase: RUN (nodes: 48)"');
    expect((await violations(changed('log-span-name', 3, wrong))).map((i) => [i.line, i.field])).toEqual([[3, 'span_name']]);
    // the log line first, before the span it names
    const lines = linesOf();
    const first = path.join(dir, 'log-first.jsonl');
    writeFileSync(first, [wrong(lines[2]!), ...lines.filter((_, i) => i !== 2)].join('\n') + '\n');
    expect((await violations(first)).map((i) => [i.line, i.field])).toEqual([[1, 'span_name']]);
  });
});
