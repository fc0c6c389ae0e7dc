/** Hand-written telemetry for what no real sample shows. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export function tempDir(prefix = 'runlens-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export function writeLines(dir: string, name: string, records: (object | string)[]): string {
  const p = path.join(dir, name);
  writeFileSync(p, records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  return p;
}

const T0 = 1772073188904419000n;
export const ns = (ms: number) => String(T0 + BigInt(Math.round(ms * 1e6)));

export interface SpanSpec {
  trace?: string;
  id: string;
  parent?: string | null;
  name: string;
  eventType: string;
  start: number;
  end?: number;
  attrs?: Record<string, unknown>;
  endAttrs?: Record<string, unknown>;
  status?: { message: string | null; code: number } | null;
}

export const TRACE = 'aaaabbbbccccddddeeeeffff00001111';

/** SpanStart (+ SpanEnd unless end is undefined) in the snake_case envelope. */
export function span(s: SpanSpec): object[] {
  const base = {
    record_type: 'SpanStart',
    trace_id: s.trace ?? TRACE,
    span_id: s.id,
    span_name: s.name,
    parent_span_id: s.parent ?? null,
    links: null,
    start_time_unix_nano: ns(s.start),
    severity_number: 9,
    severity_text: 'INFO',
    event_type: s.eventType,
    attributes: s.attrs ?? {},
  };
  const out: object[] = [base];
  if (s.end !== undefined) {
    out.push({
      record_type: 'SpanEnd',
      trace_id: base.trace_id,
      span_id: s.id,
      span_name: s.name,
      parent_span_id: base.parent_span_id,
      links: null,
      start_time_unix_nano: ns(s.start),
      end_time_unix_nano: ns(s.end),
      severity_number: 9,
      severity_text: 'INFO',
      status: s.status === undefined ? { message: null, code: 1 } : s.status,
      event_type: s.eventType,
      attributes: { ...(s.attrs ?? {}), ...(s.endAttrs ?? {}) },
    });
  }
  return out;
}

/**
 * The interface document's illustrative form: lower-case outcomes, `Node(<id>)` span names, `Run`
 * phases, test_outcome as a flat attribute, `engine` as the product segment.
 */
export function interfaceStyleRun(trace = TRACE): object[] {
  const et = (x: string) => `v1.public.events.engine.${x}`;
  return [
    ...span({ trace, id: '0000000000000001', name: 'engine invocation (x)', eventType: et('invocation.Invocation'), start: 0, end: 100, attrs: { invocation_id: 'aaaabbbb-cccc-dddd-eeee-ffff00001111', raw_command: 'engine build', eval_args: { command: 'build' } } }),
    ...span({ trace, id: '0000000000000002', parent: '0000000000000001', name: 'Phase: Run', eventType: et('phase.PhaseExecuted'), start: 1, end: 99, attrs: { phase: 'Run' } }),
    ...span({ trace, id: '0000000000000036', parent: '0000000000000002', name: 'Node(model.project.customers)', eventType: et('node.NodeEvaluated'), start: 2, end: 40, attrs: { unique_id: 'model.project.customers', phase: 'Run' }, endAttrs: { node_outcome: 'error' } }),
    ...span({ trace, id: '0000000000000037', parent: '0000000000000002', name: 'Node(model.project.orders)', eventType: et('node.NodeEvaluated'), start: 41, end: 42, attrs: { unique_id: 'model.project.orders', phase: 'Run' }, endAttrs: { node_outcome: 'skipped', skip_reason: 'upstream', node_skip_upstream_detail: { upstream_unique_id: 'model.project.customers' } } }),
    ...span({ trace, id: '0000000000000038', parent: '0000000000000002', name: 'Node(model.project.revenue)', eventType: et('node.NodeEvaluated'), start: 43, end: 44, attrs: { unique_id: 'model.project.revenue', phase: 'Run' }, endAttrs: { node_outcome: 'skipped', node_skip_reason: 'upstream', node_skip_upstream_detail: { upstream_unique_id: 'model.project.orders' } } }),
    ...span({ trace, id: '0000000000000039', parent: '0000000000000002', name: 'Node(test.project.not_null_x)', eventType: et('node.NodeEvaluated'), start: 45, end: 60, attrs: { unique_id: 'test.project.not_null_x', phase: 'Run' }, endAttrs: { node_outcome: 'success', test_outcome: 'failed', failing_rows: 7 } }),
    ...span({ trace, id: '0000000000000040', parent: '0000000000000002', name: 'Node(test.project.unique_y)', eventType: et('node.NodeEvaluated'), start: 61, end: 70, attrs: { unique_id: 'test.project.unique_y', phase: 'Run' }, endAttrs: { node_outcome: 'success', test_outcome: 'warned' } }),
    { record_type: 'LogRecord', trace_id: trace, span_id: '0000000000000036', span_name: 'Node(model.project.customers)', event_id: '019c97ca-fe34-7041-a7a8-b5f3e2627068', time_unix_nano: ns(39), severity_number: 17, severity_text: 'ERROR', body: 'Syntax error near SELEC', event_type: et('log.LogMessage'), attributes: { unique_id: 'model.project.customers', code: 9002 } },
  ];
}
