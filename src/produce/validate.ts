/**
 * Conformance checker for engine telemetry: each record is held to the real engine's habits
 * (telemetry.md §2): envelope keys, order and types per record_type, id lengths and hex, decimal
 * time strings, severities, status, enum constant names, 64-bit integers as strings, zero values
 * omitted, alphabetical attribute keys; how each line is written (line-form.ts); whatever a load
 * refuses; across records: SpanStart/SpanEnd pairing, parents and the span names of LogRecords.
 * Unknown event types, enum values and envelope keys are warnings: the schema is additive.
 */
import { engineMessage, InputError } from '../errors.js';
import { jsonForMessage } from '../ingest/nesting.js';
import { detectFile, everyPathAdds, namedFiles } from '../ingest/detect.js';
import { refuseOlderEngineFile } from '../legacy/sniff.js';
import {
  ArtifactType, ExecutionPhase, HookOutcome, HookType, NodeCacheReason, NodeCancelReason, NodeErrorType, NodeMaterialization, NodeOutcome,
  NodeSkipReason, NodeType, NodeWarningOutcome, QueryOutcome, SourceFreshnessOutcome, TestOutcome, type EnumTable,
} from '../telemetry/enums.js';
import { KNOWN_EVENTS, eventKey } from '../telemetry/event-types.js';
import { rawLines, parseLine } from '../ingest/jsonl-lines.js';
import { recordProblem, snakeEnvelope } from '../ingest/jsonl.js';
import { lineFormIssues } from './line-form.js';
import { readParquetRecords } from './parquet-reader.js';
import { cutText } from '../render/cut-text.js';
import { printableLine } from '../render/printable.js';

export type IssueSeverity = 'violation' | 'warning';

export interface Issue {
  file: string;
  line: number;
  field: string;
  rule: string;
  severity: IssueSeverity;
}

export interface FileReport {
  file: string;
  /** the records read: a line that is not a JSON object is a violation, not a record (a load skips it) */
  records: number;
  violations: number;
  warnings: number;
  /** the first `maxIssues` violations and the first `maxIssues` warnings, in file order */
  issues: Issue[];
}

export interface ValidateOptions {
  /** violations kept per file, and warnings (counts stay exact) */
  maxIssues?: number;
  /** an older-engine file found in a folder or by a glob: not validated (one named alone is refused) */
  onSkip?: (path: string, reason: string) => void;
  /** the part of a file read so far (0..1), for a progress bar */
  onRead?: (path: string, fraction: number) => void;
}

export const DEFAULT_MAX_ISSUES = 100;

const CAMEL_ENVELOPE = 'the camelCase envelope of engine builds before 2025-08 (recordType, traceId, spanId, ...): the engine writes '
  + 'snake_case keys (record_type, trace_id, span_id, ...); load reads this file, convert writes it in snake_case, and its records are checked so';

const ORDER: Record<string, string[]> = {
  SpanStart: ['record_type', 'trace_id', 'span_id', 'span_name', 'parent_span_id', 'links', 'start_time_unix_nano', 'severity_number', 'severity_text', 'event_type', 'attributes'],
  SpanEnd: ['record_type', 'trace_id', 'span_id', 'span_name', 'parent_span_id', 'links', 'start_time_unix_nano', 'end_time_unix_nano', 'severity_number', 'severity_text', 'status', 'event_type', 'attributes'],
  LogRecord: ['record_type', 'trace_id', 'span_id', 'span_name', 'event_id', 'time_unix_nano', 'severity_number', 'severity_text', 'body', 'event_type', 'attributes'],
};
/** every envelope field of some record type */
const ENVELOPE = new Set(Object.values(ORDER).flat());
const SEVERITIES: Record<number, string> = { 1: 'TRACE', 5: 'DEBUG', 9: 'INFO', 13: 'WARN', 17: 'ERROR' };
const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const DEC = /^\d{1,20}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const EVENT_TYPE = /^v\d+\.(public|internal)\.events\.[A-Za-z0-9_-]+\.[a-z_]+\.[A-Za-z0-9_]+$/;

