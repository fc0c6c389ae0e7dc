/**
 * The engine's Parquet layout (telemetry.md §3): top-level columns, the `attributes` struct of
 * well-known columns plus `json_payload`, and the per-event mapping between JSONL attributes and
 * those columns. The mapping runs both ways so that JSONL -> Parquet -> JSONL gives back the same
 * records: values a column cannot hold losslessly stay in json_payload.
 *
 * Writing lives in parquet-writer.ts (re-exported here: `writeParquetFile` is the stable entry point).
 */
import type { AttrValue, Attributes } from './record.js';

/** Physical kind of a column, which decides the Arrow type and how a JSONL value is converted. */
export type ColKind = 'dict' | 'lstr' | 'u64' | 'u32' | 'i32' | 'bool' | 'ts' | 'json';

export interface ColSpec {
  name: string;
  kind: ColKind;
  nullable: boolean;
}

/** Top-level columns in the engine's order (§3.1); `links` and `attributes` are nested and built apart. */
export const TOP_COLUMNS: readonly ColSpec[] = [
  { name: 'record_type', kind: 'dict', nullable: false },
  { name: 'trace_id', kind: 'dict', nullable: false },
  { name: 'span_id', kind: 'u64', nullable: true },
  { name: 'event_id', kind: 'lstr', nullable: true },
  { name: 'span_name', kind: 'lstr', nullable: true },
  { name: 'parent_span_id', kind: 'u64', nullable: true },
  // links: List(Struct{trace_id Dict, span_id UInt64, json_payload LargeUtf8 JSON})
  { name: 'start_time_unix_nano', kind: 'ts', nullable: true },
  { name: 'end_time_unix_nano', kind: 'ts', nullable: true },
  { name: 'time_unix_nano', kind: 'ts', nullable: true },
  { name: 'severity_number', kind: 'i32', nullable: false },
  { name: 'severity_text', kind: 'dict', nullable: false },
  { name: 'body', kind: 'lstr', nullable: true },
  { name: 'status_code', kind: 'u32', nullable: true },
  { name: 'status_message', kind: 'lstr', nullable: true },
  { name: 'event_type', kind: 'dict', nullable: false },
  // attributes: Struct (ATTRIBUTE_COLUMNS)
];

/** The position of `links` among the top-level columns (after parent_span_id). */
export const LINKS_AFTER = 'parent_span_id';

/** Well-known attribute columns in the engine's order (§3.2); json_payload first. */
export const ATTRIBUTE_COLUMNS: readonly ColSpec[] = (
  [
    ['json_payload', 'json'],
    ['name', 'dict'],
    ['database', 'dict'],
    ['schema', 'dict'],
    ['identifier', 'dict'],
    ['dbt_core_event_code', 'dict'],
    ['phase', 'dict'],
    ['unique_id', 'dict'],
    ['materialization', 'dict'],
    ['custom_materialization', 'dict'],
    ['node_type', 'dict'],
    ['node_outcome', 'dict'],
    ['node_error_type', 'dict'],
    ['node_cancel_reason', 'dict'],
    ['node_skip_reason', 'dict'],
    ['sao_enabled', 'bool'],
    ['dev_name', 'dict'],
    ['file', 'dict'],
    ['line', 'u32'],
    ['code', 'u32'],
    ['code_name', 'dict'],
    ['original_severity_number', 'i32'],
    ['original_severity_text', 'dict'],
    ['package_name', 'dict'],
    ['relative_path', 'lstr'],
    ['code_line', 'u32'],
    ['code_column', 'u32'],
    ['artifact_type', 'dict'],
    ['query_id', 'lstr'],
    ['query_outcome', 'dict'],
    ['adapter_type', 'dict'],
    ['query_error_vendor_code', 'i32'],
    ['content_hash', 'lstr'],
    ['output_format', 'dict'],
    ['content', 'lstr'],
    ['duration_ms', 'u64'],
    ['rows_affected', 'u64'],
    ['group', 'lstr'],
  ] as [string, ColKind][]
).map(([name, kind]) => ({ name, kind, nullable: true }));

/**
 * What is wrong with a file's `attributes` column (its DuckDB type, undefined when there is none), or
 * undefined: every outcome is in that struct, and a file without it would read as runs without results.
 */
