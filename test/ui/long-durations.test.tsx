/** A duration wider than its column is cut with an ellipsis, and stays in its row. */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/render/tree-text.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { samplesNote, SHARED_SAMPLES } from '../helpers/samples.js';
import { app, closeLater, KEY } from './helpers.js';

const CORPUS = path.join(SHARED_SAMPLES, 'legacy-corpus');
// an older engine's run whose recorded start and end are about 523 days apart
const RUN_RESULTS = path.join(CORPUS, 'OpenLineage__OpenLineage__integration_common_tests_dbt_build_target_run_results.json');
const corpus = samplesNote(CORPUS);

describe.skipIf(corpus.missing)(corpus.title('durations wider than their column'), () => {
  let db: Db;
  let full: string;
  beforeAll(async () => {
    db = await openModel();
    await loadPaths(db, [RUN_RESULTS]);
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
