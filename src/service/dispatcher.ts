/**
 * Outbox dispatcher: claims due deliveries from the store, counts and logs each attempt before its
 * request is sent (so an attempt cut off by a crash still counts toward the 5), sends it through the
 * Sender and records its outcome (receipt, retry time, subscription state) in one store transaction.
 * Claims are leases, so deliveries held by a process that died are picked up again once the lease
 * runs out (or at once, for the embedded store, when the next process starts).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from './clock.js';
import { toMicros } from './clock.js';
import { receiptId } from './ids.js';
import { deliveryHeaders, Sender, type DeliveryResult } from './deliver.js';
import type { ArchivalPolicy, AttemptOutcome, AttemptStart, ClaimedDelivery, DeliveryEvent, Store } from './store/types.js';
import { CUT_OFF_ERROR } from './store/types.js';

export const MAX_ATTEMPTS = 5;
export const DEFAULT_RETRY_DELAYS_S = [10, 60, 300, 1800];
export const LOG_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** The outcome recorded for an attempt whose process stopped before it was answered. */
const CUT_OFF_RESULT: DeliveryResult = { httpStatusCode: 0, success: false, errorInfo: CUT_OFF_ERROR, responseBody: '', durationMs: 0 };

export interface DispatcherOptions {
  store: Store;
  clock: Clock;
  /** delays before attempts 2..5, milliseconds */
  retryDelaysMs: number[];
  timeoutMs: number;
  allowPrivateTargets: boolean;
  archival: ArchivalPolicy;
  /** deliveries in flight at once */
  concurrency?: number;
  /** how often to look for due work when nothing woke the dispatcher (other processes, retries) */
  pollMs?: number;
  /** how long past the delivery timeout a claim stays with this process before others may retake it */
  leaseMarginMs?: number;
  /** +/- fraction applied to retry delays so a failing endpoint's retries do not arrive in lockstep */
  jitter?: number;
}

export class Dispatcher {
  readonly owner = randomUUID();
  private readonly sender: Sender;
  private inFlight = 0;
  /** deliveries of each subscription in flight in this process */
  private readonly inFlightBySubscription = new Map<string, number>();
  private readonly inFlightDone = new Set<Promise<void>>();
  private pumping = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private kickQueued = false;
  private flushing = false;
  private toRecord: { outcome: AttemptOutcome; done: (e?: unknown) => void }[] = [];
  private recording = true;
  private lastPrune = -Infinity;
  private lastStrandedCheck = -Infinity;

  constructor(private readonly o: DispatcherOptions) {
    this.sender = new Sender({ timeoutMs: o.timeoutMs, allowPrivateTargets: o.allowPrivateTargets, connectionsPerOrigin: this.concurrency });
  }

  private get concurrency(): number {
    return this.o.concurrency ?? 64;
  }

  /** One subscription's share of the slots: an endpoint that hangs with a backlog leaves the others half. */
  private get perSubscription(): number {
    return Math.max(1, Math.floor(this.concurrency / 2));
  }

  /** Subscriptions with their share in flight: claims and due-time look-ups pass over their deliveries. */
  private fullSubscriptions(): string[] {
    return [...this.inFlightBySubscription].filter(([, n]) => n >= this.perSubscription).map(([id]) => id);
  }

  /**
   * Splits a claim into what fits each subscription's share and the rest, which is released at once:
   * the next claim skips the subscriptions now full and reaches the others' deliveries.
   */
  private share(claimed: ClaimedDelivery[]): { keep: ClaimedDelivery[]; release: string[] } {
    const taken = new Map(this.inFlightBySubscription);
    const keep: ClaimedDelivery[] = [];
    const release: string[] = [];
    for (const c of claimed) {
      const n = taken.get(c.event.subscriptionId) ?? 0;
      if (n >= this.perSubscription) {
        release.push(c.event.id);
        continue;
      }
      taken.set(c.event.subscriptionId, n + 1);
      keep.push(c);
    }
    return { keep, release };
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.o.store.watch?.(() => this.kick());
    // On the embedded store no other process can be in the middle of a test attempt at start-up.
    await this.prune(this.o.store.exclusive);
    this.kick();
  }

  /**
   * Look for due work (called after an event is enqueued, an attempt finished or the clock moved).
   * Kicks in the same tick collapse into one claim, so claims are batched under load.
   */
  kick(): void {
    if (this.stopped || this.kickQueued) return;
    this.kickQueued = true;
    setImmediate(() => {
      this.kickQueued = false;
      this.pumpNow();
    });
  }

