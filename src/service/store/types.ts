/**
 * The storage contract of the service. Every method is async so a PostgreSQL implementation (several
 * `serve` processes sharing one database) can sit behind the same interface as the embedded SQLite one.
 * All times are epoch microseconds (integers).
 */
import type { TelemetryNote } from '../telemetry-note.js';

export const EVENT_TYPES = ['job.run.started', 'job.run.completed', 'job.run.errored'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface Account {
  id: number;
  name: string;
  identifier: string;
  createdAt: number;
}

export interface TokenRecord {
  id: number;
  accountId: number;
  permissionSet: string;
  name: string;
}

/** A token as `runlens tokens list` shows it: never the token itself (only its hash is stored). */
export interface TokenInfo extends TokenRecord {
  createdAt: number;
}

export interface Subscription {
  id: string;
  accountId: number;
  name: string;
  description: string;
  clientUrl: string;
  active: boolean;
  archived: boolean;
  deactivateReason: string | null;
  eventTypes: EventType[];
  jobIds: number[];
  hmacSecret: string;
  createdAt: number;
  updatedAt: number;
  dispatchedAt: number | null;
  httpStatusCode: number;
  consecutiveFailures: number;
  failingSince: number | null;
}

export interface Job {
  id: number;
  accountId: number;
  name: string;
  projectId: number;
  environmentId: number;
  projectName: string;
  environmentName: string;
  toolVersion: string;
  executeSteps: string[];
  createdAt: number;
  /** set by DELETE: the job is gone from listings and cannot run; its runs stay readable */
  deletedAt?: number | null;
}

/** Run status codes of the v2 API: 1 Queued, 2 Starting, 3 Running, 10 Success, 20 Error, 30 Cancelled. */
export interface Run {
  id: number;
  accountId: number;
  jobId: number;
  status: number;
  statusMessage: string | null;
  cause: string;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  erroredAt: number | null;
}

export interface RunStep {
  runId: number;
  index: number;
  name: string;
  status: number;
  exitCode: number | null;
  logs: string;
  startedAt: number | null;
  finishedAt: number | null;
  artifact: string | null;
  /** its telemetry files not stored (yet): the runner's own record, apart from what the step printed */
  telemetryNotes: TelemetryNote[];
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

/** One event sent to one subscription (the hosted API's `Event`): the outbox row. */
export interface DeliveryEvent {
  id: string;
  accountId: number;
  subscriptionId: string;
  jobId: number | null;
  eventType: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  httpStatusCode: number;
  createdAt: number;
  test: boolean;
}

/** What the dispatcher needs to send one claimed delivery. */
export interface ClaimedDelivery {
  event: DeliveryEvent;
  clientUrl: string;
  hmacSecret: string;
  /** the receipt of this event's last attempt when that attempt never got an outcome (a process stopped during it) */
  cutOffReceiptId: string | null;
}

/**
 * One attempt about to be sent. It is counted and written to the delivery log (as an attempt with no
 * answer yet) before its request leaves, so an attempt cut off by a crash still counts.
 */
export interface AttemptStart {
  eventId: string;
  subscriptionId: string;
  /** the dispatcher holding the claim */
  owner: string;
  receiptId: string;
  attempt: number;
  dispatchedAt: number;
  requestHeaders: Record<string, string>;
  /** an earlier attempt of the same event left without an outcome, recorded now as cut off */
  cutOffReceiptId: string | null;
}

/** error_info of an attempt whose process stopped before it got an answer (kill -9, power loss). */
export const CUT_OFF_ERROR = 'no answer recorded: the service stopped during this attempt (cut off)';
/** error_info shown for an attempt still waiting for its answer. */
export const IN_FLIGHT_ERROR = 'no answer yet: the attempt is in progress';

/** One attempt. It has no outcome yet (in flight, or cut off) while its http_status_code is 0 and error_info null. */
export interface Receipt {
  id: string;
  eventId: string;
  subscriptionId: string;
  attempt: number;
  dispatchedAt: number;
  httpStatusCode: number;
  errorInfo: string | null;
  requestHeaders: Record<string, string>;
  responseBody: string;
  durationMs: number;
}

export interface AttemptOutcome {
  receipt: Receipt;
  /** the dispatcher that held the claim: a late outcome from a lease that was retaken does not move the event */
  owner: string;
  success: boolean;
  /** when the delivery should be tried again; null when this attempt was the last */
  nextAttemptAt: number | null;
  now: number;
}

export interface ArchivalPolicy {
  maxConsecutiveFailures: number;
  maxFailingMicros: number;
}

export interface NewEvent {
  accountId: number;
  jobId: number;
  eventType: EventType;
  now: number;
  /** builds the exact body for one subscription; called inside the transaction */
  payloadFor(sub: Subscription, eventId: string): string;
  newEventId(): string;
}

/** Which process runs a run, and until when it must renew its hold before others may close the run. */
export interface RunLease {
  owner: string;
  until: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** the store is this process's alone (embedded): leases and unfinished runs left at start-up are stale */
  readonly exclusive: boolean;
  /**
   * Before `serve` starts on an exclusive store: make it this process's, or throw a UsageError when
   * another serve holds it (its start-up would take over that one's runs and deliveries).
   */
  claimForServe(): Promise<void>;
  close(): Promise<void>;

  createAccount(name: string, now: number): Promise<Account>;
  getAccount(id: number): Promise<Account | null>;
  createToken(t: { accountId: number; permissionSet: string; name: string; tokenHash: string; now: number }): Promise<TokenRecord>;
  findToken(tokenHash: string): Promise<TokenRecord | null>;
  listAccounts(): Promise<Account[]>;
  /** every token of one account (or of all accounts), oldest first */
  listTokens(accountId?: number): Promise<TokenInfo[]>;
  /** deletes the token, so it no longer authenticates; null when there is no such token */
  revokeToken(id: number): Promise<TokenInfo | null>;
  /** jobs not deleted, by id */
  listJobs(accountId: number, offset: number, limit: number): Promise<Page<Job>>;
  /** marks the job deleted; null when there is no such job or it was already deleted */
  deleteJob(accountId: number, id: number, now: number): Promise<Job | null>;
  listRuns(accountId: number, q: { jobId?: number; offset: number; limit: number; newestFirst: boolean }): Promise<Page<Run>>;
  /** one event of the delivery log by its id alone (its subscription is in it) */
  findEvent(accountId: number, eventId: string): Promise<DeliveryEvent | null>;

  listSubscriptions(accountId: number, offset: number, limit: number): Promise<Page<Subscription>>;
  getSubscription(accountId: number, id: string): Promise<Subscription | null>;
  insertSubscription(s: Subscription): Promise<void>;
  /**
   * Change a subscription atomically: `change` gets the row as it is now (a delivery outcome recorded
   * a moment ago included) and returns the row to write; null when there is no such subscription.
   */
  updateSubscription(accountId: number, id: string, change: (current: Subscription) => Subscription): Promise<Subscription | null>;
  /** Deletes the subscription and its delivery log (events, pending ones included, and receipts). */
  deleteSubscription(accountId: number, id: string): Promise<boolean>;

  createJob(j: Omit<Job, 'id'>): Promise<Job>;
  getJob(accountId: number, id: number): Promise<Job | null>;
  /**
   * Creates a run held by `lease.owner` and enqueues the events `emit` builds for it (its
   * job.run.started), in one transaction: a run exists with its first event or not at all.
   */
  createRun(r: Omit<Run, 'id'>, lease: RunLease, emit: (run: Run) => NewEvent[]): Promise<Run>;
  getRun(accountId: number, id: number): Promise<Run | null>;
  /**
   * Writes a run's state and enqueues its events in one transaction, only while `owner` still holds
   * the run and it has not finished; false otherwise (another process closed the run as abandoned, or
   * it was closed already): nothing is written, so a run's completion is sent once.
   */
  updateRun(r: Run, owner: string, events: NewEvent[]): Promise<boolean>;
  /**
   * Extends the lease of the unfinished runs among `runIds` that `owner` holds (the runs it is carrying
   * out: a run it holds but no longer carries out must be left to run out, so another process closes it).
   */
  renewRunLeases(owner: string, runIds: number[], until: number): Promise<void>;
  /**
   * Takes over unfinished runs whose lease ran out before `now` (every unfinished run when `now` is
   * null: the embedded store at start-up, when no other process can hold one), for `lease`.
   */
  claimAbandonedRuns(now: number | null, lease: RunLease): Promise<Run[]>;
  /**
   * Writes a step row, and putArtifact a step's artifact, under the same condition as updateRun: only
   * while `owner` still holds the run and it has not finished; false otherwise, and nothing is written
   * (a process whose lease ran out must not contradict the run another process closed).
   */
  saveRunStep(s: RunStep, owner: string): Promise<boolean>;
  listRunSteps(runId: number): Promise<RunStep[]>;
  putArtifact(runId: number, step: number, name: string, bytes: Buffer, now: number, owner: string): Promise<boolean>;
  getArtifact(accountId: number, runId: number, name: string): Promise<Buffer | null>;

  /** The outbox write: the event for every matching subscription, committed in one transaction. */
  enqueueEvent(e: NewEvent): Promise<DeliveryEvent[]>;
  /** A test delivery: logged like any event, sent once, never retried. */
  insertTestEvent(e: DeliveryEvent): Promise<void>;
  /**
   * Claims due pending deliveries of active subscriptions until `leaseUntil`, oldest due first,
   * leaving those of the subscriptions in `skip` (the dispatcher's: those with their share in flight).
   */
  claimDue(now: number, limit: number, leaseUntil: number, owner: string, skip?: readonly string[]): Promise<ClaimedDelivery[]>;
  /**
   * Counts the attempts and logs each with no answer yet, in one transaction, before their requests
   * are sent; an attempt an earlier process left without an outcome is recorded as cut off. Returns
   * the events whose attempt began (those whose claim this dispatcher still holds).
   */
  beginAttempts(starts: AttemptStart[]): Promise<string[]>;
  /** Soonest next_attempt_at of a pending delivery not claimed, outside the subscriptions in `skip` (null when none). */
  nextDueAt(skip?: readonly string[]): Promise<number | null>;
  /**
   * Records the outcomes of attempts, in order, in one transaction: each one's receipt (the row
   * beginAttempts wrote), event state and subscription state (archival). The dispatcher batches the
   * attempts that finished in the same tick.
   */
  recordAttempts(outcomes: AttemptOutcome[], policy: ArchivalPolicy): Promise<void>;
  /** Calls `fn` when another process (or this one) enqueued deliveries; optional (polling covers it). */
  watch?(fn: () => void): Promise<void>;
  /**
   * Releases leases held by processes that are gone (embedded store: all of them at start-up); the
   * attempts they left without an outcome are recorded as cut off when their events are claimed again.
   * With `eventIds`: only those of `owner`'s claims (ones it took but will not start now), due again
   * at once, their status and attempts as they were.
   */
  releaseClaims(owner?: string, eventIds?: readonly string[]): Promise<number>;

  listEvents(accountId: number, subscriptionId: string, offset: number, limit: number): Promise<Page<DeliveryEvent>>;
  getEvent(accountId: number, subscriptionId: string, eventId: string): Promise<DeliveryEvent | null>;
  listReceipts(eventId: string): Promise<Receipt[]>;
  /** Drops finished events and receipts older than `before`; returns how many events went. */
  prune(before: number): Promise<number>;
  /**
   * Test events still pending that were created before `before` end as failed: a test attempt runs
   * inside its request, so one pending that long was cut off (its process stopped) and its log shows
   * it so. Returns how many.
   */
  failStrandedTests(before: number): Promise<number>;
}
