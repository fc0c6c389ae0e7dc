/**
 * A run_results.json run lies within the window its metadata gives (legacy.md §1.2: elapsed_time is
 * the whole command, generated_at is when it was over): nodes without timing are placed inside it,
 * and a node whose timing lies far outside it is placed inside it too, and said once. On every real
 * run_results.json of ../shared/samples.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderMigrateReport } from '../../src/commands/migrate.js';
import type { Db } from '../../src/store/db.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, SHARED_SAMPLES, sample, samplesNote } from '../helpers/samples.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { migrateAndLoad } from './helpers.js';

const CORPUS = path.join(SHARED_SAMPLES, 'legacy-corpus');
const note = samplesNote(LEGACY);
const files = note.missing
  ? []
  : [
      ...readdirSync(LEGACY).filter((f) => /^rr_.*\.json$/.test(f)).map((f) => path.join(LEGACY, f)),
      ...readdirSync(CORPUS).filter((f) => /run_results.*\.json$/.test(f)).map((f) => path.join(CORPUS, f)),
    ];
const OPENLINEAGE_BUILD = path.join(CORPUS, 'OpenLineage__OpenLineage__integration_common_tests_dbt_build_target_run_results.json');

/** ISO time with up to 9 fractional digits as nanoseconds. */
function ns(iso: string): bigint {
  const m = /^(.*?:\d\d)(?:\.(\d+))?Z?$/.exec(iso)!;
  return BigInt(Date.parse(`${m[1]}Z`)) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0').slice(0, 9));
}

interface Doc {
  metadata: { generated_at: string; invocation_started_at?: string };
  elapsed_time: number;
  results: { unique_id: string; execution_time: number; timing: { started_at: string | null; completed_at: string | null }[] }[];
}
const docOf = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Doc;

/** [start, end] of the run as the file's metadata gives it. */
function windowOf(d: Doc): [bigint, bigint] {
  const end = ns(d.metadata.generated_at);
  const start = d.metadata.invocation_started_at ? ns(d.metadata.invocation_started_at) : end - BigInt(Math.round(d.elapsed_time * 1e9));
  return [start, end];
}

/** The file read in place into a model of its own, closed when `use` is done. */
async function withModel<T>(file: string, use: (db: Db) => Promise<T>): Promise<T> {
  const db = await openModel();
  try {
    await loadPaths(db, [file]);
    return await use(db);
  } finally {
    db.close();
  }
}

describe.skipIf(note.missing)(note.title('a run_results.json run lies within generated_at - elapsed_time .. generated_at'), () => {
  it.each(files.map((f) => [path.basename(f), f]))('%s', async (_name, file) => {
    const [start, end] = windowOf(docOf(file));
    const spans = await withModel(file, (db) => db.all(`SELECT span_name, start_ns, end_ns FROM spans WHERE kind <> 'process'`));
    for (const s of spans) {
      expect(BigInt(s.start_ns as string), s.span_name as string).toBeGreaterThanOrEqual(start);
      expect(BigInt(s.end_ns as string), s.span_name as string).toBeLessThanOrEqual(end);
    }
  });

  it('a node without timing ends where the results before it ended, having run its execution_time', async () => {
    const file = sample(LEGACY, 'rr_v4_1.0.0_build_error.json');
    const d = docOf(file);
    const i = d.results.findIndex((r) => r.timing.length === 0 && r.execution_time > 1);
    expect(i).toBeGreaterThan(0);
    const r = d.results[i]!;
    let before = 0n;
    for (const x of d.results.slice(0, i)) for (const t of x.timing) if (t.completed_at && ns(t.completed_at) > before) before = ns(t.completed_at);
    const node = await withModel(file, (db) => db.one(`SELECT end_ns, duration_ms FROM node_results WHERE unique_id = $id`, { id: r.unique_id }));
    expect(BigInt(node!.end_ns as string)).toBe(before);
    expect(Math.abs((node!.duration_ms as number) - r.execution_time * 1000)).toBeLessThan(1);
  });

  it('a node whose timing lies far outside the run is placed inside it, and reading or migrating the file says so once', async () => {
    const d = docOf(OPENLINEAGE_BUILD);
    const [start, end] = windowOf(d);
    const outside = d.results.filter((r) => r.timing.some((t) => t.completed_at && ns(t.completed_at) > end + 1_000_000_000n)).map((r) => r.unique_id);
    expect(outside).toHaveLength(1);
    const runs = runCli(['runs', OPENLINEAGE_BUILD, '--format', 'json']);
    expect(runs.code, runs.stderr).toBe(0);
    expect(JSON.parse(runs.stdout)[0].duration_s).toBeLessThanOrEqual(Number(end - start) / 1e9);
    const said = runs.stderr.split('\n').filter((l) => l.includes(outside[0]!));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(OPENLINEAGE_BUILD);
    expect(said[0]).toMatch(/outside the run/);
    const m = await migrateAndLoad([OPENLINEAGE_BUILD]);
    expect(renderMigrateReport(m.report).split('\n').filter((l) => l.includes(outside[0]!))).toHaveLength(1);
    m.db.close();
  });

  it('the same file migrated says it in the report, not on stderr', () => {
    const out = path.join(tempDir('runlens-window-'), 'out.jsonl');
    const r = runCli(['migrate', OPENLINEAGE_BUILD, '-o', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/outside the run/);
  });
});
