/**
 * An OTLP client sends a request again when it did not get the answer (a timeout, a connection cut
 * after the receiver stored the records): the receiver acknowledges the copy and does not store it
 * again, as a load does not add a record already in the model. Only a later request repeats records:
 * within one, records alike are all kept, as a load keeps every line of one file. It remembers the
 * identities of the records it accepted recently, in two generations: a generation ends after
 * GENERATION_MS or GENERATION_RECORDS records, and the one before it is forgotten, so memory stays
 * bounded on a stream that never ends. Exporters retry within minutes (OpenTelemetry's default gives up after 5).
 */
import { hash } from 'node:crypto';
import type { LiveRows } from '../store/live.js';

export const GENERATION_MS = 5 * 60_000;
export const GENERATION_RECORDS = 500_000;

export class ResentRecords {
  private current = new Set<string>();
  private previous = new Set<string>();
  private since: number;

  constructor(private readonly now: () => number = Date.now) {
    this.since = now();
  }

  /**
   * The rows of one request not received in an earlier one, and how many were. Records alike within
   * one request are all kept: a retry resends a whole request, and a load keeps every record of a
   * file (two log lines alike are two events).
   */
  keep(rows: LiveRows): { rows: LiveRows; repeated: number } {
    this.rotate();
    const fresh: number[] = [];
    const ids = new Array<string>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const id = (ids[i] = key(rows, i));
      if (!this.current.has(id) && !this.previous.has(id)) fresh.push(i);
    }
    for (const i of fresh) this.current.add(ids[i]!);
    const repeated = rows.length - fresh.length;
    return { rows: repeated ? rows.pick(fresh) : rows, repeated };
  }

  /** Rows that were accepted but could not be stored: a copy sent again must be stored. */
  forget(rows: LiveRows, from = 0): void {
    for (let i = from; i < rows.length; i++) {
      const id = key(rows, i);
      this.current.delete(id);
      this.previous.delete(id);
    }
  }

  private rotate(): void {
    if (this.current.size < GENERATION_RECORDS && this.now() - this.since < GENERATION_MS) return;
    this.previous = this.current;
    this.current = new Set();
    this.since = this.now();
  }
}

/** A log record's identity holds its body, which can be long: the set keeps a digest of it. */
function key(rows: LiveRows, i: number): string {
  const id = rows.identity(i);
  return id.length > 64 ? hash('sha1', id, 'base64') : id;
}
