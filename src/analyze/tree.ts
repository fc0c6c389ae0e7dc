/**
 * Span trees rebuilt from parent_span_id. Roots are the Process and Invocation spans (and any
 * span whose parent is not in the data: orphans stay in their trace, marked, never dropped).
 * Spans whose parent ids loop (a span its own parent, or spans each other's) are marked CYCLE;
 * each loop is cut at its earliest span, which is listed as a root after the others.
 */
import { UsageError } from '../errors.js';
import type { Db } from '../store/db.js';
import type { OutcomeColumns } from '../store/outcome-columns.js';
import { plural } from '../render/plural.js';
import { sourceFreshness } from '../store/freshness-sql.js';

/**
 * (span_id, freshness_outcome) of the trace `$t`'s source spans (few): a source's freshness outcome
 * (passed, warned, failed), which a run's outcome columns do not hold.
 */
export const traceFreshness = `(${sourceFreshness(`SELECT rowid FROM record_rows WHERE span_row AND resource_type = 'source' AND trace_id = $t`)})`;

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
  /** its parent ids loop back to it (see cycleCuts) */
  cycle: boolean;
  status_code: number | null;
  status_message: string | null;
  unique_id: string | null;
  /** NodeEvaluated -> the NodeProcessed span of the same node (its link) */
  linked_span_id: string | null;
  /** sources: passed, warned or failed (source freshness); a failed one fails the gate's `error` */
  freshness_outcome: string | null;
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
  // dashes only: an empty prefix, which every run starts with
  if (want === '') throw new UsageError(`run id "${id}" names no run: give a trace id, an invocation id or a prefix of either (\`runlens runs\` lists them)`);
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
    `SELECT s.*, f.freshness_outcome, row_number() OVER (ORDER BY start_ns, s.span_id) AS n
     FROM spans s LEFT JOIN ${traceFreshness} f ON f.span_id = s.span_id WHERE s.trace_id = $t`,
    [
      'span_id', 'parent_span_id', 'span_name', 'kind', 'start_ns', 'end_ns', 'duration_ms', 'ended', 'orphan', 'status_code',
      'status_message', 'unique_id', 'phase', 'node_outcome', 'skip_reason', 'upstream_unique_id', 'test_outcome',
      'failing_rows', 'linked_span_id', 'freshness_outcome',
    ],
    'n',
    { t: traceId },
    (f) => ({
      span_id: f[0]!, parent_span_id: f[1], name: f[2] ?? '(unnamed span)', kind: f[3]!, start_ns: f[4]!, end_ns: f[5],
      duration_ms: num(f[6]!), ended: f[7] === 'true', orphan: f[8] === 'true', cycle: false, status_code: num(f[9]!), status_message: f[10],
      unique_id: f[11], phase: f[12], node_outcome: f[13], skip_reason: f[14], upstream_unique_id: f[15], test_outcome: f[16],
      failing_rows: num(f[17]!), linked_span_id: f[18], freshness_outcome: f[19], children: [],
    }),
  );
  // parents as places in start order (1-based, 0: none in the trace); a span id names the last span that has it
  const place = new Map<string, number>();
  nodes.forEach((n, i) => place.set(n.span_id, i + 1));
  const parent = new Int32Array(nodes.length + 1);
  nodes.forEach((n, i) => (parent[i + 1] = (n.parent_span_id && place.get(n.parent_span_id)) || 0));
  const { inCycle, cuts } = cycleCuts(parent);
  const roots: TreeNode[] = [];
  nodes.forEach((n, i) => {
    n.cycle = inCycle[i + 1] === 1;
    if (parent[i + 1] === 0) roots.push(n);
    else if (!cuts.includes(i + 1)) nodes[parent[i + 1]! - 1]!.children.push(n);
  });
  for (const c of cuts) roots.push(nodes[c - 1]!);
  const cmd = await db.scalar<string | null>('SELECT command FROM runs WHERE trace_id = $t', { t: traceId });
  return { trace_id: traceId, command: cmd, roots, spans: nodes.length };
}

/**
 * The parent cycles of a tree given as each span's parent place (`parent[i]`, 1-based, 0 for a
 * root): the spans on a loop of parent ids (which no root reaches), and per loop its earliest span
 * (least place), where the loop is cut to show it as a tree. Spans under a loop but not on it are
 * not in a cycle: they hang below it as usual. An explicit walk: a chain may be deeper than the
 * call stack.
 */
