/**
 * Subscription state rules: how one delivery attempt changes the failure streak (SQLite applies this
 * function; the PostgreSQL store applies the same rules in one SQL statement, see RECORD_ATTEMPTS_SQL,
 * and the shared suite holds both to them),
 * when a subscription is archived, and what reactivates it.
 */
import { createHash } from 'node:crypto';
import type { ArchivalPolicy, AttemptOutcome, Subscription } from './store/types.js';

export const DEFAULT_ARCHIVAL: ArchivalPolicy = {
  maxConsecutiveFailures: 1000,
  maxFailingMicros: 7 * 24 * 3600 * 1_000_000,
};

/**
 * A delivery counts as failed once its last attempt failed; any successful attempt ends the streak.
 * A failed attempt that will be retried is not (yet) a failed delivery: it neither extends the streak
 * nor archives. The 7-day rule measures from the first failed delivery of the unbroken streak.
 */
export function applyAttempt(sub: Subscription, o: AttemptOutcome, policy: ArchivalPolicy, test: boolean): Subscription {
  const next: Subscription = { ...sub, httpStatusCode: o.receipt.httpStatusCode, dispatchedAt: o.receipt.dispatchedAt };
  if (test) return next; // a test delivery reports the endpoint's state but does not move the streak
  if (o.success) return { ...next, consecutiveFailures: 0, failingSince: null };
  if (o.nextAttemptAt !== null) return next;
  next.failingSince = sub.failingSince ?? o.receipt.dispatchedAt;
  next.consecutiveFailures = sub.consecutiveFailures + 1;
  if (!next.archived) {
    if (next.consecutiveFailures >= policy.maxConsecutiveFailures) {
      next.archived = true;
      next.deactivateReason = `archived after ${next.consecutiveFailures} consecutive failed deliveries`;
    } else if (o.now - next.failingSince >= policy.maxFailingMicros) {
      next.archived = true;
      next.deactivateReason = `archived after ${Math.floor((o.now - next.failingSince) / 86_400_000_000)} days of failed deliveries`;
    }
  }
  return next;
}

/**
 * The `active` value an update leaves. PUT with active true, or a new client_url on an inactive or
 * archived subscription, makes it active again (the hosted service's side effect of a URL change).
 * A new URL on an active subscription keeps what the body asks (the real client's "active false" step).
 */
export function activeAfterUpdate(sub: Subscription, body: { active?: boolean; client_url?: string }): boolean {
  const urlChanged = body.client_url !== undefined && body.client_url !== sub.clientUrl;
  const wasActive = sub.active && !sub.archived;
  if (body.active === true) return true;
  if (urlChanged && !wasActive) return true;
  return body.active ?? wasActive;
}

/**
 * The subscription's ETag: it changes when what an update sets or decides changes (settings, active,
 * archived), not with each delivery, so that a client's read-merge-write (`If-Match`) is refused
 * only when it would write over someone else's change.
 */
export function subscriptionEtag(s: Subscription): string {
  const state = [s.name, s.description, s.clientUrl, s.eventTypes, s.jobIds, s.active, s.archived];
  return `"${createHash('sha256').update(JSON.stringify(state)).digest('hex').slice(0, 32)}"`;
}

/** Whether an If-Match header (a list of tags, or `*`) names this tag. */
export function ifMatchHolds(header: string, etag: string): boolean {
  return header.split(',').some((t) => t.trim() === '*' || t.trim() === etag);
}