export function attributesColumnProblem(type: string | undefined): string | undefined {
  if (type === undefined) return "attributes: missing (the engine's Parquet layout has a struct column of the event's fields)";
  if (!type.startsWith('STRUCT(')) return `attributes: a ${type} column (the engine's Parquet layout has a struct of the event's fields)`;
  return undefined;
}

export const ATTRIBUTE_KIND: ReadonlyMap<string, ColKind> = new Map(ATTRIBUTE_COLUMNS.map((c) => [c.name, c.kind]));

/** The fields of a DuckDB STRUCT(...) type, by name, with their types. */
export function structFields(type: string): Map<string, string> {
  const parts: string[] = [];
  let depth = 0;
  let tok = '';
  for (const ch of type.slice(7, -1)) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(tok.trim());
      tok = '';
    } else tok += ch;
  }
  if (tok.trim()) parts.push(tok.trim());
  return new Map(parts.map((a) => /^"?([^" ]+)"? (.*)$/.exec(a)!).map((m) => [m[1]!, m[2]!.trim()]));
}

const UNSIGNED = ['UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT'];
const SIGNED_32 = ['TINYINT', 'SMALLINT', 'INTEGER'];
const INTEGERS = [...UNSIGNED, ...SIGNED_32, 'BIGINT', 'HUGEINT', 'UHUGEINT'];
/**
 * The DuckDB types a column of each kind may have, the layout's first: the reader takes each of them
 * exactly (an integer of another width, a timestamp of another unit); the layout's name is said when
 * a column has another type.
 */
const READABLE: Record<ColKind, readonly string[]> = {
  dict: ['VARCHAR'],
  lstr: ['VARCHAR'],
  json: ['VARCHAR', 'JSON'],
  bool: ['BOOLEAN'],
  ts: ['TIMESTAMP_NS', 'TIMESTAMP', 'TIMESTAMP_MS', 'TIMESTAMP_S', 'TIMESTAMP WITH TIME ZONE'],
  i32: ['INTEGER', ...SIGNED_32, 'UTINYINT', 'USMALLINT'],
  // out-of-range values are the rows' problems (a status code past 32 bits), or kept as written (a count)
  u32: ['UINTEGER', ...INTEGERS],
  u64: ['UBIGINT', ...INTEGERS],
};
/** Span ids: any unsigned integer is 16 hex digits; a signed one may be negative. */
const ID_TYPES = ['UBIGINT', ...UNSIGNED];

/**
 * What the model does not read of an `attributes` struct other than the engine's (a plain copy of
 * JSONL): fields outside the layout (kept in `attributes`, no outcome taken from them), and, without
 * json_payload, the outcome details the layout keeps there. Undefined for the engine's layout.
 */
export function attributesLayoutNote(attrType: string): { field: string; reason: string } | undefined {
  const fields = [...structFields(attrType).keys()];
  const outside = fields.filter((f) => !ATTRIBUTE_KIND.has(f));
  const parts: string[] = [];
  if (outside.length) {
    const named = outside.length > 10 ? `${outside.slice(0, 10).join(', ')}, ... (${outside.length} in all)` : outside.join(', ');
    parts.push(`fields outside the engine's layout are not read (${named}: kept in attributes, no outcome is taken from them)`);
  }
  if (!fields.includes('json_payload')) parts.push("no json_payload field (where the layout keeps test results and skipped nodes' upstreams): none is read");
  return parts.length ? { field: 'attributes', reason: parts.join('; ') } : undefined;
}

/**
 * What is wrong with the types of a Parquet file's columns (as DESCRIBE gives them), checked against
 * the engine's layout once, before any row is read, or undefined. Columns and attribute fields outside
 * the layout are not looked at. The one check of load, validate and convert.
 */
