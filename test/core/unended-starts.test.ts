/**
 * The records view fills the normalized columns on the record that defines a span: its SpanEnd, or
 * the SpanStart of a span that never ended (docs/model.md). A span that ends in a later load (a
 * followed file, a run loaded in parts) is defined by its SpanEnd from then on, as if both had come
 * in one load.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import type { Db } from '../../src/store/db.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

const CLEAN = path.join(ROOT, 'samples/clean-build.jsonl');
const NORMALIZED = 'unique_id, phase, node_outcome, skip_reason, upstream_unique_id, test_outcome, failing_rows, resource_type, name, relative_path, materialization, rows_affected, in_selection, attr_duration_ms';

const records = (db: Db) =>
  db.all(`SELECT f.path, r.line, r.record_type, r.span_id, ${NORMALIZED} FROM records r JOIN files f USING (file_id) ORDER BY f.path, r.line`);

/** SpanStarts with a normalized column set, though their span has a SpanEnd in the model. */
const filledEndedStarts = (db: Db) =>
  db.scalar<number>(`SELECT count(*)::INTEGER FROM records s WHERE record_type = 'SpanStart'
    AND coalesce(${NORMALIZED.split(', ').map((c) => `${c}::VARCHAR`).join(', ')}) IS NOT NULL
    AND EXISTS (SELECT 1 FROM records e WHERE e.record_type = 'SpanEnd' AND e.trace_id = s.trace_id AND e.span_id = s.span_id)`);

describe('the normalized columns of a SpanStart', () => {
  it('are emptied once its span ends in a later load, as in one load of the same files', async () => {
    const dir = tempDir();
    // the engine's first 60 lines: the run, its phases and nodes started, few ended
    const cut = writeLines(dir, 'cut.jsonl', readFileSync(CLEAN, 'utf8').split('\n').slice(0, 60));
    const inParts = await openModel();
    const together = await openModel();
    try {
      await loadPaths(inParts, [cut]);
      expect(await inParts.scalar<number>(`SELECT count(*)::INTEGER FROM records WHERE record_type = 'SpanStart' AND unique_id IS NOT NULL`))
        .toBeGreaterThan(0);
      await loadPaths(inParts, [CLEAN]);
      await loadPaths(together, [cut, CLEAN]);
      expect(await filledEndedStarts(together)).toBe(0);
      expect(await filledEndedStarts(inParts)).toBe(0);
      expect(await records(inParts)).toEqual(await records(together));
    } finally {
      inParts.close();
      together.close();
    }
  });
});
