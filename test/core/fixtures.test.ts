import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import { buildTree, buildTreeText, resolveTrace } from '../../src/analyze/tree.js';
import { renderTreeText } from '../../src/render/tree-text.js';
import { InputError } from '../../src/errors.js';
import { evaluateGate } from '../../src/gate/rules.js';
import { convertFile } from '../../src/produce/convert.js';
import { writeParquetFile } from '../../src/produce/parquet-writer.js';
import { SCHEMA_VERSION } from '../../src/store/schema.js';
import type { JsonlRecord } from '../../src/produce/record.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { openModelToRead } from '../../src/store/open.js';
import { TRACE, interfaceStyleRun, ns, span, tempDir, writeLines } from '../helpers/fixtures.js';

const dir = tempDir();
const FUSION_ET = (x: string) => `v1.public.events.fusion.${x}`;

async function model(paths: string[], lenient = false): Promise<Db> {
  const db = await openModel();
  await loadPaths(db, paths, { lenient });
  return db;
}

/** A model of `records` written to the file `name`, handed to `check`, and closed after. */
async function withRecords(name: string, records: (object | string)[], check: (db: Db) => Promise<void>): Promise<void> {
  const db = await model([writeLines(dir, name, records)]);
  try {
    await check(db);
  } finally {
    db.close();
  }
}

describe("the interface document's form", () => {
  let db: Db;
  beforeAll(async () => {
    db = await model([writeLines(dir, 'interface.jsonl', interfaceStyleRun())]);
  });
  afterAll(() => db.close());

  it('reads lower-case outcomes, Node(<id>) names, Run phases, flat test_outcome, the engine product segment', async () => {
    const rows = await db.all(`SELECT unique_id, phase, node_outcome, skip_reason, test_outcome, failing_rows, upstream_unique_id FROM node_results ORDER BY unique_id`);
    expect(rows).toEqual([
      { unique_id: 'model.project.customers', phase: 'run', node_outcome: 'error', skip_reason: null, test_outcome: null, failing_rows: null, upstream_unique_id: null },
      { unique_id: 'model.project.orders', phase: 'run', node_outcome: 'skipped', skip_reason: 'upstream', test_outcome: null, failing_rows: null, upstream_unique_id: 'model.project.customers' },
      { unique_id: 'model.project.revenue', phase: 'run', node_outcome: 'skipped', skip_reason: 'upstream', test_outcome: null, failing_rows: null, upstream_unique_id: 'model.project.orders' },
      { unique_id: 'test.project.not_null_x', phase: 'run', node_outcome: 'success', skip_reason: null, test_outcome: 'failed', failing_rows: 7, upstream_unique_id: null },
      { unique_id: 'test.project.unique_y', phase: 'run', node_outcome: 'success', skip_reason: null, test_outcome: 'warned', failing_rows: null, upstream_unique_id: null },
    ]);
    expect(await db.all('SELECT kind, count(*)::INT n FROM spans GROUP BY ALL ORDER BY ALL')).toEqual([
      { kind: 'invocation', n: 1 }, { kind: 'node_evaluated', n: 5 }, { kind: 'phase', n: 1 },
    ]);
  });

  it('gives the same node results from its Parquet conversion (flat outcomes and numeric attributes kept)', async () => {
    // numbers where the engine writes strings: rows_affected and duration_ms as JSON numbers
    const records = interfaceStyleRun().map((r) => {
      const rec = r as { record_type: string; span_id: string; attributes: Record<string, unknown> };
      return rec.record_type === 'SpanEnd' && rec.span_id === '0000000000000036' ? { ...rec, attributes: { ...rec.attributes, rows_affected: 42, duration_ms: 17 } } : rec;
    });
    const jsonl = writeLines(dir, 'interface-numbers.jsonl', records);
    const parquet = path.join(dir, 'interface-numbers.parquet');
    await convertFile(jsonl, parquet);
    const read = async (file: string) => {
      const m = await model([file]);
      try {
        return {
          results: await m.all(`SELECT unique_id, node_outcome, skip_reason, test_outcome, failing_rows, upstream_unique_id FROM node_results ORDER BY unique_id`),
          numbers: await m.all(`SELECT unique_id, rows_affected, attr_duration_ms FROM spans WHERE rows_affected IS NOT NULL OR attr_duration_ms IS NOT NULL`),
          run: await m.one('SELECT tests_failed::INT AS f, tests_warned::INT AS w, skipped::INT AS s FROM runs'),
        };
      } finally {
        m.close();
      }
    };
    const fromJsonl = await read(jsonl);
    expect(fromJsonl.numbers).toEqual([{ unique_id: 'model.project.customers', rows_affected: '42', attr_duration_ms: 17 }]);
    expect(fromJsonl.run).toEqual({ f: 1, w: 1, s: 2 });
    expect(await read(parquet)).toEqual(fromJsonl);
  });

  it('finds the run by its invocation id (and a prefix of it), also where it is not its trace id', async () => {
    const invocation = '5eeeeeee-1111-4222-8333-944444444444';
    const records = interfaceStyleRun().map((r) => JSON.parse(JSON.stringify(r).replaceAll('aaaabbbb-cccc-dddd-eeee-ffff00001111', invocation)));
    const db2 = await model([writeLines(dir, 'other-invocation-id.jsonl', records)]);
    try {
      expect(await db2.scalar('SELECT invocation_id FROM runs')).toBe(invocation);
      expect(await resolveTrace(db2, invocation)).toBe(TRACE);
      expect(await resolveTrace(db2, invocation.slice(0, 13).toUpperCase())).toBe(TRACE);
      expect(await resolveTrace(db2, TRACE.slice(0, 8))).toBe(TRACE);
      await expect(resolveTrace(db2, 'ffffffff')).rejects.toThrow(/no trace ffffffff/);
    } finally {
      db2.close();
    }
  });

  it('follows a two-step upstream chain to the node that errored, and attaches the ERROR log text', async () => {
    const r = await runSavedQuery(db, findSavedQuery('upstream-skip-chains'));
    const revenue = r.rows.find((x) => x.unique_id === 'model.project.revenue')!;
    expect(revenue).toMatchObject({ chain_length: 2, chain: 'model.project.orders -> model.project.customers', root_cause: 'model.project.customers', root_cause_outcome: 'error' });
    expect(await db.scalar(`SELECT error_text FROM node_results WHERE unique_id = 'model.project.customers'`)).toBe('Syntax error near SELEC');
  });

  it('takes the error text from an ERROR log without unique_id by the node span it was logged on', async () => {
    const records = interfaceStyleRun().map((r) => {
      const rec = r as { record_type: string; attributes: Record<string, unknown> };
      return rec.record_type === 'LogRecord' ? { ...rec, attributes: { code: 9002 } } : rec;
    });
    const db2 = await model([writeLines(dir, 'log-without-unique-id.jsonl', records)]);
    try {
      expect(await db2.scalar(`SELECT error_text FROM node_results WHERE unique_id = 'model.project.customers'`)).toBe('Syntax error near SELEC');
    } finally {
      db2.close();
    }
  });

  it('joins every ERROR line of a node into its error text, one row per node and phase', async () => {
    const extra = { ...(interfaceStyleRun().at(-1) as Record<string, unknown>), event_id: 'second', time_unix_nano: ns(39.5), body: 'second line' };
    const db2 = await model([writeLines(dir, 'two-errors.jsonl', [...interfaceStyleRun(), extra])]);
    try {
      expect(await db2.all(`SELECT kind, count(*)::INT AS n, any_value(error_text) AS e FROM nodes WHERE unique_id = 'model.project.customers' GROUP BY kind`)).toEqual([
        { kind: 'evaluated', n: 1, e: 'Syntax error near SELEC\nsecond line' },
      ]);
    } finally {
      db2.close();
    }
  });

  it('gates: default fails on the error and the failed test; --fail-on picks rules', async () => {
    const g = await evaluateGate(db, { failOn: ['test-failed', 'error'] });
    expect(g.passed).toBe(false);
    expect(g.offenders.map((o) => [o.unique_id, o.rule])).toEqual([
      ['model.project.customers', 'error'],
      ['test.project.not_null_x', 'test-failed'],
    ]);
    const w = await evaluateGate(db, { failOn: ['test-warned'] });
    expect(w.offenders.map((o) => o.unique_id)).toEqual(['test.project.unique_y']);
    const s = await evaluateGate(db, { failOn: ['skipped'] });
    expect(s.offenders).toHaveLength(2);
    expect((await evaluateGate(db, { failOn: ['canceled'] })).passed).toBe(true);
  });
});

