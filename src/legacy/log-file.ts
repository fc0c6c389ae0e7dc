/** A JSON log file streamed line by line through the translator (never held in memory). */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { InputError } from '../errors.js';
import { findLoneSurrogate, loneSurrogateText, mayHoldLoneSurrogate } from '../ingest/lone-surrogate.js';
import { parseEventLine, type LegacyEvent } from './log-events.js';
import { LogTranslator, type LogSummary, type TranslatorOptions } from './log-translator.js';

export interface LogFileReport {
  file: string;
  lines: number;
  /** lines that are not JSON events (kept out of the telemetry, counted) */
  badLines: number;
  invocations: LogSummary[];
}

/**
 * Lines of a text stream as readline (crlfDelay: Infinity) splits them: "\n", "\r\n" and a lone
 * "\r" end a line, a last line without an ending still counts. Works on whole chunks: one pass of
 * indexOf per chunk instead of readline's per-line events and async iteration.
 */
export class LineSplitter {
  private rest = '';

  /** Calls onLine for every line completed by this chunk. */
  push(chunk: string, onLine: (line: string) => void): void {
    const s = this.rest.length ? this.rest + chunk : chunk;
    let from = 0;
    if (s.indexOf('\r') < 0) {
      for (let nl = s.indexOf('\n'); nl >= 0; nl = s.indexOf('\n', from)) {
        onLine(s.slice(from, nl));
        from = nl + 1;
      }
    } else {
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c === 10) {
          onLine(s.slice(from, i));
          from = i + 1;
        } else if (c === 13) {
          // a "\r" last in the chunk may be the first half of "\r\n": decided with the next chunk
          if (i === s.length - 1) break;
          onLine(s.slice(from, i));
          if (s.charCodeAt(i + 1) === 10) i++;
          from = i + 1;
        }
      }
    }
    this.rest = s.slice(from);
  }

  end(onLine: (line: string) => void): void {
    const rest = this.rest;
    this.rest = '';
    if (rest.endsWith('\r')) onLine(rest.slice(0, -1));
    else if (rest.length) onLine(rest);
  }
}

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
}

const DRAIN_EVERY = 4096;

/** Feed a text stream (utf8 chunks) to a translator, chunk by chunk. */
export async function feedLines(chunks: AsyncIterable<string>, t: LogTranslator, o: FeedOptions = {}): Promise<{ lines: number; badLines: number }> {
  const split = new LineSplitter();
  const human = o.human;
  let n = 0;
  let bad = 0;
  let events: LegacyEvent[] = [];
  let text = '';
  let drained = 0;
  let draining: Promise<void> | null = null;
  const onLine = (line: string) => {
    n++;
    if (line.length === 0) return;
    const ev = line.charCodeAt(0) === 123 /* { */ ? parseEventLine(line) : null;
    if (ev && o.file !== undefined) refuseLoneSurrogate(line, o.file, n);
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
  return { lines: n, badLines: bad };
}

function refuseLoneSurrogate(line: string, file: string, n: number): void {
  const at = mayHoldLoneSurrogate(line) ? findLoneSurrogate(JSON.parse(line), line) : undefined;
  if (at) throw new InputError(loneSurrogateText(at), file, n, at.path);
}

export function textOf(input: Readable): AsyncIterable<string> {
  input.setEncoding('utf8');
  return input as AsyncIterable<string>;
}

export async function translateLogFile(file: string, o: TranslatorOptions, drain: () => Promise<void>): Promise<LogFileReport> {
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  const t = new LogTranslator(o);
  const { lines, badLines } = await feedLines(textOf(file.endsWith('.gz') ? input.pipe(createGunzip()) : input), t, { drain, file });
  t.end();
  for (const s of t.summaries) s.file = file;
  return { file, lines, badLines, invocations: t.summaries };
}
