/**
 * TelemetryWriter: an engine (or a script) describes a run as it happens and the writer emits every
 * record the real engine would, to any combination of sinks.
 *
 *   writer.startInvocation()  -> Process + Invocation roots (one trace)
 *   inv.startPhase('run')     -> PhaseExecuted under the invocation
 *   inv.startNode(info)       -> NodeProcessed under the invocation (one per node across phases)
 *   node.evaluate(phase)      -> NodeEvaluated under the phase, linked to NodeProcessed on SpanEnd
 *   evaluation.startQuery()   -> QueryExecuted under the evaluation
 *   span.log...()             -> LogRecords pointing at the enclosing span
 *
 * SpanStart is written when a span opens, SpanEnd when it closes; the invocation's end carries the
 * run metrics. Times are nanoseconds (bigint); pass `at` for simulated runs or let the clock decide.
 */
import { hash } from 'node:crypto';
import { arch, platform } from 'node:os';
import { eventType } from '../telemetry/event-types.js';
import { QueryOutcome } from '../telemetry/enums.js';
import { randomIds, traceIdOf, type IdSource } from './ids.js';
import {
  evaluatedCode, isTestType, konst, nodeBaseAttrs, nodeStatus, outcomeAttrs, phaseConst, processedEndCode, u64,
  type NodeInfo, type NodeResult,
} from './node-attrs.js';
import { NodeType } from '../telemetry/enums.js';
import { SortedAttrs, type Attributes, type AttributesInput, type JsonlRecord, type Link, type SpanStatus } from './record.js';
import type { TelemetrySink } from './sinks/types.js';

export type SeverityName = 'trace' | 'debug' | 'info' | 'warn' | 'error';
const SEVERITY: Record<SeverityName, [number, string]> = {
  trace: [1, 'TRACE'], debug: [5, 'DEBUG'], info: [9, 'INFO'], warn: [13, 'WARN'], error: [17, 'ERROR'],
};

export interface TelemetryWriterOptions {
  sinks: TelemetrySink[];
  /** span ids and UUIDv7s (default: crypto random; `seededIds(seed)` for repeatable output) */
  ids?: IdSource;
  /** current time in ns since the epoch (default: wall clock with sub-ms precision) */
  clock?: () => bigint;
  /** process_info.package (default "dbt") and version */
  package?: string;
  version?: string;
  hostOs?: string;
  hostArch?: string;
  /** product segment of event_type names (default "fusion") */
  product?: string;
  /** called once per failing sink; default prints one line to stderr */
  onSinkError?: (sink: string, error: Error) => void;
}

export interface InvocationOptions {
  /** the command (build, run, test, ...); null: not known (eval_args has no command) */
  command: string | null;
  /** default `dbt <command>`; null, or no command: not known (no raw_command) */
  rawCommand?: string | null;
  /** UUID (or integer) like --invocation-id; default a fresh UUIDv7 */
  invocationId?: string;
  /** eval_args fields beyond command (target, select, vars, num_threads as number, ...) */
  evalArgs?: Attributes;
  /** an external parent for the root spans (16 hex), like --parent-span-id */
  parentSpanId?: string;
  at?: bigint;
  /** span ids of the Process and Invocation spans (default: drawn from the writer's ids) */
  spanIds?: { process: string; invocation: string };
  /** when the process started, if before the invocation (default `at`) */
  processAt?: bigint;
}

interface SinkSlot {
  sink: TelemetrySink;
  failed: boolean;
}

function defaultClock(): () => bigint {
  const base = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();
  return () => base + process.hrtime.bigint();
}

const hostOsName = (): string => ({ darwin: 'macos', win32: 'windows' } as Record<string, string>)[platform()] ?? platform();
const hostArchName = (): string => ({ arm64: 'aarch64', x64: 'x86_64' } as Record<string, string>)[arch()] ?? arch();

export class TelemetryWriter {
  readonly ids: IdSource;
  readonly clock: () => bigint;
  readonly pkg: string;
  readonly version: string;
  readonly hostOs: string;
  readonly hostArch: string;
  readonly product: string;
  private readonly slots: SinkSlot[];
  private readonly onSinkError: (sink: string, error: Error) => void;
  private readonly open = new Set<Invocation>();
  private closed = false;
  /** does a live sink read attribute objects (one without writeJson)? */
  private objectsNeeded: boolean;
  /** sink name -> error, for callers that want to know after the run */
  readonly sinkErrors = new Map<string, Error>();

