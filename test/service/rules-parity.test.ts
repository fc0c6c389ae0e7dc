/**
 * The PostgreSQL store applies the subscription rules in SQL; the SQLite store applies
 * subscription-state.ts. Random sequences of attempts, in random batches, must leave both stores with
 * the same subscription state as folding applyAttempt over the sequence.
 */
import { describe, expect, it } from 'vitest';
import { applyAttempt } from '../../src/service/subscription-state.js';
import type { ArchivalPolicy, AttemptOutcome, Store, Subscription } from '../../src/service/store/types.js';
import { PG_URL, postgresFactory, sqliteFactory, type StoreFactory } from './helpers.js';

const policy: ArchivalPolicy = { maxConsecutiveFailures: 6, maxFailingMicros: 1_000_000 };

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

async function check(factory: StoreFactory, seed: number): Promise<boolean> {
  const db = await factory.fresh();
  const store: Store = await db.open();
  try {
    const rand = rng(seed);
    const acct = await store.createAccount('parity', 0);
    let sub: Subscription = { id: `wsu_parity${seed}`, accountId: acct.id, name: 'p', description: '', clientUrl: 'https://example.com', active: true,
      archived: false, deactivateReason: null, eventTypes: ['job.run.completed'], jobIds: [], hmacSecret: 's', createdAt: 0, updatedAt: 0,
      dispatchedAt: null, httpStatusCode: 0, consecutiveFailures: 0, failingSince: null };
    await store.insertSubscription(sub);
    let now = 1_000;
    let n = 0;
    for (let round = 0; round < 12; round++) {
      const batch: AttemptOutcome[] = [];
      const size = 1 + Math.floor(rand() * 6);
      for (let i = 0; i < size; i++) {
        now += Math.floor(rand() * 400_000);
        const test = rand() < 0.15;
        const success = rand() < (seed % 3 === 0 ? 0.5 : 0.1);
        const final = test || success || rand() < 0.5;
        const id = `wev_${seed}_${n++}`;
        if (test) {
          await store.insertTestEvent({ id, accountId: acct.id, subscriptionId: sub.id, jobId: null, eventType: 'test', payload: '{}',
            status: 'pending', attempts: 0, nextAttemptAt: now, httpStatusCode: 0, createdAt: now, test });
        } else {
          // a real outbox event (enqueued only while the subscription is not archived; afterwards the
          // attempt of an event enqueued earlier is what still arrives)
          const made = await store.enqueueEvent({ accountId: acct.id, jobId: 1, eventType: 'job.run.completed', now, newEventId: () => id,
            payloadFor: () => '{}' });
          if (!made.length) continue;
        }
        await store.beginAttempts([{ eventId: id, subscriptionId: sub.id, owner: 'o', receiptId: `wre_${id}`, attempt: 1, dispatchedAt: now,
          requestHeaders: {}, cutOffReceiptId: null }]);
        batch.push({ receipt: { id: `wre_${id}`, eventId: id, subscriptionId: sub.id, attempt: 1, dispatchedAt: now, httpStatusCode: success ? 200 : 500,
          errorInfo: null, requestHeaders: {}, responseBody: '', durationMs: 1 }, owner: 'o', success, nextAttemptAt: final ? null : now + 1, now });
      }
      if (!batch.length) continue;
      await store.recordAttempts(batch, policy);
      for (const o of batch) sub = applyAttempt(sub, o, policy, await isTest(store, acct.id, sub.id, o.receipt.eventId));
      const got = (await store.getSubscription(acct.id, sub.id))!;
      const pick = (s: Subscription) => ({ archived: s.archived, reason: s.deactivateReason, code: s.httpStatusCode, dispatchedAt: s.dispatchedAt,
        ...(s.archived ? {} : { consecutiveFailures: s.consecutiveFailures, failingSince: s.failingSince }) });
      expect(pick(got), `seed ${seed} round ${round}`).toEqual(pick(sub));
    }
    return sub.archived;
  } finally {
    await store.close();
    await db.cleanup();
  }
}

async function isTest(store: Store, accountId: number, subId: string, eventId: string): Promise<boolean> {
  return (await store.getEvent(accountId, subId, eventId))!.test;
}

describe('subscription rules: both stores agree with subscription-state.ts', () => {
  it('on SQLite', async () => {
    let archived = 0;
    for (let seed = 1; seed <= 15; seed++) archived += Number(await check(sqliteFactory, seed));
    // the sequences must reach archival (by count or by time) often, but not always
    expect(archived).toBeGreaterThan(2);
    expect(archived).toBeLessThan(15);
  });
  it.skipIf(!PG_URL)(`on PostgreSQL${PG_URL ? '' : ' (skipped: RUNLENS_TEST_DATABASE_URL not set)'}`, async () => {
    for (let seed = 1; seed <= 15; seed++) await check(postgresFactory, seed);
  });
});
