/** Cursor movement shared by every list (runs, tree, results, diff, palette). */
import type { Action } from './keys.js';

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