  constructor(opts: TelemetryWriterOptions) {
    this.slots = opts.sinks.map((sink) => ({ sink, failed: false }));
    this.objectsNeeded = this.slots.some((s) => !s.sink.writeJson);
    this.ids = opts.ids ?? randomIds();
    this.clock = opts.clock ?? defaultClock();
    this.pkg = opts.package ?? 'dbt';
    this.version = opts.version ?? '2.0.0';
    this.hostOs = opts.hostOs ?? hostOsName();
    this.hostArch = opts.hostArch ?? hostArchName();
    this.product = opts.product ?? 'fusion';
    this.onSinkError = opts.onSinkError ?? ((s, e) => process.stderr.write(`runlens: telemetry sink ${s} failed: ${e.message}\n`));
  }

  /** Start a run: writes the Process and Invocation SpanStarts. */
  startInvocation(o: InvocationOptions): Invocation {
    if (this.closed) throw new Error('TelemetryWriter is closed');
    const inv = new Invocation(this, o);
    this.open.add(inv);
    return inv;
  }

  private readonly eventTypes = new Map<string, string>();
  /**
   * @internal One string per event type: a fresh concatenation per record would be flattened and
   * hashed again by every lookup keyed on it (the serializer's quoted-value cache).
   */
  eventType(key: string): string {
    let t = this.eventTypes.get(key);
    if (t === undefined) this.eventTypes.set(key, (t = eventType(key, this.product)));
    return t;
  }

  /** @internal a finished invocation */
  forget(inv: Invocation): void {
    this.open.delete(inv);
  }

  /** @internal a record's `attributes`: the object when a sink reads it, else the placeholder */
  attributesOf(a: SortedAttrs): Attributes {
    return this.objectsNeeded ? a.object() : NOT_BUILT;
  }

  /**
   * @internal send one record to every live sink, re-pointing parents past spans a sink filters out.
   * `attrs` are the record's attributes; sinks with writeJson get their JSON text.
   */
  emit(r: JsonlRecord, attrs: SortedAttrs, span: SpanCore | null, parent: SpanCore | null, externalParent: string | null): void {
    let json: string | undefined;
    for (const slot of this.slots) {
      if (slot.failed) continue;
      const s = slot.sink;
      if (s.error) {
        this.fail(slot, s.error);
        continue;
      }
      if (r.severity_number < s.minSeverity) continue;
      let out = r;
      if (r.record_type === 'LogRecord') {
        const kept = keptAncestor(span, s.minSeverity);
        if (kept !== span) out = { ...r, span_id: kept?.spanId ?? null, span_name: kept?.name ?? null };
      } else {
        const kept = keptAncestor(parent, s.minSeverity);
        if (kept !== parent) out = { ...r, parent_span_id: kept?.spanId ?? externalParent };
      }
      try {
        if (s.writeJson) s.writeJson(out, (json ??= attrs.json()));
        else s.write(out);
      } catch (e) {
        this.fail(slot, e as Error);
      }
    }
  }

  private fail(slot: SinkSlot, e: Error): void {
    if (slot.failed) return;
    slot.failed = true;
    this.objectsNeeded = this.slots.some((s) => !s.failed && !s.sink.writeJson);
    this.sinkErrors.set(slot.sink.name, e);
    this.onSinkError(slot.sink.name, e);
  }

  /** Wait until every sink has room again (call now and then when producing millions of records). */
  async drain(): Promise<void> {
    await Promise.all(
      this.slots.filter((s) => !s.failed && s.sink.drain).map((s) => s.sink.drain!().catch((e: Error) => this.fail(s, e))),
    );
  }

