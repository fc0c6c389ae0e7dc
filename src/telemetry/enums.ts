/**
 * The engine's protobuf enums in one place: constant name <-> number <-> short lower-case name.
 *
 * Inputs may carry the constant (NODE_OUTCOME_SKIPPED), the bare suffix (SKIPPED), the short name
 * (skipped), the interface's prose form (Run) or the number. Everything normalizes to `short`.
 * The SQL normalizer (src/store/normalize-sql.ts) is generated from these tables, so the JS and SQL
 * sides cannot drift apart.
 */

export interface EnumEntry {
  /** constant suffix after the prefix, e.g. SKIPPED */
  readonly suffix: string;
  readonly number: number;
  /** normalized short name used in the model, e.g. skipped */
  readonly short: string;
}

export interface EnumTable {
  readonly name: string;
  /** constant prefix including the trailing underscore, e.g. NODE_OUTCOME_ */
  readonly prefix: string;
  readonly entries: readonly EnumEntry[];
  /** the value an absent field means (proto3 zero value), as a short name; null when absent means unknown */
  readonly zero: string | null;
}

function table(name: string, prefix: string, entries: [string, number, string?][], zero: string | null): EnumTable {
  return {
    name,
    prefix,
    zero,
    entries: entries.map(([suffix, number, short]) => ({ suffix, number, short: short ?? suffix.toLowerCase() })),
  };
}

export const NodeOutcome = table(
  'NodeOutcome',
  'NODE_OUTCOME_',
  [['UNSPECIFIED', 0], ['SUCCESS', 1], ['ERROR', 2], ['CANCELED', 3], ['SKIPPED', 4]],
  null,
);

export const NodeSkipReason = table(
  'NodeSkipReason',
  'NODE_SKIP_REASON_',
  [['UNSPECIFIED', 0], ['UPSTREAM', 1], ['CACHED', 2], ['PHASE_DISABLED', 3], ['NO_OP', 4, 'noop'], ['PHASE_SKIPPED', 5]],
  null,
);

export const TestOutcome = table('TestOutcome', 'TEST_OUTCOME_', [['PASSED', 0], ['WARNED', 1], ['FAILED', 2]], 'passed');

export const NodeErrorType = table('NodeErrorType', 'NODE_ERROR_TYPE_', [['INTERNAL', 0], ['EXTERNAL', 1], ['USER', 2]], null);

export const NodeCancelReason = table('NodeCancelReason', 'NODE_CANCEL_REASON_', [['USER_CANCELLED', 0]], null);

export const NodeCacheReason = table(
  'NodeCacheReason',
  'NODE_CACHE_REASON_',
  [['NO_CHANGES', 0], ['STILL_FRESH', 1], ['UPDATE_CRITERIA_NOT_MET', 2], ['CLONED_EXISTING', 3], ['CLONED_EXISTING_STILL_FRESH', 4]],
  'no_changes',
);

export const SourceFreshnessOutcome = table(
  'SourceFreshnessOutcome',
  'SOURCE_FRESHNESS_OUTCOME_',
  [['OUTCOME_PASSED', 0, 'passed'], ['OUTCOME_WARNED', 1, 'warned'], ['OUTCOME_FAILED', 2, 'failed']],
  'passed',
);

export const NodeWarningOutcome = table(
  'NodeWarningOutcome',
  'NODE_WARNING_OUTCOME_',
  [['UNSPECIFIED', 0], ['NO_WARNINGS', 1], ['WITH_WARNINGS', 2]],
  null,
);

export const NodeType = table(
  'NodeType',
  'NODE_TYPE_',
  [
    ['UNSPECIFIED', 0], ['MODEL', 1], ['SEED', 2], ['SOURCE', 3], ['TEST', 4], ['UNIT_TEST', 5], ['MACRO', 6],
    ['DOCS_MACRO', 7], ['ANALYSIS', 8], ['OPERATION', 9], ['EXPOSURE', 10], ['SNAPSHOT', 11], ['METRIC', 12],
    ['SAVED_QUERY', 13], ['SEMANTIC_MODEL', 14], ['FUNCTION', 15],
  ],
  null,
);

export const NodeMaterialization = table(
  'NodeMaterialization',
  'NODE_MATERIALIZATION_',
  [
    ['UNKNOWN', 0], ['SNAPSHOT', 1], ['SEED', 2], ['VIEW', 3], ['TABLE', 4], ['INCREMENTAL', 5], ['MATERIALIZED_VIEW', 6],
    ['EXTERNAL', 7], ['TEST', 8], ['EPHEMERAL', 9], ['UNIT', 10], ['ANALYSIS', 11], ['STREAMING_TABLE', 12],
    ['DYNAMIC_TABLE', 13], ['FUNCTION', 14], ['CUSTOM', 100],
  ],
  null,
);

