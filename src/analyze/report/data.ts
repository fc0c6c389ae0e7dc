/**
 * What the HTML report shows, gathered from the model with the same code as the terminal: the gate's
 * rules for the verdict, the saved queries for failures, skip chains, slowest nodes, critical path,
 * trends and flaky tests. The chart's evaluations come out of DuckDB as one JSON document.
 */
import { DEFAULT_FAIL_ON, evaluateGate } from '../../gate/rules.js';
import { LISTED_FOR_PEOPLE, renderGate } from '../../gate/reporters.js';
import { UsageError } from '../../errors.js';
import type { Db, Row } from '../../store/db.js';
import { criticalPathsOf, criticalPathTable, type CriticalLink } from '../critical-path.js';
import { findSavedQuery, runSavedQuery } from '../queries.js';
import { listRuns } from '../runs.js';
import { resolveTrace } from '../tree.js';

export interface ReportRun {
  trace_id: string;
  invocation_id: string | null;
  command: string | null;
  raw_command: string | null;
  started_at: string | null;
  duration_s: number | null;
  engine_version: string | null;
  ended: boolean;
  nodes: number;
  success: number;
  error: number;
  skipped: number;
  canceled: number;
  tests_passed: number;
  tests_warned: number;
  tests_failed: number;
  failed: boolean;
}

export interface ReportGate {
  passed: boolean;
  /** the gate's own summary line and offender lines (text reporter) */
  lines: string[];
  /** node results and runs that fail it */
  offenders: number;
}

export interface ReportCriticalPhase {
  phase: string | null;
  phase_ms: number | null;
  links: number;
  work_ms: number;
  wait_ms: number;
  /** the phase's longest links, in path order */
  longest: ListedLink[];
}

export type ListedLink = Omit<CriticalLink, 'trace_id' | 'method'>;

/** A path's CRITICAL_LINKS_LISTED longest links (ties to the earlier), in path order. */
function longestLinks(links: CriticalLink[]): ListedLink[] {
  return [...links]
    .sort((a, b) => b.duration_ms - a.duration_ms || a.position - b.position)
    .slice(0, CRITICAL_LINKS_LISTED)
    .sort((a, b) => a.position - b.position)
    .map(({ trace_id: _t, method: _m, ...l }) => l);
}

export interface ReportHistory {
  command: string | null;
  runs: { trace_id: string; started_at: string; duration_s: number | null; failed: boolean; current: boolean }[];
  /** the first HISTORY_ROWS rows of each query */
  trends: Row[];
  flaky: Row[];
  failures: Row[];
  /** each query's rows in all */
  totals: { trends: number; flaky: number; failures: number };
}

export interface ReportData {
  generated_at: string;
  run: ReportRun;
  gate: ReportGate;
  critical: ReportCriticalPhase[];
  errors: Row[];
  failed_tests: Row[];
  skip_chains: Row[];
  slowest: Row[];
  history: ReportHistory | null;
  /** the chart's evaluations as a JSON document (see GANTT_SQL) */
  gantt: string;
}

/** Links of each phase's critical path listed in the report (the chart marks them all). */
export const CRITICAL_LINKS_LISTED = 20;
/** Rows listed of each history table (the report says how many there are). */
export const HISTORY_ROWS = 15;

/** What an evaluation's bar is coloured by. */
const CATEGORY = `CASE
  WHEN n.node_outcome = 'error' THEN 'error'
  WHEN n.node_outcome = 'canceled' THEN 'canceled'
  WHEN n.node_outcome = 'skipped' AND n.skip_reason = 'cached' THEN 'reused (cached)'
  WHEN n.node_outcome = 'skipped' THEN 'skipped: ' || coalesce(n.skip_reason, 'unknown')
  WHEN n.test_outcome = 'failed' THEN 'test failed'
  WHEN n.test_outcome = 'warned' THEN 'test warned'
  WHEN n.node_outcome = 'success' THEN 'success'
  WHEN NOT n.ended THEN 'not ended'
  ELSE coalesce(n.node_outcome, 'unknown') END`;