  /**
   * End open invocations, then flush and close every sink (the Parquet file is written here). A run
   * with spans still open (close() in a finally block after a crash) was cut short: they end as
   * `record` ends an interrupted command's, see Invocation.endOpen.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    for (const inv of [...this.open]) inv.endOpen();
    this.closed = true;
    await Promise.all(
      this.slots.map(async (s) => {
        try {
          await s.sink.close();
          if (s.sink.error) throw s.sink.error;
        } catch (e) {
          this.fail(s, e as Error);
        }
      }),
    );
  }
}

/** `attributes` of records whose sinks all take attribute JSON (see TelemetrySink.writeJson) */
const NOT_BUILT: Attributes = Object.freeze({}) as Attributes;

function keptAncestor(s: SpanCore | null, min: number): SpanCore | null {
  while (s && s.severity < min) s = s.parent;
  return s;
}

/** Fields common to every span handle. */
export class SpanCore {
  readonly spanId: string;
  readonly start: bigint;
  end?: bigint;
  ended = false;
  /** in engine order with their JSON ready (records are serialized by concatenation); emptied when the span ends */
  sorted: SortedAttrs;
  private startString?: string;
  /** the start as decimal text, made once for the SpanStart and the SpanEnd */
  get startText(): string {
    return (this.startString ??= this.start.toString());
  }
  /** add or replace attribute entries */
  update(extra: AttributesInput | SortedAttrs): void {
    this.sorted = this.sorted.with(extra);
  }
  constructor(
    readonly inv: Invocation,
    readonly parent: SpanCore | null,
    readonly name: string,
    readonly eventKey: string,
    readonly severity: number,
    attrs: AttributesInput | SortedAttrs,
    at: bigint | undefined,
    spanId?: string,
  ) {
    this.spanId = spanId ?? inv.writer.ids.spanId();
    this.start = at ?? inv.writer.clock();
    this.sorted = attrs instanceof SortedAttrs ? attrs : SortedAttrs.of(attrs);
  }
}

export interface LogOptions {
  /** `category.Message` (default log.LogMessage) */
  event?: string;
  severity?: SeverityName;
  body?: string;
  attributes?: Attributes;
  at?: bigint;
}

/** Base of every span handle: logging and generic child spans. */
export abstract class SpanHandle {
  constructor(readonly core: SpanCore) {
    // (the invocation's own handle has no parent, and is built before it can keep a list)
    if (core.parent) core.inv.opened(this);
  }
  get spanId(): string {
    return this.core.spanId;
  }
  get traceId(): string {
    return this.core.inv.traceId;
  }
  get ended(): boolean {
    return this.core.ended;
  }
  /** phase constant and unique_id of this span's context, for log attributes */
  protected context(): { phase?: string; uniqueId?: string } {
    return {};
  }

  /** Any LogRecord under this span. */
  log(o: LogOptions): void {
    const inv = this.core.inv;
    const [num, text] = SEVERITY[o.severity ?? 'info'];
    const at = o.at ?? inv.writer.clock();
    inv.used(at);
    const attrs = SortedAttrs.of(o.attributes ?? {});
    const r: JsonlRecord = {
      record_type: 'LogRecord', trace_id: inv.traceId, span_id: this.core.spanId, span_name: this.core.name,
      event_id: inv.writer.ids.uuidv7(Number(at / 1_000_000n)), time_unix_nano: at.toString(), severity_number: num,
      severity_text: text, body: o.body ?? '', event_type: inv.writer.eventType(o.event ?? 'log.LogMessage'), attributes: inv.writer.attributesOf(attrs),
    };
    inv.writer.emit(r, attrs, this.core, null, null);
  }

  /** An engine message (LogMessage) at the given level: errors carry code and original severity. */
  message(body: string, o: { severity?: SeverityName; code?: number; at?: bigint } = {}): void {
    const sev = o.severity ?? 'info';
    const ctx = this.context();
    const a: Attributes = { original_severity_number: SEVERITY[sev][0], original_severity_text: SEVERITY[sev][1] };
    if (o.code !== undefined) a.code = o.code;
    if (ctx.phase) a.phase = ctx.phase;
    if (ctx.uniqueId) a.unique_id = ctx.uniqueId;
    this.log({ event: 'log.LogMessage', severity: sev, body, attributes: a, at: o.at });
  }

  /** A jinja log()/print() call (UserLogMessage, DEBUG). */
  userLog(body: string, o: { relativePath?: string; line?: number; column?: number; packageName?: string; isPrint?: boolean; at?: bigint } = {}): void {
    const ctx = this.context();
    const a: Attributes = { dbt_core_event_code: o.isPrint ? 'Z052' : 'I063' };
    if (o.isPrint) a.is_print = true;
    if (o.line !== undefined) a.line = o.line;
    if (o.column !== undefined) a.column = o.column;
    if (o.packageName) a.package_name = o.packageName;
    if (o.relativePath) a.relative_path = o.relativePath;
    if (ctx.phase) a.phase = ctx.phase;
    if (ctx.uniqueId) a.unique_id = ctx.uniqueId;
    this.log({ event: 'log.UserLogMessage', severity: o.isPrint ? 'info' : 'debug', body, attributes: a, at: o.at });
  }

