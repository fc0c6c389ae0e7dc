/**
 * Gate rules: a run passes only when its invocations and node spans ended, no invocation ended with status
 * ERROR, and none of its node results matches --fail-on. Offenders and counts are selected in DuckDB; only offenders (and, for
 * reporters that list every test, the tests) come into JavaScript.
 */
import type { Db } from '../store/db.js';
import { LOG_TEXT_ORDER, sqlString } from '../store/sql-text.js';
import { plural } from '../render/plural.js';
import type { OutcomeColumns } from '../store/outcome-columns.js';
import { cleanMessage, reasonOf } from './reason.js';
import { RunSpanIds } from '../legacy/span-ids.js';

export const NODE_RULES = ['test-failed', 'test-warned', 'error', 'skipped', 'skipped-any', 'canceled', 'freshness-warned'] as const;
export const RUN_RULES = ['run-error', 'incomplete'] as const;
export const FAIL_ON = [...NODE_RULES, ...RUN_RULES] as const;
export type NodeRule = (typeof NODE_RULES)[number];
export type RunRule = (typeof RUN_RULES)[number];
export type FailOn = (typeof FAIL_ON)[number];
export const DEFAULT_FAIL_ON: FailOn[] = ['test-failed', 'error', 'run-error', 'incomplete'];

/**
 * The node results each rule fails, in the order a node is named by the first that matches (with both
 * skipped and skipped-any, an upstream skip is named by the narrower skipped).
 */
const NODE_RULE_SQL: readonly [NodeRule, string][] = [
  // a source older than its error_after (source freshness) fails as an error
  ['error', `node_outcome = 'error' OR freshness_outcome = 'failed'`],
  ['test-failed', `test_outcome = 'failed'`],
  ['test-warned', `test_outcome = 'warned'`],
  ['skipped', `node_outcome = 'skipped' AND skip_reason = 'upstream'`],
  ['skipped-any', `node_outcome = 'skipped'`],
  ['canceled', `node_outcome = 'canceled'`],
  ['freshness-warned', `freshness_outcome = 'warned'`],
];

/** The order rules are counted and listed in. */
export const RULE_ORDER: readonly FailOn[] = [...NODE_RULE_SQL.map(([r]) => r), ...RUN_RULES];

/** SQL for the node rule a node_results row fails (NULL when none of `failOn` matches). */
function nodeRuleSql(failOn: readonly FailOn[]): string {
  const on = NODE_RULE_SQL.filter(([r]) => failOn.includes(r));
  return on.length ? `CASE ${on.map(([r, sql]) => `WHEN ${sql} THEN '${r}'`).join(' ')} END` : 'NULL';
}

export interface GateNode extends OutcomeColumns {
  trace_id: string;
  /** NULL for a node its producer wrote without one (see nodeLabel) */
  unique_id: string | null;
  name: string | null;
  resource_type: string | null;
  relative_path: string | null;
  duration_ms: number | null;
  /** the node's error text as the model holds it */
  error_text: string | null;
  /** sources: passed, warned or failed (source freshness) */
  freshness_outcome?: string | null;
  /** the rule it fails, if any */
  rule: NodeRule | null;
  /** why it fails, for reporters (set for offenders) */
  reason: string | null;
}

export interface GateRun {
  trace_id: string;
  invocation_id: string | null;
  command: string | null;
  nodes: number;
  duration_ms: number | null;
  /** the run has an invocation span */
  has_invocation: boolean;
  /** its invocation spans (a trace can hold several: one invocation id given to several commands) */
  invocations: number;
  /** of them, those that never ended */
  open_invocations: number;
  /** node spans that never ended */
  open_nodes: number;
  /** of its node results, those that never ended */
  open_results: number;
  /** every invocation span of it ended */
  ended: boolean;
  status_code: number | null;
  status_message: string | null;
  /** no run rule and no node rule of --fail-on matches */
  passed: boolean;
  /** the run rule it fails, if any */
  rule: RunRule | null;
  reason: string | null;
}

