/**
 * docs/service-walkthrough.md, run as written: its shell blocks are extracted and run by bash in an
 * empty folder with `runlens` (the built CLI) on the PATH. The block with `runlens serve` runs in
 * the background like the terminal of its own the text asks for; the others run as one script with
 * `set -euo pipefail`; `runlens explore` runs in a real terminal (tmux) and is quit with q. Ports
 * 8080 and 9000 are replaced by free ones so the test can run beside anything else.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { haveTmux, Terminal } from '../helpers/terminal.js';
import { CLI } from '../helpers/cli.js';
import { freePort } from './helpers.js';

const DOC = resolve('docs/service-walkthrough.md');
const has = (cmd: string) => spawnSync(cmd, ['--version']).status === 0;
const missing = !existsSync(CLI) ? `${CLI} is not built (npm run build)` : !has('jq') ? 'jq is not installed (the walkthrough uses it)' : !has('bash') ? 'bash is not installed' : '';
if (missing) {
  if (process.env.CI) throw new Error(`the walkthrough test cannot run in CI: ${missing}`);
  console.warn(`skipping the service walkthrough test: ${missing}`);
}

/** The ```sh blocks of a Markdown text, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

describe.skipIf(Boolean(missing))('docs/service-walkthrough.md', () => {
  const dir = mkdtempSync(join(tmpdir(), 'runlens-walkthrough-'));
  let serve: ChildProcess | undefined;

  afterAll(async () => {
    if (serve && serve.exitCode === null) {
      serve.kill('SIGTERM');
      await new Promise((r) => serve!.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('every command works as pasted: serve, account, token, listener, subscription, job, run --wait, delivery log, fetch, explore', async () => {
    const [servePort, listenPort] = [await freePort(), await freePort()];
    const blocks = shellBlocks(readFileSync(DOC, 'utf8')).map((b) => b.replace(/\b8080\b/g, String(servePort)).replace(/\b9000\b/g, String(listenPort)));
    expect(blocks[0]).toMatch(/^runlens serve [^\n]*\n$/);

    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'runlens'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
    chmodSync(join(bin, 'runlens'), 0o755);
    const work = join(dir, 'work');
    mkdirSync(work);
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNLENS_') && k !== 'CI')),
      PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1',
    };

    serve = spawn('bash', ['-c', `exec ${blocks[0]}`], { cwd: work, env, stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolvePromise, reject) => {
      let err = '';
      serve!.stderr!.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        if (err.includes(`listening on http://127.0.0.1:${servePort}`)) resolvePromise();
      });
      serve!.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });

    const explore = blocks.flatMap((b) => b.split('\n')).filter((l) => l.startsWith('runlens explore '));
    expect(explore).toEqual(['runlens explore run.parquet']);
    // A failing line leaves no background job (the listener) behind.
    const script = ['set -euo pipefail', 'trap \'kill $(jobs -p) 2>/dev/null || true\' EXIT', ...blocks.slice(1).map((b) => b.split('\n').filter((l) => !l.startsWith('runlens explore ')).join('\n'))].join('\n');
    const r = spawnSync('bash', ['-c', script], { cwd: work, env, encoding: 'utf8', timeout: 240_000 });
    expect(r.status, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);

    expect(r.stdout).toMatch(/^\d+ {2,}.* {2,}walkthrough( {2,}|$)/m); // tokens list
    expect(r.stdout).toMatch(/^id\t\d+\njob_id\t\d+\nstatus_humanized\tSuccess\n/m); // jobs run --wait
    expect(r.stderr).toMatch(/^run \d+: Success$/m);
    expect(r.stdout).toMatch(/job\.run\.started \S+ job=\d+ run=\d+ status=Running/); // the listener
    expect(r.stdout).toMatch(/ {2}runlens generate -o telemetry\.jsonl --nodes 40 {2,}Success +0 +[\d:]+ +telemetry-1-otel\.parquet$/m);
    expect(r.stdout).toMatch(/^wev_\w+ {2,}job\.run\.(started|completed) {2,}/m); // webhooks events
    expect(r.stdout).toMatch(/^attempt {2,}dispatched_at/m); // webhooks receipt
    expect(r.stdout).toMatch(/run\.parquet\t\d+ bytes \(step 1\)/);
    expect(r.stdout).toMatch(/^[0-9a-f]{32} {2,}build {2,}/m); // runs run.parquet
    expect(r.stdout).toMatch(/deleted job \d+ \(nightly\)/);
    expect(readFileSync(join(work, 'run.parquet')).subarray(0, 4).toString()).toBe('PAR1');

    if (!haveTmux) {
      console.warn('skipping the `runlens explore` line of the walkthrough: tmux is not installed');
      return;
    }
    const t = new Terminal(explore[0]!, { width: 140, height: 40, cwd: work, env });
    try {
      await t.until(/runs \(1\)[\s\S]*build/, 'the runs screen of the fetched telemetry', 60_000);
      t.keys('q');
      expect(await t.exitCode()).toBe(0);
    } finally {
      t.close();
    }
  }, 300_000);
});
