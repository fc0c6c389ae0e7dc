/**
 * Text helpers for fixed-width cells and waterfall bars; telemetry text goes through printable (src/render/printable.ts).
 * Widths are display columns, as the terminal (and ink) count them: a wide (CJK) character takes two.
 */
import stringWidth from 'string-width';
import { printable, printableLine } from '../render/printable.js';

const graphemes = new Intl.Segmenter();

/** What may draw zero columns (marks, format characters, default ignorables): most text has none. */
const MAYBE_ZERO_WIDTH = /[\p{M}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/**
 * Text as the explorer draws it: a character that takes no column on its own (U+200B, U+FEFF, a
 * combining mark with nothing before it) shown as `\u200b`. ink gives every character a cell of its
 * own, so one left as it is would pull the rest of its row a column left; shown, an id that holds one
 * is also told from one that does not. A mark or joiner inside a character (é, an emoji sequence) stays.
 */
function drawable(s: string): string {
  if (!MAYBE_ZERO_WIDTH.test(s)) return s;
  let out = '';
  for (const { segment } of graphemes.segment(s)) {
    out += stringWidth(segment) === 0
      ? Array.from(segment, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`).join('')
      : segment;
  }
  return out;
}

/** One line of telemetry text for a cell: printableLine, then drawable. */
const lineText = (s: string): string => drawable(printableLine(s));

/** Display columns of text as the explorer draws it. */
export const textWidth = (text: string): number => stringWidth(lineText(text));

/** The longest start (or end) of `s` that fits `w` columns; a wide character is never split. */
function take(s: string, w: number, fromEnd = false): string {
  const parts = Array.from(graphemes.segment(s), (g) => g.segment);
  if (fromEnd) parts.reverse();
  const out: string[] = [];
  let used = 0;
  for (const p of parts) {
    const pw = stringWidth(p);
    if (used + pw > w) break;
    out.push(p);
    used += pw;
  }
  return (fromEnd ? out.reverse() : out).join('');
}

const pad = (s: string, w: number) => s + ' '.repeat(Math.max(0, w - stringWidth(s)));

/** What a span or run that has not ended is: running while data may still arrive, else it never ended (as `tree` says NOT ENDED). */
export const unended = (live: boolean): string => (live ? 'running' : 'not ended');

/** Cut to at most `w` columns (an ellipsis marks a cut), no padding. */
export function cut(text: string, w: number): string {
  const s = lineText(text);
  if (w <= 0) return '';
  return stringWidth(s) > w ? take(s, w - 1) + '…' : s;
}

/** Cut or pad to exactly `w` columns (an ellipsis marks a cut). */
export function fit(text: string, w: number): string {
  return w <= 0 ? '' : pad(cut(text, w), w);
}

/** The waterfall bar as an offset and its blocks only (no padding to write). */
export function waterfallSpan(offMs: number, durMs: number | null, totalMs: number, width: number, running = false): { start: number; text: string } {
  const full = waterfall(offMs, durMs, totalMs, width, running);
  const start = full.search(/\S/);
  return { start: Math.max(0, start), text: full.trim() };
}

/** Right-aligned in exactly `w` columns; a cut keeps the start (a duration's largest unit) and ends in an ellipsis. */
export function fitLeft(text: string, w: number): string {
  const t = cut(text, w);
  return ' '.repeat(Math.max(0, w - stringWidth(t))) + t;
}

/**
 * A bar on the trace's shared time axis: `width` columns cover [0, totalMs]. At least one column
 * so short spans stay visible; a running span extends to the end of the axis.
 */
export function waterfall(offMs: number, durMs: number | null, totalMs: number, width: number, running = false): string {
  if (width <= 0) return '';
  if (!(totalMs > 0)) return '█'.padEnd(width);
  const start = Math.min(width - 1, Math.max(0, Math.floor((offMs / totalMs) * width)));
  const endMs = running || durMs === null ? totalMs : offMs + durMs;
  const end = Math.max(start + 1, Math.min(width, Math.ceil((endMs / totalMs) * width)));
  return ' '.repeat(start) + (running ? '▒' : '█').repeat(end - start) + ' '.repeat(width - end);
}

/** A determinate progress bar. */
export function progressBar(fraction: number, width: number): string {
  const f = Math.max(0, Math.min(1, fraction));
  const filled = Math.round(f * width);
  return '█'.repeat(filled) + '░'.repeat(Math.max(0, width - filled));
}

/** A readable one-line cell value. */
export function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return lineText(v).replace(/\s+/g, ' ');
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  return JSON.stringify(v);
}

/**
 * The bottom bar: the screen's key hints from the left, as many as fit, always with the one that
 * opens the full key list (`? keys`), then the status right-aligned in what is left.
 */
export function statusBar(status: string, hints: { key: string; hint: string }[], width: number): string {
  const text = (hs: typeof hints) => hs.map((h) => `${h.key} ${h.hint}`).join('  ');
  const room = width - Math.min(stringWidth(status), Math.max(12, Math.floor(width / 4))) - 2;
  const must = hints.find((h) => h.hint === 'keys');
  const chosen: typeof hints = [];
  for (const h of hints) {
    const next = [...chosen, h];
    const withMust = must && !next.includes(must) ? [...next, must] : next;
    if (stringWidth(text(withMust)) > room) break;
    chosen.push(h);
  }
  if (must && !chosen.includes(must)) chosen.push(must);
  const left = text(chosen);
  const rest = width - stringWidth(left) - 2;
  return rest > 0 ? fit(`${left}  ${' '.repeat(Math.max(0, rest - stringWidth(status)))}${cut(status, rest)}`, width) : fit(left, width);
}

/** Cut to at most `w` columns in the middle, so names that share a prefix stay distinguishable. */
export function middle(text: string, w: number): string {
  const s = lineText(text);
  if (w <= 0) return '';
  if (stringWidth(s) <= w) return s;
  if (w === 1) return '…';
  const tail = take(s, Math.floor((w - 1) / 2), true);
  return take(s, w - 1 - stringWidth(tail)) + '…' + tail;
}

/** Fields set side by side two spaces apart, on as many lines of `w` columns as they need; a field wider than a line is cut. */
export function packFields(fields: readonly string[], w: number): string[] {
  const out: string[] = [];
  for (const f of fields.map((x) => cut(x, w))) {
    const last = out.length - 1;
    if (last >= 0 && stringWidth(out[last]!) + 2 + stringWidth(f) <= w) out[last] += `  ${f}`;
    else out.push(f);
  }
  return out;
}

/**
 * Wrap text to `w` columns at spaces, so ids and paths are never broken inside; a token longer
 * than a whole line is split after a `/`, `.` or `_` where it can be, else where it must.
 */
export function wrapWords(text: string, w: number): string[] {
  const width = Math.max(1, w);
  const out: string[] = [];
  for (const para of printable(text).split('\n').map(drawable)) {
    let line = '';
    for (const word of para.split(/(?<= )/)) {
      if (stringWidth(line) + stringWidth(word.trimEnd()) <= width) {
        line += word;
        continue;
      }
      if (line.trim()) out.push(line.trimEnd());
      line = '';
      let rest = word;
      while (stringWidth(rest.trimEnd()) > width) {
        // at least one character a line, even a wide one on a one-column line
        const head = take(rest, width) || Array.from(graphemes.segment(rest), (g) => g.segment)[0]!;
        const at = Math.max(head.lastIndexOf('/'), head.lastIndexOf('.'), head.lastIndexOf('_'));
        const cutAt = at >= head.length / 2 ? at + 1 : head.length;
        out.push(rest.slice(0, cutAt));
        rest = rest.slice(cutAt);
      }
      line = rest;
    }
    out.push(line.trimEnd());
  }
  return out;
}
