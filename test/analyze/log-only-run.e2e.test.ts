/** A run of log records only (no spans) is a run: --trace finds it, and what needs spans says it has none. */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { FUSION, ROOT, sample, samplesNote } from '../helpers/samples.js';

const note = samplesNote(FUSION);
const TRACE = '019c97cafe1c76e2abb150e9427e666a';
const CLEAN = path.join(ROOT, 'samples/clean-build.jsonl');
const dir = tempDir('runlens-log-only-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real preview.120 run's log records, without its spans. */
function logsOnly(): string {
  const lines = readFileSync(sample(FUSION, 'forwarder-otel-preview120.jsonl'), 'utf8').split('\n').filter(Boolean);
  return writeLines(dir, 'logs-only.jsonl', lines.filter((l) => {
    const r = JSON.parse(l) as { record_type: string; trace_id: string };
    return r.record_type === 'LogRecord' && r.trace_id === TRACE;
  }));
}

describe.skipIf(note.missing)(note.title('a run of log records only'), () => {
  const file = note.missing ? '' : logsOnly();

  it('is found by --trace where a run is what the command reads: gate, report, query', () => {
    const g = runCli(['gate', file, '--trace', TRACE.slice(0, 8)]);
    expect(g.stderr).toBe('');
    expect(g.code).toBe(1);
    expect(g.stdout).toContain(`run ${TRACE}: incomplete`);
    const r = runCli(['report', file, '--trace', TRACE.slice(0, 8), '-o', path.join(dir, 'r.html')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`run ${TRACE}`);
    const q = runCli(['query', 'errors', file, '--param', `trace=${TRACE.slice(0, 8)}`]);
    expect(q.code, q.stderr).toBe(0);
  });

  it.each([['tree'], ['critical-path']])('%s --trace it: exit 2, the run has no spans', (cmd) => {
    const r = runCli([cmd, file, '--trace', TRACE.slice(0, 10)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`run ${TRACE} has no spans (log records only)`);
    expect(r.stdout).toBe('');
  });

  it.each([['tree'], ['critical-path']])('%s of an input of such runs only: exit 2 saying what it holds', (cmd) => {
    const r = runCli([cmd, file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no spans in the input: its run ${TRACE} has log records only`);
  });

  it('tree beside a run with spans: that run drawn, the other said on stderr', () => {
    const r = runCli(['tree', file, CLEAN]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('dbt invocation');
    expect(r.stderr).toContain(`run ${TRACE} has log records only: no spans to show`);
  });

  it('a prefix that both runs share is ambiguous', () => {
    const g = runCli(['gate', file, CLEAN, '--trace', '019c']);
    expect(g.code).toBe(2);
    expect(g.stderr).toContain('trace prefix 019c is ambiguous');
  });
});
