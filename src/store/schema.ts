/**
 * DDL of the model (DESIGN.md "The model in DuckDB"). Users write SQL against these relations, so
 * their names and columns are a public surface: records, spans, nodes, node_results, runs, logs.
 */
import { ATTRIBUTES, ATTRIBUTES_JOIN, JOINED_COLUMNS, attributesJoin, recordLine } from './attributes-join.js';
import type { Db } from './db.js';
import { deriveTouched, nodesSelect } from './derive.js';
import { NORMALIZED_COLUMNS, SPAN_TREE_COLUMNS, normalizerMacros } from './normalize-sql.js';

export const SCHEMA_VERSION = 2;

const TABLES = [
  `CREATE TABLE IF NOT EXISTS runlens_meta (key VARCHAR PRIMARY KEY, value VARCHAR)`,
  // One row per loaded input; its content hash (column sha256 for old databases; now "xxh64:<hex>") makes loading the same content twice a no-op.
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
  // The attributes of the records of a Parquet file (their record_rows.attributes is empty), written on
  // a second connection while the file's rows are inserted (src/store/attributes-join.ts). line: the
  // record's line in the records view.
  `CREATE TABLE IF NOT EXISTS record_attributes (file_id INTEGER, line BIGINT, attributes JSON)`,
  // One result per node per run: NodeProcessed when the engine wrote it, else the last phase's NodeEvaluated
  // (older engines, e.g. preview.72, wrote no NodeProcessed). Materialized: queries read it all the time.
  // Its columns are those of the nodes view.
  `CREATE TABLE IF NOT EXISTS node_results (
     trace_id VARCHAR, span_id VARCHAR, kind VARCHAR, unique_id VARCHAR, resource_type VARCHAR, name VARCHAR, phase VARCHAR,
     node_outcome VARCHAR, skip_reason VARCHAR, upstream_unique_id VARCHAR, test_outcome VARCHAR, failing_rows INTEGER,
     start_ns BIGINT, end_ns BIGINT, duration_ms DOUBLE, wall_ms DOUBLE, ended BOOLEAN, relative_path VARCHAR, materialization VARCHAR,
     rows_affected BIGINT, processed_span_id VARCHAR, in_selection BOOLEAN, error_text VARCHAR)`,
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
  relative_path, materialization, rows_affected, in_selection, linked_span_id, attr_duration_ms, rowid AS record_rowid, file_id`;

const VIEWS = [
  // Log records, computed on read: materializing them cost as much as the whole read.
  `CREATE OR REPLACE VIEW logs AS
     SELECT trace_id, span_id, span_name, event_id, time_ns, severity_number,
       coalesce(severity_text, CASE WHEN severity_number >= 17 THEN 'ERROR' WHEN severity_number >= 13 THEN 'WARN'
         WHEN severity_number >= 9 THEN 'INFO' WHEN severity_number >= 5 THEN 'DEBUG' WHEN severity_number >= 1 THEN 'TRACE' END) AS severity_text,
       body, event_type, json_extract_string(attributes, '$.unique_id') AS unique_id,
       rl_phase(json_extract_string(attributes, '$.phase')) AS phase,
       TRY_CAST(json_extract_string(attributes, '$.code') AS INTEGER) AS code, attributes, file_id
     FROM (SELECT * EXCLUDE (${JOINED_COLUMNS}) REPLACE (${ATTRIBUTES} AS attributes)
           FROM record_rows r ${ATTRIBUTES_JOIN} WHERE r.record_type = 'LogRecord')`,
  // One row per span, read from the record that defines it (span_row, set by derive): its SpanEnd, or
  // the SpanStart of a span that never ended. A view, not a copy: copying 485k span rows cost more
  // than a seventh of a 1M-record load.
  `CREATE OR REPLACE VIEW spans AS SELECT ${SPAN_SELECT} FROM record_rows WHERE span_row`,
  // Spans with their final attributes and links.
  `CREATE OR REPLACE VIEW span_details AS SELECT ${SPAN_SELECT}, ${ATTRIBUTES} AS attributes, links FROM record_rows r ${ATTRIBUTES_JOIN} WHERE span_row`,
  // One node in one phase (kind evaluated) and its overall result (processed): a view, not a copy
  // (the copy was a twentieth of a 1M-record load).
  `CREATE OR REPLACE VIEW nodes AS SELECT * EXCLUDE (record_rowid) FROM (${nodesSelect()})`,
  `CREATE OR REPLACE VIEW records AS
     SELECT f.path AS source_file, CASE WHEN f.format IN ('jsonl', 'parquet') THEN ${recordLine('r', 'f.first_row')} END AS line,
       r.* EXCLUDE (span_row, orphan, depth) REPLACE (${ATTRIBUTES} AS attributes)
     FROM record_rows r JOIN files f USING (file_id) ${attributesJoin('f.first_row')}
     WHERE r.record_type IS NOT NULL`,
];

export async function ensureSchema(db: Db): Promise<void> {
  for (const s of TABLES) await db.run(s);
  const tables = await db.all<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_name IN ('spans', 'nodes') AND table_type = 'BASE TABLE'`,
  );
  const schema1 = tables.length;
  // Schema 1 (a --db file of an older runlens) kept spans and nodes as tables: they become views, and
  // the span tree moves onto record_rows.
  if (schema1 > 0) {
    await db.run('DROP VIEW IF EXISTS span_details');
    for (const t of tables) await db.run(`DROP TABLE ${t.table_name}`);
    for (const col of SPAN_TREE_COLUMNS.split(',')) await db.run(`ALTER TABLE record_rows ADD COLUMN IF NOT EXISTS ${col.trim()}`);
    await db.run(`UPDATE record_rows SET span_row = record_type = 'SpanEnd' AND span_id IS NOT NULL`);
  }
  for (const s of normalizerMacros()) await db.run(s);
  for (const s of VIEWS) await db.run(s);
  if (schema1 > 0) {
    await db.run('CREATE TEMP TABLE IF NOT EXISTS _touched (trace_id VARCHAR)');
    await db.run('INSERT INTO _touched SELECT DISTINCT trace_id FROM record_rows WHERE trace_id IS NOT NULL');
    await deriveTouched(db);
    await db.run('DELETE FROM _touched');
  }
  await db.run(`INSERT OR REPLACE INTO runlens_meta VALUES ('schema_version', '${SCHEMA_VERSION}')`);
}
