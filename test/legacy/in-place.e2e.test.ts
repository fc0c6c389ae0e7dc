/**
 * The older engine's files read where they lie by the reading commands (gate, runs, query, tree,
 * load), compared with `migrate` followed by the same command on its output; folders as the engine
 * writes them (target/ with its manifest.json and other artifacts, logs/); messages for files that
 * a command cannot read.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { haveTmux, Terminal } from '../helpers/terminal.js';
import { LEGACY, ROOT, SHARED_SAMPLES, sample, samplesNote } from '../helpers/samples.js';
import { manifest, runResults, writeJson } from './helpers.js';

const CORPUS = path.join(SHARED_SAMPLES, 'legacy-corpus');
const corpusNote = samplesNote(CORPUS);
const legacyNote = samplesNote(LEGACY);

/** A command's JSON output without what names the input files (the only difference a translation may make). */
function json(args: string[]): { code: number; out: unknown } {
  const r = runCli([...args]);
  if (r.code !== 0 && r.code !== 1) throw new Error(`runlens ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as unknown;
  const strip = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(strip) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'files' && k !== 'source_file').map(([k, x]) => [k, strip(x)])) : v;
  return { code: r.code, out: strip(out) };
}

const NODE_RESULTS_SQL = `SELECT trace_id, unique_id, resource_type, phase, node_outcome, skip_reason, upstream_unique_id, test_outcome, failing_rows,
  relative_path, error_text, freshness_outcome FROM node_results ORDER BY trace_id, unique_id`;

describe.each([
  { dir: CORPUS, note: corpusNote },
  { dir: LEGACY, note: legacyNote },
])('every file of $dir', ({ dir, note }) => {
  it.skipIf(note.missing)(note.title('gate, runs and query read it directly as they read the output of migrate'), () => {
    const out = path.join(tempDir('runlens-inplace-'), 'migrated.jsonl');
    const m = runCli(['migrate', dir, '-o', out]);
    expect(m.stderr).toBe('');
    expect(m.code).toBe(0);
    const results: unknown[] = [];
    for (const args of [['runs', '--format', 'json'], ['gate', '--reporter', 'json'], ['query', '--sql', NODE_RESULTS_SQL, '--format', 'json']]) {
      const direct = json([...args, dir]);
      expect(direct, args.join(' ')).toEqual(json([...args, out]));
      results.push(direct.out);
    }
    // every file is one run (the corpus's logs and run_results.json are of different invocations)
    const files = readdirSync(dir).filter((f) => /run_results.*\.json$|^rr_.*\.json$|\.jsonl$/.test(f));
    expect((results[0] as unknown[]).length).toBe(files.length);
    expect((results[2] as unknown[]).length).toBeGreaterThan(100);
  }, 300_000);
});

describe.skipIf(legacyNote.missing)(legacyNote.title('folders as the engine writes them'), () => {
  /** A project folder: target/ with run_results.json, manifest.json and an artifact without runs; logs/ with a JSON log and a text log. */
  function project(): string {
    const root = tempDir('runlens-project-');
    mkdirSync(path.join(root, 'target'));
    mkdirSync(path.join(root, 'logs'));
    copyFileSync(sample(LEGACY, 'rr_v2_0.21_error_skipped.json'), path.join(root, 'target', 'run_results.json'));
    const rr = JSON.parse(readFileSync(sample(LEGACY, 'rr_v2_0.21_error_skipped.json'), 'utf8'));
    const ids = rr.results.map((r: { unique_id: string }) => r.unique_id) as string[];
    // the skipped node's only parent is the model that errored
    const errored = rr.results.find((r: { status: string }) => r.status === 'error').unique_id;
    const skipped = rr.results.find((r: { status: string }) => r.status === 'skipped').unique_id;
    const edges = Object.fromEntries(ids.map((id) => [id, id === skipped ? [errored] : []]));
    writeFileSync(path.join(root, 'target', 'manifest.json'), JSON.stringify(manifest(edges)));
    writeFileSync(path.join(root, 'target', 'catalog.json'), JSON.stringify({ metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json' }, nodes: {}, sources: {} }));
    // artifacts without a schema version: the graph summary and the semantic manifest
    writeFileSync(path.join(root, 'target', 'graph_summary.json'), JSON.stringify({ _invocation_id: rr.metadata.invocation_id, linked: { 0: { name: ids[0], type: 'model' } } }));
    writeFileSync(path.join(root, 'target', 'semantic_manifest.json'), JSON.stringify({ semantic_models: [], metrics: [], project_configuration: { time_spine_table_configurations: [] }, saved_queries: [] }, null, 2));
    copyFileSync(sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl'), path.join(root, 'logs', 'dbt.log'));
    writeFileSync(path.join(root, 'logs', 'old.log'), '============================== 10:00:00 | 1234 ==============================\n10:00:00  Running with dbt=1.8.2\n');
    return root;
  }

  it('gate target/ gates the run it finds, with the manifest beside it, and says so', () => {
    const root = project();
    const r = runCli(['gate', path.join(root, 'target'), '--reporter', 'json']);
    expect(r.code).toBe(1);
    const g = JSON.parse(r.stdout);
    expect(g.runs).toHaveLength(1);
    expect(r.stderr).toContain(`${path.join(root, 'target', 'run_results.json')}: the older engine's run_results.json, 1 run (run, 4 nodes); with ${path.join(root, 'target', 'manifest.json')}`);
    // manifest.json, catalog.json, graph_summary.json and semantic_manifest.json hold no run: passed over in a folder
    expect(r.stderr).not.toMatch(/catalog|graph_summary|semantic_manifest|record_type/);
  });

  it('target/ and logs/ together: both runs; a text log in the folder is skipped with the reason', () => {
    const root = project();
    const r = runCli(['runs', path.join(root, 'target'), path.join(root, 'logs'), '--format', 'json']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { command: string }[]).map((x) => x.command).sort()).toEqual(['run', 'run']);
    expect(r.stderr).toContain(`${path.join(root, 'logs', 'old.log')}: skipped: not a JSON log`);
    const named = runCli(['runs', path.join(root, 'logs', 'old.log')]);
    expect(named.code).toBe(2);
    expect(named.stderr).toMatch(/old\.log:1: not JSONL telemetry: the first line is not a JSON object \(a text log\? the older engine writes JSON logs with --log-format json/);
  });

  it.skipIf(!haveTmux)('explore target/ logs/ opens on both runs (in a real terminal: tmux)', async () => {
    const root = project();
    const t = new Terminal(`node ${JSON.stringify(CLI)} explore ${JSON.stringify(path.join(root, 'target'))} ${JSON.stringify(path.join(root, 'logs'))}`, {
      width: 140,
      height: 30,
      env: { ...process.env, NO_COLOR: '1' },
    });
    try {
      const screen = await t.until(/FAILED +run[\s\S]*FAILED +run/, 'both runs', 30_000);
      expect(screen).toContain('8c814240637d4a36937e43787f5c79e0');
      expect(screen).toContain('b0ed168e192642daaa256b3eb826074b');
      t.keys('q');
      expect(await t.exitCode()).toBe(0);
    } finally {
      t.close();
    }
  });

  it('a manifest.json named on its own is refused with what it is and how it is used; beside a run (a shell glob), skipped with that reason', () => {
    const root = project();
    const r = runCli(['gate', path.join(root, 'target', 'manifest.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/manifest\.json: the older engine's manifest\.json holds no run: .*beside a run_results\.json.*--manifest FILE/);
    const target = (f: string) => path.join(root, 'target', f);
    const all = runCli(['runs', target('catalog.json'), target('manifest.json'), target('run_results.json'), '--format', 'json']);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toHaveLength(1);
    expect(all.stderr).toContain(`${target('catalog.json')}: skipped: an artifact of the older engine holds no run`);
    expect(all.stderr).toContain(`${target('manifest.json')}: skipped: the older engine's manifest.json holds no run`);
    const m = runCli(['migrate', target('manifest.json'), target('run_results.json'), '-o', path.join(root, 'out.jsonl')]);
    expect(m.code).toBe(0);
    expect(m.stdout).toMatch(/manifest\.json: skipped: the older engine's manifest\.json holds no run/);
  });

  it('older-engine files mixed with telemetry, gzipped logs and globs in one command', () => {
    const dir = tempDir('runlens-mixed-');
    const log = path.join(dir, 'dbt.log.gz');
    writeFileSync(log, gzipSync(readFileSync(sample(LEGACY, 'log_1.8.2_postgres_test_pass_fail.jsonl'))));
    const telemetry = path.join(dir, 'run.jsonl');
    expect(runCli(['migrate', sample(LEGACY, 'rr_v4_1.0.0_build_error.json'), '-o', telemetry]).code).toBe(0);
    copyFileSync(sample(LEGACY, 'rr_v5_1.7.0_build.json'), path.join(dir, 'run_results.json'));
    const r = runCli(['runs', path.join(dir, '*'), '--format', 'json']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { engine_version: string }[]).map((x) => x.engine_version).sort()).toEqual(['1.0.0', '1.7.0', '1.8.2']);
  });

  it('the same run_results.json read twice, or beside its migrated copy, is one run', () => {
    const dir = tempDir('runlens-twice-');
    const rr = sample(LEGACY, 'rr_v6_1.9.0_build_hooks.json');
    const copy = path.join(dir, 'migrated.jsonl');
    expect(runCli(['migrate', rr, '-o', copy]).code).toBe(0);
    const q = (paths: string[]) => JSON.parse(runCli(['query', '--sql', 'SELECT (SELECT count(*) FROM runs)::INT AS runs, (SELECT count(*) FROM records)::INT AS records', '--format', 'json', ...paths]).stdout)[0];
    const once = q([rr]);
    expect(once.runs).toBe(1);
    expect(q([rr, rr])).toEqual(once);
    expect(q([rr, copy])).toEqual(once);
  });
});

