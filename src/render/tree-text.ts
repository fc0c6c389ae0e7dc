/** Text rendering of a span tree: box-drawing hierarchy, outcome columns, durations. */
import type { TraceTree, TreeNode } from '../analyze/tree.js';

export function formatDuration(ms: number | null): string {
  if (ms === null || ms === undefined) return '';
  if (ms < 1) return `${(ms * 1000).toFixed(0)}µs`;
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 1 : 0)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)}s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m${((ms % 60_000) / 1000).toFixed(0).padStart(2, '0')}s`;
}

/** One span's line: name, [facts], duration (string building, no arrays: this runs per span on 100k-span trees). */
function label(n: TreeNode): string {
  let facts = '';
  const fact = (f: string) => (facts = facts ? `${facts}, ${f}` : f);
  if (n.node_outcome) fact(n.node_outcome);
  if (n.skip_reason) fact(`skip=${n.skip_reason}${n.upstream_unique_id ? ` (upstream ${n.upstream_unique_id})` : ''}`);
  if (n.test_outcome) fact(`test=${n.test_outcome}${n.failing_rows ? ` (${n.failing_rows} failing rows)` : ''}`);
  if (!n.node_outcome && n.status_code === 2) fact(`error${n.status_message ? `: ${n.status_message}` : ''}`);
  if (!n.ended) fact('NOT ENDED');
  if (n.orphan) fact(`ORPHAN (parent ${n.parent_span_id} not in the data)`);
  if (n.kind === 'node_evaluated' && n.linked_span_id) fact(`-> processed ${n.linked_span_id}`);
  const d = formatDuration(n.duration_ms);
  let s = n.name;
  if (facts) s += `  [${facts}]`;
  if (d) s += `  ${d}`;
  return s;
}

export function renderTreeText(tree: TraceTree, maxDepth?: number): string {
  const out: string[] = [`trace ${tree.trace_id}${tree.command ? ` (${tree.command})` : ''}: ${tree.spans} spans`];
  const walk = (n: TreeNode, prefix: string, last: boolean, depth: number, root: boolean) => {
    out.push(`${prefix}${root ? '' : last ? '└─ ' : '├─ '}${label(n)}`);
    if (maxDepth !== undefined && depth >= maxDepth) {
      if (n.children.length) out.push(`${prefix}${root ? '' : last ? '   ' : '│  '}└─ … ${n.children.length} child span(s)`);
      return;
    }
    const childPrefix = root ? prefix : prefix + (last ? '   ' : '│  ');
    const end = n.children.length - 1;
    for (let i = 0; i <= end; i++) walk(n.children[i]!, childPrefix, i === end, depth + 1, false);
  };
  for (const r of tree.roots) walk(r, '', true, 0, true);
  return out.join('\n') + '\n';
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
