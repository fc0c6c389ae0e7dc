/**
 * Tree state for one trace: the shape (rebuilt when data changes while following, keeping the
 * cursor and the user's expansions), the open state, and a cache of fetched rows around the window.
 */
import { useEffect, useRef, useState } from 'react';
import {
  buildTreeShape, dropTreeShape, fetchRows, positionsOfSpans, spanIdsAt,
  type TreeRow, type TreeShape,
} from '../../analyze/explore/tree-index.js';
import { defaultOpen } from '../../analyze/explore/visible.js';
import type { Db } from '../../store/db.js';

export interface ShapeState {
  shape: TreeShape | undefined;
  open: Uint8Array;
  error: string | undefined;
  /** set after a rebuild: where the cursor's span now is */
  restoredCursor: number | undefined;
}

export function useTreeShape(db: Db, traceId: string, dataVersion: number, cursorPos: () => number) {
  const [state, setState] = useState<ShapeState>({ shape: undefined, open: new Uint8Array(0), error: undefined, restoredCursor: undefined });
  const current = useRef(state);
  current.current = state;

  useEffect(() => {
    let live = true;
    (async () => {
      const prev = current.current;
      const shape = await buildTreeShape(db, traceId);
      const open = defaultOpen(shape);
      let restoredCursor: number | undefined;
      if (prev.shape) {
        // Carry the cursor and the user's expansions over to the rebuilt tree, by span id.
        const base = defaultOpen(prev.shape);
        const changed: number[] = [];
        for (let i = 0; i < prev.shape.count; i++) if (prev.open[i] !== base[i]) changed.push(i);
        const ids = await spanIdsAt(db, prev.shape, changed.slice(0, 5000));
        for (const p of await positionsOfSpans(db, shape, ids)) open[p] = open[p] ? 0 : 1;
        const [cur] = await spanIdsAt(db, prev.shape, [cursorPos()]);
        if (cur) [restoredCursor] = await positionsOfSpans(db, shape, [cur]);
        await dropTreeShape(db, prev.shape);
      }
      if (!live) {
        await dropTreeShape(db, shape);
        return;
      }
      setState({ shape, open, error: undefined, restoredCursor });
    })().catch((e: unknown) => live && setState((s) => ({ ...s, error: (e as Error).message })));
    return () => {
      live = false;
    };
    // cursorPos is read at rebuild time only
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [db, traceId, dataVersion]);

  useEffect(() => () => {
    const s = current.current.shape;
    if (s) void dropTreeShape(db, s).catch(() => undefined);
  }, [db]);

  return state;
}

/**
 * Rows around the window, fetched in the background. Rendering never waits: a row not fetched yet
 * shows as a placeholder for a frame. The margin (three windows) means steady scrolling finds rows
 * already cached.
 */
export function useRowCache(db: Db, shape: TreeShape | undefined, visible: Int32Array, top: number, height: number) {
  const cache = useRef(new Map<number, TreeRow>());
  const [version, setVersion] = useState(0);
  const inflight = useRef(false);
  const wanted = useRef<number[]>([]);
  const shapeRef = useRef(shape);

  useEffect(() => {
    shapeRef.current = shape;
    cache.current = new Map();
    setVersion((v) => v + 1);
  }, [shape]);

  useEffect(() => {
    if (!shape) return;
    const lo = Math.max(0, top - height * 2);
    const hi = Math.min(visible.length, top + height * 3);
    const missing: number[] = [];
    for (let i = lo; i < hi; i++) if (!cache.current.has(visible[i]!)) missing.push(visible[i]!);
    wanted.current = missing;
    const pump = async () => {
      if (inflight.current) return;
      inflight.current = true;
      try {
        while (wanted.current.length) {
          const s = shapeRef.current;
          if (!s) break;
          const batch = wanted.current.filter((p) => !cache.current.has(p)).slice(0, 1000);
          wanted.current = [];
          if (batch.length === 0) break;
          const rows = await fetchRows(db, s, batch);
          if (shapeRef.current !== s) continue; // rebuilt meanwhile: these rows are stale
          if (cache.current.size > 20_000) cache.current = new Map();
          for (const r of rows) cache.current.set(r.pos, r);
          setVersion((v) => v + 1);
        }
      } finally {
        inflight.current = false;
      }
    };
    if (missing.length) void pump().catch(() => undefined);
  }, [db, shape, visible, top, height]);

  return { rows: cache.current, version };
}
