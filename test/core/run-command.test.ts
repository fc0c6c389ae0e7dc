/** A run's command, where its invocation does not record eval_args.command, comes from its raw command line. */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPaths, openModel } from '../../src/store/load.js';
import { commandOf } from '../../src/telemetry/command-line.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The bundled clean build with its invocation's eval_args.command removed and raw_command replaced. */
function withRawCommand(raw: string): string {
  const records = readFileSync(path.join(ROOT, 'samples/clean-build.jsonl'), 'utf8').trimEnd().split('\n').map((l) => {
    const r = JSON.parse(l) as { attributes?: { eval_args?: Record<string, unknown>; raw_command?: string } };
    if (r.attributes?.eval_args) {
      delete r.attributes.eval_args.command;
      r.attributes.raw_command = raw;
    }
    return r;
  });
  return writeLines(dir, `raw-${raw.replace(/\W+/g, '_')}.jsonl`, records);
}

/** Command lines and their sub-command: options before it, and the values they take, are passed over. */
const LINES: [string, string | null][] = [
  ['dbt build --select x', 'build'],
  ['dbt --debug build', 'build'],
  ['/usr/local/bin/dbt --log-format json --no-use-colors test -s m', 'test'],
  ['dbt docs generate', 'generate'],
  ['dbt --debug', null],
  ['dbt', null],
  ['dbt --log-level debug build', 'build'],
  ['dbt --target test build', 'build'],
  ['dbt -t test run --select x', 'run'],
  ['dbt --target=test build', 'build'],
  ['dbt --log-level=debug --target test test', 'test'],
  ["dbt --profiles-dir ./profiles --project-dir . --vars '{key: value, n: 2}' seed", 'seed'],
  ['dbt --threads 4 --log-format json source freshness', 'freshness'],
  ['dbt --log-path logs --target-path target --profile shop compile', 'compile'],
  ['dbt --log-level-file trace --otel-file-name otel.jsonl --invocation-id 7 run-operation grant', 'run-operation'],
  ['dbt --log-level debug', null],
  ['dbt --target prod', null],
];

describe('commandOf: the sub-command of a command line', () => {
  it.each(LINES)('%s -> %s', (raw, want) => {
    expect(commandOf(raw)).toBe(want);
  });
});

describe('the command of a run without eval_args.command', () => {
  it.each(LINES)('%s -> %s', async (raw, want) => {
    const db = await openModel();
    try {
      await loadPaths(db, [withRawCommand(raw)]);
      expect(await db.scalar('SELECT command FROM runs')).toBe(want);
    } finally {
      db.close();
    }
  });
});

describe('the report of a run without a command', () => {
  it('shows no history: the history queries compare runs of one command', async () => {
    const { buildReportData } = await import('../../src/analyze/report/data.js');
    // two runs that record no command, beside a build run
    const records = readFileSync(path.join(ROOT, 'samples/two-runs.jsonl'), 'utf8').trimEnd().split('\n').map((l) => {
      const r = JSON.parse(l) as { attributes?: { eval_args?: Record<string, unknown>; raw_command?: string } };
      if (r.attributes?.eval_args) {
        delete r.attributes.eval_args.command;
        r.attributes.raw_command = 'dbt';
      }
      return r;
    });
    const db = await openModel();
    try {
      await loadPaths(db, [writeLines(dir, 'no-command-runs.jsonl', records), path.join(ROOT, 'samples/failed-build.jsonl')]);
      const runs = await db.all<{ trace_id: string; command: string | null }>('SELECT trace_id, command FROM runs ORDER BY start_ns');
      expect(runs.map((r) => r.command).sort()).toEqual(['build', null, null]);
      for (const r of runs.filter((x) => x.command === null)) expect((await buildReportData(db, { trace: r.trace_id })).history, r.trace_id).toBeNull();
    } finally {
      db.close();
    }
  });
});
