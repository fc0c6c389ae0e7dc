/**
 * A big run_results.json split between threads (`migrate --jobs N`) must give the sequential output
 * byte for byte: span ids and log records' event ids are derived from what they stand for, not drawn
 * per thread. Runs the built CLI, since the helper threads run compiled code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';
import { manifest, runResults, writeJson, type R } from './helpers.js';

const lines = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n');

/** n nodes: models that succeed or error (each error followed by a skip), tests that pass, fail or warn, and hooks. */
function bigRun(n: number): Record<string, unknown> {
  const results: R[] = [{ id: 'operation.p.p-on-run-start-0', status: 'success', at: [0, 0.5] }];
  for (let i = 1; i < n - 1; i++) {
    const at: [number, number] = [1 + i * 0.01, 1 + i * 0.01 + 0.008];
    switch (i % 7) {
      case 3:
        results.push({ id: `model.p.m_${i}`, status: 'error', message: `Database Error in model m_${i}`, at });
        break;
      case 4:
        results.push({ id: `model.p.m_${i}`, status: 'skipped', message: `SKIP relation because m_${i - 1} failed` });
        break;
      case 5:
        results.push({ id: `test.p.t_${i}.abc`, status: i % 2 ? 'fail' : 'warn', failures: 3, message: 'Got 3 results', at });
        break;
      case 6:
        results.push({ id: `test.p.t_${i}.abc`, status: 'pass', failures: 0, at });
        break;
      default:
        results.push({ id: `model.p.m_${i}`, status: 'success', at });
    }
  }
  results.push({ id: 'operation.p.p-on-run-end-0', status: 'success', at: [200, 200.5] });
  return runResults({ results, which: 'build' });
}

describe('migrate --jobs', () => {
  const input = writeJson('run_results.json', bigRun(3001));
  // each skipped model depends on the model before it, which errored: the manifest names it
  const edges: Record<string, string[]> = {};
  for (let i = 4; i < 3000; i += 7) edges[`model.p.m_${i}`] = [`model.p.m_${i - 1}`];
  const man = writeJson('manifest.json', manifest(edges));
  const dir = tempDir('runlens-parallel-');
  const migrate = (jobs: number) => {
    const out = path.join(dir, `jobs${jobs}.jsonl`);
    const r = runCli(['migrate', input, '-o', out, '--manifest', man, '--jobs', String(jobs), '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return { out, report: JSON.parse(r.stdout) as { records: number } };
  };

  it('writes what one thread writes, in the same order, with the same counts', () => {
    const one = migrate(1);
    const three = migrate(3);
    const a = lines(one.out);
    const b = lines(three.out);
    expect(b.length).toBe(a.length);
    expect(three.report.records).toBe(a.length);
    expect(one.report.records).toBe(a.length);
    // the skips name their upstream in every part (the manifest is read by each thread)
    const upstream = b.filter((l) => l.includes('"upstream_unique_id":"model.p.m_')).length;
    expect(upstream).toBeGreaterThan(400);
    // one line at a time, so a difference shows where it is
    for (let i = 0; i < a.length; i++) if (b[i] !== a[i]) expect({ line: i + 1, text: b[i] }).toEqual({ line: i + 1, text: a[i] });
    // the helpers' files are gone
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('the same output with any number of threads, log records and their event ids included', () => {
    const a = readFileSync(migrate(1).out);
    expect(a.toString().match(/"record_type":"LogRecord"/g)!.length).toBeGreaterThan(400);
    for (const jobs of [2, 4]) expect(readFileSync(migrate(jobs).out).equals(a)).toBe(true);
  });

  const note = samplesNote(LEGACY);
  it.skipIf(note.missing)(note.title('a real run_results.json: the same bytes with --jobs 1, 2 and 4'), () => {
    const input = sample(LEGACY, 'rr_v4_1.0.0_build_error.json');
    const out = (jobs: number) => {
      const file = path.join(dir, `real-jobs${jobs}.jsonl`);
      expect(runCli(['migrate', input, '-o', file, '--jobs', String(jobs)]).code).toBe(0);
      return readFileSync(file);
    };
    const one = out(1);
    expect(out(2).equals(one)).toBe(true);
    expect(out(4).equals(one)).toBe(true);
  });

  it('output from threads is valid telemetry with unique span ids', () => {
    const { out } = migrate(2);
    expect(runCli(['validate', out]).code).toBe(0);
    const starts = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { record_type: string; span_id: string }).filter((r) => r.record_type === 'SpanStart');
    expect(new Set(starts.map((r) => r.span_id)).size).toBe(starts.length);
  });

  it('says so when --jobs cannot apply (Parquet output), and writes with one thread', () => {
    const out = path.join(dir, 'one.parquet');
    const r = runCli(['migrate', input, '-o', out, '--jobs', '2']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/--jobs splits runs only for JSONL output/);
    expect(runCli(['validate', out]).code).toBe(0);
  });

  it('rejects a --jobs that is not a whole number of 1 or more', () => {
    const r = runCli(['migrate', input, '-o', path.join(dir, 'x.jsonl'), '--jobs', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--jobs/);
    const text = runCli(['migrate', input, '-o', path.join(dir, 'x.jsonl'), '--jobs', 'two']);
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/^runlens: --jobs: expected a whole number of threads/);
    expect(text.stderr).not.toMatch(/internal error/);
  });

  it('rejects a --jobs above its bound, naming the option, and starts no thread', () => {
    const out = path.join(dir, 'many.jsonl');
    const r = runCli(['migrate', input, '-o', out, '--jobs', '99999']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^runlens: --jobs: expected a whole number of threads, from 1 to 16/);
    expect(readdirSync(dir).filter((f) => f.startsWith('many.jsonl'))).toEqual([]);
  });

  it('a run that fails while its helper threads write leaves no part file beside the output', () => {
    const doc = bigRun(3001) as { results: Record<string, unknown>[] };
    // a node in the last helper's part that no thread can translate
    doc.results[2990]!.status = 'bogus';
    const bad = writeJson('run_results.json', doc);
    const out = path.join(dir, 'failed.jsonl');
    const r = runCli(['migrate', bad, '-o', out, '--jobs', '16']);
    expect(r.code, r.stderr).toBe(2);
    expect(readdirSync(dir).filter((f) => f.startsWith('failed.jsonl'))).toEqual([]);
  });
});
