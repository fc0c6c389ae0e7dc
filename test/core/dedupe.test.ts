/**
 * A record is in the model once (DESIGN.md): the engine writes each run twice (JSONL and Parquet), and
 * loading both, in one command or into one --db, keeps one copy of every record.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import type { Db } from '../../src/store/db.js';
import { runCli } from '../helpers/cli.js';
import { TRACE, ns, span, tempDir, writeLines } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

const dir = tempDir();
const FUSION_ET = (x: string) => `v1.public.events.fusion.${x}`;
const CLEAN_JSONL = path.join(ROOT, 'samples/clean-build.jsonl');
const CLEAN_PARQUET = path.join(ROOT, 'samples/clean-build.parquet');
const FAILED_JSONL = path.join(ROOT, 'samples/failed-build.jsonl');
const FAILED_PARQUET = path.join(ROOT, 'samples/failed-build.parquet');

const counts = (db: Db) =>
  db.one(`SELECT (SELECT count(*) FROM records)::INT AS records, (SELECT count(*) FROM spans)::INT AS spans,
                 (SELECT count(*) FROM logs)::INT AS logs, (SELECT count(*) FROM node_results)::INT AS node_results`);

/** The failed build and `copy` (another copy of its lines) loaded in five orders: both in one load either way, in two loads, and as one file either way. */
async function inEveryOrder(copy: string[], name: string, check: (db: Db, order: string) => Promise<void>): Promise<void> {
  const failed = readFileSync(FAILED_JSONL, 'utf8').trimEnd().split('\n');
  const file = writeLines(dir, `${name}.jsonl`, copy);
  const orders = [[[FAILED_JSONL, file]], [[file, FAILED_JSONL]], [[file], [FAILED_JSONL]],
    [[writeLines(dir, `${name}-then-failed.jsonl`, [...copy, ...failed])]], [[writeLines(dir, `failed-then-${name}.jsonl`, [...failed, ...copy])]]];
  for (const loads of orders) {
    const db = await openModel();
    try {
      for (const paths of loads) await loadPaths(db, paths);
      await check(db, JSON.stringify(loads));
    } finally {
      db.close();
    }
  }
}

