/**
 * One line of a `--log-format json` stream as an event identified by name. 1.4+ lines carry
 * `{data, info}` and are keyed on info.name; 1.0-1.3 flat lines have no name, a different code
 * numbering and other field names, so they are named from that version's table and their fields
 * renamed to the 1.4+ ones: the translator reads one format.
 */
import { isoToNs, notATimestamp } from './time.js';

export interface LegacyNodeInfo {
  uniqueId: string;
  resourceType: string;
  name: string;
  path: string;
  materialized: string;
  status: string;
  database?: string;
  schema?: string;
  alias?: string;
}

export interface LegacyEvent {
  name: string;
  code: string;
  level: string;
  /** rendered human text, colour codes removed */
  msg: string;
  ts: bigint | null;
  /** why ts is null: the line's field (info.ts, or ts in 1.0-1.3) and what is wrong with it */
  badTs?: { field: string; why: string };
  /** the engine's thread (one query at a time runs on each) */
  thread: string;
  invocationId: string | null;
  data: Record<string, unknown>;
  node?: LegacyNodeInfo;
  /** the result a 1.0-1.3 result line gives by its code (those versions had an event per status) */
  status?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * 1.0-1.3 codes (renumbered in 1.4), those the translation acts on, under the 1.4+ event name. A
 * result line of those versions has its own event per status (PrintPassTestResult,
 * PrintFailureTestResult, ...) and, on tests, no status field: the code gives it.
 */
const FLAT_CODES: Record<string, { name: string; status?: string }> = {
  A001: { name: 'MainReportVersion' }, A002: { name: 'MainReportArgs' },
  E016: { name: 'SQLQuery' }, E017: { name: 'SQLQueryStatus' },
  Q007: { name: 'LogHookEndLine' },
  Q008: { name: 'LogTestResult', status: 'error' }, Q009: { name: 'LogTestResult', status: 'pass' },
  Q010: { name: 'LogTestResult', status: 'warn' }, Q011: { name: 'LogTestResult', status: 'fail' },
  Q012: { name: 'LogModelResult', status: 'success' }, Q035: { name: 'LogModelResult', status: 'error' },
  Q013: { name: 'LogSnapshotResult', status: 'error' }, Q014: { name: 'LogSnapshotResult', status: 'success' },
  Q015: { name: 'LogSeedResult', status: 'error' }, Q016: { name: 'LogSeedResult', status: 'success' },
  Q017: { name: 'LogFreshnessResult', status: 'runtime error' }, Q018: { name: 'LogFreshnessResult', status: 'error' },
  Q019: { name: 'LogFreshnessResult', status: 'warn' }, Q020: { name: 'LogFreshnessResult', status: 'pass' },
  Q021: { name: 'LogCancelLine' },
  Q023: { name: 'NodeStart' }, Q024: { name: 'NodeFinished' }, Q030: { name: 'NodeCompiling' }, Q031: { name: 'NodeExecuting' },
  Q032: { name: 'LogHookStartLine' }, Q033: { name: 'LogStartLine' }, Q034: { name: 'SkippingDetails' },
  Z001: { name: 'MainKeyboardInterrupt' }, Z002: { name: 'MainEncounteredError' },
  Z021: { name: 'RunResultWarning' }, Z022: { name: 'RunResultFailure' }, Z023: { name: 'StatsLine' },
  Z024: { name: 'RunResultError' }, Z025: { name: 'RunResultErrorNoMessage' }, Z030: { name: 'EndOfRunSummary' },
  Z034: { name: 'LogSkipBecauseError' },
};

/**
 * A flat line's data under the 1.4+ field names. 1.0-1.2: MainReportVersion.v, MainReportArgs.args
 * as the str() of the argparse Namespace, run_result as RunResult.to_dict() (timing, failures,
 * thread_id; 1.0-1.1 wrote its str() instead, which has no field to read), test result lines'
 * failures. 1.3 already used the 1.4 names.
 */
function flatData(data: Record<string, unknown>): Record<string, unknown> {
  const d = { ...data };
  if (d.version === undefined && typeof d.v === 'string') d.version = d.v;
  if (typeof d.args === 'string') {
    const which = /\bwhich='([^']*)'/.exec(d.args)?.[1];
    d.args = which ? { which } : {};
  }
  if (d.num_failures === undefined && typeof d.failures === 'number') d.num_failures = d.failures;
  if (typeof d.run_result === 'string') d.run_result = {};
  else if (isObj(d.run_result)) {
    const rr = { ...d.run_result };
    if (rr.timing_info === undefined && rr.timing !== undefined) rr.timing_info = rr.timing;
    if (rr.num_failures === undefined && rr.failures !== undefined) rr.num_failures = rr.failures;
    if (rr.thread === undefined && rr.thread_id !== undefined) rr.thread = rr.thread_id;
    d.run_result = rr;
  }
  return d;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** A parsed line as an event, or null when it is not one. */
export function eventOf(o: unknown): LegacyEvent | null {
  if (!isObj(o)) return null;
  let name: string, code: string, level: string, msg: string, ts: unknown, inv: unknown, thread: string, data: Record<string, unknown>;
  let status: string | undefined;
  let tsField: string;
  if (isObj(o.info)) {
    const i = o.info;
    name = str(i.name);
    code = str(i.code);
    level = str(i.level) || 'info';
    msg = str(i.msg);
    ts = i.ts;
    tsField = 'info.ts';
    inv = i.invocation_id;
    thread = str(i.thread);
    data = isObj(o.data) ? o.data : {};
  } else if (typeof o.code === 'string') {
    code = o.code;
    const known = FLAT_CODES[code];
    name = known?.name ?? code;
    status = known?.status;
    level = str(o.level) || 'info';
    msg = str(o.msg);
    ts = o.ts;
    tsField = 'ts';
    inv = o.invocation_id;
    thread = str(o.thread_name);
    data = flatData(isObj(o.data) ? o.data : {});
    if (!data.node_info && isObj(o.node_info)) data = { ...data, node_info: o.node_info };
  } else return null;
  if (msg.includes('\x1b')) msg = msg.replace(ANSI, '');
  const ev: LegacyEvent = { name, code, level, msg, ts: isoToNs(ts), thread, invocationId: typeof inv === 'string' && inv ? inv : null, data };
  if (status) ev.status = status;
  if (ev.ts === null) ev.badTs = { field: tsField, why: ts === undefined || ts === null ? 'missing' : notATimestamp(ts) };
  const ni = data.node_info;
  if (isObj(ni) && typeof ni.unique_id === 'string' && ni.unique_id) {
    const rel = isObj(ni.node_relation) ? ni.node_relation : {};
    ev.node = {
      uniqueId: ni.unique_id, resourceType: str(ni.resource_type), name: str(ni.node_name), path: str(ni.node_path),
      materialized: str(ni.materialized), status: str(ni.node_status),
      database: str(rel.database) || undefined, schema: str(rel.schema) || undefined, alias: str(rel.alias) || undefined,
    };
  }
  return ev;
}
