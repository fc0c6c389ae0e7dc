/**
 * What the views (spans, nodes, node_results, logs) read, and the runs table, worked out for the
 * traces a load touched: the record that stands for each span, the span that is each node's result,
 * orphans and depths. Everything runs inside DuckDB; `_touched(trace_id)` names the traces.
 */
import { commandOfSql } from '../telemetry/command-line.js';
import { attributesOfRows } from './attributes-join.js';
import { takeWorseWithinSql } from './dedupe.js';
import type { Db } from './db.js';
import { sourceFreshness } from './freshness-sql.js';
import { ExecutionPhase } from '../telemetry/enums.js';
import { NODE_RESULT, linkedSpanId, normalizeSelect, usualDepth } from './normalize-sql.js';
import { sqlString } from './sql-text.js';

const TOUCHED = `(SELECT trace_id FROM _touched)`;

/**
 * The rules' version: part of the model's fingerprint (schema.ts), so that a --db model derived by
 * a runlens with other rules is derived again when opened. Raise it when a rule below changes.
 */
export const DERIVE_RULES = 13;

/**
 * SpanStart and SpanEnd merged without copying: the spans view reads the record marked span_row. At
 * insert every SpanEnd is marked; a SpanStart stands in (kept, ended = false) only for a span that
 * never ended: an anti-join on keys (cheaper than a window over all records). The anti-join runs
 * only when the SpanStarts' keys and the SpanEnds' keys differ as multisets, which a count and a sum
 * of 64-bit key hashes tell in one cheaper scan. Equal sums of different multisets have a chance of
 * about 2^-64, as for the content hash of a file.
 */
function unendedStarts(filter: string): Stage[] {
  const keys = `FROM record_rows WHERE record_type IN ('SpanStart', 'SpanEnd') AND span_id IS NOT NULL ${filter}`;
  return [{
    when: `SELECT (sum(CASE WHEN record_type = 'SpanStart' THEN hash(trace_id, span_id)::HUGEINT ELSE -hash(trace_id, span_id)::HUGEINT END) <> 0
      OR count(*) FILTER (WHERE record_type = 'SpanStart') <> count(*) FILTER (WHERE record_type = 'SpanEnd'))::INTEGER ${keys}`,
    then: [
      // their row ids, kept for the next steps
      ['derive unended starts', `
CREATE OR REPLACE TEMP TABLE _unended AS SELECT rowid AS r FROM record_rows
WHERE record_type = 'SpanStart' AND span_id IS NOT NULL ${filter}
  AND (trace_id, span_id) NOT IN (SELECT trace_id, span_id FROM record_rows WHERE record_type = 'SpanEnd' AND span_id IS NOT NULL ${filter})
-- a span started twice (a file concatenated with itself): the first SpanStart stands
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY file_id, rowid) = 1`],
      ['derive unended starts', 'UPDATE record_rows SET span_row = true WHERE rowid IN (SELECT r FROM _unended)'],
      { when: 'SELECT count(*) FROM _unended', then: [['derive unended', UNENDED]] },
      ['derive unended', 'DROP TABLE _unended'],
    ],
  }];
}

/**
 * Traces that were derived before (a later file or batch adds to them): their span rows, orphans and
 * depths are worked out afresh.
 */
const RESET = `
UPDATE record_rows SET span_row = record_type = 'SpanEnd' AND span_id IS NOT NULL, orphan = NULL, depth = ${usualDepth('kind')},
  node_result = ${NODE_RESULT}
WHERE trace_id IN ${TOUCHED} AND record_type IN ('SpanStart', 'SpanEnd')`;

/** The normalized columns UNENDED fills on a SpanStart. */
const UNENDED_COLUMNS = ['unique_id', 'phase', 'node_outcome', 'skip_reason', 'upstream_unique_id', 'test_outcome', 'failing_rows',
  'resource_type', 'name', 'relative_path', 'materialization', 'rows_affected', 'in_selection', 'attr_duration_ms'];

/**
 * SpanStarts of touched traces that an earlier derive found unended are back as inserted (their
 * columns empty): UNENDED fills them again for those still unended, and a span that ended since is
 * defined by its SpanEnd alone, as after one load of the same inputs.
 */
const RESET_STARTS = `
UPDATE record_rows SET ${UNENDED_COLUMNS.map((c) => `${c} = NULL`).join(', ')}
WHERE trace_id IN ${TOUCHED} AND record_type = 'SpanStart' AND coalesce(${UNENDED_COLUMNS.map((c) => `${c}::VARCHAR`).join(', ')}) IS NOT NULL`;

