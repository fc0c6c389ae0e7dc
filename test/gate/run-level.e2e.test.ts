/**
 * The gate judges the run itself: a run whose invocation never ended, that has no invocation, or whose
 * invocation ended with status ERROR fails the gate even when no node result does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { FUSION, ROOT, sample, samplesNote } from '../helpers/samples.js';
import { parseXml } from './xml.js';

const dir = tempDir('runlens-gate-');
const CLEAN = path.join(ROOT, 'samples/clean-build.jsonl');
const FAILED = sample(FUSION, 'forwarder-otel_failed-preview120.jsonl');
const note = samplesNote(FUSION);

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');

/** The run as a crash leaves it: the first 60 records of the bundled clean build. */
function partialRun(): string {
  return writeLines(dir, 'partial.jsonl', lines(CLEAN).slice(0, 60));
}

describe('a run that never ended is incomplete', () => {
  it('runs says ended=false; the gate fails with incomplete and says why', () => {
    const partial = partialRun();
    const runs = JSON.parse(runCli(['runs', partial, '--format', 'json']).stdout) as { ended: boolean }[];
    expect(runs.map((r) => r.ended)).toEqual([false]);
    const g = runCli(['gate', partial]);
    expect(g.code).toBe(1);
    expect(g.stdout).toMatch(/gate FAILED: 1 incomplete in 1 of 1 run/);
    expect(g.stdout).toMatch(/run 019cadc69a807eb39e6814e375853cfa \(build\): incomplete: the invocation never ended/);
  });

  it('a file with the Process span only has no invocation: incomplete', () => {
    const proc = lines(CLEAN).filter((l) => /"span_name":"dbt process/.test(l) && /"record_type":"Span(Start|End)"/.test(l));
    expect(proc).toHaveLength(2);
    const g = runCli(['gate', writeLines(dir, 'process-only.jsonl', proc)]);
    expect(g.code).toBe(1);
    expect(g.stdout).toMatch(/incomplete: the run has no invocation span/);
  });

  it('the reason counts the node results that ended apart from those still running', () => {
    const results = (file: string) => JSON.parse(runCli(['query', '--sql', 'SELECT count(*) FILTER (WHERE ended)::INT AS e, count(*) FILTER (WHERE NOT ended)::INT AS o FROM node_results', file, '--format', 'json']).stdout)[0] as { e: number; o: number };
    const none = writeLines(dir, 'first-200.jsonl', lines(CLEAN).slice(0, 200));
    expect(results(none)).toEqual({ e: 0, o: 48 });
    expect(runCli(['gate', none]).stdout).toContain('; 48 node results were recorded, none of them ended');
    const some = writeLines(dir, 'first-400.jsonl', lines(CLEAN).slice(0, 400));
    const { e, o } = results(some);
    expect(e).toBeGreaterThan(0);
    expect(o).toBeGreaterThan(0);
    expect(runCli(['gate', some]).stdout).toContain(`; ${e + o} node results were recorded, ${o} of them not ended`);
  });

  it('--fail-on without incomplete lets such a run pass', () => {
    expect(runCli(['gate', partialRun(), '--fail-on', 'test-failed,error,run-error']).code).toBe(0);
  });
});

describe.skipIf(note.missing)(note.title('an invocation that ended with status ERROR is a run-error'), () => {
  /** Only the Process and Invocation spans of the failed real run: a parse or compile failure looks like this. */
  const onlyRunSpans = () =>
    writeLines(dir, 'run-spans-only.jsonl', lines(FAILED).filter((l) => {
      const r = JSON.parse(l) as { record_type: string; span_name: string };
      return r.record_type.startsWith('Span') && /^dbt (process|invocation)/.test(r.span_name);
    }));

  it('fails with run-error, names the status message, and counts no node result', () => {
    const g = runCli(['gate', onlyRunSpans()]);
    expect(g.code).toBe(1);
    expect(g.stdout).toContain('gate FAILED: 1 run-error in 1 of 1 run (fail-on test-failed,error,run-error,incomplete)');
    expect(g.stdout).toContain('run 019c97cafe1c76e2abb150e9427e666a (build): run-error: the invocation ended with status ERROR: Executed with errors');
    expect(g.stdout).toContain('no node result was recorded');
    expect(runCli(['gate', onlyRunSpans(), '--fail-on', 'error,test-failed']).code).toBe(0);
  });

  it('each reporter says it at run level', () => {
    const file = onlyRunSpans();
    const js = JSON.parse(runCli(['gate', file, '--reporter', 'json']).stdout);
    expect(js.passed).toBe(false);
    expect(js.runs).toEqual([expect.objectContaining({
      trace_id: '019c97cafe1c76e2abb150e9427e666a', passed: false, rule: 'run-error',
      reason: 'the invocation ended with status ERROR: Executed with errors; no node result was recorded',
    })]);
    const gh = runCli(['gate', file, '--reporter', 'github']).stdout.split('\n');
    expect(gh[0]).toBe('::error title=run 019c97cafe1c76e2abb150e9427e666a (build) run-error::run-error: the invocation ended with status ERROR: Executed with errors; no node result was recorded');
    const junit = parseXml(runCli(['gate', file, '--reporter', 'junit']).stdout);
    expect(junit.attrs).toMatchObject({ tests: '1', failures: '0', errors: '1' });
    const suite = junit.children[0]!;
    const runCase = suite.children.find((c) => c.name === 'testcase' && c.attrs.classname === 'run')!;
    expect(runCase.attrs.name).toBe('run 019c97cafe1c76e2abb150e9427e666a (build)');
    expect(runCase.children[0]).toMatchObject({ name: 'error', attrs: { type: 'run-error' } });
    const md = runCli(['gate', file, '--reporter', 'markdown']).stdout;
    expect(md.split('\n')).toContain('| `019c97cafe1c76e2abb150e9427e666a` build | — |  | run-error | the invocation ended with status ERROR: Executed with errors; no node result was recorded |');
  });

  it('the whole failed run fails on its nodes and on its invocation', () => {
    const g = runCli(['gate', FAILED, '--reporter', 'json']);
    const js = JSON.parse(g.stdout);
    expect(js.runs[0].rule).toBe('run-error');
    expect(js.offenders.map((o: { rule: string }) => o.rule).sort()).toEqual(['error', 'test-failed']);
  });
});

describe('a clean run passes the default gate', () => {
  it('exit 0, and the default fail-on names the run-level rules', () => {
    const g = runCli(['gate', CLEAN]);
    expect(g.code).toBe(0);
    expect(g.stdout).toContain('fail-on test-failed,error,run-error,incomplete');
  });
});

describe.skipIf(note.missing)(note.title("a run seen only through its log records"), () => {
  it("a file holding only a run's log records (its spans not written yet) is a run, incomplete", () => {
    const logsOnly = writeLines(dir, 'failed-logs-only.jsonl', lines(sample(FUSION, 'forwarder-otel-preview120.jsonl')).filter((l) => /"record_type":"LogRecord"/.test(l)));
    const runs = JSON.parse(runCli(['runs', logsOnly, '--format', 'json']).stdout) as { trace_id: string; ended: boolean; spans: number }[];
    expect(runs).toMatchObject([{ trace_id: '019c97cafe1c76e2abb150e9427e666a', ended: false, spans: 0 }]);
    const g = runCli(['gate', CLEAN, logsOnly]);
    expect(g.code).toBe(1);
    expect(g.stdout).toMatch(/gate FAILED: 1 incomplete in 1 of 2 runs/);
    expect(g.stdout).toMatch(/run 019c97cafe1c76e2abb150e9427e666a: incomplete: the run has no invocation span/);
  });
});

describe('a node the producer wrote without a unique_id is still judged', () => {
  /**
   * The bundled clean build with one model's spans written without unique_id (proto3 omits an empty
   * string, and validate accepts it) and its NodeProcessed ending in error.
   */
  function namelessError(o: { processedOnly?: boolean } = {}): string {
    const target = 'model.acme.stg_stores';
    const out = lines(CLEAN).map((l) => {
      const r = JSON.parse(l) as { record_type: string; span_name: string; event_type?: string; status?: unknown; attributes?: Record<string, unknown> };
      if (r.attributes?.unique_id !== target) return l;
      const processed = r.event_type?.endsWith('NodeProcessed') ?? false;
      if (processed || !o.processedOnly) {
        delete r.attributes.unique_id;
        r.span_name = r.span_name.replace(` (${target})`, '');
      }
      if (r.record_type === 'SpanEnd' && processed) {
        r.attributes.node_outcome = 'NODE_OUTCOME_ERROR';
        r.status = { message: 'error', code: 2 };
      }
      return JSON.stringify(r);
    });
    return writeLines(dir, o.processedOnly ? 'nameless-processed.jsonl' : 'nameless-error.jsonl', out);
  }

  it('a NodeProcessed without one takes the id of the evaluations that link to it: the node is one result, named', () => {
    const file = namelessError({ processedOnly: true });
    const clean = JSON.parse(runCli(['runs', CLEAN, '--format', 'json']).stdout) as { nodes: number; success: number }[];
    const runs = JSON.parse(runCli(['runs', file, '--format', 'json']).stdout) as { nodes: number; success: number; error: number }[];
    expect(runs).toEqual([expect.objectContaining({ nodes: clean[0]!.nodes, success: clean[0]!.success - 1, error: 1 })]);
    const g = runCli(['gate', file, '--fail-on', 'error', '--reporter', 'json']);
    expect(g.code, g.stderr).toBe(1);
    const verdict = JSON.parse(g.stdout) as { offenders: { unique_id: string | null; rule: string }[] };
    expect(verdict.offenders).toEqual([expect.objectContaining({ unique_id: 'model.acme.stg_stores', rule: 'error' })]);
  });

  it('counts it in runs and fails the gate on its error', () => {
    const file = namelessError();
    expect(runCli(['validate', file]).code).toBe(0);
    const clean = JSON.parse(runCli(['runs', CLEAN, '--format', 'json']).stdout) as { nodes: number }[];
    const runs = JSON.parse(runCli(['runs', file, '--format', 'json']).stdout) as { nodes: number; error: number; failed: boolean }[];
    expect(runs).toEqual([expect.objectContaining({ nodes: clean[0]!.nodes, error: 1 })]);
    const g = runCli(['gate', file, '--fail-on', 'error', '--reporter', 'json']);
    expect(g.code, g.stderr).toBe(1);
    const verdict = JSON.parse(g.stdout) as { offenders: { unique_id: string | null; resource_type: string; relative_path: string; rule: string }[] };
    expect(verdict.offenders).toEqual([
      expect.objectContaining({ unique_id: null, resource_type: 'model', relative_path: 'models/staging/stg_stores.sql', rule: 'error' }),
    ]);
  });

  it('every reporter names it by its type and name', () => {
    const file = namelessError();
    for (const reporter of ['text', 'github', 'junit', 'markdown']) {
      const g = runCli(['gate', file, '--fail-on', 'error', '--reporter', reporter]);
      expect(g.code, `${reporter}: ${g.stderr}`).toBe(1);
      expect(g.stdout, reporter).toContain('model stg_stores (no unique_id)');
      expect(g.stdout, reporter).not.toMatch(/\bnull\b/);
    }
  });
});
