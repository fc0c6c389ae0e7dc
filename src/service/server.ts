/**
 * The service: one fastify app over a Store, with the outbox dispatcher and the job runner. Used by
 * `runlens serve`, the tests (port 0, injected clock, tiny delays) and the bench.
 */
import { isUtf8 } from 'node:buffer';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { join } from 'node:path';
import { DEFAULT_STEP_COMMANDS } from './cli-options.js';
import { systemClock, type Clock } from './clock.js';
import { DEFAULT_RETRY_DELAYS_S, Dispatcher } from './dispatcher.js';
import { JobRunner } from './runner.js';
import { SqliteStore } from './store/sqlite.js';
import type { ArchivalPolicy, Store } from './store/types.js';
import { DEFAULT_ARCHIVAL } from './subscription-state.js';
import { systemResolver, type HostResolver } from './ssrf.js';
import { ApiError, echoed, errorBody, notFound } from './http/envelope.js';
import { authenticateRequest } from './http/auth.js';
import type { ServiceContext } from './http/context.js';
import { webhookRoutes } from './http/webhook-routes.js';
import { runRoutes } from './http/run-routes.js';

export { DEFAULT_STEP_COMMANDS };
/** Longest path parameter (ids are far shorter); longer ones are refused with 414 in the envelope. */
const MAX_PARAM_LENGTH = 100;
const paramTooLong = (): ApiError =>
  new ApiError(414, `Invalid request: a path parameter is too long (at most ${MAX_PARAM_LENGTH} characters)`, `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`);

export interface ServiceOptions {
  /** data folder: the SQLite database and run working folders (required unless `store` and `workDir` are given) */
  dataDir?: string;
  store?: Store;
  /** where runs execute; default <dataDir>/runs */
  workDir?: string;
  clock?: Clock;
  retryDelaysMs?: number[];
  deliveryTimeoutMs?: number;
  allowPrivateTargets?: boolean;
  stepCommands?: readonly string[];
  archival?: Partial<ArchivalPolicy>;
  concurrency?: number;
  pollMs?: number;
  /**
   * shared stores: milliseconds past the delivery timeout before another process may retake a claim,
   * and how long a run is held without renewal before another process closes it as abandoned
   */
  leaseMarginMs?: number;
  jitter?: number;
  /** fastify request logging */
  logger?: boolean;
  /** resolves client_url names when a subscription is saved (default: the system resolver) */
  resolveHost?: HostResolver;
}

export interface Service {
  app: FastifyInstance;
  store: Store;
  dispatcher: Dispatcher;
  runner: JobRunner;
  /** starts delivering and listening; resolves to the base URL */
  listen(port?: number, host?: string): Promise<string>;
  /** graceful: finishes attempts and runs in flight; not graceful: drops them like a crash would */
  close(graceful?: boolean): Promise<void>;
}

