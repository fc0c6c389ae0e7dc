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

const base64Of = (secret: string) => (secret.startsWith('whsec_') ? secret.slice(6) : secret);

/**
 * The Standard Webhooks key a receiver checks with (`whsec_` optional): the secret's bytes when it is
 * non-empty, strict base64. Node's decoder skips characters it does not know and reads base64url too,
 * so a mistyped secret could decode to the right key, and an empty one to an empty key anyone can sign with.
 */
function verifyingKey(secret: string): Buffer | undefined {
  const b64 = base64Of(secret);
  const key = Buffer.from(b64, 'base64');
  // strict: the bytes encode back to the text given (padding aside)
  return key.length > 0 && key.toString('base64').replace(/=+$/, '') === b64.replace(/=+$/, '') ? key : undefined;
}

/** `key`: the service signs with its secrets (base64 by construction) decoded as they are. */
function standardSignature(id: string, timestampS: number, body: string | Buffer, key: Buffer): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestampS}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

export function signatureHeaders(eventId: string, body: string, secret: string, nowMs: number): Record<string, string> {
  const ts = Math.floor(nowMs / 1000);
  return {
    authorization: hmacHex(body, secret),
    'webhook-id': eventId,
    'webhook-timestamp': String(ts),
    'webhook-signature': standardSignature(eventId, ts, body, Buffer.from(base64Of(secret), 'base64')),
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
  const key = verifyingKey(secret);
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp) || !key) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceS) return false;
  const want = Buffer.from(standardSignature(id, Number(timestamp), rawBody, key));
  return signature.split(' ').some((s) => {
    const got = Buffer.from(s);
    return got.length === want.length && timingSafeEqual(got, want);
  });
}