  /** A progress line (ProgressMessage, INFO). */
  progress(action: string, target: string, o: { description?: string; at?: bigint } = {}): void {
    const ctx = this.context();
    const a: Attributes = { action, target };
    if (o.description) a.description = o.description;
    if (ctx.phase) a.phase = ctx.phase;
    if (ctx.uniqueId) a.unique_id = ctx.uniqueId;
    this.log({ event: 'log.ProgressMessage', severity: 'info', attributes: a, at: o.at });
  }

  /** A generic child span of any event type (ArtifactWritten, AssetParsed, GenericOpExecuted, ...). */
  startSpan(o: { event: string; name: string; severity?: SeverityName; attributes?: Attributes; at?: bigint }): GenericSpan {
    const core = new SpanCore(this.core.inv, this.core, o.name, o.event, SEVERITY[o.severity ?? 'debug'][0], o.attributes ?? {}, o.at);
    this.core.inv.writeStart(core);
    return new GenericSpan(core);
  }
}

export class GenericSpan extends SpanHandle {
  end(o: { attributes?: Attributes; status?: SpanStatus | null; links?: Link[] | null; at?: bigint } = {}): void {
    if (o.attributes) this.core.update(o.attributes);
    this.core.inv.writeEnd(this.core, o.status ?? null, o.links ?? null, o.at);
  }
}

export interface InvocationEndOptions {
  at?: bigint;
  /** extra eval_args known only at the end (the engine adds target, for example) */
  evalArgs?: Attributes;
  /** default: "Executed with errors" (2) when any selected node errored or a test failed, else ok */
  status?: SpanStatus | null;
  autofixSuggestions?: number;
}

export interface NodeTally {
  nodeTypeShort: string;
  bucket: 'success' | 'warn' | 'error' | 'reused' | 'skipped' | 'canceled' | 'no_op';
}

export class Invocation extends SpanHandle {
  private readonly trace: string;
  readonly invocationId: string;
  readonly process: SpanCore;
  private readonly externalParent: string | null;
  private readonly tallies: NodeTally[] = [];
  /** spans of this run still open, in start order (ended at close() if the run was cut short) */
  private readonly live = new Map<SpanCore, SpanHandle>();
  /** the run gave its times (`at`): a cut-short run ends at its last time, not on the wall clock */
  private readonly explicitTimes: boolean;
  /** the latest time a record of this run carries */
  private last: bigint;

  constructor(
    readonly writer: TelemetryWriter,
    o: InvocationOptions,
  ) {
    const at = o.at ?? writer.clock();
    const invocationId = o.invocationId ?? writer.ids.uuidv7(Number(at / 1_000_000n));
    const self = { writer, traceId: traceIdOf(invocationId) } as unknown as Invocation;
    const processInfo: Attributes = { host_arch: writer.hostArch, host_os: writer.hostOs, package: writer.pkg, version: writer.version };
    const proc = new SpanCore(self, null, `${writer.pkg} process (${writer.hostArch}-${writer.hostOs})`, 'process.Process', 9, { ...processInfo }, o.processAt ?? at, o.spanIds?.process);
    const evalArgs: Attributes = { ...(o.command !== null ? { command: o.command } : {}), ...o.evalArgs };
    // an unknown command line is left out (the engine omits a string at its zero value), not made up
    const rawCommand = o.rawCommand !== undefined ? o.rawCommand : o.command !== null ? `dbt ${o.command}` : null;
    const core = new SpanCore(self, null, `${writer.pkg} invocation (${invocationId})`, 'invocation.Invocation', 9,
      { eval_args: evalArgs, invocation_id: invocationId, process_info: processInfo, ...(rawCommand ? { raw_command: rawCommand } : {}) }, at, o.spanIds?.invocation);
    super(core);
    this.trace = (self as unknown as { traceId: string }).traceId;
    this.invocationId = invocationId;
    this.process = proc;
    this.externalParent = o.parentSpanId ?? null;
    this.explicitTimes = o.at !== undefined;
    this.last = at;
    // The span cores were built against a stand-in; point them at the real handle.
    (proc as { inv: Invocation }).inv = this;
    (core as { inv: Invocation }).inv = this;
    if (o.parentSpanId) core.update({ parent_span_id: BigInt('0x' + o.parentSpanId).toString() });
    this.writeStart(proc);
    this.writeStart(core);
  }

  /** 32 hex: the invocation UUID without dashes */
  override get traceId(): string {
    return this.trace;
  }

  /** @internal a span handle of this run was made */
  opened(h: SpanHandle): void {
    this.live.set(h.core, h);
  }

  /** @internal a record of this run carries time `t` */
  used(t: bigint): void {
    if (t > this.last) this.last = t;
  }

