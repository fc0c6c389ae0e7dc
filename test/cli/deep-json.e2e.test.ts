/**
 * Values nested deeper than the call stack reaches (JSON.parse reads them): no command stops with an
 * internal error. A load reads them (DuckDB's reader); what writes them again in another form
 * refuses them, naming file, line and field.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir();
const LEVELS = 10_000;
const deepObject = '{"a":'.repeat(LEVELS) + '1' + '}'.repeat(LEVELS);
const deepArray = '['.repeat(LEVELS) + '1' + ']'.repeat(LEVELS);

/** failed-build.jsonl with `edit` applied to the text of its first line holding `holds`; returns the file and that line's number. */
function jsonlWith(name: string, holds: string, edit: (line: string) => string): { file: string; line: number } {
  const lines = readFileSync('samples/failed-build.jsonl', 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(holds));
  lines[i] = edit(lines[i]!);
  JSON.parse(lines[i]!);
  const file = path.join(dir, name);
  writeFileSync(file, lines.join('\n'));
  return { file, line: i + 1 };
}

const deepAttribute = jsonlWith('deep-attribute.jsonl', '"links":null', (l) => l.replace('"attributes":{', `"attributes":{"aaa_deep":${deepObject},`));
const deepList = jsonlWith('deep-list.jsonl', '"links":null', (l) => l.replace('"attributes":{', `"attributes":{"aaa_deep":${deepArray},`));
const deepLink = jsonlWith('deep-link.jsonl', '"links":null', (l) =>
  l.replace('"links":null', `"links":[{"trace_id":"019cadc69a8070478b3123ec7e6afa5b","span_id":"bd31605a67ecf92f","attributes":{"x":${deepObject}}}]`),
);
const deepDetail = jsonlWith('deep-detail.jsonl', '"node_test_detail":{}', (l) => l.replace('"node_test_detail":{}', `"node_test_detail":{"x":${deepArray}}`));

describe('a JSONL record holding a deeply nested value', () => {
  for (const [what, input, field] of [
    ['an attribute', deepAttribute, 'attributes.aaa_deep'],
    ['a list attribute', deepList, 'attributes.aaa_deep'],
    ["a link's attribute", deepLink, 'links[0].attributes'],
    ["a test's outcome detail", deepDetail, 'attributes.node_test_detail'],
  ] as const) {
    it(`${what}: runs, gate and validate read it; convert refuses it, naming line and field`, () => {
      expect(runCli(['runs', input.file]).code).toBe(0);
      expect(runCli(['gate', input.file]).code).toBe(1); // the sample's failed build
      const v = runCli(['validate', input.file]);
      expect(v.stderr).not.toMatch(/internal error|call stack/);
      expect(v.code, v.stderr).toBe(0);
      for (const out of ['out.parquet', 'out.jsonl']) {
        const c = runCli(['convert', input.file, path.join(dir, out)]);
        expect(c.code).toBe(2);
        expect(c.stderr).toBe(`runlens: ${input.file}:${input.line}: ${field}: nested deeper than 1000 levels\n`);
      }
    });
  }

  it('with a bad line too (every line then checked as a load checks it), runs names the bad line alone', () => {
    const file = path.join(dir, 'deep-and-bad.jsonl');
    writeFileSync(file, readFileSync(deepAttribute.file, 'utf8') + '\n{"record_type":"Nope"}\n');
    const r = runCli(['runs', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/deep-and-bad\.jsonl:\d+: record_type: must be SpanStart, SpanEnd or LogRecord \(got "Nope"\)/);
    expect(runCli(['runs', '--lenient', file]).code).toBe(0);
  });
});

describe('a deeply nested value in place of an envelope field', () => {
  it('span_name: validate lists it, runs reads the file, convert names it', () => {
    const input = jsonlWith('deep-name.jsonl', '"links":null', (l) => l.replace(/"span_name":"[^"]*"/, `"span_name":${deepArray}`));
    const v = runCli(['validate', input.file]);
    expect(v.code, v.stderr).toBe(1);
    expect(v.stdout).toContain(`${input.file}:${input.line}: span_name: must be a string`);
    expect(runCli(['runs', input.file]).code).toBe(0);
    const c = runCli(['convert', input.file, path.join(dir, 'deep-name.parquet')]);
    expect(c.stderr).toBe(`runlens: ${input.file}:${input.line}: span_name[0][0]: nested deeper than 1000 levels\n`);
  });

  it('severity_number: validate lists it, runs names it, with no internal error', () => {
    const input = jsonlWith('deep-severity.jsonl', '"links":null', (l) => l.replace(/"severity_number":\d+/, `"severity_number":${deepArray}`));
    const v = runCli(['validate', input.file]);
    expect(v.code, v.stderr).toBe(1);
    const r = runCli(['runs', input.file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${input.file}:${input.line}: severity_number: must be an integer (got a list nested deeper than 1000 levels)`);
  });
});

describe("an older engine's run_results.json holding a deeply nested value", () => {
  const file = path.join(dir, 'run_results.json');
  const doc = JSON.parse(readFileSync('samples/older-engine/target/run_results.json', 'utf8')) as { results: Record<string, unknown>[] };
  doc.results[1]!.adapter_response = { code: 'SUCCESS', deep: '@' };
  writeFileSync(file, JSON.stringify(doc, null, 2).replace('"@"', deepObject));

  for (const args of [['migrate', '-o', path.join(dir, 'migrated.jsonl')], ['gate'], ['runs']]) {
    it(`${args[0]} refuses it, naming the field`, () => {
      const r = runCli([...args, file]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${file}: results[1].adapter_response: nested deeper than 1000 levels\n`);
      expect(r.stderr).not.toMatch(/internal error|call stack/);
    });
  }
});
