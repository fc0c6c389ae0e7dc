/** Cursor movement shared by every list (runs, tree, results, diff, palette). */
import { useRef } from 'react';
import type { Action } from './keys.js';
import { WHEEL_ROWS, type MouseEvent } from './mouse.js';

/** The new cursor for a movement action, or undefined when the action is not a movement. */
export function moveCursor(action: Action | undefined, cursor: number, count: number, page: number): number | undefined {
  if (count <= 0) return action && ['up', 'down', 'pageUp', 'pageDown', 'top', 'bottom'].includes(action) ? 0 : undefined;
  const clamp = (n: number) => Math.max(0, Math.min(count - 1, n));
  switch (action) {
    case 'up':
      return clamp(cursor - 1);
    case 'down':
      return clamp(cursor + 1);
    case 'pageUp':
      return clamp(cursor - Math.max(1, page - 1));
    case 'pageDown':
      return clamp(cursor + Math.max(1, page - 1));
    case 'top':
      return 0;
    case 'bottom':
      return count - 1;
    default:
      return undefined;
  }
}

/** Keep the cursor inside a window of `height` rows starting at `top`. */
export function scrollTop(cursor: number, top: number, height: number, count: number): number {
  if (height <= 0) return 0;
  let t = top;
  if (cursor < t) t = cursor;
  if (cursor >= t + height) t = cursor - height + 1;
  return Math.max(0, Math.min(t, Math.max(0, count - height)));
}

/**
 * The window's first row, worked out on every render from the last one: it moves only as far as
 * keeps the cursor in view, whatever changed (a key, the terminal's size, the list's length).
 */
export function useWindowTop(cursor: number, height: number, count: number): number {
  const top = useRef(0);
  top.current = scrollTop(cursor, top.current, height, count);
  return top.current;
}

/** The window's first row that puts the cursor in the middle (as near as the list's ends allow). */
export function centeredTop(cursor: number, height: number, count: number): number {
  return Math.max(0, Math.min(cursor - Math.floor(height / 2), count - height));
}

/**
 * The row a mouse event picks in a list whose first row is drawn on terminal row `firstY` (1-based)
 * and shows `shown` rows from `top`: a click selects the row under it, the wheel moves the cursor.
 */
export function mouseCursor(e: MouseEvent, cursor: number, count: number, top: number, firstY: number, shown: number): number | undefined {
  if (count <= 0) return undefined;
  if (e.kind === 'wheelUp') return Math.max(0, cursor - WHEEL_ROWS);
  if (e.kind === 'wheelDown') return Math.min(count - 1, cursor + WHEEL_ROWS);
  const row = e.y - firstY;
  if (row < 0 || row >= shown || top + row >= count) return undefined;
  return top + row;
}