export function parquetColumnsProblem(cols: readonly { name: string; type: string }[]): { field: string; reason: string } | undefined {
  const attrType = cols.find((c) => c.name === 'attributes')?.type;
  const problem = attributesColumnProblem(attrType);
  if (problem) {
    const at = problem.indexOf(': ');
    return { field: problem.slice(0, at), reason: problem.slice(at + 2) };
  }
  const wrong = (field: string, type: string, allowed: readonly string[]) =>
    allowed.includes(type) ? undefined : { field, reason: `must be ${allowed[0]}, got ${type}` };
  for (const c of cols) {
    const spec = TOP_COLUMNS.find((t) => t.name === c.name);
    const p = spec && wrong(c.name, c.type, spec.name.endsWith('span_id') ? ID_TYPES : READABLE[spec.kind]);
    if (p) return p;
    if (c.name === 'links') {
      const want = 'STRUCT(trace_id VARCHAR, span_id UBIGINT, json_payload VARCHAR)[]';
      if (!c.type.startsWith('STRUCT(') || !c.type.endsWith(')[]')) return { field: 'links', reason: `must be ${want}, got ${c.type}` };
      const f = structFields(c.type.slice(0, -2));
      for (const [name, allowed] of [['trace_id', READABLE.dict], ['span_id', ID_TYPES], ['json_payload', READABLE.json]] as const) {
        const t = f.get(name);
        if (t === undefined && name !== 'json_payload') return { field: `links.${name}`, reason: `missing (${want})` };
        const lp = t !== undefined && wrong(`links.${name}`, t, allowed);
        if (lp) return lp;
      }
    }
  }
  for (const [name, type] of structFields(attrType!)) {
    const kind = ATTRIBUTE_KIND.get(name);
    const p = kind && wrong(`attributes.${name}`, type, READABLE[kind]);
    if (p) return p;
  }
  return undefined;
}

/** Arrow field metadata of the canonical JSON extension type on json_payload columns. */
export const JSON_EXTENSION_METADATA: ReadonlyMap<string, string> = new Map([
  ['ARROW:extension:name', 'arrow.json'],
  ['ARROW:extension:metadata', ''],
]);

/** Fields of the node_outcome_detail oneof: JSONL key <-> serde variant name in json_payload. */
export const NODE_DETAIL_VARIANTS: Readonly<Record<string, string>> = {
  node_cache_detail: 'NodeCacheDetail',
  node_test_detail: 'NodeTestDetail',
  node_freshness_outcome: 'NodeFreshnessOutcome',
  node_skip_upstream_detail: 'NodeSkipUpstreamDetail',
  node_evaluation_detail: 'NodeEvaluationDetail',
};
const VARIANT_TO_KEY: Record<string, string> = Object.fromEntries(Object.entries(NODE_DETAIL_VARIANTS).map(([k, v]) => [v, k]));

/** Inner key order of the detail messages in json_payload (serde writes struct fields in proto order). */
const DETAIL_FIELD_ORDER: Record<string, string[]> = {
  NodeTestDetail: ['test_outcome', 'failing_rows', 'diff_table', 'store_failures', 'statically_checked', 'batch_unique_id'],
  NodeCacheDetail: ['node_cache_reason', 'build_after_seconds', 'last_updated_seconds', 'message'],
  NodeFreshnessOutcome: ['node_freshness_outcome', 'age_seconds'],
  NodeSkipUpstreamDetail: ['upstream_unique_id'],
  NodeEvaluationDetail: ['node_warning_outcome'],
};

type PayloadStyle =
  /** leftover attributes as an object (null when none) */
  | 'rest'
  /** everything in json_payload, no columns */
  | 'all'
  /** NodeEvaluated: the oneof detail externally tagged, plus any leftovers */
  | 'node_evaluated'
  /** NodeProcessed: {in_selection, node_outcome_detail:{Variant:{..}}, source_name, ...leftovers} */
  | 'node_processed'
  /** PhaseExecuted: node counts as JSON numbers (u64 strings in JSONL) */
  | 'phase';

export interface EventMapping {
  /** JSONL attribute key -> attribute column */
  columns: Readonly<Record<string, string>>;
  payload: PayloadStyle;
  /** payload keys the engine always writes at their default, dropped again on the way back */
  payloadDefaults?: Readonly<Record<string, AttrValue>>;
}

const same = (...keys: string[]): Record<string, string> => Object.fromEntries(keys.map((k) => [k, k]));

