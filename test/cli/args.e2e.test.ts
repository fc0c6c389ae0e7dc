/** Arguments as a Unix tool takes them: options before or after PATHs, lists by comma or repeat, a closed pipe, values required. */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { ROOT } from '../helpers/samples.js';

const FAILED = 'samples/failed-build.jsonl';
const TWO = 'samples/two-runs.jsonl';

describe('options before or after PATHs', () => {
  it('gate --fail-on VALUE PATH reads PATH as a path, as gate PATH --fail-on VALUE does', () => {
    const before = runCli(['gate', '--fail-on', 'error', FAILED, '--reporter', 'json']);
    const after = runCli(['gate', FAILED, '--fail-on', 'error', '--reporter', 'json']);
    expect(before.stderr).toBe('');
    expect(before.code).toBe(1);
    expect(before.stdout).toBe(after.stdout);
    // error only: the failed test is not an offender
    expect((JSON.parse(before.stdout) as { offenders: { rule: string }[] }).offenders.map((o) => o.rule)).not.toContain('test-failed');
  });

  it('a list option takes commas, repeats or both', () => {
    const reasons = (args: string[]) =>
      new Set((JSON.parse(runCli(['gate', ...args, FAILED, '--reporter', 'json']).stdout) as { offenders: { rule: string }[] }).offenders.map((o) => o.rule));
    const commas = reasons(['--fail-on', 'error,skipped']);
    expect(commas).toEqual(reasons(['--fail-on', 'error', '--fail-on', 'skipped']));
    expect(commas).toEqual(new Set(['error', 'skipped']));
    expect(reasons(['--fail-on', 'error,skipped', '--fail-on', 'test-failed'])).toEqual(new Set(['error', 'skipped', 'test-failed']));
  });

  it('query --param k=v NAME PATH works, and --param takes repeats', () => {
    const rows = (args: string[]) => JSON.parse(runCli(['query', ...args, '--format', 'json']).stdout) as { scope: string; trace_id: string }[];
    const before = rows(['--param', 'limit=2', 'slowest-nodes', FAILED]);
    expect(before.filter((r) => r.scope === 'overall')).toHaveLength(2);
    expect(before).toEqual(rows(['slowest-nodes', FAILED, '--param', 'limit=2']));
    const traces = rows(['slowest-nodes', TWO]).map((r) => r.trace_id);
    const one = traces[0]!;
    const both = rows(['--param', 'limit=1', '--param', `trace=${one}`, 'slowest-nodes', TWO]);
    expect(both.filter((r) => r.scope === 'overall')).toHaveLength(1);
    expect(new Set(both.map((r) => r.trace_id))).toEqual(new Set([one]));
    expect(rows(['--param', `limit=1,trace=${one}`, 'slowest-nodes', TWO])).toEqual(both);
  });
});

describe('after --', () => {
  /** A folder holding samples under names that start with a dash (only `--` can name them). */
  const dashed = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'runlens-dash-'));
    copyFileSync(path.join(ROOT, FAILED), path.join(dir, '-failed.jsonl'));
    copyFileSync(path.join(ROOT, TWO), path.join(dir, 'two.jsonl'));
    return dir;
  };
  const traces = (r: { stdout: string }) => (JSON.parse(r.stdout) as { trace_id: string }[]).map((x) => x.trace_id).sort();

  it('the words after -- are PATHs of every command that reads PATHs', () => {
    const dir = dashed();
    const both = runCli(['runs', 'two.jsonl', path.join(ROOT, FAILED), '--format', 'json'], { cwd: dir });
    expect(both.code).toBe(0);
    expect(traces(both)).toHaveLength(3);
    const r = runCli(['runs', 'two.jsonl', '--format', 'json', '--', '-failed.jsonl'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(traces(r)).toEqual(traces(both));
    const q = runCli(['query', '--sql', 'SELECT DISTINCT trace_id FROM runs', '--format', 'json', '--', 'two.jsonl', '-failed.jsonl'], { cwd: dir });
    expect(traces(q)).toEqual(traces(both));
    const saved = runCli(['query', 'failed-tests', '--format', 'json', '--', '-failed.jsonl'], { cwd: dir });
    expect(saved.code).toBe(0);
    expect(JSON.parse(saved.stdout)).not.toHaveLength(0);
  });

  it('gate PATH -- FAILED gates the failed run too', () => {
    const plain = runCli(['gate', TWO, FAILED, '--reporter', 'json']);
    expect(plain.code).toBe(1);
    const r = runCli(['gate', TWO, '--reporter', 'json', '--', FAILED]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(plain.stdout);
  });

  it('words after -- that no argument of the command takes are a usage error', () => {
    for (const args of [['queries', '--', 'x'], ['map-status', 'success', '--', 'x'], ['webhooks', 'list', '--', 'x']]) {
      const r = runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/unexpected argument.*"x"/);
    }
  });
});