describe('files a command cannot read say what they are and what reads them', () => {
  it('run_results.json written before schema v1 (dbt 0.18): which versions are read', () => {
    const old = writeJson('run_results.json', {
      results: [{ node: { unique_id: 'model.p.a', resource_type: 'model' }, error: null, status: 'SELECT 1254575', execution_time: 1.2, thread_id: 'Thread-1', timing: [], fail: null, warn: null, skip: false }],
      generated_at: '2020-09-01T10:00:00.000000Z', elapsed_time: 3.1,
    });
    for (const cmd of [['gate', old], ['migrate', old, '-o', path.join(tempDir(), 'x.jsonl')]]) {
      const r = runCli(cmd);
      expect(r.code, cmd[0]).toBe(2);
      expect(r.stderr).toContain(`${old}: written by dbt 0.18 or older (no metadata.dbt_schema_version: before schema v1), which runlens does not read; it reads run_results.json schema v1 to v6 (dbt 0.19 to 1.12)`);
    }
  });

  it.skipIf(legacyNote.missing)('a telemetry file given to migrate, and older-engine files given to validate and convert', () => {
    const dir = tempDir();
    const telemetry = path.join(dir, 'run.jsonl');
    expect(runCli(['migrate', sample(LEGACY, 'rr_v4_1.0.0_build_error.json'), '-o', telemetry]).code).toBe(0);
    const m = runCli(['migrate', telemetry, '-o', path.join(dir, 'again.jsonl')]);
    expect(m.code).toBe(2);
    expect(m.stderr).toBe(`runlens: ${telemetry}: already telemetry (JSONL records of the new engine): nothing to migrate; read it with runlens runs, tree, query, gate or explore\n`);
    const rr = sample(LEGACY, 'rr_v4_1.0.0_build_error.json');
    const v = runCli(['validate', rr]);
    expect(v.code).toBe(2);
    expect(v.stderr).toBe(`runlens: ${rr}: the older engine's run_results.json, not telemetry: validate checks telemetry files; runlens load, runs, tree, query, gate and explore read it as it is, and runlens migrate turns it into telemetry\n`);
    const c = runCli(['convert', sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl'), path.join(dir, 'x.parquet')]);
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/a JSON log of the older engine \(--log-format json\), not telemetry: convert converts telemetry between JSONL and Parquet; .*runlens migrate turns it into telemetry/);
  });

  it('migrate takes folders and globs as the other commands do, and says when a folder holds no older-engine file', () => {
    const dir = tempDir('runlens-migrate-folder-');
    writeJson('run_results.json', runResults({ results: [{ id: 'model.p.a', status: 'success', at: [1, 2] }] }), dir);
    writeJson('manifest.json', manifest({ 'model.p.a': [] }), dir);
    const out = path.join(tempDir(), 'out.jsonl');
    const r = runCli(['migrate', dir, '-o', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${path.join(dir, 'run_results.json')}: trace 0b6d4c8e1f2a4b3c9d8e7f6a5b4c3d2e (build), 1 node: success 1\n  with ${path.join(dir, 'manifest.json')}\n`);
    expect(runCli(['migrate', path.join(dir, '*.json'), '-o', out]).code).toBe(0);
    const empty = tempDir('runlens-empty-');
    writeFileSync(path.join(empty, 'notes.json'), '{"hello": 1}');
    const e = runCli(['migrate', empty, '-o', out]);
    expect(e.code).toBe(2);
    expect(e.stderr).toContain(`${empty}: no older-engine file found (migrate reads run_results.json, sources.json and --log-format json logs)`);
  });

  it('migrate of a folder that also holds telemetry says it passed that file over, and that it is read beside the output', () => {
    const dir = tempDir('runlens-migrate-mixed-');
    writeJson('run_results.json', runResults({ results: [{ id: 'model.p.a', status: 'success', at: [1, 2] }] }), dir);
    mkdirSync(path.join(dir, 'logs'));
    copyFileSync(path.join(ROOT, 'samples', 'clean-build.jsonl'), path.join(dir, 'logs', 'otel.jsonl'));
    const out = path.join(tempDir(), 'out.jsonl');
    const r = runCli(['migrate', dir, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${path.join(dir, 'logs', 'otel.jsonl')}: skipped: already telemetry`);
  });
});

describe('migrate of two inputs that hold the same run', () => {
  it('says so: the output holds one copy, the one the reading commands keep', () => {
    const out = path.join(tempDir('runlens-same-run-'), 'both.jsonl');
    const target = path.resolve('samples/older-engine/target');
    const logs = path.resolve('samples/older-engine/logs');
    const both = runCli(['migrate', target, logs, '-o', out]);
    expect(both.code).toBe(0);
    expect(both.stdout).toMatch(/note: \S+run_results\.json and \S+dbt\.log hold the same run \(trace [0-9a-f]{32}\)/);
    const json = JSON.parse(runCli(['migrate', target, logs, '-o', out, '--format', 'json']).stdout) as { sameRun: { files: string[] }[] };
    expect(json.sameRun.map((s) => s.files.map((f) => path.basename(f)))).toEqual([['run_results.json', 'dbt.log']]);
    const one = runCli(['migrate', logs, '-o', out]);
    expect(one.code).toBe(0);
    expect(one.stdout).not.toContain('same run');
  });
});
