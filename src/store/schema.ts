/**
 * DDL of the model (DESIGN.md "The model in DuckDB"). Users write SQL against these relations, so
 * their names and columns are a public surface: records, spans, nodes, node_results, runs, logs.
 */
import type { Db } from './db.js';
import { NORMALIZED_COLUMNS, normalizerMacros } from './normalize-sql.js';

export const SCHEMA_VERSION = 1;

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
     ${NORMALIZED_COLUMNS})`,
  `CREATE TABLE IF NOT EXISTS spans (
     trace_id VARCHAR, span_id VARCHAR, parent_span_id VARCHAR, span_name VARCHAR, event_type VARCHAR, kind VARCHAR,
     start_ns BIGINT, end_ns BIGINT, duration_ms DOUBLE, ended BOOLEAN, orphan BOOLEAN, depth INTEGER,
     status_code INTEGER, status_message VARCHAR, severity_text VARCHAR,
     unique_id VARCHAR, phase VARCHAR, node_outcome VARCHAR, skip_reason VARCHAR, upstream_unique_id VARCHAR,
     test_outcome VARCHAR, failing_rows INTEGER, resource_type VARCHAR, name VARCHAR, relative_path VARCHAR,
     materialization VARCHAR, rows_affected BIGINT, in_selection BOOLEAN,
     linked_span_id VARCHAR, attr_duration_ms DOUBLE, record_rowid BIGINT, file_id INTEGER)`,
  `CREATE TABLE IF NOT EXISTS nodes (
     trace_id VARCHAR, span_id VARCHAR, kind VARCHAR, unique_id VARCHAR, resource_type VARCHAR, name VARCHAR, phase VARCHAR,
     node_outcome VARCHAR, skip_reason VARCHAR, upstream_unique_id VARCHAR, test_outcome VARCHAR, failing_rows INTEGER,
     start_ns BIGINT, end_ns BIGINT, duration_ms DOUBLE, wall_ms DOUBLE, ended BOOLEAN, relative_path VARCHAR, materialization VARCHAR,
     rows_affected BIGINT, processed_span_id VARCHAR, in_selection BOOLEAN, error_text VARCHAR)`,
  // One result per node per run: NodeProcessed when the engine wrote it, else the last phase's NodeEvaluated
  // (older engines, e.g. preview.72, wrote no NodeProcessed). Materialized: queries read it all the time.
  `CREATE TABLE IF NOT EXISTS node_results AS SELECT * FROM nodes WITH NO DATA`,
  `CREATE TABLE IF NOT EXISTS runs (
     trace_id VARCHAR PRIMARY KEY, invocation_id VARCHAR, command VARCHAR, raw_command VARCHAR, engine_version VARCHAR,
     start_ns BIGINT, end_ns BIGINT, duration_ms DOUBLE, ended BOOLEAN, status_code INTEGER, status_message VARCHAR,
     spans BIGINT, nodes BIGINT, success BIGINT, error BIGINT, skipped BIGINT, canceled BIGINT,
     tests_passed BIGINT, tests_warned BIGINT, tests_failed BIGINT, failed BOOLEAN, files VARCHAR)`,
];

const VIEWS = [
  // Log records, computed on read: materializing them cost as much as the whole read.
  `CREATE OR REPLACE VIEW logs AS
     SELECT trace_id, span_id, span_name, event_id, time_ns, severity_number,
       coalesce(severity_text, CASE WHEN severity_number >= 17 THEN 'ERROR' WHEN severity_number >= 13 THEN 'WARN'
         WHEN severity_number >= 9 THEN 'INFO' WHEN severity_number >= 5 THEN 'DEBUG' WHEN severity_number >= 1 THEN 'TRACE' END) AS severity_text,
       body, event_type, json_extract_string(attributes, '$.unique_id') AS unique_id,
       rl_phase(json_extract_string(attributes, '$.phase')) AS phase,
       TRY_CAST(json_extract_string(attributes, '$.code') AS INTEGER) AS code, attributes, file_id
     FROM record_rows WHERE record_type = 'LogRecord'`,
  // Spans with their final attributes and links (from the SpanEnd, or the SpanStart of an unended span).
  `CREATE OR REPLACE VIEW span_details AS
     SELECT s.*, r.attributes, r.links FROM spans s JOIN record_rows r ON r.rowid = s.record_rowid`,
  `CREATE OR REPLACE VIEW records AS
     SELECT f.path AS source_file, CASE WHEN f.format IN ('jsonl', 'parquet') THEN r.rowid - f.first_row + 1 END AS line, r.*
     FROM record_rows r JOIN files f USING (file_id)
     WHERE r.record_type IS NOT NULL`,
];

export async function ensureSchema(db: Db): Promise<void> {
  for (const s of TABLES) await db.run(s);
  for (const s of normalizerMacros()) await db.run(s);
  for (const s of VIEWS) await db.run(s);
  await db.run(`INSERT OR REPLACE INTO runlens_meta VALUES ('schema_version', '${SCHEMA_VERSION}')`);
}
