/**
 * Span ids of translated runs, derived from what a span stands for (the invocation, a phase, a node,
 * one evaluation of a node, the n-th query of a node) instead of drawn at random. The same run read
 * from run_results.json, from its log, or from a migrated copy then has the same ids, so the model
 * keeps one copy of each record (identity: trace, span, record type), and translating a file twice
 * gives the same output.
 */
import xxhashWasm from 'xxhash-wasm';
import { keyedIds, uuidv7FromHex, type IdSource } from '../produce/ids.js';

const { h64ToString } = await xxhashWasm();

/** 16 hex digits for `key` within the trace (never all zero). */
export function spanIdFor(traceId: string, key: string): string {
  const id = h64ToString(`${traceId}/${key}`);
  return id === '0000000000000000' ? '0000000000000001' : id;
}

/** The keyed ids of one run. */
export class RunSpanIds {
  constructor(readonly traceId: string) {}
  head(): { process: string; invocation: string } {
    return { process: this.key('process'), invocation: this.key('invocation') };
  }
  phase(name: string): string {
    return this.key(`phase/${name}`);
  }
  node(uniqueId: string): string {
    return this.key(`node/${uniqueId}`);
  }
  evaluation(phase: string, uniqueId: string): string {
    return this.key(`evaluation/${phase}/${uniqueId}`);
  }
  /** the n-th query (0-based) of a node, or of the invocation when `uniqueId` is empty */
  query(uniqueId: string, n: number): string {
    return this.key(`query/${uniqueId}/${n}`);
  }
  private key(k: string): string {
    return spanIdFor(this.traceId, k);
  }
}

/**
 * Ids for everything else a translated run draws (event ids of log records): a sequence seeded by
 * the run itself, so that translating the same input twice writes the same bytes.
 */
export function idsFor(seedKey: string): IdSource {
  return keyedIds(seedKey);
}

/**
 * A translated run's ids beyond its keyed span ids: event ids of log records. While a node is
 * written (`node(key)`) they are derived from the node's key and their number under it, so the
 * node's log records get the same ids whichever thread writes it and however the run's nodes are
 * split between threads; elsewhere they come from `base`.
 */
export class RunIds implements IdSource {
  private key: string | null = null;
  private n = 0;
  constructor(private readonly base: IdSource) {}
  /** ids of the node of this key from here on (null: the run's own sequence again) */
  node(key: string | null): void {
    this.key = key;
    this.n = 0;
  }
  spanId(): string {
    return this.base.spanId();
  }
  uuidv7(unixMs: number): string {
    if (this.key === null) return this.base.uuidv7(unixMs);
    const k = `${this.key}/${this.n++}`;
    return uuidv7FromHex(unixMs, h64ToString(k) + h64ToString(`${k}/more`).slice(0, 4));
  }
}