describe('older builds with camelCase envelope keys', () => {
  it('loads traceId/spanId/... the same as snake_case', async () => {
    const camel = interfaceStyleRun().map((r) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(r)) o[k === 'attributes' ? k : k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] = v;
      return o;
    });
    expect(Object.keys(camel[0]!)).toContain('traceId');
    await withRecords('camel.jsonl', camel, async (db) => {
      expect(await db.scalar('SELECT count(*)::INT FROM node_results')).toBe(5);
      expect(await db.scalar('SELECT trace_id FROM runs')).toBe(TRACE);
      expect(await db.scalar(`SELECT count(*)::INT FROM spans WHERE start_ns IS NULL OR span_id IS NULL`)).toBe(0);
    });
  });
});

describe('spans that never ended, and orphans', () => {
  it('keeps an unended span (flagged) and an orphan in its trace', async () => {
    const recs = [
      ...span({ id: '00000000000000a1', name: 'dbt invocation (x)', eventType: FUSION_ET('invocation.Invocation'), start: 0, end: 10 }),
      ...span({ id: '00000000000000a2', parent: '00000000000000a1', name: 'Phase: RUN', eventType: FUSION_ET('phase.PhaseExecuted'), start: 1, attrs: { phase: 'EXECUTION_PHASE_RUN' } }),
      ...span({ id: '00000000000000a3', parent: '00000000000000ff', name: 'Node evaluated (model.p.lost)', eventType: FUSION_ET('node.NodeEvaluated'), start: 2, end: 3, attrs: { unique_id: 'model.p.lost', phase: 'EXECUTION_PHASE_RUN' }, endAttrs: { node_outcome: 'NODE_OUTCOME_SUCCESS' } }),
      ...span({ id: '00000000000000a4', parent: '00000000000000a3', name: 'Query executed (model.p.lost)', eventType: FUSION_ET('query.QueryExecuted'), start: 2.1, end: 2.9 }),
      ...span({ id: '00000000000000a5', parent: '00000000000000a2', name: 'Node evaluated (model.p.hung)', eventType: FUSION_ET('node.NodeEvaluated'), start: 4, attrs: { unique_id: 'model.p.hung', phase: 'EXECUTION_PHASE_RUN', node_type: 'NODE_TYPE_MODEL' } }),
    ];
    await withRecords('unended.jsonl', recs, async (db) => {
      expect(await db.all('SELECT span_id, kind, ended, orphan, depth FROM spans ORDER BY span_id')).toEqual([
        { span_id: '00000000000000a1', kind: 'invocation', ended: true, orphan: false, depth: 0 },
        { span_id: '00000000000000a2', kind: 'phase', ended: false, orphan: false, depth: 1 },
        { span_id: '00000000000000a3', kind: 'node_evaluated', ended: true, orphan: true, depth: 0 },
        { span_id: '00000000000000a4', kind: 'query', ended: true, orphan: false, depth: 1 },
        { span_id: '00000000000000a5', kind: 'node_evaluated', ended: false, orphan: false, depth: 2 },
      ]);
      expect(await db.scalar(`SELECT end_ns FROM spans WHERE span_id = '00000000000000a2'`)).toBeNull();
      // Only a SpanStart defines these spans: their attributes are still normalized.
      expect(await db.one(`SELECT phase FROM spans WHERE span_id = '00000000000000a2'`)).toEqual({ phase: 'run' });
      expect(await db.one(`SELECT unique_id, phase, resource_type, ended FROM nodes WHERE span_id = '00000000000000a5'`))
        .toEqual({ unique_id: 'model.p.hung', phase: 'run', resource_type: 'model', ended: false });
    });
  });
});

