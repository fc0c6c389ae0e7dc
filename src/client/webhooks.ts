/**
 * Client of the v3 webhook subscriptions API and its delivery log. Objects are returned as the API
 * answered them (its field names and types: this service answers `job_ids` as strings, the hosted
 * API may answer integers); updates read, merge and write the full object, as the hosted API's
 * update takes every configurable field, with the ETag of the read in If-Match where the service
 * gives one, so that a change made in between is not written over.
 */
import { ApiClient, ApiClientError, envelopeData, type ApiObject, type ClientConfig } from './http.js';

export interface WebhookSubscription extends ApiObject {
  id: string;
  name: string;
  description?: string;
  client_url: string;
  event_types: string[];
  /** strings from this service, integers from some hosted versions */
  job_ids: (string | number)[];
  active: boolean;
  http_status_code?: string;
  account_identifier?: string;
  hmac_secret?: string;
  archived?: boolean;
  deactivate_reason?: string | null;
}

export interface SubscriptionChanges {
  name?: string;
  description?: string;
  client_url?: string;
  event_types?: string[];
  job_ids?: number[];
  active?: boolean;
}

export interface TestResult extends ApiObject {
  event_id?: string;
  verification_error: string | null;
  verification_status_code: string;
}

/** One event of the delivery log: what was sent to one subscription, with its state. */
export interface WebhookEvent extends ApiObject {
  id: string;
  subscription_id: string;
  trigger_event_type: string;
  job_id: string | null;
  status?: string;
  attempts?: number;
  http_status_code: string;
  created_at?: string;
  payload: string;
}

/** One attempt to deliver an event. */
export interface Receipt extends ApiObject {
  id: string;
  event_id: string;
  attempt?: number;
  dispatched_at: string;
  http_status_code: string;
  error_info: string | null;
  response_body: string;
}

/** Requests take job ids as integers, whatever type the API answered them in. */
export const jobIdNumbers = (ids: readonly (string | number)[] | undefined): number[] =>
  (ids ?? []).map((x) => Number(x)).filter((x) => Number.isSafeInteger(x));

/** Reads and writes of one update before it gives up on a subscription that keeps changing. */
const UPDATE_ATTEMPTS = 5;

export class WebhooksClient {
  private readonly http: ApiClient;
  constructor(config: ClientConfig) {
    this.http = new ApiClient(config);
  }

  private get path(): string {
    return `/api/v3/accounts/${encodeURIComponent(String(this.http.config.accountId))}/webhooks`;
  }

  async list(offset = 0, limit = 100): Promise<{ items: WebhookSubscription[]; total: number }> {
    return this.http.page<WebhookSubscription>(`${this.path}/subscriptions?offset=${offset}&limit=${limit}`);
  }

  /** Every subscription from item `offset` on, page by page. */
  async listAll(offset = 0): Promise<WebhookSubscription[]> {
    return this.http.all<WebhookSubscription>(`${this.path}/subscriptions`, offset);
  }

  async get(id: string): Promise<WebhookSubscription> {
    return this.http.data<WebhookSubscription>('GET', `${this.path}/subscription/${encodeURIComponent(id)}`);
  }

  /** The create response is the only one that carries hmac_secret. */
  async create(s: SubscriptionChanges & { name: string; client_url: string; event_types: string[] }): Promise<WebhookSubscription> {
    const body = { name: s.name, description: s.description ?? '', client_url: s.client_url, event_types: s.event_types,
      job_ids: s.job_ids ?? [], active: s.active ?? true };
    return this.http.data<WebhookSubscription>('POST', `${this.path}/subscriptions`, body);
  }

  /** Read, merge, write; read again when the subscription changed in between (412), a few times. */
  async update(id: string, changes: SubscriptionChanges): Promise<WebhookSubscription> {
    const path = `${this.path}/subscription/${encodeURIComponent(id)}`;
    for (let attempt = 1; ; attempt++) {
      const { res, json } = await this.http.answer('GET', path);
      const etag = res.headers.get('etag');
      const cur = envelopeData<WebhookSubscription>(`GET ${this.http.base}${path}`, res, json, false);
      const body = {
        name: changes.name ?? cur.name,
        description: changes.description ?? cur.description ?? '',
        client_url: changes.client_url ?? cur.client_url,
        event_types: changes.event_types ?? cur.event_types,
        job_ids: changes.job_ids ?? jobIdNumbers(cur.job_ids),
        active: changes.active ?? cur.active,
      };
      try {
        return await this.http.data<WebhookSubscription>('PUT', path, body, etag ? { 'if-match': etag } : {});
      } catch (e) {
        if (!(e instanceof ApiClientError && e.status === 412 && attempt < UPDATE_ATTEMPTS)) throw e;
      }
    }
  }

  async delete(id: string): Promise<{ id: string }> {
    return this.http.data<{ id: string }>('DELETE', `${this.path}/subscription/${encodeURIComponent(id)}`);
  }

  async test(id: string): Promise<TestResult> {
    return this.http.data<TestResult>('GET', `${this.path}/subscription/${encodeURIComponent(id)}/test`);
  }

  /** The delivery log of a subscription, newest first. */
  async events(id: string, offset = 0, limit = 20): Promise<{ items: WebhookEvent[]; total: number }> {
    return this.http.page<WebhookEvent>(`${this.path}/subscription/${encodeURIComponent(id)}/events?offset=${offset}&limit=${limit}`);
  }

  /** One event by its id alone (this service; the hosted API has this path only as a deprecated one). */
  async event(eventId: string): Promise<WebhookEvent> {
    return this.http.data<WebhookEvent>('GET', `${this.path}/event/${encodeURIComponent(eventId)}`);
  }

  /** The attempts to deliver one event, first to last. */
  async receipts(subscriptionId: string, eventId: string): Promise<Receipt[]> {
    return this.http.data<Receipt[]>('GET', `${this.path}/subscription/${encodeURIComponent(subscriptionId)}/event/${encodeURIComponent(eventId)}/receipt`);
  }
}
