/** Streaming JSONL read/write of engine records (read: gzip told by content; written: by the `.gz` extension). */
import { createWriteStream, openSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InputError } from '../errors.js';
import { detectFile } from '../ingest/detect.js';
import { snakeEnvelope, recordProblem } from '../ingest/jsonl.js';
import { parseLine, rawLines } from '../ingest/jsonl-lines.js';
import { besideFile, removeOnStop } from './output-claim.js';
import { notWritten } from './output-path.js';
import { writeChunk } from '../render/write-chunk.js';
import { KEY_TWICE, keysWrittenTwice } from './line-form.js';
import { convertProblem } from './record-check.js';
import { serializeRecord, SOURCE_LINE, type JsonlRecord, type Located } from './record.js';
import { makeFolders } from '../folders.js';

/**
 * Parsed records of a JSONL file (gzip told by content), read line by line as a load checks them
 * (rawLines, parseLine: the same line numbers, blank lines, white space). A line that is not a JSON
 * object, a record a load refuses or the engine's form cannot hold (record-check.ts), or a key
 * written twice, is an InputError naming file, line and field. The camelCase envelope of builds
 * before 2025-08 is read as load reads it, and given in the snake_case one.
 */
export async function* readJsonlRecords(path: string, onRead?: (fraction: number) => void): AsyncGenerator<JsonlRecord> {
  const { gzip, keyStyle } = await detectFile(path);
  for await (const { line, bytes } of rawLines(path, gzip, onRead)) {
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

/**
 * A file opened for JSONL, gzipped when its name ends in .gz. The gzip stream and the file are one
 * pipeline: a file that fails (a full disk) fails the gzip stream too, so a writer waiting on it hears of it.
 */
export async function openJsonlOut(path: string, append = false): Promise<{ stream: Writable; close: () => Promise<void> }> {
  makeFolders(dirname(path));
  // Opened before streaming: a path that cannot be written fails here, named, not in a stream event;
  // and at once, so a stop's cleanup finds the file (see openWriteStream).
  const file = createWriteStream(path, { fd: openSync(path, append ? 'a' : 'w') });
  const gzip = path.endsWith('.gz') ? createGzip() : undefined;
  const stream: Writable = gzip ?? file;
  const finished = gzip ? pipeline(gzip, file) : finishedWriting(file);
  finished.catch(() => undefined); // told by close(), or by the write that meets it
  const close = () => {
    if (!stream.destroyed && !stream.writableEnded) stream.end();
    return finished;
  };
  return { stream, close };
}

/** Resolves when a file stream has written everything and closed; rejects with its error. */
function finishedWriting(file: Writable): Promise<void> {
  return new Promise((res, rej) => {
    file.once('error', rej);
    file.once('close', () => (file.errored ? rej(file.errored) : res()));
  });
}

/**
 * Stream records to a JSONL file in the engine's byte form; returns the count. The file appears
 * when every record is written (written beside and renamed): records that stop on bad input leave
 * no half-written file, and a file of the same name as it was.
 */
export async function writeJsonlFile(records: Iterable<JsonlRecord> | AsyncIterable<JsonlRecord>, path: string): Promise<{ records: number }> {
  const tmp = besideFile(path);
  const untrack = removeOnStop(tmp);
  const { stream, close } = await openJsonlOut(tmp).catch((e: unknown) => {
    untrack();
    return Promise.reject(notWritten(e, path, tmp));
  });
  let n: number;
  let closed = false;
  // errors of the writing (not of the records read) are the output's
  const written = <T>(p: Promise<T> | T) => Promise.resolve(p).catch((e: unknown) => Promise.reject(notWritten(e, path, tmp)));
  try {
    n = await writeJsonlRecords(records, stream, written);
    closed = true;
    await written(close());
    await written(rename(tmp, path));
  } catch (e) {
    if (!closed) await close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw e;
  } finally {
    untrack();
  }
  return { records: n };
}

/**
 * Stream records to a stream in the engine's byte form, in chunks; returns the count. `written`
 * wraps each write, so its errors can be told apart from those of the records read.
 */
export async function writeJsonlRecords(
  records: Iterable<JsonlRecord> | AsyncIterable<JsonlRecord>,
  stream: Writable,
  written: (p: Promise<void> | void) => Promise<void> = (p) => Promise.resolve(p),
): Promise<number> {
  let n = 0;
  let buf = '';
  for await (const r of records as AsyncIterable<JsonlRecord>) {
    buf += serializeRecord(r) + '\n';
    n++;
    if (buf.length > 1 << 16) {
      await written(writeChunk(stream, buf));
      buf = '';
    }
  }
  if (buf) await written(writeChunk(stream, buf));
  return n;
}
