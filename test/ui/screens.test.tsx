import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import { listRuns } from '../../src/analyze/runs.js';
import { generate } from '../../src/produce/generate/index.js';
import type { Db } from '../../src/store/db.js';
import { app, closeLater, haveSample, KEY, sampleDb } from './helpers.js';

describe.skipIf(!haveSample)('runs, palette, results, help', () => {
  let db: Db;
  beforeAll(async () => {
    db = await sampleDb();
  });
  afterAll(() => closeLater(db));

  it('lists runs with command, counts and a failure mark', async () => {
    const t = app(db);
    const f = await t.until('FAILED');
    expect(f).toMatch(/FAILED +build +2026-02-26 02:33:08 +52\.95s +48 +43 +1 +4 +26 +1 +0 019c97cafe1c76e2abb150e9427e666a/);
    t.unmount();
  });

  it('shows tests passed, as runlens runs does, under its header', async () => {
    const [run] = await listRuns(db);
    const t = app(db);
    const f = await t.until('FAILED');
    const lines = f.split('\n');
    const header = lines.find((l) => l.includes('t.fail'))!;
    const row = lines.find((l) => l.includes('FAILED'))!;
    const end = header.indexOf('t.pass') + 't.pass'.length;
    expect(end).toBeGreaterThan(5);
    expect(row.slice(0, end)).toMatch(new RegExp(` ${String(run!.tests_passed)}$`));
    t.unmount();
  });

  it('shows the keys of the current screen with ? (from the key map) and closes with Esc', async () => {
    const t = app(db);
    await t.until('FAILED');
    await t.press('?');
    const f = await t.until('keys: runs');
    expect(f).toMatch(/m +mark\/unmark this run/);
    expect(f).toMatch(/q ctrl\+c +quit/);
    await t.press(KEY.esc);
    await t.until('FAILED');
    t.unmount();
  });

  it('runs failed-tests from the palette and jumps from a result row to the node', async () => {
    const t = app(db);
    await t.until('FAILED');
    await t.press(':');
    await t.until('failed-tests');
    await t.press(...'failed-t');
    const p = await t.until(/:failed-t▏/);
    expect(p).not.toContain('slowest-nodes');
    await t.press(KEY.enter);
    const r = await t.until(/2 rows  row 1/, 'results');
    expect(r).toContain(':failed-tests  Tests that ran');
    expect(r).toMatch(/test\.jaffle_shop\.accepted_values_customers_customer_type.* failed +2/);
    await t.press(KEY.enter);
    await t.until(/323 spans/, 'the tree');
    await t.until(/› +Node processed \(test\.jaffle_shop.*returning\.d299a3800c\)/, 'the node selected');
    await t.press(KEY.esc);
    await t.until(/2 rows  row 1/, 'back to results');
    await t.press(KEY.esc);
    await t.until('FAILED', 'back to runs');
    t.unmount();
  });

  it("opens a per-phase row of slowest-nodes at the node's evaluation in that phase", async () => {
    const table = await runSavedQuery(db, findSavedQuery('slowest-nodes'), { limit: '1' });
    const at = table.rows.findIndex((r) => String(r.scope).startsWith('phase:') && r.phase !== 'run');
    const row = table.rows[at]!;
    const t = app(db, 160, 40);
    await t.until('FAILED');
    await t.press(':', ...'slowest-nodes limit=1', KEY.enter);
    await t.until(/\d+ rows  row 1/, 'results');
    await t.press(...Array(at).fill('j'));
    await t.until(`row ${at + 1} `, 'the per-phase row');
    await t.press(KEY.enter);
    await t.until(/› +Node evaluated \(/, 'an evaluation selected');
    await t.press('d');
    const f = await t.until(`unique_id ${String(row.unique_id)}`, 'its detail');
    expect(f).toContain(`phase ${String(row.phase)}`);
    expect(f).toContain('kind node_evaluated');
    t.unmount();
  });

  it('passes parameters typed after the query name, and shows SQL errors in the palette', async () => {
    const t = app(db);
    await t.until('FAILED');
    await t.press(':', ...'slowest-nodes limit=2', KEY.enter);
    const r = await t.until(/\d+ rows  row 1/);
    expect(r).toContain(':slowest-nodes limit=2 ');
    await t.press(KEY.esc, ':', ...'errors nope=1', KEY.enter);
    await t.until(/has no parameter "nope"/);
    await t.press(KEY.esc);
    await t.until('FAILED');
    t.unmount();
  });

  it('checks a run named in the palette as the query command does: an unknown run is an error, a prefix is the run', async () => {
    const trace = String((await listRuns(db))[0]!.trace_id);
    const t = app(db);
    await t.until('FAILED');
    await t.press(':', ...'failed-tests trace=ffff0000', KEY.enter);
    await t.until(/no trace ffff0000 in the input/);
    await t.press(KEY.esc, ':', ...`failed-tests trace=${trace.slice(0, 8)}`, KEY.enter);
    const r = await t.until(/\d+ rows  row 1/);
    expect(r).toContain(`:failed-tests trace=${trace.slice(0, 8)} `);
    await t.press(KEY.esc, ':', ...'failure-history command=biuld', KEY.enter);
    await t.until(/--param command: no run of command "biuld"/);
    t.unmount();
  });

  it('a word without = or a parameter given twice is said in the palette, and the explorer stays', async () => {
    const t = app(db);
    await t.until('FAILED');
    await t.press(':', ...'slowest-nodes 5', KEY.enter);
    await t.until(/--param wants key=value, got "5"/);
    await t.press(KEY.esc, ':', ...'slowest-nodes limit=1 limit=2', KEY.enter);
    await t.until(/--param limit is given more than once/);
    await t.press(KEY.esc);
    await t.until('FAILED');
    t.unmount();
  });

  it('q in the palette is text; Esc closes it', async () => {
    const t = app(db);
    await t.until('FAILED');
    await t.press(':', 'q');
    await t.until(/:q▏/);
    await t.press(KEY.esc);
    await t.until((f) => !f.includes(':q▏'));
    t.unmount();
  });
});

describe('diff of two runs', () => {
  let db: Db;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'runlens-ui-'));
    const file = path.join(dir, 'two.jsonl');
    await generate({ output: file, runs: 2, nodes: 30, seed: 7, failRate: 0.2 });
    db = await sampleDb([file]);
  });
  afterAll(async () => {
    await closeLater(db);
    rmSync(dir, { recursive: true, force: true });
  });

  it('marks a run, opens another and lists changed nodes', async () => {
    const t = app(db);
    await t.until(/runs \(2\)/);
    await t.press('m');
    await t.until('base marked');
    await t.press('j', KEY.enter);
    const f = await t.until(/diff base \w+ → head \w+: \d+ nodes? changed/);
    expect(f).toMatch(/change +unique_id/);
    await t.press(KEY.esc);
    await t.until('base marked');
    t.unmount();
  });
});

