/**
 * The body sent to subscribers, field for field as interface section 2C (key order kept stable), with
 * `dbtVersion` beside `toolVersion`: the same value under the hosted service's name.
 */
import { isoFractional, isoSeconds } from './clock.js';
import type { EventType, Job, Run, Subscription } from './store/types.js';

export const RUN_STATUS = { queued: 1, starting: 2, running: 3, success: 10, error: 20, cancelled: 30 } as const;
const STATUS_NAME: Record<number, string> = { 1: 'Queued', 2: 'Starting', 3: 'Running', 10: 'Success', 20: 'Errored', 30: 'Cancelled' };
export const runStatusName = (code: number): string => STATUS_NAME[code] ?? String(code);

const usToMs = (us: number): number => Math.floor(us / 1000);

export function buildPayload(sub: Subscription, eventId: string, eventType: EventType, job: Job, run: Run, nowMs: number): string {
  const data: Record<string, unknown> = {
    jobId: String(job.id),
    jobName: job.name,
    runId: String(run.id),
    environmentId: String(job.environmentId),
    environmentName: job.environmentName,
    toolVersion: job.toolVersion,
    // the hosted service's name for it, which real receivers read (reference webhooks 1.4)
    dbtVersion: job.toolVersion,
    projectName: job.projectName,
    projectId: String(job.projectId),
    runStatus: runStatusName(run.status),
    runStatusCode: run.status,
    runStatusMessage: run.statusMessage ?? 'None',
    runReason: run.cause,
    runStartedAt: isoSeconds(usToMs(run.startedAt ?? run.createdAt)),
  };
  if (eventType === 'job.run.completed') data.runFinishedAt = isoSeconds(usToMs(run.finishedAt ?? run.erroredAt ?? nowMs * 1000));
  if (eventType === 'job.run.errored') data.runErroredAt = isoSeconds(usToMs(run.erroredAt ?? nowMs * 1000));
  return JSON.stringify({
    accountId: sub.accountId,
    webhookId: sub.id,
    eventId,
    timestamp: isoFractional(nowMs),
    eventType,
    webhookName: sub.name,
    data,
  });
}

/**
 * Body of the test operation: an event of a type the subscription receives (job.run.completed when it
 * does), with sample data marked as a test in runReason, and the run as a real event of that type
 * shows it: started Running (no end yet), errored Errored with a message, completed Success. Its ids
 * are a placeholder, 1: receivers reject ids that are not positive integers (reference webhooks.md
 * 1.4), and one that accepts real events must accept the test one.
 */
export function buildTestPayload(sub: Subscription, eventId: string, nowMs: number): string {
  const t = nowMs * 1000;
  const id = 1;
  const job: Job = { id, accountId: sub.accountId, name: 'Test job', projectId: id, environmentId: id, projectName: 'Test project',
    environmentName: 'Test environment', toolVersion: '', executeSteps: [], createdAt: t };
  const type = sub.eventTypes.includes('job.run.completed') ? 'job.run.completed' : (sub.eventTypes[0] ?? 'job.run.completed');
  const base: Run = { id, accountId: sub.accountId, jobId: id, status: RUN_STATUS.success, statusMessage: null,
    cause: 'Test webhook delivery', createdAt: t, startedAt: t, finishedAt: null, erroredAt: null };
  const run: Run = type === 'job.run.started' ? { ...base, status: RUN_STATUS.running }
    : type === 'job.run.errored' ? { ...base, status: RUN_STATUS.error, statusMessage: 'Test webhook delivery: a sample error', erroredAt: t }
    : { ...base, finishedAt: t };
  return buildPayload(sub, eventId, type, job, run, nowMs);
}
