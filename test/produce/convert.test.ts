import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { convertFile } from '../../src/produce/convert.js';
import { serializeRecord, type JsonlRecord } from '../../src/produce/record.js';
import { SAMPLE_FILES, SAMPLES_DIR, samplesPresent, sampleLines, tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);

describe.skipIf(!samplesPresent)('real samples', () => {
  it.each(SAMPLE_FILES)('serializeRecord reproduces every line of %s byte for byte', (name) => {
    for (const line of sampleLines(name)) expect(serializeRecord(JSON.parse(line) as JsonlRecord)).toBe(line);
  });

  it.each(SAMPLE_FILES)('JSONL -> Parquet -> JSONL of %s gives the same bytes', async (name) => {
    const pq = join(tmp.dir, name.replace('.jsonl', '.parquet'));
    const back = join(tmp.dir, name.replace('.jsonl', '.back.jsonl'));
    const lines = sampleLines(name);
    expect(await convertFile(join(SAMPLES_DIR, name), pq)).toEqual({ records: lines.length });
    expect(await convertFile(pq, back)).toEqual({ records: lines.length });
    const got = readFileSync(back, 'utf8').split('\n').filter(Boolean);
    expect(got.length).toBe(lines.length);
    for (let i = 0; i < lines.length; i++) expect(got[i]).toBe(lines[i]);
  });
});