  /** @internal */
  writeStart(s: SpanCore): void {
    this.used(s.start);
    const r: JsonlRecord = {
      record_type: 'SpanStart', trace_id: this.traceId, span_id: s.spanId, span_name: s.name,
      parent_span_id: s.parent?.spanId ?? this.externalParent, links: null, start_time_unix_nano: s.startText,
      severity_number: s.severity, severity_text: sevText(s.severity), event_type: this.writer.eventType(s.eventKey), attributes: this.writer.attributesOf(s.sorted),
    };
    this.writer.emit(r, s.sorted, s, s.parent, this.externalParent);
  }

  /** @internal */
  writeEnd(s: SpanCore, status: SpanStatus | null, links: Link[] | null, at: bigint | undefined): void {
    if (s.ended) throw new Error(`span ${s.name} already ended`);
    s.ended = true;
    s.end = at ?? this.writer.clock();
    if (s.end < s.start) s.end = s.start;
    this.live.delete(s);
    this.used(s.end);
    const attrs = s.sorted;
    const r: JsonlRecord = {
      record_type: 'SpanEnd', trace_id: this.traceId, span_id: s.spanId, span_name: s.name, parent_span_id: s.parent?.spanId ?? this.externalParent,
      links, start_time_unix_nano: s.startText, end_time_unix_nano: s.end.toString(), severity_number: s.severity,
      severity_text: sevText(s.severity), status, event_type: this.writer.eventType(s.eventKey), attributes: this.writer.attributesOf(attrs),
    };
    // Ended spans are often held until the run ends (node handles): let their attributes go.
    s.sorted = SortedAttrs.EMPTY;
    this.writer.emit(r, attrs, s, s.parent, this.externalParent);
  }

  startPhase(phase: string, o: { nodeCount?: number; at?: bigint; spanId?: string } = {}): Phase {
    const p = phaseConst(phase);
    const short = p.slice('EXECUTION_PHASE_'.length);
    const attrs: Attributes = { phase: p };
    if (o.nodeCount !== undefined) Object.assign(attrs, { node_count_error: '0', node_count_skipped: '0', node_count_total: u64(o.nodeCount) });
    const name = o.nodeCount !== undefined ? `Phase: ${short} (nodes: ${o.nodeCount})` : `Phase: ${short}`;
    const core = new SpanCore(this, this.core, name, 'phase.PhaseExecuted', 9, attrs, o.at, o.spanId);
    this.writeStart(core);
    return new Phase(core, p, o.nodeCount);
  }

  /** NodeProcessed for one node (spans all its phases). */
  startNode(info: NodeInfo, o: { at?: bigint; spanId?: string } = {}): Node {
    // The node's own attributes are serialized once here and reused by all of its records.
    const base = SortedAttrs.of(nodeBaseAttrs(info));
    const inSel = info.inSelection ?? true;
    const attrs = base.with({ dbt_core_event_code: 'Q024', group: info.group, in_selection: inSel ? true : undefined, source_name: info.sourceName });
    const core = new SpanCore(this, this.core, `Node processed (${info.uniqueId})`, 'node.NodeProcessed', 9, attrs, o.at, o.spanId);
    this.writeStart(core);
    return new Node(core, info, inSel, base);
  }

  /** An adapter-level query outside any node (parented to the invocation). */
  startQuery(q: QueryInfo, o: { at?: bigint; spanId?: string } = {}): Query {
    return Query.open(this.core, q, undefined, undefined, o.at, o.spanId);
  }

  /** ArtifactWritten span, opened and closed at once (or at `end`). */
  artifact(relativePath: string, artifactType: string, o: { at?: bigint; end?: bigint } = {}): void {
    const core = new SpanCore(this, this.core, `Artifact: ${relativePath}`, 'artifact.ArtifactWritten', 9,
      { artifact_type: `ARTIFACT_TYPE_${artifactType.toUpperCase().replace(/^ARTIFACT_TYPE_/, '')}`, relative_path: relativePath }, o.at);
    this.writeStart(core);
    this.writeEnd(core, null, null, o.end ?? o.at);
  }

  /** @internal */
  tally(t: NodeTally): void {
    this.tallies.push(t);
  }

  /** @internal the selected nodes seen so far (a helper thread hands its part's to the main thread) */
  get tallied(): readonly NodeTally[] {
    return this.tallies;
  }

