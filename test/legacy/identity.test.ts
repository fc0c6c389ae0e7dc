/**
 * A translated run has the same identity however it is read: the same file translated twice gives
 * the same bytes; read in place it has the records of its migrated copy; and run_results.json and
 * the log of the same invocation give the same span ids to the same invocation, phases, nodes and
 * evaluations (the model keeps one record per trace, span and record type).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateFiles } from '../../src/legacy/migrate.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';
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
