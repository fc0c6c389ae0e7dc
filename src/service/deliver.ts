/**
 * One HTTP delivery attempt: POST the stored body (byte-identical on every attempt), signed, through an
 * undici Agent whose connect step refuses private addresses. Redirects are never followed (undici's
 * `request` does not follow them) and count as failures, like every non-2xx answer. An attempt without
 * a complete answer in time (connect, headers and body) records status code 0.
 */
import { Agent, request } from 'undici';
import { checkLiteralHost, guardedLookup } from './ssrf.js';
import { signatureHeaders } from './signing.js';
import { storableText } from './storable-text.js';

export const RESPONSE_BODY_CAP = 20 * 1024;

export interface DeliveryResult {
  httpStatusCode: number;
  success: boolean;
  errorInfo: string | null;
  responseBody: string;
  durationMs: number;
}

/** The headers of one attempt: content type, user agent and the signatures (timestamped `nowMs`). */
export function deliveryHeaders(eventId: string, body: string, secret: string, nowMs: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'runlens-webhooks/1',
    ...signatureHeaders(eventId, body, secret, nowMs),
  };
}

export interface SenderOptions {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  /**
   * sockets per receiving origin: as many as deliveries run at once, so that none waits for a socket
   * while its deadline runs
   */
  connectionsPerOrigin: number;
}

export class Sender {
  private readonly agent: Agent;
  constructor(private readonly opts: SenderOptions) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(opts.allowPrivateTargets) as never, timeout: opts.timeoutMs },
      connections: opts.connectionsPerOrigin,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  /** Sends `body` with `requestHeaders` (see deliveryHeaders) once. */
  async send(url: string, body: string, requestHeaders: Record<string, string>): Promise<DeliveryResult> {
    const t0 = performance.now();
    const abort = new AbortController();
    // One deadline for connect, headers and body together: a reply after it is a failure.
    const timer = setTimeout(() => abort.abort(new TimeoutError(this.opts.timeoutMs)), this.opts.timeoutMs);
    let httpStatusCode = 0;
    let responseBody = '';
    let errorInfo: string | null = null;
    try {
      const target = new URL(url);
      checkLiteralHost(target, this.opts.allowPrivateTargets);
      const res = await request(target, { method: 'POST', body, headers: requestHeaders, dispatcher: this.agent, signal: abort.signal });
      httpStatusCode = res.statusCode;
      responseBody = await readCapped(res.body, RESPONSE_BODY_CAP);
      if (httpStatusCode >= 300 && httpStatusCode < 400) errorInfo = `redirect ${httpStatusCode} not followed`;
      else if (httpStatusCode < 200 || httpStatusCode >= 300) errorInfo = `endpoint answered ${httpStatusCode}`;
    } catch (e) {
      const cause = abort.signal.aborted ? abort.signal.reason : e;
      // An answer cut short is no answer: the status code its headers carried is kept only in the text.
      if (httpStatusCode) {
        errorInfo = cause instanceof TimeoutError
          ? `answered ${httpStatusCode} but the body did not complete within ${this.opts.timeoutMs / 1000} s (timeout)`
          : `answered ${httpStatusCode} but the body failed: ${describe(cause)}`;
        httpStatusCode = 0;
      } else {
        errorInfo = describe(cause);
      }
    } finally {
      clearTimeout(timer);
    }
    const success = errorInfo === null && httpStatusCode >= 200 && httpStatusCode < 300;
    return {
      httpStatusCode, success, errorInfo: errorInfo === null ? null : storableText(errorInfo), responseBody: storableText(responseBody),
      durationMs: performance.now() - t0,
    };
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`no complete answer within ${ms / 1000} s (timeout)`);
  }
}

/**
 * Reads the body to its end (an answer counts only when complete; the deadline bounds an endless
 * one) and keeps at most `cap` bytes of it, so a hostile endpoint cannot stream gigabytes into the log.
 */
async function readCapped(body: AsyncIterable<Buffer>, cap: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = cap - size;
    if (room <= 0) continue;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(chunk.length, room);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as Error & { cause?: unknown }).cause;
  const base = e.message || e.name;
  return cause instanceof Error && cause.message && !base.includes(cause.message) ? `${base}: ${cause.message}` : base;
}
