/** Row <-> object mapping shared by the SQL stores (column names are the same in both schemas). */
import type { Account, DeliveryEvent, Job, Receipt, Run, RunStep, Subscription, EventType, TokenInfo } from './types.js';
import type { TelemetryNote } from '../telemetry-note.js';

type Row = Record<string, unknown>;
const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export const subscriptionFromRow = (r: Row): Subscription => ({
  id: String(r.id),
  accountId: num(r.account_id),
  name: String(r.name),
  description: String(r.description),
  clientUrl: String(r.client_url),
  active: Boolean(r.active),
  archived: Boolean(r.archived),
  deactivateReason: (r.deactivate_reason as string | null) ?? null,
  eventTypes: JSON.parse(String(r.event_types)) as EventType[],
  jobIds: JSON.parse(String(r.job_ids)) as number[],
  hmacSecret: String(r.hmac_secret),
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at),
  dispatchedAt: numOrNull(r.dispatched_at),
  httpStatusCode: num(r.http_status_code),
  consecutiveFailures: num(r.consecutive_failures),
  failingSince: numOrNull(r.failing_since),
});

export const jobFromRow = (r: Row): Job => ({
  id: num(r.id),
  accountId: num(r.account_id),
  name: String(r.name),
  projectId: num(r.project_id),
  environmentId: num(r.environment_id),
  projectName: String(r.project_name),
  environmentName: String(r.environment_name),
  toolVersion: String(r.tool_version),
  executeSteps: JSON.parse(String(r.execute_steps)) as string[],
  createdAt: num(r.created_at),
  deletedAt: numOrNull(r.deleted_at),
});

export const tokenFromRow = (r: Row): TokenInfo => ({
  id: num(r.id),
  accountId: num(r.account_id),
  permissionSet: String(r.permission_set),
  name: String(r.name),
  createdAt: num(r.created_at),
});

export const accountFromRow = (r: Row): Account => ({ id: num(r.id), name: String(r.name), identifier: String(r.identifier), createdAt: num(r.created_at) });

export const runFromRow = (r: Row): Run => ({
  id: num(r.id),
  accountId: num(r.account_id),
  jobId: num(r.job_id),
  status: num(r.status),
  statusMessage: (r.status_message as string | null) ?? null,
  cause: String(r.cause),
  createdAt: num(r.created_at),
  startedAt: numOrNull(r.started_at),
  finishedAt: numOrNull(r.finished_at),
  erroredAt: numOrNull(r.errored_at),
});

export const stepFromRow = (r: Row): RunStep => ({
  runId: num(r.run_id),
  index: num(r.idx),
  name: String(r.name),
  status: num(r.status),
  exitCode: numOrNull(r.exit_code),
  logs: String(r.logs),
  startedAt: numOrNull(r.started_at),
  finishedAt: numOrNull(r.finished_at),
  artifact: (r.artifact as string | null) ?? null,
  telemetryNotes: JSON.parse(String(r.telemetry_notes)) as TelemetryNote[],
});

export const eventFromRow = (r: Row): DeliveryEvent => ({
  id: String(r.id),
  accountId: num(r.account_id),
  subscriptionId: String(r.subscription_id),
  jobId: numOrNull(r.job_id),
  eventType: String(r.event_type),
  payload: String(r.payload),
  status: r.status as DeliveryEvent['status'],
  attempts: num(r.attempts),
  nextAttemptAt: num(r.next_attempt_at),
  httpStatusCode: num(r.http_status_code),
  createdAt: num(r.created_at),
  test: Boolean(r.test),
});

export const receiptFromRow = (r: Row): Receipt => ({
  id: String(r.id),
  eventId: String(r.event_id),
  subscriptionId: String(r.subscription_id),
  attempt: num(r.attempt),
  dispatchedAt: num(r.dispatched_at),
  httpStatusCode: num(r.http_status_code),
  errorInfo: (r.error_info as string | null) ?? null,
  requestHeaders: JSON.parse(String(r.request_headers)) as Record<string, string>,
  responseBody: String(r.response_body),
  durationMs: num(r.duration_ms),
});

/** Does a subscription want this event of this job? (empty job_ids = every job of the account) */
export const subscriptionMatches = (s: Subscription, eventType: EventType, jobId: number): boolean =>
  s.active && !s.archived && s.eventTypes.includes(eventType) && (s.jobIds.length === 0 || s.jobIds.includes(jobId));
