/**
 * What makes the explorer easy to learn and calm to use: per-screen hints, empty states that say
 * how to get out of them, 80 columns, jumps and phases in a sensible order, the mouse.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criticalSpans } from '../../src/analyze/critical-path.js';
import type { Db } from '../../src/store/db.js';
import { app, closeLater, haveSample, KEY, sampleDb, SAMPLE } from './helpers.js';

const TWO_RUNS = path.resolve(__dirname, '../../samples/two-runs.jsonl');
const bar = (f: string) => f.split('\n').at(-1) ?? '';

describe.skipIf(!haveSample)('explorer at 80x24 and beside', () => {
  let db: Db;
  beforeAll(async () => {
    db = await sampleDb([SAMPLE, TWO_RUNS]);
  });
  afterAll(() => closeLater(db));

  it('fits the runs screen in 80 columns and shows what it left out for the selected run', async () => {
    const t = app(db, 80, 24);
    const f = await t.until('FAILED');
    for (const l of f.split('\n')) expect(l.length).toBeLessThanOrEqual(80);
    const header = f.split('\n')[1]!;
    for (const col of ['status', 'command', 'started', 'duration', 'error', 't.fail']) expect(header).toContain(col);
    expect(f).toMatch(/^trace [0-9a-f]{32} .*t\.warn \d+/m);
    // nothing of it is cut: what does not fit goes on a second line, and the table keeps the screen's height
    expect(f).toMatch(/^engine 2\.0\.0-preview\.\d+$/m);
    expect(f.split('\n').length).toBeLessThanOrEqual(24);
    // the line follows the cursor
    const first = /^trace ([0-9a-f]{32})/m.exec(f)![1];
    await t.press('j');
    const g = await t.until((fr) => /^trace ([0-9a-f]{32})/m.exec(fr)?.[1] !== first, 'the next run');
    expect(g).toMatch(/^trace [0-9a-f]{32}/m);
    t.unmount();
  });

  it("shows each screen's and mode's own keys in the bottom bar", async () => {
    const t = app(db, 160, 30);
    await t.until('FAILED');
    expect(bar(t.frame())).toMatch(/⏎ open {2}m mark for diff/);
    await t.press(KEY.enter);
    await t.until('dbt invocation');
    const tree = await t.until((f) => bar(f).includes('⏎ fold'), 'tree hints');
    expect(bar(tree)).toMatch(/d detail {2}u root cause {2}\/ search {2}c critical path {2}f failures/);
    await t.press('d');
    await t.until((f) => bar(f).includes('J/K scroll detail'), 'detail hints');
    await t.press('/');
    await t.until((f) => bar(f).includes('⏎ keep matches'), 'search hints');
    await t.press(KEY.esc, ':');
    await t.until((f) => bar(f).includes('⏎ run'), 'palette hints');
    await t.press(KEY.esc, '?');
    await t.until((f) => bar(f).includes('esc close help'), 'help hints');
    t.unmount();
  });

  it('says when a search, a filter, the palette or a query finds nothing, and how to clear it', async () => {
    const t = app(db, 140, 30);
    await t.until('FAILED');
    // the clean run of two-runs: nothing fails in it
    const runs = t.frame().split('\n');
    const clean = runs.findIndex((l) => /^ {2}ok +build +2026-03-02 15:00/.test(l)) - 2; // rows start on line 2
    await t.press(...Array(clean).fill('j'), KEY.enter);
    await t.until('dbt invocation');
    await t.press('f');
    await t.until('no span matches the filter (only failures): x clears it');
    await t.press('x');
    await t.until((f) => !f.includes('no span matches'), 'filter cleared');
    await t.press('/', ...'zzqq');
    await t.until('no match: Backspace edits, Esc cancels');
    await t.press(KEY.enter);
    await t.until('no match for "zzqq": Esc clears the search');
    await t.press(KEY.esc, ':', ...'zzqq');
    await t.until('no saved query matches "zzqq": Backspace edits, Esc closes');
    await t.press(...Array(4).fill(KEY.backspace), ...'errors', KEY.enter);
    await t.until('the query returned no rows: Esc goes back');
    t.unmount();
  });

  it('lists the newest run first', async () => {
    const t = app(db, 140, 30);
    const f = await t.until('runs (3)');
    const started = f.split('\n').map((l) => / (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) /.exec(l)?.[1]).filter((x): x is string => Boolean(x));
    expect(started).toHaveLength(3);
    expect([...started].sort().reverse()).toEqual(started);
    t.unmount();
  });

  it('highlights the critical path in the tree and the waterfall with c', async () => {
    const marks = await criticalSpans(db, '019c97cafe1c76e2abb150e9427e666a');
    expect(marks.size).toBeGreaterThan(0);
    const t = app(db, 160, 40);
    await t.until('FAILED');
    await t.press('G', KEY.enter); // the oldest run: the real one
    await t.until('323 spans');
    await t.press('E', 'c');
    const f = await t.until(new RegExp(`critical path: ${marks.size} evaluations? marked ◆`), 'the highlight');
    // the cursor is on the first marked evaluation, and others are marked around it
    expect(f).toMatch(/^› +Node evaluated \(.*\) .*▓/m);
    expect(f).toMatch(/^◆ +Node evaluated \(.*\) .*▓/m);
    expect(f).toContain('c hides them');
    await t.press('c');
    await t.until((fr) => !/^◆/m.test(fr) && !fr.includes('▓'), 'highlight off');
    t.unmount();
  });

  it('cycles the phase filter in the order the phases ran', async () => {
    const order = (await db.all<{ phase: string }>(
      `SELECT phase FROM spans WHERE kind = 'phase' AND trace_id LIKE '019c97ca%' GROUP BY phase ORDER BY min(start_ns)`,
    )).map((r) => r.phase);
    expect(order.indexOf('render')).toBeLessThan(order.indexOf('run'));
    expect(order.indexOf('analyze')).toBeLessThan(order.indexOf('run'));
    const t = app(db, 140, 30);
    await t.until('FAILED');
    await t.press('G', KEY.enter);
    await t.until('323 spans');
    const seen: string[] = [];
    for (let i = 0; i < order.length; i++) {
      await t.press('p');
      const f = await t.until((fr) => {
        const m = /filter: phase=(\w+)/.exec(fr);
        return m !== null && m[1] !== seen[seen.length - 1];
      }, `phase ${i + 1}`);
      seen.push(/filter: phase=(\w+)/.exec(f)![1]!);
    }
    expect(seen).toEqual(order);
    t.unmount();
  });

  it('scrolls with the wheel and selects with a click', async () => {
    const t = app(db, 140, 30);
    await t.until('FAILED');
    await t.press(KEY.enter);
    await t.until('dbt invocation');
    const selected = () => t.frame().split('\n').findIndex((l) => l.startsWith('›'));
    expect(selected()).toBe(1);
    await t.press('\x1b[<65;10;5M'); // wheel down
    await t.until(() => selected() === 4, 'three rows down');
    await t.press('\x1b[<64;10;5M'); // wheel up
    await t.until(() => selected() === 1, 'back up');
    // a click on terminal row 8 (1-based) is frame line 7
    await t.press('\x1b[<0;10;8M');
    await t.until(() => selected() === 7, 'the clicked row');
    await t.press('\x1b[<0;10;8m', '\x1b[<2;10;3M'); // release and right button: ignored, never typed as keys
    expect(selected()).toBe(7);
    // runs screen: a click selects a run (rows start on terminal row 3)
    await t.press(KEY.esc);
    await t.until('runs (3)');
    await t.press('\x1b[<0;10;4M');
    await t.until((f) => f.split('\n')[3]!.includes('FAILED') && /^trace 019cadc6/m.test(f), 'the clicked run');
    t.unmount();
  });
});

describe.skipIf(!haveSample)('run diff in the explorer', () => {
  let db: Db;
  beforeAll(async () => {
    db = await sampleDb([TWO_RUNS]);
  });
  afterAll(() => closeLater(db));

  it('lists outcome changes before duration changes', async () => {
    const t = app(db, 200, 60);
    await t.until('runs (2)');
    await t.press('m', 'j', KEY.enter);
    const f = await t.until(/nodes? changed/);
    const changes = f.split('\n').map((l) => /^ ?(outcome changed|appeared|vanished|duration changed) /.exec(l)?.[1]).filter(Boolean);
    expect(changes).toContain('outcome changed');
    expect(changes.lastIndexOf('outcome changed')).toBeLessThan(changes.indexOf('duration changed') === -1 ? Infinity : changes.indexOf('duration changed'));
    t.unmount();
  });
});
