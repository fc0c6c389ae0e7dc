/**
 * The one normalizer, SQL side: macros generated from src/telemetry/enums.ts and event-types.ts.
 * Every input (JSONL, Parquet, OTLP, translated legacy) lands in `records` in the JSONL shape;
 * these macros turn its spellings into the model's short lower-case values.
 */
import { ALIASES, ExecutionPhase, NodeOutcome, NodeSkipReason, NodeType, TestOutcome, type EnumTable } from '../telemetry/enums.js';
import { SPAN_KIND_BY_MESSAGE, USUAL_DEPTH } from '../telemetry/event-types.js';
import { sqlIn, sqlString } from './db.js';
import { detailMacroSql } from '../ingest/parquet.js';

/** The short name of `value` when it is one of `spellings` (NULL otherwise): its position in an ENUM of them. */
function spellingLookup(spellings: [string, string][], value: string): string {
  const names = spellings.map(([k]) => sqlString(k)).join(', ');
  const shorts = spellings.map(([, v]) => sqlString(v)).join(', ');
  return `[${shorts}][enum_code(TRY_CAST(${value} AS ENUM(${names}))) + 1]`;
}

function enumMacro(fn: string, t: EnumTable): string {
  // Every spelling the tables know (constant name, suffix, number, short name, aliases) -> short name.
  // The first spelling given wins, in the order normalizeEnum tries them.
  const known = new Map<string, string>();
  const add = (spelling: string, short: string) => {
    if (!known.has(spelling)) known.set(spelling, short);
  };
  for (const e of t.entries) add(t.prefix + e.suffix, e.short);
  for (const e of t.entries) {
    add(e.suffix, e.short);
    add(String(e.number), e.short);
    add(e.short.toUpperCase(), e.short);
    add(e.short, e.short);
  }
  for (const [k, v] of Object.entries(ALIASES[t.name] ?? {})) add(k, v);
  // Other spellings (odd casing, prose like "Run", unknown values, which are kept: the schema is
  // additive) as normalizeEnum reads them. Looked up the same way, not with a CASE of one WHEN per
  // spelling: DuckDB copies a CASE's operand into every WHEN, and binding the copies cost a small
  // file's insert more than reading the file.
  const key = `regexp_replace(regexp_replace(upper(trim(v)), '[ -]+', '_', 'g'), '^${t.prefix}', '')`;
  const keyed = [...known].filter(([k]) => k === k.toUpperCase() && !k.startsWith(t.prefix));
  const slow = `coalesce(${spellingLookup(keyed, key)}, lower(${key}))`;
  return `CREATE OR REPLACE MACRO ${fn}(v) AS CASE WHEN v IS NULL OR v = '' THEN NULL ELSE coalesce(${spellingLookup([...known], 'v')}, ${slow}) END;`;
}

function spanKindMacro(): string {
  // Suffix tests, not a regular expression: this runs on every record. The commonest kinds first: a
  // CASE tests each record against every WHEN until one holds.
  const order = ['NodeEvaluated', 'NodeProcessed', 'QueryExecuted'];
  const rank = (msg: string) => (order.includes(msg) ? order.indexOf(msg) : order.length);
  const whens = Object.entries(SPAN_KIND_BY_MESSAGE)
    .sort(([a], [b]) => rank(a) - rank(b))
    .map(([msg, kind]) => `WHEN ends_with(et, ${sqlString('.' + msg)}) THEN ${sqlString(kind)}`)
    .join(' ');
  // event_type decides; span names are the fallback for inputs without one (OTLP spans, hand-written files).
  return `CREATE OR REPLACE MACRO rl_span_kind(et, nm) AS CASE
    WHEN et IS NOT NULL AND et <> '' THEN CASE ${whens} ELSE 'other' END
    WHEN regexp_matches(nm, '^Node evaluated \\(|^Node\\(') THEN 'node_evaluated'
    WHEN regexp_matches(nm, '^Node processed \\(') THEN 'node_processed'
    WHEN regexp_matches(nm, '^Phase: |^Phase\\(') THEN 'phase'
    WHEN regexp_matches(nm, '^Query executed') THEN 'query'
    WHEN regexp_matches(nm, ' invocation \\(') THEN 'invocation'
    WHEN regexp_matches(nm, ' process \\(') THEN 'process'
    ELSE 'other' END;`;
}

