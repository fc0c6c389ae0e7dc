/** run-diff's choice of runs: base defaults to the run before head, and a run is never compared with itself. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/produce/generate/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'eight.jsonl');
/** trace ids, newest first */
let ids: string[];

beforeAll(async () => {
  await generate({ output: file, nodes: 80, runs: 8, seed: 11, failRate: 0.15 });
  ids = (JSON.parse(runCli(['runs', file, '--format', 'json']).stdout) as { trace_id: string }[]).map((r) => r.trace_id);
});

/** the pair of runs run-diff compared (threshold 0: every node whose duration moved is a row) */
function pair(...params: string[]): { code: number; stderr: string; base?: string; head?: string } {
  const r = runCli(['query', 'run-diff', file, '--param', 'threshold=0', ...params.flatMap((p) => ['--param', p]), '--format', 'json']);
  if (r.code !== 0) return { code: r.code, stderr: r.stderr };
  const rows = JSON.parse(r.stdout) as { base_trace: string; head_trace: string }[];
  expect(rows.length).toBeGreaterThan(0);
  expect(new Set(rows.map((x) => `${x.base_trace} ${x.head_trace}`)).size).toBe(1);
  return { code: 0, stderr: r.stderr, base: rows[0]!.base_trace, head: rows[0]!.head_trace };
}

describe('run-diff: which runs it compares', () => {
  it('with no run named: the run before the newest, and the newest', () => {
    expect(pair()).toMatchObject({ code: 0, base: ids[1], head: ids[0] });
  });

  it('with head only: the run before head, whichever head is', () => {
    expect(pair(`head=${ids[1]!.slice(0, 12)}`)).toMatchObject({ code: 0, base: ids[2], head: ids[1] });
    expect(pair(`head=${ids[5]}`)).toMatchObject({ code: 0, base: ids[6], head: ids[5] });
  });

  it('with head the earliest run: exit 2, nothing before it', () => {
    const r = pair(`head=${ids[7]}`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`head ${ids[7]} is the earliest run`);
  });

  it('with base only: the newest run as head; base the newest is exit 2', () => {
    expect(pair(`base=${ids[4]}`)).toMatchObject({ code: 0, base: ids[4], head: ids[0] });
    const r = pair(`base=${ids[0]!.slice(0, 12)}`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`base ${ids[0]} is the newest run`);
  });

  it('base and head the same run is exit 2 saying so, however each is written', () => {
    const r = pair(`base=${ids[3]!.slice(0, 12)}`, `head=${ids[3]}`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`base and head are the same run ${ids[3]}`);
  });

  it('both named: compared as given, a later base included', () => {
    expect(pair(`base=${ids[6]}`, `head=${ids[2]}`)).toMatchObject({ code: 0, base: ids[6], head: ids[2] });
    expect(pair(`base=${ids[1]}`, `head=${ids[5]}`)).toMatchObject({ code: 0, base: ids[1], head: ids[5] });
  });
});
