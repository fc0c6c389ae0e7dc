/**
 * A run failed only by a source's freshness (the older engine's sources.json) shows that failure
 * wherever outcomes are shown: `tree` (text and JSON), the explorer's runs list, tree rows, the
 * failures filter and the outcome filter.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTree, buildTreeText } from '../../src/analyze/tree.js';
import { renderTreeText, treeJson } from '../../src/render/tree-text.js';
import type { Db } from '../../src/store/db.js';
import { app, closeLater, KEY, sampleDb } from './helpers.js';

const OLDER = path.resolve(__dirname, '../../samples/older-engine');
// the sources.json run: orders passed, payments warned, refunds failed
const TRACE = '7a2d3c4b5e6f40718b9c0d1e2f3a4b5c';

describe('source freshness outcomes', () => {
  let db: Db;
  beforeAll(async () => {
    db = await sampleDb([OLDER]);
  });
  afterAll(() => closeLater(db));

  it('are facts of the tree text and fields of the JSON tree', async () => {
    const text = renderTreeText(await buildTreeText(db, TRACE));
    expect(text).toMatch(/Node processed \(source\.shop\.raw\.refunds\)  \[success, freshness failed\]/);
    expect(text).toMatch(/Node evaluated \(source\.shop\.raw\.refunds\)  \[success, freshness failed, -> processed/);
    expect(text).toMatch(/Node processed \(source\.shop\.raw\.payments\)  \[success, freshness warned\]/);
    expect(text).toMatch(/Node processed \(source\.shop\.raw\.orders\)  \[success\]/);
    const json = JSON.stringify(treeJson(await buildTree(db, TRACE)));
    expect(json).toContain('"freshness_outcome":"failed"');
    expect(json).toContain('"freshness_outcome":"warned"');
  });

  it('count a failed freshness as an error in the runs list and show it in the tree, the failures filter and o', async () => {
    const t = app(db, 140, 30);
    try {
      const runs = await t.until(/FAILED +freshness/);
      // nodes 3, ok 2, error 1: the gate counts the stale source under its rule `error`
      expect(runs).toMatch(/FAILED +freshness +2026-03-02 08:00:00 +3\.40s +3 +2 +1 +0 /);
      await t.press(KEY.enter);
      await t.until('dbt invocation');
      await t.press('E');
      const tree = await t.until(/Node processed \(source\.shop\.raw\.refunds\)/);
      expect(tree).toMatch(/Node processed \(source\.shop\.raw\.refunds\) +success freshness fail/);
      expect(tree).toMatch(/Node processed \(source\.shop\.raw\.payments\) +success freshness warn/);
      await t.press('f');
      const failures = await t.until((f) => /filter: only failures/.test(f) && !/ 13 shown/.test(f), 'the failures filter');
      expect(failures).not.toContain('no span matches');
      expect(failures).toMatch(/Node processed \(source\.shop\.raw\.refunds\)/);
      expect(failures).not.toMatch(/source\.shop\.raw\.orders/);
      await t.press('x', 'o');
      const errors = await t.until((f) => /filter: outcome=error/.test(f) && !/ 13 shown/.test(f), 'the error filter');
      expect(errors).toMatch(/Node processed \(source\.shop\.raw\.refunds\)/);
      expect(errors).not.toMatch(/source\.shop\.raw\.payments/);
    } finally {
      t.unmount();
    }
  });
});
