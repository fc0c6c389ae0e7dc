/**
 * Derived relations (spans, logs, nodes, runs) rebuilt for the traces a load touched. Everything
 * runs inside DuckDB; `_touched(trace_id)` names the traces to rebuild.
 */
import { ATTRIBUTES, ATTRIBUTES_JOIN, attributesOfRows } from './attributes-join.js';
import type { Db } from './db.js';
import { normalizeSelect } from './normalize-sql.js';

const TOUCHED = `(SELECT trace_id FROM _touched)`;

/**
 * SpanStart and SpanEnd merged without copying: the spans view reads the record marked span_row. At
 * insert every SpanEnd is marked; a SpanStart stands in (kept, ended = false) only for a span that
 * never ended: an anti-join on keys (a window over all records cost twice as much).
 */
function unendedStarts(filter: string): [string, string][] {
  return [
    // their row ids, kept for the next steps: when there are none (the usual case), those end at once
    ['derive unended starts', `
CREATE OR REPLACE TEMP TABLE _unended AS SELECT rowid AS r FROM record_rows
WHERE record_type = 'SpanStart' AND span_id IS NOT NULL ${filter}
  AND (trace_id, span_id) NOT IN (SELECT trace_id, span_id FROM record_rows WHERE record_type = 'SpanEnd' AND span_id IS NOT NULL ${filter})`],
    ['derive unended starts', 'UPDATE record_rows SET span_row = true WHERE rowid IN (SELECT r FROM _unended)'],
  ];
}

/**
 * Traces that were derived before (a later file or batch adds to them): their span rows, orphans and
 * depths are worked out afresh.
 */
const RESET = `
UPDATE record_rows SET span_row = record_type = 'SpanEnd' AND span_id IS NOT NULL, orphan = NULL, depth = NULL
WHERE trace_id IN ${TOUCHED} AND record_type IN ('SpanStart', 'SpanEnd')`;

/** A span with several SpanEnds (the same run from two inputs): the first input's stands for it. */
const DUPLICATE_ENDS = `
UPDATE record_rows SET span_row = false
WHERE rowid IN (
  SELECT rowid FROM record_rows
  WHERE record_type = 'SpanEnd' AND span_id IS NOT NULL AND trace_id IN ${TOUCHED}
  QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY file_id, rowid) > 1)`;

/** Normalized columns of spans that never ended: their SpanStart was not normalized at insert. */
const UNENDED = `
UPDATE record_rows r SET unique_id = n.unique_id, phase = n.phase, node_outcome = n.node_outcome, skip_reason = n.skip_reason,
  upstream_unique_id = n.upstream_unique_id, test_outcome = n.test_outcome, failing_rows = n.failing_rows,
  resource_type = n.resource_type, name = n.name, relative_path = n.relative_path, materialization = n.materialization,
  rows_affected = n.rows_affected, in_selection = n.in_selection, attr_duration_ms = n.attr_duration_ms
FROM (${normalizeSelect(`SELECT r.rowid AS record_rowid, record_type, span_id, event_type, span_name, links, a.attributes
  FROM record_rows r JOIN ${attributesOfRows(`SELECT r FROM _unended`)} a
    ON a.record_rowid = r.rowid`, { spanStarts: true })}) n
WHERE r.rowid = n.record_rowid`;

/**
 * Orphans (a parent id that is not a span of the same trace) and depth from the roots (orphans start
 * their own subtree), in one update. Bounded to survive id cycles. Each span's parent is resolved
 * once to its row id on a narrow copy of the links (the trace as a small integer), so the walk joins
 * integers: 0.3-0.4 s on 485k spans, against 0.47 s joining span ids at every level (and 0.66 s with
 * 32-character trace ids and an update by (trace, span)).
 */
const DEPTH = [
  `CREATE OR REPLACE TEMP TABLE _span_links AS
   WITH l AS (
     SELECT x.t, s.record_rowid AS r, s.span_id AS sid, s.parent_span_id AS pid
     FROM spans s JOIN (SELECT trace_id, row_number() OVER () AS t FROM (SELECT DISTINCT trace_id FROM _touched)) x USING (trace_id)
   )
   SELECT c.r, p.r AS pr, c.pid IS NOT NULL AND p.r IS NULL AS orphan FROM l c LEFT JOIN l p ON p.t = c.t AND p.sid = c.pid`,
  `UPDATE record_rows s SET depth = d.depth, orphan = d.orphan FROM (
     WITH RECURSIVE walk(r, depth, orphan) AS (
       SELECT r, 0, orphan FROM _span_links WHERE pr IS NULL
       UNION ALL
       SELECT c.r, w.depth + 1, false FROM _span_links c JOIN walk w ON c.pr = w.r
       WHERE w.depth < 64
     ) SELECT r, min(depth) AS depth, bool_or(orphan) AS orphan FROM walk GROUP BY r
   ) d WHERE s.rowid = d.r`,
  'DROP TABLE _span_links',
];

