/**
 * A big run_results.json split between threads (`migrate --jobs N`) must give the sequential output:
 * the same lines in the same order, span ids aside (each part draws its own). Runs the built CLI,
 * since the helper threads run compiled code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { manifest, runResults, writeJson, type R } from './helpers.js';

/** Span ids and event ids renamed by first appearance, so two outputs compare line by line. */
function canonical(file: string): string[] {
  const names = new Map<string, string>();
  const name = (id: string) => {
    let n = names.get(id);
    if (n === undefined) names.set(id, (n = `id${names.size}`));
    return n;
  };
  return readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => l.replace(/"([0-9a-f]{16}|[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12})"/g, (_, id: string) => `"${name(id)}"`));
}

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
    const a = canonical(one.out);
    const b = canonical(three.out);
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
});
