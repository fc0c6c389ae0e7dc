/**
 * Runs that are valid telemetry but shaped unlike the samples (made by editing the producer's own
 * runs): the gate judges each by what it holds, whatever the order of its lines or its clocks.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

type Rec = Record<string, any>;
const dir = tempDir();
const read = (f: string): Rec[] => readFileSync(path.join(dir, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const write = (f: string, rs: Rec[]) => {
  writeFileSync(path.join(dir, f), rs.map((r) => JSON.stringify(r) + '\n').join(''));
  return path.join(dir, f);
};
const gate = (f: string, ...more: string[]) => runCli(['gate', f, ...more], { cwd: dir });
const isEvent = (r: Rec, suffix: string) => String(r.event_type).endsWith(suffix);

expect(runCli(['generate', '-o', 'clean.jsonl', '--nodes', '20', '--seed', '5', '--fail-rate', '0'], { cwd: dir }).code).toBe(0);
expect(runCli(['generate', '-o', 'failing.jsonl', '--nodes', '40', '--seed', '7', '--fail-rate', '0.15'], { cwd: dir }).code).toBe(0);
const clean = read('clean.jsonl');
const lastEnd = Math.max(...clean.map((r) => Number(r.end_time_unix_nano ?? 0)));

/** The clean run with a second Process and Invocation in the same trace (a fixed --invocation-id), after it. */
function secondInvocation(status: { code: number; message: string } | null): Rec[] {
  const again = structuredClone(clean.filter((r) => r.record_type !== 'LogRecord' && (isEvent(r, 'Invocation') || isEvent(r, 'Process'))));
  for (const r of again) {
    r.span_id = 'f' + r.span_id.slice(1);
    r.parent_span_id = null;
    r.start_time_unix_nano = String(lastEnd + 1e9);
    if (r.record_type === 'SpanEnd') {
      r.end_time_unix_nano = String(lastEnd + 2e9);
      if (isEvent(r, 'Invocation') && status) r.status = status;
    }
  }
  return [...clean, ...again.filter((r) => status || !(r.record_type === 'SpanEnd' && isEvent(r, 'Invocation')))];
}

describe('a trace with two invocations (the same invocation id given to two commands)', () => {
  it('fails run-error when the later one ended with status ERROR', () => {
    expect(gate(write('clean.jsonl', clean)).code).toBe(0);
    const r = gate(write('err2.jsonl', secondInvocation({ code: 2, message: 'Executed with errors' })));
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toMatch(/run-error/);
    expect(r.stdout).toMatch(/Executed with errors/);
    expect(JSON.parse(runCli(['runs', 'err2.jsonl', '--format', 'json'], { cwd: dir }).stdout)[0].failed).toBe(true);
  });

  it('fails incomplete when the later one never ended, and says which', () => {
    const r = gate(write('open2.jsonl', secondInvocation(null)));
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toMatch(/incomplete/);
    expect(r.stdout).toMatch(/1 of the run's 2 invocations never ended/);
    expect(JSON.parse(runCli(['runs', 'open2.jsonl', '--format', 'json'], { cwd: dir }).stdout)[0].ended).toBe(false);
  });
});

describe('node results', () => {
  it('a retry whose two NodeProcessed spans end at the same time: the error decides, whatever the line order', () => {
    const end = clean.find((r) => r.record_type === 'SpanEnd' && isEvent(r, 'NodeProcessed') && r.attributes.node_type === 'NODE_TYPE_MODEL')!;
    const failed = structuredClone(end);
    failed.span_id = 'abababababababab';
    failed.status = { code: 2, message: 'error' };
    failed.attributes.node_outcome = 'NODE_OUTCOME_ERROR';
    expect(gate(write('tie1.jsonl', [...clean, failed])).code).toBe(1);
    expect(gate(write('tie2.jsonl', [failed, ...clean])).code).toBe(1);
  });

  it('a node that errored in one invocation of the trace and succeeded in a later one is an error of the run', () => {
    // the first invocation's NodeProcessed of a model ends in error; the second invocation runs it again with success
    const both = secondInvocation({ code: 0, message: '' });
    const first = both.find((r) => r.record_type === 'SpanEnd' && isEvent(r, 'NodeProcessed') && r.attributes.node_type === 'NODE_TYPE_MODEL')!;
    const uid = first.attributes.unique_id as string;
    const again = structuredClone(first);
    first.status = { code: 2, message: 'error' };
    first.attributes.node_outcome = 'NODE_OUTCOME_ERROR';
    const secondInv = both.find((r) => r.record_type === 'SpanEnd' && isEvent(r, 'Invocation') && r.span_id.startsWith('f'))!;
    Object.assign(again, { span_id: 'abababababababab', parent_span_id: secondInv.span_id, start_time_unix_nano: String(lastEnd + 1.2e9), end_time_unix_nano: String(lastEnd + 1.5e9) });
    const f = write('retried.jsonl', [...both, again]);
    const r = gate(f, '--fail-on', 'error');
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toContain(uid);
    const q = runCli(['query', 'errors', f, '--format', 'json'], { cwd: dir });
    expect(JSON.parse(q.stdout).map((e: Rec) => e.unique_id)).toContain(uid);
  });

  it('evaluations only (no NodeProcessed): a failed test is its RUN evaluation, even when its clock stepped back', () => {
    const evals = read('failing.jsonl').filter((r) => !isEvent(r, 'NodeProcessed'));
    const failedTest = evals.find((r) => r.attributes?.node_test_detail?.test_outcome === 'TEST_OUTCOME_FAILED')!.attributes.unique_id;
    expect(gate(write('evals.jsonl', evals), '--fail-on', 'test-failed').code).toBe(1);
    for (const r of evals)
      if (isEvent(r, 'NodeEvaluated') && r.attributes?.unique_id === failedTest && r.attributes.phase === 'EXECUTION_PHASE_RUN')
        for (const k of ['start_time_unix_nano', 'end_time_unix_nano']) if (r[k]) r[k] = String(BigInt(r[k]) - 10_000_000_000n);
    const r = gate(write('evals-back.jsonl', evals), '--fail-on', 'test-failed');
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toContain(failedTest);
  });

  it('a NodeProcessed that ended with status ERROR and no node_outcome is an error', () => {
    const rs = structuredClone(clean);
    const x = rs.find((r) => r.record_type === 'SpanEnd' && isEvent(r, 'NodeProcessed') && r.attributes.node_type === 'NODE_TYPE_TEST')!;
    delete x.attributes.node_outcome;
    delete x.attributes.node_test_detail;
    x.status = { code: 2, message: 'error' };
    const r = gate(write('noout.jsonl', rs));
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toContain(x.attributes.unique_id);
  });

  it('a node that never ended in a run whose invocation ended is incomplete, never passed', () => {
    const node = clean.find((r) => r.record_type === 'SpanEnd' && isEvent(r, 'NodeProcessed') && r.attributes.node_type === 'NODE_TYPE_MODEL')!.attributes.unique_id;
    const r = gate(write('running.jsonl', clean.filter((x) => !(x.record_type === 'SpanEnd' && String(x.span_name).includes(node)))));
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toMatch(/incomplete/);
    expect(r.stdout).toMatch(/never ended/);
  });
});
