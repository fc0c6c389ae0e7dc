import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC, type Field } from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/produce/generate/index.js';
import { readParquetRecords } from '../../src/produce/parquet-reader.js';
import { engineSchema, writeParquetFile } from '../../src/produce/parquet-writer.js';
import { serializeRecord, type JsonlRecord } from '../../src/produce/record.js';
import { readJsonlRecords } from '../../src/produce/jsonl-io.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);

async function readBack(path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const r of readParquetRecords(path)) out.push(serializeRecord(r));
  return out;
}

async function duck<T>(sql: string): Promise<T[]> {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    return (await con.runAndReadAll(sql)).getRowObjectsJS() as T[];
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

const describeField = (f: Field): string =>
  `${f.name}:${String(f.type)}${f.nullable ? '?' : ''}${f.metadata.size ? JSON.stringify([...f.metadata].sort()) : ''}` +
  (f.type.children?.length ? `{${f.type.children.map(describeField).join(',')}}` : '');

describe('Parquet writer', () => {
  it('64-bit values at their edges come back exactly (ids, times, u64 attributes)', async () => {
    const base = { trace_id: '019c97cafe1c76e2abb150e9427e666a', severity_number: 9, severity_text: 'INFO', event_type: 'v1.public.events.fusion.node.NodeProcessed' };
    const recs: JsonlRecord[] = [
      // times are TIMESTAMP_NS (signed 64-bit); ids and u64 attributes use all 64 bits
      ['ffffffffffffffff', '9223372036854775807', '18446744073709551615'],
      ['0000000000000001', '0', '0'],
      ['8000000000000000', '9223372036854775806', '9007199254740993'],
      ['00000000ffffffff', '1772073207035410001', '4294967296'],
      ['7fffffff00000000', '999999999999999999', '123456789012345678'],
    ].map(([id, t, rows], i) => ({
      ...base, record_type: 'SpanEnd', span_id: id!, span_name: `n${i}`, parent_span_id: i ? 'ffffffffffffffff' : null,
      links: i === 2 ? [{ trace_id: base.trace_id, span_id: id!, attributes: {} }, { trace_id: base.trace_id, span_id: '0123456789abcdef', attributes: { k: 1 } }] : i === 3 ? [] : null,
      start_time_unix_nano: t!, end_time_unix_nano: t!, status: i % 2 ? { message: 'error', code: 2 } : null,
      attributes: { duration_ms: rows!, rows_affected: rows!, unique_id: `model.p.m${i}` },
    }) as JsonlRecord);
    const pq = join(tmp.dir, 'edges.parquet');
    expect(await writeParquetFile(recs, pq)).toEqual({ records: recs.length });
    expect(await readBack(pq)).toEqual(recs.map(serializeRecord));
  });

  it('many pages and row groups, and an empty file, read back the same', async () => {
    const jsonl = join(tmp.dir, 'g.jsonl');
    await generate({ output: jsonl, nodes: 60, seed: 4, failRate: 0.1 });
    const recs: JsonlRecord[] = [];
    for await (const r of readJsonlRecords(jsonl)) recs.push(r);
    const pq = join(tmp.dir, 'groups.parquet');
    await writeParquetFile(recs, pq, { batchRows: 7, rowGroupRows: 50 });
    expect(await readBack(pq)).toEqual(readFileSync(jsonl, 'utf8').split('\n').filter(Boolean));
    // dictionaries that outgrow their limit go on PLAIN within the same column chunk
    const plain = join(tmp.dir, 'plain-after-dict.parquet');
    await writeParquetFile(recs, plain, { batchRows: 16, dictionaryLimit: 200 });
    expect(await readBack(plain)).toEqual(readFileSync(jsonl, 'utf8').split('\n').filter(Boolean));
    const groups = await duck<{ n: number }>(`SELECT count(DISTINCT row_group_id)::INT AS n FROM parquet_metadata('${pq}')`);
    expect(groups[0]!.n).toBe(Math.ceil(recs.length / 50));
    const empty = join(tmp.dir, 'empty.parquet');
    expect(await writeParquetFile([], empty)).toEqual({ records: 0 });
    expect(await readBack(empty)).toEqual([]);
  });

  it("has the engine's layout: Arrow readers see the engine schema; Parquet types, logical types and SNAPPY everywhere", async () => {
    const pq = join(tmp.dir, 'layout.parquet');
    await generate({ output: pq, nodes: 30, seed: 2 });
    // arrow-rs (parquet-wasm) rebuilds the Arrow schema from the embedded ARROW:schema
    const got = tableFromIPC(wasm.readSchema(readFileSync(pq)).intoIPCStream()).schema.fields.map(describeField);
    expect(got).toEqual(engineSchema().fields.map(describeField));
    const cols = await duck<{ name: string; type: string | null; repetition_type: string | null; logical_type: string | null }>(
      `SELECT name, type, repetition_type, logical_type::VARCHAR AS logical_type FROM parquet_schema('${pq}')`);
    const byName = (n: string) => cols.find((c) => c.name === n)!;
    expect(byName('record_type')).toMatchObject({ type: 'BYTE_ARRAY', repetition_type: 'REQUIRED', logical_type: 'StringType()' });
    expect(byName('span_id')).toMatchObject({ type: 'INT64', repetition_type: 'OPTIONAL' });
    expect(byName('span_id').logical_type).toMatch(/IntType\(.*isSigned=0\)/);
    expect(byName('start_time_unix_nano').logical_type).toMatch(/TimestampType\(isAdjustedToUTC=0, .*NANOS=NanoSeconds/);
    expect(byName('attributes')).toMatchObject({ repetition_type: 'REQUIRED' });
    expect(byName('links')).toMatchObject({ repetition_type: 'OPTIONAL', logical_type: 'ListType()' });
    const codecs = await duck<{ compression: string }>(`SELECT DISTINCT compression FROM parquet_metadata('${pq}')`);
    expect(codecs).toEqual([{ compression: 'SNAPPY' }]);
    const types = await duck<{ column_name: string; column_type: string }>(`SELECT column_name, column_type FROM (DESCRIBE SELECT span_id, start_time_unix_nano, attributes.duration_ms FROM read_parquet('${pq}'))`);
    expect(types.map((t) => t.column_type)).toEqual(['UBIGINT', 'TIMESTAMP_NS', 'UBIGINT']);
  });
});