export async function createService(o: ServiceOptions): Promise<Service> {
  if (!o.store && !o.dataDir) throw new Error('createService needs dataDir or store');
  const store = o.store ?? new SqliteStore(o.dataDir!);
  const clock = o.clock ?? systemClock;
  const stepCommands = o.stepCommands ?? DEFAULT_STEP_COMMANDS;
  const dispatcher = new Dispatcher({
    store, clock,
    retryDelaysMs: o.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_S.map((s) => s * 1000),
    timeoutMs: o.deliveryTimeoutMs ?? 10_000,
    allowPrivateTargets: o.allowPrivateTargets ?? false,
    archival: { ...DEFAULT_ARCHIVAL, ...o.archival },
    concurrency: o.concurrency, pollMs: o.pollMs, jitter: o.jitter ?? 0.1, leaseMarginMs: o.leaseMarginMs,
  });
  const runner = new JobRunner({
    store, clock, stepCommands, workDir: o.workDir ?? join(o.dataDir ?? '.', 'runs'), onEvents: () => dispatcher.kick(),
    leaseMs: o.leaseMarginMs ?? 30_000,
  });
  const ctx: ServiceContext = {
    store, clock, dispatcher, runner, stepCommands, allowPrivateTargets: o.allowPrivateTargets ?? false, resolveHost: o.resolveHost ?? systemResolver,
  };

  const app = Fastify({
    logger: o.logger ?? false, routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH }, bodyLimit: 1024 * 1024,
    // The router's own refusals (a path parameter too long, a malformed %-escape) in the API's envelope.
    frameworkErrors: (err, _req, reply) => {
      const api = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? paramTooLong()
        : new ApiError(err.statusCode ?? 400, `Invalid request: ${echoed(err.message)}`, `${err.code}: ${echoed(err.message)}`);
      // the handler is generic over route types; this reply is the plain one
      void (reply as unknown as FastifyReply).code(api.statusCode).send(errorBody(api));
    },
  });
  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof ApiError) return reply.code(err.statusCode).send(errorBody(err));
    const e = err as Error & { statusCode?: number; code?: string };
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      // fastify's own client errors (bad JSON, empty JSON body, too large) in the API's envelope
      const api = new ApiError(e.statusCode, `Invalid request: ${e.message}`, `${e.code ?? 'error'}: ${e.message}`);
      return reply.code(e.statusCode).send(errorBody(api));
    }
    reply.log.error(err);
    return reply.code(500).send(errorBody(new ApiError(500, 'Internal server error.', e.message)));
  });
  // A body that is not UTF-8 would be decoded with U+FFFD in place of its bad bytes and stored so:
  // refused, naming the field that holds them (the first text field with U+FFFD once decoded).
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    // no body, whatever the header says (many clients send it on every request): a route that needs one says so
    if (!body.length) return done(null, undefined);
    jsonParser(req, body.toString('utf8'), (err, parsed) => {
      if (err || isUtf8(body)) return done(err, parsed);
      const field = parsed !== null && typeof parsed === 'object' ? Object.entries(parsed as object).find(([, v]) => JSON.stringify(v).includes('\uFFFD'))?.[0] : undefined;
      done(new ApiError(400, `Invalid request: ${field ?? 'body'} is not valid UTF-8 text`, `${field ?? 'body'}: bytes that are not UTF-8`));
    });
  });
  // No id holds a NUL character (nothing with one is stored, and PostgreSQL cannot be asked for one).
  // The router bounds named parameters, not a wildcard's (an artifact's name): bounded here alike.
  app.addHook('onRequest', async (req) => {
    const params = Object.entries((req.params ?? {}) as Record<string, string>);
    // (the not-found handler's wildcard holds the whole path: an unknown path is 404, however long)
    if (!req.is404 && params.some(([, v]) => v.length > MAX_PARAM_LENGTH)) throw paramTooLong();
    const bad = params.find(([, v]) => v.includes('\0'));
    if (bad) throw notFound(bad[0]);
  });
  app.addHook('onRequest', authenticateRequest(store));
  app.setNotFoundHandler((req, reply) => reply.code(404).send(errorBody(notFound(`${req.method} ${echoed(req.url.split('?')[0]!)}`))));
  webhookRoutes(app, ctx);
  runRoutes(app, ctx);

  let started = false;
  return {
    app, store, dispatcher, runner,
    async listen(port = 0, host = '127.0.0.1') {
      if (!started) {
        started = true;
        // The embedded store belongs to this process alone: leases and runs left by a crashed
        // predecessor are released now rather than after they expire.
        if (store.exclusive) {
          await store.releaseClaims();
          await runner.closeAbandonedRuns(true);
        }
        runner.start();
        await dispatcher.start();
      }
      await app.listen({ port, host });
      const addr = app.server.address();
      const p = typeof addr === 'object' && addr ? addr.port : port;
      return `http://${host.includes(':') ? `[${host}]` : host}:${p}`;
    },
    async close(graceful = true) {
      await app.close();
      if (graceful) await runner.idle();
      await runner.stop();
      await dispatcher.stop(graceful);
      if (!o.store) await store.close();
    },
  };
}
