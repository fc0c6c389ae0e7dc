/**
 * Every real older-engine file in ../shared/samples/legacy-dbt-core: migrated output validates,
 * loads, and each node's outcome is what the file's own status says (interface section 2A).
 */
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';
import { fromLog, fromRunResults, migrateAndLoad, triple } from './helpers.js';

const note = samplesNote(LEGACY);
const files = note.missing ? [] : readdirSync(LEGACY).filter((f) => f !== 'README.md').sort();

describe.skipIf(note.missing)(note.title('real older-engine samples migrate to valid telemetry with their own statuses'), () => {
  const dbs: Db[] = [];
  afterAll(() => dbs.forEach((d) => d.close()));

  it.each(files)('%s', async (name) => {
    const file = sample(LEGACY, name);
    const exp = name.startsWith('rr_') ? fromRunResults(file) : fromLog(file);
    const m = await migrateAndLoad([file]);
    dbs.push(m.db);
    // one trace, its id the invocation id without dashes
    const runs = await m.db.all('SELECT trace_id, invocation_id, command, ended FROM runs');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.trace_id).toBe(exp.invocationId.replace(/-/g, '').toLowerCase());
    expect(runs[0]!.invocation_id).toBe(exp.invocationId);
    expect(runs[0]!.ended).toBe(true);
    if (exp.command) expect(runs[0]!.command).toBe(exp.command);
    // every node with the outcome its status means
    const got = new Map([...m.nodes].map(([id, r]) => [id, triple(r)]));
    expect(got).toEqual(exp.nodes);
    // every span ended and parented
    expect(await m.db.scalar(`SELECT count(*)::INT FROM spans WHERE orphan OR NOT ended`)).toBe(0);
  });

  it('names the single failure as the upstream of the skip in the 0.21 file, and says ids are unknown otherwise', async () => {
    const m = await migrateAndLoad([sample(LEGACY, 'rr_v2_0.21_error_skipped.json')]);
    dbs.push(m.db);
    const skipped = [...m.nodes.values()].filter((n) => n.node_outcome === 'skipped');
    const errored = [...m.nodes.values()].filter((n) => n.node_outcome === 'error');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.upstream_unique_id).toBe(errored[0]!.unique_id);
    expect(m.report.files[0]!.manifest.path).toBeUndefined();
  });

  it('keeps failing_rows of a failed test and the error text of a failed model', async () => {
    const m = await migrateAndLoad([sample(LEGACY, 'log_1.8.2_postgres_test_pass_fail.jsonl'), sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl')]);
    dbs.push(m.db);
    const failed = [...m.nodes.values()].find((n) => n.test_outcome === 'failed')!;
    expect(failed.failing_rows).toBe(78);
    const err = await m.db.one(`SELECT error_text FROM node_results WHERE node_outcome = 'error'`);
    expect(String(err!.error_text)).toMatch(/error/i);
    expect(await m.db.scalar('SELECT count(*)::INT FROM runs')).toBe(2);
  });

  it('writes the same outcomes to Parquet', async () => {
    const m = await migrateAndLoad([sample(LEGACY, 'rr_v6_1.11.2_build_noop_unittest.json')], { ext: 'parquet' });
    dbs.push(m.db);
    const exp = fromRunResults(sample(LEGACY, 'rr_v6_1.11.2_build_noop_unittest.json'));
    expect(new Map([...m.nodes].map(([id, r]) => [id, triple(r)]))).toEqual(exp.nodes);
  });
});