/**
 * A span with several SpanEnds (the same run from two inputs, or said twice in one): the first stands
 * for it, having taken what the others say worse (takeWorseWithinSql).
 */
const DUPLICATE_ENDS = `
UPDATE record_rows SET span_row = false, node_result = false
WHERE rowid IN (
  SELECT rowid FROM record_rows
  WHERE record_type = 'SpanEnd' AND span_id IS NOT NULL AND trace_id IN ${TOUCHED}
  QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY file_id, rowid) > 1)`;

/** Normalized columns of spans that never ended: their SpanStart was not normalized at insert. */
const UNENDED = `
UPDATE record_rows r SET ${UNENDED_COLUMNS.map((c) => `${c} = n.${c}`).join(', ')}
FROM (${normalizeSelect(`SELECT r.rowid AS record_rowid, record_type, span_id, event_type, span_name, status_code, links, a.attributes
  FROM record_rows r JOIN ${attributesOfRows(`SELECT r FROM _unended`)} a
    ON a.record_rowid = r.rowid`, { spanStarts: true })}) n
WHERE r.rowid = n.record_rowid`;

/**
 * Orphans (a parent id that is not a span of the same trace) and depth from the roots (orphans start
 * their own subtree). Each span's parent is resolved once to its row id on a narrow copy of the links
 * (the trace as a small integer), so the walk joins integers, cheaper than joining span and trace
 * ids at every level.
 */
const SPAN_LINKS = `
CREATE OR REPLACE TEMP TABLE _span_links AS
WITH l AS (
  SELECT x.t, s.record_rowid AS r, s.span_id AS sid, s.parent_span_id AS pid, s.depth AS usual
  FROM spans s JOIN (SELECT trace_id, row_number() OVER () AS t FROM (SELECT DISTINCT trace_id FROM _touched)) x USING (trace_id)
)
SELECT c.r, p.r AS pr, c.pid IS NOT NULL AND p.r IS NULL AS orphan, c.usual FROM l c LEFT JOIN l p ON p.t = c.t AND p.sid = c.pid`;

/** Only the orphans are written (few): the spans view reads a NULL orphan as false. */
const ORPHANS = `UPDATE record_rows SET orphan = true WHERE rowid IN (SELECT r FROM _span_links WHERE orphan)`;

/** Every span's depth from the roots, bounded to survive id cycles (spans in one are never reached). */
const WALK = `
CREATE OR REPLACE TEMP TABLE _walk AS
WITH RECURSIVE walk(r, depth, usual) AS (
  SELECT r, 0, usual FROM _span_links WHERE pr IS NULL
  UNION ALL
  SELECT c.r, w.depth + 1, c.usual FROM _span_links c JOIN walk w ON c.pr = w.r
  WHERE w.depth < 64
) SELECT * FROM walk`;

/**
 * A span's depth is written only where it differs from the usual depth of its kind, stored at insert
 * (USUAL_DEPTH): few differ, and writing only those is much cheaper than writing every depth.
 * There is a walk row per span unless two spans of a trace share the parent's id (then a span has two
 * links and is reached once per path): its depth is then the least.
 */
const sharedParentIds = (filter: string) => `SELECT (SELECT count(*) FROM _span_links) - (SELECT count(*) FROM spans WHERE true ${filter})`;
const depths = (grouped: boolean): Step => ['derive depth', `
UPDATE record_rows s SET depth = d.depth FROM (
  ${grouped ? 'SELECT r, min(depth) AS depth FROM _walk GROUP BY r HAVING min(depth) IS DISTINCT FROM any_value(usual)' : 'SELECT r, depth FROM _walk WHERE depth IS DISTINCT FROM usual'}
) d WHERE s.rowid = d.r AND s.span_row`];

/**
 * Spans never reached (in a cycle of ids) have no depth. With a walk row per reached span their count
 * is the links' less the walk's; with shared parent ids the counts tell nothing and the update runs.
 */
const UNREACHED: Step = ['derive depth', `
UPDATE record_rows SET depth = NULL WHERE rowid IN (SELECT r FROM _span_links WHERE r NOT IN (SELECT r FROM _walk)) AND depth IS NOT NULL`];
const depthsOfTree = (filter: string): Stage => ({
  when: sharedParentIds(filter),
  then: [depths(true), UNREACHED],
  else: [depths(false), { when: 'SELECT (SELECT count(*) FROM _span_links) - (SELECT count(*) FROM _walk)', then: [UNREACHED] }],
});

const NODE_KINDS = `kind IN ('node_evaluated', 'node_processed')`;

