/**
 * A `--log-format json` stream translated event by event onto TelemetryWriter, for `record` (live)
 * and `migrate` (files). Works from the debug stream (logs/dbt.log: NodeStart, NodeCompiling,
 * NodeExecuting, NodeFinished carry the lifecycle) and from the info stream printed on stdout
 * (LogStartLine and the result events only). One invocation_id = one trace; a stream may hold many.
 * Node outcomes go through the status table; in-flight nodes of an interrupted invocation end as
 * canceled; those of a stream that stops before its command ended stay open. SQLQuery/SQLQueryStatus
 * pairs become QueryExecuted spans under their node. A node's error is its own message
 * (NodeFinished's run_result.message), written once: the result and recap lines that repeat it are
 * kept as INFO lines with their original severity in an attribute. Span ids are derived
 * (span-ids.ts), as for run_results.json.
 */
import { createHash } from 'node:crypto';
import semver from 'semver';
import { traceIdOf } from '../produce/ids.js';
import type { Evaluation, Invocation, Node, Phase, SeverityName, TelemetryWriter } from '../produce/writer.js';
import { Query } from '../produce/writer.js';
import type { NodeResult } from '../produce/node-attrs.js';
import { commandOf } from '../telemetry/command-line.js';
import { upstreamSearch, type Manifest } from './manifest.js';
import { CULPRIT_OUTCOMES, culpritOf, outcomeOf } from './outcome.js';
import { nodeInfo, projectPath } from './resource.js';
import type { LegacyEvent, LegacyNodeInfo } from './log-events.js';
import { isoToNs, secondsToNs } from './time.js';
import { isCompileOnlyCommand, tableStatus } from '../telemetry/status-map.js';
import { countOutcome, newSummary, type MigrateSummary } from './from-run-results.js';
import { RunSpanIds } from './span-ids.js';

export interface LogSummary extends MigrateSummary {
  logRecords: number;
  queries: number;
  interrupted: boolean;
  completed: boolean;
  /**
   * the stream stopped before the lines that end the command: the run's end is unknown and its
   * invocation is left open (incomplete), unless the command is known to have exited (record)
   */
  cutOff: boolean;
}

export interface TranslatorOptions {
  manifest?: Manifest;
  /** the command when the stream does not say (record knows it from its arguments) */
  commandHint?: string;
  /**
   * the engine was asked to print less than info (--quiet, --log-level warn): its stream has no
   * closing lines, so only its exit says whether the command ended (record knows it from its arguments)
   */
  quiet?: boolean;
  /** a writer per invocation (the engine version goes into the process span; the key seeds its event ids) */
  writerFor: (version: string, seedKey: string) => TelemetryWriter;
}

/** Events whose content is the span structure itself; every other line becomes a LogRecord. */
const STRUCTURAL = new Set(['NodeStart', 'NodeCompiling', 'NodeExecuting', 'NodeFinished', 'MainReportVersion', 'SQLQuery', 'SQLQueryStatus']);
const RESULT_EVENTS = new Set([
  'LogModelResult', 'LogTestResult', 'LogSeedResult', 'LogSnapshotResult', 'LogNodeResult', 'LogNodeNoOpResult',
  'LogFunctionResult', 'LogFreshnessResult', 'LogHookEndLine',
]);
const START_EVENTS = new Set(['LogStartLine', 'LogHookStartLine']);
/**
 * Lines that report a node's result or repeat its error (progress lines, end-of-run recaps): kept at
 * INFO, so that a node's error text is its error, not "1 of 5 ERROR creating ..." nor the recap.
 */
const ECHO_EVENTS = new Set([
  ...RESULT_EVENTS, ...START_EVENTS, 'SkippingDetails', 'LogSkipBecauseError', 'LogCancelLine', 'EndOfRunSummary', 'StatsLine',
  'RunResultWarning', 'RunResultFailure', 'RunResultError', 'RunResultErrorNoMessage', 'RunResultWarningMessage',
]);
/** End-of-run recaps that carry a node's error text (for nodes whose stream had no NodeFinished). */
const RECAP_ERRORS = new Set(['RunResultError', 'RunResultErrorNoMessage']);
/** level -> writer severity and the original severity text (one per log line: no per-line upper-casing) */
const SEVERITY = new Map<string, readonly [SeverityName, string]>([
  ['debug', ['debug', 'DEBUG']], ['info', ['info', 'INFO']], ['warn', ['warn', 'WARN']], ['warning', ['warn', 'WARN']], ['error', ['error', 'ERROR']],
]);
const INFO = SEVERITY.get('info')!;

