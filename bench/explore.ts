/**
 * Explorer bench (issue 5):
 *  - time to first screen on a 1M-record file: the built CLI in a pseudo-terminal (`script`), from
 *    spawn to the first painted frame, and to the runs list once the background load is done;
 *  - key-press-to-frame latency while scrolling a 100k-span tree: the App rendered by ink with the
 *    CLI's render options into an in-memory TTY, the time from writing a key to stdin to the first
 *    frame written that shows the moved cursor (median and p95), and to the frame with every row in
 *    view filled in.
 * Run alone: `npm run build && node dist/bench/explore.js [records]`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generate } from '../src/produce/generate/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../src/cli.js');
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;

function noCiEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CI' && k !== 'CONTINUOUS_INTEGRATION' && !k.startsWith('CI_')));
}

/** The CLI in a pty: ms to the first frame, and to the runs list. */
async function firstScreen(file: string, runs: number): Promise<{ paint: number; runs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('script', ['-qfec', `node ${JSON.stringify(CLI)} explore ${JSON.stringify(file)}`, '/dev/null'], {
      env: { ...noCiEnv(), COLUMNS: '140', LINES: '40' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    let paint = 0;
    let done = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`explore did not show the runs within 10 minutes; output:\n${out.replace(ANSI, '').slice(-2000)}`));
    }, 600_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const text = out.replace(ANSI, '');
      if (!paint && /loading|runs \(/.test(text)) paint = performance.now() - t0;
      if (!done && text.includes(`runs (${runs})`)) {
        done = true;
        const total = performance.now() - t0;
        clearTimeout(timer);
        child.stdin.write('q');
        child.on('exit', () => resolve({ paint, runs: total }));
      }
    });
    child.on('error', reject);
  });
}

class TtyOut extends EventEmitter {
  isTTY = true;
  columns = 140;
  rows = 40;
  onWrite: ((s: string) => void) | undefined;
  write(s: string): boolean {
    this.onWrite?.(s);
    return true;
  }
}

/** The stdin ink expects (the same shape ink-testing-library uses). */
class TtyIn extends EventEmitter {
  isTTY = true;
  private data: string | null = null;
  write(d: string): void {
    this.data = d;
    this.emit('readable');
    this.emit('data', d);
  }
  read(): string | null {
    const d = this.data;
    this.data = null;
    return d;
  }
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
}

interface Latency {
  frame: number[];
  filled: number[];
}

