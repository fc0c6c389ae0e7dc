/**
 * DDL of the model (DESIGN.md "The model in DuckDB"). Users write SQL against these relations, so
 * their names and columns are a public surface: records, spans, nodes, node_results, runs, logs.
 */
import { createHash } from 'node:crypto';
import { ATTRIBUTES, ATTRIBUTES_JOIN, JOINED_COLUMNS, attributesJoin, recordLine } from './attributes-join.js';
import type { Db } from './db.js';
import { LOG_TEXT_ORDER, sqlString } from './sql-text.js';
import { sourceFreshness } from './freshness-sql.js';
import { DERIVE_RULES, deriveTouched } from './derive.js';
import { NODE_RESULT, NORMALIZED_COLUMNS, SPAN_TREE_COLUMNS, linkedSpanId, normalizerMacros } from './normalize-sql.js';

export const SCHEMA_VERSION = 4;

/**
 * The rules by which a load reads telemetry into records: what it refuses, which of two copies of a
 * span wins, how the older engine's files translate. Raise it when a change makes a load of the same
 * files give other records. A --db model keeps its records as they were read (they are not read
 * again), so a model made under lower rules is used with a warning (src/store/open.ts).
 */
export const READING_RULES = 2;

export const TABLES = [
  `CREATE TABLE IF NOT EXISTS runlens_meta (key VARCHAR PRIMARY KEY, value VARCHAR)`,
  // One row per loaded input; its content hash ("xxh64:<hex>", in a column named sha256 as in old databases) makes loading the same content twice a no-op.
  `CREATE TABLE IF NOT EXISTS files (
     file_id INTEGER PRIMARY KEY, path VARCHAR, sha256 VARCHAR UNIQUE, size BIGINT, format VARCHAR,
     records BIGINT, first_row BIGINT, skipped_lines BIGINT DEFAULT 0, loaded_at TIMESTAMP DEFAULT current_timestamp)`,
  // Physical records in input order; `records` (view) adds the source line from the row position.
  `CREATE TABLE IF NOT EXISTS record_rows (
     file_id INTEGER, record_type VARCHAR, trace_id VARCHAR, span_id VARCHAR, parent_span_id VARCHAR,
     span_name VARCHAR, event_type VARCHAR, event_id VARCHAR, start_ns BIGINT, end_ns BIGINT, time_ns BIGINT,
     severity_number INTEGER, severity_text VARCHAR, status_code INTEGER, status_message VARCHAR, body VARCHAR,
     links JSON, attributes JSON,
     ${NORMALIZED_COLUMNS},
     ${SPAN_TREE_COLUMNS})`,
  // Files committed whose load did not finish yet (derive, the file's first row id): a load that
  // stopped in between (a later file refused, a kill) is finished when the model is next opened.
  `CREATE TABLE IF NOT EXISTS load_pending (file_id INTEGER)`,
  // The attributes of the records of a Parquet file (their record_rows.attributes is empty), written on
  // a second connection while the file's rows are inserted (src/store/attributes-join.ts). line: the
  // record's line in the records view.
  `CREATE TABLE IF NOT EXISTS record_attributes (file_id INTEGER, line BIGINT, attributes JSON)`,
  `CREATE TABLE IF NOT EXISTS runs (
     trace_id VARCHAR PRIMARY KEY, invocation_id VARCHAR, command VARCHAR, raw_command VARCHAR, engine_version VARCHAR,
     start_ns BIGINT, end_ns BIGINT, duration_ms DOUBLE, ended BOOLEAN, status_code INTEGER, status_message VARCHAR,
     spans BIGINT, nodes BIGINT, success BIGINT, error BIGINT, skipped BIGINT, canceled BIGINT,
     tests_passed BIGINT, tests_warned BIGINT, tests_failed BIGINT, failed BOOLEAN, files VARCHAR)`,
];

