/**
 * A JSONL file's lines as bytes, numbered exactly (every newline counts, a blank line too), read by
 * JavaScript only where a load needs the truth about lines: after DuckDB reported a problem, and
 * validate. A damaged gzip stops the read with an error that says how far it got.
 */
import { isUtf8 } from 'node:buffer';
import { once } from 'node:events';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { InputError, errorMessage } from '../errors.js';
import { loneSurrogate, loneSurrogateReason } from './lone-surrogate.js';
import { KEY_TWICE, keysWrittenTwice } from '../produce/line-form.js';
import { readerReadsKey, recordProblem } from './jsonl.js';
import { BOM_PROBLEM, NOT_UTF8 } from './text-encoding.js';
import { LISTED_BAD_LINES, type BadLine } from './bad-line.js';

export interface RawLine {
  /** from 1 */
  line: number;
  /** without its newline */
  bytes: Buffer;
}

/** How far a file's text goes: whole lines and bytes of (decompressed) text. */
interface Progress {
  lines: number;
  bytes: number;
}

/** zlib's complaint about a gzip stream, said for a user with the file and how far its text was read. */
function gzipError(e: unknown, path: string, got: Progress): InputError {
  const msg = errorMessage(e);
  const where = `after ${got.lines} whole line${got.lines === 1 ? '' : 's'} (${got.bytes} bytes of text)`;
  if (/unexpected end of file/i.test(msg)) return new InputError(`truncated gzip: the data ends ${where}`, path);
  return new InputError(`damaged gzip: ${msg} ${where}`, path);
}

/**
 * The file's text as chunks (gunzipped when `gzip`); zlib errors become InputErrors saying how far it
 * got. `onRead`: the part of the file read so far (0..1), for a progress bar.
 */
async function* textChunks(path: string, gzip: boolean, onRead?: (fraction: number) => void): AsyncGenerator<Buffer> {
  const raw = createReadStream(path, { highWaterMark: 1 << 20 });
  const size = onRead ? statSync(path).size : 0;
  const read = onRead && size > 0 ? () => onRead(raw.bytesRead / size) : () => undefined;
  if (!gzip) {
    for await (const chunk of raw) {
      read();
      yield chunk as Buffer;
    }
    return;
  }
  const gunzip = createGunzip();
  raw.on('error', (e) => gunzip.destroy(e));
  raw.pipe(gunzip);
  try {
    for await (const chunk of gunzip) {
      read();
      yield chunk as Buffer;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code?.startsWith('Z_')) throw gzipError(e, path, await readableText(path));
    throw e;
  } finally {
    raw.destroy();
  }
}

/**
 * How much whole-line text a damaged gzip file holds before its fault. Not what the reader above got
 * when zlib failed: that drops the text still waiting in its buffer, which varies from run to run.
 * A flowing stream hands every decompressed chunk over before the error.
 */
function readableText(path: string): Promise<Progress> {
  return new Promise((resolve) => {
    const got: Progress = { lines: 0, bytes: 0 };
    let seen = 0;
    const gunzip = createGunzip();
    const raw = createReadStream(path);
    const done = () => {
      raw.destroy();
      resolve(got);
    };
    gunzip.on('data', (chunk: Buffer) => {
      for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, nl + 1)) {
        got.lines++;
        got.bytes = seen + nl + 1;
      }
      seen += chunk.length;
    });
    gunzip.on('end', done);
    gunzip.on('error', done);
    raw.on('error', done);
    raw.pipe(gunzip);
  });
}

/** Every line of a JSONL file, numbered from 1; the last one may lack its newline. `onRead`: as textChunks. */
export async function* rawLines(path: string, gzip: boolean, onRead?: (fraction: number) => void): AsyncGenerator<RawLine> {
  let lines = 0;
  let carry: Buffer[] = [];
  for await (const chunk of textChunks(path, gzip, onRead)) {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
      const piece = chunk.subarray(from, nl);
      const bytes = carry.length ? Buffer.concat([...carry, piece]) : piece;
      carry = [];
      yield { line: ++lines, bytes };
      from = nl + 1;
    }
    if (from < chunk.length) carry.push(chunk.subarray(from));
  }
  if (carry.length) yield { line: lines + 1, bytes: Buffer.concat(carry) };
}

