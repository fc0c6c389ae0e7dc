/** A duration wider than its column is cut with an ellipsis, and stays in its row. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/render/tree-text.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';
import { app, closeLater, KEY } from './helpers.js';

/** The bundled clean build whose process and invocation end 523 days after they started. */
function longRun(): string {
  const records = readFileSync(path.join(ROOT, 'samples/clean-build.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
  for (const r of records) {
    if (r.record_type === 'SpanEnd' && /^dbt (process|invocation)/.test(r.span_name ?? '')) {
      r.end_time_unix_nano = String(BigInt(r.end_time_unix_nano!) + 45_213_903_753_000_000n);
    }
  }
  return writeLines(tempDir(), 'long.jsonl', records);
}

describe('durations wider than their column', () => {
  let db: Db;
  let full: string;
  beforeAll(async () => {
    db = await openModel();
    await loadPaths(db, [longRun()]);
    full = formatDuration(await db.scalar<number>('SELECT duration_ms FROM runs'));
    expect(full.length).toBeGreaterThan(8);
  });
  afterAll(() => closeLater(db));

  it('end in an ellipsis on the runs list and in the tree, each row on its line', async () => {
    const t = app(db, 140, 30);
    try {
      const runs = await t.until(/ok +build/);
      const shown = `${full.slice(0, 7)}…`;
      expect(runs.split('\n').find((l) => /ok +build/.test(l))).toContain(` ${shown} `);
      await t.press(KEY.enter);
      const tree = await t.until('dbt invocation');
      const lines = tree.split('\n');
      const proc = lines.findIndex((l) => l.includes('dbt process'));
      expect(lines[proc]).toContain(shown);
      // the next row starts with its own marker and name, not the rest of the duration
      expect(lines[proc + 1]).toMatch(/^ +▾ dbt invocation .*…/);
      expect(tree).not.toContain(full);
    } finally {
      t.unmount();
    }
  });
});
