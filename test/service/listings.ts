/**
 * What the CLI reads beyond single objects, on every store: job and run listings, deleting a job,
 * an event found by its id alone, and the store's account and token listings and revocation.
 * Real HTTP on 127.0.0.1 port 0.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { toMicros } from '../../src/service/clock.js';
import { eventId } from '../../src/service/ids.js';
import type { Store } from '../../src/service/store/types.js';
import { makeToken, startReceiver, startService, until, type Harness, type StoreFactory } from './helpers.js';

const JOBS = '/api/v2/accounts/{acct}/jobs/';
const RUNS = '/api/v2/accounts/{acct}/runs/';

export function listingSuite(factory: StoreFactory): void {
  describe(`listings on ${factory.name}`, () => {
    let store: Store;
    let h: Harness;
    const cleanups: (() => Promise<void>)[] = [];

    beforeEach(async () => {
      const db = await factory.fresh();
      store = await db.open();
      h = await startService(store, { workDir: join(db.dir, 'runs') });
      cleanups.push(async () => {
        await h.svc.close(false);
        await store.close();
        await db.cleanup();
      });
    });
    afterEach(async () => {
      while (cleanups.length) await cleanups.pop()!();
    });

    async function job(name: string, steps = ['node -e "0"']): Promise<number> {
      const r = await h.api('POST', JOBS, { name, project_id: 1, environment_id: 1, execute_steps: steps });
      expect(r.status, r.text).toBe(201);
      return r.json.data.id;
    }
    async function run(jobId: number): Promise<number> {
      const r = await h.api('POST', `${JOBS}${jobId}/run/`, { cause: 'test' });
      expect(r.status, r.text).toBe(200);
      return r.json.data.id;
    }

    it('lists jobs by id with pagination; a deleted job leaves the list, answers 404 and cannot run, its runs stay readable', async () => {
      const ids = [await job('a'), await job('b'), await job('c')];
      const all = await h.api('GET', JOBS);
      expect(all.status, all.text).toBe(200);
      expect(all.json.data.map((j: any) => j.name)).toEqual(['a', 'b', 'c']);
      expect(all.json.extra).toMatchObject({ pagination: { count: 3, total_count: 3 }, filters: { offset: 0, limit: 100 } });
      const page = await h.api('GET', `${JOBS}?offset=1&limit=1`);
      expect(page.json.data.map((j: any) => j.name)).toEqual(['b']);
      expect(page.json.extra.pagination).toEqual({ count: 1, total_count: 3 });

      const runId = await run(ids[1]!);
      await h.svc.runner.idle();
      const del = await h.api('DELETE', `${JOBS}${ids[1]}/`);
      expect(del.status, del.text).toBe(200);
      expect(del.json.data).toMatchObject({ id: ids[1], name: 'b', state: 2 });
      expect((await h.api('GET', JOBS)).json.data.map((j: any) => j.name)).toEqual(['a', 'c']);
      expect((await h.api('GET', `${JOBS}${ids[1]}/`)).status).toBe(404);
      expect((await h.api('DELETE', `${JOBS}${ids[1]}/`)).status).toBe(404);
      const again = await h.api('POST', `${JOBS}${ids[1]}/run/`, { cause: 'after delete' });
      expect(again.status).toBe(404);
      expect(again.json.status.developer_message).toBe('job not found');
      const kept = await h.api('GET', `${RUNS}${runId}/?include_related=["run_steps"]`);
      expect(kept.status, kept.text).toBe(200);
      expect(kept.json.data).toMatchObject({ id: runId, job_id: ids[1], is_success: true });
      expect((await h.api('GET', `${RUNS}?job_definition_id=${ids[1]}`)).json.data.map((r: any) => r.id)).toEqual([runId]);
    });

    it('lets only job writers delete a job (403 otherwise) and hides other accounts\' jobs and runs', async () => {
      const id = await job('mine');
      const runId = await run(id);
      await h.svc.runner.idle();
      const analyst = await makeToken(h.store, h.accountId, 'analyst');
      const r = await h.api('DELETE', `${JOBS}${id}/`, undefined, analyst);
      expect(r.status).toBe(403);
      expect(r.json.status.developer_message).toMatch(/deleting a job needs one of/);
      expect((await h.api('GET', JOBS, undefined, analyst)).json.data).toHaveLength(1);

      const other = await h.store.createAccount('Other', toMicros(Date.now()));
      const otherToken = await makeToken(h.store, other.id);
      const as = (m: string, p: string) => h.api(m, p.replace('{acct}', String(other.id)), undefined, otherToken);
      expect((await as('GET', JOBS)).json.data).toEqual([]);
      expect((await as('GET', RUNS)).json.data).toEqual([]);
      expect((await as('GET', `${RUNS}?job_definition_id=${id}`)).json.data).toEqual([]);
      expect((await as('DELETE', `${JOBS}${id}/`)).status).toBe(404);
      expect((await as('GET', `${RUNS}${runId}/`)).status).toBe(404);
    });

    it('lists runs of the account or of one job, oldest or newest first, and names a bad parameter (400)', async () => {
      const a = await job('a');
      const b = await job('b');
      const runs = [await run(a), await run(b), await run(a), await run(a)];
      await h.svc.runner.idle();
      const all = await h.api('GET', RUNS);
      expect(all.status, all.text).toBe(200);
      expect(all.json.data.map((r: any) => r.id)).toEqual(runs);
      expect(all.json.extra).toMatchObject({ order_by: 'id', pagination: { count: 4, total_count: 4 } });
      const ofA = await h.api('GET', `${RUNS}?job_definition_id=${a}&order_by=-id&limit=2`);
      expect(ofA.json.data.map((r: any) => r.id)).toEqual([runs[3], runs[2]]);
      expect(ofA.json.extra).toEqual({ filters: { offset: 0, limit: 2, job_definition_id: a }, order_by: '-id', pagination: { count: 2, total_count: 3 } });
      expect(ofA.json.data[0]).toMatchObject({ job_id: a, status_humanized: 'Success', trigger: { cause: 'test' } });
      expect(ofA.json.data[0]).not.toHaveProperty('run_steps');
      for (const [q, field] of [['job_definition_id=x', 'job_definition_id'], ['job_definition_id=9007199254740993', 'job_definition_id'],
        ['order_by=status', 'order_by'], ['limit=101', 'limit']]) {
        const r = await h.api('GET', `${RUNS}?${q}`);
        expect(r.status, q).toBe(400);
        expect(r.json.status.user_message).toContain(field);
      }
    });

    it('finds a delivery-log event by its id alone (404 for an unknown id or another account)', async () => {
      const rx = await startReceiver();
      cleanups.push(() => rx.close());
      const sub = await h.api('POST', '/api/v3/accounts/{acct}/webhooks/subscriptions', {
        name: 'log', client_url: `${rx.url}/ok`, event_types: ['job.run.completed'], active: true,
      });
      const now = Date.now();
      const [ev] = await h.store.enqueueEvent({
        accountId: h.accountId, jobId: 1, eventType: 'job.run.completed', now: toMicros(now), newEventId: () => eventId(now),
        payloadFor: (s, id) => JSON.stringify({ accountId: s.accountId, webhookId: s.id, eventId: id, eventType: 'job.run.completed', data: {} }),
      });
      h.svc.dispatcher.kick();
      await until(async () => (await h.api('GET', `/api/v3/accounts/{acct}/webhooks/event/${ev!.id}`)).json?.data?.status === 'succeeded', 'delivered');
      const r = await h.api('GET', `/api/v3/accounts/{acct}/webhooks/event/${ev!.id}`);
      expect(r.json).toMatchObject({ status: { code: 200 }, data: { id: ev!.id, subscription_id: sub.json.data.id, attempts: 1, http_status_code: '200' } });
      expect((await h.api('GET', '/api/v3/accounts/{acct}/webhooks/event/wev_nothere')).status).toBe(404);
      const other = await h.store.createAccount('Other', toMicros(now));
      const otherToken = await makeToken(h.store, other.id);
      expect((await h.api('GET', `/api/v3/accounts/${other.id}/webhooks/event/${ev!.id}`, undefined, otherToken)).status).toBe(404);
    });

    it('lists accounts and tokens (never the token) and a revoked token no longer authenticates', async () => {
      const other = await h.store.createAccount('Other', toMicros(Date.now()));
      expect((await h.store.listAccounts()).map((a) => [a.id, a.name])).toEqual([[h.accountId, 'Acme'], [other.id, 'Other']]);
      const second = await makeToken(h.store, h.accountId, 'job_runner');
      await makeToken(h.store, other.id);
      const mine = await h.store.listTokens(h.accountId);
      expect(mine.map((t) => t.permissionSet)).toEqual(['account_admin', 'job_runner']);
      expect(mine.every((t) => t.accountId === h.accountId && t.createdAt > 0)).toBe(true);
      expect(JSON.stringify(mine)).not.toContain(second);
      expect(await h.store.listTokens()).toHaveLength(3);

      expect((await h.api('GET', JOBS, undefined, second)).status).toBe(200);
      const revoked = await h.store.revokeToken(mine[1]!.id);
      expect(revoked).toMatchObject({ id: mine[1]!.id, accountId: h.accountId, permissionSet: 'job_runner' });
      expect((await h.api('GET', JOBS, undefined, second)).status).toBe(401);
      expect(await h.store.revokeToken(mine[1]!.id)).toBeNull();
      expect((await h.store.listTokens(h.accountId)).map((t) => t.id)).toEqual([mine[0]!.id]);
    });
  });
}