/**
 * The nodes relation: node spans with their node columns and the text of their ERROR logs, as a
 * SELECT over spans (`traces`, a subquery, limits the spans and logs read). The nodes view is this
 * select; the materialized node_results picks one row per node from it. `record_rowid` identifies the span.
 */
export function nodesSelect(traces?: string): string {
  const where = (col: string) => (traces ? `AND ${col} IN ${traces}` : '');
  return `
WITH errs AS (
  -- ERROR log records only (few): their text is the node's error.
  SELECT trace_id, json_extract_string(${ATTRIBUTES}, '$.unique_id') AS unique_id, string_agg(body, '\n' ORDER BY time_ns) AS error_text
  FROM record_rows r ${ATTRIBUTES_JOIN}
  WHERE record_type = 'LogRecord' ${where('trace_id')}
    AND (severity_number >= 17 OR severity_text = 'ERROR') AND body IS NOT NULL AND body <> ''
  GROUP BY 1, 2 HAVING unique_id IS NOT NULL -- not GROUP BY ALL: it would also group by the ORDER BY column
)
SELECT s.trace_id, s.span_id, CASE s.kind WHEN 'node_processed' THEN 'processed' ELSE 'evaluated' END AS kind,
  s.unique_id, coalesce(s.resource_type, split_part(s.unique_id, '.', 1)) AS resource_type,
  coalesce(s.name, split_part(s.unique_id, '.', -1)) AS name,
  s.phase, s.node_outcome, s.skip_reason, s.upstream_unique_id, s.test_outcome, s.failing_rows, s.start_ns, s.end_ns,
  -- NodeProcessed spans open when the run schedules the node: its own duration_ms (sum of evaluations) is the work
  CASE WHEN s.kind = 'node_processed' THEN coalesce(s.attr_duration_ms, s.duration_ms) ELSE s.duration_ms END AS duration_ms,
  s.duration_ms AS wall_ms, s.ended, s.relative_path, s.materialization, s.rows_affected,
  CASE WHEN s.kind = 'node_evaluated' THEN s.linked_span_id END AS processed_span_id, s.in_selection,
  CASE WHEN s.node_outcome = 'error' OR s.status_code = 2 THEN coalesce(e.error_text, s.status_message) END AS error_text,
  s.record_rowid
FROM spans s LEFT JOIN errs e ON e.trace_id = s.trace_id AND e.unique_id = s.unique_id
WHERE s.kind IN ('node_evaluated', 'node_processed') ${where('s.trace_id')}`;
}

/**
 * Per (trace, node): the NodeProcessed, else the last-ending evaluation. arg_max picks the span's
 * row id only and the rows are fetched by it: carrying whole rows through the aggregate cost twice
 * as much (1M records: 0.46-0.55 s against 0.26-0.29 s), and a window three times as much.
 */
const NODE_RESULTS = `
INSERT INTO node_results
SELECT * EXCLUDE (record_rowid) FROM (${nodesSelect(TOUCHED)}) WHERE record_rowid IN (
  SELECT arg_max(record_rowid, (kind = 'node_processed', coalesce(end_ns, -9223372036854775808), coalesce(start_ns, -9223372036854775808)))
  FROM spans WHERE trace_id IN ${TOUCHED} AND kind IN ('node_evaluated', 'node_processed') AND unique_id IS NOT NULL
  GROUP BY trace_id, unique_id)`;

