/**
 * The only key map of the explorer. Every binding lives here; screens ask `resolveKey` for an
 * action, and the help overlay (`?`) is generated from this table for the current context.
 */
import type { Key } from 'ink';

export type Context = 'global' | 'runs' | 'tree' | 'detail' | 'search' | 'palette' | 'results' | 'diff' | 'help';

export type Action =
  | 'quit' | 'help' | 'back' | 'palette'
  | 'up' | 'down' | 'pageUp' | 'pageDown' | 'top' | 'bottom' | 'left' | 'right'
  | 'open' | 'toggle' | 'expand' | 'collapse' | 'expandAll' | 'collapseAll'
  | 'mark' | 'detail' | 'detailUp' | 'detailDown' | 'rootCause'
  | 'search' | 'nextMatch' | 'prevMatch'
  | 'onlyFailures' | 'cycleOutcome' | 'cyclePhase' | 'cycleResourceType' | 'clearFilters'
  | 'submit' | 'cancel' | 'erase';

export interface Binding {
  action: Action;
  /** key names as produced by `keyName` */
  keys: string[];
  contexts: Context[];
  help: string;
}

const LISTS: Context[] = ['runs', 'tree', 'results', 'diff'];

export const BINDINGS: Binding[] = [
  { action: 'quit', keys: ['q', 'ctrl+c'], contexts: ['global'], help: 'quit (from anywhere; ctrl+c also in text input)' },
  { action: 'help', keys: ['?'], contexts: ['global'], help: 'keys for this screen' },
  { action: 'back', keys: ['esc'], contexts: ['global'], help: 'close palette/search/detail/help, else back one level' },
  { action: 'palette', keys: [':'], contexts: ['global'], help: 'saved-query palette' },

  { action: 'up', keys: ['k', 'up'], contexts: LISTS, help: 'move up' },
  { action: 'down', keys: ['j', 'down'], contexts: LISTS, help: 'move down' },
  { action: 'pageUp', keys: ['pageup', 'ctrl+b', 'ctrl+u'], contexts: LISTS, help: 'page up' },
  { action: 'pageDown', keys: ['pagedown', 'ctrl+f', 'ctrl+d'], contexts: LISTS, help: 'page down' },
  { action: 'top', keys: ['g', 'home'], contexts: LISTS, help: 'first row' },
  { action: 'bottom', keys: ['G', 'end'], contexts: LISTS, help: 'last row' },
  { action: 'left', keys: ['h', 'left'], contexts: ['results', 'diff'], help: 'scroll columns left' },
  { action: 'right', keys: ['l', 'right'], contexts: ['results', 'diff'], help: 'scroll columns right' },

  { action: 'open', keys: ['enter'], contexts: ['runs'], help: 'open the run (with a run marked: compare with it)' },
  { action: 'mark', keys: ['m'], contexts: ['runs'], help: 'mark/unmark this run as the base of a diff' },
  { action: 'open', keys: ['enter'], contexts: ['results', 'diff'], help: 'jump to the node of this row in its run tree' },

  { action: 'toggle', keys: ['enter', 'space'], contexts: ['tree'], help: 'expand/collapse' },
  { action: 'expand', keys: ['right', 'l'], contexts: ['tree'], help: 'expand (or go to first child)' },
  { action: 'collapse', keys: ['left', 'h'], contexts: ['tree'], help: 'collapse (or go to parent)' },
  { action: 'expandAll', keys: ['E'], contexts: ['tree'], help: 'expand everything' },
  { action: 'collapseAll', keys: ['C'], contexts: ['tree'], help: 'collapse to phases' },
  { action: 'detail', keys: ['d', 'tab'], contexts: ['tree'], help: 'show/hide the detail pane' },
  { action: 'detailDown', keys: ['J'], contexts: ['tree'], help: 'scroll the detail pane down' },
  { action: 'detailUp', keys: ['K'], contexts: ['tree'], help: 'scroll the detail pane up' },
  { action: 'rootCause', keys: ['u'], contexts: ['tree'], help: 'jump to the root cause of an upstream skip' },
  { action: 'search', keys: ['/'], contexts: ['tree'], help: 'search unique_id and names' },
  { action: 'nextMatch', keys: ['n'], contexts: ['tree'], help: 'next match' },
  { action: 'prevMatch', keys: ['N'], contexts: ['tree'], help: 'previous match' },
  { action: 'onlyFailures', keys: ['f'], contexts: ['tree'], help: 'only failures (errors, failed tests) on/off' },
  { action: 'cycleOutcome', keys: ['o'], contexts: ['tree'], help: 'filter by outcome (cycles)' },
  { action: 'cyclePhase', keys: ['p'], contexts: ['tree'], help: 'filter by phase (cycles)' },
  { action: 'cycleResourceType', keys: ['t'], contexts: ['tree'], help: 'filter by resource type (cycles)' },
  { action: 'clearFilters', keys: ['x'], contexts: ['tree'], help: 'clear filters' },

  { action: 'submit', keys: ['enter'], contexts: ['search', 'palette'], help: 'accept (palette: run the query; `name k=v` sets parameters)' },
  { action: 'cancel', keys: ['esc'], contexts: ['search', 'palette'], help: 'close' },
  { action: 'erase', keys: ['backspace'], contexts: ['search', 'palette'], help: 'delete a character' },
  { action: 'up', keys: ['up'], contexts: ['search'], help: 'previous match' },
  { action: 'down', keys: ['down'], contexts: ['search'], help: 'next match' },
  { action: 'up', keys: ['up'], contexts: ['palette'], help: 'previous query' },
  { action: 'down', keys: ['down'], contexts: ['palette'], help: 'next query' },

  { action: 'back', keys: ['esc', '?', 'q'], contexts: ['help'], help: 'close help' },
];

