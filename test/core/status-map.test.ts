import { describe, expect, it } from 'vitest';
import { STATUS_MAP, UnknownStatusError, mapStatus } from '../../src/telemetry/status-map.js';
import { ExecutionPhase, NodeOutcome, NodeSkipReason, TestOutcome, normalizeEnum } from '../../src/telemetry/enums.js';

describe('status mapping (interface section 2A and documented choices)', () => {
  it.each([
    ['success', 'model', 'success', null, null],
    ['error', 'model', 'error', null, null],
    ['error', 'test', 'error', null, null],
    ['skipped', 'model', 'skipped', 'upstream', null],
    ['pass', 'test', 'success', null, 'passed'],
    ['warn', 'test', 'success', null, 'warned'],
    ['fail', 'test', 'success', null, 'failed'],
    ['fail', 'unit_test', 'success', null, 'failed'],
    ['partial success', 'model', 'error', null, null],
    ['reused', 'model', 'skipped', 'cached', null],
    ['no-op', 'saved_query', 'skipped', 'noop', null],
    ['runtime error', 'source', 'error', null, null],
  ])('%s (%s) -> %s / %s / %s', (status, rt, outcome, skip, test) => {
    const m = mapStatus(status, { resourceType: rt });
    expect([m.node_outcome, m.skip_reason, m.test_outcome]).toEqual([outcome, skip, test]);
  });

  it('reads refinements from the message and the command', () => {
    expect(mapStatus('skipped', { message: 'Skipping due to fail_fast' }).node_outcome).toBe('canceled');
    expect(mapStatus('success', { resourceType: 'saved_query', message: 'NO-OP' })).toMatchObject({ node_outcome: 'skipped', skip_reason: 'noop' });
    expect(mapStatus('success', { resourceType: 'test', command: 'compile' })).toMatchObject({ node_outcome: 'success', test_outcome: null });
    // the command as typed, as the table names it, and as args.which writes it
    for (const command of ['docs generate', 'DOCS GENERATE', 'generate']) expect(mapStatus('success', { command }).source, command).toBe('choice');
    expect(mapStatus('success', { command: 'build' }).source).not.toBe('choice');
  });

  it('rejects an unknown status, and every row of the table is reachable', () => {
    expect(() => mapStatus('exploded')).toThrow(UnknownStatusError);
    expect(new Set(STATUS_MAP.map((m) => m.status))).toContain('partial success');
  });
});

describe('enum normalizer', () => {
  it('accepts constant names, bare suffixes, short names, prose and numbers; keeps unknown values', () => {
    expect(normalizeEnum(NodeOutcome, 'NODE_OUTCOME_SKIPPED')).toBe('skipped');
    expect(normalizeEnum(NodeOutcome, 'success')).toBe('success');
    expect(normalizeEnum(NodeOutcome, 2)).toBe('error');
    expect(normalizeEnum(NodeSkipReason, 'NODE_SKIP_REASON_NO_OP')).toBe('noop');
    expect(normalizeEnum(ExecutionPhase, 'Run')).toBe('run');
    expect(normalizeEnum(ExecutionPhase, 'EXECUTION_PHASE_RENDER')).toBe('render');
    expect(normalizeEnum(TestOutcome, undefined)).toBe('passed');
    expect(normalizeEnum(NodeOutcome, 'NODE_OUTCOME_SOMETHING_NEW')).toBe('something_new');
  });
});