/**
 * One run's node evaluations as columns: names (unique ids), phases (one per phase span, by name)
 * and categories once each, then per evaluation (in phase order, then start) the indexes n (name),
 * p (phase), c (category), u (upstream name or -1), the start s and duration d in ms from the run's
 * start, k (place on its phase's critical path or 0), f (failing rows or null), and the error texts
 * by evaluation index.
 */
const ganttSql = (critical: string) => `
WITH run AS (SELECT start_ns, end_ns FROM runs WHERE trace_id = $t),
-- each evaluation's phase span: a trace holding several invocations has a phase of one name per invocation
under AS (
  SELECT e.span_id, p.span_id AS phase_span FROM spans e JOIN spans p ON p.span_id = e.parent_span_id
  WHERE e.trace_id = $t AND p.trace_id = $t AND e.kind = 'node_evaluated' AND p.kind = 'phase'
),
e AS (
  SELECT n.span_id, n.unique_id, coalesce(n.phase, '?') AS phase, coalesce(u.phase_span, coalesce(n.phase, '?')) AS band, n.start_ns,
    coalesce(n.end_ns, greatest(n.start_ns, (SELECT end_ns FROM run))) AS end_ns, ${CATEGORY} AS category,
    n.upstream_unique_id, n.failing_rows, n.error_text, coalesce(c.position, 0) AS critical
  FROM nodes n LEFT JOIN ${critical} c ON c.span_id = n.span_id LEFT JOIN under u ON u.span_id = n.span_id
  WHERE n.trace_id = $t AND n.kind = 'evaluated' AND n.start_ns IS NOT NULL AND n.unique_id IS NOT NULL
),
names AS (
  SELECT x, (row_number() OVER (ORDER BY x) - 1)::INTEGER AS i
  FROM (SELECT unique_id AS x FROM e UNION SELECT upstream_unique_id FROM e WHERE upstream_unique_id IS NOT NULL)
),
phases AS (
  SELECT band, any_value(phase) AS phase, (row_number() OVER (ORDER BY min(start_ns), band) - 1)::INTEGER AS i,
    -- a phase name that comes twice (two invocations in a trace) is numbered, so its bands read apart
    CASE WHEN count(*) OVER (PARTITION BY any_value(phase)) > 1
      THEN any_value(phase) || ' (' || row_number() OVER (PARTITION BY any_value(phase) ORDER BY min(start_ns), band) || ')'
      ELSE any_value(phase) END AS label
  FROM e GROUP BY band),
cats AS (SELECT category, (row_number() OVER (ORDER BY category) - 1)::INTEGER AS i FROM (SELECT DISTINCT category FROM e)),
rows AS (
  SELECT (row_number() OVER (ORDER BY p.i, e.start_ns, e.span_id) - 1)::INTEGER AS o, nm.i AS n, p.i AS p, c.i AS c,
    coalesce(up.i, -1) AS u, round((e.start_ns - (SELECT start_ns FROM run)) / 1e6, 3) AS s, round((e.end_ns - e.start_ns) / 1e6, 3) AS d,
    e.critical AS k, e.failing_rows AS f, e.error_text
  FROM e JOIN names nm ON nm.x = e.unique_id JOIN phases p USING (band) JOIN cats c USING (category)
  LEFT JOIN names up ON up.x = e.upstream_unique_id
)
SELECT json_object(
  'names', (SELECT coalesce(list(x ORDER BY i), []) FROM names),
  'phases', (SELECT coalesce(list(label ORDER BY i), []) FROM phases),
  'categories', (SELECT coalesce(list(category ORDER BY i), []) FROM cats),
  'run_ms', (SELECT round((end_ns - start_ns) / 1e6, 3) FROM run),
  'n', coalesce(list(n ORDER BY o), []), 'p', coalesce(list(p ORDER BY o), []), 'c', coalesce(list(c ORDER BY o), []),
  'u', coalesce(list(u ORDER BY o), []), 's', coalesce(list(s ORDER BY o), []), 'd', coalesce(list(d ORDER BY o), []),
  'k', coalesce(list(k ORDER BY o), []), 'f', coalesce(list(f ORDER BY o), []),
  'errors', coalesce(list({'i': o, 't': error_text} ORDER BY o) FILTER (WHERE error_text IS NOT NULL), [])
)::VARCHAR FROM rows`;

