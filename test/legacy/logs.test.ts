/** Hand-written --log-format json streams (legacy.md §2): debug and info streams, skips, interrupts. */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { describeManifestUse } from '../../src/legacy/manifest-finder.js';
import { migrateFiles } from '../../src/legacy/migrate.js';
import { manifest, migrateAndLoad, triple, writeJson } from './helpers.js';

const dbs: Db[] = [];
afterAll(() => dbs.forEach((d) => d.close()));

const INV = '5f0c2a8e-3b1d-4c6e-9a7f-1e2d3c4b5a69';
let sec = 0;
const ts = () => new Date(Date.UTC(2026, 1, 3, 8, 0, 0) + sec++ * 1000).toISOString().replace('Z', '123Z');

export interface NodeSpec {
  id: string;
  rt?: string;
  materialized?: string;
  status?: string;
}

function ni(n: NodeSpec) {
  return {
    materialized: n.materialized ?? (n.id.startsWith('test') ? 'test' : 'view'), meta: {}, node_finished_at: '', node_name: n.id.split('.')[2], node_path: `${n.id.split('.')[2]}.sql`,
    node_relation: { alias: n.id.split('.')[2], database: 'db', relation_name: '', schema: 's' }, node_started_at: '', node_status: n.status ?? 'started',
    resource_type: n.rt ?? n.id.split('.')[0], unique_id: n.id,
  };
}

export function ev(name: string, data: Record<string, unknown> = {}, o: { level?: string; msg?: string; inv?: string } = {}) {
  return { data, info: { category: '', code: 'X000', extra: {}, invocation_id: o.inv ?? INV, level: o.level ?? 'debug', msg: o.msg ?? name, name, pid: 1, thread: 'Thread-1 (worker)', ts: ts() } };
}

const timing = () => [
  { completed_at: ts(), name: 'compile', started_at: ts() },
  { completed_at: ts(), name: 'execute', started_at: ts() },
];

/** A full debug-stream lifecycle of one node. */
export function nodeRun(n: NodeSpec, status: string, o: { message?: string | null; failures?: number; inv?: string } = {}) {
  const x = { node_info: ni(n) };
  const done = { node_info: ni({ ...n, status }) };
  return [
    ev('NodeStart', x, o),
    ev('LogStartLine', { ...x, description: n.id, index: 1, total: 1 }, { level: 'info', msg: `START ${n.id}`, inv: o.inv }),
    ev('NodeCompiling', x, o),
    ev('NodeExecuting', x, o),
    ev(n.id.startsWith('test') ? 'LogTestResult' : 'LogModelResult', { ...done, status, num_failures: o.failures ?? 0 }, { level: status === 'error' || status === 'fail' ? 'error' : 'info', msg: `${status.toUpperCase()} ${n.id}`, inv: o.inv }),
    ev('NodeFinished', { ...done, run_result: { status, message: o.message ?? null, num_failures: o.failures ?? 0, timing_info: timing(), thread: 'Thread-1', execution_time: 0.5, adapter_response: {} } }, o),
  ];
}

export function skipRun(n: NodeSpec, o: { message?: string | null; inv?: string } = {}) {
  return [
    ev('NodeStart', { node_info: ni(n) }, o),
    ev('SkippingDetails', { node_info: ni({ ...n, status: 'skipped' }), resource_type: 'model', node_name: n.id, index: 2, total: 3 }, { level: 'info', msg: `SKIP ${n.id}`, inv: o.inv }),
    ev('NodeFinished', { node_info: ni({ ...n, status: 'skipped' }), run_result: { status: 'skipped', message: o.message ?? null, timing_info: [], num_failures: 0, execution_time: 0, adapter_response: {} } }, o),
  ];
}

