/** Reading with a progress callback reads the same records, and tells the part read, up to the whole. */
import { describe, expect, it } from 'vitest';
import { readJsonlRecords } from '../../src/produce/jsonl-io.js';
import { readParquetRecords } from '../../src/produce/parquet-reader.js';
import type { JsonlRecord } from '../../src/produce/record.js';

async function read(records: AsyncIterable<JsonlRecord>): Promise<JsonlRecord[]> {
  const out: JsonlRecord[] = [];
  for await (const r of records) out.push(r);
  return out;
}

describe('a read with a progress callback', () => {
  it.each([
    ['JSONL', (onRead?: (f: number) => void) => readJsonlRecords('samples/clean-build.jsonl', onRead)],
    ['Parquet', (onRead?: (f: number) => void) => readParquetRecords('samples/clean-build.parquet', { onRead })],
  ])('%s: the same records as without it, and fractions that grow to the whole', async (_format, reader) => {
    const plain = await read(reader());
    const fractions: number[] = [];
    const told = await read(reader((f) => fractions.push(f)));
    expect(plain.length).toBeGreaterThan(100);
    expect(told).toEqual(plain);
    expect(fractions.length).toBeGreaterThan(0);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(fractions.every((f) => f >= 0 && f <= 1)).toBe(true);
  });
});
