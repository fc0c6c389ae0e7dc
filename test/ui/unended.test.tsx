/**
 * Runs that never ended (a file cut short): a failed one says FAILED; one that has not failed is
 * `running` only while data may still arrive (following, receiving), else `not ended`.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { App } from '../../src/ui/App.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { closeLater, KEY, mount } from './helpers.js';

const SAMPLES = path.resolve(__dirname, '../../samples');
const dir = tempDir();
const head = (name: string, n: number) => writeLines(dir, name, readFileSync(path.join(SAMPLES, name), 'utf8').split('\n').filter(Boolean).slice(0, n));

describe('runs that never ended', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openModel();
    // failed-build cut after its first error; clean-build cut before anything failed
    await loadPaths(db, [head('failed-build.jsonl', 300), head('clean-build.jsonl', 100)]);
    const runs = await db.all<{ failed: boolean; ended: boolean }>('SELECT failed, ended FROM runs ORDER BY failed DESC');
    expect(runs).toEqual([{ failed: true, ended: false }, { failed: false, ended: false }]);
  });
  afterAll(async () => {
    await closeLater(db);
    rmSync(dir, { recursive: true, force: true });
  });

  const render = (live: boolean) => mount(<App db={db} width={140} height={30} theme={{ color: false }} live={live} />);

  it('in a file read once: FAILED, or not ended, in the runs list and the tree', async () => {
    const t = render(false);
    try {
      const runs = await t.until(/FAILED +build/);
      expect(runs).toMatch(/not ended +build/);
      expect(runs).not.toContain('running');
      // the run that has not failed
      const rows = runs.split('\n');
      const at = rows.findIndex((l) => /not ended +build/.test(l)) - rows.findIndex((l) => /FAILED +build/.test(l));
      await t.press(...Array(Math.max(0, at)).fill('j'), KEY.enter);
      await t.until(/\d+ spans +\d+ shown +\d+ not ended/, 'the tree of the run');
      await t.until(/dbt invocation .*not ended/, 'the invocation not ended');
      expect(t.frame()).not.toContain('running');
    } finally {
      t.unmount();
    }
  });

  it('while data may still arrive: FAILED, or running', async () => {
    const t = render(true);
    try {
      const runs = await t.until(/FAILED +build/);
      expect(runs).toMatch(/running +build/);
      expect(runs).not.toContain('not ended');
    } finally {
      t.unmount();
    }
  });
});
