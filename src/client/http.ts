/**
 * Minimal HTTP client for the hosted-style APIs: `Authorization: Token <t>`, JSON bodies, errors taken
 * from the `{status:{code, user_message, developer_message}}` envelope. Every error names the request
 * (method and full URL), the HTTP status and the service's message, so it says what failed and where.
 */
import { STATUS_CODES } from 'node:http';
import { cutText } from '../render/cut-text.js';

export interface ClientConfig {
  baseUrl: string;
  token: string;
  accountId: string | number;
  /** how long a request waits for the answer to begin, and then for each next part of it (default ANSWER_TIMEOUT_MS) */
  answerTimeoutMs?: number;
}

/** How long a request waits for the service to answer, and then for each next part of the answer, unless told otherwise. */
export const ANSWER_TIMEOUT_MS = 60_000;

export class ApiClientError extends Error {
  constructor(
    /** the HTTP status; 0 when no answer says what failed (the service could not be reached, a listing kept changing) */
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/**
 * The service took the request and then did not answer, or stopped answering part way (`started`),
 * within `waitedMs`: it was reached, so this is not a connection failure.
 */
export class NoAnswer extends ApiClientError {
  constructor(readonly request: string, readonly started: boolean, readonly waitedMs: number) {
    const s = Number((waitedMs / 1000).toFixed(3));
    super(0, `${request}: ${started ? `the service stopped answering (nothing more for ${s} s)` : `the service did not answer within ${s} s`}`);
  }
}

/** `{data, status, extra}` as both API versions answer. */
export type Envelope<T> = { data: T; status: { code: number; is_success?: boolean }; extra?: { pagination?: { total_count: number; count: number } } };

export class ApiClient {
  readonly base: string;
  /** `deadline` (epoch ms): every request ends by then, answered or not (a NoAnswer). */
  constructor(readonly config: ClientConfig, readonly deadline = Infinity) {
    this.base = config.baseUrl.replace(/\/+$/, '');
  }

  /** This client with its requests ending by `deadline` (epoch ms). */
  until(deadline: number): ApiClient {
    return new ApiClient(this.config, deadline);
  }

  /**
   * The answer to one request. It waits for the answer to begin, and then for each next part of its
   * body, at most the answer timeout (and never past the deadline); then the request is aborted with
   * a NoAnswer, which reading the body also throws.
   */
  async raw(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<Response> {
    const url = this.base + path;
    const headers: Record<string, string> = { ...extraHeaders, authorization: `Token ${this.config.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const wait = this.config.answerTimeoutMs ?? ANSWER_TIMEOUT_MS;
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let started = false;
    const arm = () => {
      clearTimeout(timer);
      const ms = Math.max(0, Math.min(wait, this.deadline - Date.now()));
      // unref: an answer whose body nobody reads does not keep the process up
      timer = setTimeout(() => abort.abort(new NoAnswer(`${method} ${url}`, started, ms)), ms).unref();
    };
    arm();
    let res: Response;
    try {
      // Redirects are not followed: fetch would re-send a POST as a GET of the new address, so a create
      // behind a redirect would print whatever that GET answers and report success.
      res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual', signal: abort.signal });
    } catch (e) {
      clearTimeout(timer);
      if (e instanceof NoAnswer) throw e;
      const cause = (e as { cause?: Error }).cause;
      throw new ApiClientError(0, `${method} ${url}: cannot reach the service: ${cause?.message ?? (e as Error).message}`);
    }
    started = true;
    arm();
    // each part of the body that arrives gives the next one the whole wait again
    const timed = res.body?.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, out) => {
        arm();
        out.enqueue(chunk);
      },
      flush: () => clearTimeout(timer),
    }));
    if (!timed) clearTimeout(timer);
    res = new Response(timed ?? null, { status: res.status, statusText: res.statusText, headers: res.headers });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const location = res.headers.get('location');
      const to = location === null ? 'no Location given' : `redirected to ${URL.canParse(location, url) ? new URL(location, url).href : location}`;
      throw new ApiClientError(res.status, `${method} ${url}: ${res.status} ${reasonOf(res.status)}: ${to} (redirects are not followed)`);
    }
    if (!res.ok) {
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      const st = (parsed as { status?: { user_message?: string; developer_message?: string } } | undefined)?.status;
      const detail = st?.developer_message && st.developer_message !== st.user_message ? ` (${st.developer_message})` : '';
      throw new ApiClientError(res.status, `${method} ${url}: ${res.status} ${reasonOf(res.status)}: ${st?.user_message ?? text.slice(0, 200)}${detail}`, parsed);
    }
    return res;
  }

  async json<T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    return (await this.answer<T>(method, path, body, headers)).json;
  }

  /** A 2xx answer with its JSON (its headers too: an ETag); an answer that is not JSON is an ApiClientError naming the request. */
  async answer<T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ res: Response; json: T }> {
    const res = await this.raw(method, path, body, headers);
    const request = `${method} ${this.base}${path}`;
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      if (e instanceof NoAnswer) throw e;
      throw new ApiClientError(0, `${request}: the answer was cut short (${(e as Error).message})`);
    }
    try {
      return { res, json: JSON.parse(text) as T };
    } catch {
      throw new ApiClientError(res.status, `${request}: not the API's answer: not JSON (${answerSummary(res, Buffer.from(text))})`);
    }
  }

  /** The `data` of a response envelope. */
  async data<T = ApiObject>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    const { res, json } = await this.answer<Partial<Envelope<T>>>(method, path, body, headers);
    return envelopeData(`${method} ${this.base}${path}`, res, json, false);
  }

  /** One page of a listing: its items and the total the service reports. */
  async page<T = ApiObject>(path: string): Promise<{ items: T[]; total: number }> {
    const { res, json } = await this.answer<Partial<Envelope<T[]>>>('GET', path);
    const items = envelopeData<T[]>(`GET ${this.base}${path}`, res, json, true);
    const total = json.extra?.pagination?.total_count;
    return { items, total: typeof total === 'number' ? total : items.length };
  }

  /**
   * Every item of a listing from item `from` on, page by page (`path` has a query string or none).
   * Pages are read by offset, so an item added or deleted between two pages would shift the rest:
   * each page after the first starts one item early, on the previous page's last item (by `id`).
   * When that item is not there, or the total changed, the listing starts over, and fails after a
   * few tries. (A delete and a create keep the total; only the overlap shows the shift.)
   */
  async all<T = ApiObject>(path: string, from = 0, pageSize = 100): Promise<T[]> {
    const sep = path.includes('?') ? '&' : '?';
    const idOf = (x: T | undefined) => (x as ApiObject | undefined)?.id;
    for (let attempt = 1; attempt <= LISTING_ATTEMPTS; attempt++) {
      const out: T[] = [];
      let total: number | undefined;
      for (;;) {
        const overlap = out.length ? 1 : 0;
        const page = await this.page<T>(`${path}${sep}offset=${from + out.length - overlap}&limit=${pageSize}`);
        if (total !== undefined && page.total !== total) break;
        if (overlap && (page.items.length === 0 || idOf(page.items[0]) !== idOf(out[out.length - 1]))) break;
        total = page.total;
        const fresh = page.items.slice(overlap);
        out.push(...fresh);
        if (fresh.length === 0 || from + out.length >= total) return out;
      }
    }
    throw new ApiClientError(0, `GET ${this.base}${path}: the list changed while it was read (${LISTING_ATTEMPTS} tries); try again, or page with --limit and --offset`);
  }
}

/**
 * The `data` of an envelope `request` was answered with: an object (`list`: an array). Anything
 * else (JSON from something that is not the API) is an ApiClientError naming the request.
 */
export function envelopeData<T>(request: string, res: Response, json: unknown, list: boolean): T {
  const data = (json as { data?: unknown } | null)?.data;
  if (list ? Array.isArray(data) : typeof data === 'object' && data !== null) return data as T;
  const summary = answerSummary(res, Buffer.from(JSON.stringify(json)));
  throw new ApiClientError(res.status, `${request}: not the API's answer: no "data"${list ? ' list' : ''} in it (${summary})`);
}

/**
 * What an answer that is not the expected one holds, for an error message: its content type and its
 * first characters (a web page from a wrong --base-url shows as such).
 */
export function answerSummary(res: Response, body: Buffer): string {
  const text = body.subarray(0, 200).toString('utf8').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  const begins = text.length > ANSWER_PREVIEW ? `${cutText(text, ANSWER_PREVIEW)}…` : text;
  return `content-type ${res.headers.get('content-type') ?? 'none'}, ${text ? `begins "${begins}"` : 'empty'}`;
}
const ANSWER_PREVIEW = 32;

/** Reads of a full listing before it gives up on a list that keeps changing. */
const LISTING_ATTEMPTS = 3;

const reasonOf = (status: number): string => (STATUS_CODES[status] ?? 'error').toLowerCase();

/** An object as the API answered it: its own field names and types. */
export type ApiObject = Record<string, unknown>;
