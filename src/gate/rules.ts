/** Gate rules: which node results fail a CI run. */
import type { Db } from '../store/db.js';
import type { OutcomeColumns } from '../store/outcome-columns.js';

export const FAIL_ON = ['test-failed', 'test-warned', 'error', 'skipped', 'canceled'] as const;
export type FailOn = (typeof FAIL_ON)[number];
export const DEFAULT_FAIL_ON: FailOn[] = ['test-failed', 'error'];

export interface GateNode extends OutcomeColumns {
  trace_id: string;
  unique_id: string;
  resource_type: string | null;
  relative_path: string | null;
  duration_ms: number | null;
  error_text: string | null;
}

export interface GateRun {
  trace_id: string;
  command: string | null;
  nodes: number;
}

export interface GateResult {
  failOn: FailOn[];
  runs: GateRun[];
  /** every node result (reporters such as junit list all tests) */
  nodes: GateNode[];
  offenders: (GateNode & { rule: FailOn })[];
  passed: boolean;
}

export function ruleFor(n: GateNode, failOn: readonly FailOn[]): FailOn | undefined {
  const on = new Set(failOn);
  if (on.has('error') && n.node_outcome === 'error') return 'error';
  if (on.has('test-failed') && n.test_outcome === 'failed') return 'test-failed';
  if (on.has('test-warned') && n.test_outcome === 'warned') return 'test-warned';
  if (on.has('skipped') && n.node_outcome === 'skipped') return 'skipped';
  if (on.has('canceled') && n.node_outcome === 'canceled') return 'canceled';
  return undefined;
}

export async function evaluateGate(db: Db, failOn: readonly FailOn[], traceId?: string): Promise<GateResult> {
  const where = traceId ? 'WHERE trace_id = $t' : '';
  const params = traceId ? { t: traceId } : undefined;
  const runs = await db.all<GateRun>(`SELECT trace_id, command, nodes::INTEGER AS nodes FROM runs ${where} ORDER BY start_ns`, params);
  const nodes = await db.all<GateNode>(
    `SELECT trace_id, unique_id, resource_type, phase, node_outcome, skip_reason, upstream_unique_id, test_outcome,
            failing_rows, relative_path, round(duration_ms, 3) AS duration_ms, error_text
     FROM node_results ${where} ORDER BY trace_id, unique_id`,
    params,
  );
  const offenders = nodes.flatMap((n) => {
    const rule = ruleFor(n, failOn);
    return rule ? [{ ...n, rule }] : [];
  });
  return { failOn: [...failOn], runs, nodes, offenders, passed: offenders.length === 0 };
}
