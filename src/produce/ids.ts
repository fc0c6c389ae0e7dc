/**
 * Ids the engine writes: random 64-bit span ids as 16 lower-case hex, UUIDv7 invocation and event
 * ids (trace_id = the invocation UUID without dashes). A seeded source makes `generate` repeatable.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface IdSource {
  /** 16 lower-case hex digits, never all zero */
  spanId(): string;
  /** UUIDv7 for the given Unix time in milliseconds */
  uuidv7(unixMs: number): string;
}

/** Deterministic 32-bit generator (mulberry32) for seeded runs; also usable for any simulation. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hexOf(bytes: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += HEX[bytes[i]!];
  return s;
}

// One scratch buffer: ids are made synchronously, and a typed array per id is garbage for nothing.
const UUID_BYTES = new Uint8Array(16);

/** UUIDv7 text from a time and 10 random bytes at `rand[off..off+10)`. */
function formatUuidv7(unixMs: number, rand: Uint8Array, off: number): string {
  const b = UUID_BYTES;
  // 48-bit big-endian millisecond timestamp
  let ms = Math.max(0, Math.floor(unixMs));
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  for (let i = 0; i < 10; i++) b[6 + i] = rand[off + i]!;
  b[6] = (b[6]! & 0x0f) | 0x70; // version 7
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  return `${hexOf(b, 0, 4)}-${hexOf(b, 4, 6)}-${hexOf(b, 6, 8)}-${hexOf(b, 8, 10)}-${hexOf(b, 10, 16)}`;
}

/** UUIDv7 text from a time and 20 hex digits (80 bits, of which the version and variant take 6). */
export function uuidv7FromHex(unixMs: number, hex: string): string {
  const rand = new Uint8Array(10);
  for (let i = 0; i < 10; i++) rand[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return formatUuidv7(unixMs, rand, 0);
}

/** Cryptographically random ids (pooled to keep randomBytes calls rare). */
export function randomIds(): IdSource {
  let pool = randomBytes(4096);
  let pos = pool.length;
  // offset of n fresh bytes in the pool (no view per id)
  const take = (n: number): number => {
    if (pos + n > pool.length) {
      pool = randomBytes(4096);
      pos = 0;
    }
    pos += n;
    return pos - n;
  };
  return {
    spanId() {
      for (;;) {
        const at = take(8);
        const s = hexOf(pool, at, at + 8);
        if (s !== '0000000000000000') return s;
      }
    },
    uuidv7: (unixMs) => {
      const at = take(10);
      return formatUuidv7(unixMs, pool, at);
    },
  };
}

/** Repeatable ids from a seed. */
export function seededIds(seed: number): IdSource {
  const rnd = seededRandom(seed ^ 0x9e3779b9);
  return idsFromWords(() => Math.floor(rnd() * 4294967296));
}

/**
 * Repeatable ids from a text key: 128 bits of state (xoshiro128**) drawn from the key's SHA-256, so
 * that two keys share their ids only by a 2^-128 chance, where 32-bit seeds would meet by 2^-32.
 */
export function keyedIds(key: string): IdSource {
  const d = createHash('sha256').update(key).digest();
  const s = [d.readUInt32LE(0), d.readUInt32LE(4), d.readUInt32LE(8), d.readUInt32LE(12)] as [number, number, number, number];
  if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1; // the all-zero state only ever gives zeros
  return idsFromWords(() => {
    const r = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return r;
  });
}

const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0;

/** Span ids and UUIDv7s from a source of 32-bit words. */
function idsFromWords(word: () => number): IdSource {
  const scratch = new Uint8Array(12);
  const w8 = (n: number) => {
    const b = scratch;
    for (let i = 0; i < n; i += 4) {
      const w = word();
      for (let j = 0; j < 4 && i + j < n; j++) b[i + j] = (w >>> (8 * j)) & 0xff;
    }
    return b;
  };
  const hex8 = (w: number) => HEX[w >>> 24]! + HEX[(w >>> 16) & 0xff]! + HEX[(w >>> 8) & 0xff]! + HEX[w & 0xff]!;
  return {
    spanId() {
      for (;;) {
        const s = hex8(word()) + hex8(word());
        if (s !== '0000000000000000') return s;
      }
    },
    uuidv7: (unixMs) => formatUuidv7(unixMs, w8(10), 0),
  };
}

/**
 * These span ids first, then `then`'s: a helper thread writing part of a run re-creates the run's
 * process, invocation and phase spans with the ids the main thread gave them.
 */
export function replayIds(first: readonly string[], then: IdSource): IdSource {
  let i = 0;
  return {
    spanId: () => (i < first.length ? first[i++]! : then.spanId()),
    uuidv7: (unixMs) => then.uuidv7(unixMs),
  };
}

/** trace_id for an invocation UUID: the same 128 bits as 32 hex digits. */
export function traceIdOf(invocationId: string): string {
  const hex = invocationId.replace(/-/g, '').toLowerCase();
  if (/^[0-9a-f]{32}$/.test(hex)) return hex;
  // --invocation-id may be an integer: use it as the low bits of the trace id.
  if (/^\d+$/.test(invocationId)) return BigInt(invocationId).toString(16).padStart(32, '0').slice(-32);
  throw new Error(`invocation id is neither a UUID nor an integer: ${invocationId}`);
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