/** The spans relation's columns over record_rows (the SpanEnd's values; a SpanStart has no end). */
const SPAN_SELECT = `trace_id, span_id, parent_span_id, span_name, event_type, kind, start_ns,
  CASE WHEN record_type = 'SpanEnd' THEN end_ns END AS end_ns,
  CASE WHEN record_type = 'SpanEnd' THEN (end_ns - start_ns) / 1e6 END AS duration_ms,
  record_type = 'SpanEnd' AS ended, coalesce(orphan, false) AS orphan, depth, status_code, status_message, severity_text,
  unique_id, phase, node_outcome, skip_reason, upstream_unique_id, test_outcome, failing_rows, resource_type, name,
  relative_path, materialization, rows_affected, in_selection, ${linkedSpanId('links')} AS linked_span_id, attr_duration_ms, rowid AS record_rowid, file_id`;

/**
 * The nodes relation: node spans (from \`spans\`, a relation with the spans view's columns) with their
 * node columns and the text of their ERROR logs. \`record_rowid\` identifies the span.
 */
function nodesSelect(spans: string): string {
  return `
WITH errs AS (
  -- ERROR log records only (few): their text is the node's error.
  -- A log without a unique_id attribute belongs to the node of the span it was logged on (its name says which).
  -- Those of a node written without a unique_id are keyed by the span they were logged on.
  SELECT trace_id, coalesce(unique_id, span_id) AS node_key, string_agg(body, '\n' ORDER BY ${LOG_TEXT_ORDER}) AS error_text
  FROM (SELECT trace_id, span_id, time_ns, body, rl_unique_id(${ATTRIBUTES}, span_name) AS unique_id
        FROM record_rows r ${ATTRIBUTES_JOIN}
        WHERE record_type = 'LogRecord' AND (severity_number >= 17 OR severity_text = 'ERROR') AND body IS NOT NULL AND body <> '')
  GROUP BY 1, 2 -- not GROUP BY ALL: it would also group by the ORDER BY column
), fresh AS (
  -- Sources (few): the outcome in their SourceFreshnessDetail.
  ${sourceFreshness(`SELECT rowid FROM record_rows WHERE resource_type = 'source' AND span_row`)}
)
SELECT s.trace_id, s.span_id, CASE s.kind WHEN 'node_processed' THEN 'processed' ELSE 'evaluated' END AS kind,
  s.unique_id, coalesce(s.resource_type, split_part(s.unique_id, '.', 1)) AS resource_type,
  coalesce(s.name, split_part(s.unique_id, '.', -1)) AS name,
  s.phase, s.node_outcome, s.skip_reason, s.upstream_unique_id, s.test_outcome, s.failing_rows,
  s.start_ns, s.end_ns,
  -- NodeProcessed spans open when the run schedules the node: its own duration_ms (sum of evaluations) is the work
  CASE WHEN s.kind = 'node_processed' THEN coalesce(s.attr_duration_ms, s.duration_ms) ELSE s.duration_ms END AS duration_ms,
  s.duration_ms AS wall_ms, s.ended, s.relative_path, s.materialization, s.rows_affected,
  CASE WHEN s.kind = 'node_evaluated' THEN s.linked_span_id END AS processed_span_id, s.in_selection,
  CASE WHEN s.node_outcome = 'error' OR s.status_code = 2 THEN coalesce(e.error_text, s.status_message) END AS error_text,
  f.freshness_outcome, s.record_rowid
-- one equi-join, keyed by the node's unique_id or, for a node written without one, its span
FROM ${spans} s LEFT JOIN errs e ON e.trace_id = s.trace_id AND e.node_key = coalesce(s.unique_id, s.span_id)
  LEFT JOIN fresh f ON f.trace_id = s.trace_id AND f.span_id = s.span_id
WHERE s.kind IN ('node_evaluated', 'node_processed')`;
}

