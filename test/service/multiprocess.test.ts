/**
 * Scale-out on PostgreSQL: three `serve` processes on one database share 10,000 deliveries to a loopback
 * receiver; one is killed with SIGKILL in the middle. Every delivery arrives; duplicates (only the killed
 * process's attempts in flight) are counted and reported; no event goes over 5 attempts.
 * Needs the built CLI and RUNLENS_TEST_DATABASE_URL (fails loudly in CI without it, skips elsewhere).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresStore } from '../../src/service/store/postgres.js';
import { eventId } from '../../src/service/ids.js';
import { toMicros } from '../../src/service/clock.js';
import { createDatabase, PG_URL, startReceiver, until } from './helpers.js';
import { CLI } from '../helpers/cli.js';

const children: ChildProcess[] = [];

function serve(url: string, data: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--database-url', url, '--data', data, '--allow-private-targets',
    '--delivery-timeout', '2', '--claim-lease', '5', '--retry-delays', '0.05'], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  return new Promise((res, rej) => {
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      if (err.includes('listening on')) res(child);
    });
    child.on('exit', (code) => rej(new Error(`serve exited ${code}: ${err}`)));
  });
}

const run = PG_URL ? describe : process.env.CI === 'true' ? describe : describe.skip;

run('three serve processes on one PostgreSQL database', () => {
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  it('deliver 10,000 events with one process killed mid-way: none lost, duplicates only from the killed one, none over 5 attempts', async () => {
    if (!PG_URL) throw new Error('RUNLENS_TEST_DATABASE_URL is not set: start PostgreSQL with `eval "$(test/service/start-postgres.sh)"`');
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npx tsc -p tsconfig.build.json\` first`);
    const db = await createDatabase(PG_URL);
    const dir = mkdtempSync(join(tmpdir(), 'runlens-mp-'));
    const rx = await startReceiver();
    const store = await PostgresStore.connect(db.url, 8);
    try {
      const acct = await store.createAccount('scale', toMicros(Date.now()));
      const now = toMicros(Date.now());
      await store.insertSubscription({ id: 'wsu_scale', accountId: acct.id, name: 'scale', description: '', clientUrl: `${rx.url}/ok`, active: true,
        archived: false, deactivateReason: null, eventTypes: ['job.run.completed'], jobIds: [], hmacSecret: 'scale-secret', createdAt: now, updatedAt: now,
        dispatchedAt: null, httpStatusCode: 0, consecutiveFailures: 0, failingSince: null });
      rx.secrets.set('wsu_scale', 'scale-secret');

      const procs = await Promise.all([0, 1, 2].map((i) => serve(db.url, join(dir, String(i)))));
      const total = 10_000;
      let enqueued = 0;
      const enqueue = async () => {
        while (enqueued < total) {
          enqueued++;
          const at = Date.now();
          await store.enqueueEvent({ accountId: acct.id, jobId: 1, eventType: 'job.run.completed', now: toMicros(at), newEventId: () => eventId(at),
            payloadFor: (s, id) => JSON.stringify({ accountId: s.accountId, webhookId: s.id, eventId: id, eventType: 'job.run.completed' }) });
        }
      };
      const filling = Promise.all(Array.from({ length: 6 }, enqueue));
      await rx.waitFor((d) => d.length >= 3000, '3,000 deliveries', 300_000);
      procs[1]!.kill('SIGKILL');
      await filling;

      const unique = () => new Set(rx.deliveries.map((d) => d.json.eventId)).size;
      await rx.waitFor(() => unique() === total, `all ${total} events`, 300_000);
      await until(async () => Number((await store.pool.query(`SELECT count(*) AS n FROM events WHERE status <> 'succeeded'`)).rows[0].n) === 0, 'every event succeeded', 6000);

      const perEvent = new Map<string, number>();
      for (const d of rx.deliveries) perEvent.set(d.json.eventId, (perEvent.get(d.json.eventId) ?? 0) + 1);
      const duplicates = rx.deliveries.length - total;
      console.log(`[multiprocess] ${total} events, ${rx.deliveries.length} requests, ${duplicates} duplicates (in flight in the killed process)`);
      expect(rx.deliveries.every((d) => d.verified)).toBe(true);
      expect(Math.max(...perEvent.values())).toBeLessThanOrEqual(5);
      expect(duplicates).toBeLessThanOrEqual(64); // at most one claim batch of the killed process (its concurrency)
      const maxAttempts = Number((await store.pool.query('SELECT max(attempts) AS n FROM events')).rows[0].n);
      expect(maxAttempts).toBeLessThanOrEqual(5);
      const receipts = Number((await store.pool.query('SELECT count(*) AS n FROM receipts')).rows[0].n);
      expect(receipts).toBeGreaterThanOrEqual(total - duplicates);
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
      await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null)));
      await store.close();
      await rx.close();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