const NODE_COMMON = {
  ...same('name', 'database', 'schema', 'identifier', 'unique_id', 'materialization', 'custom_materialization', 'node_type',
    'node_outcome', 'node_error_type', 'node_cancel_reason', 'node_skip_reason', 'sao_enabled', 'dbt_core_event_code',
    'relative_path', 'rows_affected'),
  defined_at_line: 'code_line',
  defined_at_col: 'code_column',
  node_checksum: 'content_hash',
};

/** Per-event mapping keyed by `category.Message` (telemetry.md §3.2); unlisted events use 'all'. */
export const EVENT_MAPPINGS: Readonly<Record<string, EventMapping>> = {
  'node.NodeEvaluated': { columns: { ...NODE_COMMON, phase: 'phase' }, payload: 'node_evaluated' },
  'node.NodeProcessed': { columns: { ...NODE_COMMON, last_phase: 'phase', ...same('duration_ms', 'group') }, payload: 'node_processed' },
  'phase.PhaseExecuted': { columns: same('phase'), payload: 'phase' },
  'query.QueryExecuted': {
    columns: { sql_hash: 'content_hash', ...same('adapter_type', 'query_id', 'unique_id', 'query_outcome', 'phase', 'query_error_vendor_code', 'dbt_core_event_code') },
    payload: 'rest',
  },
  'hook.HookProcessed': { columns: same('package_name', 'name', 'unique_id', 'dbt_core_event_code', 'phase'), payload: 'rest' },
  'log.LogMessage': {
    columns: same('code', 'code_name', 'dbt_core_event_code', 'original_severity_number', 'original_severity_text', 'unique_id', 'phase',
      'file', 'line', 'package_name', 'relative_path', 'code_line', 'code_column'),
    payload: 'rest',
  },
  'log.UserLogMessage': {
    columns: { ...same('dbt_core_event_code', 'unique_id', 'phase', 'package_name', 'relative_path'), line: 'code_line', column: 'code_column' },
    payload: 'rest',
    payloadDefaults: { is_print: false },
  },
  'artifact.ArtifactWritten': { columns: same('relative_path', 'artifact_type'), payload: 'rest' },
  'asset.AssetParsed': { columns: same('phase', 'name', 'unique_id', 'package_name', 'relative_path'), payload: 'rest' },
  'log.CompiledCode': { columns: { ...same('unique_id', 'relative_path'), node_name: 'name', sql: 'content' }, payload: 'rest' },
  'log.ListItemOutput': { columns: same('output_format', 'content', 'unique_id', 'dbt_core_event_code'), payload: 'rest' },
};

const ALL: EventMapping = { columns: {}, payload: 'all' };

export function mappingFor(eventKeyName: string | null): EventMapping {
  return (eventKeyName && EVENT_MAPPINGS[eventKeyName]) || ALL;
}

const U64_RE = /^\d{1,20}$/;

/** Can `v` be stored in a column of `kind` and read back as the identical JSONL value? */
export function fitsColumn(kind: ColKind, v: AttrValue): boolean {
  switch (kind) {
    case 'dict':
    case 'lstr':
      return typeof v === 'string';
    case 'u64':
      // canonical decimal (no leading zeros) within 2^64-1, so it reads back as the same string
      return typeof v === 'string' && U64_RE.test(v) && (v.length === 1 || v[0] !== '0') && (v.length < 20 || v <= '18446744073709551615');
    case 'u32':
      return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;
    case 'i32':
      return typeof v === 'number' && Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff;
    case 'bool':
      return typeof v === 'boolean';
    default:
      return false;
  }
}

/** Attribute column values (by column name) and the json_payload text of one record. */
export interface SplitAttributes {
  /** [column, value] pairs */
  columns: [string, AttrValue][];
  payload: string | null;
}

