/**
 * Every PATH given to the gate contributes a run, and a folder with nothing runlens can read is an
 * error for every command that takes PATHs.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { FUSION, ROOT, sample, samplesNote } from '../helpers/samples.js';

const CLEAN = path.join(ROOT, 'samples/clean-build.jsonl');
const real = samplesNote(FUSION);
const P120 = sample(FUSION, 'forwarder-otel-preview120.jsonl');
const dir = tempDir('runlens-gate-paths-');

function folder(name: string, files: Record<string, string> = {}): string {
  const d = path.join(dir, name);
  mkdirSync(d, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(path.join(d, f), text);
  return d;
}

describe('gate: every PATH contributes a run', () => {
  it('an empty file beside a clean run is exit 2 naming it', () => {
    const empty = path.join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const g = runCli(['gate', CLEAN, empty]);
    expect(g.code).toBe(2);
    expect(g.stderr).toContain(`${empty}: no run in this input`);
    expect(g.stdout).toBe('');
  });

  it('a folder whose telemetry files hold no run is exit 2 naming the folder', () => {
    const d = folder('only-empty', { 'otel.jsonl': '' });
    const g = runCli(['gate', CLEAN, d]);
    expect(g.code).toBe(2);
    expect(g.stderr).toContain(`${d}: no run in this input`);
  });

  it('a lenient load that skipped every line of a file is exit 2 naming it', () => {
    const bad = writeLines(dir, 'garbage.jsonl', ['{oops', 'not json']);
    const g = runCli(['gate', CLEAN, bad, '--lenient']);
    expect(g.code).toBe(2);
    expect(g.stderr).toContain(`${bad}: no run in this input`);
  });

  it('a lenient load that skipped a line never passes: the line may have held a failure', () => {
    // The clean run with one line cut short: whatever that line said is unknown.
    const lines = readFileSync(CLEAN, 'utf8').split('\n').filter(Boolean);
    const cut = writeLines(dir, 'cut.jsonl', lines.map((l, i) => (i === 39 ? l.slice(0, 50) : l)));
    const g = runCli(['gate', cut, '--lenient']);
    expect(g.code).toBe(2);
    expect(g.stdout).not.toContain('gate passed');
    expect(g.stderr).toContain(`${cut}:40: malformed JSON`);
    expect(g.stderr).toContain('cannot pass');
  });

  it('a model a lenient load skipped lines into never passes: gate --db says which file, later loads or not', () => {
    const lines = readFileSync(CLEAN, 'utf8').split('\n').filter(Boolean);
    const cut = writeLines(dir, 'cut-db.jsonl', lines.map((l, i) => (i === 39 ? l.slice(0, 50) : l)));
    const db = path.join(dir, 'lenient.duckdb');
    expect(runCli(['load', cut, '--lenient', '--db', db]).code).toBe(0);
    for (const args of [['gate', '--db', db], ['gate', '--db', db, '--trace', JSON.parse(lines[0]!).trace_id]]) {
      const g = runCli(args);
      expect(g.code, g.stdout + g.stderr).toBe(2);
      expect(g.stdout).not.toContain('gate passed');
      expect(g.stderr).toContain(`${cut}: the gate cannot pass: the model holds 1 line of this file that a lenient load skipped`);
    }
    // another run loaded later is gated by itself with --trace; the model as a whole still cannot pass
    const other = path.join(dir, 'other-run.jsonl');
    expect(runCli(['generate', '-o', other, '--nodes', '5', '--fail-rate', '0']).code).toBe(0);
    expect(runCli(['load', other, '--db', db]).code).toBe(0);
    const otherTrace = JSON.parse(readFileSync(other, 'utf8').split('\n')[0]!).trace_id as string;
    expect(runCli(['gate', '--db', db, '--trace', otherTrace]).code).toBe(0);
    expect(runCli(['gate', '--db', db]).code).toBe(2);
  });

  it('a lenient gate still reports the failures it read, exit 1', () => {
    const lines = readFileSync(path.join(ROOT, 'samples/failed-build.jsonl'), 'utf8').split('\n').filter(Boolean);
    const cut = writeLines(dir, 'cut-failed.jsonl', lines.map((l, i) => (i === 39 ? l.slice(0, 50) : l)));
    const g = runCli(['gate', cut, '--lenient']);
    expect(g.code).toBe(1);
    expect(g.stdout).toContain('gate FAILED');
    expect(g.stderr).toContain(`${cut}:40: malformed JSON`);
  });

  it('a file named twice (itself and through its folder), or already in --db, still contributes', () => {
    const d = folder('has-clean');
    copyFileSync(CLEAN, path.join(d, 'clean.jsonl'));
    expect(runCli(['gate', d, path.join(d, 'clean.jsonl')]).code).toBe(0);
    const db = path.join(dir, 'm.duckdb');
    expect(runCli(['load', CLEAN, '--db', db]).code).toBe(0);
    const again = runCli(['gate', '--db', db, CLEAN]);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
  });
});

describe.skipIf(real.missing)(real.title('gate: a file whose records are all present but which raises a status contributes'), () => {
  // The real run, and a copy whose invocation ended OK: loaded second, the run takes the ERROR.
  const okCopy = () =>
    writeLines(dir, 'ok-copy.jsonl', readFileSync(P120, 'utf8').split('\n').filter(Boolean).map((l) => {
      const r = JSON.parse(l) as { record_type: string; event_type?: string; status?: unknown };
      return r.record_type === 'SpanEnd' && /invocation\.Invocation/.test(r.event_type ?? '') ? JSON.stringify({ ...r, status: { code: 1 } }) : l;
    }));

  it('either order is exit 1 with the run\'s failures', () => {
    const ok = okCopy();
    for (const args of [[ok, P120], [P120, ok]]) {
      const g = runCli(['gate', ...args]);
      expect(g.stderr, args.join(' ')).toBe('');
      expect(g.code, args.join(' ')).toBe(1);
      expect(g.stdout).toContain('gate FAILED');
      expect(g.stdout).toMatch(/run 019c97cafe1c76e2abb150e9427e666a \(build\): run-error/);
    }
  });

  it('as it does on a model that holds the copy (--db)', () => {
    const db = path.join(dir, 'ok-copy.duckdb');
    expect(runCli(['load', okCopy(), '--db', db]).code).toBe(0);
    const g = runCli(['gate', '--db', db, P120]);
    expect(g.stderr).toBe('');
    expect(g.code).toBe(1);
    expect(g.stdout).toMatch(/run 019c97cafe1c76e2abb150e9427e666a \(build\): run-error/);
  });
});

describe('gate: one run written twice by the engine', () => {
  it('its JSONL and its Parquet copy each contribute the run', () => {
    const g = runCli(['gate', CLEAN, path.join(ROOT, 'samples/clean-build.parquet')]);
    expect(g.stderr).toBe('');
    expect(g.code).toBe(0);
  });
});

describe('every command: a folder with nothing runlens can read is exit 2 naming it', () => {
  const emptyDir = folder('empty-dir');
  const notes = folder('notes-only', { 'README.md': '# notes\n', 'data.csv': 'a,b\n' });
  it.each([
    ['gate', emptyDir], ['runs', emptyDir], ['load', emptyDir], ['tree', notes], ['query', notes],
  ])('%s %s', (cmd, d) => {
    const args = cmd === 'query' ? ['query', 'errors', d] : [cmd, d];
    const r = runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${d}: no telemetry files in this folder`);
  });
});
