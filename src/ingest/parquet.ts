/**
 * Parquet telemetry in the engine's layout (reference/telemetry.md section 3) read by DuckDB's
 * read_parquet and turned into the JSONL record shape, so one normalizer serves every input:
 * UInt64 span ids -> 16 hex, TIMESTAMP_NS -> integer nanoseconds, the `attributes` struct's
 * well-known columns -> JSONL attribute names, and `json_payload` (externally tagged outcome detail,
 * or the whole message for Invocation/Process/...) unpacked back into attributes.
 */
import { InputError } from '../errors.js';
import { attributesLayoutNote, parquetColumnsProblem, structFields } from '../produce/parquet-layout.js';
import type { Db } from '../store/db.js';
import { sqlIn, sqlString } from '../store/db.js';
import { sqlFilePath } from '../store/file-path-sql.js';
import type { InputFile } from './detect.js';
import { DETAIL_KEYS, DETAIL_KEY_ALIASES } from '../telemetry/details.js';
import { RECORD_TYPES } from './jsonl.js';

/** Well-known attribute columns and the JSONL key they came from, per event (section 3.2). */
const NODE_RENAMES: Record<string, string> = { code_line: 'defined_at_line', code_column: 'defined_at_col', content_hash: 'node_checksum' };
const RENAMES_BY_MESSAGE: Record<string, Record<string, string>> = {
  NodeEvaluated: NODE_RENAMES,
  NodeProcessed: { ...NODE_RENAMES, phase: 'last_phase' },
  QueryExecuted: { content_hash: 'sql_hash' },
  UserLogMessage: { code_line: 'line', code_column: 'column' },
  CompiledCode: { content: 'sql' },
};
/** 64-bit integers are strings in JSONL (pbjson). */
const U64_COLUMNS = new Set(['duration_ms', 'rows_affected']);

interface ParquetShape {
  top: Set<string>;
  attrs: string[];
  /** DuckDB type of each attribute column, by name */
  attrTypes: Map<string, string>;
  /** what is not read of attributes other than the layout's */
  note?: { field: string; reason: string };
}

