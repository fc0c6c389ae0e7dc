/**
 * End to end in a real terminal: tmux runs the built CLI (test/helpers/terminal.ts), keys go in as a
 * person types them, the screen is read back.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readRecords } from '../../src/produce/convert.js';
import { generate } from '../../src/produce/generate/index.js';
import { OtlpSink } from '../../src/produce/sinks/otlp.js';
import { tempDir } from '../helpers/fixtures.js';
import { haveTmux, Terminal } from '../helpers/terminal.js';
import { SAMPLE } from './helpers.js';
import { CLI } from '../helpers/cli.js';
import { skipOrFailInCi } from '../helpers/samples.js';

const missing = !haveTmux ? 'tmux is not installed' : !existsSync(SAMPLE) ? `the sample ${SAMPLE} is missing` : !existsSync(CLI) ? `${CLI} is not built (npm run build)` : '';
if (missing) skipOrFailInCi(`the explore e2e test: ${missing}`);

const open: Terminal[] = [];
function terminal(args: string, width = 140, height = 40): Terminal {
  const t = new Terminal(`node ${JSON.stringify(CLI)} explore ${args}`, { width, height, env: { ...process.env, NO_COLOR: '1' } });
  open.push(t);
  return t;
}
afterEach(() => {
  for (const t of open.splice(0)) t.close();
});

describe.skipIf(Boolean(missing))('runlens explore in tmux', () => {
  it('opens a run, expands, searches a node, runs failed-tests from the palette, quits', async () => {
    const t = terminal(JSON.stringify(SAMPLE));

    // runs screen
    let s = await t.until(/FAILED +build/, 'the runs screen');
    expect(s).toContain('019c97cafe1c76e2abb150e9427e666a');

    // open the run: tree open down to the phases
    t.keys('Enter');
    s = await t.until(/323 spans/, 'the run tree');
    await t.until(/▾ Phase: LOAD_PROJECT/, 'tree rows');

    // collapse then expand a phase
    t.keys('j', 'j');
    await t.until(/› +▾ Phase: LOAD_PROJECT/, 'cursor on the phase');
    t.keys('Enter');
    s = await t.until(/› +▸ Phase: LOAD_PROJECT/, 'phase collapsed');
    expect(s).not.toContain('GenericOpItem: loading (packages)');
    t.keys('Enter');
    await t.until('GenericOpItem: loading (packages)', 'phase expanded');

    // search a node
    t.keys('/');
    t.type('model.jaffle_shop.customers');
    t.keys('Enter');
    s = await t.until(/"model\.jaffle_shop\.customers": \d+ matches \(n\/N\)/, 'search result');
    expect(s).toMatch(/› +Node evaluated \(model\.jaffle_shop\.customers\)/);

    // palette: failed-tests
    t.keys(':');
    await t.until('upstream-skip-chains', 'the palette');
    t.type('failed-tests');
    t.keys('Enter');
    s = await t.until(/2 rows +row 1/, 'failed-tests results');
    expect(s).toMatch(/test\.jaffle_shop\.accepted_values_customers_customer_type.* failed +2/);
    expect(s).toMatch(/unit_test\.jaffle_shop\.stg_locations\.test_does_location_open.* error/);

    // Enter jumps to the node in its run tree
    t.keys('Enter');
    await t.until(/› +Node processed \(test\.jaffle_shop.*returning\.d299a3800c\)/, 'jump to the failed test');

    // quit from anywhere
    t.keys('q');
    expect(await t.exitCode()).toBe(0);
  });

  it('exits 2 without a terminal, pointing at tree, query and gate', () => {
    for (const args of [[SAMPLE], ['--receive', '--port', '0']]) {
      const r = spawnSync('node', [CLI, 'explore', ...args], { encoding: 'utf8', env: { ...process.env, CI: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/runlens tree PATH.*runlens query NAME PATH.*runlens gate PATH/);
    }
  });

  it('explore --receive shows a run streamed to it over OTLP, and keeps it in --db', async () => {
    const dir = tempDir();
    const jsonl = path.join(dir, 'run.jsonl');
    await generate({ output: jsonl, runs: 1, nodes: 40, seed: 3, failRate: 0.3 });
    const db = path.join(dir, 'live.duckdb');
    const t = terminal(`--receive --port 0 --db ${JSON.stringify(db)}`);
    const s = await t.until(/receiving OTLP on http:\/\/127\.0\.0\.1:\d+/, 'the receiver address');
    const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(s)![1]!;
    const sink = new OtlpSink({ endpoint: url, level: 'trace' });
    for await (const r of readRecords(jsonl)) sink.write(r);
    await sink.close();
    await t.until(/FAILED +build/, 'the streamed run');
    t.keys('q');
    expect(await t.exitCode()).toBe(0);
    const q = spawnSync('node', [CLI, 'runs', '--db', db, '--format', 'json'], { encoding: 'utf8' });
    expect(q.status, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout)).toMatchObject([{ command: 'build', failed: true }]);
  });
});

describe.skipIf(Boolean(missing))('runlens explore at 80x24 and 160x45', () => {
  const mouseFlags = (t: Terminal) => t.display('#{mouse_standard_flag}#{mouse_sgr_flag}');

  for (const [width, height] of [[80, 24], [160, 45]] as const) {
    it(`is usable at ${width}x${height}: every column that matters, the keys of each screen, the mouse`, async () => {
      const t = terminal(JSON.stringify(SAMPLE), width, height);
      let s = await t.until(/FAILED +build/, 'the runs screen');
      for (const l of s.split('\n')) expect(l.length).toBeLessThanOrEqual(width);
      expect(s).toMatch(/t\.fail/);
      expect(s).toContain('019c97cafe1c76e2abb150e9427e666a');
      expect(s).toMatch(/⏎ open +m mark for diff/);
      // the terminal reports the mouse to the explorer (button and SGR modes)
      expect(mouseFlags(t)).toBe('11');

      t.keys('Enter');
      s = await t.until(/323 spans/, 'the run tree');
      await t.until(/⏎ fold/, 'the tree keys');
      expect(/^›/m.exec(s)?.index).toBeDefined();
      const row = () => t.screen().split('\n').findIndex((l) => l.startsWith('›'));
      expect(row()).toBe(1);
      // the wheel as a terminal reports it: three rows down
      t.type('\x1b[<65;10;5M');
      await t.until(/^(.*\n){4}›/, 'the wheel moved the cursor');
      // a click selects the row under it
      t.type('\x1b[<0;10;9M');
      await t.until(/^(.*\n){8}›/, 'the clicked row');
      if (width >= 160) expect(t.screen()).toMatch(/█/); // the waterfall where there is room

      t.keys('q');
      expect(await t.exitCode()).toBe(0);
      expect(mouseFlags(t)).toBe('00');
    });
  }

  it.each([['SIGTERM', 143], ['SIGHUP', 129]] as const)('gives the terminal back when %s ends it', async (signal, code) => {
    const t = terminal(JSON.stringify(SAMPLE), 100, 30);
    await t.until(/FAILED +build/, 'the runs screen');
    expect(t.display('#{mouse_standard_flag}#{mouse_sgr_flag}#{alternate_on}')).toBe('111');
    const shell = Number(t.display('#{pane_pid}'));
    const node = Number(spawnSync('pgrep', ['-P', String(shell), 'node'], { encoding: 'utf8' }).stdout.trim());
    expect(node).toBeGreaterThan(0);
    process.kill(node, signal);
    expect(await t.exitCode()).toBe(code);
    expect(t.display('#{mouse_standard_flag}#{mouse_sgr_flag}#{alternate_on}')).toBe('000');
  });

  it.each([['SIGTERM', 143], ['SIGHUP', 129]] as const)('explore --receive --db ended by %s keeps every record it answered 200', async (signal, code) => {
    const dir = tempDir();
    const jsonl = path.join(dir, 'run.jsonl');
    await generate({ output: jsonl, runs: 1, nodes: 3000, seed: 5, failRate: 0.1 });
    const db = path.join(dir, 'live.duckdb');
    const t = terminal(`--receive --port 0 --db ${JSON.stringify(db)}`, 100, 30);
    const s = await t.until(/receiving OTLP on http:\/\/127\.0\.0\.1:\d+/, 'the receiver address');
    const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(s)![1]!;
    const sink = new OtlpSink({ endpoint: url, level: 'trace' });
    let sent = 0;
    for await (const r of readRecords(jsonl)) {
      sink.write(r);
      if (r.record_type !== 'SpanStart') sent++;
    }
    await sink.close();
    // every request answered 200: end it at once, before its next write to the model
    const shell = Number(t.display('#{pane_pid}'));
    const node = Number(spawnSync('pgrep', ['-P', String(shell), 'node'], { encoding: 'utf8' }).stdout.trim());
    process.kill(node, signal);
    expect(await t.exitCode()).toBe(code);
    const q = spawnSync('node', [CLI, 'query', '--db', db, '--sql', 'SELECT count(*)::INT AS n FROM records', '--format', 'json'], { encoding: 'utf8' });
    expect(q.status, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout)).toEqual([{ n: sent }]);
  });

  it('leaves the mouse to the terminal with --no-mouse', async () => {
    const t = terminal(`--no-mouse ${JSON.stringify(SAMPLE)}`, 100, 30);
    await t.until(/FAILED +build/, 'the runs screen');
    expect(mouseFlags(t)).toBe('00');
    t.keys('q');
    expect(await t.exitCode()).toBe(0);
  });
});
