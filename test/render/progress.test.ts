/** The one progress bar is drawn only in a terminal: stdout and stderr TTYs, no CI, a TERM that draws. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProgress } from '../../src/render/progress.js';

function fakeTty(): { stream: NodeJS.WriteStream; written: string[] } {
  const written: string[] = [];
  const stream = { isTTY: true, columns: 80, write: (s: string) => (written.push(s), true) } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

/** A bar updated half-way a second after it started (a bar shows only for work past half a second). */
function drawn(stdout: { isTTY?: boolean }): string {
  const { stream, written } = fakeTty();
  const bar = createProgress('generate', { stream, stdout });
  vi.advanceTimersByTime(1000);
  bar.update(0.5, '1/2 nodes');
  bar.done();
  return written.join('');
}

describe('progress bar', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubEnv('CI', '');
    vi.stubEnv('TERM', 'xterm-256color');
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
  });

  it('is drawn in a terminal, and cleared when done', () => {
    const text = drawn({ isTTY: true });
    expect(text).toContain('generate [');
    expect(text).toContain(' 50% 1/2 nodes');
    expect(text.endsWith('\r\x1b[K')).toBe(true);
  });

  it.each([
    ['TERM=dumb', { TERM: 'dumb' }],
    ['CI', { CI: 'true' }],
  ])('is not drawn with %s', (_what, env) => {
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    expect(drawn({ isTTY: true })).toBe('');
  });

  it('is not drawn when stdout is not a terminal (a pipe, a file), though stderr is', () => {
    expect(drawn({ isTTY: false })).toBe('');
    expect(drawn({})).toBe('');
  });
});