/** Attribute keys holding enums, by path (top level or inside a detail message). */
const ENUM_KEYS: Record<string, EnumTable> = {
  node_outcome: NodeOutcome, node_skip_reason: NodeSkipReason, node_error_type: NodeErrorType, node_cancel_reason: NodeCancelReason,
  node_type: NodeType, materialization: NodeMaterialization, phase: ExecutionPhase, last_phase: ExecutionPhase, query_outcome: QueryOutcome,
  artifact_type: ArtifactType, hook_type: HookType, hook_outcome: HookOutcome,
  'node_test_detail.test_outcome': TestOutcome, 'node_cache_detail.node_cache_reason': NodeCacheReason,
  'node_freshness_outcome.node_freshness_outcome': SourceFreshnessOutcome, 'node_evaluation_detail.node_warning_outcome': NodeWarningOutcome,
};
/** non-optional enums: their zero constant must be omitted */
const NON_OPTIONAL_ENUMS = new Set(['node_outcome', 'node_type', 'phase', 'last_phase', 'query_outcome', 'artifact_type', 'hook_type', 'hook_outcome',
  'node_test_detail.test_outcome', 'node_cache_detail.node_cache_reason', 'node_freshness_outcome.node_freshness_outcome']);
/**
 * Node attributes that are not `optional` in the schema (telemetry.md §1.3), by event: at their zero
 * value ("" or false) the engine omits them. Optional ones (database, sao_enabled, ...) are written
 * whenever set, zero or not.
 */
const NODE_SCALARS = ['unique_id', 'name', 'relative_path', 'node_checksum', 'node_skip_upstream_detail.upstream_unique_id'];
const NON_OPTIONAL_SCALARS: Record<string, Set<string>> = {
  'node.NodeEvaluated': new Set(NODE_SCALARS),
  'node.NodeProcessed': new Set([...NODE_SCALARS, 'in_selection', 'dbt_core_event_code']),
};
/** 64-bit integers, written as decimal strings */
const U64_KEYS = new Set(['rows_affected', 'duration_ms', 'idle_time_ms', 'node_count_total', 'node_count_skipped', 'node_count_error', 'parent_span_id',
  'node_cache_detail.build_after_seconds', 'node_cache_detail.last_updated_seconds', 'node_freshness_outcome.age_seconds', 'item_count_total',
  'metrics.total_errors', 'metrics.total_warnings', 'metrics.autofix_suggestions', 'eval_args.limit', 'eval_args.num_threads']);
/** 32-bit integers, written as JSON numbers */
const I32_KEYS = new Set(['defined_at_line', 'defined_at_col', 'code', 'line', 'column', 'code_line', 'code_column', 'original_severity_number',
  'query_error_vendor_code', 'hook_index', 'node_test_detail.failing_rows']);

interface SpanState {
  line: number;
  started: boolean;
  ended: boolean;
  name: string;
  start: string;
  parent: string | null;
}

class FileChecker {
  readonly report: FileReport;
  private readonly spans = new Map<string, SpanState>();
  /** references checked once the whole file is read: [line, field, trace, span, a LogRecord's span_name] */
  private readonly refs: [number, string, string, string, string?][] = [];

  constructor(file: string, private readonly maxIssues: number) {
    this.report = { file, records: 0, violations: 0, warnings: 0, issues: [] };
  }

  /** fields of the record being checked that already have a violation */
  private faulted = new Set<string>();

  issue(line: number, field: string, rule: string, severity: IssueSeverity = 'violation'): void {
    if (severity === 'violation') this.faulted.add(field);
    const n = severity === 'violation' ? ++this.report.violations : ++this.report.warnings;
    if (n <= this.maxIssues) this.report.issues.push({ file: this.report.file, line, field, rule, severity });
  }

  record(line: number, v: unknown): void {
    this.faulted.clear();
    this.checkRecord(line, v);
    // Whatever a load refuses is a violation, said as the load says it when no rule above did.
    const p = recordProblem(v, 'snake');
    if (p && !this.faulted.has(p.field)) this.issue(line, p.field, p.reason);
  }

