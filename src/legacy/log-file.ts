/** A JSON log file streamed line by line through the translator (never held in memory). */
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { InputError } from '../errors.js';
import { findLoneSurrogate, loneSurrogateText, mayHoldLoneSurrogate } from '../ingest/lone-surrogate.js';
import { LISTED_BAD_LINES, type BadLine } from '../ingest/bad-line.js';
import { BOM_PROBLEM, NOT_UTF8 } from '../ingest/text-encoding.js';
import { eventOf, type LegacyEvent } from './log-events.js';
import { LogTranslator, type LogSummary, type TranslatorOptions } from './log-translator.js';
import { refuseOutsideStep } from '../service/job-step.js';
import { KEY_TWICE, keyWrittenTwiceAt } from '../produce/line-form.js';

export interface LogFileReport {
  file: string;
  lines: number;
  /** lines that are not JSON events (kept out of the telemetry, counted) */
  badLines: number;
  /** lines that start as JSON but do not parse (a damaged line), skipped with `lenient` */
  malformed: BadLine[];
  invocations: LogSummary[];
}

/**
 * Lines of a byte stream: only "\n" ends a line (as in telemetry JSONL, and as awk and sed count
 * them), a "\r" before it is part of the line end, a lone "\r" is part of its line; a last line
 * without an ending still counts. Each line comes decoded, with whether its bytes are UTF-8 (a
 * decode alone would put U+FFFD in place of the others, silently). Works on whole chunks: the
 * lines a chunk completes are checked and decoded at once, line by line only when they hold a
 * byte that is not UTF-8.
 */
export class LineSplitter {
  /** the unended line so far, in pieces: joined once when a line end comes, so a long line costs its length, not its length squared */
  private pending: Buffer[] = [];

  /** Calls onLine for every line completed by this chunk. */
  push(chunk: Buffer, onLine: (line: string, utf8: boolean) => void): void {
    const last = chunk.lastIndexOf(0x0a);
    if (last < 0) {
      if (chunk.length) this.pending.push(chunk);
      return;
    }
    const ended = chunk.subarray(0, last + 1);
    const whole = this.pending.length ? Buffer.concat([...this.pending, ended]) : ended;
    this.pending = last + 1 < chunk.length ? [chunk.subarray(last + 1)] : [];
    if (isUtf8(whole)) {
      const s = whole.toString('utf8');
      for (let from = 0, nl = s.indexOf('\n'); nl >= 0; from = nl + 1, nl = s.indexOf('\n', from)) onLine(withoutCr(s.slice(from, nl)), true);
      return;
    }
    for (let from = 0, nl = whole.indexOf(0x0a); nl >= 0; from = nl + 1, nl = whole.indexOf(0x0a, from)) {
      const b = whole.subarray(from, nl);
      onLine(withoutCr(b.toString('utf8')), isUtf8(b));
    }
  }

  end(onLine: (line: string, utf8: boolean) => void): void {
    const rest = Buffer.concat(this.pending);
    this.pending = [];
    if (rest.length) onLine(withoutCr(rest.toString('utf8')), isUtf8(rest));
  }
}

const withoutCr = (line: string) => (line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line);

export interface FeedOptions {
  /**
   * The sinks' backpressure. Started every DRAIN_EVERY lines and waited for only when the previous
   * one is still pending by then: the stream is held back only while a sink is really behind, not
   * for each file write in flight (waiting on those idled migrate and delayed record's human text).
   */
  drain?: () => Promise<void>;
  /**
   * The human side of each chunk, called before its events are translated: lines that are not JSON
   * events as they came, and the message of every non-debug event (one write per chunk).
   */
  human?: (text: string) => void;
  /**
   * The log file read: a line with a lone surrogate is then refused naming it, its line and the
   * field, as a telemetry JSONL line is (a live command's output is not stopped for one).
   */
  file?: string;
  /**
   * A line of the file that starts with `{` but is not JSON (damaged, cut mid-way) stops the read
   * naming its line, unless lenient: then it is skipped and listed. `hint` ends the stopping message.
   */
  lenient?: boolean;
  hint?: string;
}

const DRAIN_EVERY = 4096;

/** What feedLines read of a stream. */
export interface FedLines {
  lines: number;
  badLines: number;
  malformed: BadLine[];
  /**
   * A live command's lines (no `file`) read short of what they held, which its output is not
   * stopped for: a line that began as JSON but did not parse (no record), one not UTF-8 (read with
   * U+FFFD). Counted, the first LISTED_BAD_LINES of each kept.
   */
  unread: LiveLines;
  notUtf8: LiveLines;
}

export interface LiveLines {
  count: number;
  first: BadLine[];
}

const noteLine = (l: LiveLines, b: BadLine) => {
  l.count++;
  if (l.first.length < LISTED_BAD_LINES) l.first.push(b);
};

