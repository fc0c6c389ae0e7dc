/** Durations as every command and the explorer print them: rounded first, then given a unit. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/render/tree-text.js';
import { span, tempDir, writeLines } from '../helpers/fixtures.js';
import { runInProcess } from '../helpers/in-process.js';

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

describe('a run that ends before it starts', () => {
  it('keeps its negative duration and says the times are odd in runs, tree and the report', async () => {
    const file = writeLines(tempDir(), 'backwards.jsonl', [
      ...span({ id: '00000000000000f1', name: 'dbt invocation (x)', eventType: 'v1.public.events.fusion.invocation.Invocation', start: 5000, end: 0 }),
    ]);
    const runs = await runInProcess(['runs', file]);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(/ -5 \(ends before it starts\) /);
    const json = await runInProcess(['runs', file, '--format', 'json']);
    expect((JSON.parse(json.stdout) as { duration_s: number }[])[0]!.duration_s).toBe(-5);
    const tree = await runInProcess(['tree', file]);
    expect(tree.stdout).toContain('dbt invocation (x)  [ends before it starts]  -5.00s\n');
    const html = path.join(path.dirname(file), 'report.html');
    const report = await runInProcess(['report', file, '-o', html]);
    expect(report.code, report.stderr).toBe(0);
    expect(readFileSync(html, 'utf8')).toContain(' · -5.00s (ends before it starts)');
  });
});
