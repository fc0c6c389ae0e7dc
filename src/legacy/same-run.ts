/**
 * One copy of a run that several inputs of `migrate` hold (a run_results.json and the log of its
 * invocation, a copy of a file), built as a load keeps one reading the inputs in place
 * (src/store/dedupe.ts hideRecordsAlreadyPresent, in the order of read-in-place.ts detectInputs):
 * the first input's records; of each later input only the records not already written (identity:
 * recordIdentity); where a later input's ending of a span ranks above the written copy's (worse: an
 * ERROR status, a worse node or test outcome; or alike and saying more), the written copy takes it.
 *
 * Streaming: a scan of the later inputs (translated into ScanSink, nothing kept but their traces
 * and their endings that say an ERROR or an outcome) comes first, so that the first copy is written
 * with its final ending; then each input is written through a SameRunSink. Only the identities of
 * records of shared traces that a later input may repeat are held.
 */
import type { Attributes, JsonlRecord, SpanEndRecord, SpanStatus } from '../produce/record.js';
import { LEVEL_SEVERITY, type TelemetrySink } from '../produce/sinks/types.js';
import { ForwardingSink } from '../produce/sinks/forwarding.js';
import { OUTCOMES_BETTER_TO_WORSE, TEST_OUTCOMES_BETTER_TO_WORSE, recordIdentity } from '../store/record-identity.js';
import { NodeOutcome, NodeSkipReason, TestOutcome, normalizeEnum } from '../telemetry/enums.js';

const spanKey = (r: { trace_id: string; span_id: string | null }) => `${r.trace_id}/${r.span_id}`;

/** How a copy ends a span: what a worse copy gives the written one (as src/store/dedupe.ts takeWorseSql). */
export interface SpanEnding {
  status: SpanStatus | null;
  attributes: Attributes;
}

/** The node outcome's attributes (with the skip's), and the test outcome's. */
const OUTCOME_KEYS = ['node_outcome', 'node_skip_reason', 'node_skip_upstream_detail'] as const;
const TEST_KEYS = ['node_test_detail', 'failing_rows_recorded'] as const;

const outcomeRank = (a: Attributes) => OUTCOMES_BETTER_TO_WORSE.indexOf(normalizeEnum(NodeOutcome, a.node_outcome) as never) + 1;
const testRank = (a: Attributes) => {
  const detail = a.node_test_detail as Attributes | null | undefined;
  return detail ? TEST_OUTCOMES_BETTER_TO_WORSE.indexOf(normalizeEnum(TestOutcome, detail.test_outcome) as never) + 1 : 0;
};
const errorStatus = (e: SpanEnding) => e.status?.code === 2;
const ENDED_WELL: SpanEnding = { status: null, attributes: {} };

/**
 * A test's failing rows as the model reads them (normalize-sql.ts: rl_count, an INTEGER): none is 0,
 * unless the span says the count was not recorded; an integer or its digits as text; -1 for a count
 * not recorded or one the model cannot hold.
 */
const failingRows = (a: Attributes) => {
  const v = (a.node_test_detail as Attributes).failing_rows;
  if (v === undefined || v === null) return a.failing_rows_recorded === false ? -1 : 0;
  const n = Number(v);
  return /^-?[0-9]+$/.test(String(v)) && n >= -(2 ** 31) && n < 2 ** 31 ? n : -1;
};
/** How an ending ranks, compared in order as src/store/dedupe.ts STATUS_KEY, OUTCOME_KEY and TEST_KEY. */
type Key = (number | string)[];
const statusKey = (e: SpanEnding): Key => {
  const error = errorStatus(e);
  return [Number(error), Number(error && e.status!.message != null), error ? (e.status!.message ?? '') : ''];
};
const outcomeKey = (a: Attributes): Key => {
  const upstream = (a.node_skip_upstream_detail as Attributes | null | undefined)?.upstream_unique_id ?? a.upstream_unique_id;
  return [outcomeRank(a), normalizeEnum(NodeSkipReason, a.node_skip_reason ?? a.skip_reason) ?? '', typeof upstream === 'string' ? upstream : ''];
};
const testKey = (a: Attributes): Key => {
  const rank = testRank(a);
  return [rank, rank > 1 ? failingRows(a) : 0];
};
/** Text compared by its UTF-8 bytes, as DuckDB compares VARCHAR. */
const above = (a: Key, b: Key) => {
  const i = a.findIndex((v, k) => v !== b[k]);
  if (i < 0) return false;
  const [x, y] = [a[i]!, b[i]!];
  return typeof x === 'string' ? Buffer.compare(Buffer.from(x), Buffer.from(String(y))) > 0 : x > Number(y);
};
const worseStatus = (a: SpanEnding, b: SpanEnding) => above(statusKey(a), statusKey(b));
const worseOutcome = (a: SpanEnding, b: SpanEnding) => above(outcomeKey(a.attributes), outcomeKey(b.attributes));
const worseTest = (a: SpanEnding, b: SpanEnding) => above(testKey(a.attributes), testKey(b.attributes));

/** `a` ranks above `b` in some way: it is worse, or alike and says more (or the greater). */
const worse = (a: SpanEnding, b: SpanEnding) => worseStatus(a, b) || worseOutcome(a, b) || worseTest(a, b);