export interface GateResult {
  failOn: FailOn[];
  runs: GateRun[];
  /** node results gated (every run's) */
  nodeResults: number;
  /** how many nodes or runs fail each rule of --fail-on */
  counts: Partial<Record<FailOn, number>>;
  /** node results that fail the gate, by run, rule and id; at most `listLimit` of them */
  offenders: GateNode[];
  /** all node results that fail the gate (offenders may list fewer) */
  offenderCount: number;
  /** with `withTests`: every offender, then every other test and unit test, by run and id */
  tests?: GateNode[];
  passed: boolean;
}

export interface GateOptions {
  failOn: readonly FailOn[];
  /** one run (its trace id) instead of every run */
  traceId?: string;
  /** offenders listed at most (the counts are always complete) */
  listLimit?: number;
  /** also list every test (reporters that show each test: junit) */
  withTests?: boolean;
}

type RunRow = Omit<GateRun, 'passed' | 'rule' | 'reason'>;

/**
 * The run rule a run fails and why (the run's own ERROR messages, if any, after), or null.
 * `translatedLog`: the run's open invocation is an older-engine translation's, which leaves it open
 * only where its log ends before the command did.
 */
function runVerdict(r: RunRow, failOn: readonly FailOn[], messages: readonly string[], translatedLog = false): { rule: RunRule; reason: string } | null {
  const logged = reasonOf(messages);
  const withLogs = (s: string) => (logged ? `${s}\n${logged}` : s);
  const unended = r.open_results === 0 ? '' : r.open_results < r.nodes ? `, ${r.open_results} of them not ended` : r.nodes === 1 ? ', not ended' : ', none of them ended';
  const recorded = r.nodes === 0 ? 'no node result was recorded' : `${r.nodes} node result${r.nodes === 1 ? ' was' : 's were'} recorded${unended}`;
  if (failOn.includes('incomplete')) {
    if (!r.has_invocation) return { rule: 'incomplete', reason: withLogs(`the run has no invocation span (the input holds only part of it); ${recorded}`) };
    const cut = translatedLog ? 'the log ends before the command did: the command was still running, or the log was cut short'
      : 'the engine stopped mid-run, or the input was cut short';
    if (!r.ended && r.invocations > 1) return { rule: 'incomplete', reason: withLogs(`${r.open_invocations} of the run's ${r.invocations} invocations never ended (${cut}); ${recorded}`) };
    if (!r.ended) return { rule: 'incomplete', reason: withLogs(`the invocation never ended (${cut}); ${recorded}`) };
    if (r.open_nodes > 0) return { rule: 'incomplete', reason: withLogs(`${plural(r.open_nodes, 'node span')} never ended although the invocation did (the input lacks their ends); ${recorded}`) };
  }
  if (failOn.includes('run-error') && r.ended && r.status_code === 2) {
    // the engine's text, cleaned as a node's messages are
    const message = r.status_message ? cleanMessage(r.status_message) : '';
    const status = message ? `: ${message}` : '';
    const which = r.invocations > 1 ? `one of the run's ${r.invocations} invocations` : 'the invocation';
    return { rule: 'run-error', reason: withLogs(`${which} ended with status ERROR${status}${r.nodes === 0 ? `; ${recorded}` : ''}`) };
  }
  return null;
}

/** ERROR log records (severity ERROR or above) with text. */
const ERROR_LOGS = `(severity_number >= 17 OR severity_text = 'ERROR') AND body IS NOT NULL AND body <> ''`;
const WARN_LOGS = `(severity_number BETWEEN 13 AND 16 OR severity_text = 'WARN') AND body IS NOT NULL AND body <> ''`;
/** Rules a node fails for a warning: without an ERROR message, its WARN messages say why. */
const WARNING_RULES = `('test-warned', 'freshness-warned')`;

const NODE_COLUMNS = `trace_id, unique_id, name, resource_type, phase, node_outcome, skip_reason, upstream_unique_id, test_outcome,
  failing_rows, relative_path, round(duration_ms, 3) AS duration_ms, error_text, freshness_outcome`;

