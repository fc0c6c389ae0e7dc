/** A search finds every match, however many: the count is the true one and N reaches the last. */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/produce/generate/index.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';
import { app, closeLater, KEY } from './helpers.js';

const dir = tempDir();

describe('search in a large run', () => {
  let db: Db;
  beforeAll(async () => {
    const file = path.join(dir, 'large.jsonl');
    await generate({ output: file, nodes: 3000, seed: 5, detail: false });
    db = await openModel();
    await loadPaths(db, [file]);
  }, 60_000);
  afterAll(async () => {
    await closeLater(db);
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts every match and moves to the last one', async () => {
    const matches = await db.scalar<number>(
      `SELECT count(*)::INTEGER FROM spans WHERE contains(lower(coalesce(unique_id, '')), 'node') OR contains(lower(span_name), 'node')`,
    );
    expect(matches).toBeGreaterThan(10_000);
    const t = app(db, 160, 30);
    try {
      await t.until(/runs \(1\)/);
      await t.press(KEY.enter);
      await t.until('dbt invocation');
      await t.press('/', ...'node');
      await t.until(`1/${matches} matches`, 'the first match');
      // up from the first match goes round to the last
      await t.press(KEY.up);
      await t.until(`${matches}/${matches} matches`, 'the last match');
      await t.press(KEY.enter);
      await t.until(`"node": ${matches} matches (n/N)`, 'the count kept');
    } finally {
      t.unmount();
    }
  });
});
