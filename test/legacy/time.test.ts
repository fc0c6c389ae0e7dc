/** Timestamps of the older engine as nanoseconds: the forms its files hold, and what is not a time. */
import { describe, expect, it } from 'vitest';
import { isoToNs } from '../../src/legacy/time.js';

const ns = (iso: string, frac = 0n) => BigInt(Date.parse(iso)) * 1_000_000n + frac;

describe('isoToNs', () => {
  it('reads microseconds + Z, protobuf nanoseconds, naive UTC and offsets', () => {
    expect(isoToNs('2023-11-06T00:52:43.487173Z')).toBe(ns('2023-11-06T00:52:43Z', 487_173_000n));
    expect(isoToNs('2024-12-17T12:53:36.110883123Z')).toBe(ns('2024-12-17T12:53:36Z', 110_883_123n));
    expect(isoToNs('2024-12-17T12:53:36')).toBe(ns('2024-12-17T12:53:36Z'));
    expect(isoToNs('2024-12-17 12:53:36.5')).toBe(ns('2024-12-17T12:53:36Z', 500_000_000n));
    expect(isoToNs('2024-12-17T13:53:36.5+01:00')).toBe(ns('2024-12-17T12:53:36Z', 500_000_000n));
  });

  it('reads what RFC 3339 also allows: lowercase t and z, more than 9 fractional digits (to the nanosecond)', () => {
    const t = ns('2024-12-17T12:53:36Z', 110_883_000n);
    expect(isoToNs('2024-12-17t12:53:36.110883Z')).toBe(t);
    expect(isoToNs('2024-12-17T12:53:36.110883z')).toBe(t);
    expect(isoToNs('2024-12-17T12:53:36.1108830009Z')).toBe(t);
    // the same second again (read from the kept second): the same answers
    expect(isoToNs('2024-12-17T12:53:36.110883z')).toBe(t);
    expect(isoToNs('2024-12-17T12:53:36.1108830009Z')).toBe(t);
    expect(isoToNs('2024-12-17T12:53:36.1108830009x')).toBeNull();
  });

  it('a date or time the calendar does not have is no time, also right after a real one of the same minute', () => {
    expect(isoToNs('2024-02-29T00:00:00Z')).toBe(ns('2024-02-29T00:00:00Z'));
    expect(isoToNs('2000-02-29T00:00:00Z')).toBe(ns('2000-02-29T00:00:00Z'));
    for (const s of [
      '2023-11-31T00:52:43.487173Z', '2023-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2023-02-30T00:00:00', '2023-04-31 00:00:00',
      '2023-13-01T00:00:00Z', '2023-00-01T00:00:00Z', '2023-01-00T00:00:00Z', '2023-01-01T24:00:00Z', '2023-01-01T00:60:00Z',
      '2023-01-01T00:00:60Z', '2023-11-31T00:52:43+01:00',
    ]) {
      isoToNs(s.slice(0, 8) + '01' + s.slice(10));
      expect(isoToNs(s), s).toBeNull();
    }
  });

  it('anything else is no time', () => {
    for (const v of ['', 'garbage', '2024-12-17', '2024-12-17T12:53', '2024-12-17T12:53:36.Z', '2024-12-17T12:53:36Zx', 1734440016, null, undefined, {}])
      expect(isoToNs(v), String(v)).toBeNull();
  });
});