/** Phases. The interface's prose names (Parse, Compile, Run) are accepted as aliases. */
export const ExecutionPhase = table(
  'ExecutionPhase',
  'EXECUTION_PHASE_',
  [
    ['UNSPECIFIED', 0], ['CLEAN', 10], ['LOAD_PROJECT', 20], ['PARSE', 30], ['SCHEDULE', 40], ['COMPARE', 45],
    ['INIT_ADAPTER', 50], ['DEFER_HYDRATION', 60], ['SCHEMA_HYDRATION', 65], ['TASK_GRAPH_BUILD', 70],
    ['NODE_CACHE_HYDRATION', 80], ['RENDER', 90], ['ANALYZE', 100], ['RUN', 110], ['FRESHNESS_ANALYSIS', 120],
    ['LINEAGE', 130], ['DEBUG', 140], ['ON_RUN_START', 150], ['ON_RUN_END', 160],
  ],
  null,
);

export const HookType = table('HookType', 'HOOK_TYPE_', [['UNSPECIFIED', 0], ['ON_RUN_START', 1], ['ON_RUN_END', 2], ['PRE_HOOK', 3], ['POST_HOOK', 4]], null);
export const HookOutcome = table('HookOutcome', 'HOOK_OUTCOME_', [['UNSPECIFIED', 0], ['SUCCESS', 1], ['ERROR', 2], ['CANCELED', 3]], null);
export const QueryOutcome = table('QueryOutcome', 'QUERY_OUTCOME_', [['UNSPECIFIED', 0], ['SUCCESS', 1], ['ERROR', 2], ['CANCELED', 3]], null);
export const ArtifactType = table('ArtifactType', 'ARTIFACT_TYPE_', [['UNSPECIFIED', 0], ['MANIFEST', 1], ['SEMANTIC_MANIFEST', 2], ['CATALOG', 3], ['SOURCES', 4]], null);
export const PackageType = table('PackageType', 'PACKAGE_TYPE_', [['UNSPECIFIED', 0], ['HUB', 1], ['GIT', 2], ['LOCAL', 3], ['PRIVATE', 4], ['TARBALL', 5]], null);

/** OTLP severity subset the engine uses. */
export const Severity = table('SeverityNumber', 'SEVERITY_NUMBER_', [['UNSPECIFIED', 0], ['TRACE', 1], ['DEBUG', 5], ['INFO', 9], ['WARN', 13], ['ERROR', 17]], null);

export const ALL_ENUMS: readonly EnumTable[] = [
  NodeOutcome, NodeSkipReason, TestOutcome, NodeErrorType, NodeCancelReason, NodeCacheReason, SourceFreshnessOutcome,
  NodeWarningOutcome, NodeType, NodeMaterialization, ExecutionPhase, HookType, HookOutcome, QueryOutcome, ArtifactType,
  PackageType, Severity,
];

/**
 * Normalize any spelling of an enum value to its short name. Unknown values are kept (lower-cased,
 * prefix stripped) because the schema is additive: a newer engine may send values we do not know.
 */
export function normalizeEnum(t: EnumTable, value: unknown): string | null {
  if (value === undefined || value === null || value === '') return t.zero;
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value))) {
    const n = Number(value);
    const e = t.entries.find((x) => x.number === n);
    return e ? e.short : String(n);
  }
  let s = String(value).trim().toUpperCase().replace(/[\s-]+/g, '_');
  if (s.startsWith(t.prefix)) s = s.slice(t.prefix.length);
  const e = t.entries.find((x) => x.suffix === s || x.short.toUpperCase() === s);
  if (e) return e.short;
  const alias = ALIASES[t.name]?.[s];
  if (alias) return alias;
  return s.toLowerCase();
}

/** Constant name for a short name (what the real engine writes in JSONL). */
export function enumConstant(t: EnumTable, short: string): string {
  const e = t.entries.find((x) => x.short === short || x.suffix === short.toUpperCase());
  if (!e) throw new Error(`unknown ${t.name} value: ${short}`);
  return t.prefix + e.suffix;
}

export function enumNumber(t: EnumTable, short: string): number {
  const e = t.entries.find((x) => x.short === short);
  if (!e) throw new Error(`unknown ${t.name} value: ${short}`);
  return e.number;
}

/** Spellings seen outside the protobuf names (interface prose, older engine). */
export const ALIASES: Record<string, Record<string, string>> = {
  ExecutionPhase: { COMPILE: 'compile', EXECUTION: 'run', EXECUTE: 'run' },
  NodeOutcome: { CANCELLED: 'canceled', SKIP: 'skipped', PASS: 'success' },
  NodeSkipReason: { NOOP: 'noop' },
  SeverityNumber: { WARNING: 'warn', FATAL: 'error' },
};
