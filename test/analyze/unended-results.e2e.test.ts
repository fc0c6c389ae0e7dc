/**
 * A run cut off while its nodes ran (the engine died, or its file is still being written): the
 * history and diff queries say a node's result did not end, never leave it blank.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/produce/generate/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let file: string;

interface Rec { trace_id: string; start_time_unix_nano?: string; end_time_unix_nano?: string; time_unix_nano?: string }
const at = (r: Rec) => BigInt(r.end_time_unix_nano ?? r.time_unix_nano ?? r.start_time_unix_nano!);

beforeAll(async () => {
  const gen = join(dir, 'gen.jsonl');
  await generate({ output: gen, nodes: 30, runs: 3, seed: 7, failRate: 0.2 });
  // the newest run as it stands halfway through: nothing it wrote after its midpoint
  const recs = readFileSync(gen, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
  const newest = recs.at(-1)!.trace_id;
  const times = recs.filter((r) => r.trace_id === newest).map(at);
  const mid = (times.reduce((a, b) => (a < b ? a : b)) + times.reduce((a, b) => (a > b ? a : b))) / 2n;
  file = writeLines(dir, 'cut.jsonl', recs.filter((r) => r.trace_id !== newest || at(r) <= mid));
});

const query = (name: string) => {
  const r = runCli(['query', name, file, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>[];
};

describe('results of a run that never ended', () => {
  it('run-diff says not ended where the head run has a result that did not end', () => {
    const changed = query('run-diff').filter((r) => r.change === 'outcome changed');
    expect(changed.length).toBeGreaterThan(0);
    for (const r of changed) expect(r.head_result, String(r.unique_id)).not.toBeNull();
    expect(changed.map((r) => r.head_result)).toContain('not ended');
  });

  it('failure-history says not ended as the last result of a node still running', () => {
    const rows = query('failure-history');
    for (const r of rows) expect(r.last_result, String(r.unique_id)).toBeTruthy();
    expect(rows.map((r) => r.last_result)).toContain('not ended');
  });
});
