/** A saved query run from the palette while files still load says its answer is partial, and is run again when loading ends. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import { App, type LoaderHooks } from '../../src/ui/App.js';
import { closeLater, KEY, mount } from './helpers.js';

const SAMPLES = path.resolve(__dirname, '../../samples');

describe('a palette query while loading', () => {
  it('is marked partial with what is still loading, then re-run with every file loaded', async () => {
    const db = await openModel();
    // the first file loads, then the second waits until the test lets it go on
    let goOn!: () => void;
    const held = new Promise<void>((r) => (goOn = r));
    let firstLoaded!: () => void;
    const first = new Promise<void>((r) => (firstLoaded = r));
    const loader = async (h: LoaderHooks) => {
      await loadPaths(db, [path.join(SAMPLES, 'clean-build.jsonl')]);
      h.progress(0.5, 'failed-build.jsonl', { done: 1, count: 2 });
      firstLoaded();
      await held;
      await loadPaths(db, [path.join(SAMPLES, 'failed-build.jsonl')]);
      h.loaded();
    };
    const t = mount(<App db={db} loader={loader} width={140} height={30} theme={{ color: false }} />);
    try {
      await first;
      await t.until(/loading/);
      await t.press(':');
      await t.until('failed-tests');
      await t.press(...'failed-tests', KEY.enter);
      const partial = await t.until(/:failed-tests  /, 'the results');
      expect(partial).toContain('partial: loading 1 of 2 files; runs again when loading ends');
      goOn();
      const done = await t.until(/1 row  row 1/, 'the results re-run');
      expect(done).not.toContain('partial');
      expect(done).toMatch(/test\.acme\./);
    } finally {
      goOn();
      t.unmount();
      await closeLater(db);
    }
  });
});
