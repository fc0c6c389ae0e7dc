/**
 * Span trees rebuilt from parent_span_id. Roots are the Process and Invocation spans (and any
 * span whose parent is not in the data: orphans stay in their trace, marked, never dropped).
 */
import { UsageError } from '../errors.js';
import type { Db } from '../store/db.js';

export interface TreeNode {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  start_ns: string;
  end_ns: string | null;
  duration_ms: number | null;
  ended: boolean;
  orphan: boolean;
  status_code: number | null;
  status_message: string | null;
  unique_id: string | null;
  phase: string | null;
  node_outcome: string | null;
  skip_reason: string | null;
  upstream_unique_id: string | null;
  test_outcome: string | null;
  failing_rows: number | null;
  /** NodeEvaluated -> the NodeProcessed span of the same node (its link) */
  linked_span_id: string | null;
  children: TreeNode[];
}

export interface TraceTree {
  trace_id: string;
  command: string | null;
  roots: TreeNode[];
  spans: number;
}

/** Resolve --trace: a trace id, an invocation UUID, or an unambiguous prefix of either. */
export async function resolveTrace(db: Db, id: string): Promise<string> {
  const want = id.toLowerCase().replaceAll('-', '');
  const rows = await db.all<{ trace_id: string }>(
    `SELECT DISTINCT trace_id FROM spans WHERE starts_with(trace_id, $w) ORDER BY 1 LIMIT 2`,
    { w: want },
  );
  if (rows.length === 0) throw new UsageError(`no trace ${id} in the input (\`runlens runs\` lists them)`);
  if (rows.length > 1 && rows[0]!.trace_id !== want) throw new UsageError(`trace prefix ${id} is ambiguous`);
  return rows[0]!.trace_id;
}

export async function traceIds(db: Db): Promise<string[]> {
  const rows = await db.all<{ trace_id: string }>(
    `SELECT trace_id FROM spans GROUP BY trace_id ORDER BY min(start_ns), trace_id`,
  );
  return rows.map((r) => r.trace_id);
}

export async function buildTree(db: Db, traceId: string): Promise<TraceTree> {
  const rows = await db.rows<Omit<TreeNode, 'children' | 'name'> & { span_name: string | null }>(
    `SELECT span_id, parent_span_id, span_name, kind, start_ns::VARCHAR AS start_ns, end_ns::VARCHAR AS end_ns,
       duration_ms, ended, orphan, status_code, status_message, unique_id, phase, node_outcome, skip_reason,
       upstream_unique_id, test_outcome, failing_rows, linked_span_id
     FROM spans WHERE trace_id = $t ORDER BY start_ns, span_id`,
    { t: traceId },
  );
  const byId = new Map<string, TreeNode>();
  const nodes: TreeNode[] = rows.map((r) => {
    const { span_name, ...rest } = r;
    const n: TreeNode = { ...rest, name: span_name ?? '(unnamed span)', children: [] };
    byId.set(n.span_id, n);
    return n;
  });
  const roots: TreeNode[] = [];
  for (const n of nodes) {
    const p = n.parent_span_id ? byId.get(n.parent_span_id) : undefined;
    if (p && p !== n) p.children.push(n);
    else roots.push(n);
  }
  const cmd = await db.scalar<string | null>('SELECT command FROM runs WHERE trace_id = $t', { t: traceId });
  return { trace_id: traceId, command: cmd, roots, spans: nodes.length };
}
