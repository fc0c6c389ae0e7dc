import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import { buildReportData, HISTORY_ROWS } from '../../src/analyze/report/data.js';
import { renderReportHtml } from '../../src/analyze/report/html.js';
import { generate } from '../../src/produce/generate/index.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';

/** The paragraph after a report section's heading, or '' when the table follows it at once. */
function noteAfter(html: string, heading: string): string {
  const at = html.indexOf(`<h3>${heading}</h3>\n`);
  expect(at).toBeGreaterThan(-1);
  const rest = html.slice(at + heading.length + 10);
  return rest.startsWith('<p class="hint">') ? rest.slice(0, rest.indexOf('</p>')) : '';
}

describe('the report says when it lists part of a history table', () => {
  const dir = tempDir('runlens-report-lists-');
  let db: Db;
  beforeAll(async () => {
    const out = path.join(dir, 'g.jsonl');
    await generate({ output: out, runs: 12, nodes: 40, seed: 3, failRate: 0.15 });
    db = await openModel();
    await loadPaths(db, [out]);
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives how many of how many rows each lists, and nothing when it lists them all', async () => {
    const data = await buildReportData(db);
    const html = renderReportHtml(data);
    const params = { command: data.run.command!, until: data.run.trace_id };
    const total = async (q: string) => (await runSavedQuery(db, findSavedQuery(q), params)).rows.length;
    const sections: [string, string, string][] = [['Node trends', 'node-trends', 'nodes'], ['Flaky tests', 'flaky-tests', 'tests'], ['Failure history', 'failure-history', 'nodes']];
    let cut = 0;
    for (const [heading, query, noun] of sections) {
      const n = await total(query);
      const note = noteAfter(html, heading);
      if (n > HISTORY_ROWS) {
        cut++;
        expect(note).toContain(`the first ${HISTORY_ROWS} of ${n} ${noun}`);
      } else expect(note).toBe('');
    }
    // the data cuts some and not all
    expect(cut).toBeGreaterThan(0);
    expect(cut).toBeLessThan(3);
  });
});
