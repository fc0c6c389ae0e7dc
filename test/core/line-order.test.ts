/**
 * A record's `line` is its place in the input, also for inputs DuckDB reads in parallel pieces (JSONL
 * read in several chunks, Parquet with several row groups): the insert must keep the input order.
 */
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectFile } from '../../src/ingest/detect.js';
import { DEFAULT_OBJECT_BYTES, jsonBufferBytes } from '../../src/ingest/jsonl.js';
import { convertFile } from '../../src/produce/convert.js';
import { generate } from '../../src/produce/generate/index.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir();
const jsonl = path.join(dir, 'run.jsonl');
const parquet = path.join(dir, 'run.parquet');
/** Each input line's identity: record type, span id and event id (a SpanStart and its SpanEnd share the span id). */
let expected: string[] = [];

const identity = (r: { record_type: string; span_id: string | null; event_id: string | null }) =>
  `${r.record_type} ${r.span_id ?? '-'} ${r.event_id ?? '-'}`;

async function linesInModel(file: string): Promise<string[]> {
  const db: Db = await openModel();
  try {
    await loadPaths(db, [file]);
    const rows = await db.all<{ pos: string; record_type: string; span_id: string | null; event_id: string | null }>(
      `SELECT line::VARCHAR AS pos, record_type, span_id, event_id FROM records ORDER BY line`,
    );
    // lines are 1..n with no gap
    expect(rows.map((r) => Number(r.pos))).toEqual(rows.map((_, i) => i + 1));
    return rows.map(identity);
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  // ~20 MB: DuckDB reads it in several chunks on two threads.
  await generate({ output: jsonl, nodes: 2000, runs: 1, seed: 3 });
  expected = readFileSync(jsonl, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => identity(JSON.parse(l) as { record_type: string; span_id: string | null; event_id: string | null }));
  // Small row groups: DuckDB reads them on two threads.
  await convertFile(jsonl, parquet, { rowGroupRows: 1000 });
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('line numbers of a large input', () => {
  it('JSONL read in several chunks: each record keeps its line', async () => {
    expect(expected.length).toBeGreaterThan(20_000);
    expect(await linesInModel(jsonl)).toEqual(expected);
  });

  it('Parquet with many row groups: each record keeps its row', async () => {
    expect(await linesInModel(parquet)).toEqual(expected);
  });

  it('a record without record_type deep in a large file is named by its own line', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    const lines = readFileSync(jsonl, 'utf8').split('\n').filter((l) => l !== '');
    const at = lines.length - 5;
    lines.splice(at, 0, '{"span_id": "0000000000000001"}');
    appendFileSync(bad, lines.join('\n') + '\n');
    const db = await openModel();
    try {
      await expect(loadPaths(db, [bad])).rejects.toThrow(`bad.jsonl:${at + 1}: record_type: missing`);
    } finally {
      db.close();
    }
  });
});

describe('JSONL read in buffers of a row group or more', () => {
  it('keeps every line when each buffer holds more rows than a row group (stored without a merge)', async () => {
    // 400,000 short lines (~120 bytes): a 16 MiB buffer holds ~140k of them, more than DuckDB's row
    // group of 122,880, so the insert stores each buffer's rows as they are instead of merging them.
    const file = path.join(dir, 'short.jsonl');
    const n = 400_000;
    const lines: string[] = [];
    for (let i = 1; i <= n; i++) {
      lines.push(`{"record_type":"LogRecord","trace_id":"${(i % 7).toString(16).padStart(32, '0')}","time_unix_nano":"${1772442000000000000n + BigInt(i)}","body":"${i}"}`);
    }
    writeFileSync(file, lines.join('\n') + '\n');
    const db = await openModel();
    try {
      await loadPaths(db, [file]);
      const wrong = await db.all<{ n: string }>(`SELECT count(*)::VARCHAR AS n FROM records WHERE line <> CAST(body AS BIGINT)`);
      expect(wrong[0]!.n).toBe('0');
      expect(await db.scalar<number>('SELECT count(*)::INTEGER FROM records')).toBe(n);
      expect(await db.scalar<number>('SELECT count(DISTINCT trace_id)::INTEGER FROM records')).toBe(7);
    } finally {
      db.close();
    }
  }, 60_000);

  it('sizes the buffers of a big file to a row group of its lines, and leaves small or gzipped files at the default', async () => {
    const sampled = await detectFile(jsonl);
    expect(sampled.bytesPerLine).toBeGreaterThan(500);
    expect(sampled.bytesPerLine).toBeLessThan(2000);
    const big = { ...sampled, size: 1_000_000_000, bytesPerLine: 930 };
    // 930 bytes x 122,880 rows x 1.1, rounded up to MiB
    expect(jsonBufferBytes(big, 2)).toBe(120 * 2 ** 20);
    // fewer than two buffers per thread: the default, so that every thread reads
    expect(jsonBufferBytes(big, 8)).toBe(DEFAULT_OBJECT_BYTES);
    expect(jsonBufferBytes({ ...big, size: 200_000_000 }, 2)).toBe(DEFAULT_OBJECT_BYTES);
    expect(jsonBufferBytes({ ...big, gzip: true }, 2)).toBe(DEFAULT_OBJECT_BYTES);
    // short lines: the default buffer already holds a row group
    expect(jsonBufferBytes({ ...big, bytesPerLine: 100 }, 2)).toBe(DEFAULT_OBJECT_BYTES);
    // very long lines: a row group of them would be over the largest buffer
    expect(jsonBufferBytes({ ...big, size: 10_000_000_000, bytesPerLine: 3000 }, 2)).toBe(DEFAULT_OBJECT_BYTES);
  });
});
