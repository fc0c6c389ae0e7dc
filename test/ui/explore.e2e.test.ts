/**
 * End to end in a real terminal: tmux runs the built CLI, keys go in with send-keys, the screen
 * comes back with capture-pane (polled against a deadline, never fixed sleeps).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRecords } from '../../src/produce/convert.js';
import { generate } from '../../src/produce/generate/index.js';
import { OtlpSink } from '../../src/produce/sinks/otlp.js';
import { tempDir } from '../helpers/fixtures.js';
import { SAMPLE } from './helpers.js';

const CLI = path.resolve(__dirname, '../../dist/src/cli.js');
const haveTmux = spawnSync('tmux', ['-V']).status === 0;
const missing = !haveTmux ? 'tmux is not installed' : !existsSync(SAMPLE) ? `the sample ${SAMPLE} is missing` : !existsSync(CLI) ? `${CLI} is not built (npm run build)` : '';
if (missing) console.warn(`skipping the explore e2e test: ${missing}`);

const socket = `runlens-e2e-${process.pid}`;
const session = 'explore';

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
}

function screen(target = session): string {
  return tmux('capture-pane', '-p', '-t', target);
}

async function until(test: RegExp | string, what: string, ms = 20_000, target = session): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const s = screen(target);
    if (typeof test === 'string' ? s.includes(test) : test.test(s)) return s;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; screen:\n${s}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** keys one at a time, like a person typing */
function keys(...k: string[]): void {
  for (const x of k) tmux('send-keys', '-t', session, x);
}

function typeText(text: string): void {
  tmux('send-keys', '-t', session, '-l', text);
}

describe.skipIf(Boolean(missing))('runlens explore in tmux', () => {
  afterAll(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
  });

  // A fresh tmux server (own socket) with CI variables removed: ink draws only a final frame in CI.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== 'CI' && k !== 'CONTINUOUS_INTEGRATION' && !k.startsWith('CI_')),
  );

  it('opens a run, expands, searches a node, runs failed-tests from the palette, quits', async () => {
    const cmd = `node ${JSON.stringify(CLI)} explore ${JSON.stringify(SAMPLE)}; echo "EXIT=$?"; sleep 600`;
    execFileSync('tmux', ['-L', socket, 'new-session', '-d', '-s', session, '-x', '140', '-y', '40', cmd], { env: { ...env, NO_COLOR: '1' } });

    // runs screen
    let s = await until(/FAILED +build/, 'the runs screen');
    expect(s).toContain('019c97cafe1c76e2abb150e9427e666a');

    // open the run: tree open down to the phases
    keys('Enter');
    s = await until(/323 spans/, 'the run tree');
    await until(/▾ Phase: LOAD_PROJECT/, 'tree rows');

    // collapse then expand a phase
    keys('j', 'j');
    await until(/› +▾ Phase: LOAD_PROJECT/, 'cursor on the phase');
    keys('Enter');
    s = await until(/› +▸ Phase: LOAD_PROJECT/, 'phase collapsed');
    expect(s).not.toContain('GenericOpItem: loading (packages)');
    keys('Enter');
    await until('GenericOpItem: loading (packages)', 'phase expanded');

    // search a node
    keys('/');
    typeText('model.jaffle_shop.customers');
    keys('Enter');
    s = await until(/"model\.jaffle_shop\.customers": \d+ matches \(n\/N\)/, 'search result');
    expect(s).toMatch(/› +Node evaluated \(model\.jaffle_shop\.customers\)/);

    // palette: failed-tests
    keys(':');
    await until('upstream-skip-chains', 'the palette');
    typeText('failed-tests');
    keys('Enter');
    s = await until(/2 rows +row 1/, 'failed-tests results');
    expect(s).toMatch(/test\.jaffle_shop\.accepted_values_customers_customer_type.* failed +2/);
    expect(s).toMatch(/unit_test\.jaffle_shop\.stg_locations\.test_does_location_open.* error/);

    // Enter jumps to the node in its run tree
    keys('Enter');
    await until(/› +Node processed \(test\.jaffle_shop.*returning\.d299a3800c\)/, 'jump to the failed test');

    // quit from anywhere
    keys('q');
    s = await until(/EXIT=\d+/, 'exit');
    expect(s).toContain('EXIT=0');
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
    const target = 'receive';
    const cmd = `node ${JSON.stringify(CLI)} explore --receive --port 0 --db ${JSON.stringify(db)}; echo "EXIT=$?"; sleep 600`;
    execFileSync('tmux', ['-L', socket, 'new-session', '-d', '-s', target, '-x', '140', '-y', '40', cmd], { env: { ...env, NO_COLOR: '1' } });
    const s = await until(/receiving OTLP on http:\/\/127\.0\.0\.1:\d+/, 'the receiver address', 20_000, target);
    const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(s)![1]!;
    const sink = new OtlpSink({ endpoint: url, level: 'trace' });
    for await (const r of readRecords(jsonl)) sink.write(r);
    await sink.close();
    await until(/FAILED +build/, 'the streamed run', 20_000, target);
    tmux('send-keys', '-t', target, 'q');
    expect(await until(/EXIT=\d+/, 'exit', 20_000, target)).toContain('EXIT=0');
    const q = spawnSync('node', [CLI, 'runs', '--db', db, '--format', 'json'], { encoding: 'utf8' });
    expect(q.status, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout)).toMatchObject([{ command: 'build', failed: true }]);
  });
});

