/**
 * How the older engine's files are read as bytes and text, held to what the telemetry JSONL reader
 * holds a line to: a key written twice, invalid UTF-8, a byte order mark, UTF-16 and line ends are
 * said with the file (and line), never read as something else.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir('runlens-legacy-encoding-');
const RR = 'samples/older-engine/target/run_results.json';
const MANIFEST = 'samples/older-engine/target/manifest.json';
const LOG = 'samples/older-engine/logs/dbt.log';

/** A folder `name` holding `file` (bytes) and, when asked, the sample manifest.json beside it. */
function put(name: string, file: string, bytes: Buffer | string, withManifest = false): string {
  const d = path.join(dir, name);
  mkdirSync(d, { recursive: true });
  if (withManifest) copyFileSync(MANIFEST, path.join(d, 'manifest.json'));
  const p = path.join(d, file);
  writeFileSync(p, bytes);
  return p;
}

/** The sample log's lines (LF-separated, as bytes), edited by `edit`. */
function logWith(edit: (lines: Buffer[]) => void): Buffer {
  const lines: Buffer[] = [];
  const b = readFileSync(LOG);
  for (let from = 0, nl = b.indexOf(0x0a); from < b.length; from = nl + 1, nl = b.indexOf(0x0a, from)) lines.push(b.subarray(from, nl < 0 ? b.length : nl));
  edit(lines);
  return Buffer.concat(lines.flatMap((l, i) => (i ? [Buffer.from('\n'), l] : [l])));
}

function expectRefused(r: { code: number; stderr: string }, where: RegExp): void {
  expect(r.stderr).toMatch(where);
  expect(r.code).toBe(2);
  expect(r.stderr).not.toContain('translated.jsonl');
  expect(r.stderr).not.toContain('internal error');
}

describe('a key written twice', () => {
  it('in run_results.json is refused naming the file, line and key, not read last-wins', () => {
    const text = readFileSync(RR, 'utf8').replace('"status": "error"', '"status": "error", "status": "success"');
    const file = put('twice-rr', 'run_results.json', text, true);
    const line = text.slice(0, text.indexOf('"status": "error", "status"')).split('\n').length;
    const where = new RegExp(`run_results\\.json:${line}: results\\[4\\]\\.status: key written twice`);
    for (const args of [['gate', file, '--fail-on', 'error'], ['runs', file], ['migrate', file, '-o', path.join(dir, 'twice-rr.jsonl')]]) expectRefused(runCli(args), where);
  });

  it('in a JSON log line is refused naming the file, line and key; --lenient skips the line', () => {
    const file = put('twice-log', 'dbt.log', logWith((l) => {
      l[55] = Buffer.from(l[55]!.toString().replace('"status":"error","total"', '"status":"error","status":"success","total"'));
      l[56] = Buffer.from(l[56]!.toString().replace('"status":"error","thread"', '"status":"error","status":"success","thread"'));
    }));
    expect(readFileSync(file, 'utf8').split('"status":"error","status":"success"')).toHaveLength(3);
    expectRefused(runCli(['gate', file, '--fail-on', 'error']), /dbt\.log:56: [a-z_.]*status: key written twice.*--lenient/);
    expectRefused(runCli(['migrate', file, '-o', path.join(dir, 'twice-log.jsonl')]), /dbt\.log:56: [a-z_.]*status: key written twice/);
    const lenient = runCli(['runs', file, '--lenient']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stderr).toMatch(/dbt\.log:56/);
  });
});

describe('the start of a JSON log line', () => {
  it('white space before `{` is read as the JSON it is: the node keeps its error', () => {
    const file = put('ws-log', 'dbt.log', logWith((l) => {
      l[55] = Buffer.concat([Buffer.from(' '), l[55]!]);
      l[56] = Buffer.concat([Buffer.from('\t '), l[56]!]);
    }));
    const r = runCli(['gate', file, '--fail-on', 'error']);
    expect(r.stdout).toMatch(/gate FAILED: 1 error/);
    expect(r.code).toBe(1);
    const m = runCli(['migrate', file, '-o', path.join(dir, 'ws-log.jsonl')]);
    expect(m.stdout).toMatch(/error 1/);
    expect(m.stdout).not.toMatch(/canceled|non-JSON/);
  });

  it('a byte order mark is refused as telemetry JSONL refuses it; --lenient skips the line', () => {
    const file = put('bom-log', 'dbt.log', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(LOG)]));
    const where = /dbt\.log:1: starts with a UTF-8 byte order mark \(BOM\), which JSON does not allow/;
    expectRefused(runCli(['runs', file]), where);
    expectRefused(runCli(['migrate', file, '-o', path.join(dir, 'bom-log.jsonl')]), where);
    const lenient = runCli(['runs', file, '--lenient']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stderr).toMatch(/dbt\.log:1/);
  });
});

