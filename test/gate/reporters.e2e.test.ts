/**
 * Reporters carry the whole reason (clean text, every line that explains the cause), github annotations
 * name the node's file relative to the project, junit lists every node that failed the gate with the
 * right counts, markdown makes a CI job summary.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MARKDOWN_MAX_BYTES } from '../../src/gate/reporters.js';
import { runCli } from '../helpers/cli.js';
import { TRACE, interfaceStyleRun, tempDir, writeLines } from '../helpers/fixtures.js';
import { FUSION, LEGACY, ROOT, SHARED_SAMPLES, sample, samplesNote } from '../helpers/samples.js';
import { findAll, parseXml, type XmlElement } from './xml.js';

const dir = tempDir('runlens-gate-rep-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FAILED_BUILD = path.join(ROOT, 'samples/failed-build.jsonl');
const BINDER = 'Binder Error: Referenced column "stg_employees_id" not found in FROM clause!';

describe('the bundled failed build', () => {
  it('text: the Binder Error line under the Database Error line', () => {
    const g = runCli(['gate', FAILED_BUILD]);
    expect(g.code).toBe(1);
    expect(g.stdout).toContain('Database Error in model stg_employees (models/staging/stg_employees.sql)');
    expect(g.stdout).toContain(BINDER);
    expect(g.stdout).toContain("'ref' target 'int_reviews_2_src' was not found");
  });

  it('github: one annotation per offender with the project-relative file and the whole reason', () => {
    const lines = runCli(['gate', FAILED_BUILD, '--reporter', 'github']).stdout.trim().split('\n');
    const emp = lines.find((l) => l.includes('title=model.acme.stg_employees'))!;
    expect(emp).toMatch(/^::error file=models\/staging\/stg_employees.sql,title=/);
    expect(emp).toContain(`Database Error in model stg_employees (models/staging/stg_employees.sql)%0A  ${BINDER}`);
    // the run's own annotation has no file
    expect(lines.filter((l) => l.startsWith('::error title=run 019cadc69a8070478b3123ec7e6afa5b'))).toHaveLength(1);
  });

  it('json: offenders carry the reason; runs carry their verdict', () => {
    const js = JSON.parse(runCli(['gate', FAILED_BUILD, '--reporter', 'json']).stdout);
    const emp = js.offenders.find((o: { unique_id: string }) => o.unique_id === 'model.acme.stg_employees');
    expect(emp.reason).toBe(`Database Error in model stg_employees (models/staging/stg_employees.sql)\n  ${BINDER}`);
    expect(js.counts).toMatchObject({ error: 2, 'test-failed': 1, 'run-error': 1 });
  });

  it('junit: every node that failed the gate is a testcase, model errors as <error>, counts match the elements', () => {
    const x = parseXml(runCli(['gate', FAILED_BUILD, '--reporter', 'junit']).stdout);
    expect(x.name).toBe('testsuites');
    const cases = findAll(x, 'testcase');
    const failed = (c: XmlElement, kind: string) => c.children.some((k) => k.name === kind);
    const errorCases = cases.filter((c) => failed(c, 'error')).map((c) => c.attrs.name);
    expect(errorCases).toEqual(expect.arrayContaining(['model.acme.int_reviews_2', 'model.acme.stg_employees', 'run 019cadc69a8070478b3123ec7e6afa5b (build)']));
    expect(errorCases).toHaveLength(3);
    expect(cases.filter((c) => failed(c, 'failure')).map((c) => c.attrs.name)).toEqual(['test.acme.accepted_values_stg_shipments_created_at.73052857b5']);
    const emp = cases.find((c) => c.attrs.name === 'model.acme.stg_employees')!;
    expect(emp.attrs.file).toBe('models/staging/stg_employees.sql');
    expect(emp.children[0]!.text).toContain(BINDER);
    for (const el of [x, ...findAll(x, 'testsuite')]) {
      const own = el.name === 'testsuites' ? cases : el.children.filter((c) => c.name === 'testcase');
      expect(el.attrs, el.attrs.name).toMatchObject({
        tests: String(own.length),
        failures: String(own.filter((c) => failed(c, 'failure')).length),
        errors: String(own.filter((c) => failed(c, 'error')).length),
        skipped: String(own.filter((c) => failed(c, 'skipped')).length),
      });
    }
    expect(x.attrs).toMatchObject({ failures: '1', errors: '3' });
  });

  it('markdown: a one-line verdict and a table of offenders', () => {
    const md = runCli(['gate', FAILED_BUILD, '--reporter', 'markdown']).stdout;
    const lines = md.split('\n');
    expect(lines[0]).toMatch(/^\*\*runlens gate failed\*\*: /);
    const header = lines.findIndex((l) => l.startsWith('| run '));
    expect(lines[header]).toBe('| run | node | file | rule | reason |');
    expect(lines[header + 1]).toBe('| --- | --- | --- | --- | --- |');
    const emp = lines.find((l) => l.includes('model.acme.stg_employees'))!;
    expect(emp).toContain('`models/staging/stg_employees.sql`');
    expect(emp).toContain(`Database Error in model stg_employees (models/staging/stg_employees.sql)<br>Binder Error: Referenced column "stg_employees_id" not found in FROM clause!`);
    // every row has the table's five cells
    for (const row of lines.slice(header)) if (row.startsWith('|')) expect(row.split(/(?<!\\)\|/).length - 2).toBe(5);
    const clean = runCli(['gate', path.join(ROOT, 'samples/clean-build.jsonl'), '--reporter', 'markdown']);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/^\*\*runlens gate passed\*\*: 1 run, 48 node results/);
  });
});

describe('error text without terminal noise', () => {
  it('drops ANSI codes and progress lines, keeps every line of the cause', () => {
    const records = interfaceStyleRun().map((r) => {
      const rec = r as { record_type: string; body?: string };
      if (rec.record_type !== 'LogRecord') return r;
      return {
        ...rec,
        body: '12 of 40 ERROR creating sql view model main.customers .......... [\u001b[31mERROR\u001b[0m in 0.05s]\n'
          + '\u001b[31mDatabase Error in model customers (models/customers.sql)\u001b[0m\n  Parser Error: syntax error at or near "SELEC"\n  LINE 3: SELEC 1\n          ^',
      };
    });
    const file = writeLines(dir, 'ansi.jsonl', records);
    const js = JSON.parse(runCli(['gate', file, '--reporter', 'json', '--fail-on', 'error']).stdout);
    expect(js.offenders[0]).toMatchObject({ trace_id: TRACE, unique_id: 'model.project.customers' });
    expect(js.offenders[0].reason).toBe('Database Error in model customers (models/customers.sql)\n  Parser Error: syntax error at or near "SELEC"\n  LINE 3: SELEC 1\n          ^');
  });
});

describe('text in a GitHub Actions step', () => {
  it('is wrapped in ::stop-commands:: with a token random per run, so no workflow command in a reason runs', () => {
    const records = interfaceStyleRun().map((r) => {
      const rec = r as { record_type: string; body?: string };
      return rec.record_type === 'LogRecord' ? { ...rec, body: 'Database Error\n::add-mask::secret\n  ::error::x\n##[stop-commands]tok' } : r;
    });
    const file = writeLines(dir, 'commands.jsonl', records);
    const tokens = [1, 2].map(() => {
      const out = runCli(['gate', file], { env: { GITHUB_ACTIONS: 'true' } }).stdout;
      const token = /^::stop-commands::([^\n]+)\n/.exec(out)?.[1];
      expect(token).toMatch(/^[0-9a-f]{32}$/);
      expect(out.endsWith(`\n::${token}::\n`)).toBe(true);
      expect(out).toContain('\n      ::add-mask::secret\n');
      return token;
    });
    expect(tokens[0]).not.toBe(tokens[1]);
    const plain = runCli(['gate', file], { env: { GITHUB_ACTIONS: '' } }).stdout;
    expect(plain).toMatch(/^gate FAILED: /);
    expect(plain).not.toContain('stop-commands::');
    // github escapes its data itself; json, junit and markdown are files
    for (const reporter of ['json', 'github', 'junit', 'markdown']) {
      expect(runCli(['gate', file, '--reporter', reporter], { env: { GITHUB_ACTIONS: 'true' } }).stdout, reporter).not.toContain('stop-commands::');
    }
  });
});

/** Every string of a parsed JSON value with `from` replaced by `to`. */
function replaceText(v: unknown, from: string, to: string): unknown {
  if (typeof v === 'string') return v.replaceAll(from, to);
  if (Array.isArray(v)) return v.map((x) => replaceText(x, from, to));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, replaceText(x, from, to)]));
  return v;
}

