/** API objects as the hosted service shapes them (ids and times as strings where section 2B says so). */
import { microsString } from '../clock.js';
import { accountIdentifier } from '../ids.js';
import { runStatusName } from '../payload.js';
import { telemetryNoteLines, telemetryNotStoredReasons } from '../telemetry-note.js';
import type { DeliveryEvent, Job, Receipt, Run, RunStep, Subscription } from '../store/types.js';
import { CUT_OFF_ERROR, IN_FLIGHT_ERROR } from '../store/types.js';

export function subscriptionView(s: Subscription, withSecret = false): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: s.id,
    account_identifier: accountIdentifier(s.accountId),
    account_id: String(s.accountId),
    name: s.name,
    description: s.description,
    job_ids: s.jobIds.map(String),
    event_types: s.eventTypes,
    client_url: s.clientUrl,
    active: s.active && !s.archived,
    created_at: microsString(s.createdAt),
    updated_at: microsString(s.updatedAt),
    http_status_code: String(s.httpStatusCode),
  };
  if (s.dispatchedAt !== null) v.dispatched_at = microsString(s.dispatchedAt);
  // Beyond the documented fields: the archived state and its reason (the hosted UI shows both).
  v.archived = s.archived;
  v.deactivate_reason = s.deactivateReason;
  if (withSecret) v.hmac_secret = s.hmacSecret;
  return v;
}

export function eventView(e: DeliveryEvent): Record<string, unknown> {
  return {
    id: e.id,
    subscription_id: e.subscriptionId,
    account_identifier: accountIdentifier(e.accountId),
    account_id: String(e.accountId),
    job_id: e.jobId === null ? null : String(e.jobId),
    trigger_event_type: e.eventType,
    payload: e.payload,
    http_status_code: String(e.httpStatusCode),
    status: e.status,
    attempts: e.attempts,
    test: e.test,
    created_at: microsString(e.createdAt),
  };
}

/** One attempt of `e`; an attempt with no outcome is in progress while its event is pending, else it was cut off. */
export function receiptView(r: Receipt, e: DeliveryEvent): Record<string, unknown> {
  const noOutcome = r.httpStatusCode === 0 && r.errorInfo === null;
  return {
    id: r.id,
    event_id: r.eventId,
    subscription_id: r.subscriptionId,
    attempt: r.attempt,
    dispatched_at: microsString(r.dispatchedAt),
    http_status_code: String(r.httpStatusCode),
    error_info: noOutcome ? (e.status === 'pending' ? IN_FLIGHT_ERROR : CUT_OFF_ERROR) : r.errorInfo,
    request_body: e.payload,
    request_headers: JSON.stringify(r.requestHeaders),
    response_body: r.responseBody,
    duration_ms: Math.round(r.durationMs * 1000) / 1000,
  };
}

/** v2 timestamps look like `2024-01-31 19:28:15.742843+00:00`. */
function v2Time(us: number | null): string | null {
  if (us === null) return null;
  const iso = new Date(Math.floor(us / 1000)).toISOString();
  const micros = String(Math.trunc(us) % 1_000_000).padStart(6, '0');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${micros}+00:00`;
}

/**
 * `HH:MM:SS` from start to finish; while it runs, the time so far (as the hosted API shows it); zero
 * before it has started.
 */
function duration(fromUs: number | null, toUs: number | null, started: boolean, nowUs: number): string {
  if (fromUs === null || (toUs === null && !started)) return '00:00:00';
  const s = Math.max(0, Math.floor(((toUs ?? nowUs) - fromUs) / 1e6));
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(Math.floor(s / 3600))}:${p(Math.floor(s / 60) % 60)}:${p(s % 60)}`;
}

