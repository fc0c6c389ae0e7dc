/**
 * Which tree positions are on screen, from the shape, the open/closed state and a filter. Pure and
 * O(visible rows): a closed node skips its whole subtree in one step, so expanding or collapsing
 * in a 100k-span tree costs microseconds and never queries the database.
 */
import { KINDS, type TreeShape } from './tree-index.js';

const OPEN_BY_DEFAULT = new Set(['process', 'invocation', 'phase'].map((k) => KINDS.indexOf(k as (typeof KINDS)[number])));

/** Open state per position: 1 open, 0 closed. By default the tree is open down to the phases. */
export function defaultOpen(shape: TreeShape): Uint8Array {
  const open = new Uint8Array(shape.count);
  for (let i = 0; i < shape.count; i++) open[i] = OPEN_BY_DEFAULT.has(shape.kind[i]!) ? 1 : 0;
  return open;
}

/**
 * Visible positions in tree order. With `kept` (a filter: matches plus their ancestors), only kept
 * rows show and every kept row is open, so matches are never hidden inside a closed parent.
 */
export function visiblePositions(shape: TreeShape, open: Uint8Array, kept?: Uint8Array): Int32Array {
  const out = new Int32Array(shape.count);
  let n = 0;
  let i = 0;
  while (i < shape.count) {
    if (kept && !kept[i]) {
      i += shape.size[i]! + 1;
      continue;
    }
    out[n++] = i;
    i += kept || open[i] ? 1 : shape.size[i]! + 1;
  }
  return out.subarray(0, n);
}

/** Filter matches (1) plus all their ancestors (2: a kept row with kept rows below it). */
export function keptMask(shape: TreeShape, matches: ArrayLike<number>): Uint8Array {
  const kept = new Uint8Array(shape.count);
  for (let i = 0; i < matches.length; i++) {
    const m = matches[i]!;
    if (!kept[m]) kept[m] = 1;
    for (let p = shape.parent[m]!; p >= 0 && kept[p] !== 2; p = shape.parent[p]!) kept[p] = 2;
  }
  return kept;
}

/** Open every ancestor of `pos` (so a jump target is visible); returns whether anything changed. */
export function revealPosition(shape: TreeShape, open: Uint8Array, pos: number): boolean {
  let changed = false;
  for (let p = shape.parent[pos]!; p >= 0; p = shape.parent[p]!) {
    if (!open[p]) {
      open[p] = 1;
      changed = true;
    }
  }
  return changed;
}

/** Index of `pos` in the visible list (binary search: the list is in tree order), or -1. */
export function indexOfPosition(visible: Int32Array, pos: number): number {
  let lo = 0;
  let hi = visible.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = visible[mid]!;
    if (v === pos) return mid;
    if (v < pos) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The visible index nearest to `pos` (at or before it), for keeping the cursor after a collapse. */
export function nearestIndex(visible: Int32Array, pos: number): number {
  let lo = 0;
  let hi = visible.length - 1;
  let best = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (visible[mid]! <= pos) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/**
 * The position after `pos` (dir 1) or before it (dir -1) in a list in tree order, going round at
 * the ends (n/N over search matches); undefined when the list is empty.
 */
export function nextPosition(sorted: Int32Array, pos: number, dir: 1 | -1): number | undefined {
  if (sorted.length === 0) return undefined;
  // after the loop, lo is how many positions are at or before pos
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= pos) lo = mid + 1;
    else hi = mid;
  }
  if (dir > 0) return sorted[lo < sorted.length ? lo : 0];
  const before = sorted[lo - 1] === pos ? lo - 2 : lo - 1;
  return sorted[before >= 0 ? before : sorted.length - 1];
}

export function hasChildren(shape: TreeShape, pos: number): boolean {
  return shape.size[pos]! > 0;
}