export function normalizerMacros(): string[] {
  return [
    enumMacro('rl_outcome', NodeOutcome),
    enumMacro('rl_skip_reason', NodeSkipReason),
    enumMacro('rl_test_outcome', TestOutcome),
    enumMacro('rl_phase', ExecutionPhase),
    enumMacro('rl_node_type', NodeType),
    spanKindMacro(),
    detailMacroSql(),
    // unique_id from attributes, else from `Node(<id>)` / `Node evaluated (<id>)` span names.
    `CREATE OR REPLACE MACRO rl_unique_id(attrs, nm) AS coalesce(json_extract_string(attrs, '$.unique_id'), nullif(regexp_extract(nm, '^Node(?: evaluated| processed)? ?\\((.*)\\)$', 1), ''));`,
    // A failing-row count: an integer the format's int32 holds; another value (past 32 bits, a fraction) is an unknown count, never 0.
    `CREATE OR REPLACE MACRO rl_count(v) AS CASE WHEN regexp_full_match(CAST(v AS VARCHAR), '-?[0-9]+') THEN TRY_CAST(v AS INTEGER) END;`,
    // Hex ids: lower-case, and numbers (Parquet UInt64, OTLP) as 16 hex digits.
    `CREATE OR REPLACE MACRO rl_hex_id(v) AS CASE WHEN v IS NULL OR CAST(v AS VARCHAR) = '' THEN NULL WHEN regexp_full_match(CAST(v AS VARCHAR), '[0-9]+') AND length(CAST(v AS VARCHAR)) > 16 THEN printf('%016x', CAST(v AS UBIGINT)) ELSE lower(CAST(v AS VARCHAR)) END;`,
    // replace() only where there is a dash (UUID form): on every record it would be most of this macro's cost.
    `CREATE OR REPLACE MACRO rl_trace_id(v) AS CASE WHEN v IS NULL THEN NULL WHEN contains(CAST(v AS VARCHAR), '-') THEN lower(replace(CAST(v AS VARCHAR), '-', '')) ELSE lower(CAST(v AS VARCHAR)) END;`,
  ];
}

/**
 * The attributes the model reads, parsed once per record (json_transform is lenient: odd types become
 * NULL). A failing-row count is read as its text, so that one the format's 32-bit integer cannot hold
 * is told from none (rl_count).
 */
export const ATTR_STRUCT_FIELDS = {
  unique_id: 'VARCHAR', phase: 'VARCHAR', last_phase: 'VARCHAR', node_outcome: 'VARCHAR', node_skip_reason: 'VARCHAR',
  skip_reason: 'VARCHAR', node_skip_upstream_detail: { upstream_unique_id: 'VARCHAR' }, upstream_unique_id: 'VARCHAR',
  node_test_detail: { test_outcome: 'VARCHAR', failing_rows: 'VARCHAR' }, test_outcome: 'VARCHAR', failing_rows: 'VARCHAR', failing_rows_recorded: 'VARCHAR',
  node_type: 'VARCHAR', name: 'VARCHAR', relative_path: 'VARCHAR', materialization: 'VARCHAR', rows_affected: 'BIGINT',
  in_selection: 'BOOLEAN', code: 'INTEGER', duration_ms: 'DOUBLE',
} as const;
const ATTR_STRUCT = JSON.stringify(ATTR_STRUCT_FIELDS);

/**
 * A record's first link (NodeEvaluated -> its NodeProcessed), read from its links when a view is
 * asked for it: storing it at insert would cost every load, and only trees and the nodes of one run
 * read it.
 */
export const linkedSpanId = (links: string): string => `CASE WHEN ${links} IS NOT NULL THEN lower(json_extract_string(${links}, '$[0].span_id')) END`;

/** Columns of record_rows after the raw envelope ones, in table order. */
export const NORMALIZED_COLUMNS = `kind VARCHAR, unique_id VARCHAR, phase VARCHAR, node_outcome VARCHAR, skip_reason VARCHAR,
     upstream_unique_id VARCHAR, test_outcome VARCHAR, failing_rows INTEGER, resource_type VARCHAR, name VARCHAR,
     relative_path VARCHAR, materialization VARCHAR, rows_affected BIGINT, in_selection BOOLEAN, code INTEGER, attr_duration_ms DOUBLE`;

/**
 * Columns of record_rows after the normalized ones: the span tree, set by derive. span_row marks the
 * record that stands for a span in the spans view (at insert: every SpanEnd); node_result the span
 * that is its node's result in the node_results view (at insert: every NodeProcessed SpanEnd, NODE_RESULT).
 */
export const SPAN_TREE_COLUMNS = 'span_row BOOLEAN, orphan BOOLEAN, depth INTEGER, node_result BOOLEAN';

/** The usual depth of a span of kind \`kind\` (USUAL_DEPTH), stored at insert; NULL for other kinds and log records. */
export const usualDepth = (kind: string): string =>
  `CASE ${kind} ${Object.entries(USUAL_DEPTH).map(([k, d]) => `WHEN ${sqlString(k)} THEN ${d}`).join(' ')} END`;

