/** Output paths mean what they say: -o FILE is that file, -o - is stdout, --project-dir asks for the engine's layout. */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, ROOT, sample, samplesNote } from '../helpers/samples.js';

const lines = (text: string) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { record_type: string });

describe('generate -o', () => {
  it('writes the file named, relative to the working folder, and says so', () => {
    const cwd = tempDir();
    const r = runCli(['generate', '-o', 'otel.jsonl', '--nodes', '6'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(cwd)).toEqual(['otel.jsonl']);
    expect(r.stdout).toContain('to otel.jsonl');
    expect(lines(readFileSync(path.join(cwd, 'otel.jsonl'), 'utf8')).length).toBeGreaterThan(20);
  });

  it('creates missing parent folders', () => {
    const cwd = tempDir();
    expect(runCli(['generate', '-o', 'a/b/otel.parquet', '--nodes', '6'], { cwd }).code).toBe(0);
    expect(readFileSync(path.join(cwd, 'a/b/otel.parquet')).subarray(0, 4).toString()).toBe('PAR1');
  });

  it('--project-dir DIR writes the engine layout: DIR/logs/NAME for JSONL, DIR/target/metadata/NAME for Parquet', () => {
    const cwd = tempDir();
    expect(runCli(['generate', '--project-dir', 'proj', '--nodes', '6'], { cwd }).code).toBe(0);
    expect(runCli(['generate', '--project-dir', 'proj', '--format', 'parquet', '--nodes', '6'], { cwd }).code).toBe(0);
    expect(runCli(['generate', '--project-dir', 'proj', '-o', 'mine.jsonl', '--nodes', '6'], { cwd }).code).toBe(0);
    expect(existsSync(path.join(cwd, 'proj/logs/otel.jsonl'))).toBe(true);
    expect(existsSync(path.join(cwd, 'proj/target/metadata/otel.parquet'))).toBe(true);
    expect(existsSync(path.join(cwd, 'proj/logs/mine.jsonl'))).toBe(true);
    expect(readdirSync(cwd)).toEqual(['proj']);
  });

  it('-o - writes JSONL to stdout, the summary to stderr, and no file', () => {
    const cwd = tempDir();
    const r = runCli(['generate', '-o', '-', '--nodes', '6'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(new Set(lines(r.stdout).map((x) => x.record_type))).toEqual(new Set(['SpanStart', 'SpanEnd', 'LogRecord']));
    expect(r.stderr).toMatch(/wrote \d+ records .* to stdout/);
    expect(readdirSync(cwd)).toEqual([]);
    expect(runCli(['generate', '-o', '-', '--format', 'parquet'], { cwd }).code).toBe(2);
  });

  it('an output that cannot be written is exit 2 naming it, never a silent 0', () => {
    const cwd = tempDir();
    mkdirSync(path.join(cwd, 'taken.jsonl'));
    writeFileSync(path.join(cwd, 'afile'), '');
    const writers = (out: string) => [
      ['generate', '-o', out, '--nodes', '6'],
      ['convert', path.join(ROOT, 'samples/clean-build.jsonl'), out],
      ['migrate', path.join(ROOT, 'samples/older-engine/target/run_results.json'), '-o', out],
    ];
    for (const out of ['taken.jsonl', 'afile/x.jsonl'])
      for (const args of writers(out)) {
        const r = runCli(args, { cwd });
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr, args.join(' ')).toMatch(/^runlens: \S*(taken\.jsonl|afile)\S*: (it is a folder, not a file|it is a file, not a folder|a part of the path is a file, not a folder)\n$/);
      }
    // a place that cannot hold a file at all (/proc takes no new files)
    for (const args of writers('/proc/runlens-x.jsonl')) {
      const r = runCli(args, { cwd });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^runlens: \/proc\/runlens-x\.jsonl: no such file or folder\n$/);
    }
  });

  it('a missing input is said in the same words by every command that reads one', () => {
    for (const cmd of [['load'], ['gate'], ['validate'], ['migrate', '-o', '-'], ['convert', '-']]) {
      const args = [cmd[0]!, 'missing.jsonl', ...cmd.slice(1)];
      const r = runCli(args, { cwd: tempDir() });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toBe('runlens: missing.jsonl: no such file or folder\n');
    }
  });

  it('-o is -o, --output in the help', () => {
    for (const cmd of ['generate', 'migrate', 'record', 'report']) expect(runCli([cmd, '--help']).stdout, cmd).toMatch(/-o, --output/);
  });
});

describe('report -o', () => {
  it('- writes the HTML to stdout and the summary to stderr', () => {
    const r = runCli(['report', 'samples/failed-build.jsonl', '-o', '-']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^<!doctype html>/i);
    expect(r.stderr).toMatch(/^wrote stdout \(\d+ KiB\): run [0-9a-f]{32}, FAILED\n$/);
  });
});

describe('convert INPUT -', () => {
  it('writes JSONL to stdout, the same lines as a file, and the summary to stderr', () => {
    const cwd = tempDir();
    expect(runCli(['convert', path.resolve('samples/failed-build.jsonl'), 'file.jsonl'], { cwd }).code).toBe(0);
    const r = runCli(['convert', path.resolve('samples/failed-build.jsonl'), '-'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(readFileSync(path.join(cwd, 'file.jsonl'), 'utf8'));
    expect(r.stderr).toMatch(/^wrote \d+ records to stdout\n$/);
    expect(readdirSync(cwd)).toEqual(['file.jsonl']);
  });
});

const note = samplesNote(LEGACY);
describe.skipIf(note.missing)(note.title('migrate and record -o'), () => {
  const RR = sample(LEGACY, 'rr_v4_1.0.0_build_error.json');
  const LOG = sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl');

  it('migrate takes --output, its alias --out, and - for stdout', () => {
    const cwd = tempDir();
    expect(runCli(['migrate', RR, '--output', 'a.jsonl'], { cwd }).code).toBe(0);
    expect(runCli(['migrate', RR, '--out', 'b.jsonl'], { cwd }).code).toBe(0);
    // (ids are random: compare the records' shape)
    const shape = (text: string) => lines(text).map((r) => `${r.record_type} ${(r as { span_name?: string }).span_name}`);
    const a = shape(readFileSync(path.join(cwd, 'a.jsonl'), 'utf8'));
    expect(a.length).toBeGreaterThan(10);
    expect(shape(readFileSync(path.join(cwd, 'b.jsonl'), 'utf8'))).toEqual(a);
    const s = runCli(['migrate', RR, '-o', '-'], { cwd });
    expect(s.code, s.stderr).toBe(0);
    expect(shape(s.stdout)).toEqual(a);
    expect(s.stderr).toContain('to stdout');
  });

  it('an output folder in the way is exit 2 naming it', () => {
    const cwd = tempDir();
    mkdirSync(path.join(cwd, 'taken.jsonl'));
    const r = runCli(['migrate', RR, '-o', 'taken.jsonl'], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/taken\.jsonl: it is a folder, not a file/);
  });

  it('record -o - writes JSONL to stdout and the command text to stderr', () => {
    const cwd = tempDir();
    const r = runCli(['record', '-o', '-', '--', 'cat', LOG], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stdout).length).toBeGreaterThan(10);
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe('record of a command that cannot run', () => {
  it('says "command not found", exits 127 as a shell does, and leaves no output file', () => {
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'keep.jsonl'), 'an earlier output\n');
    const r = runCli(['record', '-o', 'x.jsonl', '--', 'nosuchcmd-runlens', 'build'], { cwd });
    expect(r.code).toBe(127);
    expect(r.stderr).toBe('runlens: command not found: nosuchcmd-runlens\n');
    expect(existsSync(path.join(cwd, 'x.jsonl'))).toBe(false);
    const again = runCli(['record', '-o', 'keep.jsonl', '--', 'nosuchcmd-runlens'], { cwd });
    expect(again.code).toBe(127);
    expect(readFileSync(path.join(cwd, 'keep.jsonl'), 'utf8')).toBe('an earlier output\n');
  });
});
