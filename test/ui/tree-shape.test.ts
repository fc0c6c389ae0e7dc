/** The explorer's span tree (tree-index.ts) is the tree `runlens tree` prints, orphans and parent cycles included. */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTreeShape, type TreeRow } from '../../src/analyze/explore/tree-index.js';
import { facts } from '../../src/ui/components/TreeRowLine.js';
import { buildTreeText, traceIds } from '../../src/analyze/tree.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';

const FAILED_BUILD = path.resolve(__dirname, '../../samples/failed-build.jsonl');
const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The sample without its RUN phase span: the evaluations under it (and their queries) become orphans. */
function withOrphans(): string {
  const lines = readFileSync(FAILED_BUILD, 'utf8').split('\n').filter(Boolean);
  return writeLines(dir, 'orphans.jsonl', lines.filter((l) => !(JSON.parse(l) as { span_name?: string }).span_name?.startsWith('Phase: RUN')));
}

/** The sample with a phase made the child of one of its own evaluations: a parent cycle that no root reaches. */
function withCycle(): string {
  const records = readFileSync(FAILED_BUILD, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { span_id: string; span_name?: string; parent_span_id: string | null });
  const phase = records.find((r) => r.span_name?.startsWith('Phase: RUN'))!.span_id;
  const child = records.find((r) => r.parent_span_id === phase)!.span_id;
  return writeLines(dir, 'cycle.jsonl', records.map((r) => (r.span_id === phase ? { ...r, parent_span_id: child } : r)));
}

describe('the explorer tree', () => {
  const inputs = [['a whole run', () => FAILED_BUILD], ['a run with orphan spans', withOrphans], ['a run with a parent cycle', withCycle]] as const;
  for (const [what, file] of inputs) {
    it(`of ${what} has the shape and order of \`runlens tree\``, async () => {
      const db = await openModel();
      await loadPaths(db, [file()]);
      const [trace] = await traceIds(db);
      const lines = [...(await buildTreeText(db, trace!)).lines];
      const shape = await buildTreeShape(db, trace!);
      const rows = await db.all<{ name: string; depth: number; orphan: boolean; cycle: boolean }>(`SELECT name, depth, orphan, cycle FROM ${shape.table} ORDER BY pos`);
      expect(rows.length).toBe(lines.length);
      if (what === 'a run with orphan spans') expect(rows.filter((r) => r.orphan).length).toBeGreaterThan(0);
      expect(rows.filter((r) => r.cycle).length).toBe(what === 'a run with a parent cycle' ? 2 : 0);
      for (const [i, [line]] of lines.entries()) {
        // `tree` indents with three columns a level (`├─ `, `│  `, `   `)
        const prefix = /^(?:[│├└ ][─ ] )*/.exec(line)![0];
        expect({ depth: rows[i]!.depth, line: line.slice(prefix.length).startsWith(rows[i]!.name), cycle: rows[i]!.cycle }, `line ${i + 1} of tree: ${line}; explorer: ${rows[i]!.name}`).toEqual({
          depth: prefix.length / 3,
          line: true,
          cycle: line.includes('CYCLE ('),
        });
      }
      db.close();
    });
  }
});

describe("the explorer row's facts", () => {
  it('say a span is on a parent cycle, and that it ends before it starts', () => {
    const row = { ended: true, orphan: false, cycle: true, dur_ms: -5000, status_code: 1, node_outcome: null, test_outcome: null } as unknown as TreeRow;
    expect(facts(row, false)).toBe('cycle ends before it starts');
    expect(facts({ ...row, cycle: false, dur_ms: 0.0004 }, false)).toBe('');
  });
});