function orderedDetail(variant: string, inner: AttrValue): AttrValue {
  const order = DETAIL_FIELD_ORDER[variant];
  if (!order || inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
  const out: Record<string, AttrValue> = {};
  for (const k of order) if (k in inner) out[k] = inner[k]!;
  for (const k of Object.keys(inner)) if (!(k in out)) out[k] = inner[k]!;
  return out;
}

/** JSONL attributes -> well-known columns + json_payload for one event. */
export function splitAttributes(eventKeyName: string | null, attrs: Attributes): SplitAttributes {
  const m = mappingFor(eventKeyName);
  const columns: [string, AttrValue][] = [];
  if (m.payload === 'all') {
    for (const _ in attrs) return { columns, payload: JSON.stringify(attrs) };
    return { columns, payload: null };
  }
  let rest: Record<string, AttrValue> | null = null;
  let detail: [string, AttrValue] | null = null;
  for (const k in attrs) {
    const v = attrs[k]!;
    const col = m.columns[k];
    if (col !== undefined && v !== null && fitsColumn(ATTRIBUTE_KIND.get(col)!, v)) columns.push([col, v]);
    else if (NODE_DETAIL_VARIANTS[k] && (m.payload === 'node_evaluated' || m.payload === 'node_processed') && !detail) detail = [k, v];
    else (rest ??= {})[k] = v;
  }
  if (rest === null && detail === null && m.payload !== 'rest') return { columns, payload: null };
  rest ??= {};
  let payload: Record<string, AttrValue> | null = null;
  switch (m.payload) {
    case 'rest':
      payload = Object.keys(rest).length || m.payloadDefaults ? { ...m.payloadDefaults, ...rest } : null;
      break;
    case 'phase': {
      // The engine writes the counts as JSON numbers here (u64 strings in JSONL).
      payload = {};
      for (const k of Object.keys(rest)) {
        const v = rest[k]!;
        payload[k] = k.startsWith('node_count_') && typeof v === 'string' && U64_RE.test(v) && Number(v) <= Number.MAX_SAFE_INTEGER ? Number(v) : v;
      }
      if (!Object.keys(payload).length) payload = null;
      break;
    }
    case 'node_evaluated': {
      payload = {};
      if (detail) payload[NODE_DETAIL_VARIANTS[detail[0]]!] = orderedDetail(NODE_DETAIL_VARIANTS[detail[0]]!, detail[1]);
      Object.assign(payload, rest);
      if (!Object.keys(payload).length) payload = null;
      break;
    }
    case 'node_processed': {
      payload = {};
      if ('in_selection' in rest) payload.in_selection = rest.in_selection!;
      if (detail) payload.node_outcome_detail = { [NODE_DETAIL_VARIANTS[detail[0]]!]: orderedDetail(NODE_DETAIL_VARIANTS[detail[0]]!, detail[1]) };
      for (const k of Object.keys(rest)) if (k !== 'in_selection') payload[k] = rest[k]!;
      if (!Object.keys(payload).length) payload = null;
      break;
    }
  }
  return { columns, payload: payload ? JSON.stringify(payload) : null };
}

/**
 * Well-known columns + json_payload -> JSONL attributes (keys in any order: the JSONL serializer
 * sorts them). `columns` holds non-null values only, already in JSONL form (u64 as decimal strings).
 */
export function joinAttributes(eventKeyName: string | null, columns: Map<string, AttrValue>, payloadText: string | null): Attributes {
  const m = mappingFor(eventKeyName);
  const out: Attributes = {};
  if (m.payload !== 'all') {
    const byCol: Record<string, string> = {};
    for (const [k, c] of Object.entries(m.columns)) byCol[c] = k;
    for (const [c, v] of columns) out[byCol[c] ?? c] = v;
  } else {
    for (const [c, v] of columns) out[c] = v;
  }
  if (payloadText === null || payloadText === '') return out;
  const p = JSON.parse(payloadText) as AttrValue;
  if (p === null || typeof p !== 'object' || Array.isArray(p)) return out;
  for (const k of Object.keys(p)) {
    const v = p[k]!;
    if (m.payload === 'phase' && k.startsWith('node_count_') && typeof v === 'number') out[k] = String(v);
    else if (m.payload === 'node_evaluated' && VARIANT_TO_KEY[k]) out[VARIANT_TO_KEY[k]!] = v;
    else if (m.payload === 'node_processed' && k === 'node_outcome_detail' && v && typeof v === 'object' && !Array.isArray(v)) {
      for (const variant of Object.keys(v)) out[VARIANT_TO_KEY[variant] ?? variant] = v[variant]!;
    } else if (m.payloadDefaults && k in m.payloadDefaults && m.payloadDefaults[k] === v) continue;
    else out[k] = v;
  }
  return out;
}

export { writeParquetFile, type ParquetWriteOptions } from './parquet-writer.js';
