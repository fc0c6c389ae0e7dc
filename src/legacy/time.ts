/**
 * Timestamps of the older engine as integer nanoseconds (UTC). run_results uses microseconds + Z,
 * JSON logs use protobuf Timestamps (0-9 fractional digits + Z) and node_info uses naive ISO (UTC
 * without Z) or "" (skipped nodes). All parse as UTC; anything unparsable is null.
 */
const ISO = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

// Consecutive timestamps (log lines, the results of one run) mostly share their UTC second: its
// parse is kept and only the fraction is read, which makes most calls one BigInt addition.
let cachedSecond = '';
let cachedSecondNs = 0n;

export function isoToNs(s: unknown): bigint | null {
  if (typeof s !== 'string' || s === '') return null;
  if (cachedSecond !== '' && s.startsWith(cachedSecond)) {
    const frac = fractionNs(s);
    if (frac !== null) return cachedSecondNs + BigInt(frac);
  }
  const m = ISO.exec(s);
  if (!m) return null;
  const utc = !m[4] || m[4] === 'Z';
  const ms = Date.parse(`${m[1]}T${m[2]}${utc ? 'Z' : m[4]}`);
  if (Number.isNaN(ms)) return null;
  const second = BigInt(ms) * 1_000_000n;
  if (utc) {
    cachedSecond = s.slice(0, 19);
    cachedSecondNs = second;
  }
  return m[3] ? second + BigInt(m[3].padEnd(9, '0')) : second;
}

/** After the 19 characters of the second: "", "Z", ".d{1,9}" or ".d{1,9}Z" as nanoseconds; null otherwise. */
function fractionNs(s: string): number | null {
  let end = s.length;
  if (end > 19 && s.charCodeAt(end - 1) === 90 /* Z */) end--;
  if (end === 19) return 0;
  if (s.charCodeAt(19) !== 46 /* . */ || end === 20 || end > 29) return null;
  let v = 0;
  for (let i = 20; i < end; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return null;
    v = v * 10 + d;
  }
  for (let i = end; i < 29; i++) v *= 10;
  return v;
}

/** seconds (float) to nanoseconds, never negative */
export function secondsToNs(s: unknown): bigint {
  return typeof s === 'number' && Number.isFinite(s) && s > 0 ? BigInt(Math.round(s * 1e9)) : 0n;
}