/**
 * A record's node_result before derive looks at its node: the SpanEnd of a NodeProcessed. Derive
 * picks another span only for the few nodes that have no such span, or more than one (src/store/derive.ts).
 * A NodeProcessed without a unique_id (proto3 omits an empty string) is a result of its own: left
 * out, its error would pass the gate unseen.
 */
export const NODE_RESULT = `kind = 'node_processed' AND record_type = 'SpanEnd' AND span_id IS NOT NULL`;

/**
 * Wrap a source SELECT in the raw envelope shape (file_id ... attributes, as record_rows) with the
 * normalized columns the model reads. Every input goes through this one function.
 */
export function normalizeSelect(sourceSql: string, opts: { attrStruct?: boolean; spanStarts?: boolean } = {}): string {
  // A source may hand over the struct itself (column \`a\`, Parquet's typed columns): no JSON to parse.
  // Only the spans the model reads attributes of are parsed: log records keep their raw attributes (the
  // logs view extracts the few fields it shows), and other spans (assets, artifacts, generic ops) need none.
  const a = opts.attrStruct ? 'a0' : `json_transform(attributes, '${ATTR_STRUCT}')`;
  // A SpanStart is superseded by its SpanEnd, which carries the final attributes: its normalized columns
  // are left empty here (half the parsing of a load) and filled in by derive for the few spans that
  // never ended (\`spanStarts\`: normalize those too).
  const parsed = opts.spanStarts ? 'true' : `record_type <> 'SpanStart'`;
  return `SELECT src.* EXCLUDE (a, kind0${opts.attrStruct ? ', a0' : ''}), kind0 AS kind,
    -- CASE, not coalesce: coalesce evaluated the span-name regexp on every row.
    CASE WHEN a.unique_id IS NOT NULL THEN a.unique_id
         WHEN kind0 IN ('node_evaluated', 'node_processed', 'query') AND ${parsed}
         THEN nullif(regexp_extract(span_name, '^Node(?: evaluated| processed)? ?\\((.*)\\)$', 1), '') END AS unique_id,
    rl_phase(coalesce(a.phase, a.last_phase)) AS phase,
    -- a node's result that ended in ERROR without saying its outcome failed all the same (status Error is outcome ERROR)
    coalesce(rl_outcome(a.node_outcome), CASE WHEN kind0 = 'node_processed' AND record_type = 'SpanEnd' AND status_code = 2 THEN 'error' END) AS node_outcome,
    rl_skip_reason(coalesce(a.node_skip_reason, a.skip_reason)) AS skip_reason,
    coalesce(a.node_skip_upstream_detail.upstream_unique_id, a.upstream_unique_id) AS upstream_unique_id,
    CASE WHEN a.node_test_detail IS NOT NULL
         THEN coalesce(rl_test_outcome(a.node_test_detail.test_outcome), 'passed')
         ELSE rl_test_outcome(a.test_outcome) END AS test_outcome,
    -- no count in the detail is 0, unless the span says the count was not recorded (an older engine's result without one)
    CASE WHEN a.node_test_detail IS NOT NULL
         THEN CASE WHEN a.node_test_detail.failing_rows IS NOT NULL THEN rl_count(a.node_test_detail.failing_rows)
                   WHEN a.failing_rows_recorded IS DISTINCT FROM 'false' THEN 0 END
         ELSE rl_count(a.failing_rows) END AS failing_rows,
    CASE WHEN kind0 IN ('node_evaluated', 'node_processed') AND ${parsed} THEN rl_node_type(a.node_type) END AS resource_type,
    a.name AS name, a.relative_path AS relative_path,
    lower(CASE WHEN starts_with(a.materialization, 'NODE_MATERIALIZATION_') THEN substr(a.materialization, 22) ELSE a.materialization END) AS materialization,
    a.rows_affected AS rows_affected, a.in_selection AS in_selection,
    a.code AS code, a.duration_ms AS attr_duration_ms,
    record_type = 'SpanEnd' AND span_id IS NOT NULL AS span_row, NULL::BOOLEAN AS orphan, ${usualDepth('kind0')} AS depth,
    -- (unique_id: the column above)
    ${NODE_RESULT} AS node_result
  FROM (SELECT *, CASE WHEN ${sqlIn('kind0', ['node_evaluated', 'node_processed', 'query', 'phase', 'invocation'])} AND ${parsed} THEN ${a} END AS a
        FROM (SELECT s.* ${opts.attrStruct ? 'EXCLUDE (a)' : ''}, ${opts.attrStruct ? 's.a AS a0,' : ''}
                CASE WHEN record_type = 'LogRecord' THEN 'log' ELSE rl_span_kind(event_type, span_name) END AS kind0
              FROM (${sourceSql}) s)) src`;
}