const VIEWS = [
  // Log records, computed on read: materializing them would make every load pay for it.
  `CREATE OR REPLACE VIEW logs AS
     SELECT trace_id, span_id, span_name, event_id, time_ns, severity_number,
       coalesce(severity_text, CASE WHEN severity_number >= 17 THEN 'ERROR' WHEN severity_number >= 13 THEN 'WARN'
         WHEN severity_number >= 9 THEN 'INFO' WHEN severity_number >= 5 THEN 'DEBUG' WHEN severity_number >= 1 THEN 'TRACE' END) AS severity_text,
       body, event_type, rl_unique_id(attributes, span_name) AS unique_id,
       rl_phase(json_extract_string(attributes, '$.phase')) AS phase,
       -- a code the Parquet column (UInt32) cannot hold is in json_payload, as text inside the layout's JSON
       TRY_CAST(coalesce(json_extract_string(attributes, '$.code'), json_extract_string(json_extract_string(attributes, '$.json_payload'), '$.code')) AS INTEGER) AS code,
       attributes, file_id
     FROM (SELECT * EXCLUDE (${JOINED_COLUMNS}) REPLACE (${ATTRIBUTES} AS attributes)
           FROM record_rows r ${ATTRIBUTES_JOIN} WHERE r.record_type = 'LogRecord')`,
  // One row per span, read from the record that defines it (span_row, set by derive): its SpanEnd, or
  // the SpanStart of a span that never ended. A view, not a copy: copying the span rows would be a
  // sizeable part of a load.
  `CREATE OR REPLACE VIEW spans AS SELECT ${SPAN_SELECT} FROM record_rows WHERE span_row`,
  // Spans with their final attributes and links.
  `CREATE OR REPLACE VIEW span_details AS SELECT ${SPAN_SELECT}, ${ATTRIBUTES} AS attributes, links FROM record_rows r ${ATTRIBUTES_JOIN} WHERE span_row`,
  // One node in one phase (kind evaluated) and its overall result (processed): a view, not a copy,
  // which every load would pay for.
  `CREATE OR REPLACE VIEW nodes AS SELECT * EXCLUDE (record_rowid) FROM (${nodesSelect('spans')})`,
  // One result per node per run: NodeProcessed when the engine wrote it, else an evaluation (older
  // engines, e.g. preview.72, wrote no NodeProcessed; see derive's NODE_PICK): the span marked
  // node_result. A view, not a table: copying the node spans costs more at load than the view costs a query.
  `CREATE OR REPLACE VIEW node_results AS
     SELECT * EXCLUDE (record_rowid) FROM (${nodesSelect(`(SELECT ${SPAN_SELECT} FROM record_rows WHERE node_result)`)})`,
  `CREATE OR REPLACE VIEW records AS
     SELECT f.path AS source_file, CASE WHEN f.format IN ('jsonl', 'parquet') THEN ${recordLine('r', 'f.first_row')} END AS line,
       r.* EXCLUDE (span_row, orphan, depth, node_result) REPLACE (${ATTRIBUTES} AS attributes), ${linkedSpanId('r.links')} AS linked_span_id
     FROM record_rows r JOIN files f USING (file_id) ${attributesJoin('f.first_row')}
     WHERE r.record_type IS NOT NULL`,
];

/**
 * What a reading command may use as it is: a model whose tables, views and macros are this runlens's
 * (the same DDL, by its fingerprint). Reading commands open a --db model read-only; one written by
 * another version is read from an in-memory copy brought up to date (src/store/open.ts).
 */
export const DDL_FINGERPRINT = createHash('sha256')
  .update([...TABLES, ...normalizerMacros(), ...VIEWS, String(SCHEMA_VERSION), `derive rules ${DERIVE_RULES}`].join('\n;\n'))
  .digest('hex')
  .slice(0, 16);

/**
 * `unfinished`: runlens began making the model and stopped before its runlens_meta was written.
 * `load-unfinished`: a load began and did not end (its commit failed on a full disk, or it was
 * killed): the model may lack files the load was given (its runlens_meta holds a LOAD_UNFINISHED mark).
 */
export type ModelState = 'current' | 'other-version' | 'newer' | 'not-a-model' | 'empty' | 'unfinished' | 'load-unfinished';

/**
 * The start of the runlens_meta keys of the marks of --db loads: each load writes its own (committed)
 * before its files, its value the load's command line (`load [OPTIONS] PATH...`), and removes it at
 * its end. A mark stays while the load it names has not completed, whatever other loads run
 * meanwhile. Models made before one key per load hold a single key, LOAD_UNFINISHED itself.
 */
