/**
 * Sinks for an output path (.jsonl or .parquet by extension, optional OTLP), each wrapped so that
 * a test node's NodeProcessed carries a test outcome only when the test ran (last phase RUN):
 * compile-only commands must not report "passed" for tests that were only compiled.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { CountingSink } from '../produce/sinks/counting.js';
import { JsonlSink } from '../produce/sinks/jsonl.js';
import type { TelemetrySink } from '../produce/sinks/types.js';
import { UsageError } from '../errors.js';
import { claimOutput, type OutputClaim } from '../produce/output-claim.js';
import { STDOUT } from '../produce/output-path.js';

export type OutFormat = 'jsonl' | 'parquet';

export function outFormat(out: string): OutFormat {
  if (out === STDOUT) return 'jsonl';
  if (/\.jsonl$/i.test(out)) return 'jsonl';
  if (/\.parquet$/i.test(out)) return 'parquet';
  throw new UsageError(`output ${out}: name it *.jsonl or *.parquet (the extension picks the format)`);
}

/**
 * One output shared by the writers of several runs: writers close their sinks, so only finish()
 * closes it. The output file's sink holds its claim (lock, file written beside) until release().
 */
export class SharedSink extends CountingSink {
  constructor(
    inner: TelemetrySink,
    readonly claim?: OutputClaim,
  ) {
    super(inner);
  }
  override close(): Promise<void> {
    return this.drain();
  }
  finish(): Promise<void> {
    return this.inner.close();
  }
}

/** A failure of a sink other than the output, "OTLP export to URL: reason", said as "OTLP export to URL failed: reason" */
export function failedSink(failure: string): string {
  return failure.replace(/^(OTLP export to \S+): /, '$1 failed: ');
}

export interface SinkOptions {
  /** also stream to OTLP (endpoint from OTEL_EXPORTER_OTLP_* variables) */
  otlp?: boolean;
  /** a live command is recorded: the OTLP export must never make it wait (OtlpSinkOptions.live) */
  live?: boolean;
  /** lowest level kept (default debug: NodeEvaluated spans are DEBUG and the model needs them) */
  level?: 'trace' | 'debug' | 'info';
  /**
   * write beside the output, to be put in its place by `claim.commit()` (migrate); else the file is
   * written in place from empty, read live as it grows (record)
   */
  beside?: boolean;
  /** the output, claimed already (else it is claimed here) */
  claim?: OutputClaim;
}

/**
 * The Parquet (parquet-wasm, Arrow) and OTLP (OpenTelemetry SDK) sinks are imported only when asked
 * for: loading them slows start-up, which a JSONL `record` would add to every command.
 */
export async function openSinks(out: string, o: SinkOptions = {}): Promise<SharedSink[]> {
  const format = outFormat(out);
  const level = o.level ?? 'debug';
  const otlp = o.otlp ? (await import('../produce/sinks/otlp.js')).otlpSink : undefined;
  let main: TelemetrySink;
  let claim: OutputClaim | undefined;
  if (out === STDOUT) main = new JsonlSink({ stream: process.stdout, level });
  else {
    // Absolute path: the sinks place bare names under logs/ or target/metadata/ like the engine.
    claim = o.claim ?? claimOutput(path.resolve(out), { beside: o.beside });
    try {
      if (!o.beside) rmSync(claim.file, { force: true });
      const file = claim.writePath;
      main = format === 'parquet' ? new (await import('../produce/sinks/parquet.js')).ParquetSink({ path: file, level }) : new JsonlSink({ path: file, append: false, level });
    } catch (e) {
      claim.release();
      throw e;
    }
  }
  // The OTLP copy gets what the file gets: a backend's view of the run is the file's.
  const sinks = otlp ? [main, otlp({ level, live: o.live })] : [main];
  return sinks.map((s, i) => new SharedSink(s, i === 0 ? claim : undefined));
}