/**
 * A NodeProcessed result written without a unique_id (proto3 omits an empty string) takes the id of
 * the evaluations that link to it: else its node would be two results, the id-less one and one of
 * its evaluations. Evaluations of two nodes linking to one NodeProcessed name none.
 */
const idFromEvaluations = (filter: string): Step => ['derive node ids', `
UPDATE record_rows r SET unique_id = e.unique_id FROM (
  SELECT trace_id, ${linkedSpanId('links')} AS processed, min(unique_id) AS unique_id FROM record_rows
  WHERE span_row AND kind = 'node_evaluated' AND unique_id IS NOT NULL AND links IS NOT NULL ${filter}
    AND trace_id IN (SELECT trace_id FROM record_rows WHERE node_result AND unique_id IS NULL ${filter})
  GROUP BY ALL HAVING count(DISTINCT unique_id) = 1
) e
WHERE r.node_result AND r.unique_id IS NULL AND r.trace_id = e.trace_id AND r.span_id = e.processed`];

/**
 * node_result: at insert every NodeProcessed SpanEnd is its node's result (NODE_RESULT). Derive finds
 * the nodes (trace, unique_id) for which that does not hold, having none or more than one such span
 * (older engines wrote no NodeProcessed; a NodeProcessed that never ended), and picks theirs: the
 * ended NodeProcessed; else an evaluation that ended in error (the node failed, whatever its
 * NodeProcessed would say: a run cut off after it, or an engine that wrote none and skipped the
 * node's later phases); else the NodeProcessed still running; else the last-ending evaluation, one
 * that was not phase-skipped first. Of several ended NodeProcessed, each invocation's later-ending
 * one, and of those (a trace holding two commands' invocations) the worst: an error, then a failed
 * test, then the later-ending; a node that failed in one of the run's commands failed in the run.
 * The check is cheaper than building node_results as a table.
 */
const nodeGroups = (filter: string): Step => ['derive node results', `
CREATE OR REPLACE TEMP TABLE _node_groups AS SELECT trace_id, unique_id FROM record_rows
WHERE span_row AND ${NODE_KINDS} AND unique_id IS NOT NULL ${filter}
GROUP BY ALL HAVING count(*) FILTER (WHERE node_result) <> 1`];

/** The order of the engine's phases (their enum numbers), for evaluations of one node. */
const PHASE_ORDER = `CASE phase ${ExecutionPhase.entries.map((e) => `WHEN ${sqlString(e.short)} THEN ${e.number}`).join(' ')} END`;

/**
 * arg_max picks the span's row id only: carrying whole rows through the aggregate costs more. Of
 * evaluations, the later phase decides before the later clock (a clock that stepped back must not
 * put a RENDER evaluation after the RUN one); spans that end at the same time are told by what they
 * say, worst first, so that the line order never decides.
 */
const NODE_PICK: Step[] = [
  ['derive node results', `
UPDATE record_rows SET node_result = false
WHERE node_result AND (trace_id, unique_id) IN (SELECT trace_id, unique_id FROM _node_groups)`],
  ['derive node results', `
UPDATE record_rows SET node_result = true WHERE rowid IN (
  SELECT arg_max(record_rowid, (kind = 'node_processed' AND ended, kind = 'node_evaluated' AND ended AND node_outcome IS NOT DISTINCT FROM 'error',
    kind = 'node_processed', latest_of_invocation,
    kind = 'node_processed' AND node_outcome IS NOT DISTINCT FROM 'error', kind = 'node_processed' AND test_outcome IS NOT DISTINCT FROM 'failed',
    skip_reason IS DISTINCT FROM 'phase_skipped', coalesce(CASE WHEN kind = 'node_evaluated' THEN ${PHASE_ORDER} END, -1),
    coalesce(end_ns, -9223372036854775808), coalesce(start_ns, -9223372036854775808),
    node_outcome IS NOT DISTINCT FROM 'error', test_outcome IS NOT DISTINCT FROM 'failed', coalesce(node_outcome, ''), coalesce(test_outcome, ''), span_id))
  FROM (
    -- a NodeProcessed is a child of its invocation: the latest-ending of each invocation stands for it
    SELECT *, kind = 'node_processed' AND ended
      AND end_ns = max(CASE WHEN ended THEN end_ns END) OVER (PARTITION BY trace_id, unique_id, kind, parent_span_id) AS latest_of_invocation
    FROM spans JOIN _node_groups USING (trace_id, unique_id) WHERE ${NODE_KINDS})
  GROUP BY trace_id, unique_id)`],
];

