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
import { RunSpanIds } from '../legacy/span-ids.js';
import { sqlString, type Db } from './db.js';
import { IDENTITY, OUTCOMES_BETTER_TO_WORSE, TEST_OUTCOMES_BETTER_TO_WORSE } from './record-identity.js';
import { timed } from './timing.js';

/** A row's id and identity columns, aliased r. */
const IDENTITY_ROWS = 'SELECT r.rowid AS r, r.trace_id, r.span_id, r.record_type, r.time_ns, r.event_type, r.body FROM record_rows r';

/**
 * The statement, for a live source's batch transaction, that hides the source's rows repeating a
 * record another input put in the model (a run sent again to a second receiver on the same model).
 * `traces`: the batch's traces that other inputs hold; only those are compared.
 */
export function hideLiveRepeatsSql(fileId: number, traces: readonly string[]): string {
  const rowsOf = (files: string) => `${IDENTITY_ROWS} WHERE ${files} AND r.record_type IS NOT NULL AND r.trace_id IN (${traces.map(sqlString).join(', ')})`;
  const f = Math.trunc(fileId);
  return `UPDATE record_rows SET record_type = NULL, span_row = false, node_result = false
    WHERE rowid IN (SELECT n.r FROM (${rowsOf(`r.file_id = ${f}`)}) n SEMI JOIN (${rowsOf(`r.file_id <> ${f}`)}) o ON ${sameRecord})`;
}

const sameRecord = IDENTITY('n').map((n, i) => `${n} IS NOT DISTINCT FROM ${IDENTITY('o')[i]}`).join(' AND ');

/** How bad a value is in `order` (better to worse), from 1; 0 for none or another. */
const rank = (col: string, order: readonly string[]) => `CASE ${col} ${order.map((v, i) => `WHEN '${v}' THEN ${i + 1}`).join(' ')} ELSE 0 END`;
const OUTCOME_RANK = (r: string) => rank(`${r}.node_outcome`, OUTCOMES_BETTER_TO_WORSE);
const TEST_RANK = (r: string) => rank(`${r}.test_outcome`, TEST_OUTCOMES_BETTER_TO_WORSE);
/**
 * How an ending ranks, compared in order (src/legacy/same-run.ts ranks alike): an ERROR status, then
 * one that says why, then its message; a node outcome (any above none), then its skip reason and
 * upstream node; a test outcome (any above none), then more failing rows (a count not recorded
 * below any). So where copies disagree, the worse stands, and of two alike the one that says more,
 * then the greater: the same, whichever copy was loaded first.
 */
const STATUS_KEY = (r: string) => {
  const error = `coalesce(${r}.status_code = 2, false)`;
  return `(${error}, ${error} AND ${r}.status_message IS NOT NULL, CASE WHEN ${error} THEN coalesce(${r}.status_message, '') ELSE '' END)`;
};
const OUTCOME_KEY = (r: string) => `(${OUTCOME_RANK(r)}, coalesce(${r}.skip_reason, ''), coalesce(${r}.upstream_unique_id, ''))`;
const TEST_KEY = (r: string) => `(${TEST_RANK(r)}, CASE WHEN ${TEST_RANK(r)} > 1 THEN coalesce(${r}.failing_rows, -1) ELSE 0 END)`;
const worseStatus = `${STATUS_KEY('n')} > ${STATUS_KEY('o')}`;
const worseOutcome = `${OUTCOME_KEY('n')} > ${OUTCOME_KEY('o')}`;
const worseTest = `${TEST_KEY('n')} > ${TEST_KEY('o')}`;

/**
 * Per span, the highest-ranked of each thing its SpanEnds among `where` (on record_rows e) say, by
 * the keys above: the status (with its message), the node outcome (with its skip reason and upstream
 * node), the test outcome (with its failing rows), each of the first SpanEnd that ranks highest; and
 * the row of the span's first SpanEnd (the one derive lets stand for it), and how many there are.
 */
const worstEndings = (where: string) => {
  const worst = (col: string, key: string) => `arg_max_null(e.${col}, (${key}, -e.rowid)) AS ${col}`;
  return `SELECT e.trace_id, e.span_id, arg_min(e.rowid, (e.file_id, e.rowid)) AS first, count(*) AS ends,
    ${worst('status_code', STATUS_KEY('e'))}, ${worst('status_message', STATUS_KEY('e'))},
    ${['node_outcome', 'skip_reason', 'upstream_unique_id'].map((c) => worst(c, OUTCOME_KEY('e'))).join(', ')},
    ${['test_outcome', 'failing_rows'].map((c) => worst(c, TEST_KEY('e'))).join(', ')}
  FROM record_rows e WHERE e.record_type = 'SpanEnd' AND e.span_id IS NOT NULL AND ${where} GROUP BY e.trace_id, e.span_id`;
};