interface NodeState {
  node: Node;
  uid: string;
  resourceType: string;
  start: bigint;
  /** NodeStart seen: the node ends with NodeFinished, not with its result line */
  debugLifecycle: boolean;
  render?: Evaluation;
  run?: Evaluation;
  /** hooks: their one evaluation, opened with the hook */
  main?: Evaluation;
  failures?: number;
  /** its result line (debug stream): the result when its NodeFinished never comes (a damaged or lost line) */
  result?: { n: LegacyNodeInfo; ev: LegacyEvent; at: bigint };
  queries: number;
}

interface PhaseState {
  phase: Phase;
  last: bigint;
}

interface OpenQuery {
  query: Query;
  uid: string;
}

class InvocationState {
  inv: Invocation;
  ids: RunSpanIds;
  /** null once the node ended: its spans are written, and holding 100k finished nodes' handles made long streams slow */
  nodes = new Map<string, NodeState | null>();
  phases = new Map<string, PhaseState>();
  culprits = new Set<string>();
  /** per thread, the query it runs */
  queries = new Map<string, OpenQuery>();
  /** queries outside any node */
  invocationQueries = 0;
  /** nodes that errored without a message (the info stream): their recap line is their error */
  errorUnknown = new Set<string>();
  adapterType: string;
  last: bigint;
  interrupted = false;
  /** the stream has CommandCompleted */
  completed = false;
  /** the command is known to have failed or been killed (record saw its process end so), whatever the stream says */
  exited = false;
  /** the command's process exited 0 (record): it ended the run only where the stream cannot say */
  exitedWell = false;
  /** the stream has the end-of-run summary (StatsLine, EndOfRunSummary) */
  summarized = false;
  /** the stream has debug lines (logs/dbt.log), not only stdout's info and above */
  debugStream = false;
  /** a model, seed, snapshot or test got its result: the command is one that ends with the end-of-run summary */
  builtNodes = false;
  /** the engine said the command failed (CommandCompleted success false, MainEncounteredError): its words */
  failure: string | undefined;
  summary: LogSummary;
  constructor(inv: Invocation, readonly command: string, at: bigint, readonly legacyId: string, adapterType: string, readonly version: string) {
    this.inv = inv;
    this.ids = new RunSpanIds(inv.traceId);
    this.last = at;
    this.adapterType = adapterType;
    this.summary = { ...newSummary(inv.traceId, inv.invocationId, command), logRecords: 0, queries: 0, interrupted: false, completed: false, cutOff: false };
  }
}

interface Pending {
  invocationId: string;
  version: string;
  versionSeen?: boolean;
  prelude: LegacyEvent[];
  at: bigint;
  rawCommand?: string;
  command?: string;
  adapterType?: string;
}

