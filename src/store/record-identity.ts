/**
 * A record's identity, one definition for the model (SQL, src/store/dedupe.ts) and for migrate's
 * writer (TS, src/legacy/same-run.ts): its trace, span and record type, and for a log record also
 * its time, event type and body (an empty body and none are the same). No imports of weight: the
 * commands' --help loads this.
 */
import type { JsonlRecord } from '../produce/record.js';

/** A record's identity, on a record_rows alias (IS NOT DISTINCT FROM joins: a log outside any span has no span id). */
export const IDENTITY = (r: string) => [
  `${r}.trace_id`,
  `${r}.span_id`,
  `${r}.record_type`,
  `CASE WHEN ${r}.record_type = 'LogRecord' THEN ${r}.time_ns END`,
  `CASE WHEN ${r}.record_type = 'LogRecord' THEN ${r}.event_type END`,
  // an empty body: written "" by JSONL, null by a Parquet writer
  `CASE WHEN ${r}.record_type = 'LogRecord' THEN coalesce(${r}.body, '') END`,
];

/**
 * The identity IDENTITY compares, of a record about to be written (migrate keeps one copy of a run
 * several inputs hold, as a load does): keep the two alike. A LogRecord's time is the canonical
 * decimal the writer emits, so comparing the text compares time_ns.
 */
export function recordIdentity(r: JsonlRecord): string {
  const head = [r.trace_id, r.span_id, r.record_type];
  return JSON.stringify(r.record_type === 'LogRecord' ? [...head, r.time_unix_nano, r.event_type, r.body ?? ''] : head);
}

/**
 * Where copies of a span disagree on how it ended, the worse wins (src/store/dedupe.ts for a load,
 * src/legacy/same-run.ts for migrate): node outcomes and test outcomes from better to worse, as the
 * model spells them; a status of ERROR wins over any other.
 */
export const OUTCOMES_BETTER_TO_WORSE = ['success', 'skipped', 'canceled', 'error'] as const;
export const TEST_OUTCOMES_BETTER_TO_WORSE = ['passed', 'warned', 'failed'] as const;