  /** The metrics the invocation's SpanEnd carries (computed from selected nodes). */
  metrics(autofix = 0): Attributes {
    const typeCounts: Record<string, number> = {};
    const statusCounts: Record<string, number> = {};
    for (const t of this.tallies) {
      typeCounts[t.nodeTypeShort] = (typeCounts[t.nodeTypeShort] ?? 0) + 1;
      statusCounts[t.bucket] = (statusCounts[t.bucket] ?? 0) + 1;
    }
    const str = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));
    return {
      autofix_suggestions: String(autofix),
      node_type_counts: str(typeCounts),
      status_counts: str(statusCounts),
      total_errors: String(statusCounts.error ?? 0),
      total_warnings: String(statusCounts.warn ?? 0),
    };
  }

  /**
   * @internal End the run at close(). Spans still open mean the run was cut short (a crash before
   * its ends): as `record` ends an interrupted command, in-flight queries, evaluations and nodes end
   * canceled, other spans and the invocation in error, innermost first. At the run's last time when
   * it gave its times, else now.
   */
  endOpen(): void {
    const at = this.explicitTimes ? this.last : this.writer.clock();
    const depth = (h: SpanHandle) => {
      let d = 0;
      for (let s = h.core.parent; s; s = s.parent) d++;
      return d;
    };
    // innermost first; of siblings, the latest first
    const open = [...this.live.values()].reverse().sort((a, b) => depth(b) - depth(a));
    const status = { message: INTERRUPTED, code: 2 };
    for (const h of open) {
      if (h.ended) continue;
      if (h instanceof Query) h.end({ outcome: 'canceled', at });
      else if (h instanceof Evaluation) h.end(CANCELED, { at });
      else if (h instanceof Node) h.end(CANCELED, { at });
      else if (h instanceof Phase) h.end({ at, status });
      else if (h instanceof GenericSpan) h.end({ at, status });
    }
    this.end(open.length ? { at, status } : { at });
  }

  /**
   * The run's end is unknown (its record stops before it): the invocation and process spans are
   * left without their ends, and close() does not end them, so readers see a run that never ended.
   */
  leaveOpen(): void {
    this.writer.forget(this);
  }

  /** End the run: Invocation SpanEnd with metrics and status, then the Process SpanEnd. */
  end(o: InvocationEndOptions = {}): void {
    if (this.core.ended) return;
    const at = o.at ?? this.writer.clock();
    const metrics = this.metrics(o.autofixSuggestions);
    const errors = Number(metrics.total_errors);
    this.core.update({ eval_args: { ...(this.core.sorted.get('eval_args') as Attributes), ...o.evalArgs }, metrics });
    const status = o.status !== undefined ? o.status : errors > 0 ? { message: 'Executed with errors', code: 2 } : { message: null, code: 1 };
    this.writeEnd(this.core, status, null, at);
    this.writeEnd(this.process, null, null, at > this.process.start ? at : undefined);
    this.writer.forget(this);
  }
}

const INTERRUPTED = 'Interrupted: the writer was closed with spans still open';
const CANCELED: NodeResult = { outcome: 'canceled', cancelReason: 'user_cancelled' };

function sevText(n: number): string {
  return n >= 17 ? 'ERROR' : n >= 13 ? 'WARN' : n >= 9 ? 'INFO' : n >= 5 ? 'DEBUG' : 'TRACE';
}

export interface PhaseCounts {
  evaluated: number;
  errored: number;
  skipped: number;
}

