/**
 * One copy of a run that several inputs of `migrate` hold (a run_results.json and the log of its
 * invocation, a copy of a file), built as a load keeps one reading the inputs in place
 * (src/store/dedupe.ts hideRecordsAlreadyPresent, in the order of read-in-place.ts detectInputs):
 * the first input's records; of each later input only the records not already written (identity:
 * recordIdentity); a later input's ERROR on a span raises the written copy of that span to ERROR.
 *
 * Streaming: a scan of the later inputs (translated into ScanSink, nothing kept but their traces
 * and the spans they end with ERROR) comes first, so that the first copy is written with its final
 * status; then each input is written through a SameRunSink. Only the identities of records of
 * shared traces that a later input may repeat are held.
 */
import type { JsonlRecord, SpanStatus } from '../produce/record.js';
import { LEVEL_SEVERITY, type TelemetrySink } from '../produce/sinks/types.js';
import { ForwardingSink } from '../produce/sinks/forwarding.js';
import { recordIdentity } from '../store/record-identity.js';

const spanKey = (r: { trace_id: string; span_id: string | null }) => `${r.trace_id}/${r.span_id}`;

/** Logs after every other input, each group in the given order: the artifact is the copy kept. */
export function logsLast<T>(items: readonly T[], isLog: (t: T) => boolean): T[] {
  return [...items.filter((t) => !isLog(t)), ...items.filter(isLog)];
}

/** An input's translation seen without writing it: its traces, and the spans it ends with ERROR (first one of each). */
export class ScanSink implements TelemetrySink {
  readonly name = 'scan';
  readonly traces = new Set<string>();
  readonly errors = new Map<string, SpanStatus>();
  constructor(readonly minSeverity: number = LEVEL_SEVERITY.debug) {}
  write(r: JsonlRecord): void {
    this.traces.add(r.trace_id);
    if (r.record_type === 'SpanEnd' && r.status?.code === 2 && !this.errors.has(spanKey(r))) this.errors.set(spanKey(r), r.status);
  }
  // (attributes are not needed: taking their text spares the writer building objects)
  writeJson(r: JsonlRecord): void {
    this.write(r);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

export interface InputPlan {
  /** traces of this input that another input holds */
  shared: Set<string>;
  /** a later input holds one of them: remember what is written */
  later: boolean;
  /** ERROR statuses later inputs give to spans (first later input first) */
  raise: Map<string, SpanStatus>;
}

/**
 * Which traces each input (in writing order) shares with others; `traces[k]` and `errors[k]` are
 * input k's (errors needed only for inputs that share a trace with an earlier one).
 */
export function planSameRun(traces: Set<string>[], errors: (Map<string, SpanStatus> | undefined)[]): InputPlan[] {
  return traces.map((own, k) => {
    const shared = new Set<string>();
    let later = false;
    const raise = new Map<string, SpanStatus>();
    for (const [j, other] of traces.entries()) {
      if (j === k) continue;
      const common = [...own].filter((t) => other.has(t));
      for (const t of common) shared.add(t);
      if (j > k && common.length > 0) {
        later = true;
        for (const [span, st] of errors[j] ?? []) if (own.has(span.slice(0, span.lastIndexOf('/'))) && !raise.has(span)) raise.set(span, st);
      }
    }
    return { shared, later, raise };
  });
}

/** Identities written so far of shared traces, for the inputs after them. */
export class WrittenRecords {
  private readonly seen = new Set<string>();

  /** The sink an input that shares a trace is written through. */
  sinkFor(inner: TelemetrySink, plan: InputPlan): TelemetrySink & { commit(): void } {
    return new SameRunSink(inner, plan, this.seen);
  }
}

/**
 * Writes one input: a record of a shared trace already written by an earlier input is left out, a
 * SpanEnd a later input ends with ERROR takes that status. What the input repeats of itself stays
 * (a load does not compare a file's records with each other); its records join the written ones
 * on commit(), when the input is done.
 */
class SameRunSink extends ForwardingSink {
  private readonly pending = new Set<string>();
  readonly writeJson?: (r: JsonlRecord, attributesJson: string) => void;

  constructor(inner: TelemetrySink, private readonly plan: InputPlan, private readonly seen: Set<string>) {
    super(inner);
    if (inner.writeJson) {
      this.writeJson = (r, json) => {
        const out = this.keep(r);
        if (out) inner.writeJson!(out, json);
      };
    }
  }

  write(r: JsonlRecord): void {
    const out = this.keep(r);
    if (out) this.inner.write(out);
  }

  commit(): void {
    for (const id of this.pending) this.seen.add(id);
    this.pending.clear();
  }

  private keep(r: JsonlRecord): JsonlRecord | null {
    if (!this.plan.shared.has(r.trace_id)) return r;
    const id = recordIdentity(r);
    if (this.seen.has(id)) return null;
    if (this.plan.later) this.pending.add(id);
    if (r.record_type === 'SpanEnd' && r.status?.code !== 2) {
      const raised = this.plan.raise.get(spanKey(r));
      if (raised) return { ...r, status: { code: raised.code, message: raised.message } };
    }
    return r;
  }
}
