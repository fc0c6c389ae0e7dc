/**
 * The span tree of one trace for the explorer, kept inside DuckDB: a temp table in preorder (one
 * row per span, `pos` = its place in depth-first order). The UI holds only the tree's shape (depth
 * and kind per position, in typed arrays: a few bytes per span) and fetches row content for the
 * positions on screen, so a 100k-span trace never crosses into JS as objects.
 */
import type { Db } from '../../store/db.js';
import type { OutcomeColumns } from '../../store/outcome-columns.js';
import { sqlIn } from '../../store/sql-text.js';
import { cycleCuts, traceFreshness } from '../tree.js';

export const KINDS = ['process', 'invocation', 'phase', 'node_processed', 'node_evaluated', 'query', 'other'] as const;
export type SpanKind = (typeof KINDS)[number];

export interface TreeShape {
  table: string;
  traceId: string;
  count: number;
  depth: Uint8Array;
  kind: Uint8Array;
  /** parent position, -1 for roots */
  parent: Int32Array;
  /** number of descendants */
  size: Int32Array;
  /** trace time axis (ms from the first start) */
  spanMs: number;
  /** spans that have not ended (a run still being written) */
  running: number;
}

export interface TreeRow extends OutcomeColumns {
  pos: number;
  span_id: string;
  name: string;
  kind: string;
  off_ms: number;
  dur_ms: number | null;
  ended: boolean;
  orphan: boolean;
  /** on a loop of parent ids (as `runlens tree` marks CYCLE) */
  cycle: boolean;
  status_code: number | null;
  status_message: string | null;
  unique_id: string | null;
  resource_type: string | null;
  relative_path: string | null;
  /** sources: passed, warned or failed (source freshness) */
  freshness_outcome: string | null;
}

let generation = 0;

/**
 * The spans of a trace's parent cycles, by id: those on a loop, and each loop's cut (its earliest
 * span), found by cycleCuts as `runlens tree` does. Parent places come from DuckDB as one string.
 */
async function traceCycles(db: Db, traceId: string): Promise<{ members: string[]; cuts: string[] }> {
  const rows = await db.rowsText(
    `WITH s AS (SELECT span_id, parent_span_id, row_number() OVER (ORDER BY start_ns, span_id) AS n FROM spans WHERE trace_id = $t),
       ids AS (SELECT span_id, max(n) AS n FROM s GROUP BY span_id)
     SELECT s.n, s.span_id, CASE WHEN s.parent_span_id <> '' THEN ids.n END AS parent_n FROM s LEFT JOIN ids ON ids.span_id = s.parent_span_id`,
    ['span_id', 'parent_n'],
    'n',
    { t: traceId },
    ([id, p]): [string, number] => [id!, p ? Number(p) : 0],
  );
  const parent = new Int32Array(rows.length + 1);
  rows.forEach(([, p], i) => (parent[i + 1] = p));
  const { inCycle, cuts } = cycleCuts(parent);
  const members: string[] = [];
  for (let i = 1; i <= rows.length; i++) if (inCycle[i]) members.push(rows[i - 1]![0]);
  return { members, cuts: cuts.map((c) => rows[c - 1]![0]) };
}

/**
 * Build the preorder table of a trace. Children are ordered by start time; orphans in start order
 * among the other roots, then each parent cycle cut at its earliest span (as `runlens tree` shows
 * them). Depth is capped at 250 (typed array): spans deeper are listed as roots at the end.
 */
