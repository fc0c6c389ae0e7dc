/** The detail pane of a span whose attribute nests deeper than the call stack reaches (a load reads it). */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import { interfaceStyleRun, tempDir, writeLines } from '../helpers/fixtures.js';
import { app, closeLater, KEY } from './helpers.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LEVELS = 10_000;

describe('a deeply nested attribute in the explorer', () => {
  for (const [what, deep] of [
    ['object', '{"a":'.repeat(LEVELS) + '1' + '}'.repeat(LEVELS)],
    ['list', '['.repeat(LEVELS) + '1' + ']'.repeat(LEVELS)],
  ]) {
    it(`the detail pane names a nested ${what} it cannot show, and the other attributes`, async () => {
      const lines = interfaceStyleRun().map((r) => JSON.stringify(r).replace('"raw_command":', `"aaa_deep":${deep},"raw_command":`));
      const db = await openModel();
      await loadPaths(db, [writeLines(dir, `deep-${what}.jsonl`, lines)]);
      const t = app(db, 140, 40);
      try {
        await t.until('build');
        await t.press(KEY.enter);
        await t.until('Phase: Run');
        await t.press('d');
        const d = await t.until('raw_command', 'detail pane');
        expect(d).toContain('aaa_deep: (nested deeper than 1000 levels)');
      } finally {
        t.unmount();
        await closeLater(db);
      }
    });
  }
});
