/**
 * A JSON document written in pieces, byte for byte what JSON.stringify(value, null, 2) gives up to
 * MAX_INDENT levels of nesting: the output of a large model (many runs of many nodes) is past the
 * longest string V8 can build.
 */
import type { Writable } from 'node:stream';
import { writeChunk } from './write-chunk.js';

const INDENT = '  ';
/**
 * Nesting deeper than this is indented no further: the indentation of a deep chain of spans (each
 * two levels: the span and its children) would grow the output with the square of its depth.
 */
export const MAX_INDENT = 64;
const indents: string[] = [];
const indent = (depth: number) => (indents[depth] ??= '\n' + INDENT.repeat(Math.min(depth, MAX_INDENT)));

/** An array or object being written: its keys (objects), the next index, whether a member was written. */
interface Open {
  v: unknown[] | Record<string, unknown>;
  keys: string[] | null;
  i: number;
  depth: number;
  wrote: boolean;
}

/**
 * JSON.stringify(value, null, 2) in pieces (`depth`: the indentation the value starts at). An
 * explicit stack of open arrays and objects, not recursion: a span tree may nest deeper than the
 * call stack reaches.
 */
export function* prettyJson(value: unknown, depth = 0): Generator<string> {
  const open: Open[] = [];
  let next: { v: unknown; depth: number } | null = { v: toJson(value), depth };
  for (;;) {
    if (next) {
      const { v, depth: d } = next;
      next = null;
      if (v === null || typeof v !== 'object') yield JSON.stringify(v) ?? 'null';
      else if (Array.isArray(v)) {
        if (v.length === 0) yield '[]';
        else open.push({ v, keys: null, i: 0, depth: d, wrote: false });
      } else open.push({ v: v as Record<string, unknown>, keys: Object.keys(v), i: 0, depth: d, wrote: false });
      continue;
    }
    const top = open[open.length - 1];
    if (!top) return;
    const inner = indent(top.depth + 1);
    if (top.keys === null) {
      const arr = top.v as unknown[];
      if (top.i < arr.length) {
        yield (top.i === 0 ? '[' : ',') + inner;
        next = { v: toJson(arr[top.i++]), depth: top.depth + 1 };
      } else {
        open.pop();
        yield indent(top.depth) + ']';
      }
      continue;
    }
    const obj = top.v as Record<string, unknown>;
    while (top.i < top.keys.length) {
      const k = top.keys[top.i++]!;
      const x = toJson(obj[k]);
      // (as JSON.stringify: a key whose value JSON cannot hold is left out)
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
      yield (top.wrote ? ',' : '{') + inner + JSON.stringify(k) + ': ';
      top.wrote = true;
      next = { v: x, depth: top.depth + 1 };
      break;
    }
    if (next) continue;
    open.pop();
    yield top.wrote ? indent(top.depth) + '}' : '{}';
  }
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