/** The copy o takes from the worst endings n (worstEndings) what is worse. */
const TAKE_WORSE_SET = `
  status_code = CASE WHEN ${worseStatus} THEN n.status_code ELSE o.status_code END,
  status_message = CASE WHEN ${worseStatus} THEN n.status_message ELSE o.status_message END,
  node_outcome = CASE WHEN ${worseOutcome} THEN n.node_outcome ELSE o.node_outcome END,
  skip_reason = CASE WHEN ${worseOutcome} THEN n.skip_reason ELSE o.skip_reason END,
  upstream_unique_id = CASE WHEN ${worseOutcome} THEN n.upstream_unique_id ELSE o.upstream_unique_id END,
  test_outcome = CASE WHEN ${worseTest} THEN n.test_outcome ELSE o.test_outcome END,
  failing_rows = CASE WHEN ${worseTest} THEN n.failing_rows ELSE o.failing_rows END`;
const ANY_WORSE = `(${worseStatus} OR ${worseOutcome} OR ${worseTest})`;

/**
 * Copies of one record can disagree on how a span ended where they come from different sources: the
 * older engine's run_results.json and its log translate to the same spans, and only the log knows that
 * an on-run-end hook failed; a copy may say a node errored or a test failed where another says
 * it went well. The worse wins, whichever was loaded first: the copy in the model takes the file's
 * ERROR status, node outcome (with its skip reason) and test outcome (with its failing rows) where
 * they rank above its own (STATUS_KEY, OUTCOME_KEY, TEST_KEY). Endings that say none of them (an
 * OK status, no outcome) rank below every copy and are not compared. Returns how many spans it
 * changed; their traces are derived again.
 */
const takeWorseSql = (fileId: string, traces: string) => `
UPDATE record_rows o SET ${TAKE_WORSE_SET}
FROM (${worstEndings(`e.file_id = ${fileId} AND e.trace_id IN (${traces})
        AND (e.status_code = 2 OR ${OUTCOME_RANK('e')} > 0 OR ${TEST_RANK('e')} > 0)`)}) n
WHERE o.file_id <> ${fileId} AND o.record_type = 'SpanEnd' AND o.trace_id = n.trace_id AND o.span_id = n.span_id AND ${ANY_WORSE}`;
const TAKE_WORSE = takeWorseSql('$file_id', 'SELECT trace_id FROM _shared_traces');

/**
 * A span that one input ends more than once (a file concatenated with itself, a batch sent again):
 * its first SpanEnd, which stands for it, takes what its later ones say worse, by the same rule as
 * copies from two inputs. For derive, on the traces `filter` leaves.
 */
export const takeWorseWithinSql = (filter: string): string => `
UPDATE record_rows o SET ${TAKE_WORSE_SET}
FROM (${worstEndings(`true ${filter}`)} HAVING count(*) > 1) n
WHERE o.rowid = n.first AND ${ANY_WORSE}`;

/** The same for a live source's batch (before its repeats are hidden): `traces` are those other inputs hold. */
export const takeLiveWorseSql = (fileId: number, traces: readonly string[]): string =>
  takeWorseSql(String(Math.trunc(fileId)), traces.map(sqlString).join(', '));

/**
 * The engine writes its own run_results.json beside its telemetry (target/ and
 * target/metadata/otel.parquet), with the invocation id its telemetry uses as trace id. Translated,
 * it would share the run's trace but none of its spans: a second invocation, other node spans, another
 * run window. Where a trace holds the engine's telemetry, the translation's records of it are set
 * aside (hidden like a repeated record), whichever was loaded first. A translation is recognised by
 * its invocation span, whose id the translator derives from the trace (src/legacy/span-ids.ts); the
 * older engine's run_results.json, its log and their migrated copies all carry that id, so they still
 * merge with each other.
 * Returns the file's own rows set aside, and the rows of earlier files set aside for it.
 */
async function setAsideTranslations(db: Db, fileId: number): Promise<{ own: number; earlier: number }> {
  const invocations = await db.all<{ trace_id: string; file_id: number; span_id: string }>(
    `SELECT DISTINCT trace_id, file_id, span_id FROM record_rows
     WHERE kind = 'invocation' AND record_type IS NOT NULL AND trace_id IN (SELECT trace_id FROM _shared_traces)`,
  );
  const translated = (r: { trace_id: string; span_id: string }) => r.span_id === new RunSpanIds(r.trace_id).head().invocation;
  // per trace: the files whose invocation is a translation's, when another file holds the engine's own
  const aside: { trace_id: string; file_id: number }[] = [];
  for (const trace of new Set(invocations.map((r) => r.trace_id))) {
    const of = invocations.filter((r) => r.trace_id === trace);
    if (!of.some((r) => !translated(r))) continue;
    for (const r of of) if (translated(r)) aside.push({ trace_id: trace, file_id: r.file_id });
  }
  if (aside.length === 0) return { own: 0, earlier: 0 };
  const rows = aside.map((a) => `(${sqlString(a.trace_id)}, ${Math.trunc(a.file_id)})`).join(', ');
  await db.run(`CREATE OR REPLACE TEMP TABLE _aside AS SELECT * FROM (VALUES ${rows}) v(trace_id, file_id)`);
  try {
    const hidden = await db.one<{ own: number; earlier: number }>(
      `SELECT count(*) FILTER (WHERE r.file_id = $file_id)::INTEGER AS own, count(*) FILTER (WHERE r.file_id <> $file_id)::INTEGER AS earlier
       FROM record_rows r SEMI JOIN _aside a ON r.trace_id = a.trace_id AND r.file_id = a.file_id WHERE r.record_type IS NOT NULL`,
      { file_id: fileId },
    );
    await db.run(
      `UPDATE record_rows r SET record_type = NULL, span_row = false, node_result = false FROM _aside a
       WHERE r.trace_id = a.trace_id AND r.file_id = a.file_id AND r.record_type IS NOT NULL`,
    );
    await db.run('INSERT INTO _touched SELECT DISTINCT trace_id FROM _aside');
    return hidden ?? { own: 0, earlier: 0 };
  } finally {
    await db.run('DROP TABLE IF EXISTS _aside');
  }
}

