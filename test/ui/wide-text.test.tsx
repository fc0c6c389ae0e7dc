/** Wide (CJK) text takes two columns a character: rows stay one line and columns stay under their headers. */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import stringWidth from 'string-width';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { app, closeLater, KEY } from './helpers.js';

const SAMPLES = path.resolve(__dirname, '../../samples');
const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const COMMAND = 'ビルドビルド';
const MODEL = 'model.acme.売上データ契約テーブル集計ビュー';

/** failed-build with a Japanese command and model name, beside clean-build as it is. */
function wideInput(): string[] {
  const text = readFileSync(path.join(SAMPLES, 'failed-build.jsonl'), 'utf8')
    .replaceAll('"command":"build"', `"command":"${COMMAND}"`)
    .replaceAll('model.acme.stg_employees', MODEL);
  return [writeLines(dir, 'wide.jsonl', text.split('\n').filter(Boolean)), path.join(SAMPLES, 'clean-build.jsonl')];
}

/** The display column where `part` ends in `line`. */
const endColumn = (line: string, part: RegExp) => {
  const m = part.exec(line);
  return m ? stringWidth(line.slice(0, m.index + m[0].length)) : -1;
};

describe('wide characters in the explorer', () => {
  it('keep each run on one line with its numbers under their headers, and tree rows in their width', async () => {
    const db = await openModel();
    await loadPaths(db, wideInput());
    const width = 100;
    const t = app(db, width, 30);
    try {
      const runs = await t.until(/FAILED +ビルド/);
      const lines = runs.split('\n');
      for (const l of lines) expect(stringWidth(l), l).toBeLessThanOrEqual(width);
      const header = lines.find((l) => /status +command +started/.test(l))!;
      const rows = lines.filter((l) => /^ +(FAILED|ok) /.test(l));
      expect(rows.length).toBe(2);
      // the duration is right-aligned under its header, in the wide row as in the other
      for (const r of rows) expect(endColumn(r, /[\d.]+(ms|s)\b/), r).toBe(endColumn(header, /duration/));
      const wideRow = rows.find((r) => r.includes('ビルド'))!;
      expect(stringWidth(wideRow)).toBe(stringWidth(rows.find((r) => r !== wideRow)!));

      // both runs started at the same instant: the list orders them by trace id, so find the wide one
      if (!rows[0]!.includes('ビルド')) await t.press(KEY.down);
      await t.press(KEY.enter);
      await t.until('dbt invocation');
      await t.press('/', ...'売上', KEY.enter);
      const tree = await t.until(/"売上": \d+ matches/);
      const treeLines = tree.split('\n');
      for (const l of treeLines) expect(stringWidth(l), l).toBeLessThanOrEqual(width);
      // the selected match is one row: its name, then its outcome and duration on the same line
      const selected = treeLines.find((l) => l.startsWith('›'))!;
      expect(selected).toMatch(/ビュー\).*(success|error|skipped).* [\d.]+(µs|ms|s)/);
      expect(treeLines.length).toBe(runs.split('\n').length);
    } finally {
      t.unmount();
      await closeLater(db);
    }
  });

  it('keeps the outcome column of a row whose unique_id holds zero-width characters under the others', async () => {
    const zw = 'model.acme.stg\u200b\u200b\u200b_employees';
    const text = readFileSync(path.join(SAMPLES, 'failed-build.jsonl'), 'utf8').replaceAll('model.acme.stg_employees', zw);
    const db = await openModel();
    await loadPaths(db, [writeLines(dir, 'zero-width.jsonl', text.split('\n').filter(Boolean))]);
    const t = app(db, 120, 30);
    try {
      await t.until('FAILED');
      await t.press(KEY.enter);
      await t.until('dbt invocation');
      await t.press('/', ...'stg', KEY.enter);
      const tree = await t.until(/"stg": \d+ matches/);
      const rows = tree.split('\n').filter((l) => /Node evaluated \(model\.ac/.test(l));
      // the row of the id with zero-width characters: before the fix they were in it as they are, after it shown
      const zwRow = rows.find((l) => l.includes('\u200b') || l.includes('\\u200b'))!;
      expect(zwRow).toBeDefined();
      const other = rows.find((l) => l !== zwRow)!;
      // where the outcome starts, in the columns the terminal draws (ink gives each character a cell of its own)
      const at = (l: string) => stringWidth(l.slice(0, l.search(/ (success|error|skipped)/)));
      expect(at(zwRow)).toBe(at(other));
      // the hidden characters are shown, not dropped: an id that holds them is not mistaken for one that does not
      expect(zwRow).toContain('\\u200b');
    } finally {
      t.unmount();
      await closeLater(db);
    }
  });
});
