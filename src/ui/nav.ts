/**
 * Navigation and key routing shared by the screens: the App owns a stack of screens (Esc pops
 * one) and routes each key to the active screen first, then to the global bindings.
 */
import { createContext, useContext, useLayoutEffect, useRef } from 'react';
import type { Tabular } from '../render/table.js';
import type { Db } from '../store/db.js';
import type { Action, Context } from './keys.js';
import type { MouseEvent } from './mouse.js';

export type Screen =
  | { id: number; type: 'runs' }
  | { id: number; type: 'tree'; traceId: string; jump?: Jump }
  | {
      id: number; type: 'results'; title: string; table: Tabular; traceId?: string;
      /** the table was made while files still loaded: what was loading; `rerun` makes it again when loading ends */
      partial?: string; rerun?: () => Promise<Tabular>;
    }
  | { id: number; type: 'diff'; base: string; head: string };

/** Where a tree opens: a span, or a node (its evaluation in `phase` when given, else its NodeProcessed span). */
export interface Jump {
  uniqueId?: string;
  spanId?: string;
  phase?: string;
}

type NewScreen = Screen extends infer S ? (S extends Screen ? Omit<S, 'id'> : never) : never;

export interface KeyHandler {
  context(): Context;
  /** return true when the key was used (else the global map gets it) */
  onKey(action: Action | undefined, name: string, input: string): boolean;
  /** the wheel and clicks (terminal rows and columns, 1-based) */
  onMouse?(e: MouseEvent): void;
}

export interface Nav {
  db: Db;
  /** bumped after every load (initial, and each batch while following) */
  dataVersion: number;
  loading: boolean;
  /** while loading: what (`loading 1 of 2 files`) */
  loadingNote?: string;
  /** data may still arrive (following, receiving): spans and runs not ended are running */
  live: boolean;
  /** the OTLP address runs are received on (explore --receive) */
  listening?: string;
  push(s: NewScreen): void;
  pop(): void;
  /** the active screen registers its key handler here */
  setKeys(h: { current: KeyHandler }): void;
  clearKeys(h: { current: KeyHandler }): void;
  /** run in the background, with the status line saying what runs */
  status(text: string | undefined): void;
  /** the active screen's key context, for the bottom bar's hints */
  setContext(ctx: Context): void;
}

export const NavContext = createContext<Nav | null>(null);

export function useNav(): Nav {
  const n = useContext(NavContext);
  if (!n) throw new Error('useNav outside the explorer App');
  return n;
}

/** Register `handler` while `active` (the top screen with no overlay open). */
export function useKeyHandler(active: boolean, handler: KeyHandler): void {
  const nav = useNav();
  const ref = useRef(handler);
  ref.current = handler;
  // a layout effect: registered before the next key can be read (a passive effect could lag)
  useLayoutEffect(() => {
    if (!active) return;
    nav.setKeys(ref);
    return () => nav.clearKeys(ref);
  }, [active, nav]);
  const ctx = handler.context();
  useLayoutEffect(() => {
    if (active) nav.setContext(ctx);
  }, [active, nav, ctx]);
}

/** Terminal size handed to screens (the App owns resize handling). */
export interface Size {
  width: number;
  height: number;
}
