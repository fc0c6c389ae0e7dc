/**
 * A `--log-format json` stream translated event by event onto TelemetryWriter, for `record` (live)
 * and `migrate` (files). Works from the debug stream (logs/dbt.log: NodeStart, NodeCompiling,
 * NodeExecuting, NodeFinished carry the lifecycle) and from the info stream printed on stdout
 * (LogStartLine and the result events only). One invocation_id = one trace; a stream may hold many.
 * Node outcomes go through the status table; in-flight nodes of an interrupted or cut-off
 * invocation end as canceled.
 */
import type { Evaluation, Invocation, Node, Phase, SeverityName, TelemetryWriter } from '../produce/writer.js';
import type { NodeResult } from '../produce/node-attrs.js';
import { commandOf } from './run-results.js';
import { nearestUpstream, type Manifest } from './manifest.js';
import { CULPRIT_OUTCOMES, culpritOf, outcomeOf } from './outcome.js';
import { nodeInfo } from './resource.js';
import type { LegacyEvent, LegacyNodeInfo } from './log-events.js';
import { isoToNs } from './time.js';
import type { MigrateSummary } from './from-run-results.js';

export interface LogSummary extends MigrateSummary {
  logRecords: number;
  interrupted: boolean;
  completed: boolean;
}

export interface TranslatorOptions {
  manifest?: Manifest;
  /** the command when the stream does not say (record knows it from its arguments) */
  commandHint?: string;
  /** a writer per invocation (the engine version goes into the process span) */
  writerFor: (version: string) => TelemetryWriter;
}

/** Events whose content is the span structure itself; every other line becomes a LogRecord. */
const STRUCTURAL = new Set(['NodeStart', 'NodeCompiling', 'NodeExecuting', 'NodeFinished', 'MainReportVersion']);
const RESULT_EVENTS = new Set([
  'LogModelResult', 'LogTestResult', 'LogSeedResult', 'LogSnapshotResult', 'LogNodeResult', 'LogNodeNoOpResult',
  'LogFunctionResult', 'LogFreshnessResult', 'LogHookEndLine',
]);
const START_EVENTS = new Set(['LogStartLine', 'LogHookStartLine']);
const COMPILE_ONLY = new Set(['compile', 'generate', 'docs', 'show']);
/** level -> writer severity and the original severity text (one per log line: no per-line upper-casing) */
const SEVERITY = new Map<string, readonly [SeverityName, string]>([
  ['debug', ['debug', 'DEBUG']], ['info', ['info', 'INFO']], ['warn', ['warn', 'WARN']], ['warning', ['warn', 'WARN']], ['error', ['error', 'ERROR']],
]);
const INFO = SEVERITY.get('info')!;

interface NodeState {
  node: Node;
  uid: string;
  resourceType: string;
  /** NodeStart seen: the node ends with NodeFinished, not with its result line */
  debugLifecycle: boolean;
  render?: Evaluation;
  run?: Evaluation;
  failures?: number;
  skipMessage?: string;
}

interface PhaseState {
  phase: Phase;
  last: bigint;
}

class InvocationState {
  inv: Invocation;
  /** null once the node ended: its spans are written, and holding 100k finished nodes' handles made long streams slow */
  nodes = new Map<string, NodeState | null>();
  phases = new Map<string, PhaseState>();
  culprits = new Set<string>();
  last: bigint;
  interrupted = false;
  completed = false;
  /** the engine said the command failed (CommandCompleted success false, MainEncounteredError): its words */
  failure: string | undefined;
  summary: LogSummary;
  constructor(inv: Invocation, readonly command: string, at: bigint, readonly legacyId: string) {
    this.inv = inv;
    this.last = at;
    this.summary = { traceId: inv.traceId, invocationId: inv.invocationId, command, nodes: 0, outcomes: {}, upstreamUnknown: 0, logRecords: 0, interrupted: false, completed: false };
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
    // dbt.log is appended to by every command: a new invocation_id ends the previous invocation.
    if (invId && this.pending?.invocationId && invId !== this.pending.invocationId) this.startPending();
    if (invId && this.cur?.legacyId && invId !== this.cur.legacyId) this.endInvocation(this.lastTs);
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
      if (!p.versionSeen && p.prelude.length < 256 && !ev.node) {
        p.prelude.push(ev);
        return;
      }
      this.startPending();
    } else if (ev.name === 'MainReportVersion') {
      // A second invocation with no id change (ids missing): end the first.
      this.endInvocation(at);
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
    const command = p.command ?? this.o.commandHint ?? 'unknown';
    const w = this.o.writerFor(p.version);
    const inv = w.startInvocation({ command, invocationId: p.invocationId || undefined, at: p.at, rawCommand: p.rawCommand ?? `dbt ${command}`, evalArgs: { legacy_dbt_version: p.version } });
    this.cur = new InvocationState(inv, command, p.at, p.invocationId);
    for (const ev of p.prelude) this.handle(this.cur, ev, ev.ts ?? p.at);
  }

