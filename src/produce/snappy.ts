/**
 * Snappy block compression (the raw format Parquet's SNAPPY codec uses), after the reference
 * algorithm: 64 KiB fragments, a hash table of 4-byte sequences, literals and 1/2-byte-offset copies,
 * and the reference's skipping heuristic so incompressible input passes through quickly.
 */

const HASH_BITS = 14;
const table = new Uint16Array(1 << HASH_BITS);
const BLOCK = 1 << 16;

/** An upper bound of the compressed size of n bytes. */
export function maxCompressedLength(n: number): number {
  return 32 + n + Math.floor(n / 6);
}

function load32(a: Uint8Array, i: number): number {
  return a[i]! | (a[i + 1]! << 8) | (a[i + 2]! << 16) | (a[i + 3]! << 24);
}

function hash(v: number): number {
  return Math.imul(v, 0x1e35a7bd) >>> (32 - HASH_BITS);
}

function emitLiteral(src: Uint8Array, from: number, len: number, dst: Uint8Array, op: number): number {
  const n = len - 1;
  if (n < 60) dst[op++] = n << 2;
  else if (n < 0x100) {
    dst[op++] = 60 << 2;
    dst[op++] = n;
  } else if (n < 0x10000) {
    dst[op++] = 61 << 2;
    dst[op++] = n & 0xff;
    dst[op++] = n >>> 8;
  } else {
    dst[op++] = 62 << 2;
    dst[op++] = n & 0xff;
    dst[op++] = (n >>> 8) & 0xff;
    dst[op++] = n >>> 16;
  }
  if (len < 64) for (let i = 0; i < len; i++) dst[op + i] = src[from + i]!;
  else dst.set(src.subarray(from, from + len), op);
  return op + len;
}

function emitCopyUpTo64(offset: number, len: number, dst: Uint8Array, op: number): number {
  if (len < 12 && offset < 2048) {
    dst[op++] = 1 + ((len - 4) << 2) + ((offset >>> 8) << 5);
    dst[op++] = offset & 0xff;
  } else {
    dst[op++] = 2 + ((len - 1) << 2);
    dst[op++] = offset & 0xff;
    dst[op++] = offset >>> 8;
  }
  return op;
}

function emitCopy(offset: number, len: number, dst: Uint8Array, op: number): number {
  while (len >= 68) {
    op = emitCopyUpTo64(offset, 64, dst, op);
    len -= 64;
  }
  if (len > 64) {
    op = emitCopyUpTo64(offset, 60, dst, op);
    len -= 60;
  }
  return emitCopyUpTo64(offset, len, dst, op);
}

function compressFragment(src: Uint8Array, start: number, end: number, dst: Uint8Array, op: number): number {
  const len = end - start;
  let nextEmit = start;
  if (len >= 15) {
    table.fill(0);
    const ipLimit = end - 15;
    let ip = start + 1;
    let nextHash = hash(load32(src, ip));
    outer: for (;;) {
      let skip = 32;
      let nextIp = ip;
      let candidate = 0;
      do {
        ip = nextIp;
        const h = nextHash;
        nextIp = ip + (skip++ >>> 5);
        if (nextIp > ipLimit) break outer;
        nextHash = hash(load32(src, nextIp));
        candidate = start + table[h]!;
        table[h] = ip - start;
      } while (load32(src, ip) !== load32(src, candidate));
      op = emitLiteral(src, nextEmit, ip - nextEmit, dst, op);
      for (;;) {
        const base = ip;
        let matched = 4;
        // four bytes at a time, then the tail
        while (ip + matched + 4 <= end && load32(src, ip + matched) === load32(src, candidate + matched)) matched += 4;
        while (ip + matched < end && src[ip + matched] === src[candidate + matched]) matched++;
        ip += matched;
        op = emitCopy(base - candidate, matched, dst, op);
        nextEmit = ip;
        if (ip >= ipLimit) break outer;
        table[hash(load32(src, ip - 1))] = ip - 1 - start;
        const h = hash(load32(src, ip));
        candidate = start + table[h]!;
        table[h] = ip - start;
        if (load32(src, ip) !== load32(src, candidate)) break;
      }
      nextHash = hash(load32(src, ++ip));
    }
  }
  if (nextEmit < end) op = emitLiteral(src, nextEmit, end - nextEmit, dst, op);
  return op;
}

/** Compress `src` into a new buffer. */
export function snappyCompress(src: Uint8Array): Uint8Array {
  const dst = new Uint8Array(maxCompressedLength(src.length));
  let op = 0;
  let n = src.length;
  while (n >= 0x80) {
    dst[op++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  dst[op++] = n;
  for (let p = 0; p < src.length; p += BLOCK) op = compressFragment(src, p, Math.min(src.length, p + BLOCK), dst, op);
  return dst.subarray(0, op);
}