export function cycleCuts(parent: Int32Array): { inCycle: Uint8Array; cuts: number[] } {
  const n = parent.length - 1;
  // 1: on the path being followed, 2: done
  const state = new Uint8Array(n + 1);
  const inCycle = new Uint8Array(n + 1);
  const cuts: number[] = [];
  const path: number[] = [];
  for (let i = 1; i <= n; i++) {
    let j = i;
    while (j !== 0 && state[j] === 0) {
      state[j] = 1;
      path.push(j);
      j = parent[j]!;
    }
    if (j !== 0 && state[j] === 1) {
      let least = j;
      let k = j;
      do {
        inCycle[k] = 1;
        least = Math.min(least, k);
        k = parent[k]!;
      } while (k !== j);
      cuts.push(least);
    }
    for (const p of path) state[p] = 2;
    path.length = 0;
  }
  return { inCycle, cuts: cuts.sort((a, b) => a - b) };
}

/** The fact of a span in a parent cycle, after its other facts. */
export const CYCLE_FACT = 'CYCLE (its parent ids loop)';

/** One trace's tree as text lines, built in DuckDB: what renderTreeText prints. */
export interface TreeText {
  trace_id: string;
  command: string | null;
  spans: number;
  /**
   * In print order: the line up to its duration, and the duration in ms (null: none). Laid out as
   * they are read, once: a large tree is written a piece at a time, never held whole.
   */
  lines: Iterable<TreeLine>;
}

/** A line of the text tree up to its duration, and the duration in ms (null: none). */
export type TreeLine = [text: string, durationMs: number | null];

/**
 * A span's facts, the [...] of its line after the name (outcome, a source's failed or warned freshness, skip, test, error, NOT ENDED,
 * ORPHAN, ends before it starts, the NodeProcessed link, a mark such as the place on the critical path). The duration is
 * formatted in JS (formatDuration), whose rounding SQL's printf does not share.
 */
const facts = (mark = '') => `nullif(concat_ws(', ',
    nullif(node_outcome, ''),
    CASE WHEN freshness_outcome IN ('failed', 'warned') THEN 'freshness ' || freshness_outcome END,
    CASE WHEN skip_reason <> '' THEN 'skip=' || skip_reason || CASE WHEN upstream_unique_id <> '' THEN ' (upstream ' || upstream_unique_id || ')' ELSE '' END END,
    CASE WHEN test_outcome <> '' THEN 'test=' || test_outcome || CASE WHEN coalesce(failing_rows, 0) <> 0 THEN ' (' || failing_rows || ' failing rows)' ELSE '' END END,
    CASE WHEN coalesce(node_outcome, '') = '' AND status_code = 2 THEN 'error' || CASE WHEN status_message <> '' THEN ': ' || status_message ELSE '' END END,
    CASE WHEN ended IS NOT TRUE THEN 'NOT ENDED' END,
    CASE WHEN orphan IS TRUE THEN 'ORPHAN (parent ' || coalesce(parent_span_id, 'null') || ' not in the data)' END,
    CASE WHEN end_ns < start_ns THEN 'ends before it starts' END,
    CASE WHEN kind = 'node_evaluated' AND linked_span_id <> '' THEN '-> processed ' || linked_span_id END${mark}), '')`;

