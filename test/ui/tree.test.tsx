import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { app, haveSample, KEY, sampleDb } from './helpers.js';

describe.skipIf(!haveSample)('tree screen', () => {
  let db: Db;
  beforeAll(async () => {
    db = await sampleDb();
  });
  afterAll(() => db?.close());

  it('opens a run and moves the cursor', async () => {
    const t = app(db);
    await t.until('FAILED');
    await t.press(KEY.enter);
    await t.until('323 spans');
    await t.press('j', 'j');
    const f = await t.until(/› +▾ Phase: LOAD_PROJECT/);
    expect(f).toContain('Phase: PARSE');
    t.unmount();
  });
});
