/**
 * Span trees rebuilt from parent_span_id. Roots are the Process and Invocation spans (and any
 * span whose parent is not in the data: orphans stay in their trace, marked, never dropped).
 */
import { UsageError } from '../errors.js';
import type { Db } from '../store/db.js';
import type { OutcomeColumns } from '../store/outcome-columns.js';
import { plural } from '../render/plural.js';

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
  /** its place on its phase's critical path, where a caller marked it (see analyze/critical-path.ts) */
  critical_path?: { phase: string | null; position: number; of: number };
  children: TreeNode[];
}

export interface TraceTree {
  trace_id: string;
  command: string | null;
  roots: TreeNode[];
  spans: number;
}

/**
 * Resolve --trace: a trace id, an invocation UUID, or an unambiguous prefix of either, among the
 * runs (a trace of log records only is a run too; spanTraces says when a command needs spans).
 */
export async function resolveTrace(db: Db, id: string): Promise<string> {
  const want = id.toLowerCase().replaceAll('-', '');
  // The engine's trace id is its invocation id; other producers' may differ (runs has both).
  const rows = await db.all<{ trace_id: string }>(
    `SELECT trace_id FROM runs
     WHERE starts_with(trace_id, $w) OR starts_with(replace(lower(invocation_id), '-', ''), $w)
     ORDER BY 1 LIMIT 2`,
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

/**
 * The traces a command that reads spans (tree, critical-path) works on: --trace's run, else every
 * run with spans. A run of log records only has none: named, or the input's only kind of run, it
 * is exit 2 saying so; beside runs with spans, `note` is told it is not shown.
 */
export async function spanTraces(db: Db, trace: string | undefined, note: (message: string) => void): Promise<string[]> {
  if (trace) {
    const id = await resolveTrace(db, trace);
    if (!(await db.scalar<boolean>('SELECT EXISTS (SELECT 1 FROM spans WHERE trace_id = $t)', { t: id }))) {
      throw new UsageError(`run ${id} has no spans (log records only); \`runlens runs\`, \`gate\` and \`report\` read it as a run`);
    }
    return [id];
  }
  const ids = await traceIds(db);
  const logsOnly = (await db.all<{ trace_id: string }>(
    'SELECT trace_id FROM runs WHERE trace_id NOT IN (SELECT trace_id FROM spans) ORDER BY start_ns, trace_id',
  )).map((r) => r.trace_id);
  const which = logsOnly.length === 1 ? `run ${logsOnly[0]} has` : `${logsOnly.length} runs (${logsOnly.join(', ')}) have`;
  if (ids.length === 0) {
    throw new UsageError(logsOnly.length ? `no spans in the input: its ${which} log records only` : 'no spans in the input: it holds no run');
  }
  if (logsOnly.length) note(`${which} log records only: no spans to show`);
  return ids;
}

export async function buildTree(db: Db, traceId: string): Promise<TraceTree> {
  // One delimited string from DuckDB, split here straight into tree nodes (no intermediate row objects).
  const num = (v: string | null) => (v === null ? null : Number(v));
  const nodes = await db.rowsText<TreeNode>(
    `SELECT *, row_number() OVER (ORDER BY start_ns, span_id) AS n FROM spans WHERE trace_id = $t`,
    [
      'span_id', 'parent_span_id', 'span_name', 'kind', 'start_ns', 'end_ns', 'duration_ms', 'ended', 'orphan', 'status_code',
      'status_message', 'unique_id', 'phase', 'node_outcome', 'skip_reason', 'upstream_unique_id', 'test_outcome',
      'failing_rows', 'linked_span_id',
    ],
    'n',
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
  // Spans in a parent cycle, which no root reaches, become roots at the end (as in the text tree).
  const reached = new Set<TreeNode>();
  const stack = [...roots];
  for (let n = stack.pop(); n; n = stack.pop()) {
    reached.add(n);
    for (const c of n.children) stack.push(c);
  }
  for (const n of nodes) if (!reached.has(n)) roots.push({ ...n, children: [] });
  const cmd = await db.scalar<string | null>('SELECT command FROM runs WHERE trace_id = $t', { t: traceId });
  return { trace_id: traceId, command: cmd, roots, spans: nodes.length };
}

/** One trace's tree as text lines, built in DuckDB: what renderTreeText prints. */
export interface TreeText {
  trace_id: string;
  command: string | null;
  spans: number;
  /** in print order: the line up to its duration, and the duration in ms (null: none) */
  lines: [text: string, durationMs: number | null][];
}

/**
 * A span's line without its duration: name, then [facts] (outcome, skip, test, error, NOT ENDED,
 * ORPHAN, the NodeProcessed link, a mark such as the place on the critical path). The duration is
 * formatted in JS (formatDuration), whose rounding SQL's printf does not share.
 */
const label = (mark = '') => `coalesce(span_name, '(unnamed span)') || coalesce('  [' || nullif(concat_ws(', ',
    nullif(node_outcome, ''),
    CASE WHEN skip_reason <> '' THEN 'skip=' || skip_reason || CASE WHEN upstream_unique_id <> '' THEN ' (upstream ' || upstream_unique_id || ')' ELSE '' END END,
    CASE WHEN test_outcome <> '' THEN 'test=' || test_outcome || CASE WHEN coalesce(failing_rows, 0) <> 0 THEN ' (' || failing_rows || ' failing rows)' ELSE '' END END,
    CASE WHEN coalesce(node_outcome, '') = '' AND status_code = 2 THEN 'error' || CASE WHEN status_message <> '' THEN ': ' || status_message ELSE '' END END,
    CASE WHEN ended IS NOT TRUE THEN 'NOT ENDED' END,
    CASE WHEN orphan IS TRUE THEN 'ORPHAN (parent ' || coalesce(parent_span_id, 'null') || ' not in the data)' END,
    CASE WHEN kind = 'node_evaluated' AND linked_span_id <> '' THEN '-> processed ' || linked_span_id END${mark}), '') || ']', '')`;

/**
 * The tree as lines. DuckDB gives each span of the trace, in start order, its line label, duration
 * and parent (as the span's place in that order: a span id names the last span that has it, and a
 * span that is its own parent is a root), read through Db.rowsText; JS walks the tree on integer
 * arrays from the roots (spans whose parent is not in the trace, and self-parents), siblings in
 * start order, and puts the prefixes (`├─ `, `│  `) in front of the labels. Spans in a parent cycle,
 * which no root reaches, are listed as roots at the end (as the explorer does). With `maxDepth`,
 * spans deeper than that are counted on one line under their parent, as `… N child spans`.
 * `marks`: a relation (span_id, fact) of this trace's spans whose fact joins the label's facts.
 * Not node objects in JS (splitting every field, garbage collection) nor a recursive walk in SQL
 * (its joins): both cost more than the walk on integer arrays.
 */
export async function buildTreeText(db: Db, traceId: string, maxDepth?: number, marks?: string): Promise<TreeText> {
  // a span at depth >= maxDepth shows no children (as in the JSON tree)
  const cutAt = maxDepth === undefined || !Number.isFinite(maxDepth) ? Infinity : Math.max(0, Math.ceil(maxDepth));
  // one row per span in start order: its parent's place in that order (none for a root), label, duration
  const sql = `WITH s AS (
      SELECT parent_span_id, span_id, CAST(duration_ms AS VARCHAR) AS d, ${label(marks ? ', m.fact' : '')} AS label,
        row_number() OVER (ORDER BY start_ns, span_id) AS n
      FROM spans ${marks ? `LEFT JOIN ${marks} m USING (span_id)` : ''} WHERE trace_id = $t
    ),
    ids AS (SELECT span_id, max(n) AS n FROM s GROUP BY span_id)
    SELECT s.n, CASE WHEN s.parent_span_id <> '' AND ids.n <> s.n THEN ids.n END AS parent_n, s.label, s.d
    FROM s LEFT JOIN ids ON ids.span_id = s.parent_span_id`;
  const spans = await db.rowsText(sql, ['parent_n', 'label', 'd'], 'n', { t: traceId }, ([p, l, d]): TreeSpan => [
    p ? Number(p) : 0,
    l ?? '',
    d ? Number(d) : null,
  ]);
  const lines = layOutTree(spans, cutAt);
  const head = await db.one<{ command: string | null; spans: number }>(
    `SELECT (SELECT command FROM runs WHERE trace_id = $t) AS command, (SELECT count(*)::INTEGER FROM spans WHERE trace_id = $t) AS spans`,
    { t: traceId },
  );
  return { trace_id: traceId, command: head?.command ?? null, spans: head?.spans ?? 0, lines };
}

/** A span of the text tree: its parent's place in start order (1-based; 0 for a root), label, duration. */
type TreeSpan = [parent: number, label: string, durationMs: number | null];

/**
 * Lines of a tree whose spans are given in start order (span i, 1-based, is spans[i - 1]).
 * Depth-first from the roots, children in start order.
 */
function layOutTree(spans: TreeSpan[], cutAt: number): TreeText['lines'] {
  const n = spans.length;
  const parent = (i: number) => spans[i - 1]![0];
  // children of each span in start order, as slices of one array (counting sort by parent)
  const first = new Int32Array(n + 2);
  for (let i = 1; i <= n; i++) first[parent(i) + 1]!++;
  for (let p = 1; p <= n + 1; p++) first[p]! += first[p - 1]!;
  const kids = new Int32Array(n);
  const fill = first.slice(0, n + 1);
  for (let i = 1; i <= n; i++) kids[fill[parent(i)]!++] = i;
  const childCount = (p: number) => first[p + 1]! - first[p]!;
  const line = (i: number, prefix: string): TreeText['lines'][number] => [prefix + spans[i - 1]![1], spans[i - 1]![2]];

  const lines: TreeText['lines'] = [];
  const seen = new Uint8Array(n + 1);
  // explicit stack (a deep chain must not overflow the JS stack): span, depth, line prefix, prefix of its children
  const stack: [number, number, string, string][] = [];
  for (let r = childCount(0) - 1; r >= 0; r--) stack.push([kids[r]!, 0, '', '']); // the roots: children of place 0
  while (stack.length > 0) {
    const [span, depth, prefix, childPrefix] = stack.pop()!;
    seen[span] = 1;
    if (depth <= cutAt) lines.push(line(span, prefix));
    const count = childCount(span);
    if (depth === cutAt && count > 0) lines.push([`${childPrefix}└─ … ${plural(count, 'child span')}`, null]);
    // the whole tree is walked (what it does not reach is a cycle); only lines above the cut are kept
    for (let k = first[span + 1]! - 1; k >= first[span]!; k--) {
      const last = k === first[span + 1]! - 1;
      stack.push([kids[k]!, depth + 1, childPrefix + (last ? '└─ ' : '├─ '), childPrefix + (last ? '   ' : '│  ')]);
    }
  }
  for (let i = 1; i <= n; i++) if (!seen[i]) lines.push(line(i, ''));
  return lines;
}