export interface AlreadyPresent {
  /** the file's records already in the model */
  present: number;
  /** spans already in the model that took the file's worse outcome (takeWorseSql) */
  worseTaken: number;
  /** the file's records set aside: a translation of a run the model holds as the engine's telemetry */
  setAside: number;
  /** records of earlier files set aside for the file's telemetry of the same run */
  earlierSetAside: number;
  /** traces (with a trace id) of the file that the model already held, in whole or in part */
  tracesShared: number;
}

/**
 * Hide the rows of file `fileId` (inserted, not yet committed, `records` of them readable) whose
 * record is already in the model, and translations of a run the engine's telemetry describes
 * (setAsideTranslations). Only the traces the file shares with earlier inputs are compared, so a
 * file of new runs costs one scan of the trace ids. Within one file nothing is hidden: what a file
 * repeats is what it says (a span ended twice under two parents).
 */
export async function hideRecordsAlreadyPresent(db: Db, fileId: number, records: number): Promise<AlreadyPresent> {
  const params = { file_id: fileId };
  // A semi join, not INTERSECT: it reads only the model's rows of the file's traces, where INTERSECT
  // gathered every trace of the model for each file. Log records with no trace share "no trace".
  await timed('dedupe: shared traces', async () => {
    await db.run(
      `CREATE OR REPLACE TEMP TABLE _shared_traces AS
       SELECT DISTINCT trace_id FROM record_rows WHERE file_id <> $file_id AND record_type IS NOT NULL
         AND trace_id IN (SELECT trace_id FROM record_rows WHERE file_id = $file_id AND record_type IS NOT NULL)`,
      params,
    );
    const traceless = 'trace_id IS NULL AND record_type IS NOT NULL';
    if (await db.scalar<boolean>(`SELECT count(*) > 0 FROM record_rows WHERE file_id = $file_id AND ${traceless}`, params)) {
      await db.run(`INSERT INTO _shared_traces SELECT NULL WHERE EXISTS (SELECT 1 FROM record_rows WHERE file_id <> $file_id AND ${traceless})`, params);
    }
  });
  try {
    const shared = await db.one<{ n: number; traced: number }>('SELECT count(*)::INTEGER AS n, count(trace_id)::INTEGER AS traced FROM _shared_traces');
    const tracesShared = shared!.traced;
    if (shared!.n === 0) return { present: 0, worseTaken: 0, setAside: 0, earlierSetAside: 0, tracesShared };
    const aside = await timed('dedupe: translations', () => setAsideTranslations(db, fileId));
    const readable = records - aside.own;
    const rowsOf = (files: string) => `${IDENTITY_ROWS} SEMI JOIN _shared_traces s ON r.trace_id IS NOT DISTINCT FROM s.trace_id
      WHERE ${files} AND r.record_type IS NOT NULL`;
    await timed('dedupe: records present', () => db.run(
      `CREATE OR REPLACE TEMP TABLE _present AS
       SELECT n.r FROM (${rowsOf('r.file_id = $file_id')}) n SEMI JOIN (${rowsOf('r.file_id <> $file_id')}) o ON ${sameRecord}`,
      params,
    ));
    const n = await db.scalar<number>('SELECT count(*)::INTEGER FROM _present');
    // An UPDATE's result is the number of rows it changed.
    const worseTaken = Number(await timed('dedupe: worse copies', () => db.scalar<number | string>(TAKE_WORSE, params)));
    if (worseTaken > 0) await db.run('INSERT INTO _touched SELECT trace_id FROM _shared_traces');
    // (all of them and no status taken: the caller rolls the file back, nothing to hide)
    if (n > 0 && (n < readable || worseTaken > 0 || aside.earlier > 0)) {
      await timed('dedupe: hide', () => db.run(`UPDATE record_rows SET record_type = NULL, span_row = false, node_result = false WHERE rowid IN (SELECT r FROM _present)`));
    }
    await db.run('DROP TABLE _present');
    return { present: n, worseTaken, setAside: aside.own, earlierSetAside: aside.earlier, tracesShared };
  } finally {
    await db.run('DROP TABLE IF EXISTS _shared_traces');
  }
}
