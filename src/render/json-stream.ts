/**
 * A JSON document written in pieces, byte for byte what JSON.stringify(value, null, 2) gives: the
 * output of a large model (many runs of many nodes) is past the longest string V8 can build.
 */
import type { Writable } from 'node:stream';
import { writeChunk } from './write-chunk.js';

const INDENT = '  ';

/** JSON.stringify(value, null, 2) in pieces (`depth`: the indentation the value starts at). */
export function* prettyJson(value: unknown, depth = 0): Generator<string> {
  const v = toJson(value);
  if (v === null || typeof v !== 'object') {
    yield JSON.stringify(v) ?? 'null';
    return;
  }
  const inner = '\n' + INDENT.repeat(depth + 1);
  if (Array.isArray(v)) {
    if (v.length === 0) {
      yield '[]';
      return;
    }
    for (let i = 0; i < v.length; i++) {
      yield (i === 0 ? '[' : ',') + inner;
      yield* prettyJson(v[i], depth + 1);
    }
    yield '\n' + INDENT.repeat(depth) + ']';
    return;
  }
  let first = true;
  for (const k of Object.keys(v)) {
    const x = toJson((v as Record<string, unknown>)[k]);
    // (as JSON.stringify: a key whose value JSON cannot hold is left out)
    if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
    yield (first ? '{' : ',') + inner + JSON.stringify(k) + ': ';
    first = false;
    yield* prettyJson(x, depth + 1);
  }
  yield first ? '{}' : '\n' + INDENT.repeat(depth) + '}';
}

function toJson(v: unknown): unknown {
  return v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function' ? (v as { toJSON(): unknown }).toJSON() : v;
}

/**
 * The pretty JSON array of `items`, made one at a time (each is dropped once written), as
 * JSON.stringify([...items], null, 2) gives it.
 */
export async function* prettyJsonArray(items: AsyncIterable<unknown>): AsyncGenerator<string> {
  let first = true;
  for await (const item of items) {
    yield (first ? '[' : ',') + '\n' + INDENT;
    first = false;
    yield* prettyJson(item, 1);
  }
  yield first ? '[]' : '\n]';
}

const FLUSH_AT = 64 * 1024;

/**
 * Write `pieces` to `out`, joined into writes of about 64 KiB, waiting while the stream's buffer is
 * full (writeChunk: a stream that failed rejects). A reader that goes away ends the command through
 * stdout's 'error' handler (cli.ts).
 */
export async function writePieces(out: Writable, pieces: Iterable<string> | AsyncIterable<string>): Promise<void> {
  let buf = '';
  for await (const p of pieces) {
    buf += p;
    if (buf.length >= FLUSH_AT) {
      await writeChunk(out, buf);
      buf = '';
    }
  }
  if (buf) await writeChunk(out, buf);
}

/**
 * Write items made one at a time as one pretty JSON document and a newline: their array, or with
 * `single` the one item alone (a command's --trace).
 */
export async function writeJsonItems(out: Writable, items: AsyncIterable<unknown>, single: boolean): Promise<void> {
  async function* document(): AsyncGenerator<string> {
    if (single) for await (const item of items) yield* prettyJson(item);
    else yield* prettyJsonArray(items);
    yield '\n';
  }
  await writePieces(out, document());
}
