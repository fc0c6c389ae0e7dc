/** Streaming JSONL read/write of engine records (gzip by `.gz` extension). */
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip, createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import { InputError } from '../errors.js';
import { loneSurrogate, loneSurrogateReason } from '../ingest/json-text.js';
import { namingOutput } from './output-path.js';
import { KEY_TWICE, keysWrittenTwice } from './line-form.js';
import { convertProblem } from './record-check.js';
import { serializeRecord, type JsonlRecord } from './record.js';

export interface NumberedLine {
  line: number;
  text: string;
}

/** Non-empty lines of a (possibly gzipped) file with their 1-based line numbers. */
export async function* readLines(path: string): AsyncGenerator<NumberedLine> {
  const raw = createReadStream(path);
  const src = path.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  raw.on('error', (e) => src.destroy(e));
  const rl = createInterface({ input: src, crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const text of rl) {
      n++;
      if (text.trim() === '') continue;
      yield { line: n, text };
    }
  } catch (e) {
    throw new InputError((e as Error).message, path, n || undefined);
  }
}

/**
 * Parsed records of a JSONL file. A line that is not a JSON object, or a record a load refuses or
 * the engine's form cannot hold (record-check.ts), is an InputError naming file, line and field.
 */
export async function* readJsonlRecords(path: string): AsyncGenerator<JsonlRecord> {
  for await (const { line, text } of readLines(path)) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new InputError(`not JSON: ${(e as Error).message}`, path, line);
    }
    const lone = loneSurrogate(text, v);
    if (lone) throw new InputError(`malformed JSON: ${loneSurrogateReason(lone)}`, path, line);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new InputError('not a JSON object', path, line);
    const p = convertProblem(v);
    if (p) throw new InputError(p.reason, path, line, p.field);
    // a reader may take either value: JSON.parse takes the last, a load (DuckDB's reader) the first
    const twice = keysWrittenTwice(text, v)[0];
    if (twice !== undefined) throw new InputError(KEY_TWICE, path, line, twice);
    yield v as JsonlRecord;
  }
}

/** Write with backpressure: resolves when the stream can take more. */
export function writeChunk(w: Writable, s: string): Promise<void> | void {
  if (!w.write(s)) return new Promise((res, rej) => {
    const onErr = (e: Error) => rej(e);
    w.once('error', onErr);
    w.once('drain', () => {
      w.off('error', onErr);
      res();
    });
  });
}

export async function openJsonlOut(path: string, append = false): Promise<{ stream: Writable; close: () => Promise<void> }> {
  await mkdir(dirname(path), { recursive: true });
  // Opened before streaming: a path that cannot be written fails here, named, not in a stream event.
  const file = (await open(path, append ? 'a' : 'w')).createWriteStream();
  let failed: Error | undefined;
  file.on('error', (e: Error) => (failed ??= e));
  const stream: Writable = path.endsWith('.gz') ? createGzip() : file;
  if (stream !== file) stream.pipe(file);
  const close = () =>
    new Promise<void>((res, rej) => {
      if (failed) return rej(failed);
      file.once('error', rej);
      file.once('close', () => (failed ? rej(failed) : res()));
      stream.end();
    });
  return { stream, close };
}

/**
 * Stream records to a JSONL file in the engine's byte form; returns the count. The file appears
 * when every record is written (written beside and renamed): records that stop on bad input leave
 * no half-written file, and a file of the same name as it was.
 */
export async function writeJsonlFile(records: Iterable<JsonlRecord> | AsyncIterable<JsonlRecord>, path: string): Promise<{ records: number }> {
  const tmp = `${path}.${process.pid}.tmp${path.endsWith('.gz') ? '.gz' : ''}`;
  const { stream, close } = await openJsonlOut(tmp).catch((e: unknown) => Promise.reject(namingOutput(e, tmp, path)));
  let n = 0;
  let closed = false;
  try {
    let buf = '';
    for await (const r of records as AsyncIterable<JsonlRecord>) {
      buf += serializeRecord(r) + '\n';
      n++;
      if (buf.length > 1 << 16) {
        await writeChunk(stream, buf);
        buf = '';
      }
    }
    if (buf) await writeChunk(stream, buf);
    closed = true;
    await close();
    await rename(tmp, path);
  } catch (e) {
    if (!closed) await close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw namingOutput(e, tmp, path);
  }
  return { records: n };
}
