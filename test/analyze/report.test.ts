import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateFiles } from '../../src/legacy/migrate.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { FUSION, LEGACY, sample, samplesNote } from '../helpers/samples.js';
import type { Page } from 'playwright-core';
import { browserNote, nonBackgroundShare, openBrowser, openReport, type Browser } from './browser.js';
import { testResult, writeRuns, type RunSpec } from './make-runs.js';

/**
 * Three `build` runs of a small project, an hour apart. In the last one `bad` errors (its text holds
 * markup that must show as text and load nothing), `after_bad` is skipped because of it, and
 * `check` fails; the run phase's critical path is slow -> child -> check.
 */
const ERROR_TEXT = 'Database Error near "SELEC" <img src="https://example.invalid/x.png" onerror="document.title=1"> in model bad';

function run(i: number): RunSpec {
  const last = i === 2;
  return {
    at: i * 3_600_000,
    phases: [
      // one node after the other
      { phase: 'render', start: 0, end: 10, evals: ['slow', 'fast', 'bad', 'child', 'after_bad'].map((n, k) => ({ id: `model.r.${n}`, start: k * 2, end: k * 2 + 1.5 })) },
      {
        phase: 'run', start: 10, end: 200, evals: [
          { id: 'model.r.slow', start: 10, end: 110 + i * 20 },
          { id: 'model.r.fast', start: 10, end: 30 },
          { id: 'model.r.bad', start: 31, end: 60, result: last ? { outcome: 'error', errorMessage: ERROR_TEXT } : undefined },
          last
            ? { id: 'model.r.after_bad', start: 61, end: 62, result: { outcome: 'skipped', skipReason: 'upstream', upstreamUniqueId: 'model.r.bad' } }
            : { id: 'model.r.after_bad', start: 61, end: 90 },
          { id: 'model.r.child', start: 111 + i * 20, end: 150 + i * 20 },
          { id: 'test.r.check', start: 151 + i * 20, end: 160 + i * 20, result: testResult(i === 0 ? 'passed' : i === 1 ? 'failed' : 'failed', 7) },
          { id: 'test.r.other', start: 63, end: 70, result: testResult(i === 1 ? 'failed' : 'passed', 1) },
        ],
      },
    ],
  };
}

const browser = browserNote();

/** A value of the page's window (the report's script sets window.runlensGantt). */
const inPage = (page: Page, expr: string): Promise<unknown> => page.evaluate(`window.${expr}`);

/** Move the mouse onto a node's bar in a phase. */
async function hover(page: Page, uniqueId: string, phase: string): Promise<void> {
  const at = (await inPage(page, `runlensGantt.locate(${JSON.stringify(uniqueId)}, ${JSON.stringify(phase)})`)) as { x: number; y: number };
  const scroll = (await inPage(page, 'scrollY')) as number;
  await page.mouse.move(at.x, at.y - scroll);
}