/**
 * Node results that match `where`, with their rule and, for offenders, each ERROR message logged for
 * the node (separately, so repeats can be told apart; for a warning without one, each WARN message),
 * ordered by run, rule and id; at most `limit`.
 */
async function selectNodes(db: Db, failOn: readonly FailOn[], where: string, params: Record<string, string>, limit?: number): Promise<GateNode[]> {
  const rank = `CASE rule ${RULE_ORDER.map((r, i) => `WHEN '${r}' THEN ${i}`).join(' ')} END`;
  const rows = await db.all<Omit<GateNode, 'reason'> & { messages: string[] | null }>(
    `WITH n AS MATERIALIZED (
       SELECT ${NODE_COLUMNS}, ${nodeRuleSql(failOn)} AS rule FROM node_results WHERE ${where}
       ORDER BY trace_id, ${rank} NULLS LAST, unique_id ${limit === undefined ? '' : `LIMIT ${Math.max(0, Math.floor(limit))}`}
     ),
     m AS (
       SELECT trace_id, unique_id, list(body ORDER BY ${LOG_TEXT_ORDER}) FILTER (WHERE ${ERROR_LOGS}) AS errors,
         list(body ORDER BY ${LOG_TEXT_ORDER}) FILTER (WHERE ${WARN_LOGS}) AS warnings
       FROM logs WHERE (trace_id, unique_id) IN (SELECT trace_id, unique_id FROM n WHERE rule IS NOT NULL)
       GROUP BY ALL
     )
     SELECT n.*, CASE WHEN n.rule IN ${WARNING_RULES} AND coalesce(len(m.errors), 0) = 0 THEN m.warnings ELSE m.errors END AS messages
     FROM n LEFT JOIN m USING (trace_id, unique_id)
     ORDER BY trace_id, ${rank} NULLS LAST, unique_id`,
    params,
  );
  return rows.map(({ messages, ...n }) => ({ ...n, reason: n.rule ? nodeReason(n, messages) : null }));
}

/**
 * The tests that fail no rule, for reporters that list every test: possibly many, so read as
 * delimited text (Db.rowsText), without their logs.
 */
async function selectPassingTests(db: Db, failOn: readonly FailOn[], inTrace: string, params: Record<string, string>): Promise<GateNode[]> {
  const num = (v: string | null) => (v === null ? null : Number(v));
  return db.rowsText(
    `SELECT trace_id, unique_id, name, resource_type, phase, node_outcome, skip_reason, upstream_unique_id, test_outcome, failing_rows,
       relative_path, round(duration_ms, 3) AS duration_ms, error_text, row_number() OVER (ORDER BY trace_id, unique_id) AS k
     FROM node_results WHERE ${inTrace} AND resource_type IN ('test', 'unit_test') AND ${nodeRuleSql(failOn)} IS NULL`,
    ['trace_id', 'unique_id', 'name', 'resource_type', 'phase', 'node_outcome', 'skip_reason', 'upstream_unique_id', 'test_outcome', 'failing_rows',
      'relative_path', 'duration_ms', 'error_text'],
    'k',
    Object.keys(params).length ? params : undefined,
    (f): GateNode => ({
      trace_id: f[0]!, unique_id: f[1]!, name: f[2], resource_type: f[3], phase: f[4], node_outcome: f[5], skip_reason: f[6], upstream_unique_id: f[7],
      test_outcome: f[8], failing_rows: num(f[9]!), relative_path: f[10], duration_ms: num(f[11]!), error_text: f[12], rule: null, reason: null,
    }),
  );
}

/** How reporters name a node: its unique_id, or for a node written without one its type and name. */
export const nodeLabel = (n: Pick<GateNode, 'unique_id' | 'name' | 'resource_type'>): string =>
  n.unique_id ?? `${n.resource_type ?? 'node'} ${n.name ?? '(no name)'} (no unique_id)`;