export async function buildTreeShape(db: Db, traceId: string): Promise<TreeShape> {
  const table = `_rl_tree_${++generation}`;
  const { members, cuts } = await traceCycles(db, traceId);
  const isCut = cuts.length ? sqlIn('span_id', cuts) : 'false';
  await db.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
     WITH RECURSIVE r AS (
       SELECT span_id, parent_span_id, start_ns, end_ns, ${isCut} AS is_cut, orphan OR parent_span_id IS NULL OR ${isCut} AS is_root
       FROM spans WHERE trace_id = $t),
     -- roots and orphans are siblings at the top (one partition), as runlens tree shows them; the cuts of cycles after them
     s AS (SELECT *, row_number() OVER (PARTITION BY CASE WHEN NOT is_root THEN parent_span_id END ORDER BY is_cut, start_ns, span_id) AS rk,
       row_number() OVER (ORDER BY start_ns, span_id) AS n FROM r),
     walk(span_id, path) AS (
       SELECT span_id, [rk] FROM s WHERE is_root
       UNION ALL
       SELECT c.span_id, list_append(w.path, c.rk) FROM s c JOIN walk w ON c.parent_span_id = w.span_id
       WHERE NOT c.is_root AND len(w.path) < 250
     ),
     placed AS (
       SELECT span_id, min(path) AS path FROM walk GROUP BY span_id
       -- spans deeper than the cap: shown as roots at the end, in start order
       UNION ALL SELECT span_id, [1000000000 + n] FROM s WHERE span_id NOT IN (SELECT span_id FROM walk)
     ),
     t0 AS (SELECT min(start_ns) AS t0 FROM spans WHERE trace_id = $t)
     SELECT (row_number() OVER (ORDER BY p.path) - 1)::INTEGER AS pos, (len(p.path) - 1)::INTEGER AS depth,
       sp.span_id, coalesce(sp.span_name, '(unnamed span)') AS name, sp.kind,
       (sp.start_ns - t0.t0) / 1e6 AS off_ms, sp.duration_ms AS dur_ms, sp.ended, sp.orphan, ${members.length ? sqlIn('sp.span_id', members) : 'false'} AS cycle,
       sp.status_code, sp.status_message, sp.unique_id, sp.phase, sp.node_outcome, sp.skip_reason, sp.upstream_unique_id, sp.test_outcome, sp.failing_rows,
       sp.resource_type, sp.relative_path, sp.start_ns, sp.end_ns, f.freshness_outcome
     FROM placed p JOIN spans sp ON sp.trace_id = $t AND sp.span_id = p.span_id LEFT JOIN ${traceFreshness} f ON f.span_id = sp.span_id, t0
     ORDER BY pos`,
    { t: traceId },
  );
  // The shape as two strings (one char per span): far cheaper than a row object per span.
  const kindCase = KINDS.map((k, i) => `WHEN '${k}' THEN ${i}`).join(' ');
  const shape = await db.one<{ n: number; d: string | null; k: string | null; span_ms: number | null; running: number }>(
    `SELECT count(*)::INTEGER AS n,
       string_agg(chr(48 + least(depth, 250)), '' ORDER BY pos) AS d,
       string_agg(chr(48 + CASE kind ${kindCase} ELSE 6 END), '' ORDER BY pos) AS k,
       (max(coalesce(end_ns, start_ns)) - min(start_ns)) / 1e6 AS span_ms,
       count(*) FILTER (WHERE NOT ended)::INTEGER AS running
     FROM ${table}`,
  );
  const n = shape?.n ?? 0;
  const depth = new Uint8Array(n);
  const kind = new Uint8Array(n);
  const ds = shape?.d ?? '';
  const ks = shape?.k ?? '';
  for (let i = 0; i < n; i++) {
    depth[i] = ds.charCodeAt(i) - 48;
    kind[i] = ks.charCodeAt(i) - 48;
  }
  const { parent, size } = shapeLinks(depth);
  return { table, traceId, count: n, depth, kind, parent, size, spanMs: shape?.span_ms ?? 0, running: shape?.running ?? 0 };
}

/** Parent and subtree size from preorder depths (a stack walk, O(n)). */
export function shapeLinks(depth: Uint8Array): { parent: Int32Array; size: Int32Array } {
  const n = depth.length;
  const parent = new Int32Array(n).fill(-1);
  const size = new Int32Array(n);
  const stack: number[] = [];
  for (let i = 0; i < n; i++) {
    while (stack.length && depth[stack[stack.length - 1]!]! >= depth[i]!) stack.pop();
    parent[i] = stack.length ? stack[stack.length - 1]! : -1;
    stack.push(i);
  }
  for (let i = n - 1; i >= 0; i--) {
    const p = parent[i]!;
    if (p >= 0) size[p] = size[p]! + size[i]! + 1;
  }
  return { parent, size };
}

export async function dropTreeShape(db: Db, shape: TreeShape): Promise<void> {
  await db.run(`DROP TABLE IF EXISTS ${shape.table}`);
}

const ROW_COLUMNS = `pos, span_id, name, kind, off_ms, dur_ms, ended, orphan, cycle, status_code, status_message, unique_id, phase,
  node_outcome, skip_reason, upstream_unique_id, test_outcome, failing_rows, resource_type, relative_path, freshness_outcome`;

/** Row content for the given positions (the window on screen plus a margin). */
export async function fetchRows(db: Db, shape: TreeShape, positions: number[]): Promise<TreeRow[]> {
  if (positions.length === 0) return [];
  const ints = positions.map((p) => Math.trunc(p)).join(',');
  // A range predicate first lets DuckDB skip row groups (the table is stored in pos order).
  const lo = Math.min(...positions);
  const hi = Math.max(...positions);
  return db.all<TreeRow>(`SELECT ${ROW_COLUMNS} FROM ${shape.table} WHERE pos BETWEEN ${lo} AND ${hi} AND pos IN (${ints})`);
}

/** Positions of every span whose unique_id or name contains `text` (case-insensitive), in tree order. */
export async function searchPositions(db: Db, shape: TreeShape, text: string): Promise<Int32Array> {
  if (!text) return new Int32Array(0);
  return positionsWhere(db, shape, 'contains(lower(coalesce(unique_id, \'\')), $q) OR contains(lower(name), $q)', { q: text.toLowerCase() });
}

/**
 * Positions of the rows matching `where`, in tree order. One joined string from DuckDB rather
 * than a row object per match: a search or filter may match most of a 100k-span tree.
 */
async function positionsWhere(db: Db, shape: TreeShape, where: string, params?: Record<string, string>): Promise<Int32Array> {
  const joined = await db.scalar<string | null>(`SELECT string_agg(pos::VARCHAR, ',' ORDER BY pos) FROM ${shape.table} WHERE ${where}`, params);
  return joined ? Int32Array.from(joined.split(','), Number) : new Int32Array(0);
}

/** Filters over the tree; empty means no filter. */
export interface TreeFilter {
  outcome?: string;
  phase?: string;
  resourceType?: string;
  onlyFailures?: boolean;
}

export function filterActive(f: TreeFilter): boolean {
  return Boolean(f.outcome || f.phase || f.resourceType || f.onlyFailures);
}

/**
 * SQL predicate of a "failure": node error, a source's failed freshness (the gate's `error`), failed
 * test, or an error status on any span.
 */
export const FAILURE_SQL = `(node_outcome = 'error' OR freshness_outcome = 'failed' OR test_outcome = 'failed' OR status_code = 2)`;

/**
 * Outcome filter values: node outcomes, test outcomes, or `running`. A source's failed freshness is
 * an error (as the gate counts it), a warned one warned.
 */
export const OUTCOME_FILTERS = ['error', 'failed', 'warned', 'skipped', 'success', 'canceled', 'running'] as const;

function outcomeSql(o: string): string {
  switch (o) {
    case 'error':
      return `(node_outcome = 'error' OR freshness_outcome = 'failed')`;
    case 'warned':
      return `(test_outcome = 'warned' OR freshness_outcome = 'warned')`;
    case 'failed':
      return `test_outcome = '${o}'`;
    case 'running':
      return 'NOT ended';
    default:
      return `node_outcome = '${o.replaceAll("'", "''")}'`;
  }
}

