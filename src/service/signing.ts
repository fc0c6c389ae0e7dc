/**
 * Delivery signatures. `Authorization` carries the hosted service's scheme: lowercase hex HMAC-SHA256
 * of the raw body keyed by hmac_secret (UTF-8). Standard Webhooks headers are added beside it so
 * receivers can also check a timestamp (replay window); that key is the base64-decoded secret, which
 * is what the Standard Webhooks libraries derive from `whsec_<secret>`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmacHex(body: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

export function standardWebhookSignature(id: string, timestampS: number, body: string | Buffer, secret: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampS}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

export function signatureHeaders(eventId: string, body: string, secret: string, nowMs: number): Record<string, string> {
  const ts = Math.floor(nowMs / 1000);
  return {
    authorization: hmacHex(body, secret),
    'webhook-id': eventId,
    'webhook-timestamp': String(ts),
    'webhook-signature': standardWebhookSignature(eventId, ts, body, secret),
  };
}

/**
 * Checks an `Authorization` header value against the body. Constant-time over the digest; accepts the
 * bare hex the service sends (a `sha256=` prefix is tolerated for hand-made tests).
 */
export function verifyWebhookSignature(rawBody: string | Buffer, header: string | undefined | null, secret: string): boolean {
  if (!header || !secret) return false;
  const given = header.trim().replace(/^sha256=/i, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(given)) return false;
  const want = Buffer.from(hmacHex(rawBody, secret), 'hex');
  return timingSafeEqual(want, Buffer.from(given, 'hex'));
}

/** Checks Standard Webhooks headers, including the timestamp tolerance (default 5 minutes). */
export function verifyStandardWebhook(
  rawBody: string | Buffer,
  headers: { id?: string; timestamp?: string; signature?: string },
  secret: string,
  nowMs: number = Date.now(),
  toleranceS = 300,
): boolean {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceS) return false;
  const want = Buffer.from(standardWebhookSignature(id, Number(timestamp), rawBody, secret));
  return signature.split(' ').some((s) => {
    const got = Buffer.from(s);
    return got.length === want.length && timingSafeEqual(got, want);
  });
}
