/**
 * Every real older-engine file in ../shared/samples/legacy-dbt-core: migrated output validates,
 * loads, and each node's outcome is what the file's own status says (interface section 2A).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';
import { migrateAndLoad, triple } from './helpers.js';

const note = samplesNote(LEGACY);
const files = note.missing ? [] : readdirSync(LEGACY).filter((f) => f !== 'README.md').sort();

/** The interface's table, written out here rather than read from the code under test. */
function expected(status: string, resourceType: string, message: string | null, materialized = ''): string {
  const isTest = resourceType === 'test' || resourceType === 'unit_test';
  if (status === 'success' && materialized === 'ephemeral') return 'skipped/noop/-';
  if (status === 'success' && message === 'NO-OP') return 'skipped/noop/-';
  if (status === 'skipped' && /fail_fast/.test(message ?? '')) return 'canceled/-/-';
  const t: Record<string, string> = {
    success: isTest ? 'success/-/passed' : 'success/-/-', error: 'error/-/-', skipped: 'skipped/upstream/-', 'no-op': 'skipped/noop/-',
    pass: 'success/-/passed', warn: 'success/-/warned', fail: 'success/-/failed',
  };
  return t[status]!;
}

interface Expect {
  invocationId: string;
  command: string | null;
  nodes: Map<string, string>;
}

function fromRunResults(file: string): Expect {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map<string, string>();
  for (const r of doc.results) nodes.set(r.unique_id, expected(r.status, r.unique_id.split('.')[0], r.message));
  return { invocationId: doc.metadata.invocation_id, command: doc.args?.which ?? null, nodes };
}

function fromLog(file: string): Expect {
  const nodes = new Map<string, string>();
  let invocationId = '';
  let command: string | null = null;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { info, data } = JSON.parse(line);
    invocationId ||= info.invocation_id;
    if (info.name === 'MainReportArgs') command = /\bdbt .*?\b(build|run|test|seed|compile)\b/.exec(data.args.invocation_command)?.[1] ?? null;
    if (info.name === 'NodeFinished') {
      const n = data.node_info;
      nodes.set(n.unique_id, expected(data.run_result.status, n.resource_type, data.run_result.message, n.materialized));
    }
  }
  return { invocationId, command, nodes };
}

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
    expect(m.report.manifest).toBe(false);
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