/**
 * Read a file's text beside DuckDB's read of it, for what that reader forgives or skips. It takes a
 * trailing comma (`{"a":1,}`, `[1,]`) for valid JSON: the scan says whether a `,` comes before a `}`
 * or `]` (a `,}` inside a string is a false alarm, which the line check then clears). It takes a
 * vertical tab or form feed for white space (and skips a line of them): the scan says whether one is there. It skips blank
 * lines, so that the rows after one are off their lines: the scan says whether a record follows one. It
 * refuses a byte order mark at the start of the first file it reads only: the scan says whether the file
 * starts with one. A gzip file is also read through to its end (DuckDB's reader takes a truncated gzip for
 * a text that ends early, and does not check the checksum); zlib works in a thread of its own. Rejects
 * with rawLines' InputError.
 */
export async function scanBeside(path: string, gzip: boolean): Promise<{ trailingComma: boolean; blankLines: boolean; notJsonSpace: boolean; byteOrderMark: boolean }> {
  let before = 0; // the last byte that is not white space, from the chunks before
  let trailingComma = false;
  let notJsonSpace = false;
  const line = { blankSoFar: true, sawBlank: false };
  let blankLines = false;
  let byteOrderMark: boolean | undefined;
  for await (const chunk of gzip ? textChunks(path, true) : reusedChunks(path)) {
    byteOrderMark ??= chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf;
    if (!trailingComma) trailingComma = commaBeforeClose(chunk, before);
    // a raw vertical tab or form feed is not JSON anywhere (white space to the reader, which skips a line of them)
    if (!notJsonSpace) notJsonSpace = chunk.includes(0x0b) || chunk.includes(0x0c);
    if (!blankLines) blankLines = blankLineIn(chunk, line);
    for (let i = chunk.length - 1; i >= 0; i--) {
      if (!isSpace(chunk[i]!)) {
        before = chunk[i]!;
        break;
      }
    }
  }
  return { trailingComma, blankLines, notJsonSpace, byteOrderMark: byteOrderMark ?? false };
}

/**
 * Whether a line with a record comes after a blank line (white space only) in the chunk: blank lines
 * after the last record move no record off its line. `line.blankSoFar`: the line the chunk starts in
 * has only white space before it (true at the start of the file); `line.sawBlank`: a blank line came
 * before. Both are kept for the next chunk.
 */
function blankLineIn(chunk: Buffer, line: { blankSoFar: boolean; sawBlank: boolean }): boolean {
  let i = 0;
  for (;;) {
    while (i < chunk.length && chunk[i] !== 0x0a && isSpace(chunk[i]!)) i++;
    if (i === chunk.length) return false;
    if (chunk[i] === 0x0a) {
      if (line.blankSoFar) line.sawBlank = true;
    } else {
      if (line.blankSoFar && line.sawBlank) return true;
      i = chunk.indexOf(0x0a, i);
      if (i === -1) {
        line.blankSoFar = false;
        return false;
      }
    }
    i++;
    line.blankSoFar = true;
  }
}

/**
 * The file's text (gunzipped) in `copyTo` with every blank line written as `{}`, line for line: DuckDB
 * reads it with a row for every line, so that every record keeps its line number (the `{}` rows are
 * no records). Returns the number of blank lines.
 */
export async function blankLinesAsObjects(path: string, gzip: boolean, copyTo: string): Promise<number> {
  let blank = 0;
  const copy = createWriteStream(copyTo);
  const write = async (b: Buffer) => {
    if (!copy.write(b)) await once(copy, 'drain');
  };
  try {
    for await (const { bytes } of rawLines(path, gzip)) {
      const isBlank = bytes.every(isSpace);
      if (isBlank) blank++;
      await write(isBlank ? EMPTY_OBJECT : bytes);
      await write(NEWLINE);
    }
  } finally {
    await new Promise<void>((res, rej) => copy.end((e?: Error | null) => (e ? rej(e) : res())));
  }
  return blank;
}

/**
 * A plain file's bytes through one buffer that each chunk overwrites (valid until the next one):
 * half the CPU of a read stream's fresh buffers, on a read that runs beside DuckDB's.
 */
