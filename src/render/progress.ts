/**
 * The one progress bar, on stderr, for work that can take more than a second. Drawn only in a
 * terminal (stdout and stderr both TTYs) without CI set and with a TERM that can draw it; otherwise
 * silent (results stay clean on stdout, logs stay plain).
 */
import { cutText } from './cut-text.js';

export interface Progress {
  update(fraction: number, label?: string): void;
  done(): void;
}

/** Where the bar would go and where the results go (the defaults: the process's own). */
interface Streams {
  stream?: NodeJS.WriteStream;
  stdout?: { isTTY?: boolean };
}

export function progressEnabled({ stream = process.stderr, stdout = process.stdout }: Streams = {}): boolean {
  return Boolean(stream.isTTY) && Boolean(stdout.isTTY) && !process.env.CI && process.env.TERM !== 'dumb';
}

export function createProgress(title: string, streams: Streams = {}): Progress {
  if (!progressEnabled(streams)) return { update: () => undefined, done: () => undefined };
  const stream = streams.stream ?? process.stderr;
  const started = Date.now();
  let shown = false;
  let last = 0;
  return {
    update(fraction, label) {
      const now = Date.now();
      // Appear only after half a second, and redraw at most ten times a second.
      if (now - started < 500 || now - last < 100) return;
      last = now;
      shown = true;
      const width = Math.max(10, Math.min(40, (stream.columns || 80) - 50));
      const f = Math.max(0, Math.min(1, fraction));
      const filled = Math.round(f * width);
      const text = `${title} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(f * 100).toFixed(0).padStart(3)}% ${label ?? ''}`;
      stream.write(`\r${cutText(text, (stream.columns || 80) - 1)}\x1b[K`);
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
    },
  };
}