describe('stdin', () => {
  it('a PATH of - (standard input) is refused as such, before or after --', () => {
    for (const args of [['runs', '-'], ['gate', FAILED, '-', '--reporter', 'json'], ['tree', '--depth', '1', '-'], ['runs', '--', '-']]) {
      const r = runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('-: reading telemetry from standard input is not supported');
    }
  });

  it('convert - OUT is refused as the reading commands refuse -, and writes nothing', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'runlens-stdin-'));
    try {
      const r = runCli(['convert', '-', 'out.jsonl'], { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('runlens: -: reading telemetry from standard input is not supported: save it to a file and give its path\n');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('receive --jsonl -, --parquet - and --db - are refused, naming the option, and make no file named -', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'runlens-stdout-'));
    try {
      for (const flag of ['--jsonl', '--parquet', '--db']) {
        // (bounded: a receive that takes the option runs until stopped)
        const r = spawnSync(process.execPath, [CLI, 'receive', '--port', '0', flag, '-'], { cwd: dir, encoding: 'utf8', timeout: 20_000, env: { ...process.env, CI: 'true' } });
        expect(r.status, flag).toBe(2);
        expect(r.stderr, flag).toContain(`runlens: ${flag} -: receive writes files, not standard output: name a file`);
        expect(readdirSync(dir), flag).toEqual([]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('values', () => {
  it('an option spelled with a dot, or a short option joined to a path, is a usage error, not an internal one', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'runlens-dotted-'));
    for (const args of [['generate', '--out.x', 'y.jsonl'], ['generate', '-o../z.jsonl', '--nodes', '4']]) {
      const r = runCli(args, { cwd: dir });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/unknown option or extra argument/);
      expect(r.stderr).not.toMatch(/internal error/);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('an unknown option is named even when it took the word after it, which leaves an argument missing', () => {
    const r = runCli(['convert', '--lenient', FAILED, 'out.parquet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^runlens: unknown option or extra argument: --lenient\n/);
    expect(r.stderr).not.toMatch(/missing arguments/);
  });

  it('a file whose name starts with a dash, given without --, is named as written, with the way to give it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'runlens-dash-'));
    copyFileSync(FAILED, path.join(dir, '-x.jsonl'));
    const r = runCli(['runs', '-x.jsonl'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^runlens: unknown option or extra argument: -x\.jsonl\n/);
    expect(r.stderr).toContain('to name a file that starts with a dash, give it after --: runlens runs -- -x.jsonl');
    expect(runCli(['runs', '--', '-x.jsonl'], { cwd: dir }).code).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('--trace without a value is a usage error', () => {
    for (const cmd of ['tree', 'gate']) {
      const r = runCli([cmd, FAILED, '--trace']);
      expect(r.code, cmd).toBe(2);
      expect(r.stderr, cmd).toMatch(/--trace/);
      expect(r.stdout, cmd).toBe('');
    }
  });

  it('an option that takes a value without one is a usage error naming it, whatever the command', () => {
    const F = path.join(ROOT, FAILED);
    const cwd = mkdtempSync(path.join(tmpdir(), 'runlens-novalue-'));
    const cases: [string[], string][] = [
      [['runs', F, '--format'], '--format'],
      [['gate', F, '--reporter'], '--reporter'],
      [['tree', F, '--depth'], '--depth'],
      [['tree', F, '--depth', '--format', 'json'], '--depth'],
      [['query', 'errors', F, '--format'], '--format'],
      [['webhooks', 'list', '--limit'], '--limit'],
      [['generate', '-o', 'a.jsonl', '--seed'], '--seed'],
      [['tree', F, '--trace='], '--trace'],
      [['tree', F, '--trace', ''], '--trace'],
      [['gate', F, '--trace='], '--trace'],
      [['report', F, '-o', ''], '--output'],
      [['runs', F, '--db='], '--db'],
    ];
    for (const [args, option] of cases) {
      const r = runCli(args, { cwd });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`${option} needs a value`);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it("an empty value is refused unless the option says what it means (webhooks --job-ids '': every job)", () => {
    const conn = ['--base-url', 'http://127.0.0.1:9', '--account', '1', '--token', 't'];
    const named = runCli(['webhooks', 'update', 'wsu_x', '--name', '', ...conn]);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain('--name needs a value');
    // accepted: the update goes on to the (unreachable) service
    const cleared = runCli(['webhooks', 'update', 'wsu_x', '--job-ids', '', '--description', '', ...conn]);
    expect(cleared.stderr).toContain('cannot reach the service');
  });

  it('a single-value option given twice is a usage error naming it, whatever the command', () => {
    // absolute PATHs and a scratch folder as the working folder: a case that is not refused writes nothing here
    const F = path.join(ROOT, FAILED);
    const cwd = mkdtempSync(path.join(tmpdir(), 'runlens-twice-'));
    const cases: [string[], string][] = [
      [['runs', F, '--format', 'json', '--format', 'json'], '--format'],
      [['gate', F, '--reporter', 'junit', '--reporter', 'junit'], '--reporter'],
      [['tree', F, '--format', 'json', '--format', 'json'], '--format'],
      [['critical-path', F, '--format', 'json', '--format', 'json'], '--format'],
      [['query', 'errors', F, '--format', 'csv', '--format', 'csv'], '--format'],
      [['load', F, '--format', 'json', '--format', 'json'], '--format'],
      [['tree', F, '--trace', '019c', '--trace', '019c'], '--trace'],
      [['gate', F, '--trace', '019c', '--trace', '019c'], '--trace'],
      [['critical-path', F, '--trace', '019c', '--trace', '019c'], '--trace'],
      [['report', F, '--trace', '019c', '--trace', '019c', '-o', '-'], '--trace'],
      [['report', F, '-o', 'a.html', '-o', 'b.html'], '--output'],
      [['report', F, '-o', 'a.html', '--out', 'b.html'], '--output'],
      [['load', F, '--db', 'a.duckdb', '--db', 'b.duckdb'], '--db'],
      [['runs', '--db', 'a.duckdb', '--db', 'b.duckdb'], '--db'],
      [['tree', F, '--depth', '1', '--depth', '0'], '--depth'],
      [['webhooks', 'list', '--limit', '1', '--limit', '2'], '--limit'],
      [['generate', '-o', 'a.jsonl', '--seed', '1', '--seed', '2'], '--seed'],
    ];
    for (const [args, option] of cases) {
      const r = runCli(args, { cwd });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`${option} is given more than once`);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it('a repeated --param takes its whole value: a value may hold ",NAME="', () => {
    const r = runCli(['query', '--sql', 'SELECT $s AS s, $n AS n', FAILED, '--param', 's=x,y=z', '--param', 'n=1', '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([{ s: 'x,y=z', n: '1' }]);
    // given once, it is still pairs separated by commas
    const once = runCli(['query', '--sql', 'SELECT $s AS s, $n AS n', FAILED, '--param', 's=x,y,n=1', '--format', 'json']);
    expect(JSON.parse(once.stdout)).toEqual([{ s: 'x,y', n: '1' }]);
  });

  it('the same --param twice is a usage error; different ones are fine', () => {
    const r = runCli(['query', 'slowest-nodes', TWO, '--param', 'trace=019caf', '--param', 'trace=019cad']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--param trace is given more than once');
    expect(runCli(['query', 'slowest-nodes', TWO, '--param', 'trace=019caf', '--param', 'limit=1']).code).toBe(0);
  });

  it('a saved query\'s integer parameter out of its range is a usage error naming it and the range', () => {
    for (const [query, param, range] of [
      ['slowest-nodes', 'limit=0', 'limit: wants an integer from 1 to 999999'],
      ['slowest-nodes', 'limit=-1', 'limit: wants an integer from 1 to 999999'],
      ['slowest-nodes', 'limit=1000000', 'limit: wants an integer from 1 to 999999'],
      ['failure-history', 'runs=0', 'runs: wants an integer from 1'],
      // past 32 bits: the range a `1..` parameter has after all
      ['failure-history', 'runs=2147483648', 'runs: wants an integer from 1 to 2147483647, got "2147483648"'],
      ['flaky-tests', 'min_flips=-1', 'min_flips: wants an integer from 0'],
    ]) {
      const r = runCli(['query', query!, TWO, '--param', param!]);
      expect(r.code, param).toBe(2);
      expect(r.stderr, param).toContain(`--param ${range}`);
      expect(r.stderr, param).not.toContain('SQL error');
    }
    expect(runCli(['query', 'slowest-nodes', TWO, '--param', 'limit=1']).code).toBe(0);
  });

  it('a saved query\'s number parameter is a plain decimal number, finite, else a usage error naming it', () => {
    // refused before the query runs: each is quick
    for (const value of ['0x10', 'Infinity', '1e400', ' 5', '1_000', '.', '1e']) {
      const r = runCli(['query', 'node-trends', TWO, '--param', `threshold=${value}`]);
      expect(r.code, value).toBe(2);
      expect(r.stderr, value).toContain('--param threshold');
    }
    for (const value of ['0x10', '1e2']) expect(runCli(['query', 'slowest-nodes', TWO, '--param', `limit=${value}`]).stderr, value).toContain('--param limit');
    for (const value of ['+2.5', '1.5E-3']) {
      const r = runCli(['query', 'run-diff', TWO, '--param', `threshold=${value}`]);
      expect(r.code, `${value}: ${r.stderr}`).toBe(0);
    }
  });

  it('--param trace=ID that matches no run says so, as tree --trace does', () => {
    const q = runCli(['query', 'failed-tests', FAILED, '--param', 'trace=ffff']);
    expect(q.code).toBe(2);
    expect(q.stderr).toContain('no trace ffff in the input');
    const t = runCli(['tree', FAILED, '--trace', 'ffff']);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('no trace ffff in the input');
  });
});

describe('a run id of dashes only', () => {
  it('is a usage error wherever a run is named, not every run', () => {
    const C = 'samples/clean-build.jsonl';
    for (const args of [
      ['gate', C, '--trace=----'],
      ['tree', C, '--trace=--'],
      ['query', 'failed-tests', C, '--param', 'trace=---'],
      ['report', C, '--trace=-', '-o', '-'],
    ]) {
      const r = runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/names no run/);
    }
  });
});

describe('a closed stdout', () => {
  const piped = (args: string) =>
    spawnSync('bash', ['-c', `node ${CLI} ${args} | head -2 >/dev/null; echo "exit=\${PIPESTATUS[0]}" >&2`], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, CI: 'true' } });

  it.each([
    ['tree', `tree ${TWO} ${FAILED} ${TWO.replace('.jsonl', '.parquet')}`],
    ['query', `query --sql "SELECT range AS n, repeat('x', 80) AS pad FROM range(200000)" ${FAILED} --format csv`],
    ['generate', 'generate -o - --nodes 400 --runs 3'],
  ])('%s | head ends quietly with exit 0', (_name, args) => {
    const r = piped(args);
    expect(r.stderr).toBe('exit=0\n');
  });
});

/** A client command's connection to a port nothing listens on: a command that gets past its arguments says it cannot reach the service. */
const NO_SERVICE = ['--base-url', 'http://127.0.0.1:9', '--account', '1', '--token', 't'];

describe('an empty item of a list option', () => {
  it('is a usage error naming the option, not the default or nothing', () => {
    const F = path.join(ROOT, FAILED);
    const cases: [string[], string][] = [
      [['gate', F, '--fail-on', ''], '--fail-on'],
      [['gate', F, '--fail-on', ' '], '--fail-on'],
      [['gate', F, '--fail-on', ','], '--fail-on'],
      [['gate', F, '--fail-on', 'error,'], '--fail-on'],
      [['gate', F, '--fail-on', 'error', '--fail-on', ''], '--fail-on'],
      [['query', 'outcome-summary', F, '--param', ''], '--param'],
      [['jobs', 'create', '--name', 'e', '--step', '', '--step', 'echo a', ...NO_SERVICE], '--step'],
    ];
    for (const [args, option] of cases) {
      const r = runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`${option} needs a value`);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });
});

describe('required arguments after --', () => {
  it('fill the arguments a command requires, as they fill optional ones', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'runlens-dash-required-'));
    copyFileSync(path.join(ROOT, FAILED), path.join(dir, '-d.jsonl'));
    const c = runCli(['convert', '--', '-d.jsonl', 'out.jsonl'], { cwd: dir });
    expect(c.stderr).toBe('');
    expect(c.code).toBe(0);
    expect(c.stdout).toContain('to out.jsonl');
    const plain = runCli(['map-status', 'success']);
    const m = runCli(['map-status', '--', 'success']);
    expect(m.code).toBe(0);
    expect(m.stdout).toBe(plain.stdout);
    const j = runCli(['jobs', 'get', ...NO_SERVICE, '--', '1']);
    expect(j.stderr).toContain('cannot reach the service');
  });

  it('one missing still, or one too many, is a one-line usage error', () => {
    const missing = runCli(['convert', '--', 'in.jsonl']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^runlens: .*missing argument.*output/);
    expect(missing.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
    const extra = runCli(['jobs', 'get', ...NO_SERVICE, '--', '1', '2']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toMatch(/unexpected argument.*"2"/);
  });
});

describe('an option that needs another', () => {
  it('given without it is a usage error naming both', () => {
    const F = path.join(ROOT, FAILED);
    const cases: [string[], string][] = [
      [['gate', F, '--until-idle', 'abc'], '--until-idle needs --receive'],
      [['gate', F, '--until-idle', '1s'], '--until-idle needs --receive'],
      [['gate', F, '--timeout', '5s'], '--timeout needs --receive'],
      [['gate', F, '--host', '0.0.0.0'], '--host needs --receive'],
      [['gate', F, '--queue-limit', '5'], '--queue-limit needs --receive'],
      [['gate', F, '--port', '0'], '--port needs --receive'],
      [['gate', F, '--max-body-mb', '1'], '--max-body-mb needs --receive'],
      [['gate', F, '--no-receive', '--until-idle', '1s'], '--until-idle needs --receive'],
      [['jobs', 'run', '1', '--interval', '0.2', ...NO_SERVICE], '--interval needs --wait'],
      [['jobs', 'run', '1', '--timeout', '5', ...NO_SERVICE], '--timeout needs --wait'],
    ];
    for (const [args, message] of cases) {
      const r = runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(message);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it("with it, the value is checked before anything is received", () => {
    const r = runCli(['gate', FAILED, '--receive', '--port', '0', '--until-idle', 'abc']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--until-idle: wants a duration');
    expect(r.stderr).not.toContain('waiting for OTLP');
  });

  it('a --manifest that does not exist is a usage error naming it, whatever the input', () => {
    for (const cmd of ['runs', 'gate', 'tree']) {
      const r = runCli([cmd, FAILED, '--manifest', '/nonexistent/manifest.json']);
      expect(r.code, cmd).toBe(2);
      expect(r.stderr, cmd).toContain('/nonexistent/manifest.json');
      expect(r.stdout, cmd).toBe('');
    }
  });
});

describe('a flag (boolean option)', () => {
  it('given twice, or both ways, is a usage error naming it', () => {
    const F = path.join(ROOT, FAILED);
    const cases: [string[], string][] = [
      [['runs', F, '--lenient', '--lenient'], '--lenient'],
      [['runs', F, '--lenient', '--lenient=true'], '--lenient'],
      [['validate', F, '--no-warnings', '--warnings'], '--warnings'],
      [['generate', '-o', '-', '--nodes', '2', '--no-detail', '--detail'], '--detail'],
      [['explore', F, '--no-mouse', '--mouse'], '--mouse'],
    ];
    for (const [args, option] of cases) {
      const r = runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`${option} is given more than once`);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it('takes true or false as a value, nothing else', () => {
    const bad = runCli(['runs', FAILED, '--lenient=maybe']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--lenient: expected true or false, got "maybe"');
    expect(runCli(['runs', FAILED, '--lenient=true', '--format', 'json']).code).toBe(0);
    expect(runCli(['runs', FAILED, '--lenient=false', '--format', 'json']).code).toBe(0);
  });
});

describe('messages for options that do not go together', () => {
  it('a saved query name with --sql says they do not go together', () => {
    const r = runCli(['query', 'slowest-nodes', '--sql', 'select 1', FAILED]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('slowest-nodes');
    expect(r.stderr).toContain('--sql');
    expect(r.stderr).not.toContain('no such file');
  });

  it('artifacts with an unknown action names the action first', () => {
    const r = runCli(['artifacts', 'list', '--run', '5', ...NO_SERVICE]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown action list (choose fetch)');
    expect(r.stderr).not.toContain('missing required option');
  });
});
