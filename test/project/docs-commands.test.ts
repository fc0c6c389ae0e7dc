/**
 * Every command the docs show in a shell block works when pasted. The blocks fenced ```sh in
 * README.md and docs/*.md run line by line in bash, in order, from a scratch folder that holds the
 * bundled samples (`samples/`), with `runlens` the built CLI; a line passes with exit 0, or with the
 * exit code its comment names ("# exit 1: ..."), and never an internal error. `npx runlens ...` runs
 * from the project root, as the quick start says; `npm` commands are what CI itself runs. An
 * `explore` line runs in a real terminal (tmux) and is quit with q. Blocks fenced ```console show a
 * command after `$ ` and its exact output. Synopses and commands that need a service, the engine or
 * a live stream are fenced ```text and are not run; docs/service-walkthrough.md is run by
 * test/service/walkthrough.e2e.test.ts, against a server of its own.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';
import { haveTmux, Terminal } from '../helpers/terminal.js';
import { CLI } from '../helpers/cli.js';

const RUN_ELSEWHERE = new Set(['docs/service-walkthrough.md']);

interface Step {
  /** the command as the reader pastes it (continuation lines joined) */
  command: string;
  /** the exit code the docs promise */
  exit: number;
  /** ```console blocks: the output shown under the command */
  output?: string;
}

/** The commands of a document's ```sh and ```console blocks, in order. */
function docSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  for (const block of markdown.matchAll(/^```(sh|console)\n([\s\S]*?)^```/gm)) {
    const lines = block[2]!.replace(/\\\n\s*/g, '').split('\n');
    if (block[1] === 'console') {
      for (let i = 0; i < lines.length; i++) {
        if (!lines[i]!.startsWith('$ ')) continue;
        const output: string[] = [];
        for (let j = i + 1; j < lines.length && !lines[j]!.startsWith('$ '); j++) output.push(lines[j]!);
        steps.push({ command: lines[i]!.slice(2), exit: 0, output: output.join('\n').trimEnd() });
      }
      continue;
    }
    for (const line of lines) {
      if (!line.trim() || line.trim().startsWith('#')) continue;
      const exit = /#.*\bexit (\d+)\b/.exec(line);
      steps.push({ command: line.replace(/\s+#.*$/, '').trim(), exit: exit ? Number(exit[1]) : 0 });
    }
  }
  return steps;
}

const documents = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  .filter((d) => !RUN_ELSEWHERE.has(d))
  .map((d) => ({ doc: d, steps: docSteps(readFileSync(path.join(ROOT, d), 'utf8')) }))
  .filter((d) => d.steps.length > 0);

const inCi = Boolean(process.env.CI);

/** A scratch folder with the bundled samples and a `runlens` on PATH that is the built CLI. */
function scratch(): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = tempDir('runlens-docs-');
  symlinkSync(path.join(ROOT, 'samples'), path.join(cwd, 'samples'));
  const bin = path.join(cwd, '.bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'runlens'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
  chmodSync(path.join(bin, 'runlens'), 0o755);
  return { cwd, env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, CI: 'true', NO_COLOR: '1' } };
}

function bash(command: string, cwd: string, env: NodeJS.ProcessEnv): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('bash', ['-o', 'pipefail', '-c', command], { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 120_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** An explore command in a real terminal: it must draw a screen and quit on q with exit 0. */
async function exploreInTerminal(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const t = new Terminal(command, { width: 120, height: 30, cwd, env });
  try {
    await t.until(/\? keys|EXIT=/, `${command}: the explorer to draw`, 30_000);
    t.keys('q');
    const code = await t.exitCode(30_000);
    expect(code, t.screen()).toBe(0);
  } finally {
    t.close();
  }
}

describe.skipIf(!existsSync(CLI))('the shell blocks of README.md and docs/, pasted', () => {
  it('are found: the README quick start, and blocks in the docs', () => {
    expect(documents.find((d) => d.doc === 'README.md')?.steps.length).toBeGreaterThan(10);
    expect(documents.length).toBeGreaterThan(4);
  });

  for (const { doc, steps } of documents) {
    describe(doc, () => {
      const { cwd, env } = scratch();
      for (const step of steps) {
        const words = step.command.split(/\s+/);
        if (words[0] === 'npm') {
          // the quick start's `npm ci && npx runlens ...`: CI runs npm ci and npm test itself
          const npx = /&& (npx runlens .*)$/.exec(step.command)?.[1];
          if (!npx) continue;
          it(`${npx} (from the project root)`, () => {
            const r = bash(npx, ROOT, env);
            expect(r.code, r.stderr).toBe(step.exit);
          });
          continue;
        }
        if (words[0] === 'runlens' && words[1] === 'explore') {
          const why = haveTmux ? '' : 'tmux is not installed';
          it.skipIf(Boolean(why) && !inCi)(`${step.command} (in a terminal)${why ? ` (skipped: ${why})` : ''}`, async () => {
            await exploreInTerminal(step.command, cwd, env);
          }, 60_000);
          continue;
        }
        it(step.command, () => {
          const r = bash(step.command, cwd, env);
          expect(r.stderr).not.toMatch(/internal error/);
          expect(r.code, `${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(step.exit);
          if (step.output !== undefined) expect(r.stdout.trimEnd()).toBe(step.output);
        }, 120_000);
      }
    });
  }
});