export class Phase extends SpanHandle {
  private evaluated = 0;
  private errored = 0;
  private skipped = 0;
  constructor(core: SpanCore, readonly phase: string, readonly nodeCount?: number) {
    super(core);
  }
  protected override context() {
    return { phase: this.phase };
  }
  private evalAttrs?: SortedAttrs;
  /** @internal what every NodeEvaluated of this phase adds to its node's attributes (sorted once, not per node) */
  get evaluationAttrs(): SortedAttrs {
    return (this.evalAttrs ??= SortedAttrs.of({ dbt_core_event_code: evaluatedCode(this.phase), phase: this.phase }));
  }
  /** @internal evaluations seen so far, by kind (a helper thread hands its part's to the main thread) */
  get counted(): PhaseCounts {
    return { evaluated: this.evaluated, errored: this.errored, skipped: this.skipped };
  }
  /** @internal add evaluations counted elsewhere */
  addCounted(c: PhaseCounts): void {
    this.evaluated += c.evaluated;
    this.errored += c.errored;
    this.skipped += c.skipped;
  }
  /** @internal */
  count(outcome: string | undefined): void {
    this.evaluated++;
    if (outcome === 'NODE_OUTCOME_ERROR' || outcome === 'NODE_OUTCOME_CANCELED') this.errored++;
    if (outcome === 'NODE_OUTCOME_SKIPPED') this.skipped++;
  }
  /**
   * End the phase. With a node count, the counts and status come from the evaluations seen
   * (override with `counts`); without one the status is unset unless given.
   */
  end(o: { at?: bigint; counts?: { total?: number; skipped?: number; error?: number }; status?: SpanStatus | null } = {}): void {
    let status: SpanStatus | null = o.status ?? null;
    if (this.nodeCount !== undefined || o.counts) {
      const error = o.counts?.error ?? this.errored;
      const skipped = o.counts?.skipped ?? this.skipped;
      const total = o.counts?.total ?? this.nodeCount ?? this.evaluated;
      this.core.update({ node_count_error: u64(error), node_count_skipped: u64(skipped), node_count_total: u64(total) });
      if (o.status === undefined) status = error > 0 ? { message: `${error} nodes errored`, code: 2 } : { message: null, code: 1 };
    }
    this.core.inv.writeEnd(this.core, status, null, o.at);
  }
}

interface EvaluationRecord {
  phase: string;
  start: bigint;
  end: bigint;
  result: NodeResult;
  outcome: string | undefined;
}

export class Node extends SpanHandle {
  readonly nodeTypeConst: string;
  private readonly evaluations: EvaluationRecord[] = [];
  constructor(core: SpanCore, readonly info: NodeInfo, readonly inSelection: boolean, private readonly base: SortedAttrs) {
    super(core);
    this.nodeTypeConst = konst(NodeType, info.nodeType);
  }
  protected override context() {
    return { uniqueId: this.info.uniqueId };
  }
  /** NodeEvaluated for this node in `phase` (a child of the phase span). */
  evaluate(phase: Phase, o: { at?: bigint; spanId?: string } = {}): Evaluation {
    const attrs = this.base.with(phase.evaluationAttrs);
    const core = new SpanCore(this.core.inv, phase.core, `Node evaluated (${this.info.uniqueId})`, 'node.NodeEvaluated', 5, attrs, o.at, o.spanId);
    this.core.inv.writeStart(core);
    return new Evaluation(core, this, phase);
  }
  /** @internal */
  recordEvaluation(e: EvaluationRecord): void {
    this.evaluations.push(e);
  }
  /**
   * End the node. Without a result, the decisive evaluation decides: the first that errored or was
   * canceled, else the last one. duration_ms is the sum of the evaluations' durations.
   */
  end(result?: NodeResult, o: { at?: bigint } = {}): void {
    const evs = this.evaluations;
    const decisive = evs.find((e) => e.outcome === 'NODE_OUTCOME_ERROR' || e.outcome === 'NODE_OUTCOME_CANCELED') ?? evs[evs.length - 1];
    const r = result ?? decisive?.result ?? { outcome: 'success' };
    if (r.errorMessage && result) this.message(r.errorMessage, { severity: 'error', at: o.at });
    // A test's node-level result carries a test detail only when the test ran (a RUN-phase
    // evaluation); a test that was only compiled has none. Without evaluations the caller's result decides.
    const ran = evs.length === 0 || evs.some((e) => e.phase === 'EXECUTION_PHASE_RUN');
    const out = outcomeAttrs(r, this.nodeTypeConst, ran);
    if (!ran) delete out.node_test_detail;
    let ns = 0n;
    for (const e of evs) ns += e.end - e.start;
    // One sorted set of the outcome and these: not one for each, then merged (`out` is our own
    // fresh object; a spread copy of it costs more than the merge).
    const code = processedEndCode(this.nodeTypeConst, out);
    out.dbt_core_event_code = code;
    out.duration_ms = u64(ns / 1_000_000n);
    if (decisive?.phase !== undefined) out.last_phase = decisive.phase;
    this.core.update(SortedAttrs.of(out));
    this.core.inv.writeEnd(this.core, nodeStatus(out.node_outcome as string | undefined), null, o.at);
    if (this.inSelection) this.core.inv.tally({ nodeTypeShort: this.nodeTypeConst.slice('NODE_TYPE_'.length).toLowerCase(), bucket: bucketOf(out) });
  }
}