async function describe(db: Db, path: string): Promise<ParquetShape> {
  const cols = await db.all<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM read_parquet(${sqlFilePath(path)})`);
  const problem = parquetColumnsProblem(cols.map((c) => ({ name: c.column_name, type: c.column_type })));
  if (problem) throw new InputError(problem.reason, path, undefined, problem.field);
  const attrType = cols.find((c) => c.column_name === 'attributes')!.column_type;
  const attrTypes = structFields(attrType);
  return { top: new Set(cols.map((c) => c.column_name)), attrs: [...attrTypes.keys()], attrTypes, note: attributesLayoutNote(attrType) };
}

function attributesJsonSql(shape: ParquetShape): string {
  const fields = shape.attrs.filter((f) => f !== 'json_payload');
  const msg = MSG;
  const entry = (f: string) => {
    const renames = Object.entries(RENAMES_BY_MESSAGE).filter(([, r]) => r[f]);
    const key = renames.length
      ? `CASE ${msg} ${renames.map(([m, r]) => `WHEN ${sqlString(m)} THEN ${sqlString(r[f]!)}`).join(' ')} ELSE ${sqlString(f)} END`
      : sqlString(f);
    const val = U64_COLUMNS.has(f) ? `to_json(CAST(attributes."${f}" AS VARCHAR))` : `to_json(attributes."${f}")`;
    return `{'k': ${key}, 'v': ${val}}`;
  };
  const base = fields.length
    ? `to_json(map_from_entries(list_filter([${fields.map(entry).join(', ')}], x -> x.v IS NOT NULL)))`
    : `'{}'::JSON`;
  if (!shape.attrs.includes('json_payload')) return base;
  const p = `TRY_CAST(attributes.json_payload AS JSON)`;
  return `CASE
      WHEN ${p} IS NULL THEN ${base}
      WHEN ${msg} = 'NodeEvaluated' THEN json_merge_patch(${base}, rl_detail(${p}))
      WHEN ${msg} = 'NodeProcessed' THEN json_merge_patch(json_merge_patch(${base}, json_merge_patch(${p}, '{"node_outcome_detail":null}')),
                                                          rl_detail(json_extract(${p}, '$.node_outcome_detail')))
      WHEN json_type(${p}) = 'OBJECT' THEN ${joinObjectsSql(base, p)}
      ELSE ${base} END`;
}

/**
 * The members of two JSON objects in one, as text: json_merge_patch would drop every null value, at
 * any depth, which a JSONL record keeps. The columns and the payload of a record hold no key twice
 * (splitAttributes puts each in one place). json() writes the payload compact, `{` first.
 */
function joinObjectsSql(columns: string, payload: string): string {
  return `CASE WHEN CAST(${columns} AS VARCHAR) = '{}' THEN ${payload}
    ELSE CAST(left(CAST(${columns} AS VARCHAR), -1) || CASE WHEN CAST(json(${payload}) AS VARCHAR) = '{}' THEN '}' ELSE ',' || substr(CAST(json(${payload}) AS VARCHAR), 2) END AS JSON) END`;
}

/** Types whose text form is already their JSON form. */
const JSON_LITERAL_TYPES = /^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|BOOLEAN)$/;

/**
 * The attribute struct as JSON text with only the columns that are set, joined by concat_ws (which
 * skips NULLs): much cheaper than to_json of the struct, which writes every column for every row.
 */
function attributesLayoutJsonSql(shape: ParquetShape): string {
  if (shape.attrs.length === 0) return `'{}'::JSON`;
  const parts = shape.attrs.map((f) => {
    const v = `attributes."${f}"`;
    const text = JSON_LITERAL_TYPES.test(shape.attrTypes.get(f) ?? '') ? `CAST(${v} AS VARCHAR)` : `CAST(to_json(${v}) AS VARCHAR)`;
    return `CASE WHEN ${v} IS NOT NULL THEN ${sqlString(JSON.stringify(f) + ':')} || ${text} END`;
  });
  return `CAST('{' || concat_ws(',', ${parts.join(', ')}) || '}' AS JSON)`;
}

/** Macro: {"Variant":{...}} -> {"flattened_key":{...}} (null when not tagged). */
export function detailMacroSql(): string {
  const whens = Object.entries({ ...DETAIL_KEYS, ...DETAIL_KEY_ALIASES })
    .map(([v, k]) => `WHEN ${sqlString(v)} THEN ${sqlString(k)}`)
    .join(' ');
  return `CREATE OR REPLACE MACRO rl_detail(p) AS CASE
    WHEN p IS NULL OR json_type(p) <> 'OBJECT' OR json_array_length(json_keys(p)) <> 1 THEN '{}'::JSON
    ELSE json_object(CASE json_keys(p)[1] ${whens} ELSE lower(json_keys(p)[1]) END, json_extract(p, '$.' || json_keys(p)[1])) END;`;
}

/** Messages of the bulk rows (node, query and log events), whose attributes keep the Parquet layout. */
const BULK_MESSAGES = ['NodeEvaluated', 'NodeProcessed', 'QueryExecuted', 'LogMessage', 'UserLogMessage', 'CompiledCode'];

/** The message name (last event_type segment), computed once per row in readParquetSql's inner select. */
const MSG = '_rl_msg';

/**
 * The normalizer's attribute struct read straight from the typed columns (and, for node events, the
 * outcome detail in json_payload): no JSON is built or parsed for the bulk of the rows. Plain expressions over columns the inner selects computed
 * once (_rl_p, _rl_d, _rl_s, _rl_td): a correlated subquery per row here would cost more than the whole read.
 */
function attrStructSql(shape: ParquetShape): string {
  const has = (f: string) => shape.attrs.includes(f);
  // TRY_CAST: a u64 count past BIGINT is NULL in the model (as from JSONL), its attributes keep it as written.
  const c = (f: string, type = 'VARCHAR') => (has(f) ? `TRY_CAST(attributes."${f}" AS ${type})` : `CAST(NULL AS ${type})`);
  // A node attribute no column holds in the form it was written (the interface document's flat
  // test_outcome and skip_reason, numbers where the engine writes strings) is in json_payload.
  const flat = (f: PayloadScalar, type = 'VARCHAR') => payloadScalar(f, type);
  // A value its column cannot hold (an enum as its number, as JSONL may write it) is in json_payload:
  // read from there, it counts as it does from JSONL.
  const either = (f: PayloadScalar) => `coalesce(${c(f)}, ${flat(f)})`;
  return `{
      'unique_id': ${either('unique_id')}, 'phase': ${either('phase')}, 'last_phase': ${flat('last_phase')},
      'node_outcome': ${either('node_outcome')}, 'node_skip_reason': ${either('node_skip_reason')}, 'skip_reason': ${flat('skip_reason')},
      'node_skip_upstream_detail': {'upstream_unique_id': json_extract_string(${payloadDetail('NodeSkipUpstreamDetail')}, '$.upstream_unique_id')},
      'upstream_unique_id': ${flat('upstream_unique_id')},
      'node_test_detail': CASE WHEN _rl_td IS NOT NULL THEN {'test_outcome': json_extract_string(_rl_td, '$.test_outcome'),
                                                             'failing_rows': json_extract_string(_rl_td, '$.failing_rows')} END,
      'test_outcome': ${flat('test_outcome')}, 'failing_rows': ${flat('failing_rows')}, 'failing_rows_recorded': ${flat('failing_rows_recorded')},
      'node_type': ${either('node_type')}, 'name': ${either('name')}, 'relative_path': ${either('relative_path')},
      'materialization': ${either('materialization')}, 'rows_affected': coalesce(${c('rows_affected', 'BIGINT')}, ${flat('rows_affected', 'BIGINT')}),
      'in_selection': ${flat('in_selection', 'BOOLEAN')}, 'code': ${c('code', 'INTEGER')},
      'duration_ms': coalesce(${c('duration_ms', 'DOUBLE')}, ${flat('duration_ms', 'DOUBLE')})
    }`;
}

/**
 * What the model reads of a node's json_payload, extracted in two calls that parse it once each
 * (_rl_d: the externally tagged outcome details, at the top or under node_outcome_detail; _rl_s: scalars).
 */
const PAYLOAD_DETAILS = ['NodeTestDetail', 'TestEvaluationDetail', 'NodeSkipUpstreamDetail'] as const;
const PAYLOAD_SCALARS = ['in_selection', 'skip_reason', 'upstream_unique_id', 'test_outcome', 'failing_rows', 'failing_rows_recorded', 'rows_affected', 'duration_ms',
  'unique_id', 'phase', 'last_phase', 'node_outcome', 'node_skip_reason', 'node_type', 'name', 'relative_path', 'materialization'] as const;
type PayloadScalar = (typeof PAYLOAD_SCALARS)[number];
const payloadDetail = (variant: (typeof PAYLOAD_DETAILS)[number]) => {
  const i = PAYLOAD_DETAILS.indexOf(variant) * 2 + 1;
  return `coalesce(_rl_d[${i}], _rl_d[${i + 1}])`;
};
const payloadScalar = (f: PayloadScalar, type: string) => `TRY_CAST(_rl_s[${PAYLOAD_SCALARS.indexOf(f) + 1}] AS ${type})`;

/**
 * A node's outcome detail, as attrStructSql reads it, given as another JSON type than an object (JSON
 * text in a string), as `field: reason`, else NULL: read as an empty detail, a failed test would pass.
 * json_extract writes JSON compact, so an object's text starts with `{`: a test of text, not a parse.
 */
function detailProblemSql(shape: ParquetShape): string | undefined {
  if (!shape.attrs.includes('json_payload')) return undefined;
  const whens = [['_rl_td', 'node_test_detail'], [payloadDetail('NodeSkipUpstreamDetail'), 'node_skip_upstream_detail']].map(([v, field]) => {
    const d = `CAST(${v} AS VARCHAR)`;
    return `WHEN NOT starts_with(${d}, '{') AND ${d} <> 'null' THEN ${sqlString(`attributes.${field}: must be an object (got `)} || left(${d}, 60) || ')'`;
  });
  return `CASE ${whens.join(' ')} END`;
}

/**
 * A UInt64 id as 16 lower-case hex digits. to_hex, and padding only below 2^60 (one id in 16): cheaper
 * than printf with lower().
 */
function hexIdSql(v: string): string {
  return `CASE WHEN ${v} IS NULL THEN NULL WHEN CAST(${v} AS UBIGINT) >= 1152921504606846976 THEN lower(to_hex(CAST(${v} AS UBIGINT)))
    ELSE lower(lpad(to_hex(CAST(${v} AS UBIGINT)), 16, '0')) END`;
}

/**
 * The message name: the last segment of the event type. The messages of the bulk rows are tested by
 * suffix first: much cheaper than a regular expression on every row, on each of the load's two
 * connections.
 */
function messageSql(et: string): string {
  const bulk = BULK_MESSAGES.map((m) => `WHEN ends_with(${et}, ${sqlString('.' + m)}) THEN ${sqlString(m)}`).join(' ');
  return `CASE ${bulk} ELSE split_part(${et}, '.', -1) END`;
}

/** The file's rows with their message name (the last event_type segment) as ${MSG}. */
function withMessageSql(shape: ParquetShape, path: string, opts: { rowNumbers?: boolean } = {}): string {
  const msg = shape.top.has('event_type') ? messageSql('CAST(event_type AS VARCHAR)') : 'NULL::VARCHAR';
  return `(SELECT *, ${msg} AS ${MSG} FROM read_parquet(${sqlFilePath(path)}${opts.rowNumbers ? ', file_row_number = true' : ''}))`;
}

/** Innermost select: the message name and a node's json_payload parsed once. */
function innerSql(shape: ParquetShape, path: string, opts: { rowNumbers?: boolean } = {}): string {
  const hasAttrs = shape.top.has('attributes');
  // A row without an event type is told by its span name, as the normalizer tells its kind (rl_span_kind).
  const named = shape.top.has('span_name') ? ` OR (coalesce(${MSG}, '') = '' AND rl_span_kind(NULL, span_name) IN ('node_evaluated', 'node_processed'))` : '';
  const p = hasAttrs && shape.attrs.includes('json_payload')
    ? `CASE WHEN ${MSG} IN ('NodeEvaluated', 'NodeProcessed')${named} THEN TRY_CAST(attributes.json_payload AS JSON) END`
    : 'CAST(NULL AS JSON)';
  const details = PAYLOAD_DETAILS.flatMap((v) => [`$.${v}`, `$.node_outcome_detail.${v}`]).map(sqlString).join(', ');
  const scalars = PAYLOAD_SCALARS.map((f) => sqlString(`$.${f}`)).join(', ');
  return `(SELECT *, coalesce(${payloadDetail('NodeTestDetail')}, ${payloadDetail('TestEvaluationDetail')}) AS _rl_td
           FROM (SELECT *, json_extract(_rl_p, [${details}]) AS _rl_d, json_extract_string(_rl_p, [${scalars}]) AS _rl_s
                 FROM (SELECT *, ${p} AS _rl_p FROM ${withMessageSql(shape, path, opts)})))`;
}

/**
 * How a Parquet file is read: `select` gives record_rows' columns in the file's order, and, when the
 * file has an attributes struct, `attributesSelect` gives the JSON text of every row's attributes
 * (file_id, line, attributes) for the record_attributes table, which `select` leaves empty. A file
 * with one row group (as the engine writes them) is read on one thread, and building that JSON was
 * half of the load; run on a second connection at the same time, it takes the other core.
 */
export interface ParquetRead {
  select: string;
  attributesSelect?: string;
  /** what the load does not read of attributes other than the layout's, as `field: reason` */
  note?: string;
}

/** What a load says of JSON text that is not JSON (validate's words for a line). */
export const NOT_JSON = 'not valid JSON';
/** Why JSON text that starts with U+FEFF is not JSON (said after NOT_JSON). */
export const BOM_IN_JSON = 'starts with a byte order mark (U+FEFF), which JSON does not allow';

/**
 * Why the model cannot hold a row (the reasons of recordProblem in src/ingest/jsonl.ts; the Parquet
 * schema holds every other field to its type), or NULL. Such a row is read with record_type NULL.
 */
function problemSql(shape: ParquetShape): string {
  const has = (c: string) => shape.top.has(c);
  const rt = has('record_type') ? 'CAST(record_type AS VARCHAR)' : 'NULL::VARCHAR';
  const missing = (c: string) => (has(c) ? `WHEN ${rt} <> 'LogRecord' AND ${c} IS NULL THEN '${c}: must not be null on a ' || ${rt}` : `WHEN ${rt} <> 'LogRecord' THEN '${c}: missing (required on ' || ${rt} || ')'`);
  const badJson = badJsonSql(shape);
  const status = statusCodeProblemSql(shape);
  const detail = detailProblemSql(shape);
  return `CASE WHEN ${rt} IS NULL THEN 'record_type: missing'
    WHEN ${rt} NOT IN (${RECORD_TYPES.map((t) => sqlString(t)).join(', ')}) THEN 'record_type: must be SpanStart, SpanEnd or LogRecord (got ' || to_json(${rt}) || ')'
    ${missing('trace_id')} ${missing('span_id')}
    ${has('trace_id') ? `WHEN NOT ${traceIdOkSql} THEN 'trace_id: must be 32 hex digits (or a UUID) (got ' || left(to_json(CAST(trace_id AS VARCHAR))::VARCHAR, 60) || ')'` : ''}
    WHEN ${status} IS NOT NULL THEN 'status.code: ' || ${status}
    ${badJson ? `WHEN ${badJson} IS NOT NULL THEN ${badJson}` : ''}
    ${detail ? `WHEN ${detail} IS NOT NULL THEN ${detail}` : ''} END`;
}

/**
 * JSON text a row holds that is not JSON, as `field: reason` (the json_payload of its attributes or of a link), else NULL.
 * An empty json_payload is none (as convert reads it). `parsed`: the node rows' json_payload already
 * parsed (_rl_p, NULL where it is not JSON), which spares most rows a second parse.
 */
function badJsonSql(shape: ParquetShape, parsed?: string): string | undefined {
  const invalid = (v: string) => `(${v} IS NOT NULL AND ${v} <> '' AND NOT json_valid(${v}))`;
  const bom = (v: string) => `starts_with(${v}, chr(65279))`;
  const said = (field: string, bomFound: string) =>
    `${sqlString(`${field}: ${NOT_JSON}`)} || CASE WHEN ${bomFound} THEN ${sqlString(`: ${BOM_IN_JSON}`)} ELSE '' END`;
  const checks: string[] = [];
  if (shape.attrs.includes('json_payload')) {
    const v = `CAST(attributes.json_payload AS VARCHAR)`;
    const check = parsed
      ? `CASE WHEN ${MSG} IN ('NodeEvaluated', 'NodeProcessed') THEN ${parsed} IS NULL AND ${v} IS NOT NULL AND ${v} <> '' ELSE ${invalid(v)} END`
      : invalid(v);
    checks.push(`WHEN ${check} THEN ${said('attributes.json_payload', bom(v))}`);
  }
  if (shape.top.has('links')) {
    const l = 'CAST(l.json_payload AS VARCHAR)';
    checks.push(`WHEN links IS NOT NULL AND list_bool_or(list_transform(links, l -> ${invalid(l)}))
      THEN ${said('links.json_payload', `list_bool_or(list_transform(links, l -> ${invalid(l)} AND ${bom(l)}))`)}`);
  }
  return checks.length ? `CASE ${checks.join(' ')} END` : undefined;
}

/** A status code the model's status column (INTEGER, of an unsigned enum) cannot hold, as recordProblem says it, else NULL. */
function statusCodeProblemSql(shape: ParquetShape): string {
  if (!shape.top.has('status_code')) return 'NULL';
  return `CASE WHEN status_code < 0 THEN 'must not be negative (got ' || status_code || ')'
    WHEN status_code > 2147483647 THEN 'must be an integer (got ' || status_code || ')' END`;
}

/**
 * A trace id as recordProblem takes it (32 hex digits or a UUID), NULL too (a LogRecord may have
 * none; a span's is checked apart). The span ids are UInt64 columns: every value is one.
 */
const traceIdOkSql = `(trace_id IS NULL OR (length(CAST(trace_id AS VARCHAR)) IN (32, 36)
  AND regexp_full_match(CAST(trace_id AS VARCHAR), '[0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')))`;

/** The record type of a row the model can hold, else NULL (the test problemSql explains, in its cheapest form). */
function storableRecordTypeSql(shape: ParquetShape): string {
  if (!shape.top.has('record_type')) return 'NULL::VARCHAR';
  const ids = ['trace_id', 'span_id'].map((c) => (shape.top.has(c) ? `${c} IS NOT NULL` : 'false')).join(' AND ');
  const badJson = badJsonSql(shape, '_rl_p');
  const status = shape.top.has('status_code') ? ' AND (status_code IS NULL OR status_code BETWEEN 0 AND 2147483647)' : '';
  const trace = shape.top.has('trace_id') ? ` AND ${traceIdOkSql}` : '';
  const detail = detailProblemSql(shape);
  return `CASE WHEN (record_type = 'LogRecord' OR (record_type IN ('SpanStart', 'SpanEnd') AND ${ids}))${trace}${badJson ? ` AND ${badJson} IS NULL` : ''}${status}${detail ? ` AND ${detail} IS NULL` : ''}
    THEN CAST(record_type AS VARCHAR) END`;
}

/** The rows of a Parquet file the model cannot hold: row number (from 1) and reason, the first `max` of them. */
export async function parquetProblems(db: Db, input: InputFile, max: number): Promise<{ line: number; field: string; reason: string }[]> {
  const shape = await describe(db, input.path);
  const rows = await db.all<{ line: number; problem: string }>(
    `SELECT (file_row_number + 1)::INTEGER AS line, problem FROM (
       SELECT file_row_number, ${problemSql(shape)} AS problem FROM ${innerSql(shape, input.path, { rowNumbers: true })})
     WHERE problem IS NOT NULL ORDER BY line LIMIT ${Math.trunc(max)}`,
  );
  return rows.map((r) => {
    const at = r.problem.indexOf(': ');
    return { line: r.line, field: r.problem.slice(0, at), reason: r.problem.slice(at + 2) };
  });
}

/** The rows of a Parquet file the model cannot hold after the first `skip`, as [first, last] row ranges. */
export async function parquetProblemRanges(db: Db, input: InputFile, skip: number): Promise<[number, number][]> {
  const shape = await describe(db, input.path);
  const rows = await db.all<{ first: number; last: number }>(
    `WITH bad AS (SELECT file_row_number + 1 AS line FROM ${innerSql(shape, input.path, { rowNumbers: true })}
                  WHERE ${problemSql(shape)} IS NOT NULL ORDER BY line OFFSET ${Math.trunc(skip)})
     SELECT min(line)::INTEGER AS first, max(line)::INTEGER AS last
     FROM (SELECT line, line - row_number() OVER (ORDER BY line) AS island FROM bad) GROUP BY island ORDER BY first`,
  );
  return rows.map((r) => [r.first, r.last]);
}

export async function readParquetSql(db: Db, input: InputFile): Promise<ParquetRead> {
  const shape = await describe(db, input.path);
  const col = (c: string, expr: string) => (shape.top.has(c) ? expr : 'NULL');
  const hex = (c: string) => col(c, hexIdSql(c));
  const ns = (c: string) => col(c, `epoch_ns(${c})`);
  const links = col(
    'links',
    `CASE WHEN links IS NULL THEN NULL ELSE to_json(list_transform(links, l -> {'trace_id': CAST(l.trace_id AS VARCHAR),
       'span_id': ${hexIdSql('l.span_id')}, 'attributes': coalesce(TRY_CAST(l.json_payload AS JSON), '{}'::JSON)})) END`,
  );
  const hasAttrs = shape.top.has('attributes');
  const select = `SELECT
      CAST($file_id AS INTEGER) AS file_id,
      ${storableRecordTypeSql(shape)} AS record_type,
      ${col('trace_id', 'rl_trace_id(CAST(trace_id AS VARCHAR))')} AS trace_id,
      ${hex('span_id')} AS span_id, ${hex('parent_span_id')} AS parent_span_id,
      ${col('span_name', 'span_name')} AS span_name, ${col('event_type', 'CAST(event_type AS VARCHAR)')} AS event_type,
      ${col('event_id', 'event_id')} AS event_id,
      ${ns('start_time_unix_nano')} AS start_ns, ${ns('end_time_unix_nano')} AS end_ns, ${ns('time_unix_nano')} AS time_ns,
      ${col('severity_number', 'CAST(severity_number AS INTEGER)')} AS severity_number,
      ${col('severity_text', 'CAST(severity_text AS VARCHAR)')} AS severity_text,
      ${col('status_code', 'TRY_CAST(status_code AS INTEGER)')} AS status_code, ${col('status_message', 'status_message')} AS status_message,
      ${col('body', 'body')} AS body, (${links})::JSON AS links,
      -- With an attributes struct, their JSON goes to record_attributes (attributesSelect).
      ${hasAttrs ? 'NULL::JSON' : "'{}'::JSON"} AS attributes,
      ${hasAttrs ? attrStructSql(shape) : 'NULL'} AS a
    FROM ${innerSql(shape, input.path)}`;
  const note = shape.note && `${shape.note.field}: ${shape.note.reason}`;
  if (!hasAttrs) return { select, note };
  // Bulk rows (node, query, log events) keep the Parquet layout of their attributes (the columns that
  // are set); the few others (invocation, process, phases, ...) are rebuilt in the JSONL shape.
  // line: the record's line in the records view (its row in the file, from 1).
  const attributesSelect = `SELECT CAST($file_id AS INTEGER) AS file_id, file_row_number + 1 AS line,
      CASE WHEN ${sqlIn(MSG, BULK_MESSAGES)} THEN ${attributesLayoutJsonSql(shape)} ELSE ${attributesJsonSql(shape)} END AS attributes
    FROM ${withMessageSql(shape, input.path, { rowNumbers: true })}`;
  return { select, attributesSelect, note };
}