  private checkRecord(line: number, v: unknown): void {
    // (a line that is not a JSON object is no record: a load skips it, and so it is not counted)
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return this.issue(line, '-', 'not a JSON object');
    this.report.records++;
    const r = v as Record<string, unknown>;
    const rt = r.record_type;
    const order = typeof rt === 'string' ? ORDER[rt] : undefined;
    if (!order) return this.issue(line, 'record_type', `must be SpanStart, SpanEnd or LogRecord (got ${cutText(jsonForMessage(rt), 60)})`);
    const keys = Object.keys(r);
    for (const k of order) if (!(k in r)) this.issue(line, k, `missing (required on ${rt})`);
    // A field of another record type's envelope is one the table says is absent here; others may be new (additive schema).
    for (const k of keys) {
      if (order.includes(k)) continue;
      if (ENVELOPE.has(k)) this.issue(line, k, `must be absent on a ${rt}`);
      else this.issue(line, k, `not an envelope field of ${rt}`, 'warning');
    }
    const known = keys.filter((k) => order.includes(k));
    const expected = order.filter((k) => k in r);
    if (known.join(',') !== expected.join(',')) this.issue(line, '-', `envelope key order must be ${order.join(', ')}`);

    const str = (k: string, re: RegExp, what: string, nullable = false) => {
      const x = r[k];
      if (x === undefined) return;
      if (x === null) {
        if (!nullable) this.issue(line, k, `must not be null`);
        return;
      }
      if (typeof x !== 'string' || !re.test(x)) this.issue(line, k, `must be ${what}${nullable ? ' or null' : ''} (got ${cutText(jsonForMessage(x), 60)})`);
    };
    str('trace_id', HEX32, '32 lower-case hex digits');
    str('span_id', HEX16, '16 lower-case hex digits', rt === 'LogRecord');
    // (absent on a LogRecord, and said so above; its type is checked too, as a load refuses a wrong one on any record)
    str('parent_span_id', HEX16, '16 lower-case hex digits', true);
    if (typeof r.span_id === 'string' && /^0+$/.test(r.span_id)) this.issue(line, 'span_id', 'must not be all zeros');
    if (r.span_name !== undefined && !(typeof r.span_name === 'string' || (rt === 'LogRecord' && r.span_name === null))) this.issue(line, 'span_name', 'must be a string');
    for (const k of ['start_time_unix_nano', 'end_time_unix_nano', 'time_unix_nano']) str(k, DEC, 'a string of decimal digits (nanoseconds)');
    if (rt === 'SpanEnd' && typeof r.start_time_unix_nano === 'string' && typeof r.end_time_unix_nano === 'string' && DEC.test(r.start_time_unix_nano) && DEC.test(r.end_time_unix_nano) && BigInt(r.end_time_unix_nano) < BigInt(r.start_time_unix_nano))
      this.issue(line, 'end_time_unix_nano', 'must not be before start_time_unix_nano');
    if (rt === 'LogRecord') {
      str('event_id', UUID, 'a lower-case UUID');
      if (typeof r.event_id === 'string' && UUID.test(r.event_id) && r.event_id[14] !== '7') this.issue(line, 'event_id', 'is not a UUIDv7', 'warning');
      if (r.body !== undefined && typeof r.body !== 'string') this.issue(line, 'body', 'must be a string');
    }
    if (r.severity_number !== undefined) {
      const sn = r.severity_number;
      if (typeof sn !== 'number' || !SEVERITIES[sn]) this.issue(line, 'severity_number', 'must be one of 1, 5, 9, 13, 17');
      else if (r.severity_text !== SEVERITIES[sn]) this.issue(line, 'severity_text', `must be ${SEVERITIES[sn]} for severity_number ${sn}`);
    }
    // A links or status of the wrong JSON type is a violation on any record (a load refuses it); their
    // contents are checked where the engine writes them.
    if (r.links !== undefined && r.links !== null && !Array.isArray(r.links)) this.issue(line, 'links', 'must be null or an array');
    else if (rt !== 'LogRecord' && Array.isArray(r.links)) {
      r.links.forEach((l: unknown, i) => {
        const o = l as Record<string, unknown> | null;
        if (!o || typeof o !== 'object') return this.issue(line, `links[${i}]`, 'must be an object');
        if (typeof o.trace_id !== 'string' || !HEX32.test(o.trace_id)) this.issue(line, `links[${i}].trace_id`, 'must be 32 lower-case hex digits');
        if (typeof o.span_id !== 'string' || !HEX16.test(o.span_id)) this.issue(line, `links[${i}].span_id`, 'must be 16 lower-case hex digits');
        else if (typeof o.trace_id === 'string') this.refs.push([line, `links[${i}].span_id`, o.trace_id, o.span_id]);
        if (o.attributes === null || typeof o.attributes !== 'object' || Array.isArray(o.attributes)) this.issue(line, `links[${i}].attributes`, 'must be an object');
      });
    }
    const st = r.status;
    if (st !== undefined && st !== null && (typeof st !== 'object' || Array.isArray(st))) this.issue(line, 'status', 'must be null or {message, code}');
    else if (rt === 'SpanEnd' && st !== undefined && st !== null) {
      const s = st as Record<string, unknown>;
      if (Object.keys(s).join(',') !== 'message,code') this.issue(line, 'status', 'must have exactly the keys message, code in that order');
      if (!(s.message === null || typeof s.message === 'string')) this.issue(line, 'status.message', 'must be a string or null');
      if (s.code !== 0 && s.code !== 1 && s.code !== 2) this.issue(line, 'status.code', 'must be 0, 1 or 2');
    }
    let key: string | null = null;
    if (typeof r.event_type !== 'string' || !EVENT_TYPE.test(r.event_type)) {
      if (r.event_type !== undefined) this.issue(line, 'event_type', 'must look like v1.public.events.<product>.<category>.<Message>');
    } else {
      key = eventKey(r.event_type);
      const kind = key ? KNOWN_EVENTS[key] : undefined;
      if (!kind) this.issue(line, 'event_type', `unknown event type ${r.event_type}`, 'warning');
      else if ((kind === 'log') !== (rt === 'LogRecord')) this.issue(line, 'event_type', `${key} is a ${kind} event, not a ${rt}`);
    }
    const a = r.attributes;
    if (a !== undefined) {
      if (a === null || typeof a !== 'object' || Array.isArray(a)) this.issue(line, 'attributes', 'must be an object');
      else this.attributes(line, a as Record<string, unknown>, '', key ? NON_OPTIONAL_SCALARS[key] : undefined);
    }
    if (rt !== 'LogRecord') this.span(line, r, rt as 'SpanStart' | 'SpanEnd');
    else if (typeof r.span_id === 'string' && typeof r.trace_id === 'string') {
      // span_name: the name of the enclosing span; checked now when that span came first (as it does), else at the end
      const name = typeof r.span_name === 'string' ? r.span_name : undefined;
      const s = this.spans.get(`${r.trace_id}/${r.span_id}`);
      if (s && name !== undefined) this.spanName(line, name, r.span_id, s);
      else if (!s) this.refs.push([line, 'span_id', r.trace_id, r.span_id, name]);
    }
  }

