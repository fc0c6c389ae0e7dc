/**
 * A record's `line` is its place in the input, also for inputs DuckDB reads in parallel pieces (JSONL
 * read in several chunks, Parquet with several row groups): the insert must keep the input order.
 */
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
      await expect(loadPaths(db, [bad])).rejects.toThrow(`bad.jsonl:${at + 1}: record_type: not a telemetry record`);
    } finally {
      db.close();
    }
  });
});