describe.skipIf(Boolean(missing))('runlens explore at 80x24 and 160x45', () => {
  afterAll(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
  });
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== 'CI' && k !== 'CONTINUOUS_INTEGRATION' && !k.startsWith('CI_')),
  );
  const flags = (target: string) => tmux('display', '-p', '-t', target, '#{mouse_standard_flag}#{mouse_sgr_flag}').trim();

  for (const [width, height] of [[80, 24], [160, 45]] as const) {
    it(`is usable at ${width}x${height}: every column that matters, the keys of each screen, the mouse`, async () => {
      const target = `size${width}`;
      const cmd = `node ${JSON.stringify(CLI)} explore ${JSON.stringify(SAMPLE)}; echo "EXIT=$?"; sleep 600`;
      execFileSync('tmux', ['-L', socket, 'new-session', '-d', '-s', target, '-x', String(width), '-y', String(height), cmd], { env: { ...env, NO_COLOR: '1' } });
      let s = await until(/FAILED +build/, 'the runs screen', 20_000, target);
      for (const l of s.split('\n')) expect(l.length).toBeLessThanOrEqual(width);
      expect(s).toMatch(/t\.fail/);
      expect(s).toContain('019c97cafe1c76e2abb150e9427e666a');
      expect(s).toMatch(/⏎ open +m mark for diff/);
      // the terminal reports the mouse to the explorer (button and SGR modes)
      expect(flags(target)).toBe('11');

      tmux('send-keys', '-t', target, 'Enter');
      s = await until(/323 spans/, 'the run tree', 20_000, target);
      await until(/⏎ fold/, 'the tree keys', 20_000, target);
      expect(/^›/m.exec(s)?.index).toBeDefined();
      const row = () => screen(target).split('\n').findIndex((l) => l.startsWith('›'));
      expect(row()).toBe(1);
      // the wheel as a terminal reports it: three rows down
      tmux('send-keys', '-t', target, '-l', '\x1b[<65;10;5M');
      await until(/^(.*\n){4}›/, 'the wheel moved the cursor', 20_000, target);
      // a click selects the row under it
      tmux('send-keys', '-t', target, '-l', '\x1b[<0;10;9M');
      await until(/^(.*\n){8}›/, 'the clicked row', 20_000, target);
      if (width >= 160) expect(screen(target)).toMatch(/█/); // the waterfall where there is room

      tmux('send-keys', '-t', target, 'q');
      expect(await until(/EXIT=\d+/, 'exit', 20_000, target)).toContain('EXIT=0');
      expect(flags(target)).toBe('00');
    });
  }

  it('leaves the mouse to the terminal with --no-mouse', async () => {
    const target = 'nomouse';
    const cmd = `node ${JSON.stringify(CLI)} explore --no-mouse ${JSON.stringify(SAMPLE)}; echo "EXIT=$?"; sleep 600`;
    execFileSync('tmux', ['-L', socket, 'new-session', '-d', '-s', target, '-x', '100', '-y', '30', cmd], { env: { ...env, NO_COLOR: '1' } });
    await until(/FAILED +build/, 'the runs screen', 20_000, target);
    expect(flags(target)).toBe('00');
    tmux('send-keys', '-t', target, 'q');
    expect(await until(/EXIT=\d+/, 'exit', 20_000, target)).toContain('EXIT=0');
  });
});