/** "1 failing row", "4 failing rows"; a test outcome whose count was not recorded says so (not 0). */
export const failingRows = (n: number | null) => (n === null ? 'failing rows not recorded' : plural(n, 'failing row'));

function nodeReason(n: Omit<GateNode, 'reason'>, messages: string[] | null): string {
  const logged = reasonOf(messages?.length ? messages : [n.error_text]);
  const bits: string[] = [];
  if (n.test_outcome === 'failed' || n.test_outcome === 'warned') bits.push(failingRows(n.failing_rows));
  if (n.node_outcome === 'skipped') bits.push(`skip reason ${n.skip_reason ?? 'unknown'}${n.upstream_unique_id ? ` (upstream ${n.upstream_unique_id})` : ''}`);
  if (n.node_outcome === 'canceled') bits.push('canceled');
  if (n.freshness_outcome === 'failed' || n.freshness_outcome === 'warned') bits.push(`source freshness ${n.freshness_outcome}`);
  if (logged) bits.push(logged);
  else if (n.node_outcome === 'error') bits.push('the node errored; no error message was logged');
  return bits.join('\n');
}

/** Offenders per run and rule, counted in DuckDB (when the listing does not hold them all). */
async function countOffenders(db: Db, failOn: readonly FailOn[], inTrace: string, params: Record<string, string>) {
  return db.all<{ trace_id: string; rule: NodeRule; n: number }>(
    `SELECT trace_id, rule, count(*)::INTEGER AS n FROM (SELECT trace_id, ${nodeRuleSql(failOn)} AS rule FROM node_results WHERE ${inTrace})
     WHERE rule IS NOT NULL GROUP BY ALL`,
    params,
  );
}

/** The ERROR messages of runs that are logged for no node (a parse or compile failure), by run. */
async function runMessages(db: Db, traces: string[]): Promise<Map<string, string[]>> {
  if (traces.length === 0) return new Map();
  const rows = await db.all<{ trace_id: string; messages: string[] }>(
    `SELECT trace_id, list(body ORDER BY ${LOG_TEXT_ORDER}) AS messages FROM logs
     WHERE ${ERROR_LOGS} AND unique_id IS NULL AND trace_id IN (${traces.map(sqlString).join(', ')}) GROUP BY ALL`,
  );
  return new Map(rows.map((r) => [r.trace_id, r.messages]));
}

/**
 * Of these runs, those whose open invocation span is an older-engine translation's (its id derived
 * from the trace, src/legacy/span-ids.ts): the translator leaves one open only where the log ends
 * before the command did.
 */
async function translatedLogsLeftOpen(db: Db, traces: string[]): Promise<Set<string>> {
  if (traces.length === 0) return new Set();
  const rows = await db.all<{ trace_id: string; span_id: string }>(
    `SELECT DISTINCT trace_id, span_id FROM spans WHERE kind = 'invocation' AND NOT ended AND trace_id IN (${traces.map(sqlString).join(', ')})`,
  );
  return new Set(rows.filter((r) => r.span_id === new RunSpanIds(r.trace_id).head().invocation).map((r) => r.trace_id));
}

/**
 * The gate's verdict. One scan of node_results lists the offenders; a second counts them only when the
 * listing stops at `listLimit` (with `withTests`, another lists the other tests). Runs are few: their
 * rules are applied here.
 */
