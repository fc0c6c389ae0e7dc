/** The explorer's runs list: the runs relation, its error count as the gate counts its `error` rule. */
import { listRuns } from '../runs.js';
import type { Db, Row } from '../../store/db.js';
import { sourceFreshness } from '../../store/freshness-sql.js';

const OUTCOME_COUNTS = ['success', 'skipped', 'canceled'];

/**
 * Runs newest first, as listRuns gives them, but a source whose freshness failed (and that did not
 * error) counted under error rather than under its node outcome: the gate fails it as an error, so
 * a run failed only by a stale source shows what failed it.
 */
export async function explorerRuns(db: Db): Promise<Row[]> {
  const runs = await listRuns(db, { newestFirst: true });
  const stale = await db.all<{ trace_id: string; node_outcome: string | null; n: number }>(
    `SELECT f.trace_id, r.node_outcome, count(*)::INTEGER AS n
     FROM (${sourceFreshness(`SELECT rowid FROM record_rows WHERE node_result AND resource_type = 'source'`)}) f
       JOIN record_rows r ON r.trace_id = f.trace_id AND r.span_id = f.span_id AND r.node_result
     WHERE f.freshness_outcome = 'failed' AND r.node_outcome IS DISTINCT FROM 'error'
     GROUP BY ALL`,
  );
  if (stale.length === 0) return runs;
  const byTrace = new Map(runs.map((r) => [r.trace_id, r]));
  for (const s of stale) {
    const run = byTrace.get(s.trace_id);
    if (!run) continue;
    run.error = Number(run.error ?? 0) + s.n;
    if (s.node_outcome && OUTCOME_COUNTS.includes(s.node_outcome)) run[s.node_outcome] = Number(run[s.node_outcome] ?? 0) - s.n;
  }
  return runs;
}