/** Contexts where printable keys are text (search, palette): only ctrl+c quits there. */
export const TEXT_CONTEXTS: ReadonlySet<Context> = new Set(['search', 'palette']);

/** A stable name for an ink key event: 'j', 'G', 'enter', 'ctrl+d', 'pagedown', ... */
export function keyName(input: string, key: Key): string {
  if (key.upArrow) return 'up';
  if (key.downArrow) return 'down';
  if (key.leftArrow) return 'left';
  if (key.rightArrow) return 'right';
  if (key.pageUp) return 'pageup';
  if (key.pageDown) return 'pagedown';
  if (key.home) return 'home';
  if (key.end) return 'end';
  if (key.return) return 'enter';
  if (key.escape) return 'esc';
  if (key.tab) return key.shift ? 'shift+tab' : 'tab';
  if (key.backspace || key.delete) return 'backspace';
  if (key.ctrl && input) return `ctrl+${input.toLowerCase()}`;
  if (input === ' ') return 'space';
  return input;
}

/** The name of one character of a multi-key chunk. */
export function charName(c: string): string {
  if (c === '\r' || c === '\n') return 'enter';
  if (c === '\t') return 'tab';
  if (c === '\x7f' || c === '\b') return 'backspace';
  if (c === ' ') return 'space';
  const code = c.charCodeAt(0);
  if (code >= 1 && code <= 26) return `ctrl+${String.fromCharCode(code + 96)}`;
  return c;
}

/**
 * The action bound to a key in a context. Context bindings win over global ones; in text
 * contexts only ctrl+c reaches the global map (so `q` and `?` can be typed).
 */
export function resolveKey(ctx: Context, name: string): Action | undefined {
  const local = BINDINGS.find((b) => b.contexts.includes(ctx) && b.keys.includes(name));
  if (local) return local.action;
  if (ctx === 'help') return name === 'ctrl+c' ? 'quit' : undefined;
  if (TEXT_CONTEXTS.has(ctx)) return name === 'ctrl+c' ? 'quit' : undefined;
  return BINDINGS.find((b) => b.contexts.includes('global') && b.keys.includes(name))?.action;
}

/** Help rows for a context: its own bindings, then the global ones. */
export function helpFor(ctx: Context): { keys: string; help: string }[] {
  const own = BINDINGS.filter((b) => b.contexts.includes(ctx));
  const global = TEXT_CONTEXTS.has(ctx) || ctx === 'help' ? [] : BINDINGS.filter((b) => b.contexts.includes('global'));
  return [...own, ...global].map((b) => ({ keys: b.keys.join(' '), help: b.help }));
}