describe('a line cut at its 500th character', () => {
  // an emoji (two UTF-16 code units) across the cut
  const LONG = `E${'x'.repeat(498)}\u{1F4A5}tail`;
  const file = () => writeLines(dir, 'emoji-cut.jsonl', readFileSync(FAILED_BUILD, 'utf8').trim().split('\n')
    .map((l) => replaceText(JSON.parse(l), `Database Error in model stg_employees (models/staging/stg_employees.sql)\n  ${BINDER}`, LONG) as object));

  it('is cut before a character, not inside it: json stays valid UTF-8, text shows no U+FFFD', () => {
    const f = file();
    const json = runCli(['gate', f, '--reporter', 'json']).stdout;
    expect(json).not.toMatch(/\\ud[89ab]/i);
    const reason = JSON.parse(json).offenders.find((o: { unique_id: string }) => o.unique_id === 'model.acme.stg_employees').reason;
    expect(reason).toBe(`E${'x'.repeat(498)}…`);
    for (const reporter of ['text', 'github', 'markdown']) {
      const out = runCli(['gate', f, '--reporter', reporter]).stdout;
      expect(out, reporter).toContain(`E${'x'.repeat(498)}…`);
      expect(out, reporter).not.toContain('\uFFFD');
    }
  });
});

describe('markdown for $GITHUB_STEP_SUMMARY', () => {
  it('stays under MARKDOWN_MAX_BYTES however long the reasons: rows stop, a line says how many more, the verdict stays', () => {
    const big = path.join(dir, 'big.jsonl');
    expect(runCli(['generate', '-o', big, '--nodes', '3000', '--fail-rate', '0.5', '--runs', '2', '--detail', 'false', '--seed', '7']).code).toBe(0);
    // every error a 30-line database error (a compiled SQL dump), some of it two bytes a character
    let n = 0;
    const long = () => [`Database Error ${n++}`, ...Array.from({ length: 29 }, (_, i) => `  line ${i}: select ${'ü'.repeat(240)} from übersicht`)].join('\n');
    const lines = readFileSync(big, 'utf8').trimEnd().split('\n')
      .map((l) => (l.includes('"severity_text":"ERROR"') ? JSON.stringify({ ...JSON.parse(l), body: long() }) : l));
    writeLines(dir, 'big.jsonl', lines);
    const md = runCli(['gate', big, '--reporter', 'markdown']);
    expect(md.code).toBe(1);
    expect(Buffer.byteLength(md.stdout)).toBeLessThanOrEqual(MARKDOWN_MAX_BYTES);
    expect(md.stdout).toMatch(/^\*\*runlens gate failed\*\*: \d+ errors, \d+ tests failed, 2 run-errors in 2 of 2 runs/);
    const total = JSON.parse(runCli(['gate', big, '--reporter', 'json']).stdout).offenders_total;
    const nodeRows = md.stdout.split('\n').filter((l) => l.startsWith('| `') && !l.includes('| — |')).length;
    const last = md.stdout.trimEnd().split('\n').at(-1)!;
    expect(last).toMatch(/^… and \d+ more node results that fail the gate/);
    expect(nodeRows + Number(/\d+/.exec(last)![0])).toBe(total);
    expect(nodeRows).toBeGreaterThan(10);
  }, 120_000);
});

