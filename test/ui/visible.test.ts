import { describe, expect, it } from 'vitest';
import { KINDS, shapeLinks, type TreeShape } from '../../src/analyze/explore/tree-index.js';
import { defaultOpen, indexOfPosition, keptMask, nextPosition, revealPosition, visiblePositions } from '../../src/analyze/explore/visible.js';

/** invocation > phase > (node > query, node), phase > node */
function shape(): TreeShape {
  const depth = Uint8Array.from([0, 1, 2, 3, 2, 1, 2]);
  const kinds = ['invocation', 'phase', 'node_evaluated', 'query', 'node_evaluated', 'phase', 'node_evaluated'] as const;
  const kind = Uint8Array.from(kinds.map((k) => KINDS.indexOf(k)));
  const { parent, size } = shapeLinks(depth);
  return { table: 't', traceId: 'x', count: 7, depth, kind, parent, size, spanMs: 1, running: 0 };
}

describe('visible rows', () => {
  it('derives parents and subtree sizes from preorder depths', () => {
    const s = shape();
    expect([...s.parent]).toEqual([-1, 0, 1, 2, 1, 0, 5]);
    expect([...s.size]).toEqual([6, 3, 1, 0, 0, 1, 0]);
  });

  it('opens down to the phases by default and skips closed subtrees', () => {
    const s = shape();
    const open = defaultOpen(s);
    expect([...visiblePositions(s, open)]).toEqual([0, 1, 2, 4, 5, 6]);
    open[2] = 1;
    expect([...visiblePositions(s, open)]).toEqual([0, 1, 2, 3, 4, 5, 6]);
    open[1] = 0;
    expect([...visiblePositions(s, open)]).toEqual([0, 1, 5, 6]);
  });

  it('shows filter matches with their ancestors, whatever is collapsed', () => {
    const s = shape();
    const open = new Uint8Array(7);
    const kept = keptMask(s, [3, 2]);
    expect([...visiblePositions(s, open, kept)]).toEqual([0, 1, 2, 3]);
    expect([...kept.subarray(0, 4)]).toEqual([2, 2, 2, 1]); // ancestors of a match are open
  });

  it('reveals a hidden position by opening its ancestors', () => {
    const s = shape();
    const open = defaultOpen(s);
    expect(revealPosition(s, open, 3)).toBe(true);
    const v = visiblePositions(s, open);
    expect(indexOfPosition(v, 3)).toBe(3);
    expect(indexOfPosition(v, 99)).toBe(-1);
  });

  it('steps to the next and previous match, round at the ends', () => {
    const m = Int32Array.from([2, 5, 9]);
    expect([0, 2, 3, 5, 9, 12].map((p) => nextPosition(m, p, 1))).toEqual([2, 5, 5, 9, 2, 2]);
    expect([0, 2, 3, 5, 9, 12].map((p) => nextPosition(m, p, -1))).toEqual([9, 9, 2, 2, 5, 9]);
    expect(nextPosition(new Int32Array(0), 3, 1)).toBeUndefined();
  });
});
