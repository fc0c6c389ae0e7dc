/**
 * What `convert` holds each record it reads to: what a load refuses (recordProblem, in its words),
 * and what the engine's record form cannot hold, JSONL and Parquet alike: a field the Parquet layout
 * requires, text that is not a string, a time as a JSON number (which loses digits), a link that is
 * not one, a value nested deeper than the writers reach. A record that passes is written by
 * serializeRecord and BatchBuilder as it came.
 */
import { recordProblem } from '../ingest/jsonl.js';
import { jsonForMessage, TOO_DEEP, tooDeep } from '../ingest/nesting.js';
import { cutText } from '../render/cut-text.js';

export interface RecordProblem {
  field: string;
  reason: string;
}

const got = (x: unknown) => `(got ${cutText(jsonForMessage(x), 60)})`;

/** Fields the engine's Parquet layout holds no null in. */
const REQUIRED = ['trace_id', 'severity_number', 'severity_text', 'event_type'] as const;
const TEXT: Record<string, readonly string[]> = {
  SpanStart: ['span_name', 'severity_text', 'event_type'],
  SpanEnd: ['span_name', 'severity_text', 'event_type'],
  LogRecord: ['span_name', 'event_id', 'severity_text', 'event_type', 'body'],
};
const TIMES: Record<string, readonly string[]> = {
  SpanStart: ['start_time_unix_nano'],
  SpanEnd: ['start_time_unix_nano', 'end_time_unix_nano'],
  LogRecord: ['time_unix_nano'],
};
const LOWER_ID = /^[0-9a-f]{16}$/;

export function convertProblem(v: unknown): RecordProblem | undefined {
  const deep = tooDeep(v);
  if (deep !== undefined) return { field: deep, reason: TOO_DEEP };
  return recordProblem(v, 'snake') ?? formProblem(v as Record<string, unknown>);
}

function formProblem(r: Record<string, unknown>): RecordProblem | undefined {
  const rt = r.record_type as string;
  for (const f of REQUIRED) if (r[f] === undefined || r[f] === null) return { field: f, reason: "missing (the engine's layout requires it)" };
  for (const f of TEXT[rt]!) {
    const x = r[f];
    if (x !== undefined && x !== null && typeof x !== 'string') return { field: f, reason: `must be a string ${got(x)}` };
  }
  for (const f of TIMES[rt]!) {
    const x = r[f];
    if (x !== undefined && x !== null && typeof x !== 'string') return { field: f, reason: `must be nanoseconds, a string of decimal digits ${got(x)}` };
  }
  if (typeof r.severity_number !== 'number') return { field: 'severity_number', reason: `must be a JSON number ${got(r.severity_number)}` };
  for (const f of ['span_id', 'parent_span_id']) {
    const x = r[f];
    if (typeof x === 'string' && !LOWER_ID.test(x)) return { field: f, reason: `must be 16 lower-case hex digits ${got(x)}` };
  }
  if (rt === 'SpanEnd' && r.status) {
    const st = r.status as Record<string, unknown>;
    if (st.message !== undefined && st.message !== null && typeof st.message !== 'string') return { field: 'status.message', reason: `must be a string or null ${got(st.message)}` };
    if (typeof st.code !== 'number') return { field: 'status.code', reason: `must be a JSON number ${got(st.code)}` };
  }
  if (rt !== 'LogRecord' && Array.isArray(r.links)) {
    for (const l of r.links as unknown[]) {
      const link = l as Record<string, unknown> | null;
      if (link === null || typeof link !== 'object' || Array.isArray(link) || typeof link.trace_id !== 'string' || typeof link.span_id !== 'string')
        return { field: 'links', reason: `each link must be an object with trace_id and span_id ${got(l)}` };
      if (!LOWER_ID.test(link.span_id)) return { field: 'links.span_id', reason: `must be 16 lower-case hex digits ${got(link.span_id)}` };
      const a = link.attributes;
      if (a !== undefined && a !== null && (typeof a !== 'object' || Array.isArray(a))) return { field: 'links.attributes', reason: `must be an object ${got(a)}` };
    }
  }
  return undefined;
}