/** One row per run; \`filter\` limits each step to the touched traces (see deriveTouched). */
const runs = (filter: string) => `
INSERT INTO runs
WITH inv AS (
  -- The run is its first invocation; a trace can hold more (one invocation id given to several
  -- commands): the run ended when every one did, and failed when any ended in ERROR (the first such
  -- gives its status).
  SELECT trace_id, arg_min(record_rowid, start_ns) AS record_rowid, bool_and(ended) AS ended,
    CASE WHEN bool_and(ended) THEN max(end_ns) END AS end_ns,
    arg_min(record_rowid, (NOT (ended AND coalesce(status_code = 2, false)), start_ns)) AS status_rowid
  FROM spans WHERE kind = 'invocation' ${filter} GROUP BY ALL
),
proc AS (
  SELECT trace_id, arg_min(record_rowid, start_ns) AS record_rowid FROM spans WHERE kind = 'process' ${filter} GROUP BY ALL
),
s AS (
  SELECT i.trace_id, a.attributes, sp.start_ns, i.end_ns, i.ended, st.status_code, st.status_message
  FROM inv i JOIN ${attributesOfRows('SELECT record_rowid FROM inv')} a USING (record_rowid) JOIN spans sp ON sp.record_rowid = i.record_rowid
    JOIN spans st ON st.record_rowid = i.status_rowid
),
pv AS (
  SELECT p.trace_id, json_extract_string(a.attributes, '$.version') AS version
  FROM proc p JOIN ${attributesOfRows('SELECT record_rowid FROM proc')} a USING (record_rowid)
),
bounds AS (
  -- a trace seen only through its log records (its spans not loaded, or not written yet) is a run too
  SELECT trace_id, min(t0) AS start_ns, max(t1) AS end_ns, count(*) FILTER (WHERE span) AS spans
  FROM (SELECT trace_id, start_ns AS t0, coalesce(end_ns, start_ns) AS t1, true AS span FROM spans WHERE true ${filter}
        UNION ALL
        SELECT trace_id, time_ns, time_ns, false FROM record_rows WHERE record_type = 'LogRecord' AND trace_id IS NOT NULL ${filter})
  GROUP BY ALL
),
sources AS (
  -- every file that holds a record of the run, the SpanStarts of spans another file ends included
  SELECT trace_id, string_agg(DISTINCT f.path, ', ' ORDER BY f.path) AS files
  FROM (SELECT DISTINCT trace_id, file_id FROM record_rows WHERE record_type IS NOT NULL AND trace_id IS NOT NULL ${filter})
  JOIN files f USING (file_id) GROUP BY ALL
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
  FROM record_rows WHERE node_result ${filter} GROUP BY ALL
),
stale AS (
  SELECT trace_id, count(*) AS sources
  FROM (${sourceFreshness(`SELECT rowid FROM record_rows WHERE node_result AND resource_type = 'source' ${filter}`)})
  WHERE freshness_outcome = 'failed' GROUP BY ALL
)
SELECT b.trace_id,
  coalesce(json_extract_string(s.attributes, '$.invocation_id'),
           regexp_replace(b.trace_id, '^(.{8})(.{4})(.{4})(.{4})(.{12})$', '\\1-\\2-\\3-\\4-\\5')) AS invocation_id,
  coalesce(json_extract_string(s.attributes, '$.eval_args.command'),
           ${commandOfSql("json_extract_string(s.attributes, '$.raw_command')")}) AS command,
  json_extract_string(s.attributes, '$.raw_command') AS raw_command,
  coalesce(pv.version, json_extract_string(s.attributes, '$.process_info.version')) AS engine_version,
  coalesce(s.start_ns, b.start_ns), coalesce(s.end_ns, b.end_ns),
  (coalesce(s.end_ns, b.end_ns) - coalesce(s.start_ns, b.start_ns)) / 1e6,
  coalesce(s.ended, false), s.status_code, s.status_message, b.spans,
  coalesce(c.nodes, 0), coalesce(c.success, 0), coalesce(c.error, 0), coalesce(c.skipped, 0), coalesce(c.canceled, 0),
  coalesce(c.tests_passed, 0), coalesce(c.tests_warned, 0), coalesce(c.tests_failed, 0),
  coalesce(c.error, 0) > 0 OR coalesce(c.tests_failed, 0) > 0 OR coalesce(s.status_code, 0) = 2 OR coalesce(st.sources, 0) > 0 AS failed,
  src.files
FROM bounds b LEFT JOIN s USING (trace_id)
LEFT JOIN sources src ON src.trace_id = b.trace_id
LEFT JOIN pv ON pv.trace_id = b.trace_id
LEFT JOIN counts c ON c.trace_id = b.trace_id
LEFT JOIN stale st ON st.trace_id = b.trace_id`;

