import type { JsonlRecord } from '../record.js';
import { ForwardingSink } from './forwarding.js';
import type { TelemetrySink } from './types.js';

/** Passes records to another sink and counts them (generate, migrate and record report the count). */
export class CountingSink extends ForwardingSink {
  records = 0;
  /** present only when the inner sink has it: the writer checks for it */
  readonly writeJson?: (r: JsonlRecord, attributesJson: string) => void;
  constructor(inner: TelemetrySink) {
    super(inner);
    if (inner.writeJson) {
      this.writeJson = (r, json) => {
        inner.writeJson!(r, json);
        this.records++;
      };
    }
  }
  write(r: JsonlRecord): void {
    this.inner.write(r);
    this.records++;
  }
}
