/** What every sink implements. The writer isolates sinks: one failing never stops the others. */
import type { JsonlRecord } from '../record.js';

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** Lowest severity_number a level keeps. */
export const LEVEL_SEVERITY: Readonly<Record<Level, number>> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17 };

export interface TelemetrySink {
  /** shown when the sink fails, e.g. "jsonl logs/otel.jsonl" */
  readonly name: string;
  /** records with a lower severity_number are not sent here (parents re-pointed to kept ancestors) */
  readonly minSeverity: number;
  /** take one record; may throw (the writer reports it once and stops using the sink) */
  write(r: JsonlRecord): void;
  /**
   * Optional, for sinks that serialize: take the record with its attributes as engine JSON text.
   * When every sink a writer feeds has this, the writer does not build attribute objects at all and
   * `r.attributes` is an empty placeholder (building them would be CPU spent for nothing).
   */
  writeJson?(r: JsonlRecord, attributesJson: string): void;
  /** resolves when the sink's buffered output is back under its limit (backpressure for big runs) */
  drain?(): Promise<void>;
  /** flush and release; the Parquet sink writes its file here */
  close(): Promise<void>;
  /** set by sinks whose failures happen asynchronously (disk full, endpoint down) */
  error?: Error;
}

export function levelSeverity(level: Level | undefined, dflt: Level): number {
  return LEVEL_SEVERITY[level ?? dflt];
}
