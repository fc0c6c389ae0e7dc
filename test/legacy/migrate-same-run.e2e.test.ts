/**
 * `migrate` of a run_results.json and the log of the same invocation: the output holds one copy of
 * the run, built as a load keeps one reading the inputs in place (the artifact's records, the log's
 * records not already present, an ERROR of the log raising the artifact's copy of the span), so
 * every reading command answers on the output as it does on the inputs.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const OE = path.resolve('samples/older-engine');

/** A command's JSON output without what names the input files. */
function json(args: string[]): unknown {
  const r = runCli(args);
  if (r.code !== 0 && r.code !== 1) throw new Error(`runlens ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  const strip = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(strip) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'files' && k !== 'source_file').map(([k, x]) => [k, strip(x)])) : v;
  return strip(JSON.parse(r.stdout));
}

const COMMANDS = [
  ['runs', '--format', 'json'],
  ['gate', '--reporter', 'json'],
  ['query', 'errors', '--format', 'json'],
  // (read in place, the run_results.json's manifest is found beside it; the output needs it named)
  ['critical-path', '--format', 'json', '--manifest', path.join(OE, 'target/manifest.json')],
  ['query', '--sql', 'SELECT trace_id, unique_id, phase, node_outcome, test_outcome, error_text FROM node_results ORDER BY ALL', '--format', 'json'],
  ['query', '--sql', 'SELECT trace_id, span_id, span_name, status_code, status_message, duration_ms FROM spans ORDER BY ALL', '--format', 'json'],
];

describe.each(['jsonl', 'parquet'])('migrate of a run_results.json and its log to %s', (ext) => {
  it('writes one copy of the run: every reading command answers as on the inputs in place', () => {
    const out = path.join(tempDir('runlens-same-run-'), `all.${ext}`);
    const m = runCli(['migrate', OE, '-o', out]);
    expect(m.stderr).toBe('');
    expect(m.code).toBe(0);
    for (const args of COMMANDS) expect(json([...args, out]), args.join(' ')).toEqual(json([...args, OE]));
    // the error text once, the artifact's durations and status message
    const errors = json(['query', 'errors', '--format', 'json', out]) as { error_text: string }[];
    expect(errors[0]!.error_text.length).toBe((json(['query', 'errors', '--format', 'json', OE]) as { error_text: string }[])[0]!.error_text.length);
    const gate = json(['gate', '--reporter', 'json', out]) as { runs: { status_message: string }[]; offenders: { duration_ms: number }[] };
    expect(gate.runs[0]!.status_message).toBe('Executed with errors');
    expect(gate.offenders.map((o) => o.duration_ms)).toEqual([410, 890, 119]);
  }, 120_000);
});

describe('migrate of a run_results.json and a log that ends a span with ERROR where the artifact ends it well', () => {
  it('writes the artifact\'s copy with the log\'s ERROR status, as a load keeps it', () => {
    const dir = tempDir('runlens-same-run-');
    mkdirSync(path.join(dir, 'target'));
    mkdirSync(path.join(dir, 'logs'));
    copyFileSync(path.join(OE, 'target/manifest.json'), path.join(dir, 'target/manifest.json'));
    copyFileSync(path.join(OE, 'logs/dbt.log'), path.join(dir, 'logs/dbt.log'));
    const rr = JSON.parse(readFileSync(path.join(OE, 'target/run_results.json'), 'utf8')) as { results: { unique_id: string; status: string; message: string | null }[] };
    const model = rr.results.find((r) => r.unique_id === 'model.shop.stg_customers')!;
    Object.assign(model, { status: 'success', message: 'OK' });
    writeFileSync(path.join(dir, 'target/run_results.json'), JSON.stringify(rr));
    const out = path.join(tempDir('runlens-same-run-'), 'all.jsonl');
    expect(runCli(['migrate', dir, '-o', out]).code).toBe(0);
    const status = `SELECT status_code, status_message FROM spans WHERE kind = 'node_processed' AND unique_id = 'model.shop.stg_customers'`;
    const inPlace = json(['query', '--sql', status, '--format', 'json', dir]) as { status_code: number }[];
    expect(inPlace.map((r) => r.status_code)).toEqual([2]);
    expect(json(['query', '--sql', status, '--format', 'json', out])).toEqual(inPlace);
    for (const args of COMMANDS) expect(json([...args, out]), args.join(' ')).toEqual(json([...args, dir]));
  }, 120_000);
});

describe('migrate of the same run twice', () => {
  it('is the same bytes each time and holds no record twice', () => {
    const dir = tempDir('runlens-same-run-');
    const a = path.join(dir, 'a.jsonl');
    const b = path.join(dir, 'b.jsonl');
    expect(runCli(['migrate', OE, '-o', a]).code).toBe(0);
    expect(runCli(['migrate', path.join(OE, 'logs'), path.join(OE, 'target'), '-o', b]).code).toBe(0);
    const text = readFileSync(a, 'utf8');
    expect(readFileSync(b, 'utf8')).toBe(text);
    const ends = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { record_type: string; trace_id: string; span_id: string }).filter((r) => r.record_type !== 'LogRecord').map((r) => `${r.trace_id} ${r.span_id} ${r.record_type}`);
    expect(new Set(ends).size).toBe(ends.length);
  });
});

describe('two copies of a run_results.json, one without the failed test\'s count and one that says 0', () => {
  it('keep the known count in either order, read in place or migrated', () => {
    const dir = tempDir('runlens-same-run-');
    const rr = JSON.parse(readFileSync(path.join(OE, 'target/run_results.json'), 'utf8')) as { results: { unique_id: string; failures: number | null }[] };
    const copy = (name: string, failures: number | null) => {
      const test = rr.results.find((r) => r.unique_id === 'test.shop.not_null_stg_orders_customer_id.5c1d2e3f4a')!;
      test.failures = failures;
      mkdirSync(path.join(dir, name));
      copyFileSync(path.join(OE, 'target/manifest.json'), path.join(dir, name, 'manifest.json'));
      writeFileSync(path.join(dir, name, 'run_results.json'), JSON.stringify(rr));
      return path.join(dir, name, 'run_results.json');
    };
    const unknown = copy('unknown', null);
    const zero = copy('zero', 0);
    const failed = ['query', '--sql', `SELECT unique_id, test_outcome, failing_rows FROM node_results WHERE test_outcome = 'failed'`, '--format', 'json'];
    // alone, the count is unknown (NULL), not 0
    expect(json([...failed, unknown])).toEqual([{ unique_id: 'test.shop.not_null_stg_orders_customer_id.5c1d2e3f4a', test_outcome: 'failed', failing_rows: null }]);
    const want = [{ unique_id: 'test.shop.not_null_stg_orders_customer_id.5c1d2e3f4a', test_outcome: 'failed', failing_rows: 0 }];
    for (const order of [[unknown, zero], [zero, unknown]]) {
      expect(json([...failed, ...order]), order.join(' ')).toEqual(want);
      const out = path.join(dir, `migrated-${path.basename(path.dirname(order[0]!))}-first.jsonl`);
      expect(runCli(['migrate', ...order, '-o', out]).code).toBe(0);
      expect(json([...failed, out]), `migrate ${order.join(' ')}`).toEqual(want);
    }
  });
});