/** A UUID for a stream without invocation ids (made from what the stream says, so it is stable). */
function derivedInvocationId(p: Pending): string {
  const x = createHash('sha256').update(`${p.version}|${p.at}|${p.rawCommand ?? ''}`).digest('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export class LogTranslator {
  readonly summaries: LogSummary[] = [];
  private cur: InvocationState | null = null;
  private pending: Pending | null = null;
  private lastTs = 0n;
  private readonly finished = new Set<string>();
  constructor(private readonly o: TranslatorOptions) {}

  /** The invocation in progress (for tests and for record's summary). */
  get current(): LogSummary | null {
    return this.cur?.summary ?? null;
  }

  feed(ev: LegacyEvent): void {
    const at = ev.ts ?? this.lastTs;
    if (at > this.lastTs) this.lastTs = at;
    const invId = ev.invocationId;
    // Lines after CommandCompleted (FlushEvents, ...) belong to a finished trace: dropped.
    if (invId && this.finished.has(invId)) return;
    // dbt.log is appended to by every command: a new invocation_id ends the previous invocation, at
    // its own last line (one cut off by a kill is followed by the next command, maybe days later).
    if (invId && this.pending?.invocationId && invId !== this.pending.invocationId) this.startPending();
    if (invId && this.cur?.legacyId && invId !== this.cur.legacyId) this.endInvocation();
    if (!this.cur && !this.pending) this.pending = { invocationId: invId ?? '', version: 'unknown', at, prelude: [] };
    const p = this.pending;
    if (p) {
      // The invocation opens at its first event after MainReportVersion/MainReportArgs, once the
      // version and command are known; lines before it (SendingEvent, ...) wait in a short buffer.
      if (ev.name === 'MainReportVersion') {
        p.version = String(ev.data.version ?? '').replace(/^=/, '') || 'unknown';
        p.versionSeen = true;
        if (at < p.at || p.prelude.length === 0) p.at = at;
        return;
      }
      if (ev.name === 'MainReportArgs') {
        const args = (ev.data.args ?? {}) as Record<string, unknown>;
        const raw = typeof args.invocation_command === 'string' ? args.invocation_command : undefined;
        p.rawCommand = raw;
        p.command = (typeof args.which === 'string' ? args.which : undefined) ?? commandOf(raw) ?? undefined;
        return;
      }
      if (ev.name === 'AdapterRegistered' && typeof ev.data.adapter_name === 'string') p.adapterType = ev.data.adapter_name;
      if (!p.versionSeen && p.prelude.length < 256 && !ev.node) {
        p.prelude.push(ev);
        return;
      }
      this.startPending();
    } else if (ev.name === 'MainReportVersion') {
      // A second invocation with no id change (ids missing): end the first, at its own last line.
      this.endInvocation();
      this.pending = { invocationId: invId ?? '', version: String(ev.data.version ?? '').replace(/^=/, '') || 'unknown', at, prelude: [], versionSeen: true };
      return;
    }
    const s = this.cur!;
    if (at > s.last) s.last = at;
    this.handle(s, ev, at);
  }

  private startPending(): void {
    const p = this.pending!;
    this.pending = null;
    const known = p.command ?? this.o.commandHint ?? null;
    const command = known ?? 'unknown';
    const invocationId = isInvocationId(p.invocationId) ? p.invocationId : derivedInvocationId(p);
    const w = this.o.writerFor(p.version, invocationId);
    const inv = w.startInvocation({
      command: known, invocationId, at: p.at, processAt: p.at - 1000n, rawCommand: p.rawCommand ?? null, evalArgs: { legacy_dbt_version: p.version },
      spanIds: new RunSpanIds(traceIdOf(invocationId)).head(),
    });
    this.cur = new InvocationState(inv, command, p.at, p.invocationId, p.adapterType ?? 'unknown', p.version);
    for (const ev of p.prelude) this.handle(this.cur, ev, ev.ts ?? p.at);
  }

  private handle(s: InvocationState, ev: LegacyEvent, at: bigint): void {
    const n = ev.node;
    if (ev.level === 'debug') s.debugStream = true;
    switch (ev.name) {
      case 'AdapterRegistered':
        if (typeof ev.data.adapter_name === 'string') s.adapterType = ev.data.adapter_name;
        break;
      case 'NodeStart':
        if (n) {
          const st = this.open(s, n, at);
          if (st) st.debugLifecycle = true;
        }
        return;
      case 'NodeCompiling':
        if (n && !this.isHook(n) && !this.compileOnly(s)) {
          const st = this.open(s, n, at);
          if (st) st.render ??= this.evaluate(s, st, 'render', at);
        }
        return;
      case 'NodeExecuting':
        if (n && !this.isHook(n) && !this.compileOnly(s)) {
          const st = this.open(s, n, at);
          if (!st) return;
          if (st.render && !st.render.ended) this.endEval(s, st.render, 'render', { outcome: 'success' }, at);
          st.run ??= this.evaluate(s, st, 'run', at);
        }
        return;
      case 'NodeFinished':
        if (n) this.finish(s, n, ev, at);
        return;
      case 'SQLQuery':
        this.startQuery(s, ev, at);
        return;
      case 'SQLQueryStatus':
        this.endQuery(s, ev.thread, 'success', at, typeof ev.data.query_id === 'string' ? ev.data.query_id : undefined);
        return;
      case 'MarkSkippedChildren': {
        const id = ev.data.unique_id;
        const status = String(ev.data.status ?? '');
        if (typeof id === 'string' && /^(error|fail|partial success|runtime error)$/.test(status)) s.culprits.add(id);
        break;
      }
      case 'SkippingDetails':
      case 'LogSkipBecauseError':
        if (n) {
          const st = this.open(s, n, at);
          // Skipped without NodeStart (on-run-start failed, or the info stream): this line is the result.
          if (st && !st.debugLifecycle) this.finish(s, { ...n, status: 'skipped' }, ev, at);
        }
        break;
      case 'LogCancelLine':
      case 'MainKeyboardInterrupt':
        s.interrupted = true;
        break;
      case 'EndOfRunSummary':
        if (ev.data.keyboard_interrupt === true) s.interrupted = true;
        else s.summarized = true;
        break;
      case 'StatsLine':
        s.summarized = true;
        break;
      case 'MainEncounteredError':
        s.failure ??= ev.msg.split('\n')[0]!.replace(/:\s*$/, '') || 'Encountered an error';
        break;
      case 'CommandCompleted':
        this.log(ev, at);
        s.completed = true;
        if (ev.data.success === false) s.failure = ev.msg || 'the command failed';
        this.endInvocation(isoToNs(ev.data.completed_at) ?? at);
        return;
      default:
        if (n && START_EVENTS.has(ev.name)) this.open(s, n, at);
        else if (n && RESULT_EVENTS.has(ev.name)) {
          const st = this.open(s, n, at);
          if (st && typeof ev.data.num_failures === 'number') st.failures = ev.data.num_failures;
          if (st && !st.debugLifecycle) this.finish(s, n, ev, at);
          else if (st) st.result = { n, ev, at };
        } else if (n && RECAP_ERRORS.has(ev.name) && s.errorUnknown.delete(n.uniqueId)) {
          // the info stream's only text of this node's error
          this.log(ev, at, { severity: SEVERITY.get('error')!, body: dedent(ev.msg) });
          return;
        }
    }
    if (!STRUCTURAL.has(ev.name)) this.log(ev, at);
  }

  private isHook(n: LegacyNodeInfo): boolean {
    return n.resourceType === 'operation' || /^operation\./.test(n.uniqueId);
  }
  private compileOnly(s: InvocationState): boolean {
    return isCompileOnlyCommand(s.command);
  }
  private mainPhase(s: InvocationState, uid: string): string {
    if (/^operation\./.test(uid)) return /on-run-end/.test(uid) ? 'on_run_end' : 'on_run_start';
    return this.compileOnly(s) ? 'render' : 'run';
  }

  /**
   * The phase, opened by its first evaluation: at `at`, or just before a node in flight started when
   * that is earlier (an evaluation placed by its timing after the fact may start before the line
   * that opens the phase), and after the phases opened before it.
   */
  private phase(s: InvocationState, name: string, at: bigint): Phase {
    let p = s.phases.get(name);
    if (!p) {
      let start = at;
      for (const st of s.nodes.values()) if (st && st.start - 1n < start) start = st.start - 1n;
      for (const q of s.phases.values()) if (q.phase.core.start >= start) start = q.phase.core.start + 1n;
      p = { phase: s.inv.startPhase(name, { at: start, spanId: s.ids.phase(name) }), last: at };
      s.phases.set(name, p);
    }
    return p.phase;
  }

  private evaluate(s: InvocationState, st: NodeState, phase: string, at: bigint): Evaluation {
    return st.node.evaluate(this.phase(s, phase, at), { at, spanId: s.ids.evaluation(phase, st.uid) });
  }

  private endEval(s: InvocationState, e: Evaluation, phase: string, r: NodeResult, at: bigint): void {
    e.end(r, { at });
    const p = s.phases.get(phase)!;
    if (at > p.last) p.last = at;
  }

  /** The node's state, opened at its first line; null once it ended. */
  private open(s: InvocationState, n: LegacyNodeInfo, at: bigint): NodeState | null {
    let st = s.nodes.get(n.uniqueId);
    if (st === undefined) {
      const m = this.o.manifest?.nodes.get(n.uniqueId);
      if (this.o.manifest) s.summary.inManifest = (s.summary.inManifest ?? 0) + (m ? 1 : 0);
      const resourceType = n.resourceType || n.uniqueId.split('.')[0]!;
      // the manifest's description where it has one, else the log's node_info
      const info = nodeInfo(n.uniqueId, {
        name: m?.name ?? n.name, materialized: m?.materialized ?? n.materialized, database: m?.database ?? n.database, schema: m?.schema ?? n.schema,
        alias: m?.alias ?? n.alias, resourceType, sourceName: m?.sourceName, relativePath: m?.relativePath ?? projectPath(resourceType, n.uniqueId, n.path),
      });
      st = { node: s.inv.startNode(info, { at, spanId: s.ids.node(n.uniqueId) }), uid: n.uniqueId, resourceType, start: at, debugLifecycle: false, queries: 0 };
      s.nodes.set(n.uniqueId, st);
      s.summary.nodes++;
      // a hook's statements run in its phase from its start
      if (this.isHook(n)) st.main = this.evaluate(s, st, this.mainPhase(s, n.uniqueId), at);
    }
    return st;
  }

  private startQuery(s: InvocationState, ev: LegacyEvent, at: bigint): void {
    const sql = typeof ev.data.sql === 'string' ? ev.data.sql : '';
    // A query still open on this thread got no status line: it ended when the next one started.
    this.endQuery(s, ev.thread, 'success', at);
    const conn = typeof ev.data.conn_name === 'string' && ev.data.conn_name ? ev.data.conn_name : undefined;
    const q = { sql, adapterType: s.adapterType, description: conn ? `connection ${conn}` : undefined };
    const st = ev.node ? s.nodes.get(ev.node.uniqueId) : undefined;
    let query: Query;
    if (st) {
      const e = [st.run, st.render, st.main].find((x) => x && !x.ended);
      const spanId = s.ids.query(st.uid, st.queries++);
      query = e ? e.startQuery(q, { at, spanId }) : Query.open(st.node.core, q, undefined, st.uid, at, spanId);
    } else query = s.inv.startQuery(q, { at, spanId: s.ids.query('', s.invocationQueries++) });
    s.queries.set(ev.thread, { query, uid: st?.uid ?? '' });
    s.summary.queries++;
  }

  private endQuery(s: InvocationState, thread: string, outcome: 'success' | 'error' | 'canceled', at: bigint, queryId?: string, errorMessage?: string): void {
    const q = s.queries.get(thread);
    if (!q) return;
    s.queries.delete(thread);
    q.query.end({ outcome, queryId, errorMessage, at });
  }

  /** Queries of a node still open when it ends: they failed with it (or were canceled). */
  private endNodeQueries(s: InvocationState, uid: string, outcome: 'success' | 'error' | 'canceled', at: bigint, errorMessage?: string): void {
    for (const [thread, q] of s.queries) if (q.uid === uid) this.endQuery(s, thread, outcome, at, undefined, outcome === 'error' ? errorMessage : undefined);
  }

  /** The node's result: NodeFinished (debug stream), a result line or a skip line (info stream). */
  private finish(s: InvocationState, n: LegacyNodeInfo, ev: LegacyEvent, at: bigint): void {
    const st = this.open(s, n, at);
    if (!st) return;
    const rr = (ev.data.run_result ?? {}) as Record<string, unknown>;
    let message = typeof rr.message === 'string' && rr.message ? rr.message : null;
    // The run_result's status, else the one a 1.0-1.3 result line's code gives, else node_info's,
    // else the result line's (a test's; on a model it is the adapter's message, "CREATE VIEW"); a
    // status none of the statuses runlens knows is an error.
    const given = (x: unknown) => (typeof x === 'string' && x !== '' ? x : undefined);
    let status = [rr.status, ev.status, n.status, ev.data.status].map(given).map((x) => x && tableStatus(x)).find((x) => x !== undefined);
    const nodeStatus = given(n.status);
    const unknown = given(rr.status) ?? (nodeStatus && !NOT_A_RESULT.has(nodeStatus.toLowerCase()) ? nodeStatus : undefined);
    if (status === undefined && unknown !== undefined) {
      status = 'error';
      message = `the log gives the status "${unknown}", which runlens does not know${message ? `: ${message}` : ''}`;
    }
    status ??= ev.level === 'error' ? 'error' : 'success';
    if (status === 'success' && n.materialized === 'ephemeral') status = 'ephemeral';
    const failures = typeof rr.num_failures === 'number' ? rr.num_failures : st.failures;
    const ar = (rr.adapter_response ?? {}) as Record<string, unknown>;
    const rows = typeof ar.rows_affected === 'number' && ar.rows_affected >= 0 ? Math.trunc(ar.rows_affected) : undefined;
    const { mapping, result } = outcomeOf({ status, resourceType: st.resourceType, message, command: s.command, failures, rowsAffected: rows });
    if (mapping.node_outcome === 'error' && message === null) {
      // The info stream says only "error": its text comes with the end-of-run recap.
      delete result.errorMessage;
      s.errorUnknown.add(st.uid);
    }
    if (CULPRIT_OUTCOMES(mapping)) s.culprits.add(st.uid);
    if (mapping.skip_reason === 'upstream') {
      const up = culpritOf(st.uid, message ?? (ev.name === 'LogSkipBecauseError' ? ev.msg : null), s.culprits, upstreamSearch(this.o.manifest, st.uid, (x) => s.culprits.has(x)));
      if (up) result.upstreamUniqueId = up;
      else s.summary.upstreamUnknown++;
    }
    // The engine's own timing of compile and execute (as run_results.json has it), else this line's time.
    const timing = timingOf(rr.timing_info, st.start, at);
    const runEnd = timing.execute?.end ?? at;
    this.endNodeQueries(s, st.uid, mapping.node_outcome === 'error' ? 'error' : 'success', runEnd, message ?? undefined);
    const main = this.mainPhase(s, n.uniqueId);
    const seconds = typeof rr.execution_time === 'number' ? rr.execution_time : ev.data.execution_time;
    if (st.main) {
      this.endEval(s, st.main, main, result, at);
    } else if (st.run) {
      if (st.render && !st.render.ended) this.endEval(s, st.render, 'render', { outcome: 'success' }, timing.compile?.end ?? at);
      this.endEval(s, st.run, 'run', result, runEnd);
    } else if (st.render && (main === 'render' || mapping.node_outcome === 'error')) {
      this.endEval(s, st.render, 'render', result, timing.compile?.end ?? at);
    } else if (!st.render && main === 'run' && timing.compile && !timing.execute) {
      // only compiled (as in run_results.json): an error while compiling, anything else still ended there
      this.evaluateAt(s, st, 'render', timing.compile, result);
    } else {
      if (st.render) this.endEval(s, st.render, 'render', { outcome: 'success' }, timing.compile?.end ?? at);
      else if (main === 'run' && timing.compile) this.evaluateAt(s, st, 'render', timing.compile, { outcome: 'success' });
      // No line opened it (no NodeExecuting; the info stream): the engine's execute timing, else its
      // execution_time up to this line.
      const work = (main === 'run' ? timing.execute : timing.all) ?? { start: maxOf(st.start, at - secondsToNs(seconds)), end: at };
      this.evaluateAt(s, st, main, work, result);
    }
    st.node.end(undefined, { at });
    s.nodes.set(st.uid, null);
    if (BUILT_TYPES.has(st.resourceType)) s.builtNodes = true;
    countOutcome(s.summary, mapping);
  }

  /** An evaluation no line opened, placed where the engine says it ran. */
  private evaluateAt(s: InvocationState, st: NodeState, phase: string, w: Window, result: NodeResult): void {
    const e = this.evaluate(s, st, phase, w.start);
    if (phase === 'render') st.render = e;
    this.endEval(s, e, phase, result, w.end);
  }

  private log(ev: LegacyEvent, at: bigint, o: { severity?: readonly [SeverityName, string]; body?: string } = {}): void {
    const s = this.cur;
    if (!s) return;
    const st = ev.node ? s.nodes.get(ev.node.uniqueId) : undefined;
    const span = st ? ([st.run, st.render, st.main].find((e) => e && !e.ended) ?? st.node) : s.inv;
    const [sev, sevText] = o.severity ?? SEVERITY.get(ev.level) ?? INFO;
    const attrs: Record<string, string | number> = { dbt_core_event_code: ev.code, legacy_event_name: ev.name, original_severity_text: sevText };
    if (ev.node) attrs.unique_id = ev.node.uniqueId;
    span.log({ event: 'log.LogMessage', severity: !o.severity && ECHO_EVENTS.has(ev.name) ? 'info' : sev, body: o.body ?? ev.msg, attributes: attrs, at });
    s.summary.logRecords++;
  }

  /** Ctrl-C: the in-flight nodes of the current invocation end as canceled. */
  interrupt(at?: bigint): void {
    if (this.cur) this.cur.interrupted = true;
    this.end(at);
  }

  /**
   * End of stream: whatever is still open ends, nodes still in flight as canceled, unless the stream
   * stopped before the lines that end its command (then it all stays open, see endInvocation).
   * `exited`: the command's process is known to have ended (record saw it); not well, a run whose
   * stream stops early ended in error. `exitedWell`: it exited 0. The process may be a replay (`cat FILE`), whose
   * exit says nothing of the engine's: a stream that stops before its closing lines is cut off as
   * when read in place; the exit ends the run only when the stream has no such lines (closingLines).
   */
  end(at?: bigint, o: { exited?: boolean; exitedWell?: boolean } = {}): void {
    if (this.pending && !this.cur) this.startPending();
    if (this.cur && o.exited && !o.exitedWell) this.cur.exited = true;
    if (this.cur && o.exitedWell) this.cur.exitedWell = true;
    if (this.cur) this.endInvocation(at);
  }

  /** `at`: when it ended, if known (CommandCompleted, an interrupt); else, and never before, its last line. */
  private endInvocation(at?: bigint): void {
    const s = this.cur;
    if (!s) return;
    this.cur = null;
    if (s.legacyId) this.finished.add(s.legacyId);
    if (at === undefined || at < s.last) at = s.last;
    const canceled: NodeResult = { outcome: 'canceled', cancelReason: 'user_cancelled' };
    const wasInterrupted = s.interrupted; // (in-flight nodes are canceled below, which marks it too)
    const closing = this.o.quiet ? null : closingLines(s);
    const ended = s.completed || (s.summarized && closing !== 'CommandCompleted') || (s.exitedWell && closing === null);
    const cutOff = !ended && !wasInterrupted && closing !== null;
    s.summary.completed = ended;
    s.summary.cutOff = cutOff;
    if (cutOff && !s.exited && !s.failure) {
      // Nothing says how (or whether) the command ended: the log may still be growing. What has not
      // ended stays open (the invocation, phases, nodes, queries: their starts only, as the engine's
      // own telemetry cut off), so every reader takes the run as incomplete, and a later read of the
      // whole log only adds the ends; an end made up here would be kept over the real one.
      s.inv.leaveOpen();
      this.summaries.push(s.summary);
      return;
    }
    // A node whose NodeFinished is missing but whose result line came ended with that result.
    for (const st of [...s.nodes.values()]) if (st?.result) this.finish(s, st.result.n, st.result.ev, st.result.at);
    for (const thread of [...s.queries.keys()]) this.endQuery(s, thread, s.interrupted ? 'canceled' : 'success', at);
    const running: string[] = [];
    for (const st of s.nodes.values()) {
      if (!st) continue;
      running.push(st.uid);
      for (const [e, ph] of [[st.render, 'render'], [st.run, 'run'], [st.main, this.mainPhase(s, st.uid)]] as const) if (e && !e.ended) this.endEval(s, e, ph, canceled, at);
      if (!st.render && !st.run && !st.main) {
        const main = this.mainPhase(s, st.uid);
        this.endEval(s, this.evaluate(s, st, main, at), main, canceled, at);
      }
      st.node.end(undefined, { at });
      s.summary.outcomes.canceled = (s.summary.outcomes.canceled ?? 0) + 1;
      s.interrupted = true;
    }
    for (const p of s.phases.values()) p.phase.end({ at: p.last, counts: {} });
    s.summary.interrupted = s.interrupted;
    // A failed command is a failed run even when no node failed (a parse error stops it before any);
    // so is a log that stops before the lines that end every such command when the command is known
    // to have failed or been killed (record). A log taken as whole (a command that exited 0) whose
    // nodes never finished was not interrupted: its status says what is known, that those nodes'
    // ends are missing.
    const shown = running.slice(0, 3).join(', ') + (running.length > 3 ? `, … ${running.length - 3} more` : '');
    const cutOffText = `the log ends before the command did (no ${closing})`;
    const status = wasInterrupted ? { message: 'Interrupted', code: 2 }
      : s.failure ? { message: s.failure, code: 2 }
      : cutOff ? { message: cutOffText, code: 2 }
      : running.length ? { message: `the log ends while ${running.length === 1 ? '1 node was' : `${running.length} nodes were`} still running (${shown})`, code: 2 }
      : undefined;
    s.inv.end({ at, ...(status ? { status } : {}) });
    this.summaries.push(s.summary);
  }
}

/** Commands whose info stream ends with the end-of-run summary (StatsLine, EndOfRunSummary). */
const SUMMARY_COMMANDS = new Set(['build', 'run', 'test', 'seed', 'snapshot']);
/** Resource types only those commands give results of. */
const BUILT_TYPES = new Set(['model', 'seed', 'snapshot', 'test', 'unit_test']);

/**
 * The lines every complete stream of this invocation ends with: CommandCompleted in a debug stream
 * of 1.5 or later (the summary before it is not the end: the engine still writes artifacts), else
 * the end-of-run summary for a command that prints one (named, or known by its results when stdout
 * does not name it). null: the stream may end without them (an info stream of `compile`, a debug
 * stream of 1.4 of a command without the summary).
 */
function closingLines(s: InvocationState): 'CommandCompleted' | 'end-of-run summary' | null {
  const v = s.debugStream ? semver.coerce(s.version) : null;
  if (v !== null && semver.gte(v, '1.5.0')) return 'CommandCompleted';
  if (SUMMARY_COMMANDS.has(s.command) || (s.command === 'unknown' && s.builtNodes)) return 'end-of-run summary';
  return null;
}

function isInvocationId(id: string): boolean {
  try {
    return id !== '' && traceIdOf(id) !== '';
  } catch {
    return false;
  }
}

interface Window {
  start: bigint;
  end: bigint;
}

const maxOf = (a: bigint, b: bigint) => (a > b ? a : b);
const minOf = (a: bigint, b: bigint) => (a < b ? a : b);

/**
 * The compile and execute timings of a run_result with both ends, and the window of all of them;
 * kept within the node's lines [from, to] (one clock writes both; this keeps a span inside its node).
 */
function timingOf(v: unknown, from: bigint, to: bigint): { compile?: Window; execute?: Window; all?: Window } {
  const out: { compile?: Window; execute?: Window; all?: Window } = {};
  if (!Array.isArray(v)) return out;
  for (const t of v as Record<string, unknown>[]) {
    const start = isoToNs(t?.started_at);
    const end = isoToNs(t?.completed_at);
    if (start === null || end === null) continue;
    const w = { start: minOf(maxOf(start, from), to), end: minOf(maxOf(end, from), to) };
    if (t.name === 'compile') out.compile ??= w;
    else if (t.name === 'execute') out.execute ??= w;
    out.all = out.all ? { start: minOf(out.all.start, w.start), end: maxOf(out.all.end, w.end) } : w;
  }
  return out;
}

/** The recap's text without the indentation the engine adds to every line of it. */
function dedent(text: string): string {
  const lines = text.split('\n');
  // (reduce, not Math.min(...): a spread of a long text's every line can overflow the stack)
  const pad = lines.filter((l) => l.trim()).reduce((m, l) => Math.min(m, /^ */.exec(l)![0].length), Infinity);
  return lines.map((l) => l.slice(pad)).join('\n').trim();
}

/** node_info.node_status values that are no result: a node still running, or none given. */
const NOT_A_RESULT = new Set(['started', 'compiling', 'executing', 'none']);
