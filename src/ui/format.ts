/** Text helpers for fixed-width cells and waterfall bars. */

/** Cut or pad to exactly `w` columns (an ellipsis marks a cut). */
export function fit(s: string, w: number): string {
  if (w <= 0) return '';
  if (s.length > w) return w === 1 ? '…' : s.slice(0, w - 1) + '…';
  return s + ' '.repeat(w - s.length);
}

/** Cut to at most `w` columns (an ellipsis marks a cut), no padding. */
export function cut(s: string, w: number): string {
  if (w <= 0) return '';
  return s.length > w ? (w === 1 ? '…' : s.slice(0, w - 1) + '…') : s;
}

/** The waterfall bar as an offset and its blocks only (no padding to write). */
export function waterfallSpan(offMs: number, durMs: number | null, totalMs: number, width: number, running = false): { start: number; text: string } {
  const full = waterfall(offMs, durMs, totalMs, width, running);
  const start = full.search(/\S/);
  return { start: Math.max(0, start), text: full.trim() };
}

export function fitLeft(s: string, w: number): string {
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
  if (typeof v === 'string') return v.replace(/\s+/g, ' ');
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  return JSON.stringify(v);
}
