/** Answers that do not follow the order the records came in: ties are told apart by what the records say. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

const dir = tempDir();
const FAILED = readFileSync(path.join(ROOT, 'samples/failed-build.jsonl'), 'utf8').trimEnd().split('\n');
type Rec = { record_type: string; span_id: string; event_type?: string; body?: string; attributes: Record<string, unknown> };
const parsed = FAILED.map((l) => JSON.parse(l) as Rec);

/** The same records in two files, the second with the records in the other order. */
function bothOrders(name: string, lines: string[]): [string, string] {
  return [writeLines(dir, `${name}-a.jsonl`, lines), writeLines(dir, `${name}-b.jsonl`, [...lines].reverse())];
}

function stdout(args: string[]): string {
  const r = runCli(args);
  expect(r.code === 0 || r.code === 1, r.stderr).toBe(true);
  return r.stdout;
}

describe('answers that do not follow input order', () => {
  it("two ERROR logs of one node at the same instant: the node's error text is the same in either order", () => {
    const at = parsed.findIndex((r) => r.record_type === 'LogRecord' && r.body?.startsWith('Database Error in model stg_employees'));
    expect(at).toBeGreaterThan(0);
    const second = { ...parsed[at]!, event_id: '019cadc6-a444-7b0a-b885-c51a25a8beef', body: 'Second error line: permission denied for schema analytics' };
    const lines = [...FAILED.slice(0, at + 1), JSON.stringify(second), ...FAILED.slice(at + 1)];
    const [a, b] = bothOrders('error-tie', lines);
    const errors = (f: string) => stdout(['query', 'errors', f, '--format', 'json']);
    expect(errors(a)).toContain('Second error line');
    expect(errors(b)).toBe(errors(a));
    const gate = (f: string) => stdout(['gate', f, '--reporter', 'json']).replaceAll(f, 'FILE');
    expect(gate(b)).toBe(gate(a));
  });

  it('slowest-nodes: two evaluations of a node tied on duration are ranked the same in either order', () => {
    const end = parsed.findIndex((r) => r.record_type === 'SpanEnd' && r.event_type?.endsWith('.NodeEvaluated'));
    const start = parsed.findIndex((r) => r.record_type === 'SpanStart' && r.span_id === parsed[end]!.span_id);
    const again = (r: Rec) => JSON.stringify({ ...r, span_id: 'ffffffffffffffff', attributes: { ...r.attributes, node_outcome: 'NODE_OUTCOME_CANCELED' } });
    const [a, b] = bothOrders('duration-tie', [...FAILED, again(parsed[start]!), again(parsed[end]!)]);
    const slowest = (f: string) => stdout(['query', 'slowest-nodes', f, '--param', 'limit=999999', '--format', 'csv']);
    expect(slowest(a)).toMatch(/,canceled,/);
    expect(slowest(b)).toBe(slowest(a));
  });
});