  private attributes(line: number, a: Record<string, unknown>, prefix: string, scalars?: Set<string>): void {
    let prev = '';
    for (const k of Object.keys(a)) {
      if (k < prev) this.issue(line, `attributes.${prefix}${k}`, 'attribute keys must be in alphabetical order');
      prev = k;
    }
    for (const [k, v] of Object.entries(a)) {
      const path = prefix + k;
      const f = `attributes.${path}`;
      const table = ENUM_KEYS[path];
      if (table) {
        if (typeof v !== 'string') this.issue(line, f, `must be a ${table.name} constant name like ${table.prefix}${table.entries[1]?.suffix ?? table.entries[0]!.suffix}`);
        else if (!v.startsWith(table.prefix) || !/^[A-Z0-9_]+$/.test(v)) this.issue(line, f, `must be a ${table.name} constant name (${table.prefix}...), got ${JSON.stringify(v)}`);
        else {
          const e = table.entries.find((x) => table.prefix + x.suffix === v);
          if (!e) this.issue(line, f, `unknown ${table.name} value ${v}`, 'warning');
          else if (e.number === 0 && NON_OPTIONAL_ENUMS.has(path)) this.issue(line, f, `zero value ${v} must be omitted`);
        }
      } else if (U64_KEYS.has(path)) {
        if (typeof v !== 'string' || !DEC.test(v)) this.issue(line, f, `64-bit integer must be a decimal string (got ${cutText(jsonForMessage(v), 60)})`);
      } else if (I32_KEYS.has(path)) {
        if (typeof v !== 'number' || !Number.isInteger(v)) this.issue(line, f, `32-bit integer must be a JSON number (got ${cutText(jsonForMessage(v), 60)})`);
        else if (v < -(2 ** 31) || v >= 2 ** 31) this.issue(line, f, `32-bit integer out of range (got ${v})`);
        else if (path === 'node_test_detail.failing_rows' && v === 0) this.issue(line, f, 'zero value must be omitted');
      }
      if ((v === '' || v === false) && scalars?.has(path)) this.issue(line, f, `zero value ${JSON.stringify(v)} must be omitted (not optional in the schema)`);
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && path.split('.').length < 3) {
        if (path === 'metrics') {
          this.attributes(line, v as Record<string, unknown>, 'metrics.');
          for (const m of ['node_type_counts', 'status_counts'])
            for (const [mk, mv] of Object.entries(((v as Record<string, unknown>)[m] ?? {}) as Record<string, unknown>))
              if (typeof mv !== 'string' || !DEC.test(mv)) this.issue(line, `attributes.metrics.${m}.${mk}`, '64-bit count must be a decimal string');
        } else if (!path.includes('.')) this.attributes(line, v as Record<string, unknown>, `${path}.`, scalars);
      }
    }
  }

  private span(line: number, r: Record<string, unknown>, rt: 'SpanStart' | 'SpanEnd'): void {
    if (typeof r.trace_id !== 'string' || typeof r.span_id !== 'string') return;
    const id = `${r.trace_id}/${r.span_id}`;
    let s = this.spans.get(id);
    const parent = typeof r.parent_span_id === 'string' ? r.parent_span_id : null;
    if (!s) {
      s = { line, started: false, ended: false, name: asText(r.span_name), start: asText(r.start_time_unix_nano), parent };
      this.spans.set(id, s);
      if (parent) this.refs.push([line, 'parent_span_id', r.trace_id, parent]);
    } else {
      if (s.name !== asText(r.span_name)) this.issue(line, 'span_name', `differs from the span's other record at line ${s.line}`);
      if (s.start !== asText(r.start_time_unix_nano)) this.issue(line, 'start_time_unix_nano', `differs from the span's other record at line ${s.line}`);
      if (s.parent !== parent) this.issue(line, 'parent_span_id', `differs from the span's other record at line ${s.line}`);
    }
    if (rt === 'SpanStart') {
      if (s.started) this.issue(line, 'span_id', `second SpanStart for this span (first at line ${s.line})`);
      if (s.ended) this.issue(line, 'span_id', 'SpanStart after the SpanEnd of this span');
      s.started = true;
    } else {
      if (s.ended) this.issue(line, 'span_id', `second SpanEnd for this span`);
      s.ended = true;
    }
    if (r.links !== null && rt === 'SpanStart' && r.links !== undefined && Array.isArray(r.links) && r.links.length) {
      // the engine attaches links on SpanEnd only; not wrong, but unusual
      this.issue(line, 'links', 'links on a SpanStart (the engine writes them on SpanEnd)', 'warning');
    }
  }

  private spanName(line: number, name: string, span: string, s: SpanState): void {
    if (name !== s.name) this.issue(line, 'span_name', `must be the name of span ${span}, ${cutText(JSON.stringify(s.name), 80)} (line ${s.line})`);
  }

  finish(): FileReport {
    for (const [id, s] of this.spans) {
      if (!s.started) this.issue(s.line, 'span_id', `SpanEnd without a SpanStart (${id.split('/')[1]})`, 'warning');
      else if (!s.ended) this.issue(s.line, 'span_id', `span never ended (${id.split('/')[1]})`, 'warning');
    }
    for (const [line, field, trace, span, name] of this.refs) {
      const s = this.spans.get(`${trace}/${span}`);
      if (!s) this.issue(line, field, `no span ${span} in this file's trace`, 'warning');
      else if (name !== undefined) this.spanName(line, name, span, s);
    }
    this.report.issues.sort((a, b) => a.line - b.line);
    return this.report;
  }
}

