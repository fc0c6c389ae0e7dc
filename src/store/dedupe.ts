/**
 * A record is in the model once (DESIGN.md): the engine writes each run twice (JSONL under logs/,
 * Parquet under target/metadata/), and a record that is already in the model is not added again,
 * whatever file or format it came from. A record's identity is its trace, span and record type, and
 * for a log record also its time, event type and body (an empty body and none are the same).
 *
 * A file's rows are inserted as they come (the insert keeps its order, so a record's line stays its
 * row position); the rows that repeat a record of an earlier input are then hidden the way a skipped
 * line is (record_type NULL), so that every view leaves them out and the lines of the others stay right.
 */
import type { Db } from './db.js';
import { timed } from './timing.js';

/** A record's identity, on a record_rows alias (IS NOT DISTINCT FROM joins: a log outside any span has no span id). */
const IDENTITY = (r: string) => [
  `${r}.trace_id`,
  `${r}.span_id`,
  `${r}.record_type`,
  `CASE WHEN ${r}.record_type = 'LogRecord' THEN ${r}.time_ns END`,
  `CASE WHEN ${r}.record_type = 'LogRecord' THEN ${r}.event_type END`,
  // an empty body: written "" by JSONL, null by a Parquet writer
  `CASE WHEN ${r}.record_type = 'LogRecord' THEN coalesce(${r}.body, '') END`,
];

const sameRecord = IDENTITY('n').map((n, i) => `${n} IS NOT DISTINCT FROM ${IDENTITY('o')[i]}`).join(' AND ');

/**
 * Copies of one record can disagree on a span's status where they come from different sources: the
 * older engine's run_results.json and its log translate to the same spans, and only the log knows
 * that an on-run-end hook failed. An ERROR from any copy wins: the copy in the model takes the
 * file's status. Returns how many spans it changed; their traces are derived again.
 */
const RAISE_ERROR_STATUS = `
UPDATE record_rows o SET status_code = n.status_code, status_message = n.status_message
FROM (SELECT DISTINCT ON (trace_id, span_id) trace_id, span_id, status_code, status_message FROM record_rows
      WHERE file_id = $file_id AND record_type = 'SpanEnd' AND status_code = 2 AND trace_id IN (SELECT trace_id FROM _shared_traces)) n
WHERE o.file_id <> $file_id AND o.record_type = 'SpanEnd' AND o.trace_id = n.trace_id AND o.span_id = n.span_id
  AND o.status_code IS DISTINCT FROM 2`;

/**
 * Hide the rows of file `fileId` (inserted, not yet committed, `records` of them readable) whose
 * record is already in the model; returns how many, and how many spans already in the model took
 * their ERROR status from the file (RAISE_ERROR_STATUS). Only the traces the file shares with
 * earlier inputs are compared, so a file of new runs costs one scan of the trace ids. Within one
 * file nothing is hidden: what a file repeats is what it says (a span ended twice under two parents).
 */
export async function hideRecordsAlreadyPresent(db: Db, fileId: number, records: number): Promise<{ present: number; statusesRaised: number }> {
  const params = { file_id: fileId };
  await timed('dedupe: shared traces', () => db.run(
    `CREATE OR REPLACE TEMP TABLE _shared_traces AS
     SELECT DISTINCT trace_id FROM record_rows WHERE file_id = $file_id AND record_type IS NOT NULL
     INTERSECT
     SELECT DISTINCT trace_id FROM record_rows WHERE file_id <> $file_id AND record_type IS NOT NULL`,
    params,
  ));
  try {
    if ((await db.scalar<number>('SELECT count(*)::INTEGER FROM _shared_traces')) === 0) return { present: 0, statusesRaised: 0 };
    const rowsOf = (files: string) => `SELECT r.rowid AS r, r.trace_id, r.span_id, r.record_type, r.time_ns, r.event_type, r.body
      FROM record_rows r SEMI JOIN _shared_traces s ON r.trace_id IS NOT DISTINCT FROM s.trace_id
      WHERE ${files} AND r.record_type IS NOT NULL`;
    await timed('dedupe: records present', () => db.run(
      `CREATE OR REPLACE TEMP TABLE _present AS
       SELECT n.r FROM (${rowsOf('r.file_id = $file_id')}) n SEMI JOIN (${rowsOf('r.file_id <> $file_id')}) o ON ${sameRecord}`,
      params,
    ));
    const n = await db.scalar<number>('SELECT count(*)::INTEGER FROM _present');
    // An UPDATE's result is the number of rows it changed.
    const statusesRaised = Number(await timed('dedupe: statuses', () => db.scalar<number | string>(RAISE_ERROR_STATUS, params)));
    if (statusesRaised > 0) await db.run('INSERT INTO _touched SELECT trace_id FROM _shared_traces');
    // (all of them and no status taken: the caller rolls the file back, nothing to hide)
    if (n > 0 && (n < records || statusesRaised > 0)) {
      await timed('dedupe: hide', () => db.run(`UPDATE record_rows SET record_type = NULL, span_row = false, node_result = false WHERE rowid IN (SELECT r FROM _present)`));
    }
    await db.run('DROP TABLE _present');
    return { present: n, statusesRaised };
  } finally {
    await db.run('DROP TABLE IF EXISTS _shared_traces');
  }
}