/** Scroll the biggest trace with the App rendered as the CLI renders it. */
export async function scrollLatency(file: string, presses: number): Promise<{ spans: number; j: Latency; page: Latency; renderMs: number[] }> {
  // ink decides at import whether it runs in CI (then it draws only the final frame)
  for (const k of Object.keys(process.env)) if (k === 'CI' || k === 'CONTINUOUS_INTEGRATION' || k.startsWith('CI_')) delete process.env[k];
  // as `runlens explore` does: React's production build
  process.env.NODE_ENV ??= 'production';
  const React = await import('react');
  const { render } = await import('ink');
  const { App } = await import('../src/ui/App.js');
  const { loadPaths, openModel } = await import('../src/store/load.js');
  const { readerFor, closeReader } = await import('../src/analyze/explore/reader.js');
  const db = await openModel();
  await loadPaths(db, [file]);
  const reader = await readerFor(db);
  const big = await db.one<{ n: number; i: number }>(
    // its place on the runs screen, newest first
    `SELECT spans::INTEGER AS n, (row_number() OVER (ORDER BY start_ns DESC, trace_id DESC) - 1)::INTEGER AS i FROM runs ORDER BY spans DESC LIMIT 1`,
  );
  const renderMs: number[] = [];
  const stdout = new TtyOut();
  const stdin = new TtyIn();
  let last = '';
  let waiter: ((frame: string) => boolean) | undefined;
  stdout.onWrite = (s) => {
    last = s.replace(ANSI, '');
    if (waiter?.(last)) waiter = undefined;
  };
  const until = (test: (f: string) => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (test(last)) return resolve();
      const t = setTimeout(() => reject(new Error(`bench: timed out waiting for ${what}:\n${last}`)), 120_000);
      waiter = (f) => {
        if (!test(f)) return false;
        clearTimeout(t);
        resolve();
        return true;
      };
    });
  const selected = (f: string) => f.split('\n').find((l) => l.startsWith('›')) ?? '';
  const app = render(React.createElement(App, { db: reader, theme: { color: false } }), {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    stderr: stdout as unknown as NodeJS.WriteStream,
    maxFps: 60,
    onRender: (m) => renderMs.push(m.renderTime),
    patchConsole: false,
    exitOnCtrlC: false,
  });
  await until((f) => /runs \(\d+\)/.test(f) && f.includes('build'), 'the runs list');
  for (let i = 0; i < (big?.i ?? 0); i++) stdin.write('j');
  stdin.write('\r');
  await until((f) => new RegExp(`${big?.n ?? ''} spans`).test(f) && selected(f).length > 0 && !f.includes('…\n'), 'the tree');
  stdin.write('E'); // everything expanded: 100k visible rows
  await until((f) => new RegExp(`${big?.n} spans +${big?.n} shown`).test(f), 'the expanded tree');

  const press = async (key: string, out: Latency) => {
    const before = selected(last);
    const t0 = performance.now();
    const moved = until((f) => selected(f) !== before, 'the cursor to move').then(() => out.frame.push(performance.now() - t0));
    stdin.write(key);
    await moved;
    await until((f) => !/^.[ ▸▾]*…/m.test(f.split('\n').slice(1, -2).join('\n')), 'rows in view').then(() => out.filled.push(performance.now() - t0));
  };
  renderMs.length = 0;
  const j: Latency = { frame: [], filled: [] };
  const page: Latency = { frame: [], filled: [] };
  for (let i = 0; i < presses; i++) await press('j', j);
  for (let i = 0; i < Math.min(100, presses); i++) await press('\x1b[6~', page); // page down
  app.unmount();
  await closeReader(reader);
  db.close();
  return { spans: big?.n ?? 0, j, page, renderMs };
}

export async function runExploreBench(opts: { records?: number } = {}): Promise<void> {
  const target = opts.records ?? 1_000_000;
  const dir = mkdtempSync(path.join(tmpdir(), 'runlens-bench-explore-'));
  try {
    // Runs of 20,000 nodes (~100k spans each) up to the record target.
    const file = path.join(dir, 'explore.jsonl');
    let t = performance.now();
    const one = await generate({ output: file, runs: 1, nodes: 20_000, seed: 11, failRate: 0.01 });
    const runs = Math.max(1, Math.round(target / one.records));
    const g = runs === 1 ? one : await generate({ output: file, runs, nodes: 20_000, seed: 11, failRate: 0.01 });
    console.log(`explore: generated ${g.records.toLocaleString()} records in ${runs} run(s) (${((performance.now() - t) / 1000).toFixed(1)} s)`);

    if (spawnSync('script', ['--version']).status !== 0) console.log('explore: first screen skipped: `script` (util-linux) is not installed');
    else {
      const s = await firstScreen(file, runs);
      // baseline: starting the CLI at all (node, yargs, every command module)
      const starts: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        spawnSync('node', [CLI, '--version']);
        starts.push(performance.now() - t0);
      }
      console.log(`explore: first screen ${ms(s.paint)} after spawn (goal < 1 s; \`runlens --version\` alone: ${ms(Math.min(...starts))}), runs list after the background load ${ms(s.runs)} (${g.records.toLocaleString()} records)`);
    }

    t = performance.now();
    const r = await scrollLatency(file, 300);
    const line = (what: string, l: Latency) =>
      `explore: ${what}: key to next frame median ${ms(pct(l.frame, 50))}, p95 ${ms(pct(l.frame, 95))} (goal median < 50 ms); to rows filled median ${ms(pct(l.filled, 50))}, p95 ${ms(pct(l.filled, 95))} (${l.frame.length} presses)`;
    console.log(line(`scroll j in a ${r.spans.toLocaleString()}-span tree`, r.j));
    console.log(line('page down', r.page));
    console.log(`explore: ink frames while scrolling: ${r.renderMs.length}, render time median ${ms(pct(r.renderMs, 50))}, p95 ${ms(pct(r.renderMs, 95))}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runExploreBench({ records: process.argv[2] ? Number(process.argv[2]) : undefined });
}
