/** v3 webhook management API: paths, bodies and envelopes as interface section 4A and the hosted API. */
import type { FastifyInstance } from 'fastify';
import { toMicros } from '../clock.js';
import { eventId, newHmacSecret, subscriptionId } from '../ids.js';
import { buildTestPayload } from '../payload.js';
import { activeAfterUpdate, ifMatchHolds, subscriptionEtag } from '../subscription-state.js';
import type { Subscription } from '../store/types.js';
import type { ServiceContext } from './context.js';
import { tokenOf, requirePermission, WEBHOOK_WRITERS } from './auth.js';
import { ApiError, notFound, v3 } from './envelope.js';
import { checkTargetAllowed, parsePaging, parseSubscriptionBody, refuseSecretChange } from './validate.js';
import { eventView, receiptView, subscriptionView } from './views.js';

type P = { account_id: string; id: string; event_id: string };

export function webhookRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const base = '/api/v3/accounts/:account_id/webhooks';
  const { store, clock } = ctx;

  const load = async (accountId: number, id: string): Promise<Subscription> => {
    const s = await store.getSubscription(accountId, id);
    if (!s) throw notFound('webhook subscription');
    return s;
  };

  app.get<{ Params: P; Querystring: Record<string, unknown> }>(`${base}/subscriptions`, async (req) => {
    const t = tokenOf(req);
    const { offset, limit } = parsePaging(req.query);
    const page = await store.listSubscriptions(t.accountId, offset, limit);
    return {
      data: page.items.map((s) => subscriptionView(s)),
      status: { code: 200 },
      extra: { pagination: { total_count: page.total, count: page.items.length }, filters: { offset, limit } },
    };
  });

  app.post<{ Params: P }>(`${base}/subscriptions`, async (req, reply) => {
    const t = tokenOf(req);
    requirePermission(t, WEBHOOK_WRITERS, 'creating a webhook subscription');
    const b = parseSubscriptionBody(req.body, false);
    refuseSecretChange(b.hmac_secret, null);
    await checkTargetAllowed(b.client_url!, ctx.allowPrivateTargets, ctx.resolveHost);
    const now = toMicros(clock.now());
    const s: Subscription = {
      id: subscriptionId(clock.now()), accountId: t.accountId, name: b.name!, description: b.description ?? '', clientUrl: b.client_url!,
      active: b.active ?? true, archived: false, deactivateReason: null, eventTypes: b.event_types!, jobIds: b.job_ids ?? [],
      hmacSecret: newHmacSecret(), createdAt: now, updatedAt: now, dispatchedAt: null, httpStatusCode: 0, consecutiveFailures: 0, failingSince: null,
    };
    await store.insertSubscription(s);
    reply.code(201);
    return v3(subscriptionView(s, true), 201);
  });

  app.get<{ Params: P }>(`${base}/subscription/:id`, async (req, reply) => {
    const t = tokenOf(req);
    const s = await load(t.accountId, req.params.id);
    reply.header('etag', subscriptionEtag(s));
    return v3(subscriptionView(s));
  });

  app.put<{ Params: P }>(`${base}/subscription/:id`, async (req, reply) => {
    const t = tokenOf(req);
    requirePermission(t, WEBHOOK_WRITERS, 'updating a webhook subscription');
    const b = parseSubscriptionBody(req.body, true);
    refuseSecretChange(b.hmac_secret, (await load(t.accountId, req.params.id)).hmacSecret);
    if (b.client_url !== undefined) await checkTargetAllowed(b.client_url, ctx.allowPrivateTargets, ctx.resolveHost);
    // Decided on the row as it is when written: a delivery outcome recorded during the address check
    // (its failure count, an archival) must not be written over.
    const ifMatch = req.headers['if-match'];
    const next = await store.updateSubscription(t.accountId, req.params.id, (s) => {
      // A client that read, merged and writes back the whole object: refused if the row changed meanwhile.
      if (ifMatch !== undefined && !ifMatchHolds(ifMatch, subscriptionEtag(s))) {
        throw new ApiError(412, 'The subscription changed since it was read: read it again and retry', 'If-Match does not name the current ETag');
      }
      const active = activeAfterUpdate(s, b);
      const reactivated = active && !(s.active && !s.archived);
      const changed: Subscription = {
        ...s,
        name: b.name ?? s.name,
        description: b.description ?? s.description,
        clientUrl: b.client_url ?? s.clientUrl,
        eventTypes: b.event_types ?? s.eventTypes,
        jobIds: b.job_ids ?? s.jobIds,
        active,
        updatedAt: toMicros(clock.now()),
      };
      if (reactivated) Object.assign(changed, { archived: false, deactivateReason: null, consecutiveFailures: 0, failingSince: null });
      return changed;
    });
    if (!next) throw notFound('webhook subscription');
    reply.header('etag', subscriptionEtag(next));
    return v3(subscriptionView(next));
  });

  app.delete<{ Params: P }>(`${base}/subscription/:id`, async (req) => {
    const t = tokenOf(req);
    requirePermission(t, WEBHOOK_WRITERS, 'deleting a webhook subscription');
    if (!(await store.deleteSubscription(t.accountId, req.params.id))) throw notFound('webhook subscription');
    return { data: { id: req.params.id }, status: { code: 200, is_success: true } };
  });

  app.get<{ Params: P }>(`${base}/subscription/:id/test`, async (req) => {
    const t = tokenOf(req);
    requirePermission(t, WEBHOOK_WRITERS, 'testing a webhook subscription');
    const s = await load(t.accountId, req.params.id);
    const nowMs = clock.now();
    const id = eventId(nowMs);
    const payload = buildTestPayload(s, id, nowMs);
    const r = await ctx.dispatcher.sendTest(
      { id, accountId: s.accountId, subscriptionId: s.id, jobId: null, eventType: 'test', payload, status: 'pending', attempts: 0,
        nextAttemptAt: toMicros(nowMs), httpStatusCode: 0, createdAt: toMicros(nowMs), test: true },
      s.clientUrl, s.hmacSecret,
    );
    return v3({ event_id: id, verification_error: r.success ? null : r.errorInfo, verification_status_code: String(r.httpStatusCode) });
  });

  app.get<{ Params: P; Querystring: Record<string, unknown> }>(`${base}/subscription/:id/events`, async (req) => {
    const t = tokenOf(req);
    await load(t.accountId, req.params.id);
    const { offset, limit } = parsePaging(req.query);
    const page = await store.listEvents(t.accountId, req.params.id, offset, limit);
    return {
      data: page.items.map(eventView),
      status: { code: 200 },
      extra: { pagination: { total_count: page.total, count: page.items.length }, filters: { offset, limit } },
    };
  });

  // One event by its id alone (the hosted API's older path), so a client holding only an event id finds its subscription.
  app.get<{ Params: P }>(`${base}/event/:event_id`, async (req) => {
    const t = tokenOf(req);
    const ev = await store.findEvent(t.accountId, req.params.event_id);
    if (!ev) throw notFound('webhook event');
    return v3(eventView(ev));
  });

  app.get<{ Params: P }>(`${base}/subscription/:id/event/:event_id/receipt`, async (req) => {
    const t = tokenOf(req);
    const ev = await store.getEvent(t.accountId, req.params.id, req.params.event_id);
    if (!ev) throw notFound('webhook event');
    return v3((await store.listReceipts(ev.id)).map((r) => receiptView(r, ev)));
  });
}
