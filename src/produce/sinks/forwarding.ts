import type { JsonlRecord } from '../record.js';
import type { TelemetrySink } from './types.js';

/** A sink in front of another: name, level, errors, drain and close are the inner sink's. */
export abstract class ForwardingSink<S extends TelemetrySink = TelemetrySink> implements TelemetrySink {
  constructor(readonly inner: S) {}
  get name() {
    return this.inner.name;
  }
  get minSeverity() {
    return this.inner.minSeverity;
  }
  get error() {
    return this.inner.error;
  }
  abstract write(r: JsonlRecord): void;
  drain(): Promise<void> {
    return this.inner.drain?.() ?? Promise.resolve();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