  private pumpNow(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      do {
        this.again = false;
        const room = this.concurrency - this.inFlight;
        if (room <= 0) break;
        const now = toMicros(this.o.clock.now());
        const lease = now + toMicros(this.o.timeoutMs + (this.o.leaseMarginMs ?? 30_000));
        const claimed = await this.o.store.claimDue(now, room, lease, this.owner, this.fullSubscriptions());
        const { keep, release } = this.share(claimed);
        if (release.length) await this.o.store.releaseClaims(this.owner, release);
        await this.begin(keep);
        // A full claim may have left due deliveries; what it released is skipped by the next one.
        if (claimed.length === room) this.again = true;
      } while (this.again && !this.stopped);
    } catch (e) {
      if (!this.stopped) process.emitWarning(`runlens dispatcher: ${(e as Error).message}`);
    } finally {
      this.pumping = false;
    }
    await this.schedule();
  }

  private async schedule(): Promise<void> {
    if (this.stopped) return;
    clearTimeout(this.timer);
    let wait = this.o.pollMs ?? 1000;
    try {
      // Deliveries this process has no slot for (every slot taken, or their subscription's share)
      // wait for an attempt to end, which kicks: a due time is no reason to look sooner.
      if (this.inFlight < this.concurrency) {
        const due = await this.o.store.nextDueAt(this.fullSubscriptions());
        if (due !== null) wait = Math.min(wait, Math.max(0, (due - toMicros(this.o.clock.now())) / 1000));
      }
      if (this.o.clock.now() - this.lastPrune > 3600_000) void this.prune();
      else if (this.o.clock.now() - this.lastStrandedCheck >= (this.o.pollMs ?? 1000)) await this.failStrandedTests();
    } catch {
      /* store closing; the poll below retries */
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => this.kick(), Math.max(1, Math.ceil(wait)));
    this.timer.unref?.();
  }

  /**
   * Starts the claimed deliveries: each attempt is counted and logged (no answer yet) in one store
   * transaction before any request leaves. A delivery whose last attempt was cut off has none left
   * to make: that attempt is recorded as its failed last one.
   */
  private async begin(claimed: ClaimedDelivery[]): Promise<void> {
    const nowMs = this.o.clock.now();
    const starts: { c: ClaimedDelivery; start: AttemptStart }[] = [];
    for (const c of claimed) {
      if (c.event.attempts >= MAX_ATTEMPTS) {
        void this.record(c.event, c.event.attempts, c.cutOffReceiptId ?? receiptId(nowMs), toMicros(nowMs), {}, CUT_OFF_RESULT, null).catch((e) => {
          if (!this.stopped) process.emitWarning(`runlens dispatcher: ${(e as Error).message}`);
        });
        continue;
      }
      starts.push({ c, start: this.attemptStart(c.event, c.event.attempts + 1, c.hmacSecret, c.cutOffReceiptId, nowMs) });
    }
    if (!starts.length) return;
    const begun = new Set(await this.o.store.beginAttempts(starts.map((s) => s.start)));
    for (const { c, start } of starts) if (begun.has(start.eventId)) this.launch(c, start);
  }

  private attemptStart(event: DeliveryEvent, attempt: number, secret: string, cutOffReceiptId: string | null, nowMs: number): AttemptStart {
    return {
      eventId: event.id, subscriptionId: event.subscriptionId, owner: this.owner, receiptId: receiptId(nowMs), attempt,
      dispatchedAt: toMicros(nowMs), requestHeaders: deliveryHeaders(event.id, event.payload, secret, nowMs), cutOffReceiptId,
    };
  }

  private launch(c: ClaimedDelivery, start: AttemptStart): void {
    const sub = c.event.subscriptionId;
    this.inFlight++;
    this.inFlightBySubscription.set(sub, (this.inFlightBySubscription.get(sub) ?? 0) + 1);
    const p = this.deliver(c, start)
      .catch((e) => {
        if (!this.stopped) process.emitWarning(`runlens dispatcher: ${(e as Error).message}`);
      })
      .finally(() => {
        this.inFlight--;
        const n = this.inFlightBySubscription.get(sub)! - 1;
        if (n) this.inFlightBySubscription.set(sub, n);
        else this.inFlightBySubscription.delete(sub);
        this.inFlightDone.delete(p);
        this.kick();
      });
    this.inFlightDone.add(p);
  }

  private async deliver(c: ClaimedDelivery, start: AttemptStart): Promise<void> {
    const result = await this.sender.send(c.clientUrl, c.event.payload, start.requestHeaders);
    if (!this.recording) return; // crashed: the attempt stays in the log without an answer, and its lease decides what happens next
    const last = result.success || start.attempt >= MAX_ATTEMPTS;
    const nextAttemptAt = last ? null : toMicros(this.o.clock.now() + this.delayBefore(start.attempt + 1));
    await this.record(c.event, start.attempt, start.receiptId, start.dispatchedAt, start.requestHeaders, result, nextAttemptAt);
  }

  private delayBefore(attempt: number): number {
    const d = this.o.retryDelaysMs;
    const base = d[Math.min(attempt - 2, d.length - 1)] ?? 0;
    const j = this.o.jitter ?? 0;
    return Math.max(0, base * (1 + j * (Math.random() * 2 - 1)));
  }

  private record(event: DeliveryEvent, attempt: number, id: string, dispatchedAt: number, requestHeaders: Record<string, string>,
    r: DeliveryResult, nextAttemptAt: number | null): Promise<void> {
    const now = toMicros(this.o.clock.now());
    return this.queueRecord({
      receipt: {
        id, eventId: event.id, subscriptionId: event.subscriptionId, attempt, dispatchedAt, httpStatusCode: r.httpStatusCode,
        errorInfo: r.errorInfo, requestHeaders, responseBody: r.responseBody, durationMs: r.durationMs,
      },
      owner: this.owner,
      success: r.success,
      nextAttemptAt,
      now,
    });
  }

  /**
   * Attempts are written in batches, one transaction at a time per dispatcher: what finishes while a
   * batch is being written goes into the next one. Fewer, larger transactions (and fewer waits on a
   * busy subscription row) than one per attempt.
   */
  private queueRecord(outcome: AttemptOutcome): Promise<void> {
    return new Promise((resolve, reject) => {
      this.toRecord.push({ outcome, done: (e) => (e ? reject(e) : resolve()) });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.toRecord.length) {
      const batch = this.toRecord;
      this.toRecord = [];
      try {
        await this.o.store.recordAttempts(batch.map((b) => b.outcome), this.o.archival);
        batch.forEach((b) => b.done());
      } catch (e) {
        batch.forEach((b) => b.done(e));
      }
    }
    this.flushing = false;
  }

  /** The test operation: one attempt now, logged like any delivery, never retried. */
  async sendTest(event: DeliveryEvent, clientUrl: string, secret: string): Promise<DeliveryResult> {
    await this.o.store.insertTestEvent(event);
    const start = this.attemptStart(event, 1, secret, null, this.o.clock.now());
    await this.o.store.beginAttempts([start]);
    const result = await this.sender.send(clientUrl, event.payload, start.requestHeaders);
    await this.record(event, 1, start.receiptId, start.dispatchedAt, start.requestHeaders, result, null);
    return result;
  }

  /** Drops delivery-log entries older than 7 days (by the injected clock), after ending stranded test events. */
  async prune(allTests = false): Promise<number> {
    const now = this.o.clock.now();
    this.lastPrune = now;
    await this.failStrandedTests(allTests);
    return this.o.store.prune(toMicros(now - LOG_RETENTION_MS));
  }

  /**
   * Ends as failed the test events a stopped process left pending (`allTests`: every pending one; else
   * those older than an attempt and its lease margin can take). Also run on each poll, so one ends
   * soon after it is due rather than at the next hourly prune.
   */
  private async failStrandedTests(allTests = false): Promise<void> {
    const now = this.o.clock.now();
    this.lastStrandedCheck = now;
    await this.o.store.failStrandedTests(toMicros(allTests ? now + 1 : now - this.o.timeoutMs - (this.o.leaseMarginMs ?? 30_000)));
  }

  /** Waits until nothing is in flight (tests and graceful shutdown). */
  async idle(): Promise<void> {
    while (this.inFlightDone.size) await Promise.allSettled([...this.inFlightDone]);
  }

  /**
   * Stops claiming. Graceful: waits for attempts in flight and records them. Not graceful (a simulated
   * crash in tests): in-flight outcomes are dropped, so their leases decide what happens next.
   */
  async stop(graceful = true): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (graceful) {
      this.recording = true;
      await this.idle();
    } else {
      this.recording = false;
    }
    await this.sender.close().catch(() => undefined);
  }
}
