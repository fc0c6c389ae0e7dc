/**
 * What the older engine's JSON logs say beyond outcomes, on the real logs of ../shared/samples:
 * SQL queries as QueryExecuted spans under their node, a node's error text once (its own message),
 * project-relative node files, and migrate's summary of what it translated.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderMigrateReport } from '../../src/commands/migrate.js';
import type { Db } from '../../src/store/db.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';
import { closeReadModels, manifest, migrateAndLoad, readInPlace, runResults, writeJson } from './helpers.js';

const note = samplesNote(LEGACY);
const read = readInPlace;
const dbs: Db[] = []; // the models migrateAndLoad opens
afterAll(() => {
  closeReadModels();
  dbs.forEach((d) => d.close());
});

describe.skipIf(note.missing)(note.title('real JSON logs'), () => {
  it('SQLQuery/SQLQueryStatus pairs become query spans under their node, with SQL, outcome and timing', async () => {
    const db = await read(sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl'));
    const qs = await db.all(
      `SELECT q.unique_id, p.kind AS parent_kind, p.phase AS parent_phase, json_extract_string(q.attributes, '$.query_outcome') AS outcome,
              json_extract_string(q.attributes, '$.sql') AS sql, json_extract_string(q.attributes, '$.adapter_type') AS adapter, q.duration_ms
       FROM span_details q JOIN spans p ON p.trace_id = q.trace_id AND p.span_id = q.parent_span_id WHERE q.kind = 'query' ORDER BY q.start_ns`,
    );
    // every SQLQuery of the log, in order; the node's two (BEGIN, then the failing create) under its RUN evaluation
    expect(qs).toHaveLength(11);
    expect(qs.every((q) => q.adapter === 'postgres' && typeof q.duration_ms === 'number' && (q.duration_ms as number) >= 0)).toBe(true);
    const node = qs.filter((q) => q.unique_id === 'model.jaffle_shop.orders');
    expect(node.map((q) => [q.parent_kind, q.parent_phase, q.outcome])).toEqual([
      ['node_evaluated', 'run', 'QUERY_OUTCOME_SUCCESS'],
      ['node_evaluated', 'run', 'QUERY_OUTCOME_ERROR'],
    ]);
    expect(node[0]!.sql).toBe('BEGIN');
    expect(node[1]!.sql).toMatch(/create\s+table/i);
    // the others (list_*, master) ran outside any node: under the invocation
    expect(new Set(qs.filter((q) => q.unique_id === null).map((q) => q.parent_kind))).toEqual(new Set(['invocation']));
    // the query lines are spans now, not log records too
    expect(await db.scalar(`SELECT count(*)::INT FROM logs WHERE json_extract_string(attributes, '$.legacy_event_name') IN ('SQLQuery', 'SQLQueryStatus')`)).toBe(0);
  });

  it("a node's error text is its own message, once: not the progress line, not the end-of-run recap", async () => {
    const db = await read(sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl'));
    expect(await db.all(`SELECT unique_id, relative_path, error_text FROM node_results WHERE node_outcome = 'error'`)).toEqual([
      {
        unique_id: 'model.jaffle_shop.orders',
        relative_path: 'models/orders.sql',
        error_text: 'Database Error in model orders (models/orders.sql)\n  syntax error at or near "final"\n  LINE 43: final as (\n           ^\n  compiled code at target/run/jaffle_shop/models/orders.sql',
      },
    ]);
    // the progress line and the recap are still there, as INFO lines that keep the engine's level
    const kept = await db.all(
      `SELECT json_extract_string(attributes, '$.legacy_event_name') AS event, severity_text, json_extract_string(attributes, '$.original_severity_text') AS original
       FROM logs WHERE json_extract_string(attributes, '$.legacy_event_name') IN ('LogModelResult', 'RunResultError') ORDER BY time_ns`,
    );
    expect(kept).toEqual([
      { event: 'LogModelResult', severity_text: 'INFO', original: 'ERROR' },
      { event: 'RunResultError', severity_text: 'INFO', original: 'ERROR' },
    ]);
  });

  it("a node without NodeCompiling/NodeExecuting lines takes its time from NodeFinished's timing_info: compile is RENDER, execute is RUN", async () => {
    const file = sample(LEGACY, 'log_1.11.0_bigquery_run_excerpt.jsonl');
    const finished = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.info.name === 'NodeFinished');
    expect(finished.length).toBeGreaterThan(0);
    const db = await read(file);
    const ms = (t: { started_at: string; completed_at: string }) => Date.parse(t.completed_at) - Date.parse(t.started_at);
    for (const e of finished) {
      const id = e.data.node_info.unique_id;
      const timing = Object.fromEntries(e.data.run_result.timing_info.map((t: { name: string }) => [t.name, t]));
      const evals = await db.all(`SELECT phase, duration_ms FROM nodes WHERE unique_id = $id AND kind = 'evaluated' ORDER BY phase`, { id });
      expect(evals.map((r) => [r.phase, Math.round(r.duration_ms as number)]), id).toEqual([['render', ms(timing.compile)], ['run', ms(timing.execute)]]);
      expect(await db.scalar(`SELECT duration_ms FROM node_results WHERE unique_id = $id`, { id }), id).toBe(ms(timing.compile) + ms(timing.execute));
    }
  });

  it('stdout (the info stream, no debug lines) gives each node the execution_time of its result line', async () => {
    const lines = readFileSync(sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl'), 'utf8').split('\n').filter(Boolean);
    const info = lines.filter((l) => JSON.parse(l).info.level !== 'debug');
    const file = path.join(tempDir('runlens-info-stream-'), 'stdout.jsonl');
    writeFileSync(file, info.join('\n') + '\n');
    const seconds = new Map<string, number>();
    for (const e of info.map((l) => JSON.parse(l))) if (typeof e.data.execution_time === 'number' && e.data.node_info) seconds.set(e.data.node_info.unique_id, e.data.execution_time);
    expect(seconds.size).toBeGreaterThan(10);
    const db = await read(file);
    const got = new Map((await db.all(`SELECT unique_id, duration_ms FROM node_results`)).map((r) => [r.unique_id as string, r.duration_ms as number]));
    expect([...got.keys()].sort()).toEqual([...seconds.keys()].sort());
    for (const [id, s] of seconds) expect(Math.abs(got.get(id)! - s * 1000), id).toBeLessThan(1);
  });

  it('node files are project-relative: from node_info under the resource folder, or from the manifest', async () => {
    const db = await read(sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl'));
    const paths = Object.fromEntries((await db.all(`SELECT unique_id, relative_path FROM node_results`)).map((r) => [r.unique_id, r.relative_path]));
    expect(paths['model.jaffle_shop.stg_customers']).toBe('models/staging/stg_customers.sql');
    expect(paths['seed.jaffle_shop.raw_customers']).toBe('seeds/raw_customers.csv');
    expect(paths['snapshot.jaffle_shop.orders_snapshot']).toBe('snapshots/orders_snapshot.sql');
    // a generic test is defined in a YAML file the log does not name
    expect(paths['test.jaffle_shop.unique_stg_customers_customer_id.c7614daada']).toBeNull();
  });

  it("migrate's summary counts tests by outcome, and notes unknown upstreams only when there are some", async () => {
    const m = await migrateAndLoad([sample(LEGACY, 'log_1.8.2_postgres_test_pass_fail.jsonl')]);
    dbs.push(m.db);
    const text = renderMigrateReport(m.report);
    expect(text).toMatch(/trace 899a81ce1512451ab34a480863ac4005 \(test\), 4 nodes: success 4; tests: passed 3, failed 1, \d+ queries\n/);
    expect(text).not.toMatch(/note:|upstream/);
  });
});

describe('migrate summary of skips', () => {
  it('says how many skips have no known upstream, and why, only when there are such skips', async () => {
    const doc = runResults({
      results: [
        { id: 'model.p.a', status: 'error', at: [1, 2] },
        { id: 'model.p.b', status: 'error', at: [1, 2] },
        { id: 'model.p.c', status: 'skipped' },
      ],
    });
    const m = await migrateAndLoad([writeJson('run_results.json', doc)]);
    dbs.push(m.db);
    expect(renderMigrateReport(m.report)).toContain(
      '3 nodes: error 2, skipped 1\n  no manifest.json beside it (--manifest FILE gives one)\nwrote',
    );
    expect(renderMigrateReport(m.report)).toMatch(/note: 1 skipped node without upstream_unique_id: without a manifest a skip names its upstream only when the run had exactly one failure \(--manifest FILE\)\n$/);
    // with the manifest beside it, each skip is named: no note
    const dir = writeJson('run_results.json', doc).replace(/run_results\.json$/, '');
    writeJson('manifest.json', manifest({ 'model.p.a': [], 'model.p.b': [], 'model.p.c': ['model.p.b'] }), dir);
    const w = await migrateAndLoad([`${dir}run_results.json`]);
    dbs.push(w.db);
    expect(w.nodes.get('model.p.c')!.upstream_unique_id).toBe('model.p.b');
    expect(renderMigrateReport(w.report)).not.toContain('note:');
  });
});
