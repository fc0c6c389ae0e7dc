/**
 * `--fail-on skipped` is about skips caused by a failure upstream; `skipped-any` is every skip (no-op,
 * cached, phase skipped or disabled, and upstream).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { FUSION, ROOT, sample, samplesNote } from '../helpers/samples.js';

const CLEAN = path.join(ROOT, 'samples/clean-build.jsonl');
const TWO_RUNS = path.join(ROOT, 'samples/two-runs.jsonl');
const note = samplesNote(FUSION);

interface Offender { unique_id: string; rule: string; skip_reason: string }
const offenders = (args: string[]) => {
  const r = runCli(['gate', ...args, '--reporter', 'json']);
  return { code: r.code, offenders: (JSON.parse(r.stdout) as { offenders: Offender[] }).offenders };
};

describe('skipped counts upstream skips only', () => {
  it('a clean build with no-op nodes passes --fail-on skipped and fails --fail-on skipped-any', () => {
    expect(offenders([CLEAN, '--fail-on', 'skipped'])).toEqual({ code: 0, offenders: [] });
    const any = offenders([CLEAN, '--fail-on', 'skipped-any']);
    expect(any.code).toBe(1);
    expect(any.offenders.map((o) => [o.rule, o.skip_reason])).toEqual([['skipped-any', 'noop'], ['skipped-any', 'noop'], ['skipped-any', 'noop']]);
  });

  it('a run with cached nodes passes --fail-on skipped', () => {
    expect(offenders([TWO_RUNS, '--trace', '019caf10', '--fail-on', 'skipped']).code).toBe(0);
    const any = offenders([TWO_RUNS, '--trace', '019caf10', '--fail-on', 'skipped-any']);
    expect(any.offenders.map((o) => o.skip_reason)).toEqual(['cached', 'cached', 'cached']);
  });

  it('skips after an upstream failure fail --fail-on skipped; with both rules each skip is named once, by the narrower', () => {
    const both = offenders([TWO_RUNS, '--fail-on', 'skipped,skipped-any']);
    expect(both.code).toBe(1);
    const byRule = (rule: string) => both.offenders.filter((o) => o.rule === rule).map((o) => o.skip_reason);
    expect(byRule('skipped')).toEqual(Array(15).fill('upstream'));
    expect(byRule('skipped-any')).toEqual(['cached', 'cached', 'cached']);
  });
});

describe.skipIf(note.missing)(note.title('skipped on the real sample'), () => {
  it('the four upstream skips of the failed real run', () => {
    const s = offenders([sample(FUSION, 'forwarder-otel-preview120.jsonl'), '--fail-on', 'skipped']);
    expect(s.code).toBe(1);
    expect(s.offenders).toHaveLength(4);
    expect(new Set(s.offenders.map((o) => o.skip_reason))).toEqual(new Set(['upstream']));
  });
});