describe('a record is in the model once', () => {
  it('the JSONL and the Parquet of one run load as one copy, whichever comes first', async () => {
    const once = await openModel();
    const both = await openModel();
    const reversed = await openModel();
    try {
      await loadPaths(once, [CLEAN_JSONL]);
      const want = await counts(once);
      expect(want).toMatchObject({ records: 557 });
      const r = await loadPaths(both, [CLEAN_JSONL, CLEAN_PARQUET]);
      expect(await counts(both)).toEqual(want);
      expect(r.files.map((f) => [f.records, f.alreadyPresent])).toEqual([[557, 0], [0, 557]]);
      expect(r.records).toBe(557);
      expect(r.alreadyPresent).toBe(557);
      await loadPaths(reversed, [CLEAN_PARQUET, CLEAN_JSONL]);
      expect(await counts(reversed)).toEqual(want);
    } finally {
      once.close();
      both.close();
      reversed.close();
    }
  });

  it('a log body written empty in one copy and null in the other is one log', async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const nullBodies = path.join(dir, 'null-bodies.parquet');
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    await c.run(`COPY (SELECT * REPLACE (nullif(body, '') AS body) FROM read_parquet('${FAILED_PARQUET}')) TO '${nullBodies}' (FORMAT parquet)`);
    expect(Number((await c.runAndReadAll(`SELECT count(*) FROM read_parquet('${nullBodies}') WHERE record_type = 'LogRecord' AND body IS NULL`)).getRows()[0]![0])).toBeGreaterThan(0);
    c.closeSync();
    inst.closeSync();
    const one = await openModel();
    const both = await openModel();
    try {
      await loadPaths(one, [FAILED_JSONL]);
      const r = await loadPaths(both, [FAILED_JSONL, nullBodies]);
      expect(await counts(both)).toEqual(await counts(one));
      expect(r.files[1]!.records).toBe(0);
    } finally {
      one.close();
      both.close();
    }
  });

  it('the errors query lists each error once after the JSONL then the Parquet went into one --db', () => {
    const db = path.join(dir, 'failed.duckdb');
    expect(runCli(['load', FAILED_JSONL, '--db', db]).code).toBe(0);
    const second = runCli(['load', FAILED_PARQUET, '--db', db]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('failed-build.parquet (parquet): 525 records already present, nothing added');
    expect(second.stdout).toMatch(/model .*: 525 records/);
    const errors = JSON.parse(runCli(['query', 'errors', '--db', db, '--format', 'json']).stdout) as { unique_id: string }[];
    const alone = JSON.parse(runCli(['query', 'errors', FAILED_JSONL, '--format', 'json']).stdout) as { unique_id: string }[];
    expect(alone.length).toBeGreaterThan(0);
    expect(errors).toEqual(alone);
  });

  it('`load logs target`: the engine layout of one run, a folder each, loads once', () => {
    const project = path.join(dir, 'project');
    mkdirSync(path.join(project, 'logs'), { recursive: true });
    mkdirSync(path.join(project, 'target', 'metadata'), { recursive: true });
    copyFileSync(CLEAN_JSONL, path.join(project, 'logs', 'otel.jsonl'));
    copyFileSync(CLEAN_PARQUET, path.join(project, 'target', 'metadata', 'otel.parquet'));
    const r = runCli(['load', path.join(project, 'logs'), path.join(project, 'target'), '--format', 'json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { records: number; alreadyPresent: number; model: { records: number } };
    expect(report.model.records).toBe(557);
    expect(report.alreadyPresent).toBe(557);
  });

  it('a file that repeats some records of the model adds only the others, and says how many were there', async () => {
    const inv = span({ id: '00000000000000a1', name: 'dbt invocation (x)', eventType: FUSION_ET('invocation.Invocation'), start: 0, end: 10 });
    const node = span({ id: '00000000000000a2', parent: '00000000000000a1', name: 'Node evaluated (model.p.m)', eventType: FUSION_ET('node.NodeEvaluated'),
      start: 1, end: 2, attrs: { unique_id: 'model.p.m' }, endAttrs: { node_outcome: 'NODE_OUTCOME_ERROR' } });
    const log = (body: string, at: number) => ({ record_type: 'LogRecord', trace_id: TRACE, span_id: '00000000000000a2', span_name: 'Node evaluated (model.p.m)',
      event_id: null, time_unix_nano: ns(at), severity_number: 17, severity_text: 'ERROR', body, event_type: FUSION_ET('log.LogMessage'),
      attributes: { unique_id: 'model.p.m' } });
    const db = await openModel();
    try {
      // the first half of a run (a trimmed copy), then the whole run with one more log line
      await loadPaths(db, [writeLines(dir, 'half.jsonl', [...inv, node[0]!, log('boom', 1.5)])]);
      const r = await loadPaths(db, [writeLines(dir, 'whole.jsonl', [...inv, ...node, log('boom', 1.5), log('boom again', 1.6), log('boom', 1.7)])]);
      expect(r.files[0]).toMatchObject({ records: 3, alreadyPresent: 4, duplicate: false });
      expect(await db.scalar('SELECT count(*)::INT FROM records')).toBe(7);
      expect(await db.all('SELECT body, time_ns::VARCHAR AS t FROM logs ORDER BY time_ns')).toEqual([
        { body: 'boom', t: ns(1.5) }, { body: 'boom again', t: ns(1.6) }, { body: 'boom', t: ns(1.7) },
      ]);
      expect(await db.scalar(`SELECT error_text FROM node_results`)).toBe('boom\nboom again\nboom');
      expect(await db.one('SELECT spans::INT AS spans, error::INT AS error FROM runs')).toEqual({ spans: 2, error: 1 });
      // the records view numbers the new records by their own lines in the file
      expect(await db.all(`SELECT line::INT AS line, record_type FROM records WHERE source_file LIKE '%whole.jsonl' ORDER BY line`)).toEqual([
        { line: 4, record_type: 'SpanEnd' }, { line: 6, record_type: 'LogRecord' }, { line: 7, record_type: 'LogRecord' },
      ]);
    } finally {
      db.close();
    }
  });

  it('log records with no trace: one repeated by a second file is there once, and a file of other records hides none', async () => {
    const log = (body: string, at: number) => ({ record_type: 'LogRecord', time_unix_nano: ns(at), severity_number: 9, severity_text: 'INFO', body,
      event_type: FUSION_ET('log.LogMessage'), attributes: {} });
    const run = span({ id: '00000000000000b1', name: 'dbt invocation (y)', eventType: FUSION_ET('invocation.Invocation'), start: 0, end: 10 });
    const db = await openModel();
    try {
      const r = await loadPaths(db, [
        writeLines(dir, 'traceless-1.jsonl', [log('starting', 1), log('done', 2)]),
        writeLines(dir, 'traced.jsonl', run),
        writeLines(dir, 'traceless-2.jsonl', [log('done', 2), log('again', 3)]),
      ]);
      expect(r.files.map((f) => [f.records, f.alreadyPresent])).toEqual([[2, 0], [2, 0], [1, 1]]);
      expect(await db.all('SELECT body FROM logs ORDER BY time_ns')).toEqual([{ body: 'starting' }, { body: 'done' }, { body: 'again' }]);
    } finally {
      db.close();
    }
  });

  it('a copy that says a span ended in error wins over one that says it ended well, in either order, with --db too', async () => {
    // The older engine's artifact and its log translate to the same spans; only the log knows that
    // an on-run-end hook failed. Here: the engine's file, and a copy whose invocation ended in error.
    const lines = readFileSync(CLEAN_JSONL, 'utf8').trimEnd().split('\n');
    const at = lines.findIndex((l) => l.includes('"SpanEnd"') && l.includes('invocation.Invocation'));
    const failed = JSON.parse(lines[at]!) as Record<string, unknown>;
    failed.status = { message: 'Encountered an error: hook failed', code: 2 };
    const errorCopy = writeLines(dir, 'hook-failed.jsonl', [...lines.slice(0, at), JSON.stringify(failed), ...lines.slice(at + 1)]);
    const run = (db: Db) => db.one('SELECT status_code, status_message, failed FROM runs');
    const want = { status_code: 2, status_message: 'Encountered an error: hook failed', failed: true };
    for (const order of [[CLEAN_JSONL, errorCopy], [errorCopy, CLEAN_JSONL]]) {
      const db = await openModel();
      try {
        const r = await loadPaths(db, order);
        expect(r.records).toBe(557);
        expect(await run(db), order.join(' ')).toEqual(want);
        expect(await db.scalar('SELECT count(*)::INT FROM spans')).toBe(248);
      } finally {
        db.close();
      }
    }
    const model = path.join(dir, 'hook.duckdb');
    expect(runCli(['load', CLEAN_JSONL, '--db', model]).code).toBe(0);
    expect(runCli(['gate', '--db', model]).code).toBe(0);
    expect(runCli(['load', errorCopy, '--db', model]).code).toBe(0);
    const gate = runCli(['gate', '--db', model]);
    expect(gate.code).toBe(1);
    expect(gate.stdout).toContain('Encountered an error: hook failed');
  });

  it('a copy in which a node errored or a test failed wins over one in which it went well, in either order, with --db too', async () => {
    // the failed build, and a copy of it that says every node succeeded and every test passed
    const good = readFileSync(FAILED_JSONL, 'utf8')
      .replaceAll('NODE_OUTCOME_ERROR', 'NODE_OUTCOME_SUCCESS')
      .replaceAll('TEST_OUTCOME_FAILED', 'TEST_OUTCOME_PASSED')
      .replaceAll('"failing_rows":4', '"failing_rows":0')
      .trimEnd()
      .split('\n')
      .map((l) => {
        const r = JSON.parse(l) as { status?: { code: number; message: string | null } };
        if (r.status?.code === 2) r.status = { code: 1, message: null };
        return JSON.stringify(r);
      });
    const goodCopy = writeLines(dir, 'went-well.jsonl', good);
    const results = (db: Db) => db.all('SELECT unique_id, node_outcome, skip_reason, test_outcome, failing_rows FROM node_results ORDER BY unique_id, span_id');
    const runs = (db: Db) => db.all('SELECT * EXCLUDE (files) FROM runs');
    const alone = await openModel();
    await loadPaths(alone, [FAILED_JSONL]);
    const want = { results: await results(alone), runs: await runs(alone) };
    alone.close();
    expect(want.runs).toMatchObject([{ error: '2', tests_failed: '1', failed: true }]);
    for (const order of [[FAILED_JSONL, goodCopy], [goodCopy, FAILED_JSONL]]) {
      const db = await openModel();
      try {
        await loadPaths(db, order);
        expect({ results: await results(db), runs: await runs(db) }, order.join(' ')).toEqual(want);
      } finally {
        db.close();
      }
    }
    const model = path.join(dir, 'went-well.duckdb');
    expect(runCli(['load', goodCopy, '--db', model]).code).toBe(0);
    expect(runCli(['gate', '--db', model]).code).toBe(0);
    expect(runCli(['load', FAILED_JSONL, '--db', model]).code).toBe(0);
    const gate = runCli(['gate', '--db', model, '--fail-on', 'error,test-failed']);
    expect(gate.code).toBe(1);
    expect(gate.stdout).toMatch(/stg_employees/);
    // the same file again: its records are there (it added none of its own the first time)
    const again = runCli(['load', FAILED_JSONL, '--db', model]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('failed-build.jsonl (jsonl): 525 records already present, nothing added');
  });

  it('copies that fail alike but say less (no failing rows, no error message) give way to the one that says more, in any order', async () => {
    const failed = readFileSync(FAILED_JSONL, 'utf8').trimEnd().split('\n');
    // the same run with its failing rows and its error messages lost
    const terse = failed.map((l) => l.replaceAll('"failing_rows":4,', '').replace(/"status":\{"message":"[^"]*","code":2\}/, '"status":{"message":null,"code":2}'));
    expect(terse.join('\n')).not.toContain('failing_rows');
    expect(terse.join('\n')).not.toContain('"message":"error"');
    const said = (db: Db) => db.one(`SELECT (SELECT list(failing_rows ORDER BY span_id) FROM node_results WHERE test_outcome = 'failed') AS failing_rows,
      (SELECT list(status_message ORDER BY span_id) FROM spans WHERE status_code = 2) AS messages`);
    const alone = await openModel();
    await loadPaths(alone, [FAILED_JSONL]);
    const want = await said(alone);
    alone.close();
    expect(want).toMatchObject({ failing_rows: [4] });
    await inEveryOrder(terse, 'terse', async (db, order) => expect(await said(db), order).toEqual(want));
  });

  it('copies that disagree on what they say alike (no outcome, another skip reason or message) give one model in any order', async () => {
    const failed = readFileSync(FAILED_JSONL, 'utf8').trimEnd().split('\n');
    // the same run: passed tests and succeeded nodes without their outcome, other skip reasons and error messages
    const other = failed.map((l) => l.replaceAll(',"node_test_detail":{}', '').replaceAll('"node_outcome":"NODE_OUTCOME_SUCCESS",', '')
      .replaceAll('NODE_SKIP_REASON_UPSTREAM', 'NODE_SKIP_REASON_NO_OP').replaceAll('"message":"error","code":2', '"message":"it broke","code":2'));
    const model = async (db: Db) => ({
      results: await db.all('SELECT unique_id, node_outcome, skip_reason, upstream_unique_id, test_outcome, failing_rows FROM node_results ORDER BY ALL'),
      spans: await db.all('SELECT span_id, status_code, status_message, node_outcome, skip_reason, test_outcome FROM spans ORDER BY ALL'),
      runs: await db.all('SELECT * EXCLUDE (files) FROM runs'),
    });
    const alone = await openModel();
    await loadPaths(alone, [FAILED_JSONL]);
    const want = await model(alone);
    alone.close();
    // what a copy says and the other does not say stands; of two things said alike, the greater
    const messages = want.spans.map((r) => ({ ...r, status_message: r.status_message === 'error' ? 'it broke' : r.status_message }));
    await inEveryOrder(other, 'other', async (db, order) => {
      const got = await model(db);
      expect(got.runs, order).toEqual(want.runs);
      expect(got.results, order).toEqual(want.results);
      expect(got.spans, order).toEqual(messages);
    });
  });

  it('a span repeated within one input (a file concatenated with itself, a retried OTLP batch) is one span', async () => {
    const lines = readFileSync(CLEAN_JSONL, 'utf8').trimEnd().split('\n');
    const db = await openModel();
    const once = await openModel();
    try {
      await loadPaths(once, [CLEAN_JSONL]);
      await loadPaths(db, [writeLines(dir, 'twice.jsonl', [...lines, ...lines])]);
      // the file's records are what it says, every line of it; spans, nodes and runs count each span once
      expect(await db.scalar('SELECT count(*)::INT FROM records')).toBe(2 * lines.length);
      const shape = (m: Db) => m.one(`SELECT (SELECT count(*) FROM spans)::INT AS spans, (SELECT count(*) FROM nodes)::INT AS nodes,
        (SELECT count(*) FROM node_results)::INT AS results, (SELECT spans FROM runs)::INT AS run_spans, (SELECT nodes FROM runs)::INT AS run_nodes`);
      expect(await shape(db)).toEqual(await shape(once));
      // a run cut short, twice: its spans that never ended are one span each too
      const partial = await openModel();
      const partialTwice = await openModel();
      try {
        await loadPaths(partial, [writeLines(dir, 'partial.jsonl', lines.slice(0, 60))]);
        await loadPaths(partialTwice, [writeLines(dir, 'partial-twice.jsonl', [...lines.slice(0, 60), ...lines.slice(0, 60)])]);
        expect(await partial.scalar('SELECT count(*)::INT FROM spans WHERE NOT ended')).toBeGreaterThan(0);
        expect(await shape(partialTwice)).toEqual(await shape(partial));
      } finally {
        partial.close();
        partialTwice.close();
      }
    } finally {
      db.close();
      once.close();
    }
  });

  it('a span ended twice within one input takes the worse of each ending, in either order, as across inputs', async () => {
    // the failed build, and the same records saying every node succeeded and every test passed
    const failed = readFileSync(FAILED_JSONL, 'utf8').trimEnd().split('\n');
    const good = failed.map((l) => {
      const r = JSON.parse(
        l.replaceAll('NODE_OUTCOME_ERROR', 'NODE_OUTCOME_SUCCESS').replaceAll('TEST_OUTCOME_FAILED', 'TEST_OUTCOME_PASSED').replaceAll('"failing_rows":4', '"failing_rows":0'),
      ) as { status?: { code: number; message: string | null } };
      if (r.status?.code === 2) r.status = { code: 1, message: null };
      return JSON.stringify(r);
    });
    const results = (db: Db) => db.all('SELECT unique_id, node_outcome, skip_reason, test_outcome, failing_rows FROM node_results ORDER BY unique_id, span_id');
    const runs = (db: Db) => db.all('SELECT status_code, status_message, error, tests_failed, failed FROM runs');
    const alone = await openModel();
    await loadPaths(alone, [FAILED_JSONL]);
    const want = { results: await results(alone), runs: await runs(alone) };
    alone.close();
    for (const [name, lines] of [['good-then-failed.jsonl', [...good, ...failed]], ['failed-then-good.jsonl', [...failed, ...good]]] as const) {
      const db = await openModel();
      try {
        await loadPaths(db, [writeLines(dir, name, [...lines])]);
        expect({ results: await results(db), runs: await runs(db) }, name).toEqual(want);
      } finally {
        db.close();
      }
    }
    // one span: its status from one later ending, its node outcome from another
    const lines = readFileSync(CLEAN_JSONL, 'utf8').trimEnd().split('\n');
    const end = lines.find((l) => l.includes('"NODE_TYPE_MODEL"') && l.includes('NodeProcessed') && l.includes('"SpanEnd"'))!;
    const errorStatus = JSON.parse(end) as { status: unknown };
    errorStatus.status = { code: 2, message: 'it broke' };
    const errorOutcome = end.replace('NODE_OUTCOME_SUCCESS', 'NODE_OUTCOME_ERROR');
    const db = await openModel();
    try {
      await loadPaths(db, [writeLines(dir, 'two-later-endings.jsonl', [...lines, JSON.stringify(errorStatus), errorOutcome])]);
      const id = (JSON.parse(end) as { span_id: string }).span_id;
      expect(await db.one('SELECT status_code, status_message, node_outcome FROM spans WHERE span_id = $id', { id })).toEqual({
        status_code: 2,
        status_message: 'it broke',
        node_outcome: 'error',
      });
      expect(await db.scalar('SELECT count(*)::INT FROM spans WHERE span_id = $id', { id })).toBe(1);
    } finally {
      db.close();
    }
    // the gate says what it says of the same records in two files
    const bad = writeLines(dir, 'only-bad-end.jsonl', [errorOutcome.replace('"code":1', '"code":2')]);
    const inOne = writeLines(dir, 'twice-in-file.jsonl', [...lines, errorOutcome.replace('"code":1', '"code":2')]);
    expect(runCli(['gate', CLEAN_JSONL, bad]).code).toBe(1);
    expect(runCli(['gate', inOne]).code).toBe(1);
  });

  it('a run spread over several files (a followed file in parts) still merges', async () => {
    const inv = span({ id: '00000000000000b1', name: 'dbt invocation (x)', eventType: FUSION_ET('invocation.Invocation'), start: 0, end: 10 });
    const db = await openModel();
    try {
      const partA = writeLines(dir, 'part-a.jsonl', [inv[0]!]);
      const partB = writeLines(dir, 'part-b.jsonl', [inv[1]!]);
      const a = await loadPaths(db, [partA]);
      const b = await loadPaths(db, [partB]);
      expect([a.alreadyPresent, b.alreadyPresent]).toEqual([0, 0]);
      expect(await db.one('SELECT ended, spans::INT AS spans FROM runs')).toEqual({ ended: true, spans: 1 });
      expect(await db.scalar('SELECT count(*)::INT FROM records')).toBe(2);
      // the file that holds only the run's SpanStart holds part of it too
      const files = await db.scalar<string>('SELECT files FROM runs');
      expect(files.split(', ').sort()).toEqual([partA, partB].sort());
    } finally {
      db.close();
    }
  });

  it('a run\'s files are every file that holds a record of it, in one load or in several', async () => {
    const lines = readFileSync(CLEAN_JSONL, 'utf8').trimEnd().split('\n');
    const starts = writeLines(dir, 'starts-only.jsonl', lines.filter((l) => l.includes('"SpanStart"')));
    const rest = writeLines(dir, 'no-starts.jsonl', lines.filter((l) => !l.includes('"SpanStart"')));
    for (const loads of [[[starts, rest]], [[starts], [rest]], [[rest], [starts]]]) {
      const db = await openModel();
      try {
        for (const paths of loads) await loadPaths(db, paths);
        const files = await db.scalar<string>('SELECT files FROM runs');
        expect(files.split(', ').sort(), JSON.stringify(loads)).toEqual([rest, starts].sort());
      } finally {
        db.close();
      }
    }
  });
});