function bucketOf(a: Attributes): NodeTally['bucket'] {
  switch (a.node_outcome) {
    case 'NODE_OUTCOME_ERROR':
      return 'error';
    case 'NODE_OUTCOME_CANCELED':
      return 'canceled';
    case 'NODE_OUTCOME_SKIPPED':
      return a.node_skip_reason === 'NODE_SKIP_REASON_CACHED' ? 'reused' : a.node_skip_reason === 'NODE_SKIP_REASON_NO_OP' ? 'no_op' : 'skipped';
  }
  const t = a.node_test_detail as Attributes | undefined;
  if (t?.test_outcome === 'TEST_OUTCOME_FAILED') return 'error';
  if (t?.test_outcome === 'TEST_OUTCOME_WARNED') return 'warn';
  const w = a.node_evaluation_detail as Attributes | undefined;
  if (w?.node_warning_outcome === 'NODE_WARNING_OUTCOME_WITH_WARNINGS') return 'warn';
  return 'success';
}

export class Evaluation extends SpanHandle {
  constructor(core: SpanCore, readonly node: Node, readonly phase: Phase) {
    super(core);
  }
  protected override context() {
    return { phase: this.phase.phase, uniqueId: this.node.info.uniqueId };
  }
  startQuery(q: QueryInfo, o: { at?: bigint; spanId?: string } = {}): Query {
    return Query.open(this.core, q, this.phase.phase, this.node.info.uniqueId, o.at, o.spanId);
  }
  /** Compiled SQL of the node (CompiledCode, DEBUG). */
  compiledCode(sql: string, relativePath: string, o: { at?: bigint } = {}): void {
    const a: Attributes = { node_name: this.node.info.name ?? this.node.info.uniqueId.split('.').slice(-1)[0]!, relative_path: relativePath, sql, unique_id: this.node.info.uniqueId };
    this.log({ event: 'log.CompiledCode', severity: 'debug', attributes: a, at: o.at });
  }
  /** End this evaluation; tests in the RUN phase get a test detail (passed when not given). */
  end(result: NodeResult, o: { at?: bigint } = {}): void {
    if (result.errorMessage) this.message(result.errorMessage, { severity: 'error', at: o.at });
    const out = outcomeAttrs(result, this.node.nodeTypeConst, this.phase.phase === 'EXECUTION_PHASE_RUN');
    // The engine reports a test's detail only for the evaluation that ran it.
    if (!isTestType(this.node.nodeTypeConst) || this.phase.phase !== 'EXECUTION_PHASE_RUN') delete out.node_test_detail;
    this.core.update(out);
    const inv = this.core.inv;
    const link: Link = { trace_id: inv.traceId, span_id: this.node.core.spanId, attributes: {} };
    inv.writeEnd(this.core, nodeStatus(out.node_outcome as string | undefined), [link], o.at);
    this.phase.count(out.node_outcome as string | undefined);
    this.node.recordEvaluation({ phase: this.phase.phase, start: this.core.start, end: this.core.end!, result, outcome: out.node_outcome as string | undefined });
  }
}

export interface QueryInfo {
  sql: string;
  adapterType: string;
  description?: string;
}

export class Query extends SpanHandle {
  static open(parent: SpanCore, q: QueryInfo, phase: string | undefined, uniqueId: string | undefined, at: bigint | undefined, spanId?: string): Query {
    const a: Attributes = {
      adapter_type: q.adapterType, dbt_core_event_code: 'E016', query_description: q.description ?? 'execute adapter call', sql: q.sql,
      sql_hash: hash('md5', q.sql),
    };
    if (phase) a.phase = phase;
    if (uniqueId) a.unique_id = uniqueId;
    const core = new SpanCore(parent.inv, parent, uniqueId ? `Query executed (${uniqueId})` : 'Query executed', 'query.QueryExecuted', 5, a, at, spanId);
    parent.inv.writeStart(core);
    return new Query(core);
  }
  end(o: { outcome?: 'success' | 'error' | 'canceled'; queryId?: string; errorMessage?: string; vendorCode?: number; at?: bigint } = {}): void {
    const outcome = konst(QueryOutcome, o.outcome ?? 'success');
    this.core.update({
      dbt_core_event_code: 'E017', query_error_adapter_message: o.errorMessage || undefined, query_error_vendor_code: o.vendorCode,
      query_id: o.queryId || undefined, query_outcome: outcome,
    });
    const status = outcome === 'QUERY_OUTCOME_SUCCESS' ? { message: null, code: 1 } : { message: outcome === 'QUERY_OUTCOME_CANCELED' ? 'canceled' : 'error', code: 2 };
    this.core.inv.writeEnd(this.core, status, null, o.at);
  }
}
