/** JSON documents written in pieces: the same bytes as JSON.stringify(value, null, 2), never one string of the whole. */
import { Writable } from 'node:stream';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prettyJson, writePieces } from '../../src/render/json-stream.js';
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
