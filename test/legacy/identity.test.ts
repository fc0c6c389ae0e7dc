/**
 * A translated run has the same identity however it is read: the same file translated twice gives
 * the same bytes; read in place it has the records of its migrated copy; and run_results.json and
 * the log of the same invocation give the same span ids to the same invocation, phases, nodes and
 * evaluations (the model keeps one record per trace, span and record type).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateFiles } from '../../src/legacy/migrate.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, ROOT, sample, samplesNote } from '../helpers/samples.js';
import { writeJson } from './helpers.js';

const note = samplesNote(LEGACY);
const dbs: Db[] = [];
afterAll(() => dbs.forEach((d) => d.close()));

async function records(file: string): Promise<string[]> {
  const db = await openModel();
  dbs.push(db);
  await loadPaths(db, [file]);
  return (await db.all(`SELECT trace_id || ' ' || span_id || ' ' || record_type || ' ' || coalesce(span_name, '') AS k FROM records WHERE record_type <> 'LogRecord' ORDER BY 1`)).map((r) => String(r.k));
}

async function migrated(file: string): Promise<string> {
  const out = path.join(tempDir('runlens-identity-'), 'out.jsonl');
  await migrateFiles([file], { out });
  return out;
}

/** The run_results.json the engine writes for the run of a debug log: its NodeFinished run results (ephemeral models are left out). */
export function runResultsOfLog(log: string): object {
  let inv = '';
  let generatedAt = '';
  const results: object[] = [];
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { info, data } = JSON.parse(line);
    inv ||= info.invocation_id;
    if (info.name === 'EndRunResult') generatedAt = data.generated_at;
    if (info.name !== 'NodeFinished' || data.node_info.materialized === 'ephemeral') continue;
    const rr = data.run_result;
    results.push({
      status: rr.status, timing: rr.timing_info, thread_id: rr.thread, execution_time: rr.execution_time, adapter_response: rr.adapter_response,
      message: rr.message, failures: rr.num_failures, unique_id: data.node_info.unique_id,
    });
  }
  return {
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v5.json', dbt_version: '1.8.2', generated_at: generatedAt || undefined, invocation_id: inv, env: {} },
    results, elapsed_time: 10, args: { which: 'build' },
  };
}

describe.skipIf(note.missing)(note.title('the identity of a translated run'), () => {
  it.each(['rr_v6_1.9.0_build_hooks.json', 'log_1.8.2_postgres_build_mixed.jsonl'])('%s: translated twice, the same bytes; read in place, the records of its migrated copy', async (name) => {
    const file = sample(LEGACY, name);
    const a = await migrated(file);
    const b = await migrated(file);
    expect(readFileSync(a, 'utf8')).toBe(readFileSync(b, 'utf8'));
    expect(await records(file)).toEqual(await records(a));
  });

  it('run_results.json and the log of one invocation give its invocation, phases, nodes and evaluations the same span ids', async () => {
    const log = sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl');
    const rr = writeJson('run_results.json', runResultsOfLog(log));
    const ids = async (file: string) => {
      const db = await openModel();
      dbs.push(db);
      await loadPaths(db, [file]);
      return db.all(`SELECT kind, coalesce(unique_id, '') AS uid, coalesce(phase, '') AS phase, span_id FROM spans WHERE kind IN ('process', 'invocation', 'phase', 'node_processed', 'node_evaluated') ORDER BY ALL`);
    };
    const fromLog = await ids(log);
    const fromRr = await ids(rr);
    expect(fromRr.length).toBeGreaterThan(40);
    // the log's ephemeral model and its phases are the same spans; everything run_results.json has, the log has
    expect(fromLog).toEqual(expect.arrayContaining(fromRr));
  });
});

describe('run_results.json and the log of one invocation, read together (samples/older-engine)', () => {
  const SAMPLE = path.join(ROOT, 'samples/older-engine');
  const rr = path.join(SAMPLE, 'target/run_results.json');
  const log = path.join(SAMPLE, 'logs/dbt.log');

  async function model(paths: string[], db?: string): Promise<Db> {
    const m = await openModel(db);
    dbs.push(m);
    await loadPaths(m, paths);
    return m;
  }
  const outcomes = (db: Db) => db.all(`SELECT unique_id, node_outcome, test_outcome, upstream_unique_id FROM node_results WHERE trace_id = $t ORDER BY unique_id`, { t: TRACE });
  const TRACE = '6f1c2b3a4d5e4f608a7b9c0d1e2f3a4b';

  it('are one run: the artifact\'s nodes once, the log\'s queries under them, the error text once', async () => {
    const both = await model([path.join(SAMPLE, 'target'), path.join(SAMPLE, 'logs')]);
    const alone = await model([rr]);
    expect(await both.all(`SELECT trace_id, nodes::INT AS nodes, ended FROM runs WHERE command = 'build'`)).toEqual([{ trace_id: TRACE, nodes: 8, ended: true }]);
    expect(await outcomes(both)).toEqual(await outcomes(alone));
    // every span of the artifact is there once; the log adds its queries, parented by the artifact's evaluations
    const count = (db: Db, kind: string) => db.scalar<number>(`SELECT count(*)::INT FROM spans WHERE trace_id = $t AND kind = $k`, { t: TRACE, k: kind });
    for (const kind of ['invocation', 'phase', 'node_processed', 'node_evaluated']) expect(await count(both, kind), kind).toBe(await count(alone, kind));
    expect(await count(both, 'query')).toBe(11);
    expect(await both.scalar(`SELECT count(*)::INT FROM spans WHERE trace_id = $t AND orphan`, { t: TRACE })).toBe(0);
    // both files say the model's error at the same moment in the same words: one record
    expect(await both.scalar(`SELECT error_text FROM node_results WHERE unique_id = 'model.shop.stg_customers'`)).toBe(
      await alone.scalar(`SELECT error_text FROM node_results WHERE unique_id = 'model.shop.stg_customers'`),
    );
    expect(await both.scalar(`SELECT count(*)::INT FROM logs WHERE trace_id = $t AND severity_text = 'ERROR'`, { t: TRACE })).toBe(1);
  });

  it('a log cut off mid-run leaves its node in flight open: the artifact completes it, in either order, also loaded into a --db in two commands', async () => {
    const lines = readFileSync(log, 'utf8').split('\n');
    const cut = lines.findIndex((l) => l.includes('"NodeExecuting"') && l.includes('model.shop.stg_customers'));
    const partial = path.join(tempDir('runlens-cut-'), 'dbt.log');
    writeFileSync(partial, lines.slice(0, cut + 1).join('\n') + '\n');
    const logAlone = await outcomes(await model([partial]));
    expect(logAlone.find((r) => r.unique_id === 'model.shop.stg_customers')!.node_outcome).toBe(null);
    const artifact = await outcomes(await model([rr]));
    for (const order of [[partial, rr], [rr, partial]]) {
      const db = await model(order);
      expect(await outcomes(db), order.join(' ')).toEqual(artifact);
      expect(await db.one(`SELECT ended, status_message FROM runs`)).toEqual({ ended: true, status_message: 'Executed with errors' });
    }
    const file = path.join(tempDir('runlens-cut-db-'), 'model.duckdb');
    const first = await model([partial], file);
    first.close();
    dbs.splice(dbs.indexOf(first), 1);
    const second = await model([rr], file);
    expect(await outcomes(second)).toEqual(artifact);
    expect(await second.one(`SELECT ended, status_message FROM runs`)).toEqual({ ended: true, status_message: 'Executed with errors' });
  });
});