export async function evaluateGate(db: Db, opts: GateOptions): Promise<GateResult> {
  const failOn = [...opts.failOn];
  const params: Record<string, string> = opts.traceId ? { t: opts.traceId } : {};
  const inTrace = opts.traceId ? 'trace_id = $t' : 'true';
  const runRows = await db.all<RunRow>(
    `SELECT r.trace_id, r.invocation_id, r.command, r.nodes::INTEGER AS nodes, round(r.duration_ms, 3) AS duration_ms,
       coalesce(i.invocations, 0) > 0 AS has_invocation, coalesce(i.invocations, 0)::INTEGER AS invocations,
       coalesce(i.open_invocations, 0)::INTEGER AS open_invocations, coalesce(i.open_nodes, 0)::INTEGER AS open_nodes,
       coalesce(n.open_results, 0)::INTEGER AS open_results, r.ended, r.status_code, r.status_message
     FROM runs r LEFT JOIN (
       SELECT trace_id, count(*) FILTER (WHERE kind = 'invocation') AS invocations,
         count(*) FILTER (WHERE kind = 'invocation' AND NOT ended) AS open_invocations,
         count(*) FILTER (WHERE kind <> 'invocation' AND NOT ended) AS open_nodes
       FROM spans WHERE kind IN ('invocation', 'node_evaluated', 'node_processed') AND ${inTrace} GROUP BY ALL
     ) i USING (trace_id) LEFT JOIN (
       SELECT trace_id, count(*) FILTER (WHERE NOT ended) AS open_results FROM node_results WHERE ${inTrace} GROUP BY ALL
     ) n USING (trace_id)
     WHERE ${opts.traceId ? 'r.trace_id = $t' : 'true'}
     ORDER BY r.start_ns, r.trace_id`,
    params,
  );
  const ruleSql = nodeRuleSql(failOn);
  const offends = `${ruleSql} IS NOT NULL`;
  let offenders: GateNode[];
  let tests: GateNode[] | undefined;
  let truncated = false;
  if (opts.withTests) {
    offenders = await selectNodes(db, failOn, `${inTrace} AND ${offends}`, params);
    tests = [...offenders, ...(await selectPassingTests(db, failOn, inTrace, params))];
  } else {
    const limit = opts.listLimit;
    offenders = await selectNodes(db, failOn, `${inTrace} AND ${offends}`, params, limit === undefined ? undefined : limit + 1);
    truncated = limit !== undefined && offenders.length > limit;
    if (truncated) offenders = offenders.slice(0, limit);
  }
  const nodeCounts = truncated ? await countOffenders(db, failOn, inTrace, params) : tallyOffenders(offenders);

  const offendersIn = new Set(nodeCounts.map((c) => c.trace_id));
  const bare = runRows.map((r) => ({ r, v: runVerdict(r, failOn, []) }));
  const failing = bare.filter((x) => x.v).map((x) => x.r.trace_id);
  const messages = await runMessages(db, failing);
  const translated = await translatedLogsLeftOpen(db, bare.filter((x) => x.v?.rule === 'incomplete' && !x.r.ended).map((x) => x.r.trace_id));
  const runs: GateRun[] = bare.map(({ r, v }) => {
    const [m, t] = [messages.get(r.trace_id), translated.has(r.trace_id)];
    const verdict = v && (m || t) ? runVerdict(r, failOn, m ?? [], t) : v;
    return { ...r, rule: verdict?.rule ?? null, reason: verdict?.reason ?? null, passed: !verdict && !offendersIn.has(r.trace_id) };
  });
  const counts: Partial<Record<FailOn, number>> = {};
  for (const r of RULE_ORDER) if (failOn.includes(r)) counts[r] = 0;
  for (const c of nodeCounts) counts[c.rule] = (counts[c.rule] ?? 0) + c.n;
  for (const r of runs) if (r.rule) counts[r.rule] = (counts[r.rule] ?? 0) + 1;
  return {
    failOn,
    runs,
    nodeResults: runs.reduce((a, r) => a + r.nodes, 0),
    counts,
    offenders,
    offenderCount: nodeCounts.reduce((a, c) => a + c.n, 0),
    tests,
    passed: runs.every((r) => r.passed),
  };
}

function tallyOffenders(offenders: GateNode[]): { trace_id: string; rule: NodeRule; n: number }[] {
  const m = new Map<string, { trace_id: string; rule: NodeRule; n: number }>();
  for (const o of offenders) {
    const k = `${o.trace_id}\u0000${o.rule}`;
    const c = m.get(k) ?? { trace_id: o.trace_id, rule: o.rule!, n: 0 };
    c.n++;
    m.set(k, c);
  }
  return [...m.values()];
}
