/**
 * Where a record's attributes are. Records from JSONL and OTLP keep them in record_rows.attributes;
 * those of a Parquet file keep them in record_attributes, written on a second connection while the
 * file's rows are inserted (readParquetSql, AttributesWriter). Every reader of attributes
 * goes through this join.
 */

/** A record's line in its file (from 1): its row id minus its file's first row id (files.first_row), plus one. */
export const recordLine = (r: string, firstRow: string): string => `${r}.rowid - ${firstRow} + 1`;

/**
 * Joins record_rows `r` to record_attributes by the record's line (r.rowid - firstRow + 1), so that
 * a filter on a few records (the explorer's detail pane) prunes record_attributes by its zone maps.
 * The joined relation shows only prefixed names, so a view's unqualified columns stay record_rows'.
 * A model without Parquet input joins an empty table. `firstRow`: the file's files.first_row.
 */
export const attributesJoin = (firstRow: string): string => `
  LEFT JOIN (SELECT file_id AS _ra_file, line AS _ra_line, attributes AS _ra_attributes FROM record_attributes)
    ON _ra_file = r.file_id AND _ra_line = ${recordLine('r', firstRow)}`;

/** attributesJoin for queries that do not join files themselves. */
export const ATTRIBUTES_JOIN = `LEFT JOIN (SELECT file_id AS _f_id, first_row AS _f_first FROM files) ON _f_id = r.file_id ${attributesJoin('_f_first')}`;

/** The record's attributes, wherever they are (with ATTRIBUTES_JOIN or attributesJoin). */
export const ATTRIBUTES = 'coalesce(r.attributes, _ra_attributes)';

/** The columns the joins add, to leave out of a `SELECT *`. */
export const JOINED_COLUMNS = '_f_id, _f_first, _ra_file, _ra_line, _ra_attributes';

/**
 * (record_rowid, attributes) of the records whose row ids the query `rowids` gives, for a few
 * records (one per run, the spans that never ended): record_attributes is read through a semi join
 * built on those few rows. ATTRIBUTES_JOIN behind a join that picks a few rows could be planned the
 * other way round, a hash table of all of record_attributes (slow, and memory for every record).
 */
export const attributesOfRows = (rowids: string): string => `(
  WITH k AS MATERIALIZED (SELECT r.rowid AS record_rowid, r.file_id, ${recordLine('r', 'f.first_row')} AS line, r.attributes
             FROM record_rows r JOIN files f USING (file_id) WHERE r.rowid IN (${rowids})),
  side AS (SELECT ra.file_id, ra.line, ra.attributes FROM record_attributes ra SEMI JOIN k ON ra.file_id = k.file_id AND ra.line = k.line)
  SELECT k.record_rowid, coalesce(k.attributes, side.attributes) AS attributes FROM k LEFT JOIN side USING (file_id, line))`;
