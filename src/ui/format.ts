/** Text helpers for fixed-width cells and waterfall bars; telemetry text goes through printable (src/render/printable.ts). */
import { printable, printableLine } from '../render/printable.js';

/** Cut or pad to exactly `w` columns (an ellipsis marks a cut). */
export function fit(text: string, w: number): string {
  const s = printableLine(text);
  if (w <= 0) return '';
  if (s.length > w) return w === 1 ? '…' : s.slice(0, w - 1) + '…';
  return s + ' '.repeat(w - s.length);
}

/** Cut to at most `w` columns (an ellipsis marks a cut), no padding. */
export function cut(text: string, w: number): string {
  const s = printableLine(text);
  if (w <= 0) return '';
  return s.length > w ? (w === 1 ? '…' : s.slice(0, w - 1) + '…') : s;
}

/** The waterfall bar as an offset and its blocks only (no padding to write). */
export function waterfallSpan(offMs: number, durMs: number | null, totalMs: number, width: number, running = false): { start: number; text: string } {
  const full = waterfall(offMs, durMs, totalMs, width, running);
  const start = full.search(/\S/);
  return { start: Math.max(0, start), text: full.trim() };
}

export function fitLeft(text: string, w: number): string {
  const s = printableLine(text);
  if (w <= 0) return '';
  if (s.length > w) return s.slice(0, w);
  return ' '.repeat(w - s.length) + s;
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
  if (typeof v === 'string') return printableLine(v).replace(/\s+/g, ' ');
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  return JSON.stringify(v);
}

/**
 * The bottom bar: the screen's key hints from the left, as many as fit, always with the one that
 * opens the full key list (`? keys`), then the status right-aligned in what is left.
 */
export function statusBar(status: string, hints: { key: string; hint: string }[], width: number): string {
  const text = (hs: typeof hints) => hs.map((h) => `${h.key} ${h.hint}`).join('  ');
  const room = width - Math.min(status.length, Math.max(12, Math.floor(width / 4))) - 2;
  const must = hints.find((h) => h.hint === 'keys');
  const chosen: typeof hints = [];
  for (const h of hints) {
    const next = [...chosen, h];
    const withMust = must && !next.includes(must) ? [...next, must] : next;
    if (text(withMust).length > room) break;
    chosen.push(h);
  }
  if (must && !chosen.includes(must)) chosen.push(must);
  const left = text(chosen);
  const rest = width - left.length - 2;
  return rest > 0 ? fit(`${left}  ${' '.repeat(Math.max(0, rest - status.length))}${cut(status, rest)}`, width) : fit(left, width);
}

/** Cut to at most `w` columns in the middle, so names that share a prefix stay distinguishable. */
export function middle(text: string, w: number): string {
  const s = printableLine(text);
  if (w <= 0) return '';
  if (s.length <= w) return s;
  if (w === 1) return '…';
  const tail = Math.floor((w - 1) / 2);
  return s.slice(0, w - 1 - tail) + '…' + s.slice(s.length - tail);
}

/**
 * Wrap text to `w` columns at spaces, so ids and paths are never broken inside; a token longer
 * than a whole line is split after a `/`, `.` or `_` where it can be, else where it must.
 */
export function wrapWords(text: string, w: number): string[] {
  const width = Math.max(1, w);
  const out: string[] = [];
  for (const para of printable(text).split('\n')) {
    let line = '';
    for (const word of para.split(/(?<= )/)) {
      if (line.length + word.trimEnd().length <= width) {
        line += word;
        continue;
      }
      if (line.trim()) out.push(line.trimEnd());
      line = '';
      let rest = word;
      while (rest.trimEnd().length > width) {
        const head = rest.slice(0, width);
        const at = Math.max(head.lastIndexOf('/'), head.lastIndexOf('.'), head.lastIndexOf('_'));
        const cutAt = at >= width / 2 ? at + 1 : width;
        out.push(rest.slice(0, cutAt));
        rest = rest.slice(cutAt);
      }
      line = rest;
    }
    out.push(line.trimEnd());
  }
  return out;
}