const RUNS = `
INSERT INTO runs
WITH inv AS (
  SELECT trace_id, arg_min(record_rowid, start_ns) AS record_rowid FROM spans WHERE trace_id IN ${TOUCHED} AND kind = 'invocation' GROUP BY ALL
),
proc AS (
  SELECT trace_id, arg_min(record_rowid, start_ns) AS record_rowid FROM spans WHERE trace_id IN ${TOUCHED} AND kind = 'process' GROUP BY ALL
),
s AS (
  SELECT i.trace_id, a.attributes, sp.start_ns, sp.end_ns, sp.ended, sp.status_code, sp.status_message
  FROM inv i JOIN ${attributesOfRows('SELECT record_rowid FROM inv')} a USING (record_rowid) JOIN spans sp ON sp.record_rowid = i.record_rowid
),
pv AS (
  SELECT p.trace_id, json_extract_string(a.attributes, '$.version') AS version
  FROM proc p JOIN ${attributesOfRows('SELECT record_rowid FROM proc')} a USING (record_rowid)
),
bounds AS (
  SELECT trace_id, min(start_ns) AS start_ns, max(coalesce(end_ns, start_ns)) AS end_ns, count(*) AS spans,
    string_agg(DISTINCT f.path, ', ') AS files
  FROM spans JOIN files f USING (file_id) WHERE trace_id IN ${TOUCHED} GROUP BY ALL
),
counts AS (
  SELECT trace_id, count(*) AS nodes,
    count(*) FILTER (WHERE node_outcome = 'success') AS success,
    count(*) FILTER (WHERE node_outcome = 'error') AS error,
    count(*) FILTER (WHERE node_outcome = 'skipped') AS skipped,
    count(*) FILTER (WHERE node_outcome = 'canceled') AS canceled,
    count(*) FILTER (WHERE test_outcome = 'passed') AS tests_passed,
    count(*) FILTER (WHERE test_outcome = 'warned') AS tests_warned,
    count(*) FILTER (WHERE test_outcome = 'failed') AS tests_failed
  FROM node_results WHERE trace_id IN ${TOUCHED} GROUP BY ALL
)
SELECT b.trace_id,
  coalesce(json_extract_string(s.attributes, '$.invocation_id'),
           regexp_replace(b.trace_id, '^(.{8})(.{4})(.{4})(.{4})(.{12})$', '\\1-\\2-\\3-\\4-\\5')) AS invocation_id,
  coalesce(json_extract_string(s.attributes, '$.eval_args.command'),
           split_part(json_extract_string(s.attributes, '$.raw_command'), ' ', 2)) AS command,
  json_extract_string(s.attributes, '$.raw_command') AS raw_command,
  coalesce(pv.version, json_extract_string(s.attributes, '$.process_info.version')) AS engine_version,
  coalesce(s.start_ns, b.start_ns), coalesce(s.end_ns, b.end_ns),
  (coalesce(s.end_ns, b.end_ns) - coalesce(s.start_ns, b.start_ns)) / 1e6,
  coalesce(s.ended, false), s.status_code, s.status_message, b.spans,
  coalesce(c.nodes, 0), coalesce(c.success, 0), coalesce(c.error, 0), coalesce(c.skipped, 0), coalesce(c.canceled, 0),
  coalesce(c.tests_passed, 0), coalesce(c.tests_warned, 0), coalesce(c.tests_failed, 0),
  coalesce(c.error, 0) > 0 OR coalesce(c.tests_failed, 0) > 0 OR coalesce(s.status_code, 0) = 2 AS failed,
  b.files
FROM bounds b LEFT JOIN s USING (trace_id)
LEFT JOIN pv ON pv.trace_id = b.trace_id
LEFT JOIN counts c ON c.trace_id = b.trace_id`;

export interface DeriveOptions {
  /** every trace in record_rows is in _touched (the model was empty before this load) */
  fresh?: boolean;
  /**
   * Send every step in one call (the receiver, whose busy event loop held each call back by 50-150
   * ms). Otherwise the update of spans that never ended is sent only when there are some: planning
   * that statement alone took 20-25 ms.
   */
  oneCall?: boolean;
}

/**
 * Rebuild every derived relation for the traces in `_touched`. The steps go to DuckDB as scripts
 * (Db.script), not a call per statement: the receiver derives while its event loop is busy, and a
 * round trip per statement cost more than the rebuild itself.
 */
export async function deriveTouched(db: Db, opts: DeriveOptions = {}): Promise<void> {
  // Earlier span rows, orphans and depths are only possible when a touched trace was derived before
  // (then it has a run), and duplicated spans when a touched trace came from two inputs (files, batches).
  const check = await db.one<{ dup: boolean; existed: boolean }>(
    `SELECT count(*) > count(DISTINCT trace_id) AS dup,
       ${opts.fresh ? 'false' : `EXISTS (SELECT 1 FROM runs WHERE trace_id IN ${TOUCHED})`} AS existed FROM _touched`,
  );
  const again = Boolean(check?.dup || check?.existed);
  const head: [string, string][] = [
    ...['node_results', 'runs'].map((t): [string, string] => [`derive: clear ${t}`, `DELETE FROM ${t} WHERE trace_id IN ${TOUCHED}`]),
    // Derived rows have no order of their own: unordered inserts run in parallel.
    ['derive: unordered', 'SET preserve_insertion_order = false'],
    ...(again ? [['derive: reset spans', RESET] as [string, string], ['derive: duplicate ends', DUPLICATE_ENDS] as [string, string]] : []),
    // `filter` is empty when every trace in the model was touched (a fresh load).
    ...unendedStarts(opts.fresh ? '' : `AND trace_id IN ${TOUCHED}`),
  ];
  const unended: [string, string][] = [['derive unended', UNENDED]];
  const tail: [string, string][] = [
    ['derive unended', 'DROP TABLE _unended'],
    ...DEPTH.map((sql): [string, string] => ['derive orphans and depth', sql]),
    ['derive node_results', NODE_RESULTS],
    ['derive runs', RUNS],
    ['derive: ordered', 'RESET preserve_insertion_order'],
  ];
  try {
    if (opts.oneCall) await db.script([...head, ...unended, ...tail]);
    else {
      await db.script(head);
      const any = (await db.scalar<number>('SELECT count(*)::INTEGER FROM _unended')) > 0;
      await db.script([...(any ? unended : []), ...tail]);
    }
  } catch (e) {
    await db.run('RESET preserve_insertion_order').catch(() => undefined);
    throw e;
  }
}
