import type { JsonlRecord } from '../record.js';
import type { TelemetrySink } from './types.js';

/** Passes records to another sink and counts them (generate, migrate and record report the count). */
export class CountingSink implements TelemetrySink {
  records = 0;
  /** present only when the inner sink has it: the writer checks for it */
  readonly writeJson?: (r: JsonlRecord, attributesJson: string) => void;
  constructor(readonly inner: TelemetrySink) {
    if (inner.writeJson) {
      this.writeJson = (r, json) => {
        inner.writeJson!(r, json);
        this.records++;
      };
    }
  }
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
    this.inner.write(r);
    this.records++;
  }
  drain(): Promise<void> {
    return this.inner.drain?.() ?? Promise.resolve();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