/**
 * Validate one file (JSONL, .jsonl.gz or Parquet, told by content). Input that is not telemetry at
 * all (not a JSON object on its first line, a Parquet file without footer) throws InputError once.
 */
export async function validateFile(path: string, opts: ValidateOptions = {}): Promise<FileReport> {
  const input = await detectFile(path);
  if (input.format.startsWith('legacy-')) refuseOlderEngineFile(path, 'validate checks telemetry files');
  const c = new FileChecker(path, opts.maxIssues ?? DEFAULT_MAX_ISSUES);
  if (input.format === 'parquet') {
    let row = 0;
    try {
      // said of the file, at its first row
      const onNote = (n: { field: string; reason: string }) => c.issue(1, n.field, n.reason, 'warning');
      // a row that is not a record is a violation at its row, as a JSONL line that is not JSON is at its line
      const onBadRow = (n: number, p: { field: string; reason: string }) => {
        c.issue(n, p.field, p.reason);
        c.report.records++;
        row = n;
      };
      const onRead = opts.onRead && ((f: number) => opts.onRead!(path, f));
      for await (const r of readParquetRecords(path, { onNote, onBadRow, onRead })) c.record(++row, r);
    } catch (e) {
      if (e instanceof InputError) throw e;
      throw new InputError(`not a readable Parquet file: ${engineMessage(e)}`, path);
    }
  } else {
    // Said once, and the records checked in the snake_case envelope, as load and convert read them.
    let camelSaid = input.keyStyle !== 'camel';
    for await (const { line, bytes } of rawLines(path, input.gzip, opts.onRead && ((f) => opts.onRead!(path, f)))) {
      const parsed = parseLine(bytes);
      if (parsed === 'blank') {
        c.issue(line, '-', 'a blank line: each line must be one JSON object');
        continue;
      }
      if ('problem' in parsed) {
        c.issue(line, '-', parsed.problem.replace(/^malformed JSON/, 'not valid JSON'));
        continue;
      }
      if (!camelSaid) {
        c.issue(line, '-', CAMEL_ENVELOPE);
        camelSaid = true;
      }
      c.record(line, input.keyStyle === 'camel' ? snakeEnvelope(parsed.value) : parsed.value);
      for (const f of lineFormIssues(parsed.text, parsed.value)) c.issue(line, f.field, f.rule);
    }
  }
  return c.finish();
}

