/** Streaming JSONL read/write of engine records (read: gzip told by content; written: by the `.gz` extension). */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import { InputError } from '../errors.js';
import { detectFile } from '../ingest/detect.js';
import { snakeEnvelope, recordProblem } from '../ingest/jsonl.js';
import { parseLine, rawLines } from '../ingest/jsonl-lines.js';
import { namingOutput } from './output-path.js';
import { KEY_TWICE, keysWrittenTwice } from './line-form.js';
import { convertProblem } from './record-check.js';
import { serializeRecord, SOURCE_LINE, type JsonlRecord, type Located } from './record.js';

/**
 * Parsed records of a JSONL file (gzip told by content), read line by line as a load checks them
 * (rawLines, parseLine: the same line numbers, blank lines, white space). A line that is not a JSON
 * object, a record a load refuses or the engine's form cannot hold (record-check.ts), or a key
 * written twice, is an InputError naming file, line and field. The camelCase envelope of builds
 * before 2025-08 is read as load reads it, and given in the snake_case one.
 */
export async function* readJsonlRecords(path: string): AsyncGenerator<JsonlRecord> {
  const { gzip, keyStyle } = await detectFile(path);
  for await (const { line, bytes } of rawLines(path, gzip)) {
    const parsed = parseLine(bytes);
    if (parsed === 'blank') continue;
    if ('problem' in parsed) throw new InputError(parsed.problem, path, line);
    const v = keyStyle === 'camel' ? snakeEnvelope(parsed.value) : parsed.value;
    const p = (keyStyle === 'camel' ? recordProblem(parsed.value, keyStyle) : undefined) ?? convertProblem(v);
    if (p) throw new InputError(p.reason, path, line, p.field);
    // a reader may take either value: JSON.parse takes the last, a load (DuckDB's reader) the first
    const twice = keysWrittenTwice(parsed.text, parsed.value)[0];
    if (twice !== undefined) throw new InputError(KEY_TWICE, path, line, twice);
    (v as Located)[SOURCE_LINE] = line;
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
