/**
 * A progress bar on stderr for work that can take more than a second. Drawn only on a TTY without
 * CI set; otherwise silent (results stay clean on stdout, logs stay plain).
 */
export interface Progress {
  update(fraction: number, label?: string): void;
  done(): void;
}

export function progressEnabled(stream: NodeJS.WriteStream = process.stderr): boolean {
  return Boolean(stream.isTTY) && !process.env.CI && process.env.TERM !== 'dumb';
}

export function createProgress(title: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!progressEnabled(stream)) return { update: () => undefined, done: () => undefined };
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
      stream.write(`\r${text.slice(0, (stream.columns || 80) - 1)}\x1b[K`);
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
    },
  };
}
