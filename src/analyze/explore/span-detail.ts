/**
 * Everything the detail pane shows for one span: attributes, its log records, error text, the
 * upstream-skip chain down to the root cause, failing rows and file. Small results only.
 */
import { TOO_DEEP, tooDeep } from '../../ingest/nesting.js';
import type { Db } from '../../store/db.js';
import { LOG_TEXT_ORDER } from '../../store/sql-text.js';

export interface LogLine {
  time_ms: number;
  severity: string | null;
  body: string | null;
  event_type: string | null;
}

export interface ChainLink {
  unique_id: string;
  node_outcome: string | null;
  skip_reason: string | null;
  test_outcome: string | null;
  /** this link is the root cause (the chain ends at a node that errored or failed) */
  root: boolean;
  /** its upstream id is already in the chain: the ids form a cycle and there is no root cause */
  cycle: boolean;
}

/** What the explorer says of a chain that loops, as the saved query upstream-skip-chains says it. */
export const CHAIN_CYCLE = 'the upstream ids form a cycle';

export interface SpanDetail {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  event_type: string | null;
  unique_id: string | null;
  phase: string | null;
  node_outcome: string | null;
  skip_reason: string | null;
  test_outcome: string | null;
  failing_rows: number | null;
  relative_path: string | null;
  duration_ms: number | null;
  ended: boolean;
  status_code: number | null;
  status_message: string | null;
  error_text: string | null;
  /** sources: passed, warned or failed (source freshness) */
  freshness_outcome: string | null;
  attributes: Record<string, unknown>;
  logs: LogLine[];
  logCount: number;
  chain: ChainLink[];
}

export async function spanDetail(db: Db, traceId: string, spanId: string, maxLogs = 50): Promise<SpanDetail | undefined> {
  const s = await db.one<Omit<SpanDetail, 'attributes' | 'logs' | 'logCount' | 'chain' | 'error_text' | 'freshness_outcome'> & { attributes: string | null; t0: string }>(
    `SELECT span_id, parent_span_id, coalesce(span_name, '(unnamed span)') AS name, kind, event_type, unique_id, phase,
       node_outcome, skip_reason, test_outcome, failing_rows, relative_path, duration_ms, ended, status_code, status_message,
       attributes::VARCHAR AS attributes
     FROM span_details WHERE trace_id = $t AND span_id = $s`,
    { t: traceId, s: spanId },
  );
  if (!s) return undefined;
  let attributes: Record<string, unknown> = {};
  try {
    attributes = s.attributes ? (JSON.parse(s.attributes) as Record<string, unknown>) : {};
  } catch {
    attributes = { attributes: s.attributes };
  }
  const t0 = `(SELECT min(start_ns) FROM spans WHERE trace_id = $t)`;
  const logs = await db.all<LogLine>(
    `SELECT (time_ns - ${t0}) / 1e6 AS time_ms, severity_text AS severity, body, event_type
     FROM logs WHERE trace_id = $t AND span_id = $s ORDER BY ${LOG_TEXT_ORDER} LIMIT ${maxLogs}`,
    { t: traceId, s: spanId },
  );
  const logCount = logs.length < maxLogs ? logs.length : await db.scalar<number>(
    'SELECT count(*)::INTEGER FROM logs WHERE trace_id = $t AND span_id = $s', { t: traceId, s: spanId });
  const node = s.unique_id
    ? await db.one<{ error_text: string | null; freshness_outcome: string | null }>(
        `SELECT error_text, freshness_outcome FROM nodes WHERE trace_id = $t AND span_id = $s`, { t: traceId, s: spanId })
    : undefined;
  const chain = s.unique_id && s.skip_reason === 'upstream' ? await upstreamChain(db, traceId, s.unique_id) : [];
  const { attributes: _a, t0: _t, ...rest } = s;
  return { ...rest, attributes, logs, logCount, error_text: node?.error_text ?? null, freshness_outcome: node?.freshness_outcome ?? null, chain };
}

/**
 * The log records of a run, from its first (time from there): for a run of log records only, which
 * has no span to show them on. The first `max` of them, and how many there are.
 */
export async function runLogs(db: Db, traceId: string, max = 200): Promise<{ logs: LogLine[]; count: number }> {
  const logs = await db.all<LogLine>(
    `SELECT (time_ns - min(time_ns) OVER ()) / 1e6 AS time_ms, severity_text AS severity, body, event_type
     FROM logs WHERE trace_id = $t ORDER BY ${LOG_TEXT_ORDER} LIMIT ${max}`,
    { t: traceId },
  );
  const count = logs.length < max ? logs.length : await db.scalar<number>('SELECT count(*)::INTEGER FROM logs WHERE trace_id = $t', { t: traceId });
  return { logs, count };
}

/** The SQL that lists a run's log records, for a screen that shows only some. */
export const runLogsSql = (traceId: string): string =>
  `SELECT * FROM logs WHERE trace_id = '${traceId.replaceAll("'", "''")}' ORDER BY ${LOG_TEXT_ORDER}`;

/**
 * Follow upstream_unique_id from a skipped node through node_results of the run until a node that
 * was not skipped for an upstream reason (the root cause). A chain whose next id is already in it
 * (the start node included once it is reached again, as upstream-skip-chains lists it) ends there,
 * its last link marked `cycle`. Stops after 100 links.
 */
export async function upstreamChain(db: Db, traceId: string, uniqueId: string): Promise<ChainLink[]> {
  const out: ChainLink[] = [];
  const seen = new Set<string>();
  let cur = await db.scalar<string | null>(
    'SELECT upstream_unique_id FROM node_results WHERE trace_id = $t AND unique_id = $u', { t: traceId, u: uniqueId });
  while (cur && out.length < 100) {
    seen.add(cur);
    const r = await db.one<{ node_outcome: string | null; skip_reason: string | null; test_outcome: string | null; upstream_unique_id: string | null }>(
      'SELECT node_outcome, skip_reason, test_outcome, upstream_unique_id FROM node_results WHERE trace_id = $t AND unique_id = $u',
      { t: traceId, u: cur },
    );
    const next = r?.skip_reason === 'upstream' ? r.upstream_unique_id : null;
    const cycle = next !== null && seen.has(next);
    out.push({
      unique_id: cur, node_outcome: r?.node_outcome ?? null, skip_reason: r?.skip_reason ?? null, test_outcome: r?.test_outcome ?? null,
      root: !next, cycle,
    });
    cur = cycle ? null : next;
  }
  return out;
}

/** Attributes as sorted `key: value` lines, nested objects flattened with dots (a value nested too deep named only). */
export function attributeLines(attrs: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = [];
  for (const k of Object.keys(attrs).sort()) {
    const v = attrs[k];
    // (a load reads any nesting; flattening it and JSON.stringify run out of call stack)
    if (!prefix && v && typeof v === 'object' && tooDeep(v) !== undefined) out.push(`${k}: (${TOO_DEEP})`);
    else if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) {
      out.push(...attributeLines(v as Record<string, unknown>, `${prefix}${k}.`));
    } else out.push(`${prefix}${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  return out;
}