/** Validate files, folders (their telemetry files) and globs, as every command takes PATHs. */
export async function validatePaths(paths: string[], opts: ValidateOptions = {}): Promise<FileReport[]> {
  const out: FileReport[] = [];
  /** files that held something to check (a record, or a line that should have been one) */
  const checked = new Set<string>();
  const olderEngine = new Set<string>();
  const named = await namedFiles(paths);
  for (const [p, args] of named) {
    if (!args.includes(p) && (await detectFile(p)).format.startsWith('legacy-')) {
      opts.onSkip?.(p, "an older-engine file, not telemetry (load, runs, tree, query and gate read it; migrate translates it)");
      olderEngine.add(p);
      continue;
    }
    const report = await validateFile(p, opts);
    out.push(report);
    if (report.records > 0 || report.violations > 0) checked.add(p);
  }
  // a folder or glob of older-engine files only, or an empty file, is refused as one older-engine file named alone is
  for (const arg of paths) {
    const files = [...named].filter(([, args]) => args.includes(arg)).map(([p]) => p);
    const why = files.some((p) => olderEngine.has(p)) ? ' (older-engine files are not telemetry: runlens migrate translates them)' : '';
    everyPathAdds([arg], () => files.map((p) => ({ path: p, adds: checked.has(p) })), 'no telemetry in this input', `no telemetry record${why}`);
  }
  return out;
}

/** An issue as a line for people: what it quotes of the input shows control characters escaped. */
export function formatIssue(i: Issue): string {
  return printableLine(`${i.file}:${i.line}: ${i.field}: ${i.rule}${i.severity === 'warning' ? ' (warning)' : ''}`);
}

/** A field's text to compare with another record's (String() of a deeply nested list recurses). */
const asText = (x: unknown): string => (typeof x === 'string' ? x : jsonForMessage(x));