describe('jumping from a run diff to a node', () => {
  const SAMPLES = path.resolve(__dirname, '../../samples');
  let db: Db;
  beforeAll(async () => {
    db = await sampleDb([path.join(SAMPLES, 'two-runs.jsonl'), path.join(SAMPLES, 'failed-build.jsonl')]);
  });
  afterAll(() => closeLater(db));

  it('a vanished node opens in the base run, the only one that has it', async () => {
    const t = app(db, 200, 60);
    await t.until(/runs \(3\)/);
    // newest first: 019caf10 (head), 019cadc69a807cfa, 019cadc69a807047 (base)
    await t.press('j', 'j', 'm');
    await t.until('base marked');
    await t.press('k', 'k', KEY.enter);
    await t.until(/diff base 019cadc69a80 → head 019caf103180/);
    await t.press(...Array<string>(33).fill('j'));
    expect(await t.until(/rows {2}row 34\b/)).toMatch(/vanished +model\.acme\.customers_4 /);
    await t.press(KEY.enter);
    const f = await t.until(/› .*customers_4/);
    expect(f).not.toContain('is not in this run');
    expect(f).toContain('run 019cadc69a80 ');
    t.unmount();
  });

  it('Enter on a run-diff row from the palette opens the node in the head run', async () => {
    const t = app(db, 200, 60);
    await t.until(/runs \(3\)/);
    await t.press(':', ...'run-diff base=019cadc69a807047 head=019caf10', KEY.enter);
    expect(await t.until(/rows {2}row 1\b/)).toMatch(/outcome changed +model\.acme\.int_accounts_2 /);
    await t.press(KEY.enter);
    const f = await t.until(/› .*int_accounts_2/);
    expect(f).not.toContain('names no run');
    expect(f).toContain('run 019caf103180 ');
    t.unmount();
  });
});

describe.skipIf(!haveSample)('help on a small terminal', () => {
  let db: Db;
  beforeAll(async () => {
    db = await sampleDb();
  });
  afterAll(() => closeLater(db));

  it('shows every key of the tree and its whole help at 80x24, wrapped rather than cut', async () => {
    const t = app(db, 80, 24);
    await t.until('FAILED');
    await t.press(KEY.enter);
    await t.until('323 spans');
    await t.press('?');
    const f = await t.until('keys: tree');
    expect(f.split('\n').filter((l) => l.includes('…'))).toEqual([]);
    for (const word of ['root', 'cause', 'upstream', 'critical', 'decided', "phase's", 'time', 'quit']) expect(f).toContain(word);
    t.unmount();
  });

  it('shows every key of the tree in columns', async () => {
    const t = app(db, 160, 20);
    await t.until('FAILED');
    await t.press(KEY.enter);
    await t.until('323 spans');
    await t.press('?');
    const f = await t.until('keys: tree');
    for (const help of ['move down', 'jump to the root cause', 'filter by resource type', 'saved-query palette', 'quit']) expect(f).toContain(help);
    await t.press(KEY.esc);
    await t.until((fr) => fr.includes('323 spans') && !fr.includes('keys: tree'), 'help closed by Esc');
    t.unmount();
  });
});
