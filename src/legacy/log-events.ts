/**
 * One line of a `--log-format json` stream as an event identified by name. 1.4+ lines carry
 * `{data, info}` and are keyed on info.name; 1.0-1.3 flat lines have no name and a different code
 * numbering, so the few codes the translation needs are named from that version's table.
 */
import { isoToNs } from './time.js';

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
  /** the engine's thread (one query at a time runs on each) */
  thread: string;
  invocationId: string | null;
  data: Record<string, unknown>;
  node?: LegacyNodeInfo;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** 1.0-1.3 codes (renumbered in 1.4): only those the translation acts on. */
const FLAT_CODES: Record<string, string> = { A001: 'MainReportVersion', A002: 'MainReportArgs', Q023: 'NodeStart', Q024: 'NodeFinished', Q033: 'LogStartLine' };

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

export function parseEventLine(line: string): LegacyEvent | null {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isObj(o)) return null;
  let name: string, code: string, level: string, msg: string, ts: unknown, inv: unknown, thread: string, data: Record<string, unknown>;
  if (isObj(o.info)) {
    const i = o.info;
    name = str(i.name);
    code = str(i.code);
    level = str(i.level) || 'info';
    msg = str(i.msg);
    ts = i.ts;
    inv = i.invocation_id;
    thread = str(i.thread);
    data = isObj(o.data) ? o.data : {};
  } else if (typeof o.code === 'string') {
    code = o.code;
    name = FLAT_CODES[code] ?? code;
    level = str(o.level) || 'info';
    msg = str(o.msg);
    ts = o.ts;
    inv = o.invocation_id;
    thread = str(o.thread_name);
    data = isObj(o.data) ? o.data : {};
    if (!data.node_info && isObj(o.node_info)) data = { ...data, node_info: o.node_info };
  } else return null;
  if (msg.includes('\x1b')) msg = msg.replace(ANSI, '');
  const ev: LegacyEvent = { name, code, level, msg, ts: isoToNs(ts), thread, invocationId: typeof inv === 'string' && inv ? inv : null, data };
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
