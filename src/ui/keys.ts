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
  | 'critical' | 'onlyFailures' | 'cycleOutcome' | 'cyclePhase' | 'cycleResourceType' | 'clearFilters'
  | 'submit' | 'cancel' | 'erase';

export interface Binding {
  action: Action;
  /** key names as produced by `keyName` */
  keys: string[];
  contexts: Context[];
  help: string;
  /** a word or two for the bottom bar; bindings without one are found through `?` */
  hint?: string;
  /** the keys as the bottom bar shows them, when not the first key (`h/l`) */
  hintKeys?: string;
}

/** The run tree; 'detail' is the tree with its detail pane open. */
const TREE: Context[] = ['tree', 'detail'];
const LISTS: Context[] = ['runs', ...TREE, 'results', 'diff'];

export const BINDINGS: Binding[] = [
  { action: 'help', keys: ['?'], contexts: ['global'], help: 'keys for this screen', hint: 'keys' },
  { action: 'palette', keys: [':'], contexts: ['global'], help: 'saved-query palette', hint: 'queries' },
  { action: 'back', keys: ['esc'], contexts: ['global'], help: 'close palette/search/detail/help, else back one level', hint: 'back' },
  { action: 'quit', keys: ['q', 'ctrl+c'], contexts: ['global'], help: 'quit (ctrl+c also while typing a search or query)', hint: 'quit' },

  { action: 'up', keys: ['k', 'up'], contexts: LISTS, help: 'move up' },
  { action: 'down', keys: ['j', 'down'], contexts: LISTS, help: 'move down' },
  { action: 'pageUp', keys: ['pageup', 'ctrl+b', 'ctrl+u'], contexts: LISTS, help: 'page up' },
  { action: 'pageDown', keys: ['pagedown', 'ctrl+f', 'ctrl+d'], contexts: LISTS, help: 'page down' },
  { action: 'top', keys: ['g', 'home'], contexts: LISTS, help: 'first row' },
  { action: 'bottom', keys: ['G', 'end'], contexts: LISTS, help: 'last row' },
  { action: 'left', keys: ['h', 'left'], contexts: ['results', 'diff'], help: 'scroll columns left', hint: 'columns', hintKeys: 'h/l' },
  { action: 'right', keys: ['l', 'right'], contexts: ['results', 'diff'], help: 'scroll columns right' },

  { action: 'open', keys: ['enter'], contexts: ['runs'], help: 'open the run (with a run marked: compare with it)', hint: 'open' },
  { action: 'mark', keys: ['m'], contexts: ['runs'], help: 'mark/unmark this run as the base of a diff', hint: 'mark for diff' },
  { action: 'open', keys: ['enter'], contexts: ['results', 'diff'], help: 'jump to the node of this row in its run tree', hint: 'go to node' },

  { action: 'toggle', keys: ['enter', 'space'], contexts: TREE, help: 'expand/collapse', hint: 'fold' },
  { action: 'expand', keys: ['right', 'l'], contexts: TREE, help: 'expand (or go to first child)' },
  { action: 'collapse', keys: ['left', 'h'], contexts: TREE, help: 'collapse (or go to parent)' },
  { action: 'expandAll', keys: ['E'], contexts: TREE, help: 'expand everything' },
  { action: 'collapseAll', keys: ['C'], contexts: TREE, help: 'collapse to phases' },
  { action: 'detail', keys: ['d', 'tab'], contexts: TREE, help: 'show/hide the detail pane', hint: 'detail' },
  { action: 'detailDown', keys: ['J'], contexts: ['detail'], help: 'scroll the detail pane down', hint: 'scroll detail', hintKeys: 'J/K' },
  { action: 'detailUp', keys: ['K'], contexts: ['detail'], help: 'scroll the detail pane up' },
  { action: 'rootCause', keys: ['u'], contexts: TREE, help: 'jump to the root cause of an upstream skip', hint: 'root cause' },
  { action: 'search', keys: ['/'], contexts: TREE, help: 'search unique_id and names', hint: 'search' },
  { action: 'nextMatch', keys: ['n'], contexts: TREE, help: 'next match' },
  { action: 'prevMatch', keys: ['N'], contexts: TREE, help: 'previous match' },
  { action: 'critical', keys: ['c'], contexts: TREE, help: 'highlight the critical path: the evaluations that decided each phase\'s time', hint: 'critical path' },
  { action: 'onlyFailures', keys: ['f'], contexts: TREE, help: 'only failures (errors, failed tests) on/off', hint: 'failures' },
  { action: 'cycleOutcome', keys: ['o'], contexts: TREE, help: 'filter by outcome (cycles)' },
  { action: 'cyclePhase', keys: ['p'], contexts: TREE, help: 'filter by phase (cycles, in run order)' },
  { action: 'cycleResourceType', keys: ['t'], contexts: TREE, help: 'filter by resource type (cycles)' },
  { action: 'clearFilters', keys: ['x'], contexts: TREE, help: 'clear filters' },

  { action: 'submit', keys: ['enter'], contexts: ['search'], help: 'keep the matches (n/N move between them)', hint: 'keep matches' },
  { action: 'submit', keys: ['enter'], contexts: ['palette'], help: 'run the query (`name k=v` sets parameters)', hint: 'run' },
  { action: 'cancel', keys: ['esc'], contexts: ['search', 'palette'], help: 'close', hint: 'close' },
  { action: 'erase', keys: ['backspace'], contexts: ['search', 'palette'], help: 'delete a character' },
  { action: 'up', keys: ['up'], contexts: ['search'], help: 'previous match' },
  { action: 'down', keys: ['down'], contexts: ['search'], help: 'next match', hint: 'matches', hintKeys: '↑/↓' },
  { action: 'up', keys: ['up'], contexts: ['palette'], help: 'previous query' },
  { action: 'down', keys: ['down'], contexts: ['palette'], help: 'next query', hint: 'choose', hintKeys: '↑/↓' },

  { action: 'back', keys: ['esc', '?'], contexts: ['help'], help: 'close help', hint: 'close help' },
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
  if (TEXT_CONTEXTS.has(ctx)) return name === 'ctrl+c' ? 'quit' : undefined;
  // help lists every key of a screen, so only quitting passes through it
  if (ctx === 'help') return BINDINGS.some((b) => b.action === 'quit' && b.keys.includes(name)) ? 'quit' : undefined;
  return BINDINGS.find((b) => b.contexts.includes('global') && b.keys.includes(name))?.action;
}

/** Help rows for a context: its own bindings, then the global ones. */
export function helpFor(ctx: Context): { keys: string; help: string }[] {
  return bindingsFor(ctx).map((b) => ({ keys: b.keys.join(' '), help: b.help }));
}

function bindingsFor(ctx: Context): Binding[] {
  const own = BINDINGS.filter((b) => b.contexts.includes(ctx));
  const global = TEXT_CONTEXTS.has(ctx) ? [] : BINDINGS.filter((b) => b.contexts.includes('global') && (ctx !== 'help' || b.action === 'quit'));
  return [...own, ...global];
}

const KEY_LABELS: Record<string, string> = { up: '↑', down: '↓', left: '←', right: '→', enter: '⏎', esc: 'esc', space: 'space' };

/** The bottom bar's hints for a context: `key word` pairs, most useful first, from the bindings. */
export function hintsFor(ctx: Context): { key: string; hint: string }[] {
  return bindingsFor(ctx)
    .filter((b) => b.hint)
    .map((b) => ({ key: b.hintKeys ?? KEY_LABELS[b.keys[0]!] ?? b.keys[0]!, hint: b.hint! }))
    .filter((h, i, all) => all.findIndex((o) => o.hint === h.hint) === i);
}
