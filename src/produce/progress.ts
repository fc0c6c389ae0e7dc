/** A one-line progress bar on stderr, drawn where every progress bar is (progressEnabled: a TTY, no CI, TERM not dumb). */
import { progressEnabled } from '../render/progress.js';

export interface Progress {
  update(done: number, total: number): void;
  done(): void;
}

export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!progressEnabled(stream)) return { update() {}, done() {} };
  const t0 = Date.now();
  let last = 0;
  let shown = false;
  return {
    update(done, total) {
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      const width = 30;
      const frac = total > 0 ? Math.min(1, done / total) : 0;
      const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, '.');
      const secs = ((now - t0) / 1000).toFixed(1);
      stream.write(`\r${label} [${bar}] ${(frac * 100).toFixed(0).padStart(3)}% ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${secs}s`);
      shown = true;
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
    },
  };
}