const head = (cmd: string, inv = INV) => [
  ev('MainReportVersion', { log_version: 3, version: '=1.10.4' }, { level: 'info', msg: 'Running with dbt=1.10.4', inv }),
  ev('MainReportArgs', { args: { invocation_command: `dbt ${cmd} --log-format json`, which: cmd } }, { inv }),
];
const tail = (inv = INV) => [ev('CommandCompleted', { completed_at: ts(), elapsed: 3, success: false }, { inv })];

async function migrateLines(lines: (object | string)[]) {
  const file = writeLines(tempDir('runlens-legacy-log-'), 'dbt.log', lines);
  const m = await migrateAndLoad([file]);
  dbs.push(m.db);
  return m;
}
const outcomes = (m: { nodes: Map<string, Parameters<typeof triple>[0]> }) => Object.fromEntries([...m.nodes].map(([id, r]) => [id, triple(r)]));

describe('--log-format json streams', () => {
  it('debug stream: warn, error, MarkSkippedChildren names the upstream of a skip, ephemeral is a no-op, render and run phases', async () => {
    const m = await migrateLines([
      ...head('build'),
      ...nodeRun({ id: 'model.p.eph', materialized: 'ephemeral' }, 'success').filter((l) => !['LogStartLine', 'LogModelResult', 'NodeExecuting'].includes(l.info.name)),
      ...nodeRun({ id: 'model.p.a' }, 'error', { message: 'Database Error in model a' }),
      ev('MarkSkippedChildren', { unique_id: 'model.p.a', status: 'error', run_result: {} }),
      ...nodeRun({ id: 'model.p.b' }, 'success'),
      ev('MarkSkippedChildren', { unique_id: 'model.p.b', status: 'success', run_result: {} }),
      ...nodeRun({ id: 'test.p.w.1' }, 'warn', { failures: 4 }),
      ...skipRun({ id: 'model.p.c' }),
      ...tail(),
    ]);
    expect(outcomes(m)).toEqual({
      'model.p.eph': 'skipped/noop/-', 'model.p.a': 'error/-/-', 'model.p.b': 'success/-/-', 'test.p.w.1': 'success/-/warned', 'model.p.c': 'skipped/upstream/-',
    });
    expect(m.nodes.get('model.p.c')!.upstream_unique_id).toBe('model.p.a');
    expect(m.nodes.get('test.p.w.1')!.failing_rows).toBe(4);
    expect(await m.db.all(`SELECT phase, count(DISTINCT span_id)::INT n FROM nodes WHERE kind = 'evaluated' GROUP BY ALL ORDER BY ALL`)).toEqual([
      { phase: 'render', n: 4 }, { phase: 'run', n: 5 },
    ]);
    // run_result.message becomes an ERROR LogMessage on the failed evaluation
    const errs = readFileSync(m.out, 'utf8').split('\n').filter((l) => l.includes('"severity_text":"ERROR"') && l.includes('"LogRecord"')).map((l) => JSON.parse(l));
    expect(errs.some((r) => r.body === 'Database Error in model a' && r.attributes.unique_id === 'model.p.a')).toBe(true);
    expect(await m.db.one(`SELECT command, engine_version FROM runs`)).toEqual({ command: 'build', engine_version: '1.10.4' });
  });

  it('info stream (stdout): LogStartLine and result lines give outcomes; SkippingDetails alone is a skip; log lines keep severity', async () => {
    const info = (name: string, n: NodeSpec, data: Record<string, unknown> = {}, level = 'info') => ev(name, { node_info: ni(n), ...data }, { level, msg: `${name} ${n.id}` });
    const m = await migrateLines([
      ev('MainReportVersion', { log_version: 3, version: '=1.9.1' }, { level: 'info' }),
      info('LogStartLine', { id: 'model.p.a' }),
      info('LogModelResult', { id: 'model.p.a', status: 'error' }, { status: 'error' }, 'error'),
      info('LogStartLine', { id: 'model.p.ok' }),
      info('LogModelResult', { id: 'model.p.ok', status: 'success' }, { status: 'CREATE VIEW' }),
      info('SkippingDetails', { id: 'model.p.b', status: 'skipped' }),
      info('LogStartLine', { id: 'test.p.t.1' }),
      info('LogTestResult', { id: 'test.p.t.1', status: 'fail' }, { status: 'fail', num_failures: 9 }, 'error'),
      info('LogStartLine', { id: 'saved_query.p.sq' }),
      info('LogNodeNoOpResult', { id: 'saved_query.p.sq', status: 'no-op' }, { status: 'no-op' }),
      info('LogStartLine', { id: 'model.p.r' }),
      info('LogModelResult', { id: 'model.p.r', status: 'reused' }, { status: 'reused' }),
      ev('RunResultError', { node_info: ni({ id: 'model.p.a', status: 'None' }), msg: '' }, { level: 'error', msg: '  Database Error in model a\n    syntax error' }),
      ev('StatsLine', { stats: {} }, { level: 'info', msg: 'Done.' }),
    ]);
    expect(outcomes(m)).toEqual({
      'model.p.a': 'error/-/-', 'model.p.ok': 'success/-/-', 'model.p.b': 'skipped/upstream/-', 'test.p.t.1': 'success/-/failed',
      'saved_query.p.sq': 'skipped/noop/-', 'model.p.r': 'skipped/cached/-',
    });
    // no manifest, but when b was skipped only a had failed: a is the only possible culprit
    expect(m.nodes.get('model.p.b')!.upstream_unique_id).toBe('model.p.a');
    expect(m.nodes.get('test.p.t.1')!.failing_rows).toBe(9);
    // result lines are progress, not the error: kept at INFO with the engine's level beside them
    const line = await m.db.one(`SELECT severity_text, json_extract_string(attributes, '$.original_severity_text') AS original FROM logs WHERE body = 'LogModelResult model.p.a'`);
    expect(line).toEqual({ severity_text: 'INFO', original: 'ERROR' });
    // the info stream's error text is the end-of-run recap, once and without its indentation
    expect(await m.db.scalar(`SELECT error_text FROM node_results WHERE unique_id = 'model.p.a'`)).toBe('Database Error in model a\n  syntax error');
    // stdout does not name its command: unknown, not a made-up command line
    expect(await m.db.one('SELECT command, raw_command FROM runs')).toEqual({ command: null, raw_command: null });
  });

  it('an interrupted run: the node in flight ends canceled, finished nodes keep their outcome, the run is marked', async () => {
    const started = nodeRun({ id: 'model.p.slow' }, 'success').slice(0, 4); // NodeStart .. NodeExecuting, never finished
    const m = await migrateLines([
      ...head('run'),
      ...nodeRun({ id: 'model.p.fast' }, 'success'),
      ...started,
      ev('LogCancelLine', { conn_name: 'model.p.slow' }, { level: 'error', msg: 'CANCEL query model.p.slow' }),
      ev('MainKeyboardInterrupt', {}, { level: 'info', msg: 'ctrl-c' }),
    ]);
    expect(outcomes(m)).toEqual({ 'model.p.fast': 'success/-/-', 'model.p.slow': 'canceled/-/-' });
    expect(await m.db.one('SELECT canceled::INT c, status_code, failed FROM runs')).toEqual({ c: 1, status_code: 2, failed: true });
    expect(m.report.files[0]!.kind === 'log' && m.report.files[0]!.invocations[0]!.interrupted).toBe(true);
  });

  it('fail-fast in the log, hooks in their phases, two invocations appended to one dbt.log become two traces', async () => {
    const INV2 = '77777777-1111-4222-8333-444444444444';
    const m = await migrateLines([
      ...head('build'),
      ...nodeRun({ id: 'operation.p.p-on-run-start-0', rt: 'operation' }, 'success'),
      ...nodeRun({ id: 'model.p.a' }, 'error'),
      ...skipRun({ id: 'model.p.z' }, { message: 'Skipping due to fail_fast' }),
      ...tail(),
      ...head('test', INV2),
      ...nodeRun({ id: 'test.p.t.2' }, 'pass', { inv: INV2 }),
      ...tail(INV2),
    ]);
    expect(outcomes(m)).toEqual({
      'operation.p.p-on-run-start-0': 'success/-/-', 'model.p.a': 'error/-/-', 'model.p.z': 'canceled/-/-', 'test.p.t.2': 'success/-/passed',
    });
    expect(await m.db.all('SELECT command FROM runs ORDER BY command')).toEqual([{ command: 'build' }, { command: 'test' }]);
    expect(await m.db.scalar(`SELECT phase FROM nodes WHERE unique_id LIKE 'operation.%' AND kind = 'evaluated'`)).toBe('on_run_start');
  });

  it('a log that stops between nodes, before the lines that end the command, is a run that never ended, not a passed one', async () => {
    const runOf = async (lines: object[]) => (await migrateLines(lines)).db.one('SELECT status_code, status_message, failed, ended FROM runs');
    // nothing is made up for the end that is missing: no ERROR record, no status
    const errorsOf = async (lines: object[]) => (await migrateLines(lines)).db.all(`SELECT body FROM logs WHERE severity_text = 'ERROR'`);
    // the debug stream (1.5+ ends with CommandCompleted)
    expect(await runOf([...head('build'), ...nodeRun({ id: 'model.p.a' }, 'success')])).toMatchObject({ status_code: null, ended: false });
    expect(await errorsOf([...head('build'), ...nodeRun({ id: 'model.p.a' }, 'success')])).toEqual([]);
    expect(await runOf([...head('build')])).toMatchObject({ ended: false });
    // stdout's info stream of a command that ends with the end-of-run summary, named or not
    const info = nodeRun({ id: 'model.p.a' }, 'success').filter((l) => l.info.level !== 'debug');
    expect(await runOf([head('build')[0]!, ...info])).toMatchObject({ ended: false });
    expect(await errorsOf([head('build')[0]!, ...info])).toEqual([]);
    // whole streams stay as they were
    expect(await runOf([head('build')[0]!, ...info, ev('StatsLine', { stats: {} }, { level: 'info', msg: 'Done.' })])).toMatchObject({ failed: false });
    const ok = [...head('build'), ...nodeRun({ id: 'model.p.a' }, 'success'), ev('CommandCompleted', { completed_at: ts(), elapsed: 3, success: true })];
    expect(await runOf(ok)).toMatchObject({ status_code: 1, failed: false });
    // streams that may end without those lines: stdout of compile, a debug stream before 1.5
    const compile = [ev('MainReportVersion', { log_version: 3, version: '=1.10.4' }, { level: 'info' }), ev('CompiledNode', {}, { level: 'info', msg: 'Compiled node' })];
    expect(await runOf(compile)).toMatchObject({ failed: false });
    const old = [ev('MainReportVersion', { log_version: 3, version: '=1.4.9' }, { level: 'info' }), ev('MainReportArgs', { args: { which: 'compile' } }), ...nodeRun({ id: 'model.p.a' }, 'success')];
    expect(await runOf(old)).toMatchObject({ failed: false });
  });

  it('a log read while its command still runs gives only records the complete log has: what had not ended stays open, nothing is made up', async () => {
    const node = (id: string, status: string) => {
      const [start, startLine, compiling, executing, result, finished] = nodeRun({ id }, status);
      const x = { node_info: ni({ id }) };
      const query = [ev('SQLQuery', { ...x, conn_name: id, sql: 'select 1' }), ev('SQLQueryStatus', { ...x, status: 'OK', elapsed: 0.1 })];
      return [start!, startLine!, compiling!, executing!, ...query, result!, finished!];
    };
    const lines = [...head('test'), ...node('test.p.t.1', 'pass'), ...node('test.p.t.2', 'fail'), ev('StatsLine', { stats: {} }, { level: 'info', msg: 'Done.' }), ...tail()];
    const translate = async (n: number) => {
      const dir = tempDir('runlens-legacy-prefix-');
      const out = `${dir}/out.jsonl`;
      await migrateFiles([writeLines(dir, 'dbt.log', lines.slice(0, n))], { out });
      return readFileSync(out, 'utf8').split('\n').filter(Boolean);
    };
    const whole = new Set(await translate(lines.length));
    // from the line that names the command (before it, a stream does not say that it is cut short)
    for (let n = 2; n < lines.length; n++) {
      const part = await translate(n);
      expect(part.filter((r) => !whole.has(r)), `the first ${n} lines`).toEqual([]);
      // the run never ended: no end of the invocation
      expect(part.filter((r) => /^\{"record_type":"SpanEnd".*"span_name":"dbt invocation/.test(r)), `the first ${n} lines`).toEqual([]);
    }
  });

  it('a run cut off and followed, a day later, by the next command in the same dbt.log stays open, its end its own last line (with or without invocation ids)', async () => {
    const INV2 = '88888888-1111-4222-8333-444444444444';
    for (const ids of [false, true]) {
      const inv = (id: string) => (ids ? id : '');
      const cut = [...head('build', inv(INV)), ...nodeRun({ id: 'model.p.a' }, 'success', { inv: inv(INV) })];
      const cutEnd = Date.parse(cut.at(-1)!.info.ts);
      sec += 86_400;
      const m = await migrateLines([...cut, ...head('test', inv(INV2)), ...nodeRun({ id: 'test.p.t.2' }, 'pass', { inv: inv(INV2) }), ...tail(inv(INV2))]);
      const runs = await m.db.all(`SELECT command FROM runs ORDER BY command`);
      expect(runs.map((r) => r.command), `ids: ${ids}`).toEqual(['build', 'test']);
      const build = await m.db.one(`SELECT end_ns, ended FROM runs WHERE command = 'build'`);
      expect([Number(BigInt(build!.end_ns as bigint) / 1_000_000n), build!.ended], `ids: ${ids}`).toEqual([cutEnd, false]);
    }
  });

  it('a status in any case is read by the status table; one runlens does not know is an error that names it', async () => {
    const m = await migrateLines([
      ...head('build'),
      ...nodeRun({ id: 'test.p.t.1' }, 'FAIL', { failures: 3 }),
      ...nodeRun({ id: 'model.p.a' }, 'Success'),
      ...nodeRun({ id: 'model.p.b' }, 'exploded'),
      ...tail(),
    ]);
    expect(outcomes(m)).toEqual({ 'test.p.t.1': 'success/-/failed', 'model.p.a': 'success/-/-', 'model.p.b': 'error/-/-' });
    expect(await m.db.scalar(`SELECT error_text FROM node_results WHERE unique_id = 'model.p.b'`)).toContain('the log gives the status "exploded", which runlens does not know');
  });

  it('a manifest of another project is used for no node: the skip\'s upstream is read as without one', async () => {
    const file = writeLines(tempDir('runlens-legacy-log-'), 'dbt.log', [...head('run'), ...nodeRun({ id: 'model.p.a' }, 'error'), ...skipRun({ id: 'model.p.c' }), ...tail()]);
    const other = writeJson('manifest.json', manifest({ 'model.other.x': [] }));
    const m = await migrateAndLoad([file], { manifest: other });
    dbs.push(m.db);
    expect(m.nodes.get('model.p.c')!.upstream_unique_id).toBe('model.p.a');
    const f = m.report.files[0]!;
    expect(f.kind === 'log' && describeManifestUse(f.manifest, undefined, f.invocations)).toMatch(/which has none of the run's 2 nodes .*: not used$/);
  });

  it('1.0-1.3 flat lines: a whole run reads as the 1.4+ format does (run status, engine version, failing rows, timings)', async () => {
    // Field names as dbt 1.0-1.3 wrote them (core/dbt/events/types.py and functions.py of those
    // versions): MainReportVersion.v (1.0-1.2), MainReportArgs.args as the str() of the Namespace,
    // run_result as RunResult.to_dict() (timing, failures, thread_id), test lines with failures.
    const flat = (code: string, data: Record<string, unknown>, level = 'debug', msg = code) => ({ code, data, invocation_id: INV, level, log_version: 2, msg, pid: 1, thread_name: 'Thread-1', ts: ts(), type: 'log_line' });
    const a = { id: 'model.p.a', materialized: 'table' };
    const t = { id: 'test.p.not_null_a_id.abc' };
    const window = () => { const c0 = ts(), c1 = ts(), e1 = ts(); return [{ completed_at: c1, name: 'compile', started_at: c0 }, { completed_at: e1, name: 'execute', started_at: c1 }]; };
    const summary = (errors: number) => [
      flat('Z030', { keyboard_interrupt: false, num_errors: errors, num_warnings: 0 }, 'info', errors ? `Completed with ${errors} error and 0 warnings:` : 'Completed successfully'),
      flat('Z023', { stats: { error: errors, pass: 1, skip: 0, total: 1 + errors, warn: 0 } }, 'info', 'Done.'),
    ];
    // stdout (info stream) of a clean `dbt run`: the end-of-run summary ends it
    const info = await migrateLines([
      flat('A001', { v: '=1.1.1' }, 'info', 'Running with dbt=1.1.1'),
      flat('Q033', { description: 'table model public.a', index: 1, node_info: ni(a), total: 1 }, 'info'),
      flat('Q012', { description: 'table model public.a', execution_time: 0.9, index: 1, node_info: ni({ ...a, status: 'success' }), status: 'SELECT 156', total: 1 }, 'info'),
      ...summary(0),
    ]);
    expect(outcomes(info)).toEqual({ 'model.p.a': 'success/-/-' });
    expect(await info.db.one('SELECT engine_version, status_code, failed FROM runs')).toEqual({ engine_version: '1.1.1', status_code: 1, failed: false });
    // logs/dbt.log (debug stream) of a `dbt run` whose test failed
    const debug = await migrateLines([
      flat('A001', { v: '=1.2.0' }, 'info'),
      flat('A002', { args: "Namespace(cls=<class 'dbt.task.run.RunTask'>, debug=False, which='run', write_json=True)" }),
      flat('Q023', { node_info: ni(a), unique_id: a.id }),
      flat('Q012', { description: 'table model public.a', execution_time: 0.9, index: 1, node_info: ni({ ...a, status: 'success' }), status: 'SELECT 156', total: 2 }, 'info'),
      flat('Q024', { node_info: ni({ ...a, status: 'success' }), unique_id: a.id, run_result: { adapter_response: { rows_affected: 156 }, execution_time: 0.9, failures: null, message: 'SELECT 156', status: 'success', thread_id: 'Thread-1', timing: window() } }),
      flat('Q023', { node_info: ni(t), unique_id: t.id }),
      flat('Q011', { execution_time: 0.5, failures: 5, index: 2, name: 'not_null_a_id', node_info: ni({ ...t, status: 'fail' }), num_models: 2 }, 'error'),
      flat('Q024', { node_info: ni({ ...t, status: 'fail' }), unique_id: t.id, run_result: { adapter_response: {}, execution_time: 0.5, failures: 5, message: 'Got 5 results, configured to fail if != 0', status: 'fail', thread_id: 'Thread-1', timing: window() } }),
      ...summary(1),
    ]);
    expect(outcomes(debug)).toEqual({ 'model.p.a': 'success/-/-', 'test.p.not_null_a_id.abc': 'success/-/failed' });
    expect(debug.nodes.get('test.p.not_null_a_id.abc')!.failing_rows).toBe(5);
    // the run ended (the summary is its last line); it failed by its test, as the gate says
    expect(await debug.db.one('SELECT command, engine_version, status_message FROM runs')).toEqual({ command: 'run', engine_version: '1.2.0', status_message: 'Executed with errors' });
    // the engine's compile and execute timing: RENDER and RUN evaluations
    expect(await debug.db.all(`SELECT phase FROM nodes WHERE kind = 'evaluated' AND unique_id = 'model.p.a' ORDER BY phase`)).toEqual([{ phase: 'render' }, { phase: 'run' }]);
    // 1.3's field names (MainReportVersion.version, RunResultMsg, num_failures) read the same
    const v13 = await migrateLines([
      flat('A001', { log_version: 2, version: '=1.3.4' }, 'info'),
      flat('Q023', { node_info: ni(t), unique_id: t.id }),
      flat('Q010', { execution_time: 0.5, index: 1, name: 'not_null_a_id', node_info: ni({ ...t, status: 'warn' }), num_failures: 12, num_models: 1 }, 'warn'),
      flat('Q024', { node_info: ni({ ...t, status: 'warn' }), unique_id: t.id, run_result: { adapter_response: {}, execution_time: 0.5, message: 'Got 12 results, configured to warn if != 0', num_failures: 12, status: 'warn', thread: 'Thread-1', timing_info: window() } }),
      ...summary(0),
    ]);
    expect(outcomes(v13)).toEqual({ 'test.p.not_null_a_id.abc': 'success/-/warned' });
    expect(v13.nodes.get('test.p.not_null_a_id.abc')!.failing_rows).toBe(12);
    expect(await v13.db.one('SELECT engine_version, status_code FROM runs')).toEqual({ engine_version: '1.3.4', status_code: 1 });
  });

  it('1.0-1.3 flat lines (no info.name) are read by that version\'s codes; non-JSON lines are counted, not fatal', async () => {
    const flat = (code: string, data: Record<string, unknown>, level = 'debug') => ({ code, data, invocation_id: INV, level, log_version: 2, msg: code, pid: 1, thread_name: 'Thread-1', ts: ts(), type: 'log_line' });
    const n = { id: 'model.p.old' };
    const m = await migrateLines([
      flat('A001', { v: '=1.2.0' }, 'info'),
      flat('Q023', { node_info: ni(n) }),
      flat('Q024', { node_info: ni({ ...n, status: 'success' }), run_result: { status: 'success', timing_info: [], message: 'OK' } }),
      'Traceback (most recent call last): not json',
    ]);
    expect(outcomes(m)).toEqual({ 'model.p.old': 'success/-/-' });
    expect(m.report.files[0]!.kind === 'log' && m.report.files[0]!.badLines).toBe(1);
  });

  it("a line whose time is missing or does not parse is refused naming its line and field (1.0-1.3: ts), not read as 1970", async () => {
    const flat = (code: string, data: Record<string, unknown>, at: unknown) => ({ code, data, invocation_id: INV, level: 'info', log_version: 2, msg: code, pid: 1, thread_name: 'MainThread', ts: at, type: 'log_line' });
    const n = { id: 'model.p.old' };
    for (const [at, why] of [['2022-01-05 10:00:00,123', 'ts: must be an ISO 8601 timestamp, not "2022-01-05 10:00:00,123"'], [null, 'ts: missing'], [undefined, 'ts: missing']] as const) {
      const file = writeLines(tempDir('runlens-legacy-log-'), 'dbt.log', [
        flat('A001', { v: '=1.2.0' }, ts()),
        flat('Q023', { node_info: ni(n) }, at),
        flat('Q024', { node_info: ni({ ...n, status: 'success' }), run_result: { status: 'success' } }, ts()),
      ]);
      await expect(migrateAndLoad([file])).rejects.toThrow(`${file}:2: ${why}`);
    }
  });
});
