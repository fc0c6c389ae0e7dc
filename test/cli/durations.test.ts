/** Durations as every command and the explorer print them: rounded first, then given a unit. */
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/render/tree-text.js';

describe('formatDuration', () => {
  it('picks the unit after rounding, so a value never reads as the next unit up', () => {
    expect(formatDuration(0.9994)).toBe('999µs');
    expect(formatDuration(0.9996)).toBe('1.0ms');
    expect(formatDuration(9.94)).toBe('9.9ms');
    expect(formatDuration(9.96)).toBe('10ms');
    expect(formatDuration(999.4)).toBe('999ms');
    expect(formatDuration(999.6)).toBe('1.00s');
    expect(formatDuration(59_994)).toBe('59.99s');
    expect(formatDuration(59_996)).toBe('1m00s');
    expect(formatDuration(119_499)).toBe('1m59s');
    expect(formatDuration(119_999)).toBe('2m00s');
    expect(formatDuration(3_599_600)).toBe('60m00s');
  });

  it('says <1µs for a time too short to round to a microsecond, and keeps the sign of a negative one', () => {
    expect(formatDuration(0.0004)).toBe('<1µs');
    expect(formatDuration(0.000001)).toBe('<1µs');
    expect(formatDuration(-5000)).toBe('-5.00s');
    expect(formatDuration(-0.25)).toBe('-250µs');
    expect(formatDuration(-0.0004)).toBe('-<1µs');
  });

  it('keeps its units elsewhere', () => {
    expect(formatDuration(null)).toBe('');
    expect(formatDuration(0)).toBe('0µs');
    expect(formatDuration(0.5)).toBe('500µs');
    expect(formatDuration(1.25)).toBe('1.3ms');
    expect(formatDuration(52_950)).toBe('52.95s');
    expect(formatDuration(70_000)).toBe('1m10s');
  });
});