/** Positions matching a filter (the UI adds their ancestors so matches keep their context). */
export async function filterPositions(db: Db, shape: TreeShape, f: TreeFilter): Promise<Int32Array> {
  const where: string[] = [];
  const params: Record<string, string> = {};
  if (f.onlyFailures) where.push(FAILURE_SQL);
  if (f.outcome) where.push(outcomeSql(f.outcome));
  if (f.phase) {
    where.push('phase = $phase');
    params.phase = f.phase;
  }
  if (f.resourceType) {
    where.push('resource_type = $rt');
    params.rt = f.resourceType;
  }
  if (where.length === 0) return new Int32Array(0);
  return positionsWhere(db, shape, where.join(' AND '), Object.keys(params).length ? params : undefined);
}

/** Values present in this trace, to cycle filters through: phases in the order their phase spans started. */
export async function facets(db: Db, shape: TreeShape): Promise<{ phases: string[]; resourceTypes: string[] }> {
  const rows = await db.all<{ f: string; v: string }>(
    `SELECT f, v FROM (
       SELECT 'phase' AS f, phase AS v, coalesce(min(start_ns) FILTER (WHERE kind = 'phase'), min(start_ns)) AS o
       FROM ${shape.table} WHERE phase IS NOT NULL GROUP BY phase
       UNION ALL SELECT 'rt', resource_type, NULL FROM ${shape.table} WHERE resource_type IS NOT NULL GROUP BY resource_type)
     ORDER BY f, o, v`,
  );
  return {
    phases: rows.filter((r) => r.f === 'phase').map((r) => r.v),
    resourceTypes: rows.filter((r) => r.f === 'rt').map((r) => r.v),
  };
}

