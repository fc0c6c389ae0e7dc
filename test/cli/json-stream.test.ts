/** JSON documents written in pieces: the same bytes as JSON.stringify(value, null, 2), never one string of the whole. */
import { Writable } from 'node:stream';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_INDENT, prettyJson, writePieces } from '../../src/render/json-stream.js';
import { span, tempDir, writeLines } from '../helpers/fixtures.js';
import { runInProcess } from '../helpers/in-process.js';

const SAMPLES = path.join(import.meta.dirname, '../../samples');

describe('prettyJson', () => {
  it.each([
    ['scalars', [1, -0.5, 'a"\n\u2028', true, null, NaN, Infinity]],
    ['empty ones', { a: [], b: {}, c: [[]], d: [{}] }],
    ['what JSON cannot hold', { a: undefined, b: () => 1, c: [undefined, () => 1], d: 1 }],
    ['only keys JSON cannot hold', { a: undefined }],
    ['toJSON', { when: new Date(0), nested: { toJSON: () => ({ x: [1] }) } }],
    ['nesting', { roots: [{ name: 'x', children: [{ name: 'y', children: [] }] }], n: 2 }],
    ['a top-level string', 'x'],
  ])('%s: the bytes JSON.stringify gives', (_what, value) => {
    expect([...prettyJson(value)].join('')).toBe(JSON.stringify(value, null, 2));
  });

  it('writes a value nested deeper than the call stack reaches, indented no deeper than MAX_INDENT levels', () => {
    type Chain = { id: number; children: Chain[] };
    const root: Chain = { id: 0, children: [] };
    let at = root;
    for (let i = 1; i < 20_000; i++) {
      const c: Chain = { id: i, children: [] };
      at.children.push(c);
      at = c;
    }
    const text = [...prettyJson(root)].join('');
    expect(text.startsWith('{\n  "id": 0,\n  "children": [\n    {\n      "id": 1,')).toBe(true);
    expect(text.endsWith('\n    }\n  ]\n}')).toBe(true);
    const lines = text.split('\n');
    // five lines an object ({, id, children [, ], }), four for the last (its children are [])
    expect(lines).toHaveLength(20_000 * 5 - 1);
    expect(Math.max(...lines.map((l) => l.length - l.trimStart().length))).toBe(2 * MAX_INDENT);
    let n = JSON.parse(text) as Chain;
    while (n.children.length) n = n.children[0]!;
    expect(n.id).toBe(19_999);
  });
});

describe('writePieces', () => {
  it('waits for the stream to drain when its buffer is full', async () => {
    const out = new Writable({
      highWaterMark: 16,
      write(_chunk: Buffer, _enc, done) {
        setImmediate(done);
      },
    });
    const queued: number[] = [];
    const write = out.write.bind(out);
    out.write = ((chunk: string) => {
      queued.push(out.writableLength);
      return write(chunk);
    }) as typeof out.write;
    const piece = 'x'.repeat(70 * 1024);
    await writePieces(out, [piece, piece, piece, piece]);
    // each write waited for the one before it to go out
    expect(queued).toEqual([0, 0, 0, 0]);
  });
});

describe('tree --format json of a deep chain of spans', () => {
  it('writes every level (the walk is not recursive)', async () => {
    const dir = tempDir();
    const ET = 'v1.public.events.fusion.generic.GenericOpExecuted';
    const id = (i: number) => (0xc0de000000000000n + BigInt(i)).toString(16);
    const recs = [
      ...span({ id: id(0), name: 'dbt invocation (x)', eventType: 'v1.public.events.fusion.invocation.Invocation', start: 0, end: 100 }),
      ...Array.from({ length: 10_000 }, (_, i) => span({ id: id(i + 1), parent: id(i), name: `op ${i + 1}`, eventType: ET, start: 1 + i / 1000, end: 50 })).flat(),
    ];
    const r = await runInProcess(['tree', writeLines(dir, 'deep.jsonl', recs), '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    let depth = 0;
    let n = (JSON.parse(r.stdout) as { roots: { name: string; children: unknown[] }[] }[])[0]!.roots[0];
    while (n && n.children.length) {
      n = n.children[0] as typeof n;
      depth++;
    }
    expect(depth).toBe(10_000);
    expect(n!.name).toBe('op 10000');
  });
});

describe.each(['tree', 'critical-path'])('%s --format json', (command) => {
  it('writes the document a run at a time, as JSON.stringify(…, null, 2) gives it', async () => {
    const file = path.join(SAMPLES, 'two-runs.jsonl');
    const r = await runInProcess([command, file, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const runs = JSON.parse(r.stdout) as { trace_id: string }[];
    expect(runs).toHaveLength(2);
    expect(r.stdout).toBe(JSON.stringify(runs, null, 2) + '\n');
    // never the whole document in one write
    expect(r.writes.length).toBeGreaterThan(1);
    const one = await runInProcess([command, file, '--trace', runs[1]!.trace_id, '--format', 'json']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toBe(JSON.stringify(runs[1], null, 2) + '\n');
  });
});