  private handle(s: InvocationState, ev: LegacyEvent, at: bigint): void {
    const n = ev.node;
    switch (ev.name) {
      case 'NodeStart':
        if (n) {
          const st = this.open(s, n, at);
          if (st) st.debugLifecycle = true;
        }
        return;
      case 'NodeCompiling':
        if (n && !this.isHook(n) && !this.compileOnly(s)) {
          const st = this.open(s, n, at);
          if (st) st.render ??= st.node.evaluate(this.phase(s, 'render', at), { at });
        }
        return;
      case 'NodeExecuting':
        if (n && !this.isHook(n) && !this.compileOnly(s)) {
          const st = this.open(s, n, at);
          if (!st) return;
          if (st.render && !st.render.ended) this.endEval(s, st.render, 'render', { outcome: 'success' }, at);
          st.run ??= st.node.evaluate(this.phase(s, 'run', at), { at });
        }
        return;
      case 'NodeFinished':
        if (n) this.finish(s, n, ev, at);
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
        else s.completed = true; // the info stream has no CommandCompleted (debug)
        break;
      case 'StatsLine':
        s.completed = true;
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
        }
    }
    if (!STRUCTURAL.has(ev.name)) this.log(ev, at);
  }

  private isHook(n: LegacyNodeInfo): boolean {
    return n.resourceType === 'operation' || /^operation\./.test(n.uniqueId);
  }
  private compileOnly(s: InvocationState): boolean {
    return COMPILE_ONLY.has(s.command);
  }
  private mainPhase(s: InvocationState, n: LegacyNodeInfo): string {
    if (this.isHook(n)) return /on-run-end/.test(n.uniqueId) ? 'on_run_end' : 'on_run_start';
    return this.compileOnly(s) ? 'render' : 'run';
  }

  private phase(s: InvocationState, name: string, at: bigint): Phase {
    let p = s.phases.get(name);
    if (!p) {
      p = { phase: s.inv.startPhase(name, { at }), last: at };
      s.phases.set(name, p);
    }
    return p.phase;
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
      const info = nodeInfo(n.uniqueId, { name: n.name, relativePath: n.path, materialized: n.materialized, database: n.database, schema: n.schema, alias: n.alias, resourceType: n.resourceType });
      st = { node: s.inv.startNode(info, { at }), uid: n.uniqueId, resourceType: n.resourceType || n.uniqueId.split('.')[0]!, debugLifecycle: false };
      s.nodes.set(n.uniqueId, st);
      s.summary.nodes++;
    }
    return st;
  }

  /** The node's result: NodeFinished (debug stream), a result line or a skip line (info stream). */
  private finish(s: InvocationState, n: LegacyNodeInfo, ev: LegacyEvent, at: bigint): void {
    const st = this.open(s, n, at);
    if (!st) return;
    const rr = (ev.data.run_result ?? {}) as Record<string, unknown>;
    let status = typeof rr.status === 'string' && rr.status ? rr.status : n.status;
    if (!known(status)) status = typeof ev.data.status === 'string' && known(ev.data.status) ? ev.data.status : ev.level === 'error' ? 'error' : 'success';
    if (status === 'success' && n.materialized === 'ephemeral') status = 'ephemeral';
    const message = typeof rr.message === 'string' ? rr.message : null;
    const failures = typeof rr.num_failures === 'number' ? rr.num_failures : st.failures;
    const ar = (rr.adapter_response ?? {}) as Record<string, unknown>;
    const rows = typeof ar.rows_affected === 'number' && ar.rows_affected >= 0 ? Math.trunc(ar.rows_affected) : undefined;
    const { mapping, result } = outcomeOf({ status, resourceType: st.resourceType, message, command: s.command, failures, rowsAffected: rows });
    if (CULPRIT_OUTCOMES(mapping)) s.culprits.add(st.uid);
    if (mapping.skip_reason === 'upstream') {
      const m = this.o.manifest;
      const up = culpritOf(st.uid, message ?? (ev.name === 'LogSkipBecauseError' ? ev.msg : null), s.culprits, m && ((id) => nearestUpstream(m, id, (x) => s.culprits.has(x))));
      if (up) result.upstreamUniqueId = up;
      else s.summary.upstreamUnknown++;
    }
    const main = this.mainPhase(s, n);
    if (st.run) {
      if (st.render && !st.render.ended) this.endEval(s, st.render, 'render', { outcome: 'success' }, at);
      this.endEval(s, st.run, 'run', result, at);
    } else if (st.render && (main === 'render' || mapping.node_outcome === 'error')) {
      this.endEval(s, st.render, 'render', result, at);
    } else {
      if (st.render) this.endEval(s, st.render, 'render', { outcome: 'success' }, at);
      this.endEval(s, st.node.evaluate(this.phase(s, main, at), { at }), main, result, at);
    }
    st.node.end(undefined, { at });
    s.nodes.set(st.uid, null);
    s.summary.outcomes[mapping.node_outcome] = (s.summary.outcomes[mapping.node_outcome] ?? 0) + 1;
  }

  private log(ev: LegacyEvent, at: bigint): void {
    const s = this.cur;
    if (!s) return;
    const st = ev.node ? s.nodes.get(ev.node.uniqueId) : undefined;
    const span = st ? (st.run && !st.run.ended ? st.run : st.render && !st.render.ended ? st.render : st.node) : s.inv;
    const [sev, sevText] = SEVERITY.get(ev.level) ?? INFO;
    const attrs: Record<string, string | number> = { dbt_core_event_code: ev.code, legacy_event_name: ev.name, original_severity_text: sevText };
    if (ev.node) attrs.unique_id = ev.node.uniqueId;
    span.log({ event: 'log.LogMessage', severity: sev, body: ev.msg, attributes: attrs, at });
    s.summary.logRecords++;
  }

  /** Ctrl-C: the in-flight nodes of the current invocation end as canceled. */
  interrupt(at?: bigint): void {
    if (this.cur) this.cur.interrupted = true;
    this.end(at);
  }

  /** End of stream: whatever is still open ends; nodes still in flight end as canceled. */
  end(at?: bigint): void {
    if (this.pending && !this.cur) this.startPending();
    if (this.cur) this.endInvocation(at ?? this.lastTs);
  }

  private endInvocation(at: bigint): void {
    const s = this.cur;
    if (!s) return;
    this.cur = null;
    if (s.legacyId) this.finished.add(s.legacyId);
    if (at < s.last) at = s.last;
    const canceled: NodeResult = { outcome: 'canceled', cancelReason: 'user_cancelled' };
    for (const st of s.nodes.values()) {
      if (!st) continue;
      for (const [e, ph] of [[st.render, 'render'], [st.run, 'run']] as const) if (e && !e.ended) this.endEval(s, e, ph, canceled, at);
      if (!st.render && !st.run) {
        const main = /^operation\./.test(st.uid) ? (/on-run-end/.test(st.uid) ? 'on_run_end' : 'on_run_start') : this.compileOnly(s) ? 'render' : 'run';
        this.endEval(s, st.node.evaluate(this.phase(s, main, at), { at }), main, canceled, at);
      }
      st.node.end(undefined, { at });
      s.summary.outcomes.canceled = (s.summary.outcomes.canceled ?? 0) + 1;
      s.interrupted = true;
    }
    for (const p of s.phases.values()) p.phase.end({ at: p.last, counts: {} });
    s.summary.interrupted = s.interrupted;
    s.summary.completed = s.completed;
    // A failed command is a failed run even when no node failed (a parse error stops it before any).
    const status = s.interrupted ? { message: 'Interrupted', code: 2 } : s.failure ? { message: s.failure, code: 2 } : undefined;
    s.inv.end({ at, ...(status ? { status } : {}) });
    this.summaries.push(s.summary);
  }
}

const KNOWN = /^(success|error|skipped|pass|warn|fail|partial success|no-op|reused|runtime error|ephemeral)$/;
function known(s: unknown): s is string {
  return typeof s === 'string' && KNOWN.test(s);
}
