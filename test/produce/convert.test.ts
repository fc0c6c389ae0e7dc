import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants as zlibConstants, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { rawLines } from '../../src/ingest/jsonl-lines.js';
import { convertFile } from '../../src/produce/convert.js';
import { serializeRecord, type JsonlRecord } from '../../src/produce/record.js';
import { loadPaths, openModel } from '../../src/store/load.js';
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

/** What load says of a file (its first bad line), or null when it loads. */
async function loadSays(path: string): Promise<string | null> {
  const db = await openModel();
  try {
    await loadPaths(db, [path]);
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    db.close();
  }
}

describe('bad input', () => {
  const good = (i: number) =>
    JSON.stringify({ record_type: 'LogRecord', trace_id: 'a'.repeat(32), span_id: null, span_name: null, event_id: `e${i}`, time_unix_nano: '1772073188904419000',
      severity_number: 9, severity_text: 'INFO', body: 'x', event_type: 'v1.public.events.fusion.log.LogMessage', attributes: {} });

  it('JSONL -> Parquet names the malformed line (not the Parquet writer\'s own error) and writes no file', async () => {
    const src = join(tmp.dir, 'bad-line.jsonl');
    writeFileSync(src, [good(1), good(2), '{"record_type": bad', good(3)].join('\n') + '\n');
    const out = join(tmp.dir, 'bad-line.parquet');
    await expect(convertFile(src, out)).rejects.toThrow(/bad-line\.jsonl:3: malformed JSON/);
    expect(existsSync(out)).toBe(false);
  });

  it.each(['jsonl', 'parquet'])('a folder where the %s output goes is named as the output (not its temporary file)', async (ext) => {
    const src = join(tmp.dir, `fine-${ext}.jsonl`);
    writeFileSync(src, good(1) + '\n');
    const out = join(tmp.dir, `taken.${ext}`);
    mkdirSync(out);
    await expect(convertFile(src, out)).rejects.toMatchObject({ path: out, code: 'EISDIR' });
    expect(readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('names the field of a record that does not fit the layout', async () => {
    const src = join(tmp.dir, 'bad-id.jsonl');
    writeFileSync(src, [good(1), good(2).replace('"span_id":null', '"span_id":"XYZ"')].join('\n') + '\n');
    await expect(convertFile(src, join(tmp.dir, 'bad-id.parquet'))).rejects.toThrow(/bad-id\.jsonl:2: span_id: must be 16 hex digits \(got "XYZ"\)/);
  });

  it('a Parquet file it wrote reads back: a log record without event_id, a u64 count past the model\'s BIGINT', async () => {
    const noId = good(1).replace('"event_id":"e1"', '"event_id":null');
    const node = JSON.stringify({ record_type: 'SpanEnd', trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16), span_name: 'Node evaluated (model.p.m)',
      parent_span_id: null, links: null, start_time_unix_nano: '1772073188904419000', end_time_unix_nano: '1772073188904420000',
      severity_number: 9, severity_text: 'INFO', status: { message: null, code: 1 }, event_type: 'v1.public.events.fusion.node.NodeEvaluated',
      attributes: { node_outcome: 'NODE_OUTCOME_SUCCESS', phase: 'EXECUTION_PHASE_RUN', rows_affected: '18446744073709551615', unique_id: 'model.p.m' } });
    const src = join(tmp.dir, 'odd.jsonl');
    writeFileSync(src, [noId, good(2), node].join('\n') + '\n');
    const pq = join(tmp.dir, 'odd.parquet');
    const back = join(tmp.dir, 'odd.back.jsonl');
    await convertFile(src, pq);
    await convertFile(pq, back);
    expect(readFileSync(back, 'utf8').split('\n').filter(Boolean)).toEqual([noId, good(2), node]);
    const db = await openModel();
    try {
      await loadPaths(db, [pq]);
      // the count is kept as written in attributes; the model's BIGINT column cannot hold it (as from JSONL)
      expect(await db.one(`SELECT rows_affected, attributes->>'rows_affected' AS written FROM records WHERE span_id = '${'b'.repeat(16)}'`)).toEqual({ rows_affected: null, written: '18446744073709551615' });
    } finally {
      db.close();
    }
  });

  it.each(['trace_id', 'event_type', 'severity_text', 'severity_number'])('names a field the layout requires when a record has none (%s null)', async (field) => {
    const src = join(tmp.dir, `null-${field}.jsonl`);
    const r = JSON.parse(good(2)) as Record<string, unknown>;
    r[field] = null;
    writeFileSync(src, [good(1), JSON.stringify(r)].join('\n') + '\n');
    for (const out of [`null-${field}.parquet`, `null-${field}.out.jsonl`]) {
      await expect(convertFile(src, join(tmp.dir, out))).rejects.toThrow(new RegExp(`null-${field}\\.jsonl:2: ${field}: missing \\(the engine's layout requires it\\)`));
      expect(existsSync(join(tmp.dir, out))).toBe(false);
    }
  });
});

describe('records a load refuses, or the engine\'s layout cannot hold', () => {
  const T = '0123456789abcdef0123456789abcdef';
  const start = { record_type: 'SpanStart', trace_id: T, span_id: '0000000000000001', span_name: 'x', parent_span_id: null, links: null,
    start_time_unix_nano: '1772073188904419000', severity_number: 9, severity_text: 'INFO', event_type: 'e', attributes: {} };
  const end = { ...start, record_type: 'SpanEnd', end_time_unix_nano: '1772073188904419001', status: { message: null, code: 1 } };
  const metric = { record_type: 'Metric', trace_id: T, span_id: '0000000000000001', span_name: 'x', severity_number: 9, severity_text: 'INFO', event_type: 'e', attributes: {} };
  const file = (name: string, records: object[]) => {
    const p = join(tmp.dir, name);
    writeFileSync(p, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    return p;
  };

  it.each(['jsonl', 'parquet'])('an unknown record_type is refused as load refuses it (to %s), and nothing is written', async (to) => {
    const src = file('metric.jsonl', [start, metric]);
    expect(await loadSays(src)).toMatch(/metric\.jsonl:2: record_type: must be SpanStart, SpanEnd or LogRecord \(got "Metric"\)/);
    const out = join(tmp.dir, `metric.out.${to}`);
    await expect(convertFile(src, out)).rejects.toThrow(/metric\.jsonl:2: record_type: must be SpanStart, SpanEnd or LogRecord \(got "Metric"\)/);
    expect(existsSync(out)).toBe(false);
  });

  it('a Parquet file holding an unknown record_type names the row, not a crash', async () => {
    const good = join(tmp.dir, 'good.parquet');
    await convertFile(file('good.jsonl', [start, end]), good);
    const odd = join(tmp.dir, 'odd-type.parquet');
    const db = await openModel();
    try {
      await db.run(`COPY (SELECT * REPLACE (CASE WHEN record_type = 'SpanEnd' THEN 'Metric' ELSE record_type END AS record_type) FROM read_parquet('${good}')) TO '${odd}' (FORMAT parquet)`);
    } finally {
      db.close();
    }
    await expect(convertFile(odd, join(tmp.dir, 'odd-type.jsonl'))).rejects.toThrow(/odd-type\.parquet:2: record_type: must be SpanStart, SpanEnd or LogRecord \(got "Metric"\)/);
  });

  it('a SpanStart without start_time_unix_nano (load reads it) converts both ways and back', async () => {
    const { start_time_unix_nano: _, ...noStart } = start;
    const src = file('no-start.jsonl', [noStart]);
    expect(await loadSays(src)).toBeNull();
    const jsonl = join(tmp.dir, 'no-start.out.jsonl');
    const pq = join(tmp.dir, 'no-start.parquet');
    const back = join(tmp.dir, 'no-start.back.jsonl');
    await convertFile(src, jsonl);
    await convertFile(src, pq);
    await convertFile(pq, back);
    const line = JSON.stringify({ ...start, start_time_unix_nano: null });
    expect(readFileSync(jsonl, 'utf8')).toBe(line + '\n');
    expect(readFileSync(back, 'utf8')).toBe(line + '\n');
  });

  it.each([
    ['status.message', { ...end, status: { message: 5, code: 2 } }, 'must be a string or null (got 5)'],
    ['span_name', { ...end, span_name: ['x'] }, 'must be a string (got ["x"])'],
    ['start_time_unix_nano', { ...end, start_time_unix_nano: 1772073188904419000 }, 'must be nanoseconds, a string of decimal digits (got 1772073188904419000)'],
    ['links', { ...end, links: [7] }, 'each link must be an object with trace_id and span_id (got 7)'],
  ])('%s the engine\'s form cannot hold is named with its line', async (field, bad, reason) => {
    const src = file(`odd-${field}.jsonl`, [start, bad]);
    for (const to of ['jsonl', 'parquet']) {
      const out = join(tmp.dir, `odd-${field}.out.${to}`);
      await expect(convertFile(src, out)).rejects.toThrow(`odd-${field}.jsonl:2: ${field}: ${reason}`);
      expect(existsSync(out)).toBe(false);
    }
  });
});

describe('convert reads a JSONL file as load does: its lines, their numbers, gzip by content, camelCase keys', () => {
  /** The lines of a real run (the project's own generated sample). */
  const LINES = readFileSync(join(import.meta.dirname, '../../samples/clean-build.jsonl'), 'utf8').trimEnd().split('\n');
  const write = (name: string, body: string | Buffer) => {
    const p = join(tmp.dir, name);
    writeFileSync(p, body);
    return p;
  };
  const badId = (l: string) => l.replace(/"span_id":"/, '"span_id":"zz');
  const negTime = (l: string) => l.replace(/"end_time_unix_nano":"/, '"end_time_unix_nano":"-');
  const spanEnd = LINES.findIndex((l) => l.includes('"record_type":"SpanEnd"'));

  it('a record the Parquet layout cannot hold after blank lines is named by its line, not its count', async () => {
    const lines = [LINES[0], LINES[1], '', '', ...LINES.slice(2)];
    const n = lines.indexOf(LINES[spanEnd]) + 1;
    lines[n - 1] = negTime(lines[n - 1]!);
    const p = write('neg-time.jsonl', lines.join('\n') + '\n');
    await expect(convertFile(p, join(tmp.dir, 'neg-time.parquet'))).rejects.toThrow(new RegExp(`neg-time\\.jsonl:${n}: end_time_unix_nano: `));
  });

  it('a carriage return alone ends no line: a bad line after one is named by the line load names', async () => {
    const p = write('lone-cr.jsonl', [LINES[0], LINES[1] + '\r ', ...LINES.slice(2, 9), badId(LINES[9]!), ...LINES.slice(10)].join('\n') + '\n');
    expect(await loadSays(p)).toMatch(/lone-cr\.jsonl:10: span_id/);
    await expect(convertFile(p, join(tmp.dir, 'lone-cr.parquet'))).rejects.toThrow(/lone-cr\.jsonl:10: span_id: must be 16 hex digits/);
  });

  it('a carriage return between tokens is white space, as load takes it', async () => {
    const p = write('mid-cr.jsonl', [LINES[0]!.replace(',"trace_id"', ',\r"trace_id"'), ...LINES.slice(1)].join('\n') + '\n');
    expect(await loadSays(p)).toBeNull();
    expect(await convertFile(p, join(tmp.dir, 'mid-cr.parquet'))).toEqual({ records: LINES.length });
  });

  it('a line holding only a vertical tab is refused by its line, as load refuses it', async () => {
    const p = write('vtab.jsonl', [LINES[0], '\v', ...LINES.slice(1)].join('\n') + '\n');
    expect(await loadSays(p)).toMatch(/vtab\.jsonl:2: malformed JSON/);
    await expect(convertFile(p, join(tmp.dir, 'vtab.parquet'))).rejects.toThrow(/vtab\.jsonl:2: malformed JSON/);
  });

  it.each([
    ['a line cut short', (text: string) => text.slice(0, -100)],
    ['a gzip file cut short', (text: string) => gzipSync(text).subarray(0, -2000)],
    ['a gzip file with a bad checksum', (text: string) => {
      const gz = gzipSync(text);
      gz.fill(0, gz.length - 8, gz.length - 4);
      return gz;
    }],
  ])('%s after the first batch fails the Parquet conversion, and leaves no file', async (what, damage) => {
    const text = LINES.join('\n') + '\n';
    const name = what.replace(/ /g, '-');
    const p = write(`${name}.jsonl`, damage(text));
    const out = join(tmp.dir, `${name}.parquet`);
    // batches of 4 records, so the damage is reached batches after the first
    const err = await convertFile(p, out, { batchRows: 4 }).then(() => null, (e: Error) => e);
    expect(err?.message).toMatch(new RegExp(`${name}\\.jsonl(:\\d+)?: `));
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // the JSONL output refuses the same input
    await expect(convertFile(p, join(tmp.dir, `${name}.out.jsonl`))).rejects.toThrow(err!.message);
  });

  it('a truncated gzip is said with the whole lines it holds, the same count every time and by every reader', async () => {
    // (big enough that zlib still holds text when it finds the end missing)
    const text = Array.from({ length: 40 }, () => LINES.join('\n') + '\n').join('');
    const gz = gzipSync(text).subarray(0, -2000);
    // what the damaged file holds, decompressed as far as it goes
    const held = gunzipSync(gz, { finishFlush: zlibConstants.Z_SYNC_FLUSH }).toString('utf8');
    const lines = held.split('\n').length - 1;
    const said = `truncated gzip: the data ends after ${lines} whole lines (${Buffer.byteLength(held.slice(0, held.lastIndexOf('\n') + 1))} bytes of text)`;
    const p = write('cut-short-count.jsonl', gz);
    for (let i = 0; i < 3; i++) {
      await expect(convertFile(p, join(tmp.dir, `cut-${i}.parquet`), { batchRows: 64 })).rejects.toThrow(said);
      await expect(convertFile(p, join(tmp.dir, `cut-${i}.jsonl`))).rejects.toThrow(said);
    }
    expect(await loadSays(p)).toContain(said);
    // a reader that takes its time with each line (a busy machine) is told the same
    const slow = async () => {
      for await (const _ of rawLines(p, true)) await new Promise((r) => setImmediate(r));
    };
    await expect(slow()).rejects.toThrow(said);
  });

  it('gzip is told by content, not by the name', async () => {
    const text = LINES.join('\n') + '\n';
    const { gzipSync } = await import('node:zlib');
    for (const [name, body] of [['gzipped.jsonl', gzipSync(text)], ['plain.jsonl.gz', Buffer.from(text)]] as const) {
      const p = write(name, body);
      expect(await loadSays(p)).toBeNull();
      const out = join(tmp.dir, `${name}.out.jsonl`);
      expect(await convertFile(p, out)).toEqual({ records: LINES.length });
      expect(readFileSync(out, 'utf8')).toBe(text);
    }
  });

  it('the camelCase envelope of builds before 2025-08 converts to the snake_case one, as load reads it', async () => {
    const camel = LINES.map((l) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(JSON.parse(l) as Record<string, unknown>)) o[k === 'attributes' ? k : k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] = v;
      return JSON.stringify(o);
    });
    const p = write('camel.jsonl', camel.join('\n') + '\n');
    expect(await loadSays(p)).toBeNull();
    const out = join(tmp.dir, 'camel.out.jsonl');
    expect(await convertFile(p, out)).toEqual({ records: LINES.length });
    expect(readFileSync(out, 'utf8')).toBe(LINES.join('\n') + '\n');
    const { validateFile } = await import('../../src/produce/validate.js');
    const v = await validateFile(p);
    const violations = v.issues.filter((i) => i.severity === 'violation');
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ line: 1, field: '-' });
    expect(violations[0]!.rule).toMatch(/camelCase envelope .*before 2025-08/);
  });
});

describe('a JSONL file and its Parquet copy load the same attributes', () => {
  it('null values, at the top and nested, are kept (an artifact and a process record)', async () => {
    const lines = readFileSync(join(import.meta.dirname, '../../samples/clean-build.jsonl'), 'utf8').trimEnd().split('\n');
    const n = lines.findIndex((l) => l.includes('artifact.ArtifactWritten'));
    expect(n).toBeGreaterThan(0);
    const withNulls = (l: string) => l.replace('"attributes":{', '"attributes":{"a_null":null,"nested":{"y":null,"z":1},');
    const edited = lines.map((l, i) => (i === 0 || i === n ? withNulls(l) : l));
    const src = join(tmp.dir, 'nulls.jsonl');
    writeFileSync(src, edited.join('\n') + '\n');
    const pq = join(tmp.dir, 'nulls.parquet');
    await convertFile(src, pq);
    const attrs = async (file: string) => {
      const db = await openModel();
      try {
        await loadPaths(db, [file]);
        return await db.all<{ line: number; a: string }>(`SELECT line::INT AS line, attributes::VARCHAR AS a FROM records WHERE line IN (1, ${n + 1}) ORDER BY line`);
      } finally {
        db.close();
      }
    };
    const fromJsonl = await attrs(src);
    expect(fromJsonl.map((r) => JSON.parse(r.a) as Record<string, unknown>).every((a) => a.a_null === null && (a.nested as Record<string, unknown>).y === null)).toBe(true);
    const fromParquet = await attrs(pq);
    expect(fromParquet.map((r) => JSON.parse(r.a) as unknown)).toEqual(fromJsonl.map((r) => JSON.parse(r.a) as unknown));
  });
});

describe('convert keeps the text of a Parquet file exactly', () => {
  it('a leading U+FEFF in span_name, body, status message, severity text and a text attribute is kept', async () => {
    const src = join(import.meta.dirname, '../../samples/failed-build.parquet');
    const bom = join(tmp.dir, 'bom-text.parquet');
    const db = await openModel();
    try {
      const b = (e: string) => `chr(65279) || ${e}`;
      await db.run(`COPY (SELECT * REPLACE (${b('span_name')} AS span_name, ${b('body')} AS body, ${b('status_message')} AS status_message,
                      ${b('severity_text')} AS severity_text, struct_update(attributes, name := ${b('attributes.name')}) AS attributes)
                    FROM read_parquet('${src}')) TO '${bom}' (FORMAT parquet)`);
    } finally {
      db.close();
    }
    const read = async (pq: string) => {
      const out = join(tmp.dir, `${pq.endsWith('bom-text.parquet') ? 'bom' : 'plain'}-text.jsonl`);
      await convertFile(pq, out);
      return readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown> & { attributes: Record<string, unknown> });
    };
    const [plain, kept] = [await read(src), await read(bom)];
    expect(kept.length).toBe(plain.length);
    const withBom = (v: unknown) => (typeof v === 'string' ? `\ufeff${v}` : v);
    const fields = (r: (typeof plain)[number]) => ({
      span_name: r.span_name, body: r.body, severity_text: r.severity_text,
      status_message: (r.status as { message?: unknown } | null | undefined)?.message, name: r.attributes.name,
    });
    const expected = plain.map((r) => Object.fromEntries(Object.entries(fields(r)).map(([k, v]) => [k, withBom(v)])));
    expect(kept.map(fields)).toEqual(expected);
    // every field edited is somewhere present
    for (const k of ['span_name', 'body', 'severity_text', 'status_message', 'name'] as const) expect(expected.some((f) => typeof f[k] === 'string'), k).toBe(true);
  });
});