describe('line ends of a JSON log', () => {
  it('only LF ends a line: a lone CR does not, and errors name the line awk and sed count', () => {
    const file = put('cr-log', 'dbt.log', logWith((l) => {
      l.splice(2, 2, Buffer.concat([l[2]!, Buffer.from('\r'), l[3]!])); // lines 3 and 4 joined by a lone CR
      l[60] = l[60]!.subarray(0, 50); // line 61 cut mid-way
    }));
    expectRefused(runCli(['runs', file]), /dbt\.log:3: malformed JSON/);
    expect(runCli(['runs', file, '--lenient']).stderr).toMatch(/dbt\.log:3: malformed JSON.*\n.*dbt\.log:61: malformed JSON: Unterminated string/);
  });

  it('CRLF line ends are read as LF ones; a lone CR between tokens is white space in its line', () => {
    const text = readFileSync(LOG, 'utf8');
    const file = put('crlf-log', 'dbt.log', text.replaceAll('\n', '\r\n').replace('{"data":{"args"', '{"data":\r{"args"'));
    const r = runCli(['migrate', file, '-o', path.join(dir, 'crlf-log.jsonl')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/error 1/);
    expect(r.stdout).toContain(`${text.split('\n').length - (text.endsWith('\n') ? 1 : 0)} lines`);
  });
});

describe('invalid UTF-8', () => {
  it('in run_results.json is refused naming the file, in manifest.json said, not read as U+FFFD', () => {
    const bad = (b: Buffer) => Buffer.from(b.toString('latin1').replace('model.shop.stg_customers', 'model.shop.stg_cust\xc0\xafomers'), 'latin1');
    const rr = put('utf8-rr', 'run_results.json', bad(readFileSync(RR)), true);
    expectRefused(runCli(['runs', rr]), /run_results\.json: not valid UTF-8/);
    const m = put('utf8-manifest', 'manifest.json', bad(readFileSync(MANIFEST)));
    copyFileSync(RR, path.join(path.dirname(m), 'run_results.json'));
    // a manifest beside a run that cannot be read is not used, and said so
    const r = runCli(['gate', path.join(path.dirname(m), 'run_results.json')]);
    expect(r.stderr).toMatch(/could not be read, so none was used .*manifest\.json: not valid UTF-8/);
  });

  it('in a JSON log line is refused naming the file and line, not read as U+FFFD; --lenient skips the line', () => {
    const file = put('utf8-log', 'dbt.log', Buffer.from(readFileSync(LOG, 'latin1').replaceAll('model.shop.stg_customers', 'model.shop.stg_cust\xffomers'), 'latin1'));
    const where = /dbt\.log:48: not valid UTF-8/;
    expectRefused(runCli(['runs', file]), where);
    expectRefused(runCli(['gate', file, '--fail-on', 'error']), where);
    expectRefused(runCli(['migrate', file, '-o', path.join(dir, 'utf8-log.jsonl')]), where);
    const lenient = runCli(['runs', file, '--lenient']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stderr).toMatch(/dbt\.log:48: not valid UTF-8/);
    expect(lenient.stderr).toMatch(/dbt\.log:57: not valid UTF-8/);
  });
});

describe('UTF-16', () => {
  /** UTF-16 text as Windows PowerShell's `>` writes it (little-endian, with a byte order mark), or big-endian without one. */
  const le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  const be = (text: string) => Buffer.from(text, 'utf16le').swap16();
  const where = (file: string) => new RegExp(`${file.replace('.', '\\.')}: UTF-16 text \\((little|big)-endian\\), not UTF-8: save the file as UTF-8`);

  it('a run_results.json or JSON log in UTF-16 is said to be one, naming the file', () => {
    const rr = put('utf16-rr', 'run_results.json', le(readFileSync(RR, 'utf8')), true);
    expectRefused(runCli(['gate', rr, '--fail-on', 'error']), where('run_results.json'));
    expectRefused(runCli(['migrate', rr, '-o', path.join(dir, 'utf16-rr.jsonl')]), where('run_results.json'));
    const log = put('utf16-log', 'dbt.log', be(readFileSync(LOG, 'utf8')));
    expectRefused(runCli(['runs', log]), where('dbt.log'));
    expectRefused(runCli(['migrate', path.dirname(log), '-o', path.join(dir, 'utf16-log.jsonl')]), where('dbt.log'));
  });

  it('a manifest.json in UTF-16 beside a run is said to be one', () => {
    const m = put('utf16-manifest', 'manifest.json', le(readFileSync(MANIFEST, 'utf8')));
    copyFileSync(RR, path.join(path.dirname(m), 'run_results.json'));
    const r = runCli(['gate', path.join(path.dirname(m), 'run_results.json')]);
    expect(r.stderr).toMatch(/could not be read, so none was used .*manifest\.json: UTF-16 text \(little-endian\), not UTF-8/);
  });

  it('telemetry JSONL in UTF-16 is said to be one, by every command that reads it', () => {
    const file = put('utf16-jsonl', 'run.jsonl', le(readFileSync('samples/failed-build.jsonl', 'utf8')));
    for (const args of [['runs', file], ['gate', file], ['validate', file], ['convert', file, path.join(dir, 'utf16.parquet')]]) expectRefused(runCli(args), where('run.jsonl'));
  });
});

describe('a byte order mark before a JSON document', () => {
  const withBom = (file: string) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(file)]);

  it('in run_results.json is refused as telemetry JSONL refuses one', () => {
    const rr = put('bom-rr', 'run_results.json', withBom(RR), true);
    const where = /run_results\.json: starts with a UTF-8 byte order mark \(BOM\), which JSON does not allow: save the file without one/;
    for (const args of [['gate', rr], ['runs', rr], ['migrate', rr, '-o', path.join(dir, 'bom-rr.jsonl')]]) expectRefused(runCli(args), where);
  });

  it('in a manifest.json beside a run is said once, with its path once', () => {
    const m = put('bom-manifest', 'manifest.json', withBom(MANIFEST));
    copyFileSync(RR, path.join(path.dirname(m), 'run_results.json'));
    const r = runCli(['gate', path.join(path.dirname(m), 'run_results.json')]);
    expect(r.stderr).toMatch(/could not be read, so none was used \([^()]*manifest\.json: starts with a UTF-8 byte order mark \(BOM\)/);
    expect(r.stderr.split('manifest.json:')).toHaveLength(2);
    expectRefused(runCli(['gate', path.join(path.dirname(m), 'run_results.json'), '--manifest', m]), /manifest\.json: starts with a UTF-8 byte order mark/);
  });
});
