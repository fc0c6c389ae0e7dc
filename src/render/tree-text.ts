/** Text rendering of a span tree: box-drawing hierarchy, outcome columns, durations. */
import type { TraceTree, TreeNode, TreeText } from '../analyze/tree.js';
import { plural } from './plural.js';
import { printableLine } from './printable.js';

/**
 * A duration with its unit: µs (`<1µs` for a time under one), ms (tenths below 10), s
 * (hundredths), then minutes and seconds. Rounded to each unit's precision before the unit is
 * chosen: 999.6 ms is 1.00s, not 1000ms. A negative one (a span that ends before it starts) keeps
 * its sign: `-5.00s`.
 */
export function formatDuration(ms: number | null): string {
  if (ms === null || ms === undefined) return '';
  if (ms < 0) return '-' + formatDuration(-ms);
  if (ms > 0 && ms < 0.001) return '<1µs';
  const us = Math.round(ms * 1000);
  if (us < 1000) return `${us}µs`;
  const tenthsMs = Math.round(ms * 10);
  if (tenthsMs < 100) return `${(tenthsMs / 10).toFixed(1)}ms`;
  const wholeMs = Math.round(ms);
  if (wholeMs < 1000) return `${wholeMs}ms`;
  const centis = Math.round(ms / 10);
  if (centis < 6000) return `${(centis / 100).toFixed(2)}s`;
  const secs = Math.round(ms / 1000);
  return `${Math.floor(secs / 60)}m${String(secs % 60).padStart(2, '0')}s`;
}

/**
 * The text tree a line at a time: a header, then each line with its duration (lines laid out by
 * buildTreeText as they are read).
 */
export function* treeTextLines(tree: TreeText): Generator<string> {
  yield printableLine(`trace ${tree.trace_id}${tree.command ? ` (${tree.command})` : ''}: ${plural(tree.spans, 'span')}`) + '\n';
  for (const [text, ms] of tree.lines) {
    const d = formatDuration(ms);
    yield printableLine(d ? `${text}  ${d}` : text) + '\n';
  }
}

/** The text tree as one string (a small tree; the command writes treeTextLines in pieces). */
export function renderTreeText(tree: TreeText): string {
  return [...treeTextLines(tree)].join('');
}

/**
 * JSON rendering: nested spans; ids and times as strings (19-digit nanoseconds do not fit a JS
 * number). Copied with an explicit stack: a chain of spans may be deeper than the call stack.
 */
export function treeJson(tree: TraceTree, maxDepth?: number): unknown {
  const roots: unknown[] = [];
  const stack: [node: TreeNode, depth: number, into: unknown[]][] = [];
  for (let i = tree.roots.length - 1; i >= 0; i--) stack.push([tree.roots[i]!, 0, roots]);
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [n, depth, into] = top;
    const cut = maxDepth !== undefined && depth >= maxDepth;
    const children: unknown[] = [];
    into.push({ ...n, children, ...(cut && n.children.length ? { children_omitted: n.children.length } : {}) });
    if (!cut) for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i]!, depth + 1, children]);
  }
  return { trace_id: tree.trace_id, command: tree.command, spans: tree.spans, roots };
}
