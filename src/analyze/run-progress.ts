/**
 * A live stream's progress run by run: a line when a run is first seen and one when it ends, for
 * `receive` (stderr) and the explorer's status line. Reads the small `runs` table after each rebuild.
 */
import type { Db } from '../store/db.js';

interface RunState {
  trace_id: string;
  command: string | null;
  ended: boolean | null;
  failed: boolean | null;
  duration_s: number | null;
  nodes: number;
  error: number;
  tests_failed: number;
}

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export class RunProgress {
  private readonly ended = new Map<string, boolean>();

  constructor(private readonly db: Db) {}

  /** Lines for the runs that appeared or ended since the last call, oldest first. */
  async changes(): Promise<string[]> {
    const rows = await this.db.all<RunState>(
      `SELECT trace_id, command, ended, failed, round(duration_ms / 1000, 2) AS duration_s, coalesce(nodes, 0)::INTEGER AS nodes,
         coalesce(error, 0)::INTEGER AS error, coalesce(tests_failed, 0)::INTEGER AS tests_failed
       FROM runs ORDER BY start_ns, trace_id`,
    );
    const out: string[] = [];
    for (const r of rows) {
      const was = this.ended.get(r.trace_id);
      const name = `run ${r.trace_id} (${r.command ?? 'unknown command'})`;
      if (was === undefined) out.push(`${name} started`);
      if (r.ended && !was) {
        const verdict = r.failed ? 'FAILED' : 'ok';
        out.push(`${name} ended ${verdict} after ${r.duration_s ?? '?'} s: ${count(r.nodes, 'node')}, ${count(r.error, 'error')}, ${count(r.tests_failed, 'failed test')}`);
      }
      this.ended.set(r.trace_id, Boolean(r.ended));
    }
    return out;
  }
}
