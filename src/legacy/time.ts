/**
 * Timestamps of the older engine as integer nanoseconds (UTC). run_results uses microseconds + Z,
 * JSON logs use protobuf Timestamps (0-9 fractional digits + Z) and node_info uses naive ISO (UTC
 * without Z) or "" (skipped nodes). All parse as UTC; anything unparsable is null.
 */
const ISO = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

export function isoToNs(s: unknown): bigint | null {
  if (typeof s !== 'string' || s === '') return null;
  const m = ISO.exec(s);
  if (!m) return null;
  const zone = m[4] && m[4] !== 'Z' ? m[4] : 'Z';
  const ms = Date.parse(`${m[1]}T${m[2]}${zone}`);
  if (Number.isNaN(ms)) return null;
  const frac = m[3] ? BigInt(m[3].padEnd(9, '0')) : 0n;
  return BigInt(ms) * 1_000_000n + frac;
}

/** seconds (float) to nanoseconds, never negative */
export function secondsToNs(s: unknown): bigint {
  return typeof s === 'number' && Number.isFinite(s) && s > 0 ? BigInt(Math.round(s * 1e9)) : 0n;
}
