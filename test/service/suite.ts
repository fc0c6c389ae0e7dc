/**
 * The service test suite, parameterized by store: every backend (SQLite now, PostgreSQL later) must
 * pass the same tests. Real HTTP on 127.0.0.1 with port 0; the receiver checks every signature.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readRecords } from '../../src/produce/convert.js';
import { FUSION, ROOT, sample, samplesNote } from '../helpers/samples.js';
import { join } from 'node:path';
import { ManualClock, systemClock, toMicros } from '../../src/service/clock.js';
import { eventId } from '../../src/service/ids.js';
import type { AttemptStart, EventType, Store } from '../../src/service/store/types.js';
import { WebhooksClient } from '../../src/client/webhooks.js';
import { receiptView } from '../../src/service/http/views.js';
import { ArtifactsClient } from '../../src/client/artifacts.js';
import { ApiClientError } from '../../src/client/http.js';
import { runInProcess } from '../helpers/in-process.js';
import { JobRunner } from '../../src/service/runner.js';
import { makeToken, startReceiver, startService, until, type Harness, type StoreFactory } from './helpers.js';

const SUBS = '/api/v3/accounts/{acct}/webhooks/subscriptions';
const SUB = (id: string) => `/api/v3/accounts/{acct}/webhooks/subscription/${id}`;
const ALL: EventType[] = ['job.run.started', 'job.run.completed', 'job.run.errored'];

/** A Node step that writes `content` into the telemetry folder the service gives it. */
const writeTelemetryStep = (file: string, content: string) =>
  `node -e "const fs=require('fs');fs.mkdirSync(process.env.RUNLENS_TELEMETRY_DIR,{recursive:true});fs.writeFileSync(process.env.RUNLENS_TELEMETRY_DIR+'/${file}','${content}')"`;

/** Parquet files runlens's own producer wrote (samples/README.md). */
const PRODUCED = (name: string) => join(ROOT, 'samples', name);

/** A Node step that copies `src` into the telemetry folder the service gives it, as `name`. */
const copyTelemetryStep = (src: string, name: string) =>
  `node -e "require('fs').copyFileSync(process.argv[1],process.env.RUNLENS_TELEMETRY_DIR+'/${name}')" ${JSON.stringify(src)}`;