export const LOAD_UNFINISHED = 'load_unfinished';

const IS_LOAD_MARK = `starts_with(key, '${LOAD_UNFINISHED}')`;

/** The command lines of the loads into the model that did not complete. */
export async function unfinishedLoads(db: Db): Promise<string[]> {
  return (await db.all<{ value: string }>(`SELECT DISTINCT value FROM runlens_meta WHERE ${IS_LOAD_MARK} ORDER BY value`)).map((r) => r.value);
}

/** The statement that writes the mark of load `load` (its command line). */
export const markLoadSql = (load: string) => `INSERT OR REPLACE INTO runlens_meta VALUES (${sqlString(`${LOAD_UNFINISHED}:${load}`)}, ${sqlString(load)})`;

/** Remove the marks of load `load`: it completed. */
export async function unmarkLoad(db: Db, load: string): Promise<void> {
  await db.run(`DELETE FROM runlens_meta WHERE ${IS_LOAD_MARK} AND value = $load`, { load });
}

/** Whether the model's records were read under rules older than READING_RULES (or before they were recorded). */
export async function readUnderEarlierRules(db: Db): Promise<boolean> {
  const rules = await db.scalar<string | null>(`SELECT max(value) FROM runlens_meta WHERE key = 'reading_rules'`);
  if (rules !== null && Number(rules) >= READING_RULES) return false;
  return (await db.scalar<number>('SELECT count(*)::INTEGER FROM (SELECT 1 FROM record_rows LIMIT 1)')) > 0;
}

/** Whether a database is a runlens model, and of this runlens's DDL. */
export async function modelState(db: Db): Promise<ModelState> {
  const tables = await db.all<{ name: string }>(`SELECT table_name AS name FROM duckdb_tables() WHERE database_name = current_database() AND NOT temporary`);
  if (tables.length === 0) return 'empty';
  if (!tables.some((t) => t.name === 'runlens_meta')) return 'not-a-model';
  const meta = new Map((await db.all<{ key: string; value: string }>('SELECT key, value FROM runlens_meta')).map((r) => [r.key, r.value]));
  if (meta.size === 0) return 'unfinished';
  const version = Number(meta.get('schema_version'));
  if (!Number.isInteger(version)) return 'not-a-model';
  if (version > SCHEMA_VERSION) return 'newer';
  if ([...meta.keys()].some((k) => k.startsWith(LOAD_UNFINISHED))) return 'load-unfinished';
  if (version !== SCHEMA_VERSION || meta.get('ddl') !== DDL_FINGERPRINT) return 'other-version';
  // a load stopped before its end: finished in a copy (reading never writes)
  return (await db.scalar<number>('SELECT count(*)::INTEGER FROM load_pending')) > 0 ? 'other-version' : 'current';
}

/**
 * `madeBy`: the fingerprint of the model's maker, when its runlens_meta is not in `db` (an in-memory
 * copy). `load`: the command line of the load a fresh model is made for: its mark is written with the
 * tables, so that no reader finds the model made and its first load's files missing unsaid.
 */
