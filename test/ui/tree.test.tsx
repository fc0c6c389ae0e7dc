import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/fixtures.js';
import { app, closeLater, haveSample, KEY, SAMPLE, sampleDb } from './helpers.js';

// names are cut in the middle on screen: the hash at the end of a test's id stays visible
const FAILED_TEST = 'returning.d299a3800c';

describe.skipIf(!haveSample)('run tree screen', () => {
  let db: Db;
  beforeAll(async () => {
    db = await sampleDb();
  });
  afterAll(() => closeLater(db));

  async function openRun(width = 140, height = 30) {
    const t = app(db, width, height);
    await t.until('FAILED', 'the runs screen');
    await t.press(KEY.enter);
    await t.until(/323 spans +\d+ shown/, 'the tree');
    await t.until('dbt invocation', 'rows');
    return t;
  }

  it('shows the tree open down to the phases, with durations and waterfall bars', async () => {
    const t = await openRun();
    const f = t.frame();
    expect(f).toMatch(/▾ dbt invocation .* error +52\.95s █+/);
    expect(f).toMatch(/▾ Phase: LOAD_PROJECT +769ms █/);
    expect(f).toContain('› '); // the cursor marker
    t.unmount();
  });

  it('moves with j/k and G/g, collapses and expands with Enter', async () => {
    const t = await openRun();
    await t.press('j', 'j');
    await t.until(/› +▾ Phase: LOAD_PROJECT/);
    await t.press(KEY.enter);
    await t.until(/› +▸ Phase: LOAD_PROJECT/, 'collapsed phase');
    expect(t.frame()).not.toContain('GenericOpItem: loading (packages)');
    await t.press(' ');
    await t.until('GenericOpItem: loading (packages)', 'expanded again');
    await t.press('G');
    await t.until(/› +Artifact: target\/manifest\.json/, 'the last row');
    await t.press('g');
    await t.until(/› +dbt process/, 'the first row');
    t.unmount();
  });

  it('searches incrementally, jumps with n, and expands to show a match', async () => {
    const t = await openRun();
    await t.press('/', ...'stg_locations');
    await t.until(/\/stg_locations▏ 1\/\d+ matches/, 'search prompt with matches');
    await t.press(KEY.enter);
    const f = await t.until(/"stg_locations": \d+ matches \(n\/N\)/);
    expect(f).toMatch(/› .*stg_locations/);
    const before = f.split('\n').find((l) => l.startsWith('›'));
    await t.press('n');
    await t.until((fr) => fr.split('\n').find((l) => l.startsWith('›')) !== before, 'the next match');
    expect(t.frame().split('\n').find((l) => l.startsWith('›'))).toMatch(/stg_locations/);
    t.unmount();
  });

  it('filters to failures and shows failing rows and the file in the detail pane', async () => {
    const t = await openRun(150, 40);
    await t.press('f');
    await t.until('filter: only failures');
    const f = await t.until(FAILED_TEST);
    expect(f).toContain('test failed (2)');
    expect(f).not.toContain('Asset parsed');
    // select the failed test and open the detail
    const lines = f.split('\n');
    const row = lines.findIndex((l) => l.includes(FAILED_TEST) && l.includes('Node processed'));
    const first = lines.findIndex((l) => l.startsWith('›'));
    await t.press(...Array(row - first).fill('j'), 'd');
    const d = await t.until('failing_rows 2', 'detail pane');
    expect(d).toContain('file models/marts/customers.yml');
    expect(d).toContain('attributes');
    await t.press(KEY.esc);
    await t.until((fr) => !fr.includes('failing_rows 2'), 'detail closed by Esc');
    expect(t.frame()).toContain('filter: only failures');
    await t.press('x');
    await t.until((fr) => !fr.includes('filter:'), 'filters cleared');
    t.unmount();
  });

  it('cycles outcome, phase and resource type filters', async () => {
    const t = await openRun();
    await t.press('o');
    await t.until('filter: outcome=error');
    await t.press('t');
    await t.until(/outcome=error type=\w+/);
    await t.press('x', 'p');
    await t.until(/filter: phase=\w+/);
    t.unmount();
  });

  it('jumps from an upstream skip to its root cause with u', async () => {
    const t = await openRun(150, 40);
    await t.press('/', ...'model.jaffle_shop.stg_locations', KEY.enter);
    await t.until(/"model.jaffle_shop.stg_locations": 4 matches/);
    // the first matches are its render-phase evaluations; n walks on to the skipped ones
    const selected = () => t.frame().split('\n').find((l) => l.startsWith('›')) ?? '';
    for (let i = 0; i < 8 && !/skipped:upstream/.test(selected()); i++) {
      const before = selected();
      await t.press('n');
      await t.until(() => selected() !== before, 'the next match');
    }
    expect(selected()).toMatch(/stg_locations.*skipped:upstream/);
    await t.press('d');
    await t.until('upstream chain', 'chain in the detail');
    await t.press('u');
    const f = await t.until(/root cause: unit_test\.jaffle_shop\.stg_locations\.test_does_location_opened_at_trunc_to_date/);
    expect(f).toMatch(/› +Node processed \(unit_test\.j.*opened_at_trunc_to_date\)/);
    // the jump puts its target mid-screen: the tree's rows are lines 1-37 of the frame
    const at = f.split('\n').findIndex((l) => l.startsWith('›'));
    expect(Math.abs(at - 19)).toBeLessThanOrEqual(1);
    t.unmount();
  });

  it('goes back to the runs screen with Esc', async () => {
    const t = await openRun();
    await t.press(KEY.esc);
    await t.until(/runs \(1\)/);
    t.unmount();
  });

  it('adapts to a narrow terminal: no waterfall, detail below the tree', async () => {
    const t = await openRun(80, 30);
    const f = t.frame();
    expect(f).not.toMatch(/█/);
    for (const l of f.split('\n')) expect(l.length).toBeLessThanOrEqual(80);
    await t.press('j', 'd');
    await t.until('kind invocation');
    t.unmount();
  });
});

describe.skipIf(!haveSample)('run tree screen of a file whose run never ended', () => {
  let db: Db;
  beforeAll(async () => {
    // the first 150 lines of a run: the engine stopped writing with spans open
    const cut = path.join(tempDir(), 'cut.jsonl');
    writeFileSync(cut, readFileSync(SAMPLE, 'utf8').split('\n').slice(0, 150).join('\n') + '\n');
    db = await sampleDb([cut]);
  });
  afterAll(() => closeLater(db));

  it('names the filter of spans not ended as the header does: a run read from a file is not running', async () => {
    const t = app(db, 140, 30);
    await t.until('not ended', 'the runs screen');
    await t.press(KEY.enter);
    await t.until(/\d+ not ended/, 'the header counts the spans not ended');
    // error, failed, warned, skipped, success, canceled, then the spans not ended
    await t.press(...Array<string>(7).fill('o'));
    const f = await t.until('filter: outcome=not ended');
    expect(f).not.toContain('running');
    t.unmount();
  });
});