export function jobView(j: Job): Record<string, unknown> {
  return {
    id: j.id, account_id: j.accountId, project_id: j.projectId, environment_id: j.environmentId, name: j.name,
    // Beyond the hosted fields: the names webhook payloads carry (projectName, environmentName).
    project_name: j.projectName, environment_name: j.environmentName,
    // state: 1 active, 2 deleted (as the hosted API)
    execute_steps: j.executeSteps, dbt_version: j.toolVersion || null, job_type: 'other', state: j.deletedAt ? 2 : 1,
    // A job changes only when it is deleted (the API has no job update), so that is its last update.
    created_at: v2Time(j.createdAt), updated_at: v2Time(j.deletedAt ?? j.createdAt),
  };
}

/** `nowUs`: the service's clock, for the duration of a run that has not finished. */
export function runView(r: Run, job: Job, nowUs: number, steps?: RunStep[]): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: r.id, trigger_id: r.id, account_id: r.accountId, environment_id: job.environmentId, project_id: job.projectId,
    job_definition_id: job.id, job_id: job.id, status: r.status, status_humanized: runStatusName(r.status),
    status_message: r.statusMessage, dbt_version: job.toolVersion || null, created_at: v2Time(r.createdAt), updated_at: v2Time(r.finishedAt ?? r.startedAt ?? r.createdAt),
    started_at: v2Time(r.startedAt), finished_at: v2Time(r.finishedAt), in_progress: r.status < 10, is_complete: r.status >= 10,
    is_success: r.status === 10, is_error: r.status === 20, is_cancelled: r.status === 30, duration: duration(r.startedAt ?? r.createdAt, r.finishedAt, r.startedAt !== null, nowUs),
    trigger: { id: r.id, cause: r.cause },
  };
  if (steps) v.run_steps = steps.map((s) => stepView(s, r.accountId, nowUs));
  return v;
}

function stepView(s: RunStep, accountId: number, nowUs: number): Record<string, unknown> {
  return {
    id: s.runId * 1000 + s.index, run_id: s.runId, account_id: accountId, index: s.index, name: s.name, status: s.status,
    status_humanized: runStatusName(s.status), exit_code: s.exitCode, logs: s.logs + telemetryNoteLines(s.telemetryNotes), started_at: v2Time(s.startedAt),
    finished_at: v2Time(s.finishedAt), duration: duration(s.startedAt, s.finishedAt, s.startedAt !== null, nowUs),
    // Beyond the hosted fields: which artifact this step's telemetry is stored as (null: none).
    telemetry_artifact: s.artifact,
    // and why each telemetry file it wrote was not stored ("FILE: why"), from the runner's record rather than the log
    telemetry_not_stored: telemetryNotStoredReasons(s.telemetryNotes),
  };
}

/**
 * The fields each resource's responses carry (read off the views themselves, so they cannot drift):
 * request checks accept them, because clients write back the whole object they read (Terraform: GET,
 * merge, PUT), computed fields included.
 */
const fieldsOf = (view: Record<string, unknown>): ReadonlySet<string> => new Set(Object.keys(view));
const sampleJob: Job = { id: 1, accountId: 1, name: '', projectId: 1, environmentId: 1, projectName: '', environmentName: '', toolVersion: '',
  executeSteps: [], createdAt: 0 };
const sampleRun: Run = { id: 1, accountId: 1, jobId: 1, status: 10, statusMessage: null, cause: '', createdAt: 0, startedAt: 0, finishedAt: 0, erroredAt: null };
export const SUBSCRIPTION_FIELDS = new Set([
  ...fieldsOf(subscriptionView({ id: '', accountId: 1, name: '', description: '', clientUrl: '', active: true, archived: false, deactivateReason: null,
    eventTypes: [], jobIds: [], hmacSecret: '', createdAt: 0, updatedAt: 0, dispatchedAt: 0, httpStatusCode: 0, consecutiveFailures: 0,
    failingSince: null }, true)),
  // the hosted schema's deprecated name for id, which the Terraform provider keeps
  'webhook_id',
]);
export const JOB_FIELDS = fieldsOf(jobView(sampleJob));
export const RUN_FIELDS = fieldsOf(runView(sampleRun, sampleJob, 0, []));
