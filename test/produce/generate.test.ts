import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/produce/generate/index.js';
import { validateFile } from '../../src/produce/validate.js';
import { runCli } from '../helpers/cli.js';
import { SAMPLE_FILES, SAMPLES_DIR, samplesPresent, tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);

describe('generate', () => {
  it('is deterministic for a seed and differs across seeds', async () => {
    const a = join(tmp.dir, 'a.jsonl');
    const b = join(tmp.dir, 'b.jsonl');
    const c = join(tmp.dir, 'c.jsonl');
    await generate({ output: a, nodes: 40, runs: 2, seed: 11 });
    await generate({ output: b, nodes: 40, runs: 2, seed: 11 });
    await generate({ output: c, nodes: 40, runs: 2, seed: 12 });
    expect(readFileSync(a, 'utf8')).toBe(readFileSync(b, 'utf8'));
    expect(readFileSync(a, 'utf8')).not.toBe(readFileSync(c, 'utf8'));
  });

  it('gives other runs other ids when an option other than the seed changes them', async () => {
    const base = { nodes: 40, seed: 1 };
    const variants = [{ nodes: 41 }, { failRate: 0.3 }, { cacheRate: 0.5 }, { threads: 3 }, { detail: false }, { project: 'shop' }, { adapterType: 'postgres' }, { start: 1_772_442_000_000_000_001n }];
    const a = join(tmp.dir, 'base.jsonl');
    await generate({ output: a, ...base, runs: 2 });
    for (const v of variants) {
      const b = join(tmp.dir, `variant-${Object.keys(v)[0]}.jsonl`);
      await generate({ output: b, ...base, runs: 2, ...v });
      const runs = runCli(['runs', a, b, '--format', 'json']);
      expect(runs.code, `${JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x))}: ${runs.stderr}`).toBe(0);
      expect(JSON.parse(runs.stdout), Object.keys(v)[0]).toHaveLength(4);
      expect(runs.stderr, Object.keys(v)[0]).not.toMatch(/already present/);
    }
  });

  it('writes the same runs first whatever --runs says, and the same records in JSONL and Parquet', async () => {
    const one = join(tmp.dir, 'one.jsonl');
    const three = join(tmp.dir, 'three.jsonl');
    const pq = join(tmp.dir, 'three.parquet');
    await generate({ output: one, nodes: 30, seed: 4 });
    await generate({ output: three, nodes: 30, seed: 4, runs: 3 });
    await generate({ output: pq, nodes: 30, seed: 4, runs: 3 });
    expect(readFileSync(three, 'utf8').startsWith(readFileSync(one, 'utf8'))).toBe(true);
    const runs = runCli(['runs', one, three, pq, '--format', 'json']);
    expect(runs.code, runs.stderr).toBe(0);
    expect(JSON.parse(runs.stdout)).toHaveLength(3);
  });

  it('writes files that pass validate, JSONL and Parquet', async () => {
    for (const f of ['v.jsonl', 'v.parquet', 'v.jsonl.gz']) {
      const out = join(tmp.dir, f);
      const r = await generate({ output: out, nodes: 120, runs: 2, seed: 5, failRate: 0.1 });
      const rep = await validateFile(out);
      expect(rep.issues.filter((i) => i.severity === 'violation')).toEqual([]);
      expect(rep.warnings).toBe(0);
      expect(rep.records).toBe(r.records);
    }
  });

  it('every descendant of a failure is skipped with the root failure as upstream', async () => {
    const out = join(tmp.dir, 'skips.jsonl');
    const r = await generate({ output: out, nodes: 200, seed: 9, failRate: 0.08 });
    expect(r.runs[0]!.errors + r.runs[0]!.failedTests).toBeGreaterThan(0);
    expect(r.runs[0]!.skipped).toBeGreaterThan(0);
    const ends = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((x) => x.record_type === 'SpanEnd' && x.event_type.endsWith('NodeProcessed'));
    const byId = new Map(ends.map((e) => [e.attributes.unique_id as string, e.attributes]));
    const failed = new Set([...byId].filter(([, a]) => a.node_outcome === 'NODE_OUTCOME_ERROR' || a.node_test_detail?.test_outcome === 'TEST_OUTCOME_FAILED').map(([id]) => id));
    for (const a of byId.values()) {
      if (a.node_skip_reason !== 'NODE_SKIP_REASON_UPSTREAM') continue;
      expect(failed.has(a.node_skip_upstream_detail.upstream_unique_id)).toBe(true);
    }
  });
});

describe.skipIf(!samplesPresent)('validate on the real engine files', () => {
  it.each(SAMPLE_FILES)('%s has no violations and no warnings', async (name) => {
    const rep = await validateFile(join(SAMPLES_DIR, name));
    expect(rep.issues).toEqual([]);
  });
});

