/**
 * Attribute builders for node, phase, query and invocation events, following the engine's pbjson
 * habits: enums as constant names, zero values of non-optional fields omitted, optional fields
 * written when set (even at zero), 64-bit integers as strings.
 */
import {
  ExecutionPhase, NodeCacheReason, NodeCancelReason, NodeErrorType, NodeMaterialization, NodeOutcome, NodeSkipReason, NodeType,
  NodeWarningOutcome, SourceFreshnessOutcome, TestOutcome, enumConstant, normalizeEnum, type EnumTable,
} from '../telemetry/enums.js';
import type { Attributes, AttrValue } from './record.js';

/** Constant name for any spelling (short, suffix or constant); throws on unknown values. */
const memo = new Map<EnumTable, Map<string | number, string>>();

export function konst(t: EnumTable, v: string | number): string {
  let m = memo.get(t);
  if (!m) memo.set(t, (m = new Map()));
  const hit = m.get(v);
  if (hit !== undefined) return hit;
  const short = normalizeEnum(t, v);
  if (short === null) throw new Error(`missing ${t.name} value`);
  const c = enumConstant(t, short);
  m.set(v, c);
  return c;
}

/** Phase constant; the interface's "compile" is the engine's RENDER phase. */
export function phaseConst(p: string): string {
  return /^compile$/i.test(p) ? 'EXECUTION_PHASE_RENDER' : konst(ExecutionPhase, p);
}

export const u64 = (v: number | bigint): string => {
  const b = BigInt(v);
  if (b < 0n) throw new Error(`negative 64-bit unsigned value ${b}`);
  return b.toString();
};

export type NodeOutcomeName = 'success' | 'error' | 'skipped' | 'canceled';
export type SkipReasonName = 'upstream' | 'cached' | 'phase_disabled' | 'noop' | 'phase_skipped';

/** What a node (or one evaluation of it) ended with. Enum values take short names or constants. */
export interface NodeResult {
  outcome: NodeOutcomeName | string;
  /** required meaning for skipped; defaults to upstream when `upstreamUniqueId` is set */
  skipReason?: SkipReasonName | string;
  upstreamUniqueId?: string;
  /** for errors (default user) */
  errorType?: 'internal' | 'external' | 'user' | string;
  cancelReason?: 'user_cancelled' | string;
  /** data tests and unit tests that ran: passed (default), warned or failed, with failing rows */
  test?: {
    outcome?: 'passed' | 'warned' | 'failed' | string;
    failingRows?: number;
    /** false: the count is unknown (an older engine's result without one), written beside the detail as failing_rows_recorded */
    failingRowsRecorded?: boolean;
    diffTable?: string;
    storeFailures?: boolean;
  };
  /** cached skips */
  cache?: { reason?: string; buildAfterSeconds?: number; lastUpdatedSeconds?: number; message?: string };
  /** source freshness */
  freshness?: { outcome?: 'passed' | 'warned' | 'failed' | string; ageSeconds?: number };
  /** success with or without warnings (NodeEvaluationDetail) */
  warnings?: 'no_warnings' | 'with_warnings' | string;
  rowsAffected?: number | bigint;
  /** written as an ERROR LogMessage under the span before it ends */
  errorMessage?: string;
}

export interface NodeInfo {
  uniqueId: string;
  name?: string;
  /** model, seed, snapshot, test, unit_test, source, ... */
  nodeType: string;
  materialization?: string;
  customMaterialization?: string;
  database?: string;
  schema?: string;
  identifier?: string;
  relativePath?: string;
  checksum?: string;
  /** tests: 1-based line and 0-based column of the definition */
  definedAtLine?: number;
  definedAtCol?: number;
  saoEnabled?: boolean;
  /** default true */
  inSelection?: boolean;
  group?: string;
  sourceName?: string;
}

const TEST_TYPES = new Set(['NODE_TYPE_TEST', 'NODE_TYPE_UNIT_TEST']);
export const isTestType = (nodeTypeConst: string) => TEST_TYPES.has(nodeTypeConst);

function set(a: Attributes, k: string, v: AttrValue | undefined): void {
  if (v !== undefined) a[k] = v;
}
/** non-optional proto3 string: the empty string is the zero value and is omitted */
function setStr(a: Attributes, k: string, v: string | undefined): void {
  if (v !== undefined && v !== '') a[k] = v;
}

/** Attributes shared by NodeProcessed and NodeEvaluated at SpanStart. */
export function nodeBaseAttrs(n: NodeInfo): Attributes {
  const a: Attributes = {};
  set(a, 'database', n.database);
  set(a, 'schema', n.schema);
  set(a, 'identifier', n.identifier);
  setStr(a, 'name', n.name ?? n.uniqueId.split('.').slice(-1)[0]);
  setStr(a, 'unique_id', n.uniqueId);
  if (n.materialization !== undefined) a.materialization = konst(NodeMaterialization, n.materialization);
  set(a, 'custom_materialization', n.customMaterialization);
  const nt = konst(NodeType, n.nodeType);
  if (nt !== 'NODE_TYPE_UNSPECIFIED') a.node_type = nt;
  setStr(a, 'relative_path', n.relativePath);
  setStr(a, 'node_checksum', n.checksum);
  set(a, 'defined_at_line', n.definedAtLine);
  set(a, 'defined_at_col', n.definedAtCol);
  set(a, 'sao_enabled', n.saoEnabled ?? false);
  return a;
}

