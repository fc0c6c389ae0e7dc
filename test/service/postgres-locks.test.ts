/**
 * PostgreSQL only: a request that meets a deadlock with the dispatcher (which locks an event, then its
 * subscription, while a PUT locks the subscription, then its events) is run again, not answered 500.
 * Needs RUNLENS_TEST_DATABASE_URL, as test/service/postgres.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresStore } from '../../src/service/store/postgres.js';
import { toMicros } from '../../src/service/clock.js';
import { eventId } from '../../src/service/ids.js';
import { PG_URL, createDatabase, startService } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const SUBS = '/api/v3/accounts/{acct}/webhooks/subscriptions';

if (!PG_URL && process.env.CI !== 'true') {
  console.warn('[runlens tests] SKIPPING the PostgreSQL lock tests: set RUNLENS_TEST_DATABASE_URL (eval "$(test/service/start-postgres.sh)")');
}

describe.skipIf(!PG_URL && process.env.CI !== 'true')('postgres: requests that meet a deadlock', () => {
  it('a PUT that makes a subscription inactive while an attempt outcome holds its event is answered 200 and cancels the event', async () => {
    if (!PG_URL) throw new Error('RUNLENS_TEST_DATABASE_URL is not set: start PostgreSQL with `eval "$(test/service/start-postgres.sh)"` before the tests');
    const db = await createDatabase(PG_URL);
    const dir = mkdtempSync(join(tmpdir(), 'runlens-pg-locks-'));
    const store = await PostgresStore.connect(db.url, 5);
    const h = await startService(store, { workDir: join(dir, 'runs'), pollMs: 60_000 });
    cleanups.push(async () => {
      await h.svc.close(false);
      await store.close();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    });
    await h.svc.dispatcher.stop(false);
    const created = await h.api('POST', SUBS, { name: 'hook', event_types: ['job.run.completed'], client_url: 'http://127.0.0.1:9/x', active: true });
    expect(created.status, created.text).toBe(201);
    const sub = created.json.data;
    const at = Date.now();
    const [ev] = await store.enqueueEvent({
      accountId: h.accountId, jobId: 1, eventType: 'job.run.completed', now: toMicros(at), newEventId: () => eventId(at),
      payloadFor: (s, id) => JSON.stringify({ accountId: s.accountId, webhookId: s.id, eventId: id, data: {} }),
    });

    // The dispatcher's order: the event's row, then its subscription's row.
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    cleanups.push(() => other.end());
    await other.query('BEGIN');
    await other.query('SELECT id FROM events WHERE id = $1 FOR UPDATE', [ev!.id]);
    const put = h.api('PUT', `/api/v3/accounts/{acct}/webhooks/subscription/${sub.id}`, { active: false });
    await new Promise((r) => setTimeout(r, 300)); // the PUT now holds the subscription and waits for the event
    const second = other.query('SELECT id FROM subscriptions WHERE id = $1 FOR UPDATE', [sub.id]).then(() => 'locked', (e: { code?: string }) => e.code);
    const secondOutcome = await second; // PostgreSQL breaks the cycle after deadlock_timeout
    await other.query(secondOutcome === 'locked' ? 'COMMIT' : 'ROLLBACK');

    const res = await put;
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.active).toBe(false);
    expect((await store.getEvent(h.accountId, sub.id, ev!.id))!.status).toBe('cancelled');
  }, 30_000);
});