describe('node results: one span per node and run', () => {
  const ET = FUSION_ET;
  const inv = span({ id: '00000000000000d1', name: 'dbt invocation (x)', eventType: ET('invocation.Invocation'), start: 0, end: 100 });
  const processed = (id: string, uid: string, start: number, end: number | undefined, outcome: string) =>
    span({ id, parent: '00000000000000d1', name: `Node processed (${uid})`, eventType: ET('node.NodeProcessed'), start, end, attrs: { unique_id: uid }, endAttrs: { node_outcome: outcome } });
  const evaluated = (id: string, uid: string, phase: string, start: number, end: number, outcome: string) =>
    span({ id, parent: '00000000000000d1', name: `Node evaluated (${uid})`, eventType: ET('node.NodeEvaluated'), start, end, attrs: { unique_id: uid, phase }, endAttrs: { node_outcome: outcome } });
  const records = [
    ...inv,
    // a: its NodeProcessed ended; b: none (the last-ending evaluation); c: a NodeProcessed that never
    // ended wins over its evaluations; d: two NodeProcessed spans of one invocation, the later-ending one
    ...processed('00000000000000a1', 'model.p.a', 1, 10, 'NODE_OUTCOME_SUCCESS'),
    ...evaluated('00000000000000a2', 'model.p.a', 'EXECUTION_PHASE_RUN', 2, 9, 'NODE_OUTCOME_SUCCESS'),
    ...evaluated('00000000000000b1', 'model.p.b', 'EXECUTION_PHASE_RENDER', 11, 12, 'NODE_OUTCOME_SUCCESS'),
    ...evaluated('00000000000000b2', 'model.p.b', 'EXECUTION_PHASE_RUN', 13, 19, 'NODE_OUTCOME_ERROR'),
    ...processed('00000000000000c1', 'model.p.c', 20, undefined, 'NODE_OUTCOME_SUCCESS'),
    ...evaluated('00000000000000c2', 'model.p.c', 'EXECUTION_PHASE_RUN', 21, 29, 'NODE_OUTCOME_SUCCESS'),
    ...processed('00000000000000e1', 'model.p.d', 30, 35, 'NODE_OUTCOME_ERROR'),
    ...processed('00000000000000e2', 'model.p.d', 36, 40, 'NODE_OUTCOME_SUCCESS'),
  ];
  const expected = [
    { unique_id: 'model.p.a', span_id: '00000000000000a1', kind: 'processed', node_outcome: 'success' },
    { unique_id: 'model.p.b', span_id: '00000000000000b2', kind: 'evaluated', node_outcome: 'error' },
    { unique_id: 'model.p.c', span_id: '00000000000000c1', kind: 'processed', node_outcome: null },
    { unique_id: 'model.p.d', span_id: '00000000000000e2', kind: 'processed', node_outcome: 'success' },
  ];
  const results = (db: Db) => db.all('SELECT unique_id, span_id, kind, node_outcome FROM node_results ORDER BY unique_id');

  it('picks the NodeProcessed, else the last-ending evaluation, for every node; runs count them', async () => {
    await withRecords('node-results.jsonl', records, async (db) => {
      expect(await results(db)).toEqual(expected);
      expect(await db.one('SELECT nodes::INT AS nodes, success::INT AS success, error::INT AS error FROM runs')).toEqual({ nodes: 4, success: 2, error: 1 });
    });
  });

  it('gives the same results when the run comes from two inputs, in parts, and once more in full', async () => {
    const db = await openModel();
    try {
      const half = Math.floor(records.length / 2);
      await loadPaths(db, [writeLines(dir, 'node-results-1.jsonl', records.slice(0, half))]);
      await loadPaths(db, [writeLines(dir, 'node-results-2.jsonl', records.slice(half))]);
      expect(await results(db)).toEqual(expected);
      await loadPaths(db, [writeLines(dir, 'node-results-again.jsonl', [...records, { ...(records[0] as object), event_id: 'x' }])]);
      expect(await results(db)).toEqual(expected);
      expect(await db.scalar('SELECT nodes::INT FROM runs')).toBe(4);
    } finally {
      db.close();
    }
  });
});

