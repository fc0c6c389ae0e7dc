/** The runs relation as a listing. */
import type { Db, Row } from '../store/db.js';

/** Every column of a run in listings for programs (json, csv), in order. */
export const RUN_FIELDS = [
  'trace_id', 'invocation_id', 'command', 'raw_command', 'started_at', 'duration_s', 'nodes', 'success', 'error', 'skipped', 'canceled',
  'tests_passed', 'tests_warned', 'tests_failed', 'failed', 'engine_version', 'ended', 'spans', 'files',
] as const;

/** The columns of the table for people. */
export const RUN_COLUMNS = [
  'trace_id', 'command', 'started_at', 'duration_s', 'nodes', 'success', 'error', 'skipped', 'canceled',
  'tests_passed', 'tests_warned', 'tests_failed', 'failed', 'engine_version', 'ended',
] as const;

/** Runs oldest first, or with `newestFirst` the most recent first (ties: the greater trace id first). */
export async function listRuns(db: Db, opts: { newestFirst?: boolean } = {}): Promise<Row[]> {
  const order = opts.newestFirst ? 'start_ns DESC, trace_id DESC' : 'start_ns, trace_id';
  return db.all(`
    SELECT trace_id, invocation_id, command, raw_command,
      strftime(make_timestamp(start_ns // 1000), '%Y-%m-%dT%H:%M:%S.%gZ') AS started_at,
      round(duration_ms / 1000, 3) AS duration_s, nodes::INTEGER AS nodes, success::INTEGER AS success,
      error::INTEGER AS error, skipped::INTEGER AS skipped, canceled::INTEGER AS canceled,
      tests_passed::INTEGER AS tests_passed, tests_warned::INTEGER AS tests_warned, tests_failed::INTEGER AS tests_failed,
      failed, engine_version, ended, spans::INTEGER AS spans, files
    FROM runs ORDER BY ${order}`);
}
