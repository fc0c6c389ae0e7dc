/**
 * Span trees rebuilt from parent_span_id. Roots are the Process and Invocation spans (and any
 * span whose parent is not in the data: orphans stay in their trace, marked, never dropped).
 */
import { UsageError } from '../errors.js';
import type { Db } from '../store/db.js';
import type { OutcomeColumns } from '../store/outcome-columns.js';

export interface TreeNode extends OutcomeColumns {
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
  // One delimited string from DuckDB, split here straight into tree nodes (no intermediate row objects).
  const num = (v: string | null) => (v === null ? null : Number(v));
  const nodes = await db.rowsText<TreeNode>(
    `SELECT * FROM spans WHERE trace_id = $t`,
    [
      'span_id', 'parent_span_id', 'span_name', 'kind', 'start_ns', 'end_ns', 'duration_ms', 'ended', 'orphan', 'status_code',
      'status_message', 'unique_id', 'phase', 'node_outcome', 'skip_reason', 'upstream_unique_id', 'test_outcome',
      'failing_rows', 'linked_span_id',
    ],
    'start_ns, span_id',
    { t: traceId },
    (f) => ({
      span_id: f[0]!, parent_span_id: f[1], name: f[2] ?? '(unnamed span)', kind: f[3]!, start_ns: f[4]!, end_ns: f[5],
      duration_ms: num(f[6]!), ended: f[7] === 'true', orphan: f[8] === 'true', status_code: num(f[9]!), status_message: f[10],
      unique_id: f[11], phase: f[12], node_outcome: f[13], skip_reason: f[14], upstream_unique_id: f[15], test_outcome: f[16],
      failing_rows: num(f[17]!), linked_span_id: f[18], children: [],
    }),
  );
  const byId = new Map<string, TreeNode>();
  for (const n of nodes) byId.set(n.span_id, n);
  const roots: TreeNode[] = [];
  for (const n of nodes) {
    const p = n.parent_span_id ? byId.get(n.parent_span_id) : undefined;
    if (p && p !== n) p.children.push(n);
    else roots.push(n);
  }
  const cmd = await db.scalar<string | null>('SELECT command FROM runs WHERE trace_id = $t', { t: traceId });
  return { trace_id: traceId, command: cmd, roots, spans: nodes.length };
}