describe('a run that arrives in parts, and the same spans from two inputs', () => {
  // Part one: the phase has only started and the node's parent (a2) is not in the data yet.
  const inv = span({ id: '00000000000000c1', name: 'dbt invocation (x)', eventType: FUSION_ET('invocation.Invocation'), start: 0, end: 10 });
  const phase = span({ id: '00000000000000c2', parent: '00000000000000c1', name: 'Phase: RUN', eventType: FUSION_ET('phase.PhaseExecuted'), start: 1, end: 9, attrs: { phase: 'EXECUTION_PHASE_RUN' } });
  const node = span({ id: '00000000000000c3', parent: '00000000000000c2', name: 'Node evaluated (model.p.m)', eventType: FUSION_ET('node.NodeEvaluated'), start: 2, end: 3, attrs: { unique_id: 'model.p.m', phase: 'EXECUTION_PHASE_RUN' }, endAttrs: { node_outcome: 'NODE_OUTCOME_SUCCESS' } });
  const spansNow = (db: Db) => db.all('SELECT span_id, ended, orphan, depth FROM spans ORDER BY span_id');

  it('a later file ends a span, brings a parent, and repeats a SpanEnd: one row per span, flags and depths afresh', async () => {
    const db = await openModel();
    try {
      await loadPaths(db, [writeLines(dir, 'part1.jsonl', [...inv, phase[0]!, ...node.slice(1)])]);
      expect(await spansNow(db)).toEqual([
        { span_id: '00000000000000c1', ended: true, orphan: false, depth: 0 },
        { span_id: '00000000000000c2', ended: false, orphan: false, depth: 1 },
        { span_id: '00000000000000c3', ended: true, orphan: false, depth: 2 },
      ]);
      // part two: the phase's SpanEnd, and the node's SpanEnd once more (the same run from a second input)
      await loadPaths(db, [writeLines(dir, 'part2.jsonl', [phase[1]!, node[1]!])]);
      expect(await spansNow(db)).toEqual([
        { span_id: '00000000000000c1', ended: true, orphan: false, depth: 0 },
        { span_id: '00000000000000c2', ended: true, orphan: false, depth: 1 },
        { span_id: '00000000000000c3', ended: true, orphan: false, depth: 2 },
      ]);
      expect(await db.one('SELECT spans::INT AS spans, nodes::INT AS nodes, success::INT AS success FROM runs')).toEqual({ spans: 3, nodes: 1, success: 1 });
      expect(await db.scalar(`SELECT count(*)::INT FROM span_details WHERE attributes->>'unique_id' = 'model.p.m'`)).toBe(1);
    } finally {
      db.close();
    }
  });

  it('a span id ended twice in one file under two parents: the first SpanEnd stands, as across inputs, and its child hangs under it', async () => {
    const ET = FUSION_ET;
    const root = span({ id: '00000000000000f1', name: 'dbt invocation (x)', eventType: ET('invocation.Invocation'), start: 0, end: 10 });
    const a = span({ id: '00000000000000f2', parent: '00000000000000f1', name: 'Phase: RUN', eventType: ET('phase.PhaseExecuted'), start: 1, end: 9 });
    const b = span({ id: '00000000000000f3', parent: '00000000000000f2', name: 'Node evaluated (model.p.b)', eventType: ET('node.NodeEvaluated'), start: 2, end: 8 });
    const p = (parent: string) => span({ id: '00000000000000f4', parent, name: 'Query executed (model.p.b)', eventType: ET('query.QueryExecuted'), start: 3, end: 7 });
    const c = span({ id: '00000000000000f5', parent: '00000000000000f4', name: 'child', eventType: ET('x.Other'), start: 4, end: 5 });
    // p ends once under b (depth 3), then once under the root (depth 1); c is listed before both
    await withRecords('shared-parent-id.jsonl', [...c, ...root, ...a, ...b, ...p('00000000000000f3'), ...p('00000000000000f1').slice(1)], async (db) => {
      expect(await db.all(`SELECT span_id, parent_span_id, depth FROM spans WHERE span_id IN ('00000000000000f4', '00000000000000f5') ORDER BY span_id, depth`)).toEqual([
        { span_id: '00000000000000f4', parent_span_id: '00000000000000f3', depth: 3 }, { span_id: '00000000000000f5', parent_span_id: '00000000000000f4', depth: 4 },
      ]);
    });
  });

  it('spans in a cycle of ids have no depth, whatever their kind; others have the depth of their tree', async () => {
    const ET = FUSION_ET;
    await withRecords('cycles.jsonl', [
      ...span({ id: '00000000000000b1', name: 'dbt invocation (x)', eventType: ET('invocation.Invocation'), start: 0, end: 10 }),
      // a phase and a node evaluation that are each other's parent, and a query that is its own
      ...span({ id: '00000000000000b2', parent: '00000000000000b3', name: 'Phase: RUN', eventType: ET('phase.PhaseExecuted'), start: 1, end: 9 }),
      ...span({ id: '00000000000000b3', parent: '00000000000000b2', name: 'Node evaluated (model.p.c)', eventType: ET('node.NodeEvaluated'), start: 2, end: 8 }),
      ...span({ id: '00000000000000b4', parent: '00000000000000b4', name: 'Query executed (model.p.c)', eventType: ET('query.QueryExecuted'), start: 3, end: 4 }),
      // a query straight under the invocation (usually under an evaluation, two levels down)
      ...span({ id: '00000000000000b5', parent: '00000000000000b1', name: 'Query executed (x)', eventType: ET('query.QueryExecuted'), start: 5, end: 6 }),
    ], async (db) => {
      expect(await db.all('SELECT span_id, kind, depth FROM spans ORDER BY span_id')).toEqual([
        { span_id: '00000000000000b1', kind: 'invocation', depth: 0 },
        { span_id: '00000000000000b2', kind: 'phase', depth: null },
        { span_id: '00000000000000b3', kind: 'node_evaluated', depth: null },
        { span_id: '00000000000000b4', kind: 'query', depth: null },
        { span_id: '00000000000000b5', kind: 'query', depth: 1 },
      ]);
    });
  });

  it('finds a span that never ended when as many SpanStarts as SpanEnds are in the data (a trimmed file)', async () => {
    const ET = FUSION_ET;
    const inv = span({ id: '00000000000000e1', name: 'dbt invocation (x)', eventType: ET('invocation.Invocation'), start: 0, end: 10 });
    // e2 lost its SpanStart to the trim, e3 never ended: one SpanStart and one SpanEnd each
    const ended = span({ id: '00000000000000e2', parent: '00000000000000e1', name: 'Phase: RUN', eventType: ET('phase.PhaseExecuted'), start: 1, end: 2 });
    const hung = span({ id: '00000000000000e3', parent: '00000000000000e1', name: 'Node evaluated (model.p.h)', eventType: ET('node.NodeEvaluated'), start: 3, attrs: { unique_id: 'model.p.h' } });
    await withRecords('trimmed-even.jsonl', [...inv, ended[1]!, ...hung], async (db) => {
      expect(await db.all('SELECT span_id, ended FROM spans ORDER BY span_id')).toEqual([
        { span_id: '00000000000000e1', ended: true }, { span_id: '00000000000000e2', ended: true }, { span_id: '00000000000000e3', ended: false },
      ]);
      expect(await db.scalar(`SELECT unique_id FROM nodes WHERE span_id = '00000000000000e3'`)).toBe('model.p.h');
    });
  });

  it('an orphan whose parent arrives later is no longer an orphan', async () => {
    const db = await openModel();
    try {
      await loadPaths(db, [writeLines(dir, 'orphan1.jsonl', [...inv, ...node])]);
      expect(await spansNow(db)).toEqual([
        { span_id: '00000000000000c1', ended: true, orphan: false, depth: 0 },
        { span_id: '00000000000000c3', ended: true, orphan: true, depth: 0 },
      ]);
      await loadPaths(db, [writeLines(dir, 'orphan2.jsonl', phase)]);
      expect(await spansNow(db)).toEqual([
        { span_id: '00000000000000c1', ended: true, orphan: false, depth: 0 },
        { span_id: '00000000000000c2', ended: true, orphan: false, depth: 1 },
        { span_id: '00000000000000c3', ended: true, orphan: false, depth: 2 },
      ]);
    } finally {
      db.close();
    }
  });

  /**
   * record_rows in the column order of schemas 1-3: linked_span_id stored after in_selection, and
   * `tree` the span tree columns after it (schema 2; none in schema 1).
   */
  async function oldRecordRows(d: Db, tree: string) {
    const cols = `file_id, record_type, trace_id, span_id, parent_span_id, span_name, event_type, event_id, start_ns, end_ns, time_ns,
      severity_number, severity_text, status_code, status_message, body, links, attributes, kind, unique_id, phase, node_outcome,
      skip_reason, upstream_unique_id, test_outcome, failing_rows, resource_type, name, relative_path, materialization, rows_affected,
      in_selection, lower(links->>'$[0].span_id') AS linked_span_id, code, attr_duration_ms${tree}`;
    for (const v of ['span_details', 'spans', 'nodes', 'node_results', 'records', 'logs']) await d.run(`DROP VIEW IF EXISTS ${v}`);
    await d.run(`CREATE TABLE record_rows_old AS SELECT ${cols} FROM record_rows ORDER BY rowid`);
    await d.run('DROP TABLE record_rows');
    await d.run('ALTER TABLE record_rows_old RENAME TO record_rows');
  }

  /**
   * A --db file of this runlens with the run's first part, what `snapshot` reads of it, then the file
   * turned back into an older layout by `downgrade` (schema `version`) and opened again.
   */
  async function olderDb<T>(name: string, version: number, snapshot: (db: Db) => Promise<T>, downgrade: (db: Db) => Promise<void>) {
    const file = path.join(dir, `${name}.duckdb`);
    const fresh = await openModel(file);
    await loadPaths(fresh, [writeLines(dir, `${name}.jsonl`, [...inv, phase[0]!, ...node])]);
    const before = await snapshot(fresh);
    await downgrade(fresh);
    await fresh.run(`UPDATE runlens_meta SET value = '${version}' WHERE key = 'schema_version'`);
    fresh.close();
    return { before, db: await openModel(file) };
  }

  it('a --db file of schema 1 (spans, nodes and node_results as tables) opens as the current model with the same spans', async () => {
    const { before, db } = await olderDb('schema1', 1, async (d) => ({
      spans: await d.all('SELECT * EXCLUDE (record_rowid) FROM spans ORDER BY span_id'),
      nodes: await d.all('SELECT * FROM nodes ORDER BY span_id'),
      results: await d.all('SELECT * FROM node_results ORDER BY span_id'),
    }), async (d) => {
      // spans, nodes and node_results tables of their own, record_rows without the span tree columns
      for (const t of ['spans', 'nodes', 'node_results']) await d.run(`CREATE TABLE ${t}_v1 AS SELECT * FROM ${t}`);
      await oldRecordRows(d, '');
      for (const t of ['spans', 'nodes', 'node_results']) await d.run(`ALTER TABLE ${t}_v1 RENAME TO ${t}`);
    });
    try {
      expect(before.results).toHaveLength(1);
      expect(await db.all('SELECT * EXCLUDE (record_rowid) FROM spans ORDER BY span_id')).toEqual(before.spans);
      expect(await db.all('SELECT * FROM nodes ORDER BY span_id')).toEqual(before.nodes);
      expect(await db.all('SELECT * FROM node_results ORDER BY span_id')).toEqual(before.results);
      expect(await db.all(`SELECT table_type FROM information_schema.tables WHERE table_name IN ('spans', 'nodes', 'node_results')`)).toEqual([
        { table_type: 'VIEW' }, { table_type: 'VIEW' }, { table_type: 'VIEW' },
      ]);
      expect(await db.scalar(`SELECT value FROM runlens_meta WHERE key = 'schema_version'`)).toBe(String(SCHEMA_VERSION));
    } finally {
      db.close();
    }
  });

  it('a --db file derived by an earlier runlens (other rules, same schema) is derived again when opened, to read or to load', async () => {
    for (const [how, open] of [['load', openModel], ['read', (f: string) => openModelToRead(f)]] as const) {
      const file = path.join(dir, `earlier-rules-${how}.duckdb`);
      const made = await openModel(file);
      await loadPaths(made, [writeLines(dir, `earlier-rules-${how}.jsonl`, [...inv, phase[0]!, ...node])]);
      const before = await made.all('SELECT * FROM runs');
      // what an earlier derive may have left: other counts in runs, another node result
      await made.run(`UPDATE runs SET nodes = 99, failed = NOT failed`);
      await made.run(`UPDATE record_rows SET node_result = false`);
      await made.run(`UPDATE runlens_meta SET value = 'earlier' WHERE key = 'ddl'`);
      made.close();
      const again = await open(file);
      try {
        expect(await again.all('SELECT * FROM runs'), how).toEqual(before);
        expect(await again.scalar('SELECT count(*)::INT FROM node_results'), how).toBe(1);
      } finally {
        again.close();
      }
    }
  });

  it('a --db file of schema 2 (node_results as a table) opens with the same node results, and takes more files', async () => {
    const { before, db } = await olderDb('schema2', 2, async (d) => ({
      results: await d.all('SELECT * FROM node_results ORDER BY span_id'),
      runs: await d.all('SELECT * FROM runs'),
    }), async (d) => {
      await d.run('CREATE TABLE node_results_v2 AS SELECT * FROM node_results');
      await oldRecordRows(d, ', span_row, orphan, depth');
      await d.run('ALTER TABLE node_results_v2 RENAME TO node_results');
    });
    try {
      expect(await db.all('SELECT * FROM node_results ORDER BY span_id')).toEqual(before.results);
      expect(await db.all('SELECT * FROM runs')).toEqual(before.runs);
      // the phase's SpanEnd completes the run that was loaded before the migration
      await loadPaths(db, [writeLines(dir, 'schema2b.jsonl', phase.slice(1))]);
      expect(await db.scalar('SELECT count(*)::INT FROM node_results')).toBe(1);
      expect(await db.scalar(`SELECT value FROM runlens_meta WHERE key = 'schema_version'`)).toBe(String(SCHEMA_VERSION));
    } finally {
      db.close();
    }
  });
});