/**
 * The tree as lines. DuckDB gives each span of the trace, in start order, its line label, duration
 * and parent (as the span's place in that order: a span id names the last span that has it), read through
 * Db.rowsText; JS walks the tree on integer arrays from the roots (spans whose parent is not in
 * the trace, then the cut of each parent cycle: cycleCuts), siblings in start order, and puts the
 * prefixes (`├─ `, `│  `) in front of the labels. With `maxDepth`,
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
      SELECT parent_span_id, span_id, CAST(duration_ms AS VARCHAR) AS d, coalesce(span_name, '(unnamed span)') AS name,
        ${facts(marks ? ', m.fact' : '')} AS facts,
        row_number() OVER (ORDER BY start_ns, span_id) AS n
      FROM spans LEFT JOIN ${traceFreshness} f USING (span_id) ${marks ? `LEFT JOIN ${marks} m USING (span_id)` : ''} WHERE spans.trace_id = $t
    ),
    ids AS (SELECT span_id, max(n) AS n FROM s GROUP BY span_id)
    SELECT s.n, CASE WHEN s.parent_span_id <> '' THEN ids.n END AS parent_n, s.name, s.facts, s.d
    FROM s LEFT JOIN ids ON ids.span_id = s.parent_span_id`;
  const spans = await db.rowsText(sql, ['parent_n', 'name', 'facts', 'd'], 'n', { t: traceId }, ([p, l, f, d]): TreeSpan => [
    p ? Number(p) : 0,
    l ?? '',
    f,
    d ? Number(d) : null,
  ]);
  const lines = layOutTree(spans, cutAt);
  const head = await db.one<{ command: string | null; spans: number }>(
    `SELECT (SELECT command FROM runs WHERE trace_id = $t) AS command, (SELECT count(*)::INTEGER FROM spans WHERE trace_id = $t) AS spans`,
    { t: traceId },
  );
  return { trace_id: traceId, command: head?.command ?? null, spans: head?.spans ?? 0, lines };
}

/**
 * The deepest level drawn indented (the model's depths stop there too): deeper spans are drawn at
 * that indentation, each line saying its depth. Drawn in full, a chain of thousands of spans would
 * print its depth squared in blanks.
 */
const DRAWN_DEPTH = 64;

/** A span of the text tree: its parent's place in start order (1-based; 0 for a root), name, facts, duration. */
type TreeSpan = [parent: number, name: string, facts: string | null, durationMs: number | null];

/**
 * Lines of a tree whose spans are given in start order (span i, 1-based, is spans[i - 1]).
 * Depth-first from the roots, children in start order; then from the cut of each parent cycle.
 */
function* layOutTree(spans: TreeSpan[], cutAt: number): Generator<TreeLine> {
  const n = spans.length;
  const parent = new Int32Array(n + 1);
  for (let i = 1; i <= n; i++) parent[i] = spans[i - 1]![0];
  const { inCycle, cuts } = cycleCuts(parent);
  // the cut of a loop is a root after the others: the children of place n + 1
  for (const c of cuts) parent[c] = n + 1;
  // children of each span in start order, as slices of one array (counting sort by parent)
  const first = new Int32Array(n + 3);
  for (let i = 1; i <= n; i++) first[parent[i]! + 1]!++;
  for (let p = 1; p <= n + 2; p++) first[p]! += first[p - 1]!;
  const kids = new Int32Array(n);
  const fill = first.slice(0, n + 2);
  for (let i = 1; i <= n; i++) kids[fill[parent[i]!]!++] = i;
  const childCount = (p: number) => first[p + 1]! - first[p]!;
  const line = (i: number, depth: number, prefix: string): TreeLine => {
    const [, name, f, ms] = spans[i - 1]!;
    const all = inCycle[i] ? (f ? `${f}, ${CYCLE_FACT}` : CYCLE_FACT) : f;
    return [prefix + (depth > DRAWN_DEPTH ? `[depth ${depth}] ` : '') + name + (all ? `  [${all}]` : ''), ms];
  };

  // explicit stack (a deep chain must not overflow the JS stack): span, depth, line prefix, prefix of its children
  const stack: [number, number, string, string][] = [];
  for (const root of [n + 1, 0]) for (let k = first[root + 1]! - 1; k >= first[root]!; k--) stack.push([kids[k]!, 0, '', '']);
  while (stack.length > 0) {
    const [span, depth, prefix, childPrefix] = stack.pop()!;
    if (depth <= cutAt) yield line(span, depth, prefix);
    const count = childCount(span);
    if (depth === cutAt && count > 0) yield [`${childPrefix}└─ … ${plural(count, 'child span')}`, null];
    if (depth >= cutAt) continue;
    for (let k = first[span + 1]! - 1; k >= first[span]!; k--) {
      const last = k === first[span + 1]! - 1;
      const deeper = depth + 1 < DRAWN_DEPTH ? childPrefix + (last ? '   ' : '│  ') : childPrefix;
      stack.push([kids[k]!, depth + 1, childPrefix + (last ? '└─ ' : '├─ '), deeper]);
    }
  }
}
