/** generate's progress bar is drawn where every progress bar is (render/progress.ts decides): a TTY, no CI, TERM not dumb. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { progressBar } from '../../src/produce/progress.js';

function fakeTty(): { stream: NodeJS.WriteStream; written: string[] } {
  const written: string[] = [];
  const stream = { isTTY: true, columns: 80, write: (s: string) => (written.push(s), true) } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

describe('generate progress bar', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('is drawn on a terminal', () => {
    vi.stubEnv('CI', '');
    vi.stubEnv('TERM', 'xterm-256color');
    const { stream, written } = fakeTty();
    progressBar('generate', stream).update(1, 2);
    expect(written.join('')).toContain('generate [');
  });

  it.each([
    ['TERM=dumb', { TERM: 'dumb' }],
    ['CI', { CI: 'true', TERM: 'xterm-256color' }],
  ])('is not drawn with %s', (_what, env) => {
    vi.stubEnv('CI', '');
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    const { stream, written } = fakeTty();
    const bar = progressBar('generate', stream);
    bar.update(1, 2);
    bar.done();
    expect(written).toEqual([]);
  });
});
