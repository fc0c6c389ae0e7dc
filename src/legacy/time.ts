/**
 * Timestamps of the older engine as integer nanoseconds (UTC). run_results uses microseconds + Z,
 * JSON logs use protobuf Timestamps (0-9 fractional digits + Z) and node_info uses naive ISO (UTC
 * without Z) or "" (skipped nodes). All parse as UTC. RFC 3339's other forms read too (lowercase t
 * and z; digits past the nanosecond are dropped); anything unparsable, or a date or time the calendar
 * does not have (Nov 31, hour 24, second 60), is null.
 */
import { shown } from './json-document.js';

const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:?\d{2})?$/;

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
  if (!m || !onTheCalendar(+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) return null;
  const utc = !m[8] || m[8] === 'Z' || m[8] === 'z';
  // (Date.parse reads a day past the month's end as the next month's: checked above)
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${utc ? 'Z' : m[8]}`);
  if (Number.isNaN(ms)) return null;
  const second = BigInt(ms) * 1_000_000n;
  if (utc) {
    cachedSecond = s.slice(0, 19);
    cachedSecondNs = second;
  }
  return m[7] ? second + BigInt(m[7].slice(0, 9).padEnd(9, '0')) : second;
}

/** What a reading command says of a value isoToNs gives null for. */
export function notATimestamp(v: unknown): string {
  return `must be an ISO 8601 timestamp, not ${typeof v === 'string' ? JSON.stringify(v) : shown(v)}`;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function onTheCalendar(y: number, mo: number, d: number, h: number, mi: number, sec: number): boolean {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= (mo === 2 && leap ? 29 : DAYS[mo - 1]!);
}

/** After the 19 characters of the second: "", "Z", ".d+" or ".d+Z" (z too) as nanoseconds; null otherwise. */
function fractionNs(s: string): number | null {
  let end = s.length;
  const last = s.charCodeAt(end - 1);
  if (end > 19 && (last === 90 /* Z */ || last === 122) /* z */) end--;
  if (end === 19) return 0;
  if (s.charCodeAt(19) !== 46 /* . */ || end === 20) return null;
  let v = 0;
  for (let i = 20; i < end; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return null;
    if (i < 29) v = v * 10 + d;
  }
  for (let i = end; i < 29; i++) v *= 10;
  return v;
}

/** seconds (float) to nanoseconds, never negative */
export function secondsToNs(s: unknown): bigint {
  return typeof s === 'number' && Number.isFinite(s) && s > 0 ? BigInt(Math.round(s * 1e9)) : 0n;
}
