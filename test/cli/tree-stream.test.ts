/** The text `tree` written as it is laid out, in pieces: never one string of the whole tree. */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { span, tempDir, TRACE, writeLines } from '../helpers/fixtures.js';
import { runInProcess } from '../helpers/in-process.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ET = (x: string) => `v1.public.events.fusion.${x}`;
const DEPTH = 3000;
const id = (i: number) => (0xc0de000000000000n + BigInt(i)).toString(16);

/** A process span, an invocation, then DEPTH node spans, each the parent of the next. */
function chain(): object[] {
  return [
    ...span({ id: id(0), name: 'dbt process', eventType: ET('process.Process'), start: 0, end: 100 }),
    ...span({ id: id(1), name: 'dbt invocation (x)', eventType: ET('invocation.Invocation'), start: 0, end: 100, attrs: { invocation_id: 'aaaabbbb-cccc-dddd-eeee-ffff00001111', raw_command: 'dbt build', eval_args: { command: 'build' } } }),
    ...Array.from({ length: DEPTH }, (_, i) =>
      span({ id: id(i + 2), parent: id(i + 1), name: `Node evaluated (model.p.m${i})`, eventType: ET('node.NodeEvaluated'), start: 1 + i / 1000, end: 99 - i / 1000, attrs: { unique_id: `model.p.m${i}`, phase: 'Run' }, endAttrs: { node_outcome: 'success' } }),
    ).flat(),
  ];
}

describe('tree (text) of a chain of spans thousands deep', () => {
  it('is written in pieces of at most about 64 KiB, its deep lines at the capped indentation with their depth', async () => {
    const r = await runInProcess(['tree', writeLines(dir, 'chain.jsonl', chain())]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    // the header, the process, the invocation and its chain
    expect(lines).toHaveLength(DEPTH + 3);
    expect(lines.at(-1)).toMatch(/^ *└─ \[depth 3000\] Node evaluated \(model\.p\.m2999\)  \[success\]  /);
    expect(r.stdout.length).toBeLessThan(1_000_000);
    // the whole tree is never built as one string: each write is a piece of it
    expect(r.writes.length).toBeGreaterThan(1);
    expect(Math.max(...r.writes.map((w) => w.length))).toBeLessThan(80 * 1024);
  });
});