/** `r` (a SpanEnd, or an ending kept) with what `w` says worse of the span's ending; `r` itself when nothing. */
function withWorse<T extends SpanEnding>(r: T, w: SpanEnding): T {
  if (!worse(w, r)) return r;
  const out: T = { ...r, attributes: { ...r.attributes } };
  if (worseStatus(w, r)) out.status = { code: w.status!.code, message: w.status!.message };
  const take = (keys: readonly string[]) => {
    for (const k of keys) {
      if (w.attributes[k] === undefined) delete out.attributes[k];
      else out.attributes[k] = w.attributes[k]!;
    }
  };
  if (worseOutcome(w, r)) take(OUTCOME_KEYS);
  if (worseTest(w, r)) take(TEST_KEYS);
  return out;
}

/** Logs after every other input, each group in the given order: the artifact is the copy kept. */
export function logsLast<T>(items: readonly T[], isLog: (t: T) => boolean): T[] {
  return [...items.filter((t) => !isLog(t)), ...items.filter(isLog)];
}

/** An input's translation seen without writing it: its traces, and how it ends spans (the highest-ranked of each span's endings that say an ERROR or an outcome). */
export class ScanSink implements TelemetrySink {
  readonly name = 'scan';
  readonly traces = new Set<string>();
  readonly errors = new Map<string, SpanEnding>();
  constructor(readonly minSeverity: number = LEVEL_SEVERITY.debug) {}
  write(r: JsonlRecord): void {
    this.traces.add(r.trace_id);
    if (r.record_type !== 'SpanEnd') return;
    // (only what an ending gives a copy is kept: most node endings are kept)
    const attributes = Object.fromEntries([...OUTCOME_KEYS, ...TEST_KEYS].filter((k) => r.attributes[k] !== undefined).map((k) => [k, r.attributes[k]!]));
    const ending = { status: r.status, attributes };
    if (!worse(ending, ENDED_WELL)) return;
    const before = this.errors.get(spanKey(r));
    this.errors.set(spanKey(r), before ? withWorse(before, ending) : ending);
  }
  // Attributes as text spare the writer building objects: only a SpanEnd that may end worse (an
  // ERROR, a node's, which carries its outcome and test detail) has its attributes parsed.
  writeJson(r: JsonlRecord, attributesJson: string): void {
    const mayBeWorse = r.record_type === 'SpanEnd' && (r.status?.code === 2 || r.event_type?.includes('.node.') === true);
    if (mayBeWorse) this.write({ ...r, attributes: JSON.parse(attributesJson) as Attributes });
    else this.traces.add(r.trace_id);
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
  /** how later inputs end spans (the highest-ranked of each, the first later input's where equal) */
  raise: Map<string, SpanEnding>;
}

/**
 * Which traces each input (in writing order) shares with others; `traces[k]` and `errors[k]` are
 * input k's (errors needed only for inputs that share a trace with an earlier one).
 */
export function planSameRun(traces: Set<string>[], errors: (Map<string, SpanEnding> | undefined)[]): InputPlan[] {
  return traces.map((own, k) => {
    const shared = new Set<string>();
    let later = false;
    const raise = new Map<string, SpanEnding>();
    for (const [j, other] of traces.entries()) {
      if (j === k) continue;
      const common = [...own].filter((t) => other.has(t));
      for (const t of common) shared.add(t);
      if (j > k && common.length > 0) {
        later = true;
        for (const [span, st] of errors[j] ?? []) {
          if (!own.has(span.slice(0, span.lastIndexOf('/')))) continue;
          const had = raise.get(span);
          raise.set(span, had ? withWorse(had, st) : st);
        }
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
 * SpanEnd a later input ends worse takes what is worse (withWorse). What the input repeats of itself stays
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
        if (!this.keep(r)) return;
        const later = this.laterEnding(r);
        if (later) {
          // (the record's attributes are in their text: a copy that takes a worse ending is written whole)
          const own = { ...(r as SpanEndRecord), attributes: JSON.parse(json) as Attributes };
          const out = withWorse(own, later);
          if (out !== own) return inner.write(out);
        }
        inner.writeJson!(r, json);
      };
    }
  }

  write(r: JsonlRecord): void {
    if (!this.keep(r)) return;
    const later = this.laterEnding(r);
    this.inner.write(later ? withWorse(r as SpanEndRecord, later) : r);
  }

  commit(): void {
    for (const id of this.pending) this.seen.add(id);
    this.pending.clear();
  }

  /** The record is not one an earlier input wrote. */
  private keep(r: JsonlRecord): boolean {
    if (!this.plan.shared.has(r.trace_id)) return true;
    const id = recordIdentity(r);
    if (this.seen.has(id)) return false;
    if (this.plan.later) this.pending.add(id);
    return true;
  }

  /** How a later input ends this SpanEnd's span badly, if one does (withWorse compares). */
  private laterEnding(r: JsonlRecord): SpanEnding | undefined {
    return r.record_type === 'SpanEnd' && this.plan.shared.has(r.trace_id) ? this.plan.raise.get(spanKey(r)) : undefined;
  }
}
