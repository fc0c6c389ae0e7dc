/** The worst of each copy's ending of a span, as migrate writes one copy of a run that several inputs hold. */
import { describe, expect, it } from 'vitest';
import { ScanSink, planSameRun, type SpanEnding } from '../../src/legacy/same-run.js';
import type { JsonlRecord } from '../../src/produce/record.js';

const TRACE = '0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d';
const SPAN = '1a2b3c4d5e6f7a8b';
const endOf = (e: SpanEnding) =>
  ({ record_type: 'SpanEnd', trace_id: TRACE, span_id: SPAN, event_type: 'v1.public.events.fusion.node.NodeProcessed', ...e }) as unknown as JsonlRecord;

// one copy ends the node's span with an ERROR status, another says its test failed
const ERRORED: SpanEnding = { status: { code: 2, message: 'boom' }, attributes: { node_outcome: 'NODE_OUTCOME_SUCCESS' } };
const TEST_FAILED: SpanEnding = {
  status: null,
  attributes: { node_outcome: 'NODE_OUTCOME_SUCCESS', node_test_detail: { test_outcome: 'TEST_OUTCOME_FAILED', failing_rows: 3 } },
};
const BOTH = { status: ERRORED.status, attributes: { node_outcome: 'NODE_OUTCOME_SUCCESS', node_test_detail: TEST_FAILED.attributes.node_test_detail } };

describe('the worst ending of a span', () => {
  it('of one input that ends the span twice, each worse in another way, takes what each says worse', () => {
    for (const order of [[ERRORED, TEST_FAILED], [TEST_FAILED, ERRORED]]) {
      const scan = new ScanSink();
      for (const e of order) scan.write(endOf(e));
      expect(scan.errors.get(`${TRACE}/${SPAN}`)).toEqual(BOTH);
    }
  });

  it('of two later inputs, each worse in another way, raises the first copy with both', () => {
    const key = `${TRACE}/${SPAN}`;
    const traces = [new Set([TRACE]), new Set([TRACE]), new Set([TRACE])];
    const plan = planSameRun(traces, [undefined, new Map([[key, ERRORED]]), new Map([[key, TEST_FAILED]])]);
    expect(plan[0]!.raise.get(key)).toEqual(BOTH);
  });

  it('of endings that rank alike, is the one that says more (an outcome, failing rows, an error message), then the greater, in either order', () => {
    const failing = (rows?: number | string): SpanEnding => ({
      status: null,
      attributes: { node_outcome: 'NODE_OUTCOME_SUCCESS', node_test_detail: { test_outcome: 'TEST_OUTCOME_FAILED', ...(rows === undefined ? {} : { failing_rows: rows }) } },
    });
    const silent: SpanEnding = { status: { code: 2, message: null }, attributes: ERRORED.attributes };
    const skipped = (reason: string, upstream: string): SpanEnding => ({
      status: null,
      attributes: { node_outcome: 'NODE_OUTCOME_SKIPPED', node_skip_reason: reason, node_skip_upstream_detail: { upstream_unique_id: upstream } },
    });
    const said = (message: string): SpanEnding => ({ status: { code: 2, message }, attributes: ERRORED.attributes });
    const passed: SpanEnding = { status: null, attributes: { node_outcome: 'NODE_OUTCOME_SUCCESS', node_test_detail: {} } };
    const succeeded: SpanEnding = { status: null, attributes: { node_outcome: 'NODE_OUTCOME_SUCCESS' } };
    const none: SpanEnding = { status: null, attributes: {} };
    // an older engine's failed test without a count: its count is not recorded, below a known 0
    const unrecorded: SpanEnding = { status: null, attributes: { ...failing().attributes, failing_rows_recorded: false } };
    for (const [a, b, want] of [
      [failing(), failing(3), failing(3)], [failing(3), failing(5), failing(5)], [failing('7'), failing(3), failing('7')], [silent, ERRORED, ERRORED],
      // of two alike, the greater (as the model compares text)
      [said('1 nodes errored'), said('2 nodes errored'), said('2 nodes errored')],
      // by UTF-8 bytes: U+1F600 above U+FF5A, though its first UTF-16 unit is below
      [said('\uff5a'), said('\u{1f600}'), said('\u{1f600}')],
      [skipped('NODE_SKIP_REASON_NO_OP', 'model.a'), skipped('NODE_SKIP_REASON_UPSTREAM', 'model.a'), skipped('NODE_SKIP_REASON_UPSTREAM', 'model.a')],
      [skipped('NODE_SKIP_REASON_UPSTREAM', 'model.a'), skipped('NODE_SKIP_REASON_UPSTREAM', 'model.b'), skipped('NODE_SKIP_REASON_UPSTREAM', 'model.b')],
      // an outcome over none
      [none, passed, passed], [none, succeeded, succeeded], [succeeded, passed, passed],
      [unrecorded, failing(), failing()], [unrecorded, failing(2), failing(2)], [failing('99999999999'), failing(), failing()],
    ]) {
      for (const order of [[a!, b!], [b!, a!]]) {
        const scan = new ScanSink();
        for (const e of order) scan.write(endOf(e));
        expect(scan.errors.get(`${TRACE}/${SPAN}`), JSON.stringify(order)).toEqual(want);
      }
    }
  });
});
