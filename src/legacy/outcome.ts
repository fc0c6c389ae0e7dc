/**
 * One legacy status onto the writer's NodeResult, through the one status table
 * (src/telemetry/status-map.ts). Nothing here decides an outcome on its own.
 */
import type { NodeResult } from '../produce/node-attrs.js';
import { mapStatus, type StatusMapping } from '../telemetry/status-map.js';

export interface OutcomeInput {
  status: string;
  resourceType: string;
  message?: string | null;
  /** args.which / the sub-command: compile, generate and show turn success into "compiled" */
  command?: string | null;
  failures?: number | null;
  rowsAffected?: number;
  upstreamUniqueId?: string;
  failedBatches?: string[][];
  /** sources.json: the age the freshness query measured */
  freshnessAgeS?: number | null;
}

export interface Outcome {
  mapping: StatusMapping;
  result: NodeResult;
}

/** Statuses whose node is the root cause of the skips below it. */
export const CULPRIT_OUTCOMES = (m: StatusMapping) => m.node_outcome === 'error' || m.test_outcome === 'failed';

/** An ephemeral model's compile error names the culprit in the skipped node's message. */
export function upstreamFromMessage(message: string | null | undefined): string | undefined {
  return message ? /referenced ephemeral model (\S+?)[\s,.]*$/m.exec(message)?.[1] : undefined;
}

/**
 * Who caused an upstream skip: named by the message, else the nearest failed ancestor in the
 * manifest, else (no manifest) the run's only failure when it had exactly one; otherwise unknown.
 */
export function culpritOf(uid: string, message: string | null | undefined, culprits: Set<string>, nearest?: (uid: string) => string | undefined): string | undefined {
  const named = upstreamFromMessage(message);
  if (named) return named;
  if (nearest) return nearest(uid);
  return culprits.size === 1 ? culprits.values().next().value : undefined;
}

export function outcomeOf(i: OutcomeInput): Outcome {
  const mapping = mapStatus(i.status, { resourceType: i.resourceType, message: i.message, command: i.command ?? undefined });
  const result: NodeResult = { outcome: mapping.node_outcome };
  if (mapping.skip_reason) result.skipReason = mapping.skip_reason;
  if (mapping.skip_reason === 'upstream' && i.upstreamUniqueId) result.upstreamUniqueId = i.upstreamUniqueId;
  if (mapping.node_outcome === 'canceled') result.cancelReason = 'user_cancelled';
  if (mapping.freshness_outcome) {
    result.freshness = { outcome: mapping.freshness_outcome };
    if (typeof i.freshnessAgeS === 'number' && Number.isFinite(i.freshnessAgeS) && i.freshnessAgeS >= 0) result.freshness.ageSeconds = i.freshnessAgeS;
  }
  if (mapping.test_outcome) {
    result.test = { outcome: mapping.test_outcome };
    // The format's failing_rows (a 32-bit integer) cannot say "unknown" (absent is 0): a failed or
    // warned test whose count the engine did not record, or one past 32 bits, says so beside it.
    const fits = typeof i.failures === 'number' && Number.isInteger(i.failures) && Math.abs(i.failures) < 2 ** 31;
    if (i.failures && fits) result.test.failingRows = i.failures;
    else if (!fits && mapping.test_outcome !== 'passed') result.test.failingRowsRecorded = false;
  }
  if (mapping.node_outcome === 'error') {
    let text = i.message ?? `${i.status}`;
    if (i.failedBatches?.length) text += `\nfailed batches: ${i.failedBatches.map((w) => w.join(' .. ')).join(', ')}`;
    result.errorMessage = text;
  }
  if (mapping.node_outcome === 'success' && i.rowsAffected !== undefined) result.rowsAffected = i.rowsAffected;
  return { mapping, result };
}