type Step = [label: string, sql: string];

/**
 * A step, or stages that depend on the data: `when` (a count) decides between `then` and `else`.
 * The fix-ups are sent only when there is something to fix: even planning one has a cost.
 */
type Stage = Step | { when: string; then: Stage[]; else?: Stage[] };

/**
 * Run a plan in as few calls as possible (Db.script): the steps up to a condition go in one call.
 * `oneCall`: every condition's `then` (correct for any data, the no-op fix-ups included), all at once.
 */
async function runPlan(db: Db, plan: Stage[], oneCall: boolean): Promise<void> {
  let batch: Step[] = [];
  const run = async (stages: Stage[]): Promise<void> => {
    for (const stage of stages) {
      if (!('when' in stage)) {
        batch.push(stage);
        continue;
      }
      if (!oneCall) {
        await db.script(batch);
        batch = [];
      }
      const taken = oneCall || Number(await db.scalar<number | bigint>(stage.when)) > 0;
      await run(taken ? stage.then : (stage.else ?? []));
    }
  };
  await run(plan);
  await db.script(batch);
}

export interface DeriveOptions {
  /** every trace in record_rows is in _touched (the model was empty before this load) */
  fresh?: boolean;
  /**
   * Send every step in one call (the receiver, whose busy event loop holds each call back), the
   * fix-ups included. Otherwise a fix-up is sent only when there is something to fix.
   */
  oneCall?: boolean;
}

/**
 * Rebuild every derived relation for the traces in `_touched`. The steps go to DuckDB as scripts
 * (Db.script), not a call per statement: the receiver derives while its event loop is busy, and a
 * round trip per statement costs more than the rebuild itself.
 */
export async function deriveTouched(db: Db, opts: DeriveOptions = {}): Promise<void> {
  // `filter` is empty when every trace in the model was touched (a fresh load): the semi joins with
  // _touched would cost time and filter nothing.
  const filter = opts.fresh ? '' : `AND trace_id IN ${TOUCHED}`;
  // Earlier span rows, orphans and depths are only possible when a touched trace was derived before
  // (then it has a run). A span has several SpanEnds when a touched trace came from two inputs (files,
  // batches), or one input says it twice (a retried OTLP batch, a file concatenated with itself): the
  // count of distinct key hashes tells (a collision only runs the step for nothing).
  const check = await db.one<{ existed: boolean; repeated: boolean; idless: boolean }>(
    `SELECT ${opts.fresh ? 'false' : `EXISTS (SELECT 1 FROM runs WHERE trace_id IN ${TOUCHED})`} AS existed,
       (SELECT count(*) > count(DISTINCT hash(trace_id, span_id)) FROM record_rows
        WHERE record_type = 'SpanEnd' AND span_id IS NOT NULL ${filter}) AS repeated,
       EXISTS (SELECT 1 FROM record_rows WHERE node_result AND unique_id IS NULL ${filter}) AS idless`,
  );
  const plan: Stage[] = [
    ['derive: clear runs', `DELETE FROM runs WHERE trace_id IN ${TOUCHED}`],
    // Derived rows have no order of their own: unordered inserts run in parallel.
    ['derive: unordered', 'SET preserve_insertion_order = false'],
    ...(check?.existed ? [['derive: reset spans', RESET], ['derive: reset spans', RESET_STARTS]] as Step[] : []),
    ...(check?.repeated ? [['derive: worse ends', takeWorseWithinSql(filter)], ['derive: duplicate ends', DUPLICATE_ENDS]] as Step[] : []),
    ...unendedStarts(filter),
    ...(check?.idless ? [idFromEvaluations(filter)] : []),
    nodeGroups(filter),
    { when: 'SELECT count(*) FROM _node_groups', then: NODE_PICK },
    ['derive node results', 'DROP TABLE _node_groups'],
    ['derive span links', SPAN_LINKS],
    ['derive orphans', ORPHANS],
    ['derive depth', WALK],
    depthsOfTree(filter),
    ['derive depth', 'DROP TABLE _walk'],
    ['derive depth', 'DROP TABLE _span_links'],
    ['derive runs', runs(filter)],
    ['derive: ordered', 'RESET preserve_insertion_order'],
  ];
  try {
    await runPlan(db, plan, opts.oneCall ?? false);
  } catch (e) {
    await db.run('RESET preserve_insertion_order').catch(() => undefined);
    throw e;
  }
}
