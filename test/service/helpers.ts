import { createServer as createNetServer } from 'node:net';
/** Shared test fixtures: a signature-checking receiver, store factories and a small API caller. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/service/store/sqlite.js';
import { PostgresStore } from '../../src/service/store/postgres.js';
import type { Store } from '../../src/service/store/types.js';
import { createService, type Service, type ServiceOptions } from '../../src/service/server.js';
import { hashToken, newApiToken } from '../../src/service/ids.js';
import { verifyStandardWebhook, verifyWebhookSignature } from '../../src/service/signing.js';

/** A store under test: `open` can be called again to simulate a restart on the same database. */
export interface StoreFactory {
  name: string;
  /** a fresh, empty database; returns an opener for it and a cleanup */
  fresh(): Promise<{ open(): Promise<Store>; dir: string; cleanup(): Promise<void> }>;
}

export const sqliteFactory: StoreFactory = {
  name: 'sqlite',
  async fresh() {
    const dir = mkdtempSync(join(tmpdir(), 'runlens-svc-'));
    return {
      dir,
      open: async () => new SqliteStore(join(dir, 'db')),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

/**
 * PostgreSQL: each suite run gets its own database on the server named by RUNLENS_TEST_DATABASE_URL
 * (start one with test/service/start-postgres.sh). Null when the variable is not set.
 */
export const PG_URL = process.env.RUNLENS_TEST_DATABASE_URL || null;

export function databaseUrl(base: string, db: string): string {
  const u = new URL(base);
  u.pathname = `/${db}`;
  return u.toString();
}

export async function createDatabase(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const pg = (await import('pg')).default;
  const name = `runlens_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    url: databaseUrl(base, name),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export const postgresFactory: StoreFactory = {
  name: 'postgres',
  async fresh() {
    if (!PG_URL) throw new Error('RUNLENS_TEST_DATABASE_URL is not set');
    const dir = mkdtempSync(join(tmpdir(), 'runlens-svc-pg-'));
    const db = await createDatabase(PG_URL);
    return {
      dir,
      open: async () => PostgresStore.connect(db.url, 5),
      cleanup: async () => {
        await db.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

export interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Authorization = hex HMAC of the body with the subscription's secret */
  verified: boolean;
  standardVerified: boolean;
  json: Record<string, any>;
}

/**
 * Loopback receiver. Paths choose the behaviour: /ok answers 200, /fail 500, /fail-slowly 500 after
 * 200 ms (so attempts are in flight when a test kills the sender), /redirect 302 to /redirected,
 * /hang never answers, /hang-once never answers the first request, /fail-once answers the first
 * request 500 and the others 200, /big answers 50,000 bytes,
 * /stall-body sends its status and part of a body, then nothing (/stall-big-body: more than the
 * 20 KB kept of a body), /nul answers 200 with a NUL byte in its body, /together-64 answers once
 * 64 requests are open at once (`abandoned()` counts those their sender gave up); anything else
 * 200. Each delivery's signature is checked with the secret registered for its webhookId.
 */
export async function startReceiver(): Promise<{
  url: string;
  deliveries: Delivery[];
  secrets: Map<string, string>;
  hits: (path: string) => number;
  abandoned: () => number;
  waitFor: (pred: (d: Delivery[]) => boolean, what?: string, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}> {
  const deliveries: Delivery[] = [];
  const secrets = new Map<string, string>();
  const hanging = new Set<import('node:http').ServerResponse>();
  const together = Object.assign([] as import('node:http').ServerResponse[], { abandoned: 0 });
  const listeners = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, any> = {};
      try {
        json = JSON.parse(body);
      } catch {
        /* not JSON: recorded as is */
      }
      const secret = secrets.get(json.webhookId) ?? '';
      deliveries.push({
        path: req.url ?? '', headers: req.headers, body, json,
        verified: verifyWebhookSignature(body, req.headers.authorization, secret),
        standardVerified: verifyStandardWebhook(body, {
          id: req.headers['webhook-id'] as string, timestamp: req.headers['webhook-timestamp'] as string,
          signature: req.headers['webhook-signature'] as string,
        }, secret),
      });
      for (const l of listeners) l();
      const path = (req.url ?? '').split('?')[0];
      if (path === '/fail') res.writeHead(500).end('boom');
      else if (path === '/fail-slowly') {
        const t = setTimeout(() => res.writeHead(500).end('boom'), 200);
        res.on('close', () => clearTimeout(t));
      } else if (path === '/stall-body') {
        res.writeHead(200, { 'content-length': '100' }).write('partial');
        hanging.add(res);
      } else if (path === '/stall-big-body') {
        res.writeHead(200, { 'content-length': '1000000' }).write('x'.repeat(30_000));
        hanging.add(res);
      } else if (path === '/together-64') {
        // answers only once 64 requests are open at the same time; a request its sender gave up is counted
        together.push(res);
        res.on('close', () => {
          if (!res.writableEnded) together.abandoned++;
        });
        if (together.filter((r) => !r.destroyed).length >= 64) for (const r of together.splice(0)) if (!r.destroyed) r.writeHead(200).end('ok');
      }
      else if (path === '/redirect') res.writeHead(302, { location: '/redirected' }).end();
      else if (path === '/big') res.writeHead(200).end('x'.repeat(50_000));
      else if (path === '/nul') res.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.from('ok\0nul', 'latin1'));
      else if (path === '/hang') hanging.add(res);
      else if (path === '/hang-once' && deliveries.filter((d) => d.path === '/hang-once').length === 1) hanging.add(res);
      else if (path === '/fail-once' && deliveries.filter((d) => d.path === '/fail-once').length === 1) res.writeHead(500).end('boom');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    secrets,
    hits: (p) => deliveries.filter((d) => d.path.split('?')[0] === p).length,
    abandoned: () => together.abandoned,
    waitFor: (pred, what = 'deliveries', timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        if (pred(deliveries)) return resolve();
        // No timed assertion: the test's own timeout is the limit; this only reports what was seen.
        const t = setTimeout(() => reject(new Error(`waiting for ${what}; got ${deliveries.length} deliveries: ${deliveries.slice(0, 20).map((d) => d.path).join(' ')}`)), timeoutMs);
        const l = () => {
          if (pred(deliveries)) {
            clearTimeout(t);
            listeners.delete(l);
            resolve();
          }
        };
        listeners.add(l);
      }),
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Polls a condition on the service side (store state) until true. */
export async function until<T>(fn: () => Promise<T | undefined | null | false>, what: string, tries = 3000): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Tests never ask DNS beyond this machine: names a test does not map itself do not resolve. */
export const offlineResolver = async (host: string): Promise<string[]> => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host} (tests resolve no names)`), { code: 'ENOTFOUND' });
};

export interface Harness {
  svc: Service;
  base: string;
  store: Store;
  accountId: number;
  token: string;
  api: (method: string, path: string, body?: unknown, token?: string | null, headers?: Record<string, string>) => Promise<{ status: number; json: any; text: string; headers: Headers }>;
}

export async function makeToken(store: Store, accountId: number, permissionSet = 'account_admin'): Promise<string> {
  const token = newApiToken();
  await store.createToken({ accountId, permissionSet, name: 'test', tokenHash: hashToken(token), now: Date.now() * 1000 });
  return token;
}

export async function startService(store: Store, opts: Partial<ServiceOptions> & { workDir: string }): Promise<Harness> {
  const svc = await createService({
    store, allowPrivateTargets: true, retryDelaysMs: [1, 1, 1, 1], deliveryTimeoutMs: 2000, jitter: 0, pollMs: 50,
    stepCommands: ['node'], leaseMarginMs: 200, resolveHost: offlineResolver, ...opts,
  });
  const base = await svc.listen(0);
  const account = await store.createAccount('Acme', Date.now() * 1000);
  const token = await makeToken(store, account.id);
  const api: Harness['api'] = async (method, path, body, tok = token, extra = {}) => {
    const headers: Record<string, string> = { ...extra };
    if (tok !== null) headers.authorization = `Token ${tok}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(base + path.replace('{acct}', String(account.id)), {
      method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* binary or empty */
    }
    return { status: res.status, json, text, headers: res.headers };
  };
  return { svc, base, store, accountId: account.id, token, api };
}

/** A port nothing listens on: bound by the system on 127.0.0.1, then closed. */
export async function freePort(): Promise<number> {
  const srv = createNetServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}