describe('the text tree (laid out in DuckDB)', () => {
  const ET = FUSION_ET;
  const recs = [
    ...span({ id: '00000000000000a1', name: 'dbt invocation (x)', eventType: ET('invocation.Invocation'), start: 0, end: 10 }),
    ...span({ id: '00000000000000a2', parent: '00000000000000a1', name: 'Phase: RUN', eventType: ET('phase.PhaseExecuted'), start: 1, attrs: { phase: 'EXECUTION_PHASE_RUN' } }),
    ...span({ id: '00000000000000a3', parent: '00000000000000ff', name: 'Node evaluated (model.p.lost)', eventType: ET('node.NodeEvaluated'), start: 2, end: 3.25, attrs: { unique_id: 'model.p.lost', phase: 'EXECUTION_PHASE_RUN' }, endAttrs: { node_outcome: 'NODE_OUTCOME_SUCCESS' } }),
    ...span({ id: '00000000000000a4', parent: '00000000000000a3', name: 'Query executed (model.p.lost)', eventType: ET('query.QueryExecuted'), start: 2.1, end: 2.9, status: { message: 'boom', code: 2 } }),
    ...span({ id: '00000000000000a5', parent: '00000000000000a2', name: 'Node evaluated (model.p.hung)', eventType: ET('node.NodeEvaluated'), start: 4, attrs: { unique_id: 'model.p.hung', phase: 'EXECUTION_PHASE_RUN' } }),
    ...span({ id: '00000000000000a6', parent: '00000000000000a6', name: 'self parent', eventType: ET('x.Other'), start: 5, end: 5.0005 }),
    ...span({ id: '00000000000000a7', parent: '00000000000000a8', name: 'cycle a', eventType: ET('x.Other'), start: 6, end: 7 }),
    ...span({ id: '00000000000000a8', parent: '00000000000000a7', name: 'cycle b', eventType: ET('x.Other'), start: 6, end: 7 }),
    ...span({ id: '00000000000000a9', parent: '00000000000000a1', name: 'Node evaluated (test.p.t)', eventType: ET('node.NodeEvaluated'), start: 6, end: 6.125, attrs: { unique_id: 'test.p.t', phase: 'EXECUTION_PHASE_RUN' }, endAttrs: { node_outcome: 'NODE_OUTCOME_SUCCESS', node_test_detail: { test_outcome: 'TEST_OUTCOME_FAILED', failing_rows: 3 } } }),
    ...span({ id: '00000000000000aa', parent: '00000000000000a1', name: 'Node evaluated (model.p.s)', eventType: ET('node.NodeEvaluated'), start: 6.5, end: 6.5, attrs: { unique_id: 'model.p.s', phase: 'EXECUTION_PHASE_RUN' }, endAttrs: { node_outcome: 'NODE_OUTCOME_SKIPPED', node_skip_reason: 'NODE_SKIP_REASON_UPSTREAM', node_skip_upstream_detail: { upstream_unique_id: 'model.p.lost' } } })
      .map((r) => ({ ...r, links: [{ trace_id: TRACE, span_id: '00000000000000ab', attributes: {} }] })),
    ...span({ id: '00000000000000ac', parent: '00000000000000a1', name: null as unknown as string, eventType: ET('x.Other'), start: 9, end: 70_000 }),
    ...span({ id: '00000000000000ad', parent: '00000000000000a1', name: 'has a child', eventType: ET('x.Other'), start: 9.5, end: 9.75 }),
    ...span({ id: '00000000000000ae', parent: '00000000000000a1', name: 'error no outcome', eventType: ET('x.Other'), start: 9.6, end: 12.5, status: { message: '', code: 2 } }),
    ...span({ id: '00000000000000af', parent: '00000000000000ad', name: 'the child', eventType: ET('x.Other'), start: 9.7, end: 9.8 }),
  ];
  const FULL = `trace ${TRACE}: 14 spans
dbt invocation (x)  10ms
├─ Phase: RUN  [NOT ENDED]
│  └─ Node evaluated (model.p.hung)  [NOT ENDED]
├─ Node evaluated (test.p.t)  [success, test=failed (3 failing rows)]  125µs
├─ Node evaluated (model.p.s)  [skipped, skip=upstream (upstream model.p.lost), -> processed 00000000000000ab]  0µs
├─ (unnamed span)  1m10s
├─ has a child  250µs
│  └─ the child  100µs
└─ error no outcome  [error]  2.9ms
Node evaluated (model.p.lost)  [success, ORPHAN (parent 00000000000000ff not in the data)]  1.3ms
└─ Query executed (model.p.lost)  [error: boom]  800µs
self parent  [CYCLE (its parent ids loop)]  <1µs
cycle a  [CYCLE (its parent ids loop)]  1.0ms
└─ cycle b  [CYCLE (its parent ids loop)]  1.0ms
`;
  const text = async (depth?: number) => {
    const db = await model([writeLines(dir, 'tree-text.jsonl', recs)]);
    try {
      return renderTreeText(await buildTreeText(db, TRACE, depth));
    } finally {
      db.close();
    }
  };

  it('roots (parent missing, then each parent cycle cut at its earliest span, marked), siblings in start order, facts, durations as formatDuration rounds them', async () => {
    expect(await text()).toBe(FULL);
  });

  it('the JSON tree keeps the spans of a parent cycle too, marked, each loop cut at its earliest span', async () => {
    await withRecords('tree-json.jsonl', recs, async (db) => {
      const t = await buildTree(db, TRACE);
      expect(t.roots.map((r) => [r.name, r.cycle, r.children.map((c) => [c.name, c.cycle])])).toEqual([
        ['dbt invocation (x)', false, expect.anything()],
        ['Node evaluated (model.p.lost)', false, [['Query executed (model.p.lost)', false]]],
        ['self parent', true, []],
        ['cycle a', true, [['cycle b', true]]],
      ]);
    });
  });

  it('a loop through the invocation: its spans marked, the run below it a tree as usual', async () => {
    const ET = FUSION_ET;
    const loop = [
      ...span({ id: '00000000000000c1', name: 'dbt process', eventType: ET('process.Process'), start: 0, end: 10 }),
      // the invocation's parent is a node below it
      ...span({ id: '00000000000000c2', parent: '00000000000000c4', name: 'dbt invocation (x)', eventType: ET('invocation.Invocation'), start: 0, end: 10 }),
      ...span({ id: '00000000000000c3', parent: '00000000000000c2', name: 'Phase: RUN', eventType: ET('phase.PhaseExecuted'), start: 1, end: 9 }),
      ...span({ id: '00000000000000c4', parent: '00000000000000c3', name: 'Node processed (model.p.a)', eventType: ET('node.NodeProcessed'), start: 2, end: 3 }),
      ...span({ id: '00000000000000c5', parent: '00000000000000c3', name: 'Node processed (model.p.b)', eventType: ET('node.NodeProcessed'), start: 4, end: 5 }),
    ];
    const db = await model([writeLines(dir, 'tree-loop.jsonl', loop)]);
    try {
      const mark = '[CYCLE (its parent ids loop)]';
      expect(renderTreeText(await buildTreeText(db, TRACE)).split('\n').slice(1)).toEqual([
        'dbt process  10ms',
        `dbt invocation (x)  ${mark}  10ms`,
        `└─ Phase: RUN  ${mark}  8.0ms`,
        `   ├─ Node processed (model.p.a)  ${mark}  1.0ms`,
        '   └─ Node processed (model.p.b)  1.0ms',
        '',
      ]);
      const json = await buildTree(db, TRACE);
      expect(json.roots.map((r) => [r.name, r.cycle])).toEqual([['dbt process', false], ['dbt invocation (x)', true]]);
      expect(json.roots[1]!.children[0]!.children.map((c) => [c.name, c.cycle, c.children.length])).toEqual([
        ['Node processed (model.p.a)', true, 0],
        ['Node processed (model.p.b)', false, 0],
      ]);
    } finally {
      db.close();
    }
  });

  it('--depth counts what it cuts under each span', async () => {
    // the same lines, with each span below depth 1 folded into a count under its parent
    expect(await text(1)).toBe(
      FULL.replace('│  └─ Node evaluated (model.p.hung)  [NOT ENDED]', '│  └─ … 1 child span').replace('│  └─ the child  100µs', '│  └─ … 1 child span'),
    );
    expect((await text(0)).split('\n').slice(1, 4)).toEqual(['dbt invocation (x)  10ms', '└─ … 6 child spans', 'Node evaluated (model.p.lost)  [success, ORPHAN (parent 00000000000000ff not in the data)]  1.3ms']);
  });
});