/**
 * Where a node of this trace is, for jumps: its NodeProcessed span, else its error/last evaluation.
 * With `phase` (a row about one phase's evaluations), its evaluation in that phase first.
 */
export async function positionOfNode(db: Db, shape: TreeShape, uniqueId: string, phase?: string): Promise<number | undefined> {
  const r = await db.one<{ pos: number }>(
    `SELECT pos FROM ${shape.table} WHERE unique_id = $u AND kind IN ('node_processed', 'node_evaluated')
     ORDER BY (kind = 'node_evaluated' AND phase = $p) IS TRUE DESC, kind = 'node_processed' DESC, ${FAILURE_SQL} DESC, start_ns DESC LIMIT 1`,
    { u: uniqueId, p: phase ?? '' },
  );
  return r?.pos;
}

export async function positionOfSpan(db: Db, shape: TreeShape, spanId: string): Promise<number | undefined> {
  const r = await db.one<{ pos: number }>(`SELECT pos FROM ${shape.table} WHERE span_id = $s`, { s: spanId });
  return r?.pos;
}

/** Span ids at positions (to carry cursor and expansions over a rebuild while following a file). */
export async function spanIdsAt(db: Db, shape: TreeShape, positions: number[]): Promise<string[]> {
  if (positions.length === 0) return [];
  const rows = await db.all<{ span_id: string }>(
    `SELECT span_id FROM ${shape.table} WHERE pos IN (${positions.map((p) => Math.trunc(p)).join(',')}) ORDER BY pos`,
  );
  return rows.map((r) => r.span_id);
}

export async function positionsOfSpans(db: Db, shape: TreeShape, spanIds: string[]): Promise<number[]> {
  if (spanIds.length === 0) return [];
  // span ids are hex: a comma-joined string is a safe way to bind a list
  const rows = await db.all<{ pos: number }>(
    `SELECT pos FROM ${shape.table} WHERE list_contains(string_split($ids, ','), span_id) ORDER BY pos`,
    { ids: spanIds.join(',') },
  );
  return rows.map((r) => r.pos);
}
