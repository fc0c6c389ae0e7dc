/**
 * Client of the v3 webhook subscriptions API. Tolerates the hosted API's shapes (job_ids as strings or
 * integers, account_id as string or number); updates read, merge and write the full object, as the
 * hosted API's update takes every configurable field.
 */
import { ApiClient, type ClientConfig } from './http.js';

export interface WebhookSubscription {
  id: string;
  name: string;
  description: string;
  client_url: string;
  event_types: string[];
  job_ids: number[];
  active: boolean;
  http_status_code: string;
  account_identifier?: string;
  account_id?: string;
  created_at?: string;
  updated_at?: string;
  dispatched_at?: string;
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

export interface TestResult {
  event_id?: string;
  verification_error: string | null;
  verification_status_code: string;
}

type Envelope<T> = { data: T; status: { code: number; is_success?: boolean }; extra?: { pagination?: { total_count: number; count: number } } };

export function normalizeSubscription(raw: Record<string, unknown>): WebhookSubscription {
  const ids = Array.isArray(raw.job_ids) ? raw.job_ids : [];
  return {
    ...(raw as unknown as WebhookSubscription),
    description: typeof raw.description === 'string' ? raw.description : '',
    event_types: Array.isArray(raw.event_types) ? (raw.event_types as string[]) : [],
    job_ids: ids.map((x) => Number(x)).filter((x) => Number.isFinite(x)),
    active: Boolean(raw.active),
    http_status_code: raw.http_status_code === undefined || raw.http_status_code === null ? '0' : String(raw.http_status_code),
    account_id: raw.account_id === undefined ? undefined : String(raw.account_id),
  };
}

export class WebhooksClient {
  private readonly http: ApiClient;
  constructor(config: ClientConfig) {
    this.http = new ApiClient(config);
  }

  private get path(): string {
    return `/api/v3/accounts/${encodeURIComponent(String(this.http.config.accountId))}/webhooks`;
  }

  async list(offset = 0, limit = 100): Promise<{ items: WebhookSubscription[]; total: number }> {
    const r = await this.http.json<Envelope<Record<string, unknown>[]>>('GET', `${this.path}/subscriptions?offset=${offset}&limit=${limit}`);
    return { items: r.data.map(normalizeSubscription), total: r.extra?.pagination?.total_count ?? r.data.length };
  }

  /** Every subscription, page by page. */
  async listAll(): Promise<WebhookSubscription[]> {
    const out: WebhookSubscription[] = [];
    for (;;) {
      const page = await this.list(out.length, 100);
      out.push(...page.items);
      if (page.items.length === 0 || out.length >= page.total) return out;
    }
  }

  async get(id: string): Promise<WebhookSubscription> {
    const r = await this.http.json<Envelope<Record<string, unknown>>>('GET', `${this.path}/subscription/${encodeURIComponent(id)}`);
    return normalizeSubscription(r.data);
  }

  /** The create response is the only one that carries hmac_secret. */
  async create(s: SubscriptionChanges & { name: string; client_url: string; event_types: string[] }): Promise<WebhookSubscription> {
    const body = { name: s.name, description: s.description ?? '', client_url: s.client_url, event_types: s.event_types,
      job_ids: s.job_ids ?? [], active: s.active ?? true };
    const r = await this.http.json<Envelope<Record<string, unknown>>>('POST', `${this.path}/subscriptions`, body);
    return normalizeSubscription(r.data);
  }

  async update(id: string, changes: SubscriptionChanges): Promise<WebhookSubscription> {
    const cur = await this.get(id);
    const body = {
      name: changes.name ?? cur.name,
      description: changes.description ?? cur.description,
      client_url: changes.client_url ?? cur.client_url,
      event_types: changes.event_types ?? cur.event_types,
      job_ids: changes.job_ids ?? cur.job_ids,
      active: changes.active ?? cur.active,
    };
    const r = await this.http.json<Envelope<Record<string, unknown>>>('PUT', `${this.path}/subscription/${encodeURIComponent(id)}`, body);
    return normalizeSubscription(r.data);
  }

  async delete(id: string): Promise<{ id: string }> {
    const r = await this.http.json<Envelope<{ id: string }>>('DELETE', `${this.path}/subscription/${encodeURIComponent(id)}`);
    return r.data;
  }

  async test(id: string): Promise<TestResult> {
    const r = await this.http.json<Envelope<TestResult>>('GET', `${this.path}/subscription/${encodeURIComponent(id)}/test`);
    return r.data;
  }
}