async function saved(db: Db, name: string, params: Record<string, string>): Promise<Row[]> {
  return (await runSavedQuery(db, findSavedQuery(name), params)).rows;
}

/** The report's run: --trace, or the most recent run. */
async function pickRun(db: Db, trace?: string): Promise<ReportRun> {
  const runs = await listRuns(db, { newestFirst: true });
  if (runs.length === 0) throw new UsageError('no runs in the input: nothing to report');
  const id = trace ? await resolveTrace(db, trace) : (runs[0]!.trace_id as string);
  const run = runs.find((r) => r.trace_id === id);
  if (!run) throw new UsageError(`trace ${trace} has no run (no invocation or node spans)`);
  return run as unknown as ReportRun;
}

export async function buildReportData(db: Db, opts: { trace?: string } = {}): Promise<ReportData> {
  const run = await pickRun(db, opts.trace);
  const t = run.trace_id;
  const gate = await evaluateGate(db, { failOn: DEFAULT_FAIL_ON, traceId: t, listLimit: LISTED_FOR_PEOPLE });
  const critical = await criticalPathTable(db, t);
  const paths = await criticalPathsOf(db, critical);
  const gantt = (await db.scalar<string | null>(ganttSql(critical), { t })) ?? '{}';
  const data: ReportData = {
    generated_at: new Date().toISOString(),
    run,
    gate: {
      passed: gate.passed,
      lines: renderGate(gate, 'text').trimEnd().split('\n'),
      offenders: gate.offenderCount + gate.runs.filter((r) => r.rule).length,
    },
    critical: paths.map((p) => ({
      phase: p.phase, phase_ms: p.phase_ms, links: p.links.length, work_ms: p.work_ms, wait_ms: p.wait_ms, longest: longestLinks(p.links),
    })),
    errors: await saved(db, 'errors', { trace: t }),
    failed_tests: (await saved(db, 'failed-tests', { trace: t })).filter((r) => r.outcome === 'failed'),
    skip_chains: await saved(db, 'upstream-skip-chains', { trace: t }),
    slowest: (await saved(db, 'slowest-nodes', { trace: t, limit: '10' })).filter((r) => r.scope === 'overall'),
    history: await history(db, run),
    gantt,
  };
  return data;
}

/**
 * Trends, flaky tests and failures across the runs of the report's command up to and including the
 * report's run (runs after it are not its history), when there are several.
 * A run that records no command has none: the history queries read every command when given none.
 */
async function history(db: Db, run: ReportRun): Promise<ReportHistory | null> {
  const command = run.command ?? '';
  if (command === '') return null;
  const runs = await db.all<ReportHistory['runs'][number]>(
    `SELECT trace_id, strftime(make_timestamp(start_ns // 1000), '%Y-%m-%dT%H:%M:%S.%gZ') AS started_at,
       round(duration_ms / 1000, 3) AS duration_s, failed, trace_id = $t AS current
     FROM runs WHERE coalesce(command, '') = $c AND (start_ns, trace_id) <= (SELECT (start_ns, trace_id) FROM runs WHERE trace_id = $t)
     ORDER BY start_ns DESC, trace_id DESC LIMIT 30`,
    { t: run.trace_id, c: command },
  );
  if (runs.length < 2) return null;
  const params = { command, until: run.trace_id };
  const [trends, flaky, failures] = [await saved(db, 'node-trends', params), await saved(db, 'flaky-tests', params), await saved(db, 'failure-history', params)];
  return {
    command: run.command,
    runs: runs.reverse(),
    trends: trends.slice(0, HISTORY_ROWS),
    flaky: flaky.slice(0, HISTORY_ROWS),
    failures: failures.slice(0, HISTORY_ROWS),
    totals: { trends: trends.length, flaky: flaky.length, failures: failures.length },
  };
}