async function* reusedChunks(path: string): AsyncGenerator<Buffer> {
  const file = await open(path, 'r');
  const buffer = Buffer.allocUnsafe(4 << 20);
  try {
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await file.close();
  }
}

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** Whether a `}` or `]` in the chunk follows a `,` (white space between; `before`: the byte before the chunk). */
function commaBeforeClose(chunk: Buffer, before: number): boolean {
  for (const close of [0x7d, 0x5d]) {
    for (let i = chunk.indexOf(close); i !== -1; i = chunk.indexOf(close, i + 1)) {
      let j = i - 1;
      while (j >= 0 && isSpace(chunk[j]!)) j--;
      if ((j >= 0 ? chunk[j] : before) === 0x2c) return true;
    }
  }
  return false;
}


/** A line's bytes as a JSON value (and its text), or why it is not one. Blank lines (DuckDB skips them) are 'blank'. */
export function parseLine(bytes: Buffer): { value: unknown; text: string } | { problem: string } | 'blank' {
  let blank = true;
  for (let i = 0; i < bytes.length && blank; i++) blank = bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0d;
  if (blank) return 'blank';
  if (!isUtf8(bytes)) return { problem: NOT_UTF8 };
  // Said as such: JSON.parse's message would quote the invisible character.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { problem: BOM_PROBLEM };
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problem: `malformed JSON: ${errorMessage(e)}` };
  }
  const lone = loneSurrogate(text, value);
  if (lone) return { problem: `malformed JSON: ${loneSurrogateReason(lone)}` };
  return { value, text };
}

export { LISTED_BAD_LINES, type BadLine } from './bad-line.js';

/** Add `line` (after every line in them) to `ranges`: the line after the last range's end extends it. */
export function addToRanges(ranges: [number, number][], line: number): void {
  const last = ranges[ranges.length - 1];
  if (last && last[1] === line - 1) last[1] = line;
  else ranges.push([line, line]);
}

export interface LinesVetted {
  /** bad lines in all */
  count: number;
  /** blank lines (written as `{}` to a copy, as bad lines are) */
  blank: number;
  /** the first LISTED_BAD_LINES of them, with reasons */
  listed: BadLine[];
  /** the others, as [first, last] line ranges */
  more: [number, number][];
}

/**
 * Every line of a JSONL file held to what a load needs (UTF-8, a JSON object, recordProblem, no key
 * DuckDB's reader reads written twice). Only
 * where DuckDB reported a problem: JSON.parse of every line is the slow path. `stopAtFirst`: return at
 * the first bad line. `copyTo`: write the file's text there with every bad or blank line replaced by
 * `{}`, line for line, for DuckDB to read without tripping (a read that skips a malformed line can
 * take the line after it too) and with every record on its own line number.
 */
export async function vetLines(
  path: string,
  o: { gzip: boolean; keyStyle: 'snake' | 'camel'; stopAtFirst?: boolean; copyTo?: string },
): Promise<LinesVetted> {
  const out: LinesVetted = { count: 0, blank: 0, listed: [], more: [] };
  const copy = o.copyTo ? createWriteStream(o.copyTo) : undefined;
  const write = async (b: Buffer) => {
    if (copy && !copy.write(b)) await once(copy, 'drain');
  };
  try {
    for await (const { line, bytes } of rawLines(path, o.gzip)) {
      const parsed = parseLine(bytes);
      const bad: BadLine | undefined =
        parsed === 'blank' ? undefined
        : 'problem' in parsed ? { line, reason: parsed.problem }
        : (() => {
            const p = recordProblem(parsed.value, o.keyStyle);
            if (p) return { line, field: p.field, reason: p.reason };
            const twice = keysWrittenTwice(parsed.text, parsed.value).find((k) => readerReadsKey(k, o.keyStyle));
            return twice === undefined ? undefined : { line, field: twice, reason: KEY_TWICE };
          })();
      if (bad) {
        out.count++;
        if (out.listed.length < LISTED_BAD_LINES) out.listed.push(bad);
        else addToRanges(out.more, line);
        if (o.stopAtFirst) break;
      }
      if (parsed === 'blank') out.blank++;
      await write(bad || parsed === 'blank' ? EMPTY_OBJECT : bytes);
      await write(NEWLINE);
    }
  } finally {
    if (copy) await new Promise<void>((res, rej) => copy.end((e?: Error | null) => (e ? rej(e) : res())));
  }
  return out;
}

const EMPTY_OBJECT = Buffer.from('{}');
const NEWLINE = Buffer.from('\n');