export async function ensureSchema(db: Db, opts: { migrate?: boolean; madeBy?: string | null; fresh?: boolean; load?: string } = {}): Promise<void> {
  const meta = `INSERT OR REPLACE INTO runlens_meta VALUES ('schema_version', '${SCHEMA_VERSION}'), ('ddl', '${DDL_FINGERPRINT}')`;
  if ((db.inMemory || opts.fresh) && !opts.migrate) {
    // A new database, with nothing to migrate: one call, not a round trip per statement; one
    // transaction, so that a new model file is either made whole or left empty.
    const mark = opts.load !== undefined && !db.inMemory ? [markLoadSql(opts.load)] : [];
    // written once, when the model is made: its later loads do not change how its first were read
    const rules = `INSERT INTO runlens_meta VALUES ('reading_rules', '${READING_RULES}')`;
    await db.script([...TABLES, ...normalizerMacros(), ...VIEWS, meta, rules, ...mark].map((sql): [string, string] => ['schema', sql]), { transaction: !db.inMemory });
    return;
  }
  for (const s of TABLES) await db.run(s);
  // A model made by another runlens (views, macros or derive rules of its own) is derived again below.
  const made = opts.madeBy ?? (await db.scalar<string | null>(`SELECT max(value) FROM runlens_meta WHERE key = 'ddl'`));
  // Older --db files: schema 1 kept spans and nodes as tables (they became views, and the span tree
  // moved onto record_rows); schemas 1 and 2 kept node_results as a table (now a view over node_result).
  const old = await db.all<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_name IN ('spans', 'nodes', 'node_results') AND table_type = 'BASE TABLE'`,
  );
  if (old.length > 0) {
    await db.run('DROP VIEW IF EXISTS span_details');
    for (const t of old) await db.run(`DROP TABLE ${t.table_name}`);
    for (const col of SPAN_TREE_COLUMNS.split(',')) await db.run(`ALTER TABLE record_rows ADD COLUMN IF NOT EXISTS ${col.trim()}`);
    await db.run(`UPDATE record_rows SET span_row = record_type = 'SpanEnd' AND span_id IS NOT NULL, node_result = ${NODE_RESULT}`);
  }
  // Schemas 1-3 stored linked_span_id in record_rows (the views now read it from links): it is dropped
  // so that the table's columns are in the order the insert writes them.
  const linked = await db.scalar<number>(
    `SELECT count(*)::INTEGER FROM information_schema.columns WHERE table_name = 'record_rows' AND column_name = 'linked_span_id'`,
  );
  if (linked > 0) {
    for (const v of ['span_details', 'spans', 'nodes', 'node_results', 'records', 'logs']) await db.run(`DROP VIEW IF EXISTS ${v}`);
    await db.run('ALTER TABLE record_rows DROP COLUMN linked_span_id');
  }
  for (const s of normalizerMacros()) await db.run(s);
  for (const s of VIEWS) await db.run(s);
  if (old.length > 0 || (made !== null && made !== DDL_FINGERPRINT)) {
    await db.run('CREATE TEMP TABLE IF NOT EXISTS _touched (trace_id VARCHAR)');
    await db.run('INSERT INTO _touched SELECT DISTINCT trace_id FROM record_rows WHERE trace_id IS NOT NULL');
    await deriveTouched(db);
    await db.run('DELETE FROM _touched');
    await db.run('DELETE FROM load_pending');
  }
  await finishPendingLoads(db);
  await db.run(meta);
  // a model with no records yet (its first load stopped before them) takes this runlens's rules
  await db.run(`INSERT OR REPLACE INTO runlens_meta SELECT 'reading_rules', '${READING_RULES}' WHERE NOT EXISTS (SELECT 1 FROM record_rows)`);
}

/**
 * The steps after a file's commit (its first row id, derive of its traces) for the files of a load
 * that stopped before them (load_pending). Also the normal end of a load (src/store/load.ts), which
 * has put the traces of its files in _touched already (`touched`).
 */
export async function finishPendingLoads(db: Db, opts: { fresh?: boolean; touched?: boolean } = {}): Promise<void> {
  if ((await db.scalar<number>('SELECT count(*)::INTEGER FROM load_pending')) === 0) return;
  // Row ids are only final after the commit: a record's line is its row id less its file's first row id.
  await db.run(`UPDATE files SET first_row = (SELECT min(rowid) FROM record_rows r WHERE r.file_id = files.file_id)
                WHERE file_id IN (SELECT file_id FROM load_pending)`);
  await db.run('CREATE TEMP TABLE IF NOT EXISTS _touched (trace_id VARCHAR)');
  if (!opts.touched) {
    await db.run(`INSERT INTO _touched SELECT DISTINCT trace_id FROM record_rows
                  WHERE file_id IN (SELECT file_id FROM load_pending) AND trace_id IS NOT NULL AND record_type IS NOT NULL`);
  }
  await deriveTouched(db, { fresh: opts.fresh });
  await db.run('DELETE FROM _touched');
  await db.run('DELETE FROM load_pending');
}