/** Feed a byte stream to a translator, chunk by chunk. */
export async function feedLines(chunks: AsyncIterable<Buffer>, t: LogTranslator, o: FeedOptions = {}): Promise<FedLines> {
  const split = new LineSplitter();
  const human = o.human;
  let n = 0;
  let bad = 0;
  const malformed: BadLine[] = [];
  const unread: LiveLines = { count: 0, first: [] };
  const notUtf8: LiveLines = { count: 0, first: [] };
  let events: LegacyEvent[] = [];
  let text = '';
  let drained = 0;
  let draining: Promise<void> | null = null;
  /** A read file's line that cannot be read: it stops the read, or with lenient is skipped and listed. */
  const damaged = (reason: string, field?: string) => {
    if (!o.lenient) throw new InputError(`${reason}${o.hint ?? ''}`, o.file, n, field);
    malformed.push({ line: n, reason: field ? `${field}: ${reason}` : reason });
  };
  const onLine = (line: string, utf8: boolean) => {
    n++;
    if (line.length === 0) return;
    // JSON may start after white space; a byte order mark before it is refused as in telemetry JSONL
    let at = 0;
    while (isJsonSpace(line.charCodeAt(at))) at++;
    const bom = line.charCodeAt(at) === 0xfeff;
    if (bom) while (isJsonSpace(line.charCodeAt(++at)));
    const json = line.charCodeAt(at) === 123; /* { */
    // refused as in telemetry JSONL: read as U+FFFD, a node id would name another node. A live
    // command's line is still read so (its node's outcome kept): its output is not stopped for one.
    if (json && !utf8) {
      if (o.file !== undefined) return damaged(NOT_UTF8);
      noteLine(notUtf8, { line: n, reason: NOT_UTF8 });
    }
    if (json && bom) {
      if (o.file !== undefined) return damaged(BOM_PROBLEM);
      line = line.slice(at);
    }
    const value = json ? jsonValue(line) : undefined;
    const ev = value === undefined ? null : eventOf(value);
    if (ev && o.file !== undefined) refuseLoneSurrogate(line, o.file, n);
    // JSON.parse keeps the last of a key written twice (a node's status), silently
    const twice = ev && o.file !== undefined ? keyWrittenTwiceAt(line, value)[0]?.field : undefined;
    if (twice !== undefined) return damaged(KEY_TWICE, twice);
    // A read file's line that begins as JSON and does not parse may have been any event (a node's
    // result): not a text line to pass over. A live command's output is not stopped for one.
    const broken = !ev && json ? jsonError(line) : undefined;
    if (broken !== undefined) {
      if (o.file !== undefined) return damaged(`malformed JSON: ${broken}`);
      noteLine(unread, { line: n, reason: `malformed JSON: ${broken}` });
    }
    // Every line the engine writes has its time: without one, the run's times would be made up.
    if (ev?.badTs && o.file !== undefined) return damaged(ev.badTs.why, ev.badTs.field);
    if (ev) {
      events.push(ev);
      if (human && ev.level !== 'debug' && ev.msg) text += ev.msg + '\n';
    } else {
      bad++;
      if (human) text += line + '\n';
    }
  };
  const flush = () => {
    if (text) human!(text);
    text = '';
    const evs = events;
    events = [];
    for (const ev of evs) t.feed(ev);
  };
  for await (const chunk of chunks) {
    split.push(chunk, onLine);
    flush();
    if (o.drain && n - drained >= DRAIN_EVERY) {
      drained = n;
      if (draining) await draining;
      draining = o.drain();
      draining.catch(() => undefined); // rethrown when awaited
    }
  }
  split.end(onLine);
  flush();
  if (draining) await draining;
  return { lines: n, badLines: bad, malformed, unread, notUtf8 };
}

const isJsonSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

/** A line's JSON value, or undefined when it is not JSON. */
function jsonValue(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Why a line is not JSON, or undefined when it is. */
function jsonError(line: string): string | undefined {
  try {
    JSON.parse(line);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function refuseLoneSurrogate(line: string, file: string, n: number): void {
  const at = mayHoldLoneSurrogate(line) ? findLoneSurrogate(JSON.parse(line), line) : undefined;
  if (at) throw new InputError(loneSurrogateText(at), file, n, at.path);
}

export async function translateLogFile(
  file: string, o: TranslatorOptions, drain: () => Promise<void>, read: Pick<FeedOptions, 'lenient' | 'hint'> = {},
): Promise<LogFileReport> {
  refuseOutsideStep(file, 'input');
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  const t = new LogTranslator(o);
  const { lines, badLines, malformed } = await feedLines(file.endsWith('.gz') ? input.pipe(createGunzip()) : input, t, { drain, file, ...read });
  t.end();
  for (const s of t.summaries) s.file = file;
  return { file, lines, badLines, malformed, invocations: t.summaries };
}
