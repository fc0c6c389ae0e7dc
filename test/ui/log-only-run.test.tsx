/** A run of log records only opens on its log records; its detail pane says what it is, never "loading". */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { app, closeLater, KEY } from './helpers.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TRACE = 'feedface00000000feedface00000000';

/** Three log records of failed-build, with a trace id of their own (no span of it). */
function logsOnly(): string {
  const lines = readFileSync(path.resolve(__dirname, '../../samples/failed-build.jsonl'), 'utf8').split('\n').filter(Boolean);
  const logs = lines.filter((l) => l.startsWith('{"record_type":"LogRecord"')).slice(0, 3);
  return writeLines(dir, 'logs-only.jsonl', logs.map((l) => l.replace(/"trace_id":"[0-9a-f]+"/, `"trace_id":"${TRACE}"`)));
}

describe('a run of log records only', () => {
  it('shows its log records and how to query them, and d says it has no spans', async () => {
    const db = await openModel();
    await loadPaths(db, [logsOnly()]);
    const t = app(db, 140, 30);
    try {
      await t.until('not ended');
      await t.press(KEY.enter);
      const f = await t.until(/log records only/);
      expect(f).toContain('no spans: this run has 3 log records only');
      expect(f).toMatch(/INFO/);
      const hint = /runlens query INPUT --sql "(.+)"/.exec(f);
      expect(hint, 'the hint names the query that lists every log record').not.toBeNull();
      const listed = await db.all<{ body: string | null; event_type: string }>(hint![1]);
      const shown = [...f.matchAll(/^\+\S+ \w+ (\w+)$/gm)].map((m) => m[1]);
      expect(shown).toHaveLength(3);
      expect(listed.map((r) => r.body || r.event_type.split('.').at(-1)), 'the query lists them in the order shown').toEqual(shown);
      await t.press('d');
      const d = await t.until((fr) => !fr.includes('loading') && /no spans/.test(fr) && /┌/.test(fr), 'the detail pane');
      expect(d).not.toContain('loading');
      expect(d).toMatch(/│.*3 log records only/);
    } finally {
      t.unmount();
      await closeLater(db);
    }
  });
});