describe('unknown event types and enum values are kept (the schema is additive)', () => {
  it('stores them as they came, lower-cased for enums', async () => {
    const recs = [
      ...span({ id: '00000000000000b1', name: 'Node evaluated (model.p.x)', eventType: FUSION_ET('node.NodeEvaluated'), start: 0, end: 1, attrs: { unique_id: 'model.p.x', phase: 'EXECUTION_PHASE_TELEPORT' }, endAttrs: { node_outcome: 'NODE_OUTCOME_PARTIALLY_DONE', node_skip_reason: 7 } }),
      ...span({ id: '00000000000000b2', name: 'Something new', eventType: FUSION_ET('future.BrandNewThing'), start: 0, end: 1, attrs: { anything: { nested: [1, 2] } } }),
      { record_type: 'LogRecord', trace_id: TRACE, span_id: null, span_name: null, event_id: 'e', time_unix_nano: '1772073188904419000', severity_number: 9, severity_text: 'INFO', body: 'hi', event_type: FUSION_ET('log.FutureLog'), attributes: {} },
    ];
    await withRecords('unknown.jsonl', recs, async (db) => {
      expect(await db.one(`SELECT phase, node_outcome, skip_reason FROM nodes`)).toEqual({ phase: 'teleport', node_outcome: 'partially_done', skip_reason: '7' });
      expect(await db.one(`SELECT kind, event_type FROM spans WHERE span_id = '00000000000000b2'`)).toEqual({ kind: 'other', event_type: FUSION_ET('future.BrandNewThing') });
      expect(await db.scalar(`SELECT count(*)::INT FROM logs WHERE event_type LIKE '%FutureLog'`)).toBe(1);
      expect(await db.scalar(`SELECT attributes->'anything'->'nested'->>1 FROM span_details WHERE span_id = '00000000000000b2'`)).toBe('2');
    });
  });
});

