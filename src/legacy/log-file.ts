/** A JSON log file streamed line by line through the translator (never held in memory). */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { parseEventLine, type LegacyEvent } from './log-events.js';
import { LogTranslator, type LogSummary, type TranslatorOptions } from './log-translator.js';

export interface LogFileReport {
  file: string;
  lines: number;
  /** lines that are not JSON events (kept out of the telemetry, counted) */
  badLines: number;
  invocations: LogSummary[];
}

/** Feed lines to a translator, pausing every few thousand lines for the sinks to drain. */
export async function feedLines(
  lines: AsyncIterable<string>, t: LogTranslator, drain: () => Promise<void>,
  onOther?: (line: string) => void, onEvent?: (ev: LegacyEvent) => void,
): Promise<{ lines: number; badLines: number }> {
  let n = 0;
  let bad = 0;
  for await (const line of lines) {
    n++;
    if (line.length === 0) continue;
    const ev = line.charCodeAt(0) === 123 /* { */ ? parseEventLine(line) : null;
    if (ev) {
      onEvent?.(ev);
      t.feed(ev);
    }
    else {
      bad++;
      onOther?.(line);
    }
    if (n % 4096 === 0) await drain();
  }
  return { lines: n, badLines: bad };
}

export async function translateLogFile(file: string, o: TranslatorOptions, drain: () => Promise<void>): Promise<LogFileReport> {
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  const rl = createInterface({ input: file.endsWith('.gz') ? input.pipe(createGunzip()) : input, crlfDelay: Infinity });
  const t = new LogTranslator(o);
  const { lines, badLines } = await feedLines(rl, t, drain);
  t.end();
  for (const s of t.summaries) s.file = file;
  return { file, lines, badLines, invocations: t.summaries };
}