describe.skipIf(browser.missing)(browser.title('report in headless Chromium'), () => {
  const dir = tempDir('runlens-report-');
  let b: Browser;
  let traces: string[];
  let file: string;
  const report = (args: string[], name: string) => {
    const out = path.join(dir, name);
    const r = runCli(['report', ...args, '-o', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return out;
  };

  beforeAll(async () => {
    ({ file, traces } = await writeRuns(dir, 'runs.jsonl', [0, 1, 2].map(run)));
    b = await openBrowser();
  });
  afterAll(async () => {
    await b?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the verdict and counts as the gate gives them, and loads nothing but the file', async () => {
    const out = report([file], 'last.html');
    const { page, requests, errors } = await openReport(b, out);
    expect(errors).toEqual([]);
    expect(requests).toEqual([`file://${out}`]);
    expect(await page.getAttribute('#verdict', 'data-passed')).toBe('false');
    expect(await page.textContent('#verdict .badge')).toBe('FAILED');
    expect(await page.textContent('#gate-summary')).toBe(runCli(['gate', file, '--trace', traces[2]!]).stdout.split('\n')[0]);
    expect(await page.textContent('#gate-summary')).toMatch(/^gate FAILED: .*1 test failed/);
    const counts = await page.$$eval('#counts li', (lis) => Object.fromEntries(lis.map((li) => [li.getAttribute('data-count'), Number(li.querySelector('b')!.textContent)])));
    expect(counts).toEqual({ nodes: 7, success: 5, error: 1, skipped: 1, canceled: 0, 'tests passed': 1, 'tests warned': 0, 'tests failed': 1 });
    expect(await page.textContent('#run-trace')).toBe(traces[2]);
    // the markup in the error text is text, not an element, and changed nothing
    expect(await page.$$eval('img', (imgs) => imgs.length)).toBe(0);
    expect(await page.title()).toContain('runlens report');
    await page.close();
  });

  it('lists and outlines the critical path, and the chart draws every evaluation', async () => {
    const { page } = await openReport(b, report([file], 'critical.html'));
    expect(await inPage(page, 'runlensGantt.bars')).toBe(12);
    expect(await inPage(page, 'runlensGantt.critical()')).toEqual([
      'render model.r.slow', 'render model.r.fast', 'render model.r.bad', 'render model.r.child', 'render model.r.after_bad',
      'run model.r.slow', 'run model.r.child', 'run test.r.check',
    ]);
    // two lanes in the run phase (slow/child/check and fast/bad/after_bad/other), one in the serial render phase
    expect(await inPage(page, 'runlensGantt.lanes')).toEqual([1, 2]);
    const runPhase = await page.$$eval('#critical-path table.critical', (ts) => ts.map((t) => [...t.querySelectorAll('tbody tr')].map((tr) => tr.children[1]!.textContent)));
    expect(runPhase[1]).toEqual(['model.r.slow', 'model.r.child', 'test.r.check']);
    const png = await page.screenshot();
    expect(await nonBackgroundShare(page, png)).toBeGreaterThan(0.05);
    const chart = await page.locator('#gantt').screenshot();
    expect(await nonBackgroundShare(page, chart)).toBeGreaterThan(0.02);
    await page.close();
  });

  it('shows failures with their error text, the skip chain, and a tooltip per bar', async () => {
    const { page } = await openReport(b, report([file], 'failures.html'));
    expect(await page.textContent('#failures table.errors')).toContain(ERROR_TEXT);
    expect(await page.textContent('#failures table.failed-tests')).toContain('test.r.check');
    expect(await page.textContent('#failures details')).toContain('model.r.bad (error): 1 node skipped');
    await hover(page, 'model.r.bad', 'run');
    await page.waitForSelector('#tooltip:not([hidden])');
    const tip = await page.textContent('#tooltip');
    expect(tip).toContain('model.r.bad');
    expect(tip).toContain('phase run · error');
    expect(tip).toContain(`error: ${ERROR_TEXT}`);
    await hover(page, 'model.r.after_bad', 'run');
    await page.waitForFunction("document.getElementById('tooltip').textContent.includes('after_bad')");
    expect(await page.textContent('#tooltip')).toContain('upstream: model.r.bad');
    // zooming in redraws without errors, and reset returns
    await page.click('[data-zoom="in"]');
    await page.click('[data-zoom="reset"]');
    await page.close();
  });

  it('with several runs shows the run durations, trends and flaky tests; --trace picks an earlier run', async () => {
    const { page } = await openReport(b, report([file], 'history.html'));
    expect(await page.$$eval('svg.runs-chart rect', (r) => r.length)).toBe(3);
    const flaky = await page.$$eval('#history table.flaky tbody tr', (trs) => trs.map((tr) => [tr.children[0]!.textContent, tr.children[1]!.textContent]));
    expect(flaky).toEqual([['test.r.other', '2']]);
    expect(await page.textContent('#history table.trends')).toContain('model.r.slow');
    await page.close();
    // an earlier run's history ends at it, outlined last; the first run has none before it
    const second = await openReport(b, report([file, '--trace', traces[1]!], 'second.html'));
    expect(await second.page.$$eval('svg.runs-chart rect', (r) => r.map((x) => x.classList.contains('current')))).toEqual([false, true]);
    await second.page.close();
    const first = await openReport(b, report([file, '--trace', traces[0]!], 'first.html'));
    expect(await first.page.textContent('#verdict .badge')).toBe('PASSED');
    expect(await first.page.$$eval('#history', (h) => h.length)).toBe(0);
    await first.page.close();
  });

  it('a very long node name wraps: the page is no wider than the window', async () => {
    const long = `model.r.${'very_long_name_'.repeat(200)}`;
    const { file: longFile } = await writeRuns(dir, 'long.jsonl', [{
      at: 0,
      phases: [{ phase: 'run', start: 0, end: 10, evals: [{ id: long, start: 0, end: 5, result: { outcome: 'error', errorMessage: `Database Error in ${long}` } }] }],
    }]);
    const { page } = await openReport(b, report([longFile], 'long.html'));
    expect(await page.textContent('#failures table.errors')).toContain(long);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
    await page.close();
  });

  it('bad usage is exit 2 with a clear message', () => {
    const r = runCli(['report', file, '--trace', 'ffff', '-o', path.join(dir, 'x.html')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no trace ffff');
    // a missing folder is made (as for every -o); a folder in the way is exit 2 naming it
    const w = runCli(['report', file, '-o', path.join(dir, 'missing-dir', 'x.html')]);
    expect(w.code, w.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'missing-dir', 'x.html'))).toBe(true);
    const taken = path.join(dir, 'taken.html');
    mkdirSync(taken);
    const t = runCli(['report', file, '-o', taken]);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain(`${taken}: it is a folder, not a file`);
  });

  const fusion = samplesNote(FUSION);
  it.skipIf(fusion.missing)(fusion.title('reports the real engine run with its failed test and error text'), async () => {
    const out = report([sample(FUSION, 'forwarder-otel-preview120.jsonl')], 'fusion.html');
    const { page, errors, requests } = await openReport(b, out);
    expect(errors).toEqual([]);
    expect(requests).toHaveLength(1);
    expect(await page.textContent('#failures table.failed-tests')).toContain('test.jaffle_shop.accepted_values_customers_customer_type__new__returning.d299a3800c');
    expect(await page.textContent('#failures table.errors')).toContain('Timestamp(Nanosecond, None) is not supported');
    expect(await page.textContent('#critical-path')).toContain('model.jaffle_shop.customers');
    expect(await inPage(page, 'runlensGantt.bars')).toBe(144);
    await page.close();
  });

  const legacy = samplesNote(LEGACY);
  it.skipIf(legacy.missing)(legacy.title('reports a migrated older-engine run'), async () => {
    const jsonl = path.join(dir, 'legacy.jsonl');
    await migrateFiles([sample(LEGACY, 'rr_v4_1.0.0_build_error.json')], { out: jsonl });
    expect(existsSync(jsonl) && statSync(jsonl).size).toBeGreaterThan(0);
    const { page, errors } = await openReport(b, report([jsonl], 'legacy.html'));
    expect(errors).toEqual([]);
    expect(await page.textContent('#counts')).toContain('29 nodes');
    expect(await page.getAttribute('#verdict', 'data-passed')).toBe('false');
    expect(await inPage(page, 'runlensGantt.bars')).toBeGreaterThan(29);
    await page.close();
  });
});