describe('validate reports', () => {
  it('names file, line, field and rule for each habit broken', async () => {
    const path = join(tmp.dir, 'bad.jsonl');
    const good = '{"record_type":"SpanStart","trace_id":"019c97cafe1c76e2abb150e9427e666a","span_id":"1523b4b24bb418dc","span_name":"dbt process (x)","parent_span_id":null,"links":null,"start_time_unix_nano":"1772073188904419000","severity_number":9,"severity_text":"INFO","event_type":"v1.public.events.fusion.process.Process","attributes":{"host_arch":"a","package":"dbt"}}';
    const lines = [
      good,
      good.replace('"1772073188904419000"', '1772073188904419000').replace('1523b4b24bb418dc', '1523B4B24BB418DD'),
      good.replace('1523b4b24bb418dc', '2523b4b24bb418dc').replace('"host_arch":"a","package":"dbt"', '"package":"dbt","host_arch":"a"'),
      good.replace('1523b4b24bb418dc', '3523b4b24bb418dc').replace('"attributes":{"host_arch":"a","package":"dbt"}', '"attributes":{"node_outcome":"success","rows_affected":3}').replace('process.Process', 'node.NodeProcessed'),
      good.replace('1523b4b24bb418dc', '4523b4b24bb418dc').replace('process.Process', 'brand_new.Thing'),
      'not json',
    ];
    writeFileSync(path, lines.join('\n') + '\n');
    const rep = await validateFile(path);
    const got = rep.issues.map((i) => `${i.line}:${i.field}:${i.severity}`);
    expect(got).toEqual(expect.arrayContaining([
      '2:span_id:violation',
      '2:start_time_unix_nano:violation',
      '3:attributes.host_arch:violation',
      '4:attributes.node_outcome:violation',
      '4:attributes.rows_affected:violation',
      '5:event_type:warning',
      '6:-:violation',
    ]));
    expect(got.filter((g) => g.startsWith('1:'))).toEqual(['1:span_id:warning']); // never ended
  });
});

describe('generate: options that are not what they must be are usage errors naming them', () => {
  const out = join(tmpdir(), `runlens-gen-never-${process.pid}.jsonl`);
  it.each([
    ['--seed', 'abc'], ['--seed', 'NaN'], ['--seed', '1.5'], ['--seed', '-1'], ['--seed', '4294967296'],
    ['--threads', '0'], ['--threads', '-3'], ['--threads', '2.5'], ['--threads', 'x'], ['--threads', '257'], ['--threads', '1000000000'],
    ['--runs', '0'], ['--runs', '1.5'], ['--nodes', '3'], ['--nodes', '4.5'],
  ])('%s %s', (option, value) => {
    const r = runCli(['generate', '-o', out, option, value]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^runlens: ${option}: expected a whole number`));
    expect(r.stdout).toBe('');
    expect(existsSync(out)).toBe(false);
    expect(existsSync(`${out}.lock`)).toBe(false);
  });

  it("says each run's errors, failed tests and skipped nodes as runs counts them", () => {
    const file = join(tmpdir(), `runlens-gen-counts-${process.pid}.jsonl`);
    try {
      const r = runCli(['generate', '-o', file, '--nodes', '3000', '--seed', '3']);
      expect(r.code, r.stderr).toBe(0);
      const said = /: (\d+) errors?, (\d+) failed tests?, (\d+) skipped/.exec(r.stdout + r.stderr);
      expect(said, r.stdout + r.stderr).not.toBeNull();
      const [run] = JSON.parse(runCli(['runs', file, '--format', 'json']).stdout) as { error: number; tests_failed: number; skipped: number }[];
      expect(said!.slice(1).map(Number)).toEqual([run!.error, run!.tests_failed, run!.skipped]);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('a seed from 0 to 4294967295 is taken', () => {
    const r = runCli(['generate', '-o', '-', '--nodes', '4', '--seed', '4294967295', '--no-detail']);
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(0);
  });
});

describe('generate: the output extension picks the format', () => {
  it('refuses a --format the extension contradicts, and an extension it cannot tell, naming them (exit 2, nothing written)', () => {
    const dir = tmp.dir;
    for (const [args, msg] of [
      [['-o', 'x.jsonl', '--format', 'parquet'], '--format parquet and -o x.jsonl disagree'],
      [['-o', 'x.parquet', '--format', 'jsonl'], '--format jsonl and -o x.parquet disagree'],
      [['--project-dir', 'p', '-o', 'x.jsonl', '--format', 'parquet'], '--format parquet and -o x.jsonl disagree'],
      [['-o', 'x.txt'], 'cannot tell the output format of x.txt: use .jsonl, .jsonl.gz or .parquet'],
    ] as const) {
      const r = runCli(['generate', ...args, '--nodes', '4'], { cwd: dir });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(msg);
      for (const f of ['x.jsonl', 'x.parquet', 'x.txt', 'p']) expect(existsSync(join(dir, f)), f).toBe(false);
    }
  });

  it('takes a --format the extension agrees with, and --project-dir names the file from --format', () => {
    const ok = runCli(['generate', '-o', 'y.parquet', '--format', 'parquet', '--nodes', '4'], { cwd: tmp.dir });
    expect(ok.code, ok.stderr).toBe(0);
    const pd = runCli(['generate', '--project-dir', 'q', '--format', 'parquet', '--nodes', '4'], { cwd: tmp.dir });
    expect(pd.code, pd.stderr).toBe(0);
    expect(existsSync(join(tmp.dir, 'q', 'target', 'metadata', 'otel.parquet'))).toBe(true);
  });
});

describe('generate --project-dir: -o is a file name', () => {
  it('refuses a -o with a folder in it, .. or an absolute path (exit 2), writing nothing outside the project', () => {
    for (const name of ['../e.jsonl', 'sub/e.jsonl', '..', join(tmp.dir, 'abs.jsonl')]) {
      const r = runCli(['generate', '--project-dir', 'P', '-o', name, '--nodes', '4'], { cwd: tmp.dir });
      expect(r.code, name).toBe(2);
      expect(r.stderr, name).toBe(`runlens: --output ${name}: with --project-dir, give a file name (it goes under the project's logs/ or target/metadata/)\n`);
    }
    expect(existsSync(join(tmp.dir, 'P'))).toBe(false);
    expect(existsSync(join(tmp.dir, 'e.jsonl'))).toBe(false);
  });
});