export function serviceSuite(factory: StoreFactory): void {
  describe(`service on ${factory.name}`, () => {
    let db: Awaited<ReturnType<StoreFactory['fresh']>>;
    let store: Store;
    let h: Harness;
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    const cleanups: (() => Promise<void>)[] = [];

    async function boot(opts: Parameters<typeof startService>[1] extends infer O ? Partial<O> : never = {}) {
      db = await factory.fresh();
      store = await db.open();
      h = await startService(store, { workDir: join(db.dir, 'runs'), ...opts });
      cleanups.push(async () => {
        await h.svc.close(false);
        await store.close();
        await db.cleanup();
      });
    }

    async function subscribe(body: Record<string, unknown>): Promise<any> {
      const r = await h.api('POST', SUBS, { name: 'hook', event_types: ALL, active: true, ...body });
      expect(r.status, r.text).toBe(201);
      rx.secrets.set(r.json.data.id, r.json.data.hmac_secret);
      return r.json.data;
    }

    /** A new service on the data of the last one, whose service and store were closed as a crash leaves them. */
    async function restartOnSameData(): Promise<void> {
      store = await db.open();
      const { createService } = await import('../../src/service/server.js');
      const svc = await createService({ store, workDir: join(db.dir, 'runs'), allowPrivateTargets: true, retryDelaysMs: [1, 1, 1, 1], jitter: 0, pollMs: 50, leaseMarginMs: 200 });
      cleanups.push(async () => {
        await svc.close(false);
        await store.close();
        await db.cleanup();
      });
      await svc.listen(0);
    }

    /** Puts one event of job 1 straight into the outbox (what a run does), then wakes the dispatcher. */
    async function enqueue(type: EventType = 'job.run.completed', jobId = 1, at = Date.now()): Promise<number> {
      const evs = await h.store.enqueueEvent({
        accountId: h.accountId, jobId, eventType: type, now: toMicros(at), newEventId: () => eventId(at),
        payloadFor: (s, id) => JSON.stringify({ accountId: s.accountId, webhookId: s.id, eventId: id, eventType: type, data: { jobId: String(jobId) } }),
      });
      h.svc.dispatcher.kick();
      return evs.length;
    }

    beforeEach(async () => {
      rx = await startReceiver();
      cleanups.push(() => rx.close());
    });
    afterEach(async () => {
      while (cleanups.length) await cleanups.pop()!();
    });

    describe('authentication and scoping', () => {
      beforeEach(() => boot());

      it('answers 401 without a token or with an unknown one, and accepts Token and Bearer', async () => {
        const none = await h.api('GET', SUBS, undefined, null);
        expect(none.status).toBe(401);
        expect(none.json).toMatchObject({ data: null, status: { code: 401, is_success: false } });
        expect((await h.api('GET', SUBS, undefined, 'nope')).status).toBe(401);
        const bearer = await fetch(`${h.base}/api/v3/accounts/${h.accountId}/webhooks/subscriptions`, { headers: { authorization: `Bearer ${h.token}` } });
        expect(bearer.status).toBe(200);
        const basic = await fetch(`${h.base}/api/v3/accounts/${h.accountId}/webhooks/subscriptions`, { headers: { authorization: `Basic ${h.token}` } });
        expect(basic.status).toBe(401);
      });

      it('answers 401 without a valid token before it reads the body', async () => {
        const json = { 'content-type': 'application/json' };
        for (const tok of [null, 'nope']) {
          for (const [m, p, b] of [['DELETE', '/api/v2/accounts/{acct}/jobs/419/', undefined], ['DELETE', SUB('x'), undefined],
            ['POST', SUBS, '{not json'], ['POST', '/api/v2/accounts/{acct}/jobs/', '']] as const) {
            const r = await h.api(m, p, b, tok, json);
            expect(r.status, `${m} ${p} ${r.text}`).toBe(401);
            expect(r.json.status).toMatchObject({ code: 401, is_success: false });
          }
        }
      });

      it('reads an empty JSON body as no body: DELETE with Content-Type: application/json deletes, a route that needs a body says so', async () => {
        const json = { 'content-type': 'application/json' };
        const sub = await subscribe({ client_url: `${rx.url}/ok` });
        expect((await h.api('DELETE', SUB(sub.id), undefined, h.token, json)).status).toBe(200);
        expect((await h.api('GET', SUB(sub.id))).status).toBe(404);
        const job = await h.api('POST', '/api/v2/accounts/{acct}/jobs/', { name: 'j', project_id: 7, environment_id: 8, execute_steps: ['node -v'] });
        expect(job.status, job.text).toBe(201);
        const del = await h.api('DELETE', `/api/v2/accounts/{acct}/jobs/${job.json.data.id}/`, undefined, h.token, json);
        expect(del.status, del.text).toBe(200);
        expect((await h.api('GET', `/api/v2/accounts/{acct}/jobs/${job.json.data.id}/`)).status).toBe(404);
        const empty = await h.api('POST', SUBS, undefined, h.token, json);
        expect(empty.status).toBe(400);
        expect(empty.json.status.user_message).toBe('Invalid request: body must be a JSON object');
      });

      it("hides another account's subscriptions and account path (404)", async () => {
        const mine = await subscribe({ client_url: `${rx.url}/ok` });
        const other = await h.store.createAccount('Other', Date.now() * 1000);
        const otherToken = await makeToken(h.store, other.id);
        const asOther = (m: string, p: string) => h.api(m, p.replace('{acct}', String(other.id)), undefined, otherToken);
        for (const [m, p] of [['GET', SUB(mine.id)], ['DELETE', SUB(mine.id)], ['GET', `${SUB(mine.id)}/test`], ['GET', `${SUB(mine.id)}/events`]] as const) {
          const r = await asOther(m, p);
          expect(r.status, `${m} ${p}`).toBe(404);
          expect(r.json.status).toMatchObject({ code: 404, is_success: false });
          expect(r.json.status.user_message).toMatch(/not found/);
        }
        expect((await asOther('GET', SUBS)).json.data).toEqual([]);
        // a token used against an account path that is not its own
        expect((await h.api('GET', SUBS.replace('{acct}', String(other.id)))).status).toBe(404);
      });

      it('needs Account Admin, Admin or Developer to write (403 otherwise) but lets any token read', async () => {
        const sub = await subscribe({ client_url: `${rx.url}/ok` });
        for (const set of ['account_admin', 'admin', 'developer']) {
          const t = await makeToken(h.store, h.accountId, set);
          expect((await h.api('PUT', SUB(sub.id), { name: `by ${set}` }, t)).status).toBe(200);
        }
        const analyst = await makeToken(h.store, h.accountId, 'analyst');
        expect((await h.api('GET', SUB(sub.id), undefined, analyst)).status).toBe(200);
        expect((await h.api('GET', SUBS, undefined, analyst)).status).toBe(200);
        for (const [m, p, b] of [['POST', SUBS, { name: 'x', client_url: `${rx.url}/ok`, event_types: ALL }], ['PUT', SUB(sub.id), { name: 'y' }],
          ['DELETE', SUB(sub.id), undefined], ['GET', `${SUB(sub.id)}/test`, undefined]] as const) {
          const r = await h.api(m, p, b, analyst);
          expect(r.status, `${m} ${p}`).toBe(403);
          expect(r.json.status).toMatchObject({ code: 403, is_success: false });
        }
      });
    });

    describe('subscriptions API', () => {
      beforeEach(() => boot());

      it('creates with only name, client_url, event_types and active, in the documented shape', async () => {
        const r = await h.api('POST', SUBS, { name: 'minimal', client_url: 'https://example.com/hook', event_types: ['job.run.completed'], active: true });
        expect(r.status).toBe(201);
        expect(r.json.status).toEqual({ code: 201 });
        const d = r.json.data;
        expect(d.id).toMatch(/^wsu_[0-9A-Za-z]{27}$/);
        expect(d.account_identifier).toMatch(/^act_[0-9A-Za-z]+$/);
        expect(d).toMatchObject({ account_id: String(h.accountId), name: 'minimal', description: '', job_ids: [], event_types: ['job.run.completed'],
          client_url: 'https://example.com/hook', active: true, http_status_code: '0' });
        expect(d.created_at).toMatch(/^\d+$/);
        expect(d.updated_at).toMatch(/^\d+$/);
        expect(d).not.toHaveProperty('dispatched_at');
        expect(typeof d.hmac_secret).toBe('string');
        expect(d.hmac_secret.length).toBeGreaterThanOrEqual(32);
        const got = await h.api('GET', SUB(d.id));
        expect(got.json.status).toEqual({ code: 200 });
        expect(got.json.data).not.toHaveProperty('hmac_secret');
        expect(got.json.data).toMatchObject({ id: d.id, account_identifier: d.account_identifier, http_status_code: '0' });
      });

      it('refuses a field it neither takes nor shows (400 naming it) but takes back every field of its own responses', async () => {
        const typo = await h.api('POST', SUBS, { name: 'hook', event_types: ALL, client_url: 'https://example.com', job_id: [2] });
        expect(typo.status, typo.text).toBe(400);
        expect(typo.json.status.user_message).toMatch(/^Invalid request: job_id /);
        expect((await h.api('GET', SUBS)).json.data).toEqual([]);
        const d = await subscribe({ client_url: 'https://example.com' });
        // what Terraform does: GET, merge the change, PUT the whole object back with its computed fields and the secret it kept
        const read = (await h.api('GET', SUB(d.id))).json.data;
        const whole = await h.api('PUT', SUB(d.id), { ...read, webhook_id: d.id, hmac_secret: d.hmac_secret, name: 'renamed' });
        expect(whole.status, whole.text).toBe(200);
        expect(whole.json.data).toMatchObject({ name: 'renamed', id: d.id });
        const secret = await h.api('PUT', SUB(d.id), { hmac_secret: 'new' });
        expect(secret.status, secret.text).toBe(400);
        expect(secret.json.status.user_message).toMatch(/hmac_secret .*set by the service/);
        expect((await h.store.getSubscription(h.accountId, d.id))!.hmacSecret).toBe(d.hmac_secret);
        const misspelt = await h.api('PUT', SUB(d.id), { actve: false });
        expect(misspelt.status).toBe(400);
        expect(misspelt.json.status.user_message).toMatch(/^Invalid request: actve /);
        expect((await h.api('GET', SUB(d.id))).json.data).toMatchObject({ name: 'renamed', active: true });
        // v2 bodies alike: a job copied from a read one is taken, a trigger field the service does not have is not
        const JOBS = '/api/v2/accounts/{acct}/jobs/';
        const made = await h.api('POST', JOBS, { name: 'j', project_id: 1, environment_id: 1, execute_steps: ['node -v'] });
        expect(made.status, made.text).toBe(201);
        const copy = await h.api('POST', JOBS, { ...made.json.data, name: 'copy' });
        expect(copy.status, copy.text).toBe(201);
        const sched = await h.api('POST', JOBS, { name: 'j', project_id: 1, environment_id: 1, execute_steps: ['node -v'], triggers: { schedule: true } });
        expect(sched.status).toBe(400);
        expect(sched.json.status.user_message).toMatch(/^Invalid request: triggers /);
        const override = await h.api('POST', `${JOBS}${made.json.data.id}/run/`, { cause: 'c', steps_override: ['node -e 1'] });
        expect(override.status).toBe(400);
        expect(override.json.status.user_message).toMatch(/^Invalid request: steps_override /);
        expect((await h.api('GET', '/api/v2/accounts/{acct}/runs/')).json.data).toEqual([]);
      });

      it('takes job ids as integers and answers them as strings; honours active false on create', async () => {
        const d = await subscribe({ client_url: 'https://example.com', job_ids: [3, 1, 3], active: false, description: 'desc' });
        expect(d.job_ids).toEqual(['3', '1']);
        const largest = await subscribe({ client_url: 'https://example.com', job_ids: ['9007199254740991'] });
        expect(largest.job_ids).toEqual(['9007199254740991']);
        expect(d.active).toBe(false);
        expect(d.description).toBe('desc');
      });

      it.each([
        ['an empty name', { name: '' }, 'name'],
        ['no name', { name: undefined }, 'name'],
        ['no event_types', { event_types: undefined }, 'event_types'],
        ['empty event_types', { event_types: [] }, 'event_types'],
        ['an unknown event type', { event_types: ['job.run.started', 'job.run.exploded'] }, 'event_types[1]'],
        ['a bad URL', { client_url: 'not a url' }, 'client_url'],
        ['a non-http URL', { client_url: 'ftp://example.com/x' }, 'client_url'],
        ['no URL', { client_url: undefined }, 'client_url'],
        ['a fractional job id', { job_ids: [1, 2.5] }, 'job_ids[1]'],
        ['a non-numeric job id', { job_ids: ['abc'] }, 'job_ids[0]'],
        ['a job id past 2^53 as digits (it would be rounded to another id)', { job_ids: ['9007199254740991', '9007199254740993'] }, 'job_ids[1]'],
        ['a 16-digit job id past 2^53', { job_ids: ['9999999999999999'] }, 'job_ids[0]'],
        ['job_ids not an array', { job_ids: 7 }, 'job_ids'],
        ['active not a boolean', { active: 'yes' }, 'active'],
      ])('answers 400 naming the field for %s', async (_what, change, field) => {
        const body: Record<string, unknown> = { name: 'n', client_url: 'https://example.com', event_types: ['job.run.started'], active: true, ...change };
        for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
        const r = await h.api('POST', SUBS, body);
        expect(r.status).toBe(400);
        expect(r.json.data).toBeNull();
        expect(r.json.status).toMatchObject({ code: 400, is_success: false });
        expect(r.json.status.user_message).toContain(field);
        expect(r.json.status.developer_message).toContain(field);
      });

      it('answers 400 in the envelope for malformed JSON and a non-object body', async () => {
        for (const body of ['{"name":', '[1,2]', '"text"']) {
          const r = await h.api('POST', SUBS, body);
          expect(r.status, body).toBe(400);
          expect(r.json).toMatchObject({ data: null, status: { code: 400, is_success: false } });
        }
      });

      it('lists with pagination and filters, limit at most 100', async () => {
        for (let i = 0; i < 12; i++) await subscribe({ name: `s${i}`, client_url: 'https://example.com' });
        const first = await h.api('GET', SUBS);
        expect(first.json.status).toEqual({ code: 200 });
        expect(first.json.extra).toEqual({ pagination: { total_count: 12, count: 10 }, filters: { offset: 0, limit: 10 } });
        expect(first.json.data.every((s: any) => !('hmac_secret' in s))).toBe(true);
        const rest = await h.api('GET', `${SUBS}?offset=10&limit=100`);
        expect(rest.json.extra).toEqual({ pagination: { total_count: 12, count: 2 }, filters: { offset: 10, limit: 100 } });
        expect(rest.json.data.map((s: any) => s.name)).toEqual(['s10', 's11']);
        for (const q of ['limit=101', 'limit=0', 'offset=-1', 'limit=x']) {
          const r = await h.api('GET', `${SUBS}?${q}`);
          expect(r.status, q).toBe(400);
          expect(r.json.status.user_message).toContain(q.split('=')[0]);
        }
      });

      it('updates, deletes (is_success) and then answers 404', async () => {
        const d = await subscribe({ client_url: 'https://example.com' });
        const u = await h.api('PUT', SUB(d.id), { name: 'renamed', description: 'x', client_url: 'https://example.com/2', event_types: ['job.run.errored'], job_ids: [9], active: true });
        expect(u.status).toBe(200);
        expect(u.json.data).toMatchObject({ name: 'renamed', description: 'x', client_url: 'https://example.com/2', event_types: ['job.run.errored'], job_ids: ['9'] });
        expect(u.json.data).not.toHaveProperty('hmac_secret');
        expect((await h.api('PUT', SUB(d.id), { event_types: [] })).status).toBe(400);
        expect((await h.api('PUT', SUB('wsu_nothere'), { name: 'x' })).status).toBe(404);
        const del = await h.api('DELETE', SUB(d.id));
        expect(del.json).toEqual({ data: { id: d.id }, status: { code: 200, is_success: true } });
        const gone = await h.api('GET', SUB(d.id));
        expect(gone.status).toBe(404);
        expect(gone.json).toMatchObject({ data: null, status: { code: 404, is_success: false } });
        expect((await h.api('DELETE', SUB(d.id))).status).toBe(404);
      });

      it('refuses an update whose If-Match names an older state of the subscription (412), and says its ETag', async () => {
        const d = await subscribe({ client_url: 'https://example.com' });
        const got = await h.api('GET', SUB(d.id));
        const etag = got.headers.get('etag');
        expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
        expect((await h.api('PUT', SUB(d.id), { active: false })).status).toBe(200);
        const stale = await h.api('PUT', SUB(d.id), { name: 'late', active: true }, undefined, { 'if-match': etag! });
        expect(stale.status).toBe(412);
        expect(stale.json.status.user_message).toMatch(/changed since it was read/);
        expect((await h.api('GET', SUB(d.id))).json.data).toMatchObject({ name: 'hook', active: false });
        const fresh = (await h.api('GET', SUB(d.id))).headers.get('etag')!;
        expect(fresh).not.toBe(etag);
        const ok = await h.api('PUT', SUB(d.id), { name: 'now' }, undefined, { 'if-match': fresh });
        expect(ok.status).toBe(200);
        expect(ok.headers.get('etag')).not.toBe(fresh);
      });

      it("the client's update keeps a change made between its read and its write", async () => {
        const d = await subscribe({ client_url: 'https://example.com' });
        const client = new WebhooksClient({ baseUrl: h.base, token: h.token, accountId: h.accountId });
        const realFetch = globalThis.fetch;
        let meddled = false;
        globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
          if (!meddled && init?.method === 'PUT') {
            meddled = true; // another client turns the subscription off after this one read it
            expect((await h.api('PUT', SUB(d.id), { active: false })).status).toBe(200);
          }
          return realFetch(input, init);
        }) as typeof fetch;
        try {
          const u = await client.update(d.id, { name: 'renamed' });
          expect(u).toMatchObject({ name: 'renamed', active: false });
        } finally {
          globalThis.fetch = realFetch;
        }
        expect(meddled).toBe(true);
        expect((await h.api('GET', SUB(d.id))).json.data).toMatchObject({ name: 'renamed', active: false });
      });

      it('deletes the delivery log with its subscription (events and receipts), as the API shows', async () => {
        const d = await subscribe({ client_url: `${rx.url}/fail` });
        const kept = await subscribe({ client_url: `${rx.url}/ok` });
        await enqueue();
        await until(async () => (await h.store.listEvents(h.accountId, d.id, 0, 10)).items[0]?.status === 'failed', 'failed delivery');
        await until(async () => (await h.store.listEvents(h.accountId, kept.id, 0, 10)).items[0]?.status === 'succeeded', 'delivered');
        const ev = (await h.store.listEvents(h.accountId, d.id, 0, 10)).items[0]!;
        expect(await h.store.listReceipts(ev.id)).toHaveLength(5);
        expect((await h.api('DELETE', SUB(d.id))).status).toBe(200);
        expect((await h.api('GET', `${SUB(d.id)}/events`)).status).toBe(404);
        expect((await h.api('GET', `${SUB(d.id)}/event/${ev.id}/receipt`)).status).toBe(404);
        expect((await h.store.listEvents(h.accountId, d.id, 0, 10)).total).toBe(0);
        expect(await h.store.listReceipts(ev.id)).toEqual([]);
        // another subscription's log stays
        expect((await h.api('GET', `${SUB(kept.id)}/events`)).json.extra.pagination.total_count).toBe(1);
      });

      it('answers unknown paths with a 404 envelope', async () => {
        const r = await h.api('GET', '/api/v3/accounts/{acct}/webhooks/nothing');
        expect(r.status).toBe(404);
        expect(r.json).toMatchObject({ data: null, status: { code: 404, is_success: false } });
      });

      it('answers oversized and malformed path parameters in the error envelope', async () => {
        const long = 'x'.repeat(300);
        for (const path of [SUB(`wsu_${long}`), `${SUB(`wsu_${long}`)}/events`, `/api/v3/accounts/${'9'.repeat(300)}/webhooks/subscriptions`,
          `/api/v2/accounts/{acct}/runs/${'1'.repeat(300)}/`, `/api/v2/accounts/{acct}/runs/1/artifacts/${'a'.repeat(5000)}`,
          `/api/v2/accounts/{acct}/runs/1/artifacts/metadata/${'a'.repeat(101)}`]) {
          const r = await h.api('GET', path);
          expect(r.status, path.slice(0, 60)).toBe(414);
          expect(r.json, path.slice(0, 60)).toMatchObject({ data: null, status: { code: 414, is_success: false } });
          expect(r.json.status.user_message).toMatch(/too long/);
          expect(r.text.length, path.slice(0, 60)).toBeLessThan(500);
        }
        // an unknown path is not echoed back whole
        const unknown = await h.api('GET', `/${'n/'.repeat(2500)}`);
        expect(unknown.status).toBe(404);
        expect(unknown.text.length).toBeLessThan(500);
        const bad = await h.api('GET', SUB('wsu_%E0%A4%A'));
        expect(bad.status).toBe(400);
        expect(bad.json).toMatchObject({ data: null, status: { code: 400, is_success: false } });
      });

      it('takes ids only in their canonical form: account 01 is not account 1', async () => {
        const d = await subscribe({ client_url: 'https://example.com' });
        const id = h.accountId;
        for (const acct of [`0${id}`, `00${id}`, `+${id}`, `${id}.0`, `0x${id.toString(16)}`, `%20${id}`, `${id}%20`]) {
          for (const path of [`/api/v3/accounts/${acct}/webhooks/subscriptions`, `/api/v3/accounts/${acct}/webhooks/subscription/${d.id}`,
            `/api/v2/accounts/${acct}/runs/1/`]) {
            const r = await h.api('GET', path);
            expect(r.status, path).toBe(404);
            expect(r.json.status, path).toMatchObject({ code: 404, is_success: false });
          }
        }
        expect((await h.api('GET', `/api/v3/accounts/${id}/webhooks/subscription/${d.id}`)).status).toBe(200);
      });

      it('test sends a signed delivery now and reports the endpoint status', async () => {
        const ok = await subscribe({ client_url: `${rx.url}/ok` });
        const t = await h.api('GET', `${SUB(ok.id)}/test`);
        expect(t.json).toMatchObject({ status: { code: 200 }, data: { verification_error: null, verification_status_code: '200' } });
        expect(t.json.data.event_id).toMatch(/^wev_[0-9A-Za-z]{27}$/);
        expect(rx.deliveries).toHaveLength(1);
        expect(rx.deliveries[0]!.verified).toBe(true);
        expect(rx.deliveries[0]!.json.eventId).toBe(t.json.data.event_id);
        const bad = await subscribe({ client_url: `${rx.url}/fail` });
        const tb = await h.api('GET', `${SUB(bad.id)}/test`);
        expect(tb.json.data.verification_status_code).toBe('500');
        expect(tb.json.data.verification_error).toMatch(/500/);
        const after = await h.api('GET', SUB(bad.id));
        expect(after.json.data.http_status_code).toBe('500');
        expect(after.json.data.dispatched_at).toMatch(/^\d+$/);
      });

      it('a test delivery looks like a real event of the type it sends: started Running 3, errored Errored 20, completed Success 10', async () => {
        const expected = {
          'job.run.started': { runStatus: 'Running', runStatusCode: 3 },
          'job.run.errored': { runStatus: 'Errored', runStatusCode: 20 },
          'job.run.completed': { runStatus: 'Success', runStatusCode: 10 },
        } as const;
        for (const [types, sent] of [
          [['job.run.started'], 'job.run.started'], [['job.run.errored'], 'job.run.errored'], [['job.run.started', 'job.run.errored'], 'job.run.started'],
          [['job.run.errored', 'job.run.completed'], 'job.run.completed'],
        ] as const) {
          rx.deliveries.length = 0;
          const sub = await subscribe({ client_url: `${rx.url}/ok`, event_types: types });
          const t = await h.api('GET', `${SUB(sub.id)}/test`);
          expect(t.json.data.verification_error, types.join()).toBeNull();
          const body = rx.deliveries[0]!.json as { eventType: string; data: Record<string, unknown> };
          expect(body.eventType, types.join()).toBe(sent);
          expect(body.data, types.join()).toMatchObject(expected[sent]);
          expect('runFinishedAt' in body.data, types.join()).toBe(sent === 'job.run.completed');
          expect('runErroredAt' in body.data, types.join()).toBe(sent === 'job.run.errored');
          // receivers that reject ids which are not positive integers accept the test event too
          for (const k of ['jobId', 'runId', 'projectId', 'environmentId']) expect(body.data[k], `${types.join()} ${k}`).toMatch(/^[1-9]\d*$/);
          expect(body.data.runReason).toBe('Test webhook delivery');
          expect(body.data, types.join()).toMatchObject({ toolVersion: '', dbtVersion: '' });
          expect(rx.deliveries[0]!.verified, types.join()).toBe(true);
        }
      });

      it('refuses a NUL character in a text field with 400 naming the field; an id with one is not found', async () => {
        const base = { name: 'hook', client_url: 'https://example.com/hook', event_types: ALL };
        const d = await subscribe({ client_url: 'https://example.com/hook' });
        for (const [field, value] of [['name', 'n\u0000'], ['description', 'd\u0000'], ['client_url', 'https://example.com/\u0000']] as const) {
          for (const [m, p, b] of [['POST', SUBS, { ...base, [field]: value }], ['PUT', SUB(d.id), { [field]: value }]] as const) {
            const r = await h.api(m, p, b);
            expect(r.status, `${m} ${field}`).toBe(400);
            expect(r.json.status.user_message, `${m} ${field}`).toContain(`${field} must not contain a NUL character`);
          }
        }
        for (const path of [SUB('wsu_%00'), `${SUB('wsu_%00')}/events`, `${SUB(d.id)}/event/wev_%00/receipt`, '/api/v3/accounts/{acct}/webhooks/event/wev_%00']) {
          const r = await h.api('GET', path);
          expect(r.status, path).toBe(404);
        }
        expect((await h.api('GET', SUB(d.id))).json.data.name).toBe('hook');
      });

      it('refuses text that is not well formed (a lone surrogate escape, bytes that are not UTF-8) with 400 naming the field', async () => {
        const base = { name: 'hook', client_url: 'https://example.com/hook', event_types: ALL };
        for (const [field, value] of [['name', 'lone\ud800x'], ['description', 'd\udc00']] as const) {
          const r = await h.api('POST', SUBS, { ...base, [field]: value });
          expect(r.status, field).toBe(400);
          expect(r.json.status.user_message, field).toContain(`${field} must not contain a lone surrogate \\u`);
        }
        const url = `${h.base}${SUBS.replace('{acct}', String(h.accountId))}`;
        const body = Buffer.concat([Buffer.from('{"name":"bad'), Buffer.from([0xff]), Buffer.from(`","client_url":"https://example.com/hook","event_types":${JSON.stringify(ALL)}}`)]);
        const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' }, body });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { status: { user_message: string } }).status.user_message).toContain('name is not valid UTF-8');
      });

      it('keeps a delivery log: events of a subscription and the receipts of each attempt', async () => {
        const d = await subscribe({ client_url: `${rx.url}/fail` });
        await enqueue();
        await until(async () => (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0]?.status === 'failed', 'failed event');
        const evs = await h.api('GET', `${SUB(d.id)}/events`);
        expect(evs.json.extra.pagination).toEqual({ total_count: 1, count: 1 });
        const ev = evs.json.data[0];
        expect(ev).toMatchObject({ subscription_id: d.id, trigger_event_type: 'job.run.completed', http_status_code: '500', attempts: 5, job_id: '1' });
        const rc = await h.api('GET', `${SUB(d.id)}/event/${ev.id}/receipt`);
        expect(rc.json.data).toHaveLength(5);
        expect(rc.json.data[0]).toMatchObject({ event_id: ev.id, subscription_id: d.id, http_status_code: '500', response_body: 'boom', request_body: ev.payload });
        expect(rc.json.data[0].error_info).toMatch(/500/);
        expect(JSON.parse(rc.json.data[0].request_headers)).toHaveProperty('authorization');
        expect(typeof rc.json.data[0].duration_ms).toBe('number');
        expect((await h.api('GET', `${SUB(d.id)}/event/wev_nothere/receipt`)).status).toBe(404);
      });
    });

    describe('listing order', () => {
      it('lists subscriptions and events made in the same millisecond in the order they were made', async () => {
        // A clock that never moves: every row gets the same created_at, and ids are random within a second.
        const at = Date.UTC(2026, 0, 1);
        await boot({ clock: new ManualClock(at) });
        const names = Array.from({ length: 12 }, (_, i) => `same-ms-${i}`);
        for (const name of names) await subscribe({ name, client_url: `${rx.url}/ok`, job_ids: [] });
        const subs = await h.api('GET', `${SUBS}?limit=100`);
        expect(subs.json.data.map((x: any) => x.name)).toEqual(names);
        const first = subs.json.data[0].id as string;
        const made: string[] = [];
        for (let i = 0; i < 12; i++) {
          const evs = await h.store.enqueueEvent({
            accountId: h.accountId, jobId: 1, eventType: 'job.run.completed', now: toMicros(at), newEventId: () => eventId(at),
            payloadFor: (x, id) => JSON.stringify({ accountId: x.accountId, webhookId: x.id, eventId: id, eventType: 'job.run.completed', data: { jobId: '1' } }),
          });
          made.push(evs.find((e) => e.subscriptionId === first)!.id);
        }
        // newest first
        expect((await h.store.listEvents(h.accountId, first, 0, 100)).items.map((e) => e.id)).toEqual(made.reverse());
      });
    });

    describe('job times', () => {
      it("a job's updated_at is when it last changed: its creation, then its deletion", async () => {
        const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
        await boot({ clock });
        const made = await h.api('POST', '/api/v2/accounts/{acct}/jobs/', { name: 'j', project_id: 1, environment_id: 1, execute_steps: ['node -v'] });
        expect(made.json.data).toMatchObject({ created_at: '2026-01-01 12:00:00.000000+00:00', updated_at: '2026-01-01 12:00:00.000000+00:00' });
        clock.advance(90_000);
        const gone = await h.api('DELETE', `/api/v2/accounts/{acct}/jobs/${made.json.data.id}/`);
        expect(gone.json.data).toMatchObject({ state: 2, created_at: '2026-01-01 12:00:00.000000+00:00', updated_at: '2026-01-01 12:01:30.000000+00:00' });
      });
    });

    describe('jobs, runs and artifacts (v2)', () => {
      beforeEach(() => boot());
      const JOBS = '/api/v2/accounts/{acct}/jobs/';

      async function job(steps: string[]): Promise<number> {
        const r = await h.api('POST', JOBS, { name: 'nightly', project_id: 7, environment_id: 8, execute_steps: steps, dbt_version: '2.0.0' });
        expect(r.status, r.text).toBe(201);
        return r.json.data.id;
      }
      async function runAndWait(jobId: number): Promise<any> {
        const r = await h.api('POST', `/api/v2/accounts/{acct}/jobs/${jobId}/run/`, { cause: 'nightly schedule' });
        expect(r.status, r.text).toBe(200);
        await h.svc.runner.idle();
        return (await h.api('GET', `/api/v2/accounts/{acct}/runs/${r.json.data.id}/?include_related=["run_steps"]`)).json.data;
      }

      it('refuses steps whose executable is not allowed, names the step, and checks fields', async () => {
        const bad = async (body: Record<string, unknown>, field: string) => {
          const r = await h.api('POST', JOBS, { name: 'j', project_id: 1, environment_id: 1, execute_steps: ['node -v'], ...body });
          expect(r.status, JSON.stringify(body)).toBe(400);
          expect(r.json.status.user_message).toContain(field);
        };
        await bad({ execute_steps: ['node -v', 'bash -c "rm -rf /"'] }, 'execute_steps[1]');
        await bad({ execute_steps: ['/usr/bin/node -v'] }, 'execute_steps[0]');
        for (const step of ['node -v | cat', 'node -v; node -v', 'node -v > out.txt', 'node -v < in.txt', 'node -v && node -v', 'node -v &',
          'node *.js', 'node script?.js', 'node [ab].js', 'node $HOME/x.js', 'node "${HOME}/x.js"', 'node `which x`', 'node $(which x)',
          'node ~/x.js', 'node -v # comment', 'node -v "unclosed']) {
          await bad({ execute_steps: ['node -v', step] }, 'execute_steps[1]');
        }
        // what no command line can carry: a NUL character, an argument over the 128 KiB Linux allows
        await bad({ execute_steps: ['node -v', 'node -e "1"\u0000x'] }, 'execute_steps[1]');
        await bad({ execute_steps: [`node -e "${'x'.repeat(200_000)}"`] }, 'execute_steps[0]');
        await bad({ execute_steps: [] }, 'execute_steps');
        await bad({ project_id: undefined }, 'project_id');
        await bad({ project_id: '9007199254740993' }, 'project_id');
        await bad({ environment_id: '9999999999999999' }, 'environment_id');
        await bad({ name: '' }, 'name');
        // optional text fields of another type are refused, not dropped
        await bad({ dbt_version: 1.8 }, 'dbt_version must be a string');
        await bad({ project_name: ['analytics'] }, 'project_name must be a string');
        await bad({ environment_name: 42 }, 'environment_name must be a string');
        const id = await job(['node -v']);
        const noCause = await h.api('POST', `/api/v2/accounts/{acct}/jobs/${id}/run/`, {});
        expect(noCause.status).toBe(400);
        expect(noCause.json.status.user_message).toContain('cause');
        expect((await h.api('POST', '/api/v2/accounts/{acct}/jobs/999/run/', { cause: 'x' })).status).toBe(404);
      });

      it("refuses a runlens step that works on the service's store: 400 when the job is saved, refused by the runner before it runs", async () => {
        await boot({ stepCommands: ['node', 'runlens'] });
        for (const step of ['runlens tokens create --account 2 --permission-set owner --data ../..', 'runlens accounts list', 'runlens serve --port 0',
          'runlens record -o r.jsonl -- runlens tokens list', 'runlens record -o r.jsonl -- sh -c "cat /etc/passwd"']) {
          const r = await h.api('POST', JOBS, { name: 'j', project_id: 1, environment_id: 1, execute_steps: ['node -v', step] });
          expect(r.status, step).toBe(400);
          expect(r.json.status.user_message, step).toContain('execute_steps[1]');
        }
        // a job saved before this check (or by another process's store): its step is refused when the run comes to it
        const stored = await h.store.createJob({ accountId: h.accountId, name: 'old', projectId: 1, environmentId: 1, projectName: 'p', environmentName: 'e',
          toolVersion: '', executeSteps: ['node -v', 'runlens tokens create --account 1 --permission-set owner'], createdAt: Date.now() * 1000 });
        const run = await runAndWait(stored.id);
        expect(run).toMatchObject({ status: 20, status_message: 'step 2 (runlens tokens create --account 1 --permission-set owner) did not start' });
        expect(run.run_steps[1].logs).toMatch(/^\[runlens\] step refused: runlens tokens works on the service's own store/);
      });

      it("a step gets serve's environment without its secrets and store settings, and its own variables", async () => {
        const secrets = { RUNLENS_DATABASE_URL: 'postgres://u:pw@db/x', RUNLENS_API_TOKEN: 'rlt_secret', RUNLENS_DATA: '/srv/data', PGPASSWORD: 'pgsecret',
          PGHOST: 'db.internal' };
        const saved = Object.fromEntries(Object.keys({ ...secrets, STEP_ENV_KEPT: '' }).map((k) => [k, process.env[k]]));
        Object.assign(process.env, secrets, { STEP_ENV_KEPT: 'yes' });
        try {
          const id = await job([`node -e "console.log(JSON.stringify(process.env))"`]);
          const run = await runAndWait(id);
          expect(run.status, run.run_steps[0].logs).toBe(10);
          const env = JSON.parse(run.run_steps[0].logs);
          for (const k of Object.keys(secrets)) expect(env, k).not.toHaveProperty(k);
          expect(env).toMatchObject({ STEP_ENV_KEPT: 'yes', RUNLENS_RUN_ID: String(run.id), RUNLENS_STEP: '1', RUNLENS_STEP_COMMANDS: 'node' });
          expect(env.RUNLENS_TELEMETRY_DIR).toMatch(/step-1-telemetry$/);
        } finally {
          for (const [k, v] of Object.entries(saved)) {
            if (v === undefined) delete process.env[k];
            else process.env[k] = v;
          }
        }
      });

      it('shows the project and environment names a job was given (or their defaults)', async () => {
        const base = { project_id: 7, environment_id: 8, execute_steps: ['node -v'] };
        const named = await h.api('POST', JOBS, { ...base, name: 'named', project_name: 'analytics', environment_name: 'prod', dbt_version: null });
        expect(named.status, named.text).toBe(201);
        expect(named.json.data).toMatchObject({ project_name: 'analytics', environment_name: 'prod', dbt_version: null });
        const plain = await h.api('POST', JOBS, { ...base, name: 'plain' });
        expect(plain.json.data).toMatchObject({ project_name: 'Project 7', environment_name: 'Environment 8' });
        expect((await h.api('GET', `${JOBS}${named.json.data.id}/`)).json.data).toMatchObject({ project_name: 'analytics', environment_name: 'prod' });
      });

      it('refuses a NUL character in a job or run text field with 400 naming the field', async () => {
        const base = { name: 'j', project_id: 1, environment_id: 1, execute_steps: ['node -v'] };
        for (const field of ['name', 'dbt_version', 'project_name', 'environment_name']) {
          const r = await h.api('POST', JOBS, { ...base, [field]: 'x\u0000' });
          expect(r.status, field).toBe(400);
          expect(r.json.status.user_message, field).toContain(`${field} must not contain a NUL character`);
        }
        const id = await job(['node -v']);
        const r = await h.api('POST', `/api/v2/accounts/{acct}/jobs/${id}/run/`, { cause: 'c\u0000' });
        expect(r.status).toBe(400);
        expect(r.json.status.user_message).toContain('cause must not contain a NUL character');
        const lone = await h.api('POST', JOBS, { ...base, name: 'j\udc00' });
        expect(lone.status).toBe(400);
        expect(lone.json.status.user_message).toContain('name must not contain a lone surrogate \\udc00');
      });

      it('a step that prints a NUL character succeeds, its log keeps the text (NUL as U+FFFD) and the next step runs', async () => {
        const id = await job([`node -e "process.stdout.write('a'+String.fromCharCode(0)+'b')"`, 'node -e "console.log(\'two\')"']);
        const run = await runAndWait(id);
        expect(run).toMatchObject({ status: 10, is_success: true });
        expect(run.run_steps.map((s: any) => s.logs)).toEqual(['a\ufffdb', 'two\n']);
      });

      it('a run the service fails to carry out is closed: errored then completed, no step left running', async () => {
        await subscribe({ client_url: `${rx.url}/ok` });
        const id = await job(['node -v']);
        const save = h.store.saveRunStep.bind(h.store);
        let calls = 0;
        h.store.saveRunStep = async (s, owner) => {
          if (++calls === 2) throw new Error('disk full');
          return save(s, owner);
        };
        const run = await runAndWait(id);
        h.store.saveRunStep = save;
        expect(run).toMatchObject({ status: 20, is_error: true });
        expect(run.status_message).toMatch(/disk full/);
        expect(run.run_steps.every((s: any) => s.status !== 3)).toBe(true);
        await rx.waitFor((d) => d.length === 3);
        expect(rx.deliveries.map((d) => d.json.eventType)).toEqual(['job.run.started', 'job.run.errored', 'job.run.completed']);
      });

      it('a run whose close failed while the store was down is closed once the store answers again (errored, completed)', async () => {
        // a database restart: the step's result and the run's close both fail, the process lives on
        await subscribe({ client_url: `${rx.url}/ok` });
        const id = await job(['node -v']);
        const save = h.store.saveRunStep.bind(h.store);
        const update = h.store.updateRun.bind(h.store);
        let down = false;
        let calls = 0;
        h.store.saveRunStep = async (s, owner) => {
          if (++calls === 2) down = true;
          if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
          return save(s, owner);
        };
        h.store.updateRun = async (...a) => {
          if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
          return update(...a);
        };
        const warnings: string[] = [];
        const onWarning = (w: Error) => warnings.push(w.message);
        process.on('warning', onWarning);
        try {
          const run = await runAndWait(id);
          expect(run.status).toBe(3);
          await until(async () => warnings.some((w) => /closing it failed too/.test(w)), 'the failed close');
          down = false;
          const closed = await until(async () => {
            const r = (await h.api('GET', `/api/v2/accounts/{acct}/runs/${run.id}/?include_related=["run_steps"]`)).json.data;
            return r.status === 20 ? r : undefined;
          }, 'the run closed');
          expect(closed.status_message).toMatch(/ECONNREFUSED/);
          expect(closed.run_steps.every((s: any) => s.status !== 3)).toBe(true);
          await rx.waitFor((d) => d.length === 3);
          expect(rx.deliveries.map((d) => d.json.eventType)).toEqual(['job.run.started', 'job.run.errored', 'job.run.completed']);
        } finally {
          process.off('warning', onWarning);
          h.store.saveRunStep = save;
          h.store.updateRun = update;
        }
      });

      it('a process renews its hold only on the runs it is carrying out: one it could not close is left for others to close', async () => {
        await subscribe({ client_url: `${rx.url}/ok` });
        const id = await job(['node -v']);
        const save = h.store.saveRunStep.bind(h.store);
        const update = h.store.updateRun.bind(h.store);
        let calls = 0;
        // this process alone cannot write the run (its connection broke), other processes can
        h.store.saveRunStep = async (s, owner) => {
          if (++calls >= 2) throw new Error('connection terminated');
          return save(s, owner);
        };
        h.store.updateRun = async () => {
          throw new Error('connection terminated');
        };
        try {
          const run = await runAndWait(id);
          const taken = await until(async () => {
            const runs = await h.store.claimAbandonedRuns(toMicros(Date.now()), { owner: 'another process', until: toMicros(Date.now() + 60_000) });
            return runs.find((r) => r.id === run.id);
          }, 'the run left to another process');
          expect(taken.finishedAt).toBeNull();
        } finally {
          h.store.saveRunStep = save;
          h.store.updateRun = update;
        }
      });

      it('a run another process held until its lease ran out is closed saying so, not that the service stopped', async () => {
        await subscribe({ client_url: `${rx.url}/ok` });
        const id = await job(['node -v']);
        const now = toMicros(Date.now());
        const run = await h.store.createRun({ accountId: h.accountId, jobId: id, status: 3, statusMessage: null, cause: 'c', createdAt: now, startedAt: now,
          finishedAt: null, erroredAt: null }, { owner: 'a process cut off from the database', until: now - 1 }, () => []);
        await h.svc.runner.closeAbandonedRuns(false);
        const closed = (await h.store.getRun(h.accountId, run.id))!;
        expect(closed.status).toBe(20);
        expect(closed.statusMessage).toMatch(/lease ran out/);
      });

      it('a run is finished once: retaking its own run from a process that held it for a while does not close it a second time', async () => {
        // On a busy machine a process's lease can run out while its run goes on: another process takes the
        // run, then its own lease runs out before it closes the run, and the first process takes it back.
        await subscribe({ client_url: `${rx.url}/ok` });
        const id = await job([`node -e "const t=setInterval(()=>{if(require('fs').existsSync('go'))clearInterval(t)},20)"`]);
        const r = await h.api('POST', `/api/v2/accounts/{acct}/jobs/${id}/run/`, { cause: 'slow machine' });
        expect(r.status, r.text).toBe(200);
        const runId = Number(r.json.data.id);
        // taken while its step runs (a write of this process's while the other holds the run is refused)
        await until(async () => (await h.store.listRunSteps(runId)).length === 1, 'step 1 running');
        const far = toMicros(Date.now() + 3_600_000);
        // (again until it is taken: a claim skips a run whose row a write of the runner holds locked at that moment)
        const taken = await until(async () => (await h.store.claimAbandonedRuns(far, { owner: 'another process', until: toMicros(Date.now() - 1000) })).map((x) => x.id).find((x) => x === runId), 'the run taken');
        expect(taken).toBe(runId);
        await h.svc.runner.closeAbandonedRuns(false);
        const runDir = await until(async () => (existsSync(join(db.dir, 'runs')) ? readdirSync(join(db.dir, 'runs')) : []).find((n) => n.startsWith(`${runId}-`)), 'the run folder');
        writeFileSync(join(db.dir, 'runs', runDir, 'go'), '');
        await h.svc.runner.idle();
        const run = (await h.api('GET', `/api/v2/accounts/{acct}/runs/${runId}/`)).json.data;
        expect(run).toMatchObject({ status: 10, is_success: true });
        await rx.waitFor((d) => d.length >= 2);
        await new Promise((res) => setTimeout(res, 300)); // a second completed would be due by now
        expect(rx.deliveries.map((d) => d.json.eventType)).toEqual(['job.run.started', 'job.run.completed']);
      });

      it('a process that lost its run writes nothing more to it: its steps, artifacts and events stay as the closer left them', async () => {
        // A paused process (kill -STOP) outlives its lease; another process closes its run; then it wakes up.
        await subscribe({ client_url: `${rx.url}/ok` });
        const wait = `node -e "const fs=require('fs');const t=setInterval(()=>{if(fs.existsSync('go')){clearInterval(t);` +
          `fs.writeFileSync(process.env.RUNLENS_TELEMETRY_DIR+'/t.parquet','PAR1-fake')}},20)"`;
        const id = await job([wait, `node -e "require('fs').writeFileSync('second','')"`]);
        const r = await h.api('POST', `/api/v2/accounts/{acct}/jobs/${id}/run/`, { cause: 'paused process' });
        expect(r.status, r.text).toBe(200);
        const runId = Number(r.json.data.id);
        await until(async () => (await h.store.listRunSteps(runId)).length === 1, 'step 1 running');
        // paused: this process no longer renews its lease; another process closes the run once the lease ran out
        await h.svc.runner.stop();
        const other = new JobRunner({ store: h.store, clock: systemClock, stepCommands: ['node'], workDir: join(db.dir, 'other-runs'),
          onEvents: () => h.svc.dispatcher.kick(), leaseMs: 60_000 });
        await until(async () => (await other.closeAbandonedRuns(false)) === 1, 'the run closed by the other process');
        const closedRun = (await h.store.getRun(h.accountId, runId))!;
        const closedSteps = await h.store.listRunSteps(runId);
        expect(closedRun).toMatchObject({ status: 20 });
        expect(closedRun.statusMessage).toMatch(/lease ran out/);
        expect(closedSteps.map((s) => [s.index, s.status, s.exitCode])).toEqual([[1, 20, null]]);
        const runDir = await until(async () => readdirSync(join(db.dir, 'runs')).find((n) => n.startsWith(`${runId}-`)), 'the run folder');
        // the operator of the process that lost the run is told, once
        const warnings: string[] = [];
        const onWarning = (w: Error) => warnings.push(w.message);
        process.on('warning', onWarning);
        writeFileSync(join(db.dir, 'runs', runDir, 'go'), '');
        await h.svc.runner.idle();
        expect(await h.store.getRun(h.accountId, runId)).toEqual(closedRun);
        expect(await h.store.listRunSteps(runId)).toEqual(closedSteps);
        expect(await h.store.getArtifact(h.accountId, runId, 'telemetry-1-otel.parquet')).toBeNull();
        expect(existsSync(join(db.dir, 'runs', runDir, 'second'))).toBe(false);
        await rx.waitFor((d) => d.length >= 3);
        await new Promise((res) => setTimeout(res, 300)); // a late event would be due by now
        expect(rx.deliveries.map((d) => d.json.eventType)).toEqual(['job.run.started', 'job.run.errored', 'job.run.completed']);
        process.off('warning', onWarning);
        expect(warnings.filter((w) => w.includes(`run ${runId} was closed by another process`))).toHaveLength(1);
      });

      it('a finished run is not updated again, whoever holds it', async () => {
        await subscribe({ client_url: `${rx.url}/ok` });
        const id = await job(['node -v']);
        const run = await runAndWait(id);
        const stored = (await h.store.getRun(h.accountId, run.id))!;
        const far = toMicros(Date.now() + 3_600_000);
        expect(await h.store.claimAbandonedRuns(far, { owner: 'another process', until: far })).toEqual([]);
        // even its own holder's late write (with its event) is refused
        const owner = h.svc.runner.owner;
        const late: Parameters<Store['updateRun']>[2] = [{ accountId: h.accountId, jobId: id, eventType: 'job.run.completed', now: toMicros(Date.now()),
          newEventId: () => eventId(Date.now()), payloadFor: (s, eid) => JSON.stringify({ accountId: s.accountId, webhookId: s.id, eventId: eid, eventType: 'job.run.completed', data: {} }) }];
        expect(await h.store.updateRun({ ...stored, status: 20 }, owner, late)).toBe(false);
        expect((await h.store.getRun(h.accountId, run.id))!.status).toBe(10);
      });

      it('runs steps in order and emits started then completed with the section 2C payload', async () => {
        const sub = await subscribe({ client_url: `${rx.url}/ok` });
        const id = await job(['node -e "console.log(\'one\')"', 'node -e "console.log(\'two\')"']);
        const run = await runAndWait(id);
        expect(run).toMatchObject({ status: 10, status_humanized: 'Success', is_success: true, trigger: { cause: 'nightly schedule' } });
        expect(run.run_steps.map((s: any) => [s.index, s.status, s.logs.trim(), s.telemetry_artifact])).toEqual([[1, 10, 'one', null], [2, 10, 'two', null]]);
        await rx.waitFor((d) => d.length === 2);
        expect(rx.deliveries.map((d) => d.json.eventType)).toEqual(['job.run.started', 'job.run.completed']);
        for (const d of rx.deliveries) {
          expect(d.verified).toBe(true);
          expect(d.standardVerified).toBe(true);
          expect(d.headers['webhook-id']).toBe(d.json.eventId);
          expect(d.headers['content-type']).toBe('application/json');
        }
        const [started, completed] = rx.deliveries.map((d) => d.json);
        expect(Object.keys(started!)).toEqual(['accountId', 'webhookId', 'eventId', 'timestamp', 'eventType', 'webhookName', 'data']);
        expect(started).toMatchObject({ accountId: h.accountId, webhookId: sub.id, webhookName: 'hook' });
        expect(started!.eventId).toMatch(/^wev_[0-9A-Za-z]{27}$/);
        expect(started!.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
        expect(started!.data).toEqual({
          jobId: String(id), jobName: 'nightly', runId: String(run.id), environmentId: '8', environmentName: 'Environment 8', toolVersion: '2.0.0',
          dbtVersion: '2.0.0', projectName: 'Project 7', projectId: '7', runStatus: 'Running', runStatusCode: 3, runStatusMessage: 'None', runReason: 'nightly schedule',
          runStartedAt: started!.data.runStartedAt,
        });
        // the interface's name and the hosted service's (reference webhooks 1.4), in the signed body
        expect(Object.keys(started!.data).slice(5, 7)).toEqual(['toolVersion', 'dbtVersion']);
        expect(completed!.data).toMatchObject({ toolVersion: '2.0.0', dbtVersion: '2.0.0' });
        expect(started!.data.runStartedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(completed!.data).toMatchObject({ runStatus: 'Success', runStatusCode: 10 });
        expect(completed!.data.runFinishedAt).toMatch(/Z$/);
        expect(completed!.data).not.toHaveProperty('runErroredAt');
      });

      it('an errored run sends errored at once and completed (Errored) after the artifacts are served', async () => {
        await subscribe({ client_url: `${rx.url}/ok`, event_types: ['job.run.errored', 'job.run.completed'] });
        const id = await job([copyTelemetryStep(PRODUCED('clean-build.parquet'), 't.parquet'), 'node -e "process.exit(3)"', 'node -e "console.log(\'never\')"']);
        // When completed arrives, the artifact must already be downloadable.
        const artifactAtCompletion = new Promise<number>((resolve) => {
          const poll = setInterval(async () => {
            const c = rx.deliveries.find((d) => d.json.eventType === 'job.run.completed');
            if (!c) return;
            clearInterval(poll);
            const res = await h.api('GET', `/api/v2/accounts/{acct}/runs/${c.json.data.runId}/artifacts/metadata/telemetry-1-otel.parquet?step=1`);
            resolve(res.status);
          }, 1);
        });
        const run = await runAndWait(id);
        expect(run).toMatchObject({ status: 20, is_error: true });
        expect(run.status_message).toMatch(/step 2/);
        expect(run.run_steps.map((s: any) => s.status)).toEqual([10, 20]);
        expect(run.run_steps[0].telemetry_artifact).toBe('telemetry-1-otel.parquet');
        await rx.waitFor((d) => d.length === 2);
        // made in this order, but delivered concurrently: a receiver orders them by their times
        const byType = (t: string) => rx.deliveries.find((d) => d.json.eventType === t)?.json;
        const [errored, completed] = [byType('job.run.errored'), byType('job.run.completed')];
        expect(Date.parse(errored!.data.runErroredAt)).toBeLessThanOrEqual(Date.parse(completed!.data.runFinishedAt));
        expect(errored!.data).toMatchObject({ runStatus: 'Errored', runStatusCode: 20 });
        expect(errored!.data.runErroredAt).toMatch(/Z$/);
        expect(errored!.data).not.toHaveProperty('runFinishedAt');
        expect(completed!.data).toMatchObject({ runStatus: 'Errored', runStatusCode: 20 });
        expect(completed!.data.runFinishedAt).toMatch(/Z$/);
        expect(await artifactAtCompletion).toBe(200);
        const got = await new ArtifactsClient({ baseUrl: h.base, token: h.token, accountId: h.accountId }).fetchTelemetry(run.id, 1);
        expect(got).toEqual(readFileSync(PRODUCED('clean-build.parquet')));
        expect((await h.api('GET', `/api/v2/accounts/{acct}/runs/${run.id}/artifacts/metadata/telemetry-2-otel.parquet?step=2`)).status).toBe(404);
      });

      it('a step killed by a signal exits with 128 + its number, as shells report it, and the run says which signal', async () => {
        const id = await job([`node -e "process.kill(process.pid,'SIGTERM')"`, 'node -v']);
        const run = await runAndWait(id);
        expect(run).toMatchObject({ status: 20, is_error: true });
        expect(run.status_message).toBe(`step 1 (node -e "process.kill(process.pid,'SIGTERM')") killed by SIGTERM`);
        expect(run.run_steps.map((s: any) => [s.status, s.exit_code])).toEqual([[20, 143]]);
        expect(run.run_steps[0].logs).toContain('[runlens] step killed by SIGTERM');
      });

      it("a character whose bytes a step writes in two pieces stays one character in the step's log", async () => {
        // é is C3 A9 in UTF-8; the pause puts its two bytes in two reads of the pipe
        const id = await job([`node -e "process.stdout.write(Buffer.from([0x61,0xc3]));setTimeout(()=>process.stdout.write(Buffer.from([0xa9,0x62,0x0a])),200)"`]);
        const run = await runAndWait(id);
        expect(run.run_steps[0].logs).toBe('aéb\n');
      });

      it("the runner's note on a step is kept after a log cut at its cap", async () => {
        const id = await job([`node -e "process.stdout.write('x'.repeat(70000),()=>process.kill(process.pid,'SIGTERM'))"`]);
        const run = await runAndWait(id);
        const logs: string = run.run_steps[0].logs;
        const tail = '\n[runlens] log truncated\n[runlens] step killed by SIGTERM\n';
        expect(logs.slice(-tail.length - 4)).toBe('xxxx' + tail);
      });

      it('finds Parquet at the engine default path, and a step without telemetry has no artifact', async () => {
        const step = `node -e "const fs=require('fs');fs.mkdirSync('target/metadata',{recursive:true});fs.copyFileSync(process.argv[1],'target/metadata/otel.parquet')" ${JSON.stringify(PRODUCED('clean-build.parquet'))}`;
        // the third step writes nothing: the file the second left in the run's folder is not its telemetry
        const id = await job(['node -v', step, 'node -v']);
        const run = await runAndWait(id);
        expect(run.run_steps.map((s: any) => s.telemetry_artifact)).toEqual([null, 'telemetry-2-otel.parquet', null]);
        const c = new ArtifactsClient({ baseUrl: h.base, token: h.token, accountId: h.accountId });
        const all = await c.fetchAllTelemetry(run.id);
        expect(all.artifacts.map((a) => [a.step, a.bytes])).toEqual([[2, readFileSync(PRODUCED('clean-build.parquet'))]]);
        expect(all.notStored).toEqual([]);
      });

      const jsonlNote = samplesNote(FUSION);
      it.skipIf(jsonlNote.missing)(jsonlNote.title("a run starts in an empty folder: telemetry left in a folder of the same run id (another store's run) is not its artifact"), async () => {
        // another store that shared this data folder (a database reset, a switch of store) ran its run 1 here
        const left = join(db.dir, 'runs', '1', 'step-1-telemetry');
        mkdirSync(left, { recursive: true });
        copyFileSync(sample(FUSION, 'forwarder-otel-preview120.jsonl'), join(left, 'x.jsonl'));
        const id = await job(['node -v']);
        const run = await runAndWait(id);
        expect(run.id).toBe(1);
        expect(run).toMatchObject({ status: 10, is_success: true });
        expect(run.run_steps[0].telemetry_artifact).toBeNull();
        expect((await h.api('GET', `/api/v2/accounts/{acct}/runs/${run.id}/artifacts/telemetry-1-otel.parquet`)).status).toBe(404);
      });

      it.skipIf(jsonlNote.missing)(jsonlNote.title('$RUNLENS_TELEMETRY_DIR is a folder when the step starts: `cp FILE "$RUNLENS_TELEMETRY_DIR"` puts the file in it'), async () => {
        const src = sample(FUSION, 'forwarder-otel-preview72.jsonl');
        // cp itself, as a step's script would run it
        const id = await job([`node -e "require('child_process').execFileSync('cp',[process.argv[1],process.env.RUNLENS_TELEMETRY_DIR])" ${JSON.stringify(src)}`]);
        const run = await runAndWait(id);
        expect(run.run_steps[0]).toMatchObject({ status: 10, telemetry_artifact: 'telemetry-1-otel.parquet' });
        const bytes = await new ArtifactsClient({ baseUrl: h.base, token: h.token, accountId: h.accountId }).fetchTelemetry(run.id, 1);
        const out = join(db.dir, 'fetched.parquet');
        writeFileSync(out, bytes);
        let n = 0;
        for await (const _ of readRecords(out)) n++;
        expect(n).toBe(readFileSync(src, 'utf8').split('\n').filter((l) => l.trim()).length);
      });

      it.skipIf(jsonlNote.missing)(jsonlNote.title('converts a JSONL telemetry file named by --otel-file-name into the Parquet artifact'), async () => {
        const src = sample(FUSION, 'forwarder-otel_failed-preview120.jsonl');
        const step = `node -e "const fs=require('fs');fs.mkdirSync('logs',{recursive:true});fs.copyFileSync(process.argv[1],'logs/run.jsonl')" ${JSON.stringify(src)} --otel-file-name run.jsonl`;
        const id = await job([step]);
        const run = await runAndWait(id);
        expect(run.run_steps[0]).toMatchObject({ status: 10, telemetry_artifact: 'telemetry-1-otel.parquet' });
        const c = new ArtifactsClient({ baseUrl: h.base, token: h.token, accountId: h.accountId });
        const bytes = await c.fetchTelemetry(run.id, 1);
        expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
        const out = join(db.dir, 'fetched.parquet');
        writeFileSync(out, bytes);
        let n = 0;
        for await (const _ of readRecords(out)) n++;
        expect(n).toBe(readFileSync(src, 'utf8').split('\n').filter((l) => l.trim()).length);
      });

      it.skipIf(jsonlNote.missing)(jsonlNote.title("a file named by --log-path outside the run's folder (another run's) is not stored as the step's telemetry"), async () => {
        const src = sample(FUSION, 'forwarder-otel_failed-preview120.jsonl');
        const step = `node -e "const fs=require('fs');fs.mkdirSync('../elsewhere/logs',{recursive:true});fs.copyFileSync(process.argv[1],'../elsewhere/logs/run.jsonl')" ${JSON.stringify(src)} --log-path ../elsewhere/logs --otel-file-name run.jsonl`;
        const run = await runAndWait(await job([step]));
        expect(run.run_steps[0]).toMatchObject({ status: 10, telemetry_artifact: null });
      });

      describe('steps that write the same telemetry file', () => {
        /**
         * A stand-in engine: `node fake-engine.mjs SRC [flags]` puts SRC's bytes where the engine would
         * (Parquet truncated in place as the engine's sink does, JSONL appended as its file sink does, or
         * truncated in place with --truncate, or removed and written anew with --replace).
         */
        const FAKE_ENGINE = `import fs from 'node:fs';
const [src, ...rest] = process.argv.slice(2);
const flag = (f) => { const i = rest.indexOf(f); return i < 0 ? undefined : rest[i + 1]; };
const bytes = fs.readFileSync(src);
const jsonl = flag('--otel-file-name');
const dir = jsonl ? 'logs' : 'target/metadata';
const file = dir + '/' + (jsonl ?? flag('--otel-parquet-file-name') ?? 'otel.parquet');
fs.mkdirSync(dir, { recursive: true });
// --replace: a new file in place of the old one (removed first), as a writer that rewrites it whole
if (rest.includes('--replace')) fs.rmSync(file, { force: true });
const fd = fs.openSync(file, jsonl && !rest.includes('--truncate') && !rest.includes('--replace') ? 'a' : 'w');
fs.writeSync(fd, bytes);
fs.closeSync(fd);
`;
        let dir: string;
        let engine: string;
        const refs = new Map<string, string>();
        /** A file runlens's own producer writes: `nodes` nodes, seed `seed`, as `ext`. */
        async function produced(nodes: number, seed: number, ext: 'parquet' | 'jsonl'): Promise<string> {
          const key = `${nodes}-${seed}.${ext}`;
          if (!refs.has(key)) {
            const out = join(dir, key);
            const r = await runInProcess(['generate', '-o', out, '--nodes', String(nodes), '--seed', String(seed)]);
            expect(r.code, r.stderr).toBe(0);
            refs.set(key, out);
          }
          return refs.get(key)!;
        }
        /** The runs runlens's reader finds in a file. */
        async function runsIn(file: string): Promise<unknown[]> {
          const r = await runInProcess(['runs', file, '--format', 'json']);
          expect(r.code, r.stderr).toBe(0);
          // which file a run came from differs between the reference and the artifact
          return JSON.parse(r.stdout).map(({ files: _, ...run }: Record<string, unknown>) => run);
        }
        /** The runs in each step's artifact, null for a step without one. */
        async function artifactRuns(run: any): Promise<(unknown[] | null)[]> {
          const c = new ArtifactsClient({ baseUrl: h.base, token: h.token, accountId: h.accountId });
          const out: (unknown[] | null)[] = [];
          for (const s of run.run_steps) {
            if (!s.telemetry_artifact) {
              out.push(null);
              continue;
            }
            const file = join(dir, `run${run.id}-step${s.index}.parquet`);
            writeFileSync(file, await c.fetchTelemetry(run.id, s.index));
            out.push(await runsIn(file));
          }
          return out;
        }
        beforeEach(() => {
          dir = join(db.dir, 'engine');
          mkdirSync(dir, { recursive: true });
          engine = join(dir, 'fake-engine.mjs');
          writeFileSync(engine, FAKE_ENGINE);
          refs.clear();
        });

        for (const flags of ['', ' --otel-parquet-file-name same.parquet']) {
          it(`each step's artifact holds its own run when both write the same Parquet file (${flags ? 'named' : 'default path'})`, async () => {
            const [a, b] = [await produced(8, 11, 'parquet'), await produced(6, 12, 'parquet')];
            const id = await job([`node ${engine} ${a}${flags}`, `node ${engine} ${b}${flags}`]);
            const run = await runAndWait(id);
            expect(run).toMatchObject({ status: 10, is_success: true });
            expect(await artifactRuns(run)).toEqual([await runsIn(a), await runsIn(b)]);
          });
        }

        it("each step's artifact holds only the invocations it appended to a JSONL file both steps append to", async () => {
          const [a, b] = [await produced(8, 11, 'jsonl'), await produced(6, 12, 'jsonl')];
          const id = await job([`node ${engine} ${a} --otel-file-name otel.jsonl`, `node ${engine} ${b} --otel-file-name otel.jsonl`]);
          const run = await runAndWait(id);
          expect(run).toMatchObject({ status: 10, is_success: true });
          const [first, second] = [await runsIn(a), await runsIn(b)];
          expect(first).toHaveLength(1);
          expect(await artifactRuns(run)).toEqual([first, second]);
        });

        it("a JSONL file a later step writes anew, larger, in place is that step's whole file, not an append", async () => {
          const [a, b] = [await produced(6, 12, 'jsonl'), await produced(8, 11, 'jsonl')];
          const id = await job([`node ${engine} ${a} --otel-file-name otel.jsonl --truncate`, `node ${engine} ${b} --otel-file-name otel.jsonl --truncate`]);
          const run = await runAndWait(id);
          expect(await artifactRuns(run)).toEqual([await runsIn(a), await runsIn(b)]);
        });

        it("the note on telemetry appended that does not convert names the step's file and says only its part was read", async () => {
          const a = await produced(8, 11, 'jsonl');
          const cut = join(dir, 'cut.jsonl');
          writeFileSync(cut, readFileSync(await produced(6, 12, 'jsonl'), 'utf8').trimEnd().slice(0, -20));
          const id = await job([`node ${engine} ${a} --otel-file-name otel.jsonl`, `node ${engine} ${cut} --otel-file-name otel.jsonl`]);
          const run = await runAndWait(id);
          expect(await artifactRuns(run)).toEqual([await runsIn(a), null]);
          const note = /^\[runlens\] telemetry (.*) not stored: (.*)$/m.exec(run.run_steps[1].logs);
          expect(note?.[1]).toMatch(/\/logs\/otel\.jsonl$/);
          expect(note?.[2]).toContain(`${note?.[1]}:`);
          expect(note?.[2]).toMatch(/\(in the part this step appended, from byte \d+\)$/);
          expect(note?.[2]).not.toContain('kept');
        });

        it("a step's telemetry is kept when a later step deletes the file (dbt clean)", async () => {
          const a = await produced(8, 11, 'parquet');
          const id = await job([`node ${engine} ${a}`, `node -e "require('fs').rmSync('target',{recursive:true})"`]);
          const run = await runAndWait(id);
          expect(run).toMatchObject({ status: 10, is_success: true });
          expect(await artifactRuns(run)).toEqual([await runsIn(a), null]);
        });
        /** The runs in a list of files, in one order whatever the files' order. */
        async function runsOf(...files: string[]): Promise<unknown[]> {
          const runs: unknown[] = [];
          // one at a time: runInProcess captures this process's output
          for (const f of files) runs.push(...(await runsIn(f)));
          return runs.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
        }

        it('a step that writes several files into $RUNLENS_TELEMETRY_DIR has every one in its artifact', async () => {
          const [clean, failed] = [PRODUCED('clean-build.jsonl'), PRODUCED('failed-build.parquet')];
          const step = `node -e "const fs=require('fs'),d=process.env.RUNLENS_TELEMETRY_DIR;fs.copyFileSync(process.argv[1],d+'/a.jsonl');fs.copyFileSync(process.argv[2],d+'/b.parquet')" ${JSON.stringify(clean)} ${JSON.stringify(failed)}`;
          const run = await runAndWait(await job([step]));
          expect(run.run_steps[0]).toMatchObject({ status: 10, telemetry_artifact: 'telemetry-1-otel.parquet', logs: '' });
          const [runs] = await artifactRuns(run);
          expect((runs ?? []).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))).toEqual(await runsOf(clean, failed));
        });

        it("a cut-off Parquet file is not stored, and the step's log says why; the step's other files are", async () => {
          const whole = PRODUCED('failed-build.parquet');
          const step = `node -e "const fs=require('fs'),d=process.env.RUNLENS_TELEMETRY_DIR,b=fs.readFileSync(process.argv[1]);` +
            `fs.writeFileSync(d+'/otel.parquet',b.subarray(0,Math.floor(b.length/2)));fs.copyFileSync(process.argv[2],d+'/ok.jsonl')" ${JSON.stringify(whole)} ${JSON.stringify(PRODUCED('clean-build.jsonl'))}`;
          const cutOnly = `node -e "const fs=require('fs'),b=fs.readFileSync(process.argv[1]);` +
            `fs.writeFileSync(process.env.RUNLENS_TELEMETRY_DIR+'/otel.parquet',b.subarray(0,Math.floor(b.length/2)))" ${JSON.stringify(whole)}`;
          const run = await runAndWait(await job([step, cutOnly]));
          expect(run).toMatchObject({ status: 10, is_success: true });
          expect(run.run_steps.map((s: any) => s.telemetry_artifact)).toEqual(['telemetry-1-otel.parquet', null]);
          expect(await artifactRuns(run)).toEqual([await runsIn(PRODUCED('clean-build.jsonl')), null]);
          for (const s of run.run_steps) {
            const note = /^\[runlens\] telemetry (.*) not stored: (.*)$/m.exec(s.logs);
            expect(note?.[1], s.logs).toMatch(/\/step-\d-telemetry\/otel\.parquet$/);
            expect(note?.[2]).not.toContain('kept');
          }
          const all = await new ArtifactsClient({ baseUrl: h.base, token: h.token, accountId: h.accountId }).fetchAllTelemetry(run.id);
          expect(all.notStored.map((n) => n.step)).toEqual([1, 2]);
        });

        it("a step that prints the runner's telemetry lines does not make its telemetry said not stored", async () => {
          const forge = `node -e "console.log('[runlens] telemetry /etc/shadow not stored: disk full')"`;
          const only = await runAndWait(await job([forge]));
          expect(only.run_steps[0].logs).toBe('[runlens] telemetry /etc/shadow not stored: disk full\n');
          const client = new ArtifactsClient({ baseUrl: h.base, token: h.token, accountId: h.accountId });
          expect(await client.fetchAllTelemetry(only.id)).toEqual({ artifacts: [], notStored: [] });
          const run = await runAndWait(await job([forge, copyTelemetryStep(PRODUCED('clean-build.parquet'), 't.parquet')]));
          expect(run.run_steps.map((s: any) => s.telemetry_artifact)).toEqual([null, 'telemetry-2-otel.parquet']);
          const all = await client.fetchAllTelemetry(run.id);
          expect(all.notStored).toEqual([]);
          expect(all.artifacts.map((a) => a.step)).toEqual([2]);
        });

        it("an engine JSONL file removed and written anew by a later step, starting with the earlier step's bytes, is that step's whole file", async () => {
          const [a, b] = [await produced(8, 11, 'jsonl'), await produced(6, 12, 'jsonl')];
          const ab = join(dir, 'ab.jsonl');
          writeFileSync(ab, readFileSync(a, 'utf8') + readFileSync(b, 'utf8'));
          const id = await job([`node ${engine} ${a} --otel-file-name otel.jsonl --replace`, `node ${engine} ${ab} --otel-file-name otel.jsonl --replace`]);
          const run = await runAndWait(id);
          expect(await artifactRuns(run)).toEqual([await runsIn(a), await runsIn(ab)]);
        });

        it("a run whose service stopped after errored, before storing its artifacts, says its steps' telemetry was not stored and why", async () => {
          // the service stops before it stores an artifact: putArtifact holds until the test lets it go (refused)
          let release!: (held: boolean) => void;
          const held = new Promise<boolean>((r) => (release = r));
          cleanups.push(async () => release(false));
          h.store.putArtifact = () => held;
          // step 2 prints the runner's pending line: its own output, which stays as it printed it
          const pending = '[runlens] telemetry /etc/shadow kept, to be stored when the run ends';
          const id = await job([copyTelemetryStep(PRODUCED('clean-build.parquet'), 't.parquet'), `node -e "console.log('${pending}');process.exit(1)"`]);
          const r = await h.api('POST', `/api/v2/accounts/{acct}/jobs/${id}/run/`, { cause: 'stopped' });
          const runId = Number(r.json.data.id);
          await until(async () => (await h.store.getRun(h.accountId, runId))?.status === 20, 'errored');
          await h.svc.runner.stop();
          // the next process on the same store
          const next = new JobRunner({ store: h.store, clock: systemClock, stepCommands: ['node'], workDir: join(db.dir, 'next-runs'), onEvents: () => {}, leaseMs: 60_000 });
          expect(await next.closeAbandonedRuns(true)).toBe(1);
          const run = (await h.api('GET', `/api/v2/accounts/{acct}/runs/${runId}/?include_related=["run_steps"]`)).json.data;
          expect(run).toMatchObject({ status: 20, is_complete: true });
          expect(run.run_steps[0].telemetry_artifact).toBeNull();
          expect(run.run_steps[0].logs).toMatch(/^\[runlens\] telemetry \S*\/t\.parquet not stored: the service stopped while this run was in progress$/m);
          expect(run.run_steps[0].logs).not.toMatch(/to be stored/);
          expect(run.run_steps[1].logs).toBe(`${pending}\n`);
          const all = await new ArtifactsClient({ baseUrl: h.base, token: h.token, accountId: h.accountId }).fetchAllTelemetry(runId);
          expect(all.artifacts).toEqual([]);
          expect(all.notStored).toEqual([{ step: 1, reason: expect.stringMatching(/t\.parquet: the service stopped while this run was in progress$/) }]);
        });
      });

      it('filters deliveries by job_ids and event_types', async () => {
        const id1 = await job(['node -v']);
        const id2 = await job(['node -v']);
        await subscribe({ name: 'only-job-2', client_url: `${rx.url}/job2`, job_ids: [id2] });
        await subscribe({ name: 'only-started', client_url: `${rx.url}/started`, event_types: ['job.run.started'] });
        await subscribe({ name: 'inactive', client_url: `${rx.url}/inactive`, active: false });
        await runAndWait(id1);
        await runAndWait(id2);
        await rx.waitFor((d) => d.length === 4);
        await h.svc.dispatcher.idle();
        expect(rx.hits('/job2')).toBe(2);
        expect(rx.deliveries.filter((d) => d.path === '/job2').every((d) => d.json.data.jobId === String(id2))).toBe(true);
        expect(rx.deliveries.filter((d) => d.path === '/started').map((d) => d.json.eventType)).toEqual(['job.run.started', 'job.run.started']);
        expect(rx.hits('/inactive')).toBe(0);
      });
    });

    describe('delivery retries', () => {
      it.each([
        ['500', '/fail', /500/],
        ['a timeout', '/hang', /timeout/],
        ['a redirect (not followed)', '/redirect', /redirect 302/],
      ])('a receiver answering %s sees exactly 5 attempts with identical bytes', async (_what, path, err) => {
        await boot({ deliveryTimeoutMs: 150 });
        const d = await subscribe({ client_url: `${rx.url}${path}` });
        await enqueue();
        await until(async () => (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0]?.status === 'failed', 'failed event');
        await h.svc.dispatcher.idle();
        expect(rx.hits(path)).toBe(5);
        expect(rx.hits('/redirected')).toBe(0);
        const mine = rx.deliveries.filter((x) => x.path === path);
        expect(new Set(mine.map((x) => x.body)).size).toBe(1);
        expect(new Set(mine.map((x) => x.headers['webhook-id'])).size).toBe(1);
        expect(mine.every((x) => x.verified && x.standardVerified)).toBe(true);
        const ev = (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0];
        const receipts = (await h.api('GET', `${SUB(d.id)}/event/${ev.id}/receipt`)).json.data;
        expect(receipts.map((r: any) => r.attempt)).toEqual([1, 2, 3, 4, 5]);
        expect(receipts.every((r: any) => err.test(r.error_info))).toBe(true);
        const sub = (await h.api('GET', SUB(d.id))).json.data;
        expect(sub.http_status_code).toBe(path === '/hang' ? '0' : path === '/fail' ? '500' : '302');
        expect(sub.active).toBe(true); // one failed delivery does not archive
      });

      it.each(['/stall-body', '/stall-big-body'])('an answer whose body does not complete in time is a failure with no status code, like any timeout (%s)', async (path) => {
        await boot({ deliveryTimeoutMs: 150 });
        const d = await subscribe({ client_url: `${rx.url}${path}` });
        await enqueue();
        await until(async () => (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0]?.status === 'failed', 'failed event');
        await h.svc.dispatcher.idle();
        const ev = (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0];
        expect(ev.http_status_code).toBe('0');
        const receipts = (await h.api('GET', `${SUB(d.id)}/event/${ev.id}/receipt`)).json.data;
        expect(receipts).toHaveLength(5);
        for (const r of receipts) {
          expect(r.http_status_code).toBe('0');
          expect(r.error_info).toMatch(/answered 200 but the body did not complete.*timeout/);
        }
        expect((await h.api('GET', SUB(d.id))).json.data.http_status_code).toBe('0');
      });

      it('the deadline counts from the request going out: deliveries due at once to one endpoint do not wait for a connection', async () => {
        await boot({ deliveryTimeoutMs: 3000 });
        // two subscriptions to the endpoint, each with its share (half) of the 64 slots in flight
        const subs = [await subscribe({ client_url: `${rx.url}/together-64` }), await subscribe({ client_url: `${rx.url}/together-64` })];
        for (let i = 0; i < 32; i++) await enqueue();
        const succeeded = async (d: any) => (await h.api('GET', `${SUB(d.id)}/events?limit=100`)).json.data.filter((e: any) => e.status === 'succeeded').length;
        // every delivery answered, or one given up (it waited for a connection while its deadline ran)
        await until(async () => rx.abandoned() > 0 || (await succeeded(subs[0])) + (await succeeded(subs[1])) === 64, 'all delivered');
        expect(rx.abandoned()).toBe(0);
        expect(rx.hits('/together-64')).toBe(64);
      });

      it('keeps at most 20 KB of a response body in the delivery log', async () => {
        await boot();
        const d = await subscribe({ client_url: `${rx.url}/big` });
        await enqueue();
        await until(async () => (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0]?.status === 'succeeded', 'delivered');
        const ev = (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0];
        const [receipt] = (await h.api('GET', `${SUB(d.id)}/event/${ev.id}/receipt`)).json.data;
        expect(receipt.response_body).toHaveLength(20 * 1024);
        expect(receipt.http_status_code).toBe('200');
      });

      it('an answer with a NUL byte is recorded like any other: one attempt, succeeded, the NUL shown as U+FFFD', async () => {
        await boot();
        const d = await subscribe({ client_url: `${rx.url}/nul` });
        await enqueue();
        const ev = await until(async () => {
          const e = (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0];
          return e && e.status !== 'pending' ? e : null;
        }, 'event delivered or failed');
        await h.svc.dispatcher.idle();
        expect(ev).toMatchObject({ status: 'succeeded', attempts: 1, http_status_code: '200' });
        expect(rx.hits('/nul')).toBe(1);
        const receipts = (await h.api('GET', `${SUB(d.id)}/event/${ev.id}/receipt`)).json.data;
        expect(receipts).toHaveLength(1);
        expect(receipts[0]).toMatchObject({ http_status_code: '200', error_info: null, response_body: 'ok\ufffdnul' });
        const t = await h.api('GET', `${SUB(d.id)}/test`);
        expect(t.json.data).toMatchObject({ verification_error: null, verification_status_code: '200' });
        const test = (await h.api('GET', `${SUB(d.id)}/events`)).json.data.find((e: any) => e.test);
        expect(test).toMatchObject({ status: 'succeeded', attempts: 1 });
      });

      it('retries a timed-out attempt and stops at the first success', async () => {
        await boot({ deliveryTimeoutMs: 150 });
        const d = await subscribe({ client_url: `${rx.url}/hang-once` });
        await enqueue();
        await until(async () => (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0]?.status === 'succeeded', 'succeeded event');
        await h.svc.dispatcher.idle();
        expect(rx.hits('/hang-once')).toBe(2);
        expect((await h.api('GET', SUB(d.id))).json.data.http_status_code).toBe('200');
      });
    });

    describe('one hanging endpoint', () => {
      it("holds at most half the delivery slots: another subscription's delivery goes out while its backlog waits", async () => {
        // 4 slots, a backlog of 6 to an endpoint that never answers (within the test)
        await boot({ concurrency: 4, deliveryTimeoutMs: 600_000, pollMs: 3_600_000 });
        const hanging = await subscribe({ name: 'hanging', client_url: `${rx.url}/hang` });
        for (let i = 0; i < 6; i++) await enqueue();
        await rx.waitFor((d) => d.filter((x) => x.path === '/hang').length === 2, 'two requests open at the hanging endpoint');
        const healthy = await subscribe({ name: 'healthy', client_url: `${rx.url}/ok` });
        await enqueue(); // one event to each subscription, after the backlog
        await until(async () => (await h.store.listEvents(h.accountId, healthy.id, 0, 10)).items[0]?.status === 'succeeded', 'the healthy delivery');
        // the hanging endpoint's two requests are still open: nothing more was sent to it, and its other deliveries wait untouched
        expect(rx.hits('/hang')).toBe(2);
        expect(rx.hits('/ok')).toBe(1);
        const events = (await h.store.listEvents(h.accountId, hanging.id, 0, 100)).items;
        expect(events.every((e) => e.status === 'pending')).toBe(true);
        expect(events.map((e) => e.attempts).sort()).toEqual([0, 0, 0, 0, 0, 1, 1]);
        for (const e of events.filter((x) => x.attempts === 1)) {
          expect((await h.store.listReceipts(e.id)).map((r) => [r.httpStatusCode, r.errorInfo])).toEqual([[0, null]]);
        }
        // the waiting backlog does not make the dispatcher poll in a loop: the end of an attempt wakes it
        let claims = 0;
        const claimDue = h.store.claimDue.bind(h.store);
        h.store.claimDue = (...a) => {
          claims++;
          return claimDue(...a);
        };
        await new Promise((r) => setTimeout(r, 300));
        expect(claims).toBeLessThanOrEqual(1);
      });

      it('with every slot taken, due deliveries wait for an attempt to end, without the dispatcher polling in a loop', async () => {
        await boot({ concurrency: 4, deliveryTimeoutMs: 600_000, pollMs: 3_600_000 });
        for (let i = 0; i < 3; i++) await subscribe({ name: `hanging-${i}`, client_url: `${rx.url}/hang` });
        for (let i = 0; i < 2; i++) await enqueue(); // 6 deliveries, none of them to a subscription with its share in flight once 4 are
        await rx.waitFor((d) => d.filter((x) => x.path === '/hang').length === 4, 'four requests open');
        let lookups = 0;
        const nextDueAt = h.store.nextDueAt.bind(h.store);
        h.store.nextDueAt = (...a) => {
          lookups++;
          return nextDueAt(...a);
        };
        await new Promise((r) => setTimeout(r, 300));
        expect(lookups).toBeLessThanOrEqual(1);
        expect(rx.hits('/hang')).toBe(4);
      });
    });

    describe('archival and reactivation', () => {
      it('making a subscription inactive cancels its pending retries: making it active again does not revive them', async () => {
        // the retry waits an hour: it is pending, not in flight, when the subscription is switched off and on
        await boot({ retryDelaysMs: [3_600_000, 0, 0, 0] });
        const d = await subscribe({ client_url: `${rx.url}/fail` });
        await enqueue();
        const [pending] = await until(async () => {
          const evs = (await h.store.listEvents(h.accountId, d.id, 0, 10)).items;
          return evs.length === 1 && evs[0]!.attempts === 1 && evs[0]!.status === 'pending' ? evs : undefined;
        }, 'the first attempt failed, a retry pending');
        expect((await h.api('PUT', SUB(d.id), { active: false })).status).toBe(200);
        expect((await h.api('PUT', SUB(d.id), { active: true })).status).toBe(200);
        expect((await h.store.getEvent(h.accountId, d.id, pending!.id))!.status).toBe('cancelled');
        expect(await h.store.nextDueAt()).toBeNull();
        expect(rx.hits('/fail')).toBe(1);
      });

      it('archives after 1,000 consecutive failed deliveries; archived subscriptions get nothing', async () => {
        await boot({ retryDelaysMs: [0, 0, 0, 0] });
        const d = await subscribe({ client_url: `${rx.url}/fail` });
        const other = await subscribe({ client_url: `${rx.url}/ok` });
        for (let i = 0; i < 999; i++) await enqueue();
        await until(async () => (await h.store.getSubscription(h.accountId, d.id))!.consecutiveFailures === 999, '999 failed deliveries', 60_000);
        expect((await h.api('GET', SUB(d.id))).json.data).toMatchObject({ active: true, archived: false });
        await enqueue();
        await until(async () => (await h.store.getSubscription(h.accountId, d.id))!.archived, 'archival', 60_000);
        await h.svc.dispatcher.idle();
        expect(rx.hits('/fail')).toBe(5000);
        const got = (await h.api('GET', SUB(d.id))).json.data;
        expect(got).toMatchObject({ active: false, archived: true, http_status_code: '500' });
        expect(got.deactivate_reason).toMatch(/1000 consecutive failed deliveries/);
        expect(await enqueue()).toBe(1); // only the healthy subscription gets the next event
        await rx.waitFor((x) => x.filter((y) => y.path === '/ok').length === 1001);
        expect(rx.hits('/fail')).toBe(5000);
        expect((await h.api('GET', SUB(other.id))).json.data.active).toBe(true);
      });

      it('archives after 7 days of failed deliveries (injected clock); a success in between resets the streak', async () => {
        const clock = new ManualClock(Date.UTC(2026, 0, 1));
        await boot({ clock, retryDelaysMs: [0, 0, 0, 0] });
        const day = 86_400_000;
        const failing = await subscribe({ client_url: `${rx.url}/fail` });
        const waitFailed = async (n: number) =>
          until(async () => (await h.store.getSubscription(h.accountId, failing.id))!.consecutiveFailures >= n, `${n} failed`);
        await enqueue('job.run.completed', 1, clock.now());
        await waitFailed(1);
        clock.advance(6 * day);
        await enqueue('job.run.completed', 1, clock.now());
        await waitFailed(2);
        expect((await h.api('GET', SUB(failing.id))).json.data.archived).toBe(false);
        clock.advance(day);
        await enqueue('job.run.completed', 1, clock.now());
        await until(async () => (await h.store.getSubscription(h.accountId, failing.id))!.archived, 'archival by time');
        const got = (await h.api('GET', SUB(failing.id))).json.data;
        expect(got).toMatchObject({ active: false, archived: true });
        expect(got.deactivate_reason).toMatch(/7 days/);

        // sporadic failure: fail, succeed three days later, fail again four days after that -> still active
        const url = `${rx.url}/fail?sporadic`;
        const sporadic = await subscribe({ client_url: url });
        await enqueue('job.run.completed', 1, clock.now());
        await until(async () => (await h.store.getSubscription(h.accountId, sporadic.id))!.consecutiveFailures === 1, 'first failure');
        clock.advance(3 * day);
        await h.api('PUT', SUB(sporadic.id), { client_url: `${rx.url}/ok?sporadic` });
        await enqueue('job.run.completed', 1, clock.now());
        await until(async () => (await h.store.getSubscription(h.accountId, sporadic.id))!.httpStatusCode === 200, 'success');
        await h.api('PUT', SUB(sporadic.id), { client_url: url });
        clock.advance(4 * day + 1);
        await enqueue('job.run.completed', 1, clock.now());
        await until(async () => (await h.store.getSubscription(h.accountId, sporadic.id))!.consecutiveFailures === 1, 'failure after success');
        expect((await h.store.getSubscription(h.accountId, sporadic.id))!.archived).toBe(false);
      });

      it('only a delivery that failed for good counts toward the 7 days: a failed attempt that a retry makes good archives nothing', async () => {
        const clock = new ManualClock(Date.UTC(2026, 0, 9));
        await boot({ clock, retryDelaysMs: [0, 0, 0, 0] });
        const day = 86_400_000;
        const sub = await subscribe({ client_url: `${rx.url}/fail-once` });
        // one failed delivery, eight days ago
        await h.store.updateSubscription(h.accountId, sub.id, (s) => ({ ...s, consecutiveFailures: 1, failingSince: toMicros(clock.now() - 8 * day) }));
        await enqueue('job.run.completed', 1, clock.now());
        const ev = await until(async () => {
          const e = (await h.api('GET', `${SUB(sub.id)}/events`)).json.data[0];
          return e && e.status !== 'pending' ? e : null;
        }, 'event delivered or given up');
        await h.svc.dispatcher.idle();
        expect(ev).toMatchObject({ status: 'succeeded', attempts: 2, http_status_code: '200' });
        expect(rx.hits('/fail-once')).toBe(2);
        expect((await h.api('GET', SUB(sub.id))).json.data).toMatchObject({ active: true, archived: false, deactivate_reason: null });
        expect(await h.store.getSubscription(h.accountId, sub.id)).toMatchObject({ consecutiveFailures: 0, failingSince: null });
      });

      it('reactivates by PUT active true or by a new client_url, and delivers again', async () => {
        await boot();
        const archive = async (id: string) => {
          await h.store.updateSubscription(h.accountId, id, (s) => ({ ...s, archived: true, deactivateReason: 'test', consecutiveFailures: 1000, failingSince: 1 }));
        };
        const a = await subscribe({ client_url: `${rx.url}/a` });
        const b = await subscribe({ client_url: `${rx.url}/b` });
        await archive(a.id);
        await archive(b.id);
        expect(await enqueue()).toBe(0);
        const ra = await h.api('PUT', SUB(a.id), { active: true });
        expect(ra.json.data).toMatchObject({ active: true, archived: false, deactivate_reason: null });
        const rb = await h.api('PUT', SUB(b.id), { client_url: `${rx.url}/b2`, active: false });
        expect(rb.json.data).toMatchObject({ active: true, archived: false, client_url: `${rx.url}/b2` });
        expect((await h.store.getSubscription(h.accountId, a.id))!.consecutiveFailures).toBe(0);
        expect(await enqueue()).toBe(2);
        await rx.waitFor((d) => rx.hits('/a') === 1 && rx.hits('/b2') === 1);
        // an active subscription given a new URL and active false becomes inactive (the real client's step)
        const rc = await h.api('PUT', SUB(a.id), { client_url: `${rx.url}/a2`, active: false });
        expect(rc.json.data.active).toBe(false);
        // an inactive subscription given a new URL comes back
        const rd = await h.api('PUT', SUB(a.id), { client_url: `${rx.url}/a3` });
        expect(rd.json.data.active).toBe(true);
      });
    });

    describe('durability and retention', () => {
      it("a claim skips the subscriptions it is told to; a release hands claims back with their attempts and status as they were", async () => {
        await boot({ pollMs: 60_000 });
        await h.svc.dispatcher.stop(false); // drive the store by hand
        const a = await subscribe({ name: 'a', client_url: `${rx.url}/ok` });
        const b = await subscribe({ name: 'b', client_url: `${rx.url}/ok` });
        for (let i = 0; i < 3; i++) await enqueue();
        const now = toMicros(Date.now());
        const lease = now + 60_000_000;
        const mine = await h.store.claimDue(now, 10, lease, 'me', [a.id]);
        expect(mine.map((c) => c.event.subscriptionId)).toEqual([b.id, b.id, b.id]);
        const [begun, ...rest] = mine;
        await h.store.beginAttempts([{ eventId: begun!.event.id, subscriptionId: b.id, owner: 'me', receiptId: 'wre_release1', attempt: 1,
          dispatchedAt: now, requestHeaders: {}, cutOffReceiptId: null }]);
        const restIds = rest.map((c) => c.event.id);
        expect(await h.store.releaseClaims('another', restIds)).toBe(0); // only the owner's claims
        expect(await h.store.releaseClaims('me', restIds)).toBe(2);
        for (const id of restIds) expect(await h.store.getEvent(h.accountId, b.id, id)).toMatchObject({ status: 'pending', attempts: 0 });
        expect(await h.store.getEvent(h.accountId, b.id, begun!.event.id)).toMatchObject({ status: 'pending', attempts: 1 });
        // released, they are due to anyone at once; the begun one stays with its owner
        const theirs = await h.store.claimDue(now, 10, lease, 'another');
        expect(theirs.map((c) => c.event.id).sort()).toEqual([...restIds, ...(await h.store.listEvents(h.accountId, a.id, 0, 10)).items.map((e) => e.id)].sort());
        expect(theirs.every((c) => c.event.attempts === 0 && c.cutOffReceiptId === null)).toBe(true);
        expect(await h.store.listReceipts(restIds[0]!)).toEqual([]);
      });

      it('a late outcome of an attempt that was taken over does not move its event back (at most 5 attempts)', async () => {
        // The same dispatcher retakes its own claim once the lease ran out (a slow machine): its first
        // attempt's outcome then arrives after the second attempt began.
        await boot({ pollMs: 60_000 });
        await h.svc.dispatcher.stop(false); // drive the store by hand
        const d = await subscribe({ client_url: `${rx.url}/fail` });
        await enqueue();
        const now = toMicros(Date.now());
        const start = (attempt: number, owner: string): AttemptStart => ({ eventId: '', subscriptionId: d.id, owner, receiptId: `wre_late${attempt}${owner}`,
          attempt, dispatchedAt: now, requestHeaders: {}, cutOffReceiptId: null });
        const [claim] = await h.store.claimDue(now, 10, now - 1, 'first'); // a lease already run out
        const first = { ...start(1, 'first'), eventId: claim!.event.id };
        expect(await h.store.beginAttempts([first])).toEqual([claim!.event.id]);
        const [again] = await h.store.claimDue(now, 10, now + 10_000_000, 'first');
        expect(again!.event.attempts).toBe(1);
        expect(again!.cutOffReceiptId).toBe(first.receiptId);
        const second = { ...start(2, 'first'), eventId: again!.event.id, cutOffReceiptId: again!.cutOffReceiptId };
        await h.store.beginAttempts([second]);
        // attempt 1's answer arrives late, then attempt 2's
        const outcome = (a: AttemptStart, code: number) => ({ receipt: { id: a.receiptId, eventId: a.eventId, subscriptionId: d.id, attempt: a.attempt,
          dispatchedAt: now, httpStatusCode: code, errorInfo: `endpoint answered ${code}`, requestHeaders: {}, responseBody: '', durationMs: 1 },
        owner: a.owner, success: false, nextAttemptAt: now + 1, now });
        await h.store.recordAttempts([outcome(first, 500)], { maxConsecutiveFailures: 1000, maxFailingMicros: 1e15 });
        let ev = (await h.store.getEvent(h.accountId, d.id, first.eventId))!;
        expect(ev.attempts).toBe(2);
        await h.store.recordAttempts([outcome(second, 502)], { maxConsecutiveFailures: 1000, maxFailingMicros: 1e15 });
        ev = (await h.store.getEvent(h.accountId, d.id, first.eventId))!;
        expect(ev).toMatchObject({ attempts: 2, status: 'pending', httpStatusCode: 502 });
        // the log keeps what each attempt really got
        expect((await h.store.listReceipts(ev.id)).map((r) => [r.attempt, r.httpStatusCode])).toEqual([[1, 500], [2, 502]]);
      });

      it('an update that waits on DNS keeps a delivery outcome recorded meanwhile (failure count, archival)', async () => {
        let release!: () => void;
        let dns: Promise<void> | undefined;
        const resolveHost = async (host: string) => {
          if (host === 'slow.example.test' && dns) await dns;
          return ['93.184.215.14'];
        };
        await boot({ allowPrivateTargets: false, resolveHost, pollMs: 60_000 });
        await h.svc.dispatcher.stop(false); // drive the store by hand
        const url = 'https://slow.example.test/hook';
        const d = await subscribe({ client_url: url });
        await enqueue();
        // an update sending client_url (as the CLI and Terraform do, here unchanged) checks its address first
        dns = new Promise<void>((res) => (release = res));
        const put = h.api('PUT', SUB(d.id), { name: 'renamed', client_url: url });
        await new Promise((res) => setTimeout(res, 100));
        // meanwhile the event's last attempt fails, and that failure archives the subscription
        const now = toMicros(Date.now());
        const [claim] = await h.store.claimDue(now, 10, now + 10_000_000, 'disp');
        const start: AttemptStart = { eventId: claim!.event.id, subscriptionId: d.id, owner: 'disp', receiptId: 'wre_dns1', attempt: 1, dispatchedAt: now,
          requestHeaders: {}, cutOffReceiptId: null };
        await h.store.beginAttempts([start]);
        await h.store.recordAttempts([{ receipt: { id: start.receiptId, eventId: start.eventId, subscriptionId: d.id, attempt: 1, dispatchedAt: now,
          httpStatusCode: 500, errorInfo: 'endpoint answered 500', requestHeaders: {}, responseBody: '', durationMs: 1 },
        owner: 'disp', success: false, nextAttemptAt: null, now }], { maxConsecutiveFailures: 1, maxFailingMicros: 1e15 });
        expect((await h.store.getSubscription(h.accountId, d.id))!).toMatchObject({ consecutiveFailures: 1, archived: true });
        release();
        expect((await put).status).toBe(200);
        // the update's own fields, and the delivery state as the dispatcher left it
        expect((await h.store.getSubscription(h.accountId, d.id))!).toMatchObject({
          name: 'renamed', clientUrl: url, consecutiveFailures: 1, archived: true, httpStatusCode: 500,
        });
      });

      it('a test delivery cut off by a crash shows as cut off after the restart, not in progress for ever', async () => {
        db = await factory.fresh();
        store = await db.open();
        h = await startService(store, { workDir: join(db.dir, 'runs') });
        const d = await subscribe({ client_url: `${rx.url}/ok` });
        // what the test operation writes before its request leaves, then the process dies
        const hourAgo = toMicros(Date.now() - 3600_000);
        const id = eventId(Date.now() - 3600_000);
        await store.insertTestEvent({ id, accountId: h.accountId, subscriptionId: d.id, jobId: null, eventType: 'test', payload: '{}', status: 'pending',
          attempts: 0, nextAttemptAt: hourAgo, httpStatusCode: 0, createdAt: hourAgo, test: true });
        await store.beginAttempts([{ eventId: id, subscriptionId: d.id, owner: 'gone', receiptId: 'wre_testcut', attempt: 1, dispatchedAt: hourAgo,
          requestHeaders: {}, cutOffReceiptId: null }]);
        await h.svc.close(false);
        await store.close();

        await restartOnSameData();
        const ev = (await store.listEvents(h.accountId, d.id, 0, 10)).items.find((e) => e.id === id)!;
        expect(ev.status).toBe('failed');
        const [receipt] = await store.listReceipts(id);
        expect(receiptView(receipt!, ev).error_info).toMatch(/cut off/);
      });

      it('a test delivery another process left cut off ends as failed while the service runs, without a restart', async () => {
        await boot();
        const d = await subscribe({ client_url: `${rx.url}/ok` });
        // what the test operation of a process killed since wrote before its request left
        const hourAgo = toMicros(Date.now() - 3600_000);
        const id = eventId(Date.now() - 3600_000);
        await store.insertTestEvent({ id, accountId: h.accountId, subscriptionId: d.id, jobId: null, eventType: 'test', payload: '{}', status: 'pending',
          attempts: 0, nextAttemptAt: hourAgo, httpStatusCode: 0, createdAt: hourAgo, test: true });
        await store.beginAttempts([{ eventId: id, subscriptionId: d.id, owner: 'gone', receiptId: 'wre_testcut2', attempt: 1, dispatchedAt: hourAgo,
          requestHeaders: {}, cutOffReceiptId: null }]);
        const ev = await until(async () => {
          const e = (await store.listEvents(h.accountId, d.id, 0, 10)).items.find((x) => x.id === id)!;
          return e.status === 'failed' ? e : undefined;
        }, 'the stranded test delivery failed');
        const [receipt] = await store.listReceipts(id);
        expect(receiptView(receipt!, ev).error_info).toMatch(/cut off/);
      });

      it('a restart in the middle of a delivery loses nothing: the delivery goes out again', async () => {
        db = await factory.fresh();
        store = await db.open();
        h = await startService(store, { workDir: join(db.dir, 'runs') });
        const d = await subscribe({ client_url: `${rx.url}/hang-once` });
        const second = await subscribe({ client_url: `${rx.url}/ok` });
        await enqueue();
        await rx.waitFor((x) => x.some((y) => y.path === '/hang-once'));
        await h.svc.close(false); // as kill -9 would: the attempt in flight is never recorded
        await store.close();
        const firstBodies = rx.deliveries.map((x) => x.body);

        await restartOnSameData();
        await rx.waitFor((x) => x.filter((y) => y.path === '/hang-once').length === 2 && x.some((y) => y.path === '/ok'));
        await until(async () => (await store.listEvents(h.accountId, d.id, 0, 10)).items[0]?.status === 'succeeded', 'redelivered');
        const hang = rx.deliveries.filter((x) => x.path === '/hang-once');
        expect(hang[1]!.body).toBe(hang[0]!.body);
        expect(firstBodies).toContain(hang[0]!.body);
        expect(hang.every((x) => x.verified)).toBe(true);
        // The attempt cut off by the crash counts: the log shows it without an answer, then the second one.
        const ev = (await store.listEvents(h.accountId, d.id, 0, 10)).items[0]!;
        expect(ev.attempts).toBe(2);
        const receipts = await store.listReceipts(ev.id);
        expect(receipts.map((r) => [r.attempt, r.httpStatusCode])).toEqual([[1, 0], [2, 200]]);
        expect(receipts[0]!.errorInfo).toMatch(/cut off/);
        // The other delivery either went out before the crash or is retaken (after its lease, on a shared store).
        await until(async () => (await store.listEvents(h.accountId, second.id, 0, 10)).items[0]?.status === 'succeeded', 'second delivery');
      });

      it('an event whose fifth attempt was cut off by a crash is failed after the restart, with no sixth request', async () => {
        db = await factory.fresh();
        store = await db.open();
        h = await startService(store, { workDir: join(db.dir, 'runs'), pollMs: 60_000 });
        const d = await subscribe({ client_url: `${rx.url}/fail` });
        await h.svc.close(false); // a crash before anything was sent; the store is driven by hand below
        await enqueue();
        // Five attempts begun by processes that died before any answer (leases already run out).
        for (let attempt = 1; attempt <= 5; attempt++) {
          const now = toMicros(Date.now());
          const [c] = await store.claimDue(now, 10, now - 1, `dead-${attempt}`);
          expect(c!.event.attempts).toBe(attempt - 1);
          await store.beginAttempts([{ eventId: c!.event.id, subscriptionId: d.id, owner: `dead-${attempt}`, receiptId: `wre_dead${attempt}`, attempt,
            dispatchedAt: now, requestHeaders: {}, cutOffReceiptId: c!.cutOffReceiptId }]);
        }
        await store.close();
        await restartOnSameData();
        const ev = await until(async () => {
          const e = (await store.listEvents(h.accountId, d.id, 0, 10)).items[0];
          return e?.status === 'failed' ? e : null;
        }, 'the event failed');
        expect(ev.attempts).toBe(5);
        const receipts = await store.listReceipts(ev.id);
        expect(receipts.map((r) => [r.attempt, r.httpStatusCode])).toEqual([[1, 0], [2, 0], [3, 0], [4, 0], [5, 0]]);
        expect(receipts.every((r) => /cut off/.test(r.errorInfo ?? ''))).toBe(true);
        expect(rx.deliveries).toHaveLength(0);
        expect((await store.getSubscription(h.accountId, d.id))!.consecutiveFailures).toBe(1);
      });

      it('prunes the delivery log after 7 days (injected clock), keeping pending deliveries', async () => {
        const clock = new ManualClock(Date.UTC(2026, 0, 1));
        await boot({ clock, retryDelaysMs: [0, 0, 0, 0] });
        const d = await subscribe({ client_url: `${rx.url}/ok` });
        await enqueue('job.run.completed', 1, clock.now());
        await until(async () => (await h.api('GET', `${SUB(d.id)}/events`)).json.data[0]?.status === 'succeeded', 'delivered');
        clock.advance(6 * 86_400_000);
        expect(await h.svc.dispatcher.prune()).toBe(0);
        clock.advance(86_400_000 + 1);
        expect(await h.svc.dispatcher.prune()).toBe(1);
        expect((await h.api('GET', `${SUB(d.id)}/events`)).json.data).toEqual([]);
      });
    });

    describe('SSRF guard', () => {
      it('refuses at connect time a private target saved before (or a name that resolves to one when sending)', async () => {
        await boot({ allowPrivateTargets: false });
        const port = new URL(rx.url).port;
        for (const url of [`${rx.url}/ok`, `http://localhost:${port}/ok`, `http://[::ffff:127.0.0.1]:${port}/ok`, `http://[::ffff:0:7f00:1]:${port}/ok`]) {
          // Saved straight into the store: the API refuses such URLs, but a name can point elsewhere by the time of sending.
          const now = toMicros(Date.now());
          const id = `wsu_saved${Math.random().toString(36).slice(2, 10)}`;
          await h.store.insertSubscription({ id, accountId: h.accountId, name: 'saved', description: '', clientUrl: url, active: true, archived: false,
            deactivateReason: null, eventTypes: ALL, jobIds: [], hmacSecret: 's', createdAt: now, updatedAt: now, dispatchedAt: null, httpStatusCode: 0,
            consecutiveFailures: 0, failingSince: null });
          const t = await h.api('GET', `${SUB(id)}/test`);
          expect(t.json.data.verification_status_code, url).toBe('0');
          expect(t.json.data.verification_error, url).toMatch(/refused to connect.*allow-private-targets/);
        }
        expect(rx.deliveries).toHaveLength(0);
      });

      it('refuses a private or loopback client_url at create and update (400 naming client_url) unless private targets are allowed', async () => {
        const names: Record<string, string[]> = { 'internal.example.test': ['10.1.2.3'], 'public.example.test': ['93.184.215.14'],
          'mixed.example.test': ['93.184.215.14', '::1'] };
        const resolveHost = async (host: string) => {
          if (names[host]) return names[host]!;
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        };
        await boot({ allowPrivateTargets: false, resolveHost });
        const refused = ['http://127.0.0.1:9/x', 'http://localhost:9/', 'http://app.localhost/', 'http://[::1]/', 'http://[::ffff:0:7f00:1]/',
          'http://[fec0::1]/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://0x7f.1/', 'http://2130706433/',
          'https://internal.example.test/hook', 'https://mixed.example.test/hook'];
        for (const url of refused) {
          const r = await h.api('POST', SUBS, { name: 'n', client_url: url, event_types: ALL, active: true });
          expect(r.status, url).toBe(400);
          expect(r.json.status.user_message, url).toMatch(/client_url/);
          expect(r.json.status.user_message, url).toMatch(/allow-private-targets/);
        }
        // public literals, public names, and names that do not resolve now (connect time checks them again)
        for (const url of ['https://93.184.215.14/hook', 'https://public.example.test/hook', 'https://unresolvable.example.test/hook']) {
          const r = await h.api('POST', SUBS, { name: 'n', client_url: url, event_types: ALL, active: true });
          expect(r.status, url).toBe(201);
        }
        const sub = (await h.api('GET', SUBS)).json.data[0];
        const put = await h.api('PUT', SUB(sub.id), { client_url: 'http://192.168.1.10/hook' });
        expect(put.status).toBe(400);
        expect(put.json.status.developer_message).toMatch(/client_url.*192\.168\.1\.10.*private/);
        expect((await h.api('PUT', SUB(sub.id), { client_url: 'https://public.example.test/2' })).status).toBe(200);
        expect((await h.store.getSubscription(h.accountId, sub.id))!.clientUrl).toBe('https://public.example.test/2');
      });

      it('accepts private targets with --allow-private-targets', async () => {
        await boot({ allowPrivateTargets: true });
        for (const url of ['http://127.0.0.1:9/x', 'http://localhost:9/', 'http://10.0.0.1/']) {
          expect((await h.api('POST', SUBS, { name: 'n', client_url: url, event_types: ALL, active: true })).status, url).toBe(201);
        }
      });
    });

    describe("a real client's sequence", () => {
      it('create, update, reactivate with a new URL, delete, then 404 (Terraform acceptance flow)', async () => {
        await boot();
        const c = new WebhooksClient({ baseUrl: h.base, token: h.token, accountId: h.accountId });
        const created = await c.create({ name: 'tf-hook', client_url: 'https://example.com', event_types: ['job.run.started', 'job.run.completed'] });
        expect(created.name).toBe('tf-hook');
        expect(created.hmac_secret).toBeTruthy();
        expect(created.account_identifier).toMatch(/^act_/);
        expect(created.event_types).toHaveLength(2);
        expect(created.job_ids).toHaveLength(0);
        expect((await c.get(created.id)).http_status_code).toBe('0');

        const updated = await c.update(created.id, { name: 'tf-hook-2', client_url: 'https://example.com/test', event_types: ['job.run.errored'], job_ids: [42], active: false });
        expect(updated).toMatchObject({ name: 'tf-hook-2', client_url: 'https://example.com/test', event_types: ['job.run.errored'], job_ids: ['42'], active: false });
        expect(await c.get(created.id)).toMatchObject({ name: 'tf-hook-2', job_ids: ['42'], active: false });

        const back = await c.update(created.id, { client_url: 'https://example.com/new', active: true });
        expect(back).toMatchObject({ client_url: 'https://example.com/new', active: true });
        expect((await c.listAll()).map((s) => s.id)).toEqual([created.id]);

        expect(await c.delete(created.id)).toEqual({ id: created.id });
        const err = await c.get(created.id).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiClientError);
        expect((err as ApiClientError).status).toBe(404);
        expect((err as ApiClientError).body).toMatchObject({ status: { code: 404 } });
      });
    });
  });
}
