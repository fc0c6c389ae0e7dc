import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { interfaceStyleRun, tempDir, writeLines } from '../helpers/fixtures.js';
import { FUSION, sample, samplesNote } from '../helpers/samples.js';

const note = samplesNote(FUSION);
const P120 = sample(FUSION, 'forwarder-otel-preview120.jsonl');
const P72 = sample(FUSION, 'forwarder-otel-preview72.jsonl');
const dir = tempDir();

describe.skipIf(note.missing)(note.title('the built CLI on real samples'), () => {
  it('runs lists the runs as JSON, newest first', () => {
    const r = runCli(['runs', FUSION, '--format', 'json']);
    expect(r.code).toBe(0);
    const runs = JSON.parse(r.stdout) as { trace_id: string; failed: boolean }[];
    expect(runs.map((x) => [x.trace_id, x.failed])).toEqual([
      ['019c97cafe1c76e2abb150e9427e666a', true],
      ['019abf1d46467a819fcf90d9284d6318', false],
      ['019abf1c70ba7a808f0bcf72dacda1e6', false],
    ]);
  });

  it('tree prints the hierarchy with outcomes and honours --depth and --trace', () => {
    const r = runCli(['tree', P120]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('trace 019c97cafe1c76e2abb150e9427e666a (build): 323 spans');
    expect(r.stdout).toMatch(/├─ Phase: RUN \(nodes: 48\)/);
    expect(r.stdout).toMatch(/Node evaluated \(model\.jaffle_shop\.stg_locations\)\s+\[skipped, skip=upstream \(upstream unit_test\.jaffle_shop\.stg_locations\.test_does_location_opened_at_trunc_to_date\), -> processed [0-9a-f]{16}\]/);
    expect(r.stdout).toMatch(/\[success, test=failed \(2 failing rows\)/);
    const shallow = runCli(['tree', P72, '--trace', '019abf1d', '--depth', '1']);
    expect(shallow.code).toBe(0);
    expect(shallow.stdout).toContain('trace 019abf1d46467a819fcf90d9284d6318');
    expect(shallow.stdout).not.toContain('019abf1c70ba7a808f0bcf72dacda1e6');
    expect(shallow.stdout).not.toContain('Node evaluated');
    expect(shallow.stdout).toMatch(/└─ … 48 child spans/);
    const bad = runCli(['tree', P72, '--depth', 'two']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--depth: expected a whole number');
    const json = JSON.parse(runCli(['tree', P120, '--format', 'json', '--trace', '019c97ca-fe1c-76e2-abb1-50e9427e666a']).stdout);
    expect(json.roots.map((x: { kind: string }) => x.kind)).toEqual(['process', 'invocation']);
  });

  it('query runs saved queries and free SQL in table, json and csv', () => {
    const csv = runCli(['query', 'failed-tests', P120, '--format', 'csv']);
    expect(csv.code).toBe(0);
    expect(csv.stdout.split('\n')[0]).toBe('trace_id,unique_id,resource_type,outcome,failing_rows,file,phase,duration_ms,error_text');
    expect(csv.stdout).toContain('accepted_values_customers_customer_type__new__returning.d299a3800c,test,failed,2,models/marts/customers.yml');
    const sql = runCli(['query', '--sql', 'SELECT count(*)::INT AS n FROM spans', P120, '--format', 'json']);
    expect(JSON.parse(sql.stdout)).toEqual([{ n: 323 }]);
    // a query with no rows (no failed tests in the clean bundled run) is an empty result, not an error
    const none = runCli(['query', 'failed-tests', 'samples/clean-build.jsonl', '--format', 'json']);
    expect(none.stderr).toBe('');
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toEqual([]);
    const table = runCli(['query', 'slowest-nodes', P120, '--param', 'limit=1']);
    expect(table.stdout).toContain('seed.jaffle_shop.raw_items');
    expect(runCli(['query', 'slowest-nodes', P120, '--param', 'limit=x']).code).toBe(2);
    expect(runCli(['query', 'nope', P120]).code).toBe(2);
    expect(runCli(['query', 'run-diff', P120]).stderr).toContain('compares 2 runs; the input has 1');
    const q = runCli(['queries', '--format', 'json']);
    expect((JSON.parse(q.stdout) as { name: string }[]).map((x) => x.name)).toEqual([
      'critical-path', 'errors', 'failed-tests', 'failure-history', 'flaky-tests', 'node-trends', 'outcome-summary', 'run-diff',
      'slowest-nodes', 'source-freshness', 'upstream-skip-chains',
    ]);
  });

  it('gate exits 1 on a failed test or error, 0 on a clean run, and reports in every format', () => {
    const fail = runCli(['gate', P120]);
    expect(fail.code).toBe(1);
    expect(fail.stdout).toContain('gate FAILED: 1 error, 1 test failed, 1 run-error');
    expect(runCli(['gate', P72]).code).toBe(0);
    const gh = runCli(['gate', P120, '--reporter', 'github']);
    expect(gh.stdout).toContain('::error file=models/marts/customers.yml,title=test.jaffle_shop.accepted_values_customers_customer_type__new__returning.d299a3800c test failed::');
    const junit = runCli(['gate', P120, '--reporter', 'junit']);
    expect(junit.code).toBe(1);
    // the 30 tests and the run itself
    expect(junit.stdout).toContain('<testsuites name="runlens gate" tests="31" failures="1" errors="2" skipped="2">');
    expect((junit.stdout.match(/<testcase /g) ?? []).length).toBe(31);
    const js = JSON.parse(runCli(['gate', P120, '--reporter', 'json', '--fail-on', 'skipped']).stdout);
    expect(js.passed).toBe(false);
    expect(js.offenders).toHaveLength(4);
    expect(runCli(['gate', P120, '--fail-on', 'canceled']).code).toBe(0);
    expect(runCli(['gate', P120, '--fail-on', 'bogus']).code).toBe(2);
  });

  it('load --db persists; loading the same file again adds nothing', () => {
    const db = path.join(dir, 'm.duckdb');
    const a = runCli(['load', P120, '--db', db]);
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('736 records, 1 trace');
    const b = runCli(['load', P120, P72, '--db', db]);
    expect(b.stdout).toContain('736 records already present, nothing added');
    expect(b.stdout).toMatch(/model .*: 1728 records, \d+ spans, 3 runs/);
    const g = runCli(['gate', '--db', db, '--trace', '019abf1c']);
    expect(g.code).toBe(0);
  });
});

describe('the built CLI on bad input', () => {
  it('names file and line of a malformed line with exit 2, and --lenient reports skipped lines', () => {
    const bad = writeLines(dir, 'bad.jsonl', [JSON.stringify(interfaceStyleRun()[0]), '{oops', ...interfaceStyleRun().slice(1)]);
    const strict = runCli(['gate', bad]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain(`${bad}:2: malformed JSON`);
    const lenient = runCli(['gate', bad, '--lenient']);
    expect(lenient.code).toBe(1);
    expect(lenient.stderr).toContain(`skipped 1 line in ${bad}`);
    expect(lenient.stderr).toContain(`${bad}:2:`);
  });

  it('the load report of a file with no record says so, and an older-engine log\'s skipped lines are ranges as a telemetry file\'s', () => {
    const empty = path.join(dir, 'empty-load.jsonl');
    writeFileSync(empty, '');
    expect(runCli(['load', empty]).stdout).toContain(`${empty} (jsonl): no records\n`);
    const allBad = path.join(dir, 'all-bad.jsonl');
    writeFileSync(allBad, '{"a":1}\n[1]\nxx\n');
    const r = runCli(['load', '--lenient', allBad]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${allBad} (jsonl): no records, 3 lines skipped\n`);
    // a log of the older engine with 125 damaged lines after its 20th
    const log = readFileSync('samples/older-engine/logs/dbt.log', 'utf8').trimEnd().split('\n');
    const damaged = path.join(dir, 'damaged-log.jsonl');
    writeFileSync(damaged, [...log.slice(0, 20), ...Array.from({ length: 125 }, () => '{"data":'), ...log.slice(20)].join('\n') + '\n');
    const text = runCli(['load', '--lenient', damaged]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain('... and 105 more: lines 41-145\n');
    const json = runCli(['load', '--lenient', '--format', 'json', damaged]);
    expect((JSON.parse(json.stdout) as { files: { moreBadLines: unknown }[] }).files[0]!.moreBadLines).toEqual([[41, 145]]);
  });

  it('a load --db refused at one file says which files it kept before it and which it did not read', () => {
    const bad = writeLines(dir, 'bad-second.jsonl', [JSON.stringify(interfaceStyleRun()[0]), '{oops']);
    const model = path.join(dir, 'kept-before.duckdb');
    const r = runCli(['load', 'samples/clean-build.jsonl', bad, 'samples/two-runs.jsonl', '--db', model]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}:2: malformed JSON`);
    expect(r.stderr).toContain('kept in the model: samples/clean-build.jsonl');
    expect(r.stderr).toContain('not read: samples/two-runs.jsonl');
    expect(runCli(['runs', '--db', model, '--format', 'json']).stdout).toContain('019cadc69a807eb39e6814e375853cfa');
  });

  it('gate never passes unreadable or empty input', () => {
    const empty = path.join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const e = runCli(['gate', empty]);
    expect(e.code).toBe(2);
    expect(e.stderr).toContain(`${empty}: no run in this input`);
    expect(runCli(['gate', path.join(dir, 'nope.jsonl')]).code).toBe(2);
    expect(runCli(['gate']).code).toBe(2);
  });

  it('map-status prints the mapping, or exit 2 for an unknown status', () => {
    const r = runCli(['map-status', 'fail', '--resource-type', 'test', '--format', 'json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ node_outcome: 'success', skip_reason: null, test_outcome: 'failed' });
    expect(runCli(['map-status', 'skipped']).stdout).toBe('node_outcome\tskipped\nskip_reason\tupstream\ntest_outcome\t-\n');
    const bad = runCli(['map-status', 'exploded']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown run-results status "exploded"');
  });
});
