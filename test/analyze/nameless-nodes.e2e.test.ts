/**
 * Node results without a unique_id (proto3 omits an empty string, and nothing else names them) are
 * results of nodes no other run can be matched with: the history and diff queries keep each apart.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/produce/generate/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** two models and every test written without their ids; the first model's results are errors */
const NAMELESS = ['model.acme.stg_stores', 'model.acme.stg_products'];
const nameless = (id: string) => NAMELESS.includes(id) || id.startsWith('test.');
const RUNS = 3;
let file: string;

beforeAll(async () => {
  const gen = join(dir, 'gen.jsonl');
  await generate({ output: gen, nodes: 30, runs: RUNS, seed: 7, failRate: 0.2 });
  // every span of those nodes written without its id
  const out = readFileSync(gen, 'utf8').split('\n').filter(Boolean).map((l) => {
    const r = JSON.parse(l) as { record_type: string; span_name: string; event_type?: string; status?: unknown; attributes?: Record<string, unknown> };
    const id = r.attributes?.unique_id;
    if (typeof id !== 'string' || !nameless(id)) return l;
    delete r.attributes!.unique_id;
    r.span_name = r.span_name.replace(` (${id})`, '');
    if (id === NAMELESS[0] && r.record_type === 'SpanEnd' && r.event_type?.endsWith('NodeProcessed')) {
      r.attributes!.node_outcome = 'NODE_OUTCOME_ERROR';
      r.status = { message: 'error', code: 2 };
    }
    return JSON.stringify(r);
  });
  file = writeLines(dir, 'nameless.jsonl', out);
});

const query = (name: string) => {
  const r = runCli(['query', name, file, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>[];
};

describe('results without a unique_id', () => {
  it('failure-history lists each apart: one run seen, never more runs than were read', () => {
    const rows = query('failure-history');
    const nameless = rows.filter((r) => r.unique_id === null);
    expect(nameless.length).toBeGreaterThanOrEqual(RUNS);
    for (const r of nameless) expect(r).toMatchObject({ runs_seen: 1 });
    for (const r of rows) expect(r.runs_seen as number).toBeLessThanOrEqual(RUNS);
  });

  it('run-diff says appeared only for a result the base run lacks, vanished only for one the head run lacks', () => {
    const rows = query('run-diff');
    const nameless = rows.filter((r) => r.unique_id === null);
    expect(nameless.length).toBeGreaterThanOrEqual(2);
    for (const r of rows) {
      if (r.change === 'appeared') expect(r.base_result).toBeNull();
      if (r.change === 'vanished') expect(r.head_result).toBeNull();
    }
  });

  it('node-trends and flaky-tests draw no series for them: nothing says which node a result is', () => {
    const rows = query('node-trends');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.unique_id === null)).toEqual([]);
    expect(query('flaky-tests').filter((r) => r.unique_id === null)).toEqual([]);
  });
});
