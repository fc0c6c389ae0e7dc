/** The explorer shows telemetry text escaped: a name or message cannot drive the terminal. */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import { interfaceStyleRun, tempDir, writeLines } from '../helpers/fixtures.js';
import { app, closeLater, KEY } from './helpers.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const escaped = (s: string) => s.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const HOSTILE = '\u001b[2J\u001b]0;all green\u0007\rFORGED\nrow';

describe('hostile text in the explorer', () => {
  it('the runs screen and the tree show escape sequences and line breaks as text', async () => {
    const records = interfaceStyleRun().map((r) => JSON.parse(JSON.stringify(r)
      .replaceAll('"engine build"', `"engine build${escaped(HOSTILE)}"`)
      .replaceAll('Node(model.project.orders)', `Node(model.project.orders${escaped(HOSTILE)})`)) as object);
    const db = await openModel();
    await loadPaths(db, [writeLines(dir, 'hostile.jsonl', records)]);
    const t = app(db);
    try {
      const runs = await t.until('build');
      await t.press(KEY.enter);
      const tree = await t.until('model.project.orders');
      for (const f of [runs, tree]) {
        expect(f).not.toMatch(/[\u001b\u0007\r]/);
      }
      expect(tree).toContain('Node(model.project.orders\\x1b[2');
      expect(tree).toContain('\\x0dFORGED ⏎ row)');
    } finally {
      t.unmount();
      await closeLater(db);
    }
  });
});