/** Outcome attributes for a SpanEnd (node_outcome, reasons, the oneof detail, rows_affected). */
export function outcomeAttrs(r: NodeResult, nodeTypeConst: string, withTestDetail: boolean): Attributes {
  const a: Attributes = {};
  const outcome = konst(NodeOutcome, r.outcome);
  if (outcome !== 'NODE_OUTCOME_UNSPECIFIED') a.node_outcome = outcome;
  if (outcome === 'NODE_OUTCOME_ERROR') a.node_error_type = konst(NodeErrorType, r.errorType ?? 'user');
  if (outcome === 'NODE_OUTCOME_CANCELED') a.node_cancel_reason = konst(NodeCancelReason, r.cancelReason ?? 'user_cancelled');
  if (outcome === 'NODE_OUTCOME_SKIPPED') {
    const reason = konst(NodeSkipReason, r.skipReason ?? (r.upstreamUniqueId ? 'upstream' : r.cache ? 'cached' : 'upstream'));
    a.node_skip_reason = reason;
    if (reason === 'NODE_SKIP_REASON_UPSTREAM' && r.upstreamUniqueId) a.node_skip_upstream_detail = { upstream_unique_id: r.upstreamUniqueId };
    if (reason === 'NODE_SKIP_REASON_CACHED') {
      const c = r.cache ?? {};
      const d: Attributes = {};
      const reasonC = konst(NodeCacheReason, c.reason ?? 'no_changes');
      if (reasonC !== 'NODE_CACHE_REASON_NO_CHANGES') d.node_cache_reason = reasonC;
      if (c.buildAfterSeconds !== undefined) d.build_after_seconds = u64(c.buildAfterSeconds);
      if (c.lastUpdatedSeconds !== undefined) d.last_updated_seconds = u64(c.lastUpdatedSeconds);
      set(d, 'message', c.message);
      a.node_cache_detail = d;
    }
  }
  if (outcome === 'NODE_OUTCOME_SUCCESS') {
    if (r.test || (withTestDetail && isTestType(nodeTypeConst))) {
      const t = r.test ?? {};
      const d: Attributes = {};
      const to = konst(TestOutcome, t.outcome ?? 'passed');
      if (to !== 'TEST_OUTCOME_PASSED') d.test_outcome = to;
      if (t.failingRows) d.failing_rows = t.failingRows;
      set(d, 'diff_table', t.diffTable);
      set(d, 'store_failures', t.storeFailures);
      a.node_test_detail = d;
      if (t.failingRowsRecorded === false) a.failing_rows_recorded = false;
    } else if (r.freshness) {
      const d: Attributes = {};
      const fo = konst(SourceFreshnessOutcome, r.freshness.outcome ?? 'passed');
      if (fo !== 'SOURCE_FRESHNESS_OUTCOME_OUTCOME_PASSED') d.node_freshness_outcome = fo;
      if (r.freshness.ageSeconds !== undefined) d.age_seconds = String(Math.trunc(r.freshness.ageSeconds));
      a.node_freshness_outcome = d;
    } else if (r.warnings) {
      const w = konst(NodeWarningOutcome, r.warnings);
      a.node_evaluation_detail = w === 'NODE_WARNING_OUTCOME_UNSPECIFIED' ? {} : { node_warning_outcome: w };
    }
  }
  if (r.rowsAffected !== undefined) a.rows_affected = u64(r.rowsAffected);
  return a;
}

/** Span status for a node outcome (telemetry.md §1.3). */
export function nodeStatus(outcomeConst: string | undefined): { message: string | null; code: number } | null {
  switch (outcomeConst) {
    case 'NODE_OUTCOME_SUCCESS':
    case 'NODE_OUTCOME_SKIPPED':
      return { message: null, code: 1 };
    case 'NODE_OUTCOME_ERROR':
      return { message: 'error', code: 2 };
    case 'NODE_OUTCOME_CANCELED':
      return { message: 'canceled', code: 2 };
    default:
      return null;
  }
}

/** NodeProcessed's closing dbt_core_event_code by node type and outcome. */
export function processedEndCode(nodeTypeConst: string, a: Attributes): string {
  if (a.node_outcome === 'NODE_OUTCOME_SKIPPED') return a.node_skip_reason === 'NODE_SKIP_REASON_NO_OP' ? 'Q019' : 'Q034';
  switch (nodeTypeConst) {
    case 'NODE_TYPE_TEST':
    case 'NODE_TYPE_UNIT_TEST':
      return 'Q007';
    case 'NODE_TYPE_MODEL':
      return 'Q012';
    case 'NODE_TYPE_SEED':
      return 'Q016';
    case 'NODE_TYPE_SNAPSHOT':
      return 'Q015';
    case 'NODE_TYPE_FUNCTION':
      return 'Q047';
    case 'NODE_TYPE_SOURCE':
      return 'Q018';
    default:
      return 'Q008';
  }
}

/** NodeEvaluated's dbt_core_event_code: Q030 while rendering, Q031 while running, none otherwise. */
export function evaluatedCode(phaseConst: string): string | undefined {
  return phaseConst === 'EXECUTION_PHASE_RENDER' ? 'Q030' : phaseConst === 'EXECUTION_PHASE_RUN' ? 'Q031' : undefined;
}
