/** Text rendering of a span tree: box-drawing hierarchy, outcome columns, durations. */
import type { TraceTree, TreeNode, TreeText } from '../analyze/tree.js';
import { plural } from './plural.js';
import { printableLine } from './printable.js';

export function formatDuration(ms: number | null): string {
  if (ms === null || ms === undefined) return '';
  if (ms < 1) return `${(ms * 1000).toFixed(0)}µs`;
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 1 : 0)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)}s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m${((ms % 60_000) / 1000).toFixed(0).padStart(2, '0')}s`;
}

/** The text tree: a header, then each line with its duration (lines laid out by buildTreeText). */
export function renderTreeText(tree: TreeText): string {
  let out = printableLine(`trace ${tree.trace_id}${tree.command ? ` (${tree.command})` : ''}: ${plural(tree.spans, 'span')}`) + '\n';
  for (const [text, ms] of tree.lines) {
    const d = formatDuration(ms);
    out += printableLine(d ? `${text}  ${d}` : text) + '\n';
  }
  return out;
}

/** JSON rendering: nested spans; ids and times as strings (19-digit nanoseconds do not fit a JS number). */
export function treeJson(tree: TraceTree, maxDepth?: number): unknown {
  const strip = (n: TreeNode, depth: number): unknown => ({
    ...n,
    children: maxDepth !== undefined && depth >= maxDepth ? [] : n.children.map((c) => strip(c, depth + 1)),
    ...(maxDepth !== undefined && depth >= maxDepth && n.children.length ? { children_omitted: n.children.length } : {}),
  });
  return { trace_id: tree.trace_id, command: tree.command, spans: tree.spans, roots: tree.roots.map((r) => strip(r, 0)) };
}