const fusion = samplesNote(FUSION);
describe.skipIf(fusion.missing)(fusion.title('the real failed run'), () => {
  it('a backtrace is not part of the reason', () => {
    const g = runCli(['gate', sample(FUSION, 'forwarder-otel_failed-preview120.jsonl')]);
    expect(g.stdout).toContain('Unexpected internal error: Timestamp(Nanosecond, None) is not supported');
    expect(g.stdout).not.toContain('__mh_execute_header');
  });
});

const legacy = samplesNote(LEGACY);
describe.skipIf(legacy.missing)(legacy.title("the older engine's failed runs, translated"), () => {
  it('a log: the Database Error block once, without the progress line', () => {
    const out = path.join(dir, 'model-error.jsonl');
    expect(runCli(['migrate', sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl'), '-o', out]).code).toBe(0);
    const js = JSON.parse(runCli(['gate', out, '--reporter', 'json']).stdout);
    const orders = js.offenders.find((o: { unique_id: string }) => o.unique_id === 'model.jaffle_shop.orders');
    expect(orders.reason).toBe('Database Error in model orders (models/orders.sql)\n  syntax error at or near "final"\n  LINE 43: final as (\n           ^\n  compiled code at target/run/jaffle_shop/models/orders.sql');
  });

  it('run_results.json with its manifest: the file from the manifest, the message in full', () => {
    const base = path.join(SHARED_SAMPLES, 'legacy-corpus/OpenLineage__OpenLineage__integration_common_tests_dbt_fail_target');
    const out = path.join(dir, 'rr-fail.jsonl');
    expect(runCli(['migrate', `${base}_run_results.json`, '--manifest', `${base}_manifest.json`, '-o', out]).code).toBe(0);
    const gh = runCli(['gate', out, '--reporter', 'github']).stdout;
    expect(gh).toContain('::error file=models/example/test_second_parallel_dbt_model.sql,title=model.dbt_bigquery_test.test_second_parallel_dbt_model error::');
    expect(gh).toContain('(models/example/test_second_parallel_dbt_model.sql)%0A  Syntax error: Expected end of input but got identifier');
  });
});

describe('warnings carry their reason too', () => {
  it('a source whose freshness warned is given with the WARN line that says how stale it is, as a failed one with its ERROR line', () => {
    const r = runCli(['gate', 'samples/older-engine/target/sources.json', '--fail-on', 'error,freshness-warned', '--reporter', 'json']);
    expect(r.code).toBe(1);
    const reasons = Object.fromEntries((JSON.parse(r.stdout) as { offenders: { unique_id: string; reason: string }[] }).offenders.map((o) => [o.unique_id, o.reason]));
    expect(reasons['source.shop.raw.refunds']).toMatch(/source freshness failed\nsource raw\.refunds: .* s ago/);
    expect(reasons['source.shop.raw.payments']).toMatch(/source freshness warned\nsource raw\.payments: max_loaded_at .*, 50400 s ago \(warn after 12 hour/);
  });
});

describe('input the gate cannot read (exit 2)', () => {
  const damaged = writeLines(dir, 'cut.jsonl', [...interfaceStyleRun().slice(0, 3), '{"record_type": "SpanEnd", "trace_id":']);

  it('junit: a report with one errored testcase that says why, valid XML', () => {
    const r = runCli(['gate', damaged, '--reporter', 'junit']);
    expect(r.code).toBe(2);
    const doc = parseXml(r.stdout);
    const cases = findAll(doc, 'testcase');
    expect(cases).toHaveLength(1);
    expect(doc.attrs.errors ?? findAll(doc, 'testsuites')[0]?.attrs.errors).toBe('1');
    const error = findAll(doc, 'error')[0]!;
    expect(error.attrs.message).toMatch(/cut\.jsonl:4: malformed JSON/);
    expect(r.stderr).toMatch(/cut\.jsonl:4: malformed JSON/);
  });

  it('markdown: a one-line verdict that the gate could not decide, and why', () => {
    const r = runCli(['gate', damaged, '--reporter', 'markdown']);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^\*\*runlens gate could not decide\*\* \(exit 2\): .*cut\.jsonl:4: malformed JSON/);
  });

  it('text, json and github write nothing to stdout: the message is on stderr', () => {
    for (const reporter of ['text', 'json', 'github']) {
      const r = runCli(['gate', damaged, '--reporter', reporter]);
      expect(r.code, reporter).toBe(2);
      expect(r.stdout, reporter).toBe('');
    }
  });
});
