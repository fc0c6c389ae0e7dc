/**
 * Identifiers. Subscription and event ids copy the hosted service's shape: a prefix and a 27-character
 * base62 KSUID (4-byte timestamp + 16 random bytes), so ids sort by creation time like the real ones.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KSUID_EPOCH_S = 1_400_000_000;

/** Big-endian bytes as base62, zero-padded: long division over 16-bit words (cheaper than BigInt). */
export function base62(bytes: Uint8Array, width: number): string {
  const words: number[] = [];
  if (bytes.length % 2) words.push(bytes[0]!);
  for (let i = bytes.length % 2; i < bytes.length; i += 2) words.push((bytes[i]! << 8) | bytes[i + 1]!);
  let out = '';
  let start = 0;
  while (start < words.length) {
    let rem = 0;
    for (let i = start; i < words.length; i++) {
      const acc = rem * 65536 + words[i]!;
      words[i] = Math.floor(acc / 62);
      rem = acc % 62;
    }
    out = ALPHABET[rem] + out;
    while (start < words.length && words[start] === 0) start++;
  }
  return out.padStart(width, '0');
}

export function ksuid(nowMs: number): string {
  const buf = Buffer.alloc(20);
  buf.writeUInt32BE(Math.max(0, Math.floor(nowMs / 1000) - KSUID_EPOCH_S) >>> 0, 0);
  randomBytes(16).copy(buf, 4);
  return base62(buf, 27);
}

export const subscriptionId = (nowMs: number): string => `wsu_${ksuid(nowMs)}`;
export const eventId = (nowMs: number): string => `wev_${ksuid(nowMs)}`;
export const receiptId = (nowMs: number): string => `wre_${ksuid(nowMs)}`;
/** account_identifier: stable per account id so every store derives the same value. */
export const accountIdentifier = (accountId: number): string =>
  `act_${base62(createHash('sha256').update(`account:${accountId}`).digest().subarray(0, 20), 27)}`;

/** Signing secret: 30 random bytes as base64 (40 chars, no padding), usable as a Standard Webhooks key too. */
export const newHmacSecret = (): string => randomBytes(30).toString('base64');

/** API tokens are shown once; only their SHA-256 is stored. */
export const newApiToken = (): string => `rlt_${base62(randomBytes(24), 33)}`;
export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * A numeric id (account, job, run) from its canonical digits: no sign, no leading zero, and no more
 * than a number counts exactly (Number.MAX_SAFE_INTEGER), so a longer id is never rounded to another
 * one. Null for anything else.
 */
export function parseId(s: string): number | null {
  if (!/^[1-9]\d{0,15}$/.test(s)) return null;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
}