describe('bad input', () => {
  const good = JSON.stringify(interfaceStyleRun()[0]);
  const bad = writeLines(dir, 'bad.jsonl', [good, '{"record_type":"SpanEnd", nope', ...interfaceStyleRun().slice(1).map((r) => JSON.stringify(r)), '[1,2]']);

  it('stops a strict load with file:line and the reason', async () => {
    const db = await openModel();
    try {
      const err = await loadPaths(db, [bad]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).message).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: malformed JSON`));
      expect(await db.scalar('SELECT count(*)::INT FROM records')).toBe(0);
    } finally {
      db.close();
    }
  });

  it('--lenient loads the rest, says how many lines were skipped and where', async () => {
    const db = await openModel();
    try {
      const r = await loadPaths(db, [bad], { lenient: true });
      expect(r.skippedLines).toBe(2);
      expect(r.files[0]!.badLines.map((b) => b.line)).toEqual([2, interfaceStyleRun().length + 2]);
      expect(r.records).toBe(interfaceStyleRun().length);
      expect(await db.scalar('SELECT count(*)::INT FROM node_results')).toBe(5);
      // source lines stay right for the records after the bad line
      expect(await db.scalar(`SELECT min(line)::INT FROM records WHERE record_type = 'LogRecord'`)).toBe(interfaceStyleRun().length + 1);
    } finally {
      db.close();
    }
  });

  it('names a truncated Parquet file and a file that is not Parquet', async () => {
    const pq = path.join(dir, 'trunc.parquet');
    await writeParquetFile(interfaceStyleRun() as JsonlRecord[], pq);
    const bytes = readFileSync(pq);
    writeFileSync(pq, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const notPq = path.join(dir, 'text.parquet');
    writeFileSync(notPq, 'hello\n');
    const db = await openModel();
    try {
      await expect(loadPaths(db, [pq])).rejects.toThrow(/trunc\.parquet: truncated Parquet file/);
      await expect(loadPaths(db, [notPq])).rejects.toThrow(/text\.parquet: not a Parquet file/);
      await expect(loadPaths(db, [path.join(dir, 'missing.jsonl')])).rejects.toThrow(/missing\.jsonl: no such file/);
    } finally {
      db.close();
    }
  });

  it('an empty file loads nothing', async () => {
    const empty = path.join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const db = await model([empty]);
    try {
      expect(await db.scalar('SELECT count(*)::INT FROM runs')).toBe(0);
    } finally {
      db.close();
    }
  });

  it('a record over DuckDB default size (a 40 MB log body) still loads, with every other record', async () => {
    const run = interfaceStyleRun() as Record<string, unknown>[];
    const log = run.find((r) => r.record_type === 'LogRecord')!;
    const huge = { ...log, body: 'x'.repeat(40 * 1024 * 1024) };
    const p = writeLines(dir, 'huge.jsonl', [...run, huge]);
    const db = await model([p]);
    try {
      expect(await db.scalar('SELECT count(*)::INT FROM records')).toBe(run.length + 1);
      expect(await db.scalar('SELECT max(length(body))::INT FROM logs')).toBe(40 * 1024 * 1024);
      expect(await db.scalar('SELECT count(*)::INT FROM node_results')).toBe(5);
    } finally {
      db.close();
    }
  });
});

describe('inputs: gzip, folders, globs, many traces per file, --db persistence', () => {
  it('reads .jsonl.gz, recurses folders, expands globs, and keys loads by content hash', async () => {
    const root = path.join(dir, 'tree');
    mkdirSync(path.join(root, 'a', 'b'), { recursive: true });
    const two = [...interfaceStyleRun('11111111111111111111111111111111'), ...interfaceStyleRun('22222222222222222222222222222222')];
    writeLines(path.join(root, 'a'), 'two.ndjson', two);
    writeFileSync(path.join(root, 'a', 'b', 'three.jsonl.gz'), gzipSync(interfaceStyleRun('33333333333333333333333333333333').map((r) => JSON.stringify(r)).join('\n') + '\n'));
    writeFileSync(path.join(root, 'a', 'ignored.txt'), 'not telemetry');
    const dbFile = path.join(dir, 'model.duckdb');
    let db = await openModel(dbFile);
    const r1 = await loadPaths(db, [root]);
    expect(r1.files.map((f) => path.basename(f.path))).toEqual(['three.jsonl.gz', 'two.ndjson']);
    expect(await db.scalar('SELECT count(*)::INT FROM runs')).toBe(3);
    db.close();

    // A second process: the same content (even under another name) adds nothing; a new file adds its run.
    copyFileSync(path.join(root, 'a', 'two.ndjson'), path.join(dir, 'copy-of-two.jsonl'));
    writeLines(dir, 'four.jsonl', interfaceStyleRun('44444444444444444444444444444444'));
    db = await openModel(dbFile);
    const r2 = await loadPaths(db, [path.join(dir, '*-of-two.jsonl'), path.join(dir, 'four.jsonl')]);
    expect(r2.files.map((f) => f.duplicate)).toEqual([true, false]);
    expect(await db.scalar('SELECT count(*)::INT FROM runs')).toBe(4);
    expect(await db.scalar('SELECT count(*)::INT FROM records')).toBe(4 * interfaceStyleRun().length);
    db.close();
  });

  it('an in-memory model hashes no file and still adds nothing from a copy of a file it loaded', async () => {
    const a = writeLines(dir, 'mem-a.jsonl', interfaceStyleRun('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'));
    const copy = path.join(dir, 'mem-copy-of-a.jsonl');
    copyFileSync(a, copy);
    const other = writeLines(dir, 'mem-b.jsonl', interfaceStyleRun('bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'));
    const db = await openModel();
    try {
      const r = await loadPaths(db, [a, copy, other]);
      expect(r.files.map((f) => [f.duplicate, f.alreadyPresent])).toEqual([[false, 0], [true, interfaceStyleRun().length], [false, 0]]);
      expect(await db.scalar('SELECT count(*)::INT FROM files WHERE sha256 IS NOT NULL')).toBe(0);
      expect(await db.scalar('SELECT count(*)::INT FROM runs')).toBe(2);
      expect(await db.scalar('SELECT count(*)::INT FROM records')).toBe(2 * interfaceStyleRun().length);
    } finally {
      db.close();
    }
  });
});

describe("Parquet in the engine's layout", () => {
  it('loads to the same model as the JSONL it was written from', async () => {
    // Engine-shaped records: the interface's flat test_outcome has no Parquet column (the layout is the engine's).
    const recs = [
      ...span({ id: '0000000000000001', name: 'dbt invocation (x)', eventType: FUSION_ET('invocation.Invocation'), start: 0, end: 10, attrs: { invocation_id: 'aaaabbbb-cccc-dddd-eeee-ffff00001111', eval_args: { command: 'build', num_threads: '4' } } }),
      ...span({ id: '0000000000000002', parent: '0000000000000001', name: 'Phase: RUN', eventType: FUSION_ET('phase.PhaseExecuted'), start: 1, end: 9, attrs: { phase: 'EXECUTION_PHASE_RUN', node_count_total: '2' } }),
      ...span({ id: '00000000000000c3', parent: '0000000000000002', name: 'Node evaluated (model.project.customers)', eventType: FUSION_ET('node.NodeEvaluated'), start: 2, end: 2.5, attrs: { unique_id: 'model.project.customers', phase: 'EXECUTION_PHASE_RUN', node_type: 'NODE_TYPE_MODEL' }, endAttrs: { node_outcome: 'NODE_OUTCOME_ERROR', node_error_type: 'NODE_ERROR_TYPE_USER' } }),
      ...span({ id: '00000000000000c1', parent: '0000000000000002', name: 'Node evaluated (test.p.t1)', eventType: FUSION_ET('node.NodeEvaluated'), start: 3, end: 4, attrs: { unique_id: 'test.p.t1', phase: 'EXECUTION_PHASE_RUN', node_type: 'NODE_TYPE_TEST' }, endAttrs: { node_outcome: 'NODE_OUTCOME_SUCCESS', node_test_detail: { failing_rows: 3, test_outcome: 'TEST_OUTCOME_FAILED' } } }),
      ...span({ id: '00000000000000c2', parent: '0000000000000002', name: 'Node evaluated (model.p.m2)', eventType: FUSION_ET('node.NodeEvaluated'), start: 3, end: 4, attrs: { unique_id: 'model.p.m2', phase: 'EXECUTION_PHASE_RUN', node_type: 'NODE_TYPE_MODEL' }, endAttrs: { node_outcome: 'NODE_OUTCOME_SKIPPED', node_skip_reason: 'NODE_SKIP_REASON_UPSTREAM', node_skip_upstream_detail: { upstream_unique_id: 'model.project.customers' } } }),
      // A span that never ended: its SpanStart's attributes are normalized by derive.
      ...span({ id: '00000000000000c4', parent: '0000000000000002', name: 'Node evaluated (model.p.m4)', eventType: FUSION_ET('node.NodeEvaluated'), start: 5, attrs: { unique_id: 'model.p.m4', phase: 'EXECUTION_PHASE_RUN', node_type: 'NODE_TYPE_MODEL' } }),
      // The error log of the failed model: its text becomes the node's error.
      { record_type: 'LogRecord', trace_id: TRACE, span_id: '00000000000000c3', event_id: '0198e3b2-0000-7000-8000-000000000001', time_unix_nano: ns(2.4),
        severity_number: 17, severity_text: 'ERROR', body: 'Database Error: relation "raw_customers" does not exist', event_type: FUSION_ET('log.LogMessage'),
        attributes: { unique_id: 'model.project.customers', phase: 'EXECUTION_PHASE_RUN', code: 1234 } },
    ] as JsonlRecord[];
    const jsonl = writeLines(dir, 'layout.jsonl', recs);
    const pq = path.join(dir, 'layout.parquet');
    await writeParquetFile(recs, pq);
    const a = await model([jsonl]);
    const b = await model([pq]);
    try {
      const q = `SELECT trace_id, span_id, parent_span_id, kind, start_ns::VARCHAR s, end_ns::VARCHAR e, unique_id, phase, node_outcome,
                        skip_reason, upstream_unique_id, test_outcome, failing_rows, depth FROM spans ORDER BY span_id`;
      const ra = await a.all(q);
      expect(ra.length).toBe(6);
      expect(await b.all(q)).toEqual(ra);
      expect(await b.one(`SELECT unique_id, phase, ended FROM spans WHERE span_id = '00000000000000c4'`)).toEqual({ unique_id: 'model.p.m4', phase: 'run', ended: false });
      // What derive and the views read from attributes, which a Parquet load keeps in record_attributes.
      for (const sql of [
        'SELECT trace_id, invocation_id, command FROM runs',
        `SELECT unique_id, error_text FROM node_results WHERE node_outcome = 'error'`,
        'SELECT span_id, unique_id, phase, code, body FROM logs',
        `SELECT json_extract_string(attributes, '$.invocation_id') AS id FROM span_details WHERE kind = 'invocation'`,
      ]) {
        const want = await a.all(sql);
        expect(want.length, sql).toBe(1);
        expect(await b.all(sql), sql).toEqual(want);
      }
      expect(await b.scalar<string>(`SELECT error_text FROM node_results WHERE node_outcome = 'error'`)).toMatch(/relation "raw_customers"/);
      expect(await b.one(`SELECT test_outcome, failing_rows FROM nodes WHERE unique_id = 'test.p.t1'`)).toEqual({ test_outcome: 'failed', failing_rows: 3 });
      // span ids are UInt64 in the file and 16 hex in the model
      const types = await b.all(`SELECT column_name, column_type FROM (DESCRIBE SELECT span_id, start_time_unix_nano FROM read_parquet('${pq}'))`);
      expect(types).toEqual([{ column_name: 'span_id', column_type: 'UBIGINT' }, { column_name: 'start_time_unix_nano', column_type: 'TIMESTAMP_NS' }]);
      // A node record's attributes keep the Parquet layout: the columns that are set (with their JSON
      // types) and json_payload as text; unset columns are left out.
      const attrs = await b.scalar<string>(
        `SELECT attributes::VARCHAR FROM records WHERE record_type = 'SpanEnd' AND span_id = '00000000000000c1'`);
      expect(JSON.parse(attrs)).toEqual({
        json_payload: '{"NodeTestDetail":{"test_outcome":"TEST_OUTCOME_FAILED","failing_rows":3}}',
        node_outcome: 'NODE_OUTCOME_SUCCESS', node_type: 'NODE_TYPE_TEST', phase: 'EXECUTION_PHASE_RUN', unique_id: 'test.p.t1',
      });
    } finally {
      a.close();
      b.close();
    }
  });

  it("keeps a file's attributes with its records: none from a duplicate or failed load, none left by a load that died", async () => {
    const pq = path.join(dir, 'attrs.parquet');
    await writeParquetFile(interfaceStyleRun() as JsonlRecord[], pq);
    const other = path.join(dir, 'attrs-other.parquet');
    await writeParquetFile(interfaceStyleRun('aaaabbbbccccddddeeeeffff00002222') as JsonlRecord[], other);
    const trunc = path.join(dir, 'attrs-trunc.parquet');
    writeFileSync(trunc, readFileSync(pq).subarray(0, 200));
    const db = await model([pq]);
    try {
      const count = () => db.scalar<number>('SELECT count(*)::INTEGER FROM record_attributes');
      const records = await db.scalar<number>('SELECT count(*)::INTEGER FROM records');
      expect(await count()).toBe(records);
      // The attributes were written (on their own connection) before the load found the duplicate.
      expect((await loadPaths(db, [pq])).files[0]!.duplicate).toBe(true);
      expect(await count()).toBe(records);
      await expect(loadPaths(db, [trunc])).rejects.toThrow(/attrs-trunc\.parquet/);
      expect(await count()).toBe(records);
      // A file whose pages are damaged fails while both inserts run; DuckDB's pool gets its threads back.
      const threads = await db.scalar<number>(`SELECT current_setting('threads')::INTEGER`);
      const damaged = path.join(dir, 'attrs-damaged.parquet');
      const bytes = readFileSync(pq);
      bytes.fill(0xff, 300, 600); // in the data pages: the file opens, its rows do not read
      writeFileSync(damaged, bytes);
      await expect(loadPaths(db, [damaged])).rejects.toThrow(/attrs-damaged\.parquet/);
      expect(await db.scalar<number>(`SELECT current_setting('threads')::INTEGER`)).toBe(threads);
      expect(await count()).toBe(records);
      // Attributes of a file that was never committed (a process that died between the two commits).
      await db.run(`INSERT INTO record_attributes VALUES (99, 1, '{}')`);
      await loadPaths(db, [other]);
      expect(await db.scalar<number>('SELECT count(*)::INTEGER FROM record_attributes WHERE file_id = 99')).toBe(0);
      expect(await count()).toBe(await db.scalar<number>('SELECT count(*)::INTEGER FROM records'));
      expect(await db.scalar<number>(`SELECT count(*)::INTEGER FROM records WHERE attributes IS NULL`)).toBe(0);
      expect(await db.scalar<number>(`SELECT current_setting('threads')::INTEGER`)).toBe(threads);
    } finally {
      db.close();
    }
  });
});
