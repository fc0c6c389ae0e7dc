/**
 * A crash of the PostgreSQL server itself (an immediate stop: no shutdown checkpoint, WAL buffers not
 * flushed, as an OOM kill leaves it) must not lose what the API acknowledged. Runs on a cluster of its
 * own (it stops and starts that server); needs the PostgreSQL binaries, so it runs where the other
 * PostgreSQL tests run (RUNLENS_TEST_DATABASE_URL set).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresStore } from '../../src/service/store/postgres.js';
import { freePort, PG_URL, startReceiver, startService } from './helpers.js';

const BIN = (() => {
  try {
    const v = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b)).pop();
    return v ? `/usr/lib/postgresql/${v}/bin` : null;
  } catch {
    return null;
  }
})();

/** The server refuses to run as root: as root, run it as the postgres user the package creates. */
function asOwner(cmd: string, args: string[]): void {
  if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'ignore' });
  else execFileSync(cmd, args, { stdio: 'ignore' });
}

(PG_URL && BIN ? describe : describe.skip)('service on a PostgreSQL server that crashes', () => {
  let dir: string;
  let port: number;
  let url: string;
  const start = () =>
    asOwner(`${BIN}/pg_ctl`, ['-D', join(dir, 'data'), '-l', join(dir, 'server.log'), '-w', 'start', '-o',
      // the WAL writer waits as long as it may, so a commit that did not wait for its flush is not on disk yet
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c wal_writer_delay=10000 -c wal_writer_flush_after=1GB`]);
  const crash = () => asOwner(`${BIN}/pg_ctl`, ['-D', join(dir, 'data'), '-w', '-m', 'immediate', 'stop']);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'runlens-pgcrash-'));
    if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), 0);
    asOwner(`${BIN}/initdb`, ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    return freePort().then((p) => {
      port = p;
      url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      start();
    });
  }, 60_000);
  afterAll(() => {
    try {
      asOwner(`${BIN}/pg_ctl`, ['-D', join(dir, 'data'), '-w', '-m', 'fast', 'stop']);
    } catch {
      /* already stopped */
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every subscription, run and run event the API answered', async () => {
    const rx = await startReceiver();
    const store = await PostgresStore.connect(url, 5);
    const h = await startService(store, { workDir: join(dir, 'runs') });
    const subs: string[] = [];
    let runId = 0;
    try {
      // deliveries must stay pending (nothing answers), so the run's events are still in the outbox
      await h.svc.dispatcher.stop(false);
      for (let i = 0; i < 20; i++) {
        const r = await h.api('POST', '/api/v3/accounts/{acct}/webhooks/subscriptions', { name: `s${i}`, client_url: `${rx.url}/ok`,
          event_types: ['job.run.started', 'job.run.completed'] });
        expect(r.status, r.text).toBe(201);
        subs.push(r.json.data.id);
      }
      const job = await h.api('POST', '/api/v2/accounts/{acct}/jobs/', { name: 'j', project_id: 1, environment_id: 1, execute_steps: ['node -v'] });
      expect(job.status, job.text).toBe(201);
      const run = await h.api('POST', `/api/v2/accounts/{acct}/jobs/${job.json.data.id}/run/`, { cause: 'c' });
      expect(run.status, run.text).toBe(200);
      runId = run.json.data.id;
      await h.svc.runner.idle();
      crash();
    } finally {
      await h.svc.close(false);
      await store.close();
      await rx.close();
    }
    start();
    const after = await PostgresStore.connect(url, 2);
    try {
      const kept = (await after.listSubscriptions(h.accountId, 0, 100)).items.map((s) => s.id);
      expect(kept.sort()).toEqual([...subs].sort());
      const r = await after.getRun(h.accountId, runId);
      expect(r?.status).toBe(10);
      for (const id of subs) {
        const types = (await after.listEvents(h.accountId, id, 0, 10)).items.map((e) => e.eventType).sort();
        expect(types, id).toEqual(['job.run.completed', 'job.run.started']);
      }
    } finally {
      await after.close();
    }
  }, 120_000);
});
