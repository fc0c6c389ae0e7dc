/**
 * Sinks for an output path (.jsonl or .parquet by extension, optional OTLP), each wrapped so that
 * a test node's NodeProcessed carries a test outcome only when the test ran (last phase RUN):
 * compile-only commands must not report "passed" for tests that were only compiled.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { JsonlRecord } from '../produce/record.js';
import { JsonlSink } from '../produce/sinks/jsonl.js';
import { otlpSink } from '../produce/sinks/otlp.js';
import { ParquetSink } from '../produce/sinks/parquet.js';
import type { TelemetrySink } from '../produce/sinks/types.js';
import { UsageError } from '../errors.js';

export type OutFormat = 'jsonl' | 'parquet';

export function outFormat(out: string): OutFormat {
  if (/\.jsonl$/i.test(out)) return 'jsonl';
  if (/\.parquet$/i.test(out)) return 'parquet';
  throw new UsageError(`output ${out}: name it *.jsonl or *.parquet (the extension picks the format)`);
}

export class TestDetailGuard implements TelemetrySink {
  records = 0;
  constructor(readonly inner: TelemetrySink) {}
  get name() {
    return this.inner.name;
  }
  get minSeverity() {
    return this.inner.minSeverity;
  }
  get error() {
    return this.inner.error;
  }
  write(r: JsonlRecord): void {
    if (r.record_type === 'SpanEnd' && r.attributes.node_test_detail && r.attributes.last_phase && r.attributes.last_phase !== 'EXECUTION_PHASE_RUN' && r.event_type.endsWith('NodeProcessed')) {
      const { node_test_detail: _drop, ...rest } = r.attributes;
      r = { ...r, attributes: rest };
    }
    this.inner.write(r);
    this.records++;
  }
  drain(): Promise<void> {
    return this.inner.drain ? this.inner.drain() : Promise.resolve();
  }
  /** Writers close their sinks; one output is shared by a writer per run, so only finish() closes it. */
  close(): Promise<void> {
    return this.drain();
  }
  finish(): Promise<void> {
    return this.inner.close();
  }
}

export interface SinkOptions {
  /** also stream to OTLP (endpoint from OTEL_EXPORTER_OTLP_* variables) */
  otlp?: boolean;
  /** lowest level kept (default debug: NodeEvaluated spans are DEBUG and the model needs them) */
  level?: 'trace' | 'debug' | 'info';
}

export function openSinks(out: string, o: SinkOptions = {}): TestDetailGuard[] {
  const format = outFormat(out);
  // Absolute path: the sinks place bare names under logs/ or target/metadata/ like the engine.
  const abs = path.resolve(out);
  rmSync(abs, { force: true });
  const level = o.level ?? 'debug';
  const sinks: TelemetrySink[] = [format === 'jsonl' ? new JsonlSink({ path: abs, append: false, level }) : new ParquetSink({ path: abs, level })];
  if (o.otlp) sinks.push(otlpSink({ level: 'info' }));
  return sinks.map((s) => new TestDetailGuard(s));
}
