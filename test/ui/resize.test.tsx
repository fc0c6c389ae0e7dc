/** After the terminal shrinks, the selected row of every list is still on screen (and is what Enter opens). */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { render } from 'ink-testing-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import { generate } from '../../src/produce/generate/index.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { App } from '../../src/ui/App.js';
import { tempDir } from '../helpers/fixtures.js';
import { closeLater, KEY, waitFor } from './helpers.js';

const dir = tempDir();

describe('a resize keeps the selection on screen', () => {
  let db: Db;
  beforeAll(async () => {
    const file = path.join(dir, 'many.jsonl');
    await generate({ output: file, runs: 120, nodes: 6, seed: 3, failRate: 0.2, detail: false });
    db = await openModel();
    await loadPaths(db, [file]);
  });
  afterAll(async () => {
    await closeLater(db);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The explorer at one size, then another, as a terminal resize gives it. */
  function mounted(width: number, height: number) {
    const el = (w: number, h: number) => <App db={db} width={w} height={h} theme={{ color: false }} />;
    const r = render(el(width, height));
    const frame = () => r.lastFrame() ?? '';
    return {
      frame,
      until: (test: RegExp | ((f: string) => boolean), what: string) => waitFor(frame, typeof test === 'function' ? test : (f) => test.test(f), what),
      press: async (...keys: string[]) => {
        for (const k of keys) {
          r.stdin.write(k);
          await new Promise((res) => setTimeout(res, 15));
        }
      },
      resize: (w: number, h: number) => r.rerender(el(w, h)),
      unmount: () => r.unmount(),
    };
  }

  it('on the runs list and in query results', async () => {
    // 140 columns still show the trace column of the runs table
    const t = mounted(160, 50);
    try {
      await t.until(/runs \(120\)/, 'the runs');
      await t.press('G');
      const selectedTrace = () => /^trace ([0-9a-f]{32})/m.exec(t.frame())?.[1];
      const oldest = await db.scalar<string>('SELECT trace_id FROM runs ORDER BY start_ns, trace_id LIMIT 1');
      await t.until(() => selectedTrace() === oldest, 'the last run selected');
      t.resize(140, 24);
      await t.until((f) => f.split('\n').length === 23, 'the smaller frame');
      const rows = t.frame().split('\n').filter((l) => /^ +(FAILED|ok) /.test(l));
      expect(rows.some((l) => l.includes(oldest))).toBe(true);
      await t.press(KEY.enter);
      await t.until(new RegExp(`run ${oldest.slice(0, 12)} `), 'the selected run opened');

      // query results
      t.resize(160, 50);
      await t.press(KEY.esc, ':', ...'slowest-nodes limit=100', KEY.enter);
      await t.until(/\d+ rows  row 1 /, 'the results');
      await t.press('G');
      const table = await runSavedQuery(db, findSavedQuery('slowest-nodes'), { limit: '100' });
      const last = table.rows[table.rows.length - 1]!;
      await t.until(new RegExp(`row ${table.rows.length} `), 'the last row selected');
      t.resize(140, 24);
      await t.until((f) => f.split('\n').length === 23, 'the smaller frame');
      expect(t.frame()).toMatch(new RegExp(`${String(last.scope)} +${String(last.rank)} +${String(last.unique_id)}`));
    } finally {
      t.unmount();
    }
  });
});
